"""Annotation expressions → the closed type algebra, resolved statically.

Names resolve through the module's own symbol table (imports, TypedDicts, type
aliases, classes) and the builtins; nothing is imported or evaluated. What resolves but
has no exact JSON shape becomes ``UnsupportedType``; what cannot be resolved becomes
``UnresolvedType`` (a star import may provide it, or the name is unknown).
"""

import ast
import builtins
from collections.abc import Callable

from svcc.contracts.names import is_utf8
from svcc.ir.types import (
    AnyType,
    BoolType,
    DataFrameType,
    DictType,
    EnumType,
    FloatType,
    IntType,
    ListType,
    LiteralType,
    LiteralValue,
    ModelType,
    NdarrayDtype,
    NdarrayType,
    NoneType,
    SeriesType,
    StrType,
    TupleType,
    TypeNode,
    UnionType,
    UnresolvedReason,
    UnresolvedType,
    UnsupportedType,
    ValueName,
    ValueType,
)

MAX_DEPTH = 48

TYPING_MODULES = ("typing", "typing_extensions")


def typing_names(*names: str) -> frozenset[str]:
    return frozenset(f"{m}.{n}" for m in TYPING_MODULES for n in names)


SCALARS: dict[str, TypeNode] = {
    "builtins.int": IntType(),
    "builtins.float": FloatType(),
    "builtins.str": StrType(),
    "builtins.bool": BoolType(),
    "builtins.object": AnyType(),
    "typing.Any": AnyType(),
    "typing_extensions.Any": AnyType(),
    "builtins.None": NoneType(),
}
LIST_ORIGINS = frozenset(
    {"builtins.list", "collections.abc.Sequence", "collections.abc.MutableSequence"}
) | typing_names("List", "Sequence", "MutableSequence")
DICT_ORIGINS = frozenset(
    {"builtins.dict", "collections.abc.Mapping", "collections.abc.MutableMapping"}
) | typing_names("Dict", "Mapping", "MutableMapping")
TUPLE_ORIGINS = frozenset({"builtins.tuple"}) | typing_names("Tuple")
_CONTAINERS = LIST_ORIGINS | DICT_ORIGINS | TUPLE_ORIGINS
UNION = typing_names("Union")
OPTIONAL = typing_names("Optional")
LITERAL = typing_names("Literal")
ANNOTATED = typing_names("Annotated")
REQUIREDNESS = typing_names("Required", "NotRequired", "ReadOnly")
TYPEDDICT = typing_names("TypedDict")
# A generator's return annotation naming its items (the first argument); the generator
# forms' second argument is the send type, which must be ``None`` (a stream only yields).
ITERATOR_ORIGINS = frozenset(
    f"collections.abc.{n}" for n in ("Iterator", "Iterable", "AsyncIterator", "AsyncIterable")
) | typing_names("Iterator", "Iterable", "AsyncIterator", "AsyncIterable")
GENERATOR_ORIGINS = frozenset(
    f"collections.abc.{n}" for n in ("Generator", "AsyncGenerator")
) | typing_names("Generator", "AsyncGenerator")

VALUES: dict[str, ValueName] = {
    "datetime.date": "datetime.date",
    "datetime.datetime": "datetime.datetime",
    "datetime.time": "datetime.time",
    "datetime.timedelta": "datetime.timedelta",
    "uuid.UUID": "uuid.UUID",
    "decimal.Decimal": "decimal.Decimal",
    "builtins.bytes": "builtins.bytes",
}
# numpy and pandas classes, by every name they are commonly imported under
NDARRAYS = frozenset({"numpy.ndarray", "numpy.typing.NDArray"})
DATAFRAMES = frozenset({"pandas.DataFrame", "pandas.core.frame.DataFrame"})
SERIES = frozenset({"pandas.Series", "pandas.core.series.Series"})
DTYPES: dict[str, NdarrayDtype] = {
    **{f"numpy.{n}": "int" for n in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                      "uint32", "uint64", "intp", "integer", "int_")},
    **{f"numpy.{n}": "float" for n in ("float16", "float32", "float64", "floating", "double")},
    "numpy.bool_": "bool",
    "numpy.bool": "bool",
    "numpy.str_": "str",
    "builtins.int": "int",
    "builtins.float": "float",
    "builtins.bool": "bool",
    "builtins.str": "str",
}  # fmt: skip
# what works instead of a class with no JSON shape (the hint of its reason)
CLASS_HINT = "use a TypedDict, a @dataclass, a pydantic BaseModel or a NamedTuple"

UNSUPPORTED_WHY: dict[str, str] = {
    "builtins.bytearray": "bytes are not JSON (annotate bytes: base64 text)",
    "builtins.set": "sets are not JSON (use list)",
    "builtins.frozenset": "sets are not JSON (use list)",
    "builtins.complex": "complex numbers are not JSON",
    "builtins.type": "classes are not JSON",
    # Cog's input types (docs/how-to/cog.md): a file on disk is neither JSON nor served
    **dict.fromkeys(
        ("cog.Path", "cog.types.Path", "cog.File", "cog.types.File"),
        "a Cog file (`cog.Path`, `cog.File`) is not served, in or out: take or return `bytes` "
        "(base64 text)",
    ),
    **dict.fromkeys(
        ("cog.Secret", "cog.types.Secret"),
        "`cog.Secret` is not served: take a `str` (and keep it out of logs)",
    ),
}

BUILTIN_NAMES = frozenset(dir(builtins)) | frozenset(
    {
        "int",
        "float",
        "str",
        "bool",
        "object",
        "list",
        "dict",
        "tuple",
        "bytes",
        "bytearray",
        "set",
        "frozenset",
        "complex",
        "type",
        "memoryview",
        "range",
        "slice",
        "Ellipsis",
    }
)


class Symbols:
    """What a name means at module level, as far as annotations are concerned."""

    def __init__(self) -> None:
        self.imports: dict[str, str] = {}  # local name -> qualified name
        self.typed_dicts: set[str] = set()
        self.aliases: dict[str, ast.expr] = {}
        self.classes: dict[str, str] = {}  # local class -> why it is not a JSON type
        # local classes with a JSON shape: enum -> its values (or why not); model -> form
        self.enums: dict[str, tuple[LiteralValue, ...] | str] = {}
        self.models: dict[str, str] = {}
        self.star_import = False

    def qualify(self, node: ast.expr) -> str | None:
        """Resolve ``Name``/``Attribute`` chains to a dotted name (``typing.List``).
        Exact types (the parser makes no subclasses); a bare name, the commonest, built
        no list (asked of every callee and base: a hundred and fifty thousand times for the
        standard library)."""
        kind = type(node)
        if kind is ast.Name:
            head = node.id  # type: ignore[attr-defined]
            imported = self.imports.get(head)
            if imported is not None:
                return imported
            if head in self.typed_dicts:
                return f"typeddict.{head}"
            if head in self.classes:
                return f"local.{head}"
            if head in self.aliases:
                return f"alias.{head}"
            if head in BUILTIN_NAMES:
                return f"builtins.{head}"
            return None
        if kind is not ast.Attribute:
            return None
        parts: list[str] = []
        current: ast.expr = node
        while type(current) is ast.Attribute:
            parts.append(current.attr)
            current = current.value
        if type(current) is not ast.Name:
            return None
        head = current.id
        if head in self.imports:
            parts.append(self.imports[head])
            parts.reverse()
            return ".".join(parts)
        return None


class TypeResolver:
    def __init__(self, symbols: Symbols, segment: Callable[[ast.AST], str]) -> None:
        self.symbols = symbols
        self.segment = segment

    def resolve(
        self, node: ast.expr, depth: int = 0, alias_chain: tuple[str, ...] = ()
    ) -> TypeNode:
        if depth > MAX_DEPTH:
            return UnsupportedType(text=self._text(node), reason="annotation nested too deeply")
        if isinstance(node, ast.Constant):
            if node.value is None:
                return NoneType()
            if isinstance(node.value, str):
                return self._forward(node, depth, alias_chain)
            return UnresolvedType(text=self._text(node), reason="invalid-annotation")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return union(
                [
                    self.resolve(node.left, depth + 1, alias_chain),
                    self.resolve(node.right, depth + 1, alias_chain),
                ]
            )
        if isinstance(node, ast.Subscript):
            return self._subscript(node, depth, alias_chain)
        if isinstance(node, ast.Name | ast.Attribute):
            return self._named(node, depth, alias_chain)
        return UnresolvedType(text=self._text(node), reason="invalid-annotation")

    def stream_item(self, node: ast.expr) -> tuple[TypeNode, ast.expr | None] | None:
        """A generator's items from its return annotation: their type and annotation
        (``None`` for a bare ``Iterator``), or ``None`` when ``node`` is no iterator form
        with a ``None`` send type (see ``ITERATOR_ORIGINS``)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                inner = ast.parse(node.value.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            found = TypeResolver(self.symbols, ast.unparse).stream_item(inner)
            # the string is the annotation's place: spans inside it are the string's own
            return None if found is None else (found[0], None if found[1] is None else node)
        if isinstance(node, ast.Name | ast.Attribute):
            origin = self.symbols.qualify(node)
            bare = origin in ITERATOR_ORIGINS or origin in GENERATOR_ORIGINS
            return (AnyType(), None) if bare else None
        if not isinstance(node, ast.Subscript):
            return None
        origin = self.symbols.qualify(node.value)
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if origin in ITERATOR_ORIGINS and len(args) == 1:
            return self.resolve(args[0], 1), args[0]
        if origin in GENERATOR_ORIGINS and all(
            isinstance(a, ast.Constant) and a.value is None for a in args[1:2]
        ):
            return self.resolve(args[0], 1), args[0]
        return None

    def _text(self, node: ast.AST) -> str:
        try:
            return self.segment(node)
        except (AttributeError, IndexError):
            return ast.unparse(node)

    def _forward(self, node: ast.Constant, depth: int, alias_chain: tuple[str, ...]) -> TypeNode:
        try:
            inner = ast.parse(str(node.value).strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return UnresolvedType(text=str(node.value), reason="invalid-annotation")
        # Spans inside a string annotation are relative to the string: use unparse for text.
        resolver = TypeResolver(self.symbols, ast.unparse)
        return resolver.resolve(inner, depth + 1, alias_chain)

    def _unknown(self, node: ast.expr) -> TypeNode:
        reason: UnresolvedReason = "star-import" if self.symbols.star_import else "unknown-name"
        return UnresolvedType(text=self._text(node), reason=reason)

    def _named(
        self, node: ast.Name | ast.Attribute, depth: int, alias_chain: tuple[str, ...]
    ) -> TypeNode:
        qual = self.symbols.qualify(node)
        if qual is None:
            return self._unknown(node)
        return self._qualified(qual, node, depth, alias_chain)

    def _qualified(
        self, qual: str, node: ast.expr, depth: int, alias_chain: tuple[str, ...]
    ) -> TypeNode:
        from svcc.ir.types import TypedDictType

        if qual in SCALARS:
            return SCALARS[qual]
        kind, _, name = qual.partition(".")
        if kind == "typeddict":
            return TypedDictType(name=name)
        if kind == "alias":
            if name in alias_chain:
                return UnsupportedType(text=self._text(node), reason="recursive type alias")
            return self.resolve(self.symbols.aliases[name], depth + 1, (*alias_chain, name))
        if kind == "local":
            return self._local_class(name, node)
        if qual in VALUES:
            return ValueType(name=VALUES[qual])
        if qual in NDARRAYS:
            return NdarrayType()
        if qual in DATAFRAMES:
            return DataFrameType()
        if qual in SERIES:
            return SeriesType()
        if qual in LIST_ORIGINS:
            return ListType(item=AnyType())
        if qual in DICT_ORIGINS:
            return DictType(value=AnyType())
        if qual in TUPLE_ORIGINS:
            return TupleType(items=(), variadic=AnyType())
        if qual in UNSUPPORTED_WHY:
            return UnsupportedType(text=self._text(node), reason=UNSUPPORTED_WHY[qual])
        return UnsupportedType(text=self._text(node), reason=f"`{qual}` has no JSON shape")

    def _local_class(self, name: str, node: ast.expr) -> TypeNode:
        """A class of this module: an enum, a model, or unsupported (with what would work)."""
        if name in self.symbols.models:
            return ModelType(name=name)
        values = self.symbols.enums.get(name)
        if isinstance(values, tuple):
            return EnumType(name=name, values=values)
        why = values if values is not None else self.symbols.classes[name]
        return UnsupportedType(text=self._text(node), reason=why)

    def _ndarray(self, node: ast.Subscript, args: list[ast.expr]) -> TypeNode:
        """``NDArray[np.float64]`` (numpy.typing) or ``np.ndarray[shape, np.dtype[X]]``."""
        target = args[-1]
        if isinstance(target, ast.Subscript):  # np.dtype[np.float64]
            target = target.slice
        dtype = (
            DTYPES.get(self.symbols.qualify(target) or "")
            if isinstance(target, ast.Name | ast.Attribute)
            else None
        )
        if dtype is None and not (
            isinstance(target, ast.Name | ast.Attribute)
            and self.symbols.qualify(target) in ("typing.Any", "numpy.generic")
        ):
            return UnsupportedType(
                text=self._text(node), reason="an array dtype svcc cannot map to JSON"
            )
        return NdarrayType(dtype=dtype or "any")

    def _subscript(self, node: ast.Subscript, depth: int, alias_chain: tuple[str, ...]) -> TypeNode:
        origin = self.symbols.qualify(node.value)
        if origin is None:
            if isinstance(node.value, ast.Name | ast.Attribute):
                return self._unknown(node)
            return UnresolvedType(text=self._text(node), reason="invalid-annotation")
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        d = depth + 1

        if origin in OPTIONAL:
            if len(args) != 1:
                return UnresolvedType(text=self._text(node), reason="invalid-annotation")
            return union([self.resolve(args[0], d, alias_chain), NoneType()])
        if origin in UNION:
            return union([self.resolve(a, d, alias_chain) for a in args])
        if origin in ANNOTATED or origin in REQUIREDNESS:
            return self.resolve(args[0], d, alias_chain)
        if origin in LITERAL:
            return self._literal(node, args)
        if origin in _CONTAINERS:
            return self._container(node, origin, args, d, alias_chain)
        if origin in NDARRAYS:
            return self._ndarray(node, args)
        if origin in SERIES:
            return SeriesType()
        base = self._qualified(origin, node.value, d, alias_chain)
        if isinstance(base, UnresolvedType):
            return base
        if isinstance(base, UnsupportedType):
            return UnsupportedType(text=self._text(node), reason=base.reason)
        return UnsupportedType(text=self._text(node), reason=f"`{origin}[...]` has no JSON shape")

    def _container(
        self,
        node: ast.Subscript,
        origin: str,
        args: list[ast.expr],
        d: int,
        alias_chain: tuple[str, ...],
    ) -> TypeNode:
        """A list, a dict or a tuple of items: a JSON array or object (string keys only)."""
        if origin in LIST_ORIGINS:
            if len(args) != 1:
                return UnresolvedType(text=self._text(node), reason="invalid-annotation")
            return ListType(item=self.resolve(args[0], d, alias_chain))
        if origin in DICT_ORIGINS:
            if len(args) != 2:
                return UnresolvedType(text=self._text(node), reason="invalid-annotation")
            key = self.resolve(args[0], d, alias_chain)
            if isinstance(key, UnresolvedType):
                return key
            if not isinstance(key, StrType):
                return UnsupportedType(text=self._text(node), reason="JSON object keys are strings")
            return DictType(value=self.resolve(args[1], d, alias_chain))
        if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
            return TupleType(items=(), variadic=self.resolve(args[0], d, alias_chain))
        if len(args) == 1 and isinstance(args[0], ast.Tuple) and not args[0].elts:
            return TupleType(items=())
        return TupleType(items=tuple(self.resolve(a, d, alias_chain) for a in args))

    def _literal(self, node: ast.Subscript, args: list[ast.expr]) -> TypeNode:
        values: list[LiteralValue] = []
        for arg in args:
            value = literal_value(arg)
            if value is _NOT_LITERAL:
                nested = arg
                if (
                    isinstance(nested, ast.Subscript)
                    and self.symbols.qualify(nested.value) in LITERAL
                ):
                    inner = self._literal(
                        nested,
                        list(nested.slice.elts)
                        if isinstance(nested.slice, ast.Tuple)
                        else [nested.slice],
                    )
                    if isinstance(inner, LiteralType):
                        values.extend(inner.values)
                        continue
                return UnsupportedType(
                    text=self._text(node), reason="Literal values must be str, int, bool or None"
                )
            if isinstance(value, str) and not is_utf8(value):
                return UnsupportedType(
                    text=self._text(node), reason="a string with a lone surrogate is not JSON text"
                )
            values.append(value)  # type: ignore[arg-type]
        # Duplicates dropped in one pass: keyed by type too, since ``True == 1``.
        unique = dict.fromkeys((type(v), v) for v in values)
        return LiteralType(values=tuple(v for _, v in unique))


_NOT_LITERAL = object()
NOT_LITERAL = _NOT_LITERAL  # what literal_value returns for anything else


def printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` escapes (for documentation)."""
    return text if is_utf8(text) else text.encode("utf-8", "backslashreplace").decode("utf-8")


def literal_value(node: ast.expr) -> object:
    if (
        isinstance(node, ast.Constant)
        and (node.value is None or isinstance(node.value, str | int | bool))
        and not isinstance(node.value, float)
    ):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return _NOT_LITERAL


def union(options: list[TypeNode]) -> TypeNode:
    """Flatten nested unions, drop duplicates (source order kept); one option is itself."""
    flat: dict[TypeNode, None] = {}  # insertion-ordered set: one pass, no rescans
    for option in options:
        for member in option.options if isinstance(option, UnionType) else (option,):
            flat.setdefault(member)
    if any(isinstance(m, AnyType) for m in flat):
        return AnyType()
    members = tuple(flat)
    return members[0] if len(members) == 1 else UnionType(options=members)
