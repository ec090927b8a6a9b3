"""Classes with a JSON shape, read from their bodies: enums, dataclasses, pydantic models and
``NamedTuple``s.

Pass 1 (:func:`classify`) decides from a class statement's bases and decorators which of
these it is, so annotations anywhere in the module resolve to ``EnumType``/``ModelType``
(see ``_types``); pass 2 (:func:`model_decl`) reads the fields. Nothing is evaluated:
defaults are recorded by their source text (the class applies them when a field is
omitted), a ``Field(...)`` argument that is not a literal is recorded as unreadable (the
readiness pass calls that ``ambiguous`` with the line).
"""

import ast
from collections.abc import Callable
from typing import Literal

from svcc.frontends.python._descriptions import annotation_description, described
from svcc.frontends.python._types import (
    NOT_LITERAL,
    Symbols,
    TypeResolver,
    literal_value,
    typing_names,
)
from svcc.ir.model import Constraint, Default, ModelDecl, ModelField, Span, Unreadable
from svcc.ir.types import LiteralValue

ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})
DATACLASS = frozenset({"dataclasses.dataclass"})
BASEMODEL = frozenset({"pydantic.BaseModel", "pydantic.main.BaseModel"})
NAMEDTUPLE = typing_names("NamedTuple")
FIELD_FACTORIES = frozenset({"dataclasses.field", "pydantic.Field", "pydantic.fields.Field"})
CLASSVAR = typing_names("ClassVar")
KW_ONLY = frozenset({"dataclasses.KW_ONLY"})
_NOT = NOT_LITERAL
# pydantic ``Field`` keywords read as JSON Schema bounds (documented and enforced)
CONSTRAINTS = frozenset({"gt", "ge", "lt", "le", "min_length", "max_length", "pattern"})
# keywords that change nothing in the JSON shape
HARMLESS_FIELD_KEYWORDS = frozenset(
    {"description", "title", "examples", "repr", "compare", "hash", "init", "kw_only", "strict",
     "frozen", "exclude", "metadata", "json_schema_extra", "validate_default"}
)  # fmt: skip

Form = Literal["enum", "dataclass", "pydantic", "namedtuple"]


def classify(stmt: ast.ClassDef, symbols: Symbols) -> Form | None:
    """Which JSON-shaped class ``stmt`` is (by its bases and decorators), or ``None``."""
    quals = [symbols.qualify(b) or "" for b in stmt.bases]
    if any(q in ENUM_BASES for q in quals):
        return "enum"
    if any(q in NAMEDTUPLE for q in quals):
        return "namedtuple"
    for q in quals:
        if q in BASEMODEL or symbols.models.get(q.removeprefix("local.")) == "pydantic":
            return "pydantic"
    for dec in stmt.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if symbols.qualify(target) in DATACLASS:
            return "dataclass"
    return None


def enum_values(stmt: ast.ClassDef, symbols: Symbols) -> tuple[LiteralValue, ...] | str:
    """The member values in order, or why they cannot be read (a computed value)."""
    string_auto = any(symbols.qualify(b) == "enum.StrEnum" for b in stmt.bases)
    values: list[LiteralValue] = []
    for item in stmt.body:
        if not isinstance(item, ast.Assign) or len(item.targets) != 1:
            continue
        target = item.targets[0]
        if not isinstance(target, ast.Name) or target.id.startswith("_"):
            continue
        value = literal_value(item.value)
        if value is _NOT or value is None:
            call = item.value
            if (
                string_auto
                and isinstance(call, ast.Call)
                and symbols.qualify(call.func) == "enum.auto"
                and not call.args
            ):
                value = target.id.lower()  # StrEnum's auto(): the member name, lower-cased
            else:
                return f"member {target.id} has a value that is not a str or int literal"
        if isinstance(value, bool):
            return f"member {target.id} has a value that is not a str or int literal"
        if isinstance(value, str | int) and value not in values:
            values.append(value)  # an alias of an earlier member adds no value
    if not values:
        return "an enum without literal members"
    return tuple(values)


def _literal(node: ast.expr) -> object:
    """A literal ``Field`` bound: a str, int or float (negative numbers included)."""
    value = literal_value(node)
    if value is not _NOT:
        return value
    if isinstance(node, ast.Constant) and type(node.value) is float:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is float
    ):
        return -node.operand.value
    return _NOT


class ModelReader:
    """Reads one model class's fields (pass 2), its bases' fields first."""

    def __init__(
        self,
        symbols: Symbols,
        types: TypeResolver,
        segment: Callable[[ast.AST], str],
        span: Callable[[ast.AST], Span],
        known: dict[str, ModelDecl],
    ) -> None:
        self.symbols = symbols
        self.types = types
        self.segment = segment
        self.span = span
        self.known = known

    def read(self, stmt: ast.ClassDef, form: Form) -> ModelDecl:
        assert form != "enum"
        fields: dict[str, ModelField] = {}
        unreadable: list[Unreadable] = []
        for base in stmt.bases:
            qual = self.symbols.qualify(base) or ""
            inherited = (
                self.known.get(qual.removeprefix("local.")) if qual.startswith("local.") else None
            )
            if inherited is not None:
                fields.update((f.attribute, f) for f in inherited.fields)
                unreadable.extend(inherited.unreadable)
        extra: Literal["forbid", "ignore", "allow"] = "forbid"
        for item in stmt.body:
            if (
                form == "pydantic"
                and isinstance(item, ast.Assign | ast.AnnAssign)
                and _is_config(item)
            ):
                extra = self._extra(item, unreadable) or extra
                continue
            if not isinstance(item, ast.AnnAssign) or not isinstance(item.target, ast.Name):
                continue
            field = self._field(item, item.target.id, unreadable)
            if field is not None:
                fields.pop(field.attribute, None)
                fields[field.attribute] = field
        if form == "pydantic" and extra == "forbid":
            extra = self._inherited_extra(stmt)
        return ModelDecl(
            name=stmt.name,
            form=form,
            fields=tuple(fields.values()),
            extra=extra,
            unreadable=tuple(unreadable),
            span=self.span(stmt),
        )

    def _inherited_extra(self, stmt: ast.ClassDef) -> Literal["forbid", "ignore", "allow"]:
        for base in stmt.bases:
            qual = self.symbols.qualify(base) or ""
            decl = self.known.get(qual.removeprefix("local."))
            if decl is not None and decl.extra == "allow":
                return "allow"
        return "forbid"

    def _extra(
        self, item: ast.Assign | ast.AnnAssign, unreadable: list[Unreadable]
    ) -> Literal["forbid", "ignore", "allow"] | None:
        value = item.value
        pairs: list[tuple[str | None, ast.expr]] = []
        if isinstance(value, ast.Dict):
            for key_node, sub in zip(value.keys, value.values, strict=True):
                if isinstance(key_node, ast.Constant) and isinstance(key_node.value, str):
                    pairs.append((key_node.value, sub))
        elif isinstance(value, ast.Call):
            pairs = [(k.arg, k.value) for k in value.keywords]
        for key, sub in pairs:
            if key == "extra":
                literal = literal_value(sub)
                if literal == "forbid" or literal == "ignore" or literal == "allow":  # noqa: PLR1714
                    return literal
                unreadable.append(
                    Unreadable(text=f"model_config extra={self.segment(sub)}", span=self.span(sub))
                )
        return None

    def _field(
        self, item: ast.AnnAssign, name: str, unreadable: list[Unreadable]
    ) -> ModelField | None:
        annotation = item.annotation
        head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
        qual = self.symbols.qualify(head)
        if qual in CLASSVAR or qual in KW_ONLY or name.startswith("_"):
            return None
        default: Default | None = None
        constraints: list[Constraint] = []
        alias = name
        value = item.value
        if value is not None:
            default = Default(text=self.segment(value), span=self.span(value))
            if isinstance(value, ast.Call) and self.symbols.qualify(value.func) in FIELD_FACTORIES:
                if _not_in_init(value):
                    return None  # field(init=False): not a constructor argument
                default, alias = self._field_call(value, name, constraints, unreadable)
        return ModelField(
            name=alias,
            attribute=name,
            annotation=self.segment(annotation),
            type=self.types.resolve(annotation),
            required=default is None,
            default=default,
            constraints=tuple(constraints),
            span=self.span(item),
            description=annotation_description(annotation, self.symbols.qualify)
            or described(value, self.symbols.qualify),
        )

    def _field_call(
        self,
        call: ast.Call,
        name: str,
        constraints: list[Constraint],
        unreadable: list[Unreadable],
    ) -> tuple[Default | None, str]:
        """``field(...)``/``Field(...)``: its default (or none), its alias; the bounds go
        to ``constraints``, what cannot be read to ``unreadable``."""
        default: Default | None = None
        alias = name
        for position, arg in enumerate(call.args):
            if position == 0 and not (isinstance(arg, ast.Constant) and arg.value is Ellipsis):
                default = Default(text=self.segment(arg), span=self.span(arg))
        for keyword in call.keywords:
            key, sub = keyword.arg, keyword.value
            if key in ("default", "default_factory"):
                if not (isinstance(sub, ast.Constant) and sub.value is Ellipsis):
                    default = Default(text=self.segment(sub), span=self.span(sub))
            elif key in ("alias", "validation_alias"):
                literal = literal_value(sub)
                if isinstance(literal, str):
                    alias = literal
                else:
                    unreadable.append(self._unreadable(name, keyword))
            elif key in CONSTRAINTS:
                literal = _literal(sub)
                if literal is _NOT or isinstance(literal, bool) or literal is None:
                    unreadable.append(self._unreadable(name, keyword))
                else:
                    constraints.append(Constraint(name=key, value=literal))  # type: ignore[arg-type]
            elif key is None or key not in HARMLESS_FIELD_KEYWORDS:
                unreadable.append(self._unreadable(name, keyword))
        return default, alias

    def _unreadable(self, name: str, keyword: ast.keyword) -> Unreadable:
        return Unreadable(
            text=f"field {name}: {self.segment(keyword)}", span=self.span(keyword.value)
        )


def _not_in_init(call: ast.Call) -> bool:
    """``field(init=False)`` (the constructor does not take it)."""
    return any(
        k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in call.keywords
    )


def _is_config(item: ast.stmt) -> bool:
    targets = (
        item.targets
        if isinstance(item, ast.Assign)
        else [item.target]
        if isinstance(item, ast.AnnAssign)
        else []
    )
    return any(isinstance(t, ast.Name) and t.id == "model_config" for t in targets)


# Calls a class body may make at import that run no user code, with literal arguments:
# ``field(...)``, ``Field(...)``, ``ConfigDict(...)``, ``auto()``.
BODY_CALLS = FIELD_FACTORIES | {"pydantic.ConfigDict", "pydantic.config.ConfigDict", "enum.auto"}
# ``default_factory=`` values that build an empty container
FACTORIES = frozenset({"builtins.list", "builtins.dict", "builtins.set", "builtins.tuple"})


def harmless_field_call(value: ast.expr | None, symbols: Symbols) -> bool:
    """``value`` is one of :data:`BODY_CALLS` whose arguments are literals (or an
    empty-container factory): defining the class evaluates nothing of the user's."""
    if not isinstance(value, ast.Call) or symbols.qualify(value.func) not in BODY_CALLS:
        return False
    for arg in [*value.args, *(k.value for k in value.keywords)]:
        if isinstance(arg, ast.Constant):
            continue
        if _literal(arg) is not _NOT:
            continue
        if isinstance(arg, ast.Name | ast.Attribute) and symbols.qualify(arg) in FACTORIES:
            continue
        return False
    return True
