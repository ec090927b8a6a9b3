"""Which JSON values a ``Field``/``Input`` bound or ``choices`` applies to.

One table for both sides: the schema lowering places each bound on the options of a
parameter's schema it applies to (JSON Schema, and the served validator, ignore a bound on
another type), and the readiness pass refuses a bound that applies to no value the
parameter's type accepts (``Input(ge=0)`` on a ``str``), which would be documented by the
code and checked by nothing.
"""

from typing import Final

from svcc.ir.model import InputDescriptor
from svcc.ir.types import (
    FloatType,
    IntType,
    ListType,
    LiteralValue,
    StrType,
    TupleType,
    TypeNode,
    UnionType,
)

# The JSON Schema ``type`` each bound applies to.
BOUND_KINDS: Final[dict[str, frozenset[str]]] = {
    **dict.fromkeys(("gt", "ge", "lt", "le"), frozenset({"integer", "number"})),
    **dict.fromkeys(("min_length", "max_length"), frozenset({"string", "array"})),
    "pattern": frozenset({"string"}),
}
# The JSON Schema ``type`` a choice of each Python type applies to.
CHOICE_KINDS: Final[dict[type, str]] = {str: "string", int: "integer"}


def json_kinds(node: TypeNode) -> frozenset[str]:
    """The plain JSON types ``node`` accepts (a union's options together): ``integer``,
    ``number``, ``string`` (a plain ``str``: a date or ``bytes`` is a string with a form of
    its own, which a bound would contradict) and ``array``."""
    options = node.options if isinstance(node, UnionType) else (node,)
    kinds: set[str] = set()
    for option in options:
        if isinstance(option, IntType):
            kinds.add("integer")
        elif isinstance(option, FloatType):
            kinds.add("number")
        elif isinstance(option, StrType):
            kinds.add("string")
        elif isinstance(option, ListType | TupleType):
            kinds.add("array")
    return frozenset(kinds)


def choice_kind(choices: tuple[LiteralValue, ...]) -> str | None:
    """The one JSON type every choice has (``None`` when they mix types)."""
    kinds = {CHOICE_KINDS.get(type(c)) for c in choices}
    return next(iter(kinds)) if len(kinds) == 1 else None


def misplaced(found: InputDescriptor, node: TypeNode) -> list[str]:
    """The bounds and choices of ``found`` that apply to no value of type ``node``."""
    kinds = json_kinds(node)
    out = [
        f"{bound.name}={bound.value!r} applies to no value of this type"
        for bound in found.constraints
        if not BOUND_KINDS[bound.name] & kinds
    ]
    if found.choices:
        kind = choice_kind(found.choices)
        if kind is None or kind not in kinds:
            out.append(f"choices={list(found.choices)!r} are not all values of this type")
    return out
