"""Python's rule for the absolute name of a relative import, over the IR's import facts.

One place for it: the single-file closure, the readiness pass and the repository graph all
ask "which module does ``from ..x import y`` in module M load?", and a verdict that differs
from ``importlib``'s is a bundle that refuses to start (a top-level module's ``from .x
import y`` raises "attempted relative import with no known parent package").
"""


def package_of(name: str, is_package: bool) -> str:
    """The package a module's relative imports are anchored at (``__package__``)."""
    return name if is_package else name.rpartition(".")[0]


def resolve_relative(package: str, level: int, module: str) -> str | None:
    """``importlib``'s rule: the absolute name of ``from <level dots><module> import``
    inside ``package``, or ``None`` when there is no package (a top-level module) or the
    import reaches above the top package."""
    if not package:
        return None
    bits = package.rsplit(".", level - 1)
    if len(bits) < level:
        return None
    return f"{bits[0]}.{module}" if module else bits[0]
