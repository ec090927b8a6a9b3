"""The names a Cog predictor imports from ``cog``, so a bundle never needs the package.

The server registers this module as ``cog`` (and ``cog.predictor``, ``cog.types``) before it
imports the bundled source, unless ``cog`` is imported already (``provide``). ``Input(...)``
evaluates to its ``default=`` (the request schema carries its description and bounds, read
statically), or to a marker the call-shape check reads as "no default" when it has none:
the request then always passes the value. ``Path`` is ``pathlib.Path``; a predictor's
setup runs once after construction (``services``).
"""

import pathlib
import sys
from collections.abc import Iterator
from typing import Any, TypeVar

T = TypeVar("T")


class _Required:
    """``Input()`` without a default: the request schema requires the value."""

    __svc_required__ = True

    def __repr__(self) -> str:
        return "Input()"


REQUIRED = _Required()


def Input(default: Any = REQUIRED, **_descriptor: Any) -> Any:
    """The input's default (its other keywords are read statically, never here)."""
    return default


class BasePredictor:
    """Cog's base class: ``setup()`` runs once after construction, ``predict()`` serves."""

    def setup(self) -> None:
        return None


Path = pathlib.Path
File = pathlib.Path


class ConcatenateIterator(Iterator[T]):
    """Cog's marker for a stream of text pieces; served as any iterator."""


def provide() -> None:
    """Register this module as ``cog`` unless a ``cog`` is imported already."""
    if "cog" in sys.modules:
        return
    me = sys.modules[__name__]
    for name in ("cog", "cog.predictor", "cog.types"):
        sys.modules[name] = me
