"""The names a Cog predictor imports from ``cog``, so that a bundle serves it without Cog.

Shipped as ``source/cog.py`` only in bundles whose modules import ``cog``; ``source/`` is
first on ``sys.path`` (and a repository bundle's finder declares it), so this module is the
``cog`` the served code imports even when the real package is installed. svcc read every
``Input(...)`` from the source when it generated the bundle: the request schema states the
keywords and the server's validator enforces them, so here ``Input`` only returns its
default, which is the value Python gives a parameter the request omits. ``Path``, ``File``
and ``Secret`` exist so that imports succeed; svcc refuses parameters of those types before
it generates a bundle (docs/how-to/cog.md).
"""

import pathlib
from collections.abc import AsyncIterator, Iterator
from typing import Any, TypeVar

__all__ = [
    "AsyncConcatenateIterator",
    "BaseModel",
    "BasePredictor",
    "ConcatenateIterator",
    "File",
    "Input",
    "Path",
    "Secret",
]

_T = TypeVar("_T")


class _Missing:
    """No ``default=`` given (``None`` is a default of its own)."""

    def __repr__(self) -> str:
        return "<no default>"


_MISSING: Any = _Missing()


def Input(
    default: Any = _MISSING,
    *,
    description: str | None = None,
    ge: float | None = None,
    le: float | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    regex: str | None = None,
    choices: list[str | int] | None = None,
    deprecated: bool | None = None,
) -> Any:
    """Cog's parameter descriptor: its default (``None`` without one; the request then must
    supply the value, as the generated schema says). The keywords are read by svcc from the
    source and enforced by the server, never here."""
    del description, ge, le, min_length, max_length, regex, choices, deprecated
    return None if default is _MISSING else default


class BasePredictor:
    """Cog's predictor base: ``setup()`` runs once before the first prediction, ``predict()``
    answers each one (a subclass defines it)."""

    def setup(self, weights: Any = None) -> None:
        """Load what every prediction needs (the default does nothing)."""

    def predict(self, **kwargs: Any) -> Any:
        """Answer one prediction; a subclass defines it."""
        raise NotImplementedError("predict() must be defined by the predictor")


class BaseModel:
    """Cog's output object base (a class whose annotated fields are its result's)."""


class Path(pathlib.PosixPath):
    """Cog's file path type (refused by svcc as a parameter or result)."""


class File:
    """Cog's deprecated file type (refused by svcc as a parameter or result)."""


class Secret(str):
    """Cog's secret string (refused by svcc as a parameter)."""

    def get_secret_value(self) -> str:
        return str(self)


class ConcatenateIterator(Iterator[_T]):
    """Cog's marker for a stream of text pieces: an iterator type."""

    def __next__(self) -> _T:
        raise StopIteration


class AsyncConcatenateIterator(AsyncIterator[_T]):
    """Cog's marker for an asynchronous stream of text pieces."""

    async def __anext__(self) -> _T:
        raise StopAsyncIteration
