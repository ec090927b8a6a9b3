"""Module docstring."""

__all__ = ["version"]
__version__ = "1.0"
LIMITS = {"low": 1, "high": (2, 3)}
NEGATIVE = -1
SCALE: float = 2.5
declared: int
"""A stray string."""
...


def version() -> str:
    return __version__
