"""``cog.Input(...)`` descriptors, read statically into the request schema's keywords.

A Cog predictor declares each input as a parameter default, ``x: int = Input(ge=0, le=10,
default=3, description="...")``. The descriptor is not the default: its ``default=`` keyword
is (no ``default=`` makes the input required), its bounds are the schema's (``ge`` →
``minimum``, ``le`` → ``maximum``, ``min_length``/``max_length``, ``regex`` → ``pattern``)
and its ``choices`` the values allowed (an ``enum``, read as a ``Literal`` type). Only
literal values are read; the bundle's ``cog`` shim (``svcc.runtime.cog``) makes the
descriptor evaluate to its default when the server imports the module.
"""

import ast
from collections.abc import Callable
from typing import Final

from attrs import frozen

INPUTS: Final = frozenset({"cog.Input", "cog.predictor.Input", "cog.types.Input"})
# Cog's keyword -> the constraint name the IR records (a model field's ``Field`` names).
_BOUNDS: Final = {
    "ge": "ge",
    "le": "le",
    "min_length": "min_length",
    "max_length": "max_length",
    "regex": "pattern",
}

Qualify = Callable[[ast.expr], str | None]


@frozen
class CogInput:
    """What one ``Input(...)`` declares: its default's expression (``None``: required),
    literal bounds by IR constraint name, and the allowed values (``None``: any)."""

    default: ast.expr | None
    bounds: tuple[tuple[str, int | float | str], ...]
    choices: tuple[int | float | str, ...] | None


def cog_input(node: ast.expr | None, qualify: Qualify) -> CogInput | None:
    """The descriptor ``node`` is, or ``None`` when it is no ``cog.Input(...)`` call."""
    if not isinstance(node, ast.Call) or qualify(node.func) not in INPUTS:
        return None
    default: ast.expr | None = None
    bounds: list[tuple[str, int | float | str]] = []
    choices: tuple[int | float | str, ...] | None = None
    for keyword in node.keywords:
        if keyword.arg == "default":
            default = keyword.value
        elif keyword.arg in _BOUNDS:
            value = _literal(keyword.value)
            if value is not None:
                bounds.append((_BOUNDS[keyword.arg], value))
        elif keyword.arg == "choices" and isinstance(keyword.value, ast.List | ast.Tuple):
            values = [_literal(item) for item in keyword.value.elts]
            if values and all(v is not None for v in values):
                choices = tuple(v for v in values if v is not None)
    return CogInput(default=default, bounds=tuple(bounds), choices=choices)


def literal_input(node: ast.expr | None, qualify: Qualify) -> bool:
    """``node`` is a ``cog.Input(...)`` call whose arguments are all literals (lists of
    them included): evaluating it at definition runs nothing of the user's."""
    if not isinstance(node, ast.Call) or qualify(node.func) not in INPUTS:
        return False
    values = [*node.args, *(k.value for k in node.keywords)]
    for value in values:
        items = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
        if not all(
            _literal(item) is not None
            or (isinstance(item, ast.Constant) and item.value is None)
            or (isinstance(item, ast.Constant) and isinstance(item.value, bool))
            for item in items
        ):
            return False
    return True


def _literal(node: ast.expr) -> int | float | str | None:
    """A literal number or string (a negative number included), else ``None``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal(node.operand)
        return -inner if isinstance(inner, int | float) else None
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        value = node.value
        if isinstance(value, int | float | str):
            return value
    return None
