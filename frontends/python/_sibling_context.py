"""Which repository modules the import-time evaluator may read values from, while a
repository (a directory, or a file and the modules beside it) is being lowered.

The front end that reads a repository sets the provider (:mod:`sibling_values`) around its
lowering; forked lowering workers inherit it. Outside that (a module read on its own, a
language-server buffer) there is none, and every value of another module stays unknown.
"""

import ast
from typing import Protocol


class SiblingValues(Protocol):
    def value(self, reader: str, name: str, node: ast.AST) -> object:
        """The value of ``name`` (an attribute of a repository module: absolute, or
        relative to ``reader``'s package) as ``reader`` reads it at import, or ``Unknown``."""

    def plain_class(self, reader: str, name: str) -> bool:
        """Whether ``name`` is a repository module's class that a class of ``reader`` may
        take as a base without running code (no decorator, metaclass or subclass hook)."""

    def identity(self, reader: str, name: str) -> bool:
        """Whether ``name`` is a repository module's function returning its argument."""

    def absolute(self, reader: str, level: int, module: str) -> str | None:
        """``from <level dots><module> import`` in ``reader``, made absolute."""

    def lowered(self, module: str, text: str, version: tuple[int, int], tree: ast.Module) -> None:
        """``module`` was parsed from ``text`` with the grammar of ``version`` to be
        lowered (what the provider reads of it may come from that tree)."""


_current: list[SiblingValues] = []


def current() -> SiblingValues | None:
    return _current[-1] if _current else None


def push(provider: SiblingValues) -> None:
    _current.append(provider)


def pop() -> None:
    _current.pop()
