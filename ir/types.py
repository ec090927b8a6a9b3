"""The closed type algebra of parameter and return annotations.

Every annotation the front end reads becomes one of these nodes. The set is closed on
purpose: back ends ``match`` on :data:`TypeNode` and end with ``assert_never``, so adding
a kind fails type-checking in every target until each handles it. Two leaf kinds carry
what could *not* be expressed (``unsupported``) or resolved (``unresolved``), so the IR
keeps the fact and the readiness pass judges it.
"""

from functools import cache
from typing import TYPE_CHECKING, ClassVar, Final, Literal

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time
    from svcc.ir.records import frozen


# A JSON scalar usable inside ``Literal[...]``.
LiteralValue = str | int | bool | None


@frozen(kw_only=True)
class AnyType:
    """Any JSON value: no annotation, ``Any``/``object``, or a bare ``list``'s items."""

    KIND: ClassVar[str] = "any"


@frozen(kw_only=True)
class IntType:
    KIND: ClassVar[str] = "int"


@frozen(kw_only=True)
class FloatType:
    """A JSON number; integers are accepted (``float`` accepts ``int`` in Python typing)."""

    KIND: ClassVar[str] = "float"


@frozen(kw_only=True)
class StrType:
    KIND: ClassVar[str] = "str"


@frozen(kw_only=True)
class BoolType:
    KIND: ClassVar[str] = "bool"


@frozen(kw_only=True)
class NoneType:
    KIND: ClassVar[str] = "none"


@frozen(kw_only=True)
class ListType:
    KIND: ClassVar[str] = "list"
    item: "TypeNode"


@frozen(kw_only=True)
class DictType:
    """``dict[str, T]``: JSON object keys are strings, so only ``str`` keys are expressible."""

    KIND: ClassVar[str] = "dict"
    value: "TypeNode"


@frozen(kw_only=True)
class TupleType:
    """``tuple[A, B]`` (fixed ``items``) or ``tuple[T, ...]`` (``variadic`` item)."""

    KIND: ClassVar[str] = "tuple"
    items: tuple["TypeNode", ...]
    variadic: "TypeNode | None" = None


@frozen(kw_only=True)
class UnionType:
    """Flattened, de-duplicated alternatives in source order; ``Optional[X]`` is ``X | None``."""

    KIND: ClassVar[str] = "union"
    options: tuple["TypeNode", ...]


@frozen(kw_only=True)
class LiteralType:
    KIND: ClassVar[str] = "literal"
    values: tuple[LiteralValue, ...]


@frozen(kw_only=True)
class TypedDictType:
    """A reference by name to a ``TypedDictDecl`` of the same module."""

    KIND: ClassVar[str] = "typeddict"
    name: str


ValueName = Literal[
    "datetime.date",
    "datetime.datetime",
    "datetime.time",
    "datetime.timedelta",
    "uuid.UUID",
    "decimal.Decimal",
    "builtins.bytes",
]


@frozen(kw_only=True)
class ValueType:
    """A standard-library value with one string form: dates and times (ISO 8601), a
    duration, a UUID, a ``Decimal`` (its exact numeric string) or ``bytes`` (base64)."""

    KIND: ClassVar[str] = "value"
    name: ValueName


@frozen(kw_only=True)
class EnumType:
    """A local ``Enum``/``StrEnum``/``IntEnum`` with literal values: the JSON values are
    ``values``, the function receives the member of class ``name``."""

    KIND: ClassVar[str] = "enum"
    name: str
    values: tuple[LiteralValue, ...]


@frozen(kw_only=True)
class ModelType:
    """A reference by name to a ``ModelDecl`` (a dataclass, a pydantic model or a
    ``NamedTuple``) of the same module: a closed JSON object, the instance passed."""

    KIND: ClassVar[str] = "model"
    name: str


NdarrayDtype = Literal["int", "float", "bool", "str", "any"]


@frozen(kw_only=True)
class NdarrayType:
    """``np.ndarray`` / ``NDArray[dtype]``: nested JSON arrays, ``np.asarray`` of them."""

    KIND: ClassVar[str] = "ndarray"
    dtype: NdarrayDtype = "any"


@frozen(kw_only=True)
class DataFrameType:
    """``pd.DataFrame``: a list of records (objects) in and out."""

    KIND: ClassVar[str] = "dataframe"


@frozen(kw_only=True)
class SeriesType:
    """``pd.Series``: an array in; out, an object keyed by the index (DESIGN §12)."""

    KIND: ClassVar[str] = "series"


@frozen(kw_only=True)
class UnsupportedType:
    """A resolvable annotation with no exact JSON shape (callables, arbitrary classes, ...)."""

    KIND: ClassVar[str] = "unsupported"
    text: str
    reason: str


UnresolvedReason = Literal["unknown-name", "star-import", "invalid-annotation"]


@frozen(kw_only=True)
class UnresolvedType:
    """An annotation naming something that cannot be resolved statically."""

    KIND: ClassVar[str] = "unresolved"
    text: str
    reason: UnresolvedReason


TypeNode = (
    AnyType
    | IntType
    | FloatType
    | StrType
    | BoolType
    | NoneType
    | ListType
    | DictType
    | TupleType
    | UnionType
    | LiteralType
    | TypedDictType
    | ValueType
    | EnumType
    | ModelType
    | NdarrayType
    | DataFrameType
    | SeriesType
    | UnsupportedType
    | UnresolvedType
)

TYPE_NODE_CLASSES: tuple[type, ...] = (
    AnyType,
    IntType,
    FloatType,
    StrType,
    BoolType,
    NoneType,
    ListType,
    DictType,
    TupleType,
    UnionType,
    LiteralType,
    TypedDictType,
    ValueType,
    EnumType,
    ModelType,
    NdarrayType,
    DataFrameType,
    SeriesType,
    UnsupportedType,
    UnresolvedType,
)


def iter_leaves(node: TypeNode) -> "list[TypeNode]":
    """All nodes of a type tree, depth first (used to find unsupported/unresolved parts)."""
    out: list[TypeNode] = []
    stack: list[TypeNode] = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        match current:
            case ListType(item=item):
                stack.append(item)
            case DictType(value=value):
                stack.append(value)
            case TupleType(items=items, variadic=variadic):
                stack.extend(reversed(items))
                if variadic is not None:
                    stack.append(variadic)
            case UnionType(options=options):
                stack.extend(reversed(options))
            case _:
                pass
    return out


@cache
def resolve_forward_references() -> None:
    """The recursive nodes name ``TypeNode`` before it exists; resolve them (once, when the
    converter is built) so cattrs sees real types: it cannot structure a string annotation.
    Not at import: evaluating the annotations costs every ``svcc inspect`` that never
    converts an IR, such as the text report."""
    import attrs

    for cls in TYPE_NODE_CLASSES:
        attrs.resolve_types(cls, globals(), {"TypeNode": TypeNode})


def plain_json(node: TypeNode) -> bool:
    """Whether every part of ``node`` is a plain JSON value (scalars, lists, objects,
    unions, literals, TypedDicts, any JSON): a value whose methods are those of ``dict``,
    ``list``, ``str``, ``int``, ``float``, ``bool`` or ``None``."""
    if type(node) in _PLAIN_LEAVES:  # most parameters' types: no parts to look at
        return True
    plain = (
        AnyType, IntType, FloatType, StrType, BoolType, NoneType, ListType, DictType,
        TupleType, UnionType, LiteralType, TypedDictType,
    )  # fmt: skip
    return all(isinstance(leaf, plain) for leaf in iter_leaves(node))


# The plain types that have no parts in ``iter_leaves`` (a list's, a tuple's, a dict's or a
# union's are looked at one by one).
_PLAIN_LEAVES: Final = frozenset(
    {AnyType, IntType, FloatType, StrType, BoolType, NoneType, LiteralType, TypedDictType}
)
