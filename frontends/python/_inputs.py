"""What a parameter's descriptor states about its value, read without running it.

Cog predictors and pydantic code describe a parameter with a call: a default
``cog.Input(default=0.5, ge=0, le=1, choices=[...])`` or ``pydantic.Field(...)``, or
``Annotated[float, Field(ge=0)]`` metadata. Its literal keywords become the request schema's
keywords (``backends/_common/schema``), which the served validator enforces, so what the
descriptor says is both documented and checked. A keyword that is computed, or that svcc
does not serve (``multiple_of``, ``default_factory``), is recorded as unreadable and the
readiness pass refuses the parameter (SVC-R055) rather than serve something else.

A default descriptor without its own ``default=`` (or first positional argument) makes the
parameter required, as in Cog, though Python sees a default (the descriptor).
"""

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from svcc.frontends.python._models import CONSTRAINTS, HARMLESS_FIELD_KEYWORDS, _literal
from svcc.frontends.python._types import ANNOTATED, NOT_LITERAL, literal_value
from svcc.ir.model import (
    Constraint,
    InputDescriptor,
    LiteralDefault,
    Parameter,
    Span,
    Unreadable,
)
from svcc.ir.records import evolve
from svcc.ir.types import LiteralValue

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen

COG_INPUTS = frozenset({"cog.Input", "cog.predictor.Input", "cog.types.Input"})
FIELDS = frozenset({"pydantic.Field", "pydantic.fields.Field"})
DESCRIPTORS = COG_INPUTS | FIELDS
# Cog's names for pydantic's bounds
RENAMED = {"regex": "pattern"}
# Keywords that change nothing in what a value may be (``description`` is read elsewhere).
HARMLESS = HARMLESS_FIELD_KEYWORDS | {"deprecated"}

Qualify = Callable[[ast.expr], str | None]


@frozen
class Source:
    """How the reader qualifies names and places what it reads in the module's source."""

    qualify: Qualify
    segment: Callable[[ast.AST], str]
    span: Callable[[ast.AST], Span]


def with_input(
    param: Parameter, annotation: ast.expr | None, default: ast.expr | None, source: Source
) -> Parameter:
    """``param`` with what its descriptor states (``Parameter.input``): its default
    ``Input(...)``/``Field(...)``, else the first ``Field``/``Input`` of its ``Annotated``
    metadata; ``param`` itself when it has neither. ``Parameter.default`` stays the source's
    (the descriptor call), which is what the served module's signature has."""
    call = _descriptor(default, source)
    if call is None:
        call = _annotated(annotation, source)
        if call is None:
            return param
        return evolve(param, input=_read(call, source, as_default=False))
    return evolve(param, input=_read(call, source, as_default=True))


def _descriptor(node: ast.expr | None, source: Source) -> ast.Call | None:
    if isinstance(node, ast.Call) and source.qualify(node.func) in DESCRIPTORS:
        return node
    return None


def _annotated(annotation: ast.expr | None, source: Source) -> ast.Call | None:
    """The first ``Field(...)``/``Input(...)`` in ``Annotated[T, ...]``'s metadata."""
    if (
        not isinstance(annotation, ast.Subscript)
        or source.qualify(annotation.value) not in ANNOTATED
    ):
        return None
    items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
    for meta in items[1:]:
        found = _descriptor(meta, source)
        if found is not None:
            return found
    return None


def _read(call: ast.Call, source: Source, *, as_default: bool) -> InputDescriptor:
    """The descriptor ``call`` states; ``as_default``: it is the parameter's default (so
    its own ``default=`` is the value's, and without one the parameter is required)."""
    constraints: list[Constraint] = []
    choices: tuple[LiteralValue, ...] = ()
    unreadable: list[Unreadable] = []
    default_node: ast.expr | None = None

    def refuse(node: ast.AST, what: str) -> None:
        unreadable.append(Unreadable(text=what, span=source.span(node)))

    for position, arg in enumerate(call.args):
        if position == 0 and as_default:
            default_node = arg
        else:
            refuse(arg, f"positional argument {source.segment(arg)}")
    for keyword in call.keywords:
        key, sub = keyword.arg, keyword.value
        if key == "default" and as_default:
            default_node = sub
        elif key in ("description", *HARMLESS):
            continue
        elif key is not None and RENAMED.get(key, key) in CONSTRAINTS:
            value = _literal(sub)
            if value is NOT_LITERAL or isinstance(value, bool) or value is None:
                refuse(sub, f"{source.segment(keyword)} (not a literal)")
            else:
                constraints.append(Constraint(name=RENAMED.get(key, key), value=value))  # type: ignore[arg-type]
        elif key == "choices":
            read = _choices(sub)
            if read is None:
                refuse(sub, f"{source.segment(keyword)} (not a list of str or int literals)")
            else:
                choices = read
        else:
            refuse(keyword, f"{source.segment(keyword)} (not served)")
    if isinstance(default_node, ast.Constant) and default_node.value is Ellipsis:
        default_node = None  # Field(...): required
    literal: LiteralDefault | None = None
    if default_node is not None:
        value = _literal(default_node)
        if value is NOT_LITERAL:
            refuse(default_node, f"default={source.segment(default_node)} (not a literal)")
        else:
            literal = LiteralDefault(value=value)  # type: ignore[arg-type]
    return InputDescriptor(
        callee=source.qualify(call.func) or "",
        constraints=tuple(constraints),
        choices=choices,
        default=literal,
        required=as_default and default_node is None,
        unreadable=tuple(unreadable),
        span=source.span(call),
    )


def _choices(node: ast.expr) -> tuple[LiteralValue, ...] | None:
    """A non-empty list or tuple of distinct str or int literals, in order; else ``None``."""
    if not isinstance(node, ast.List | ast.Tuple) or not node.elts:
        return None
    values: list[LiteralValue] = []
    for item in node.elts:
        value = literal_value(item)
        if not isinstance(value, str | int) or isinstance(value, bool):
            return None
        if value not in values:
            values.append(value)
    return tuple(values)
