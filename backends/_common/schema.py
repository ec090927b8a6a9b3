"""The one lowering of the type algebra to JSON Schema (2020-12, as OpenAPI 3.1 and MCP use it).

REST and MCP share it: a capability's request schema is built here once and each back end
only places it (``components/schemas`` in OpenAPI, ``inputSchema`` in MCP). TypedDicts
become named definitions referenced as ``#/$defs/<Name>``; :func:`relocate_refs` moves
them under another prefix. The generated servers build their validators from these very
schemas, so every rule written here is both documented and enforced:

- objects are closed (``additionalProperties: false``); required = no default;
- defaults are never evaluated nor copied: an optional field simply may be omitted;
- ``null`` is accepted only where the annotation is nullable (``x: int = None`` is not);
- positional-only parameters with defaults cannot leave a gap: supplying a later one
  requires the earlier ones (``dependentRequired``, as a chain: each requires the one
  before it), and the description says so.
"""

from collections.abc import Iterable, Mapping
from typing import Any, assert_never

from attrs import frozen
from svcc.compiler.passes.docstrings import parameter_descriptions, result_description
from svcc.contracts.errors import IneligibleError
from svcc.ir.bounds import BOUND_KINDS, choice_kind
from svcc.ir.index import module_index
from svcc.ir.interface import answered, left_out
from svcc.ir.model import Capability, Constraint, ModelDecl, ModuleIR, Parameter
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
    ModelType,
    NdarrayType,
    NoneType,
    SeriesType,
    StrType,
    TupleType,
    TypedDictType,
    TypeNode,
    UnionType,
    UnresolvedType,
    UnsupportedType,
    ValueType,
)

DEFS_PREFIX = "#/$defs/"
JSON = dict[str, Any]


class LoweringError(IneligibleError):
    """An eligible capability whose types cannot be lowered (generate exit code 1)."""


# A Decimal is its exact numeric string, in and out: no binary-float rounding anywhere.
# The exponent has at most 4 digits: arithmetic on 1E+10000000 overflows Decimal's context.
DECIMAL_PATTERN = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]{1,4})?$"
# Standard base64 with padding, exactly what ``base64.b64decode(validate=True)`` takes.
BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
VALUE_SCHEMAS: dict[str, JSON] = {
    "datetime.date": {"type": "string", "format": "date"},
    "datetime.datetime": {"type": "string", "format": "date-time"},
    "datetime.time": {"type": "string", "format": "time"},
    "datetime.timedelta": {"type": "string", "format": "duration"},
    "uuid.UUID": {"type": "string", "format": "uuid"},
    "decimal.Decimal": {
        "type": "string",
        "pattern": DECIMAL_PATTERN,
        "description": "A decimal number as a string (exact: never a binary float).",
    },
    "builtins.bytes": {"type": "string", "contentEncoding": "base64", "pattern": BASE64_PATTERN},
}
NDARRAY_MARKER = "x-svc-ndarray"  # read by svc_runtime/validation.py
NDARRAY_ITEMS: dict[str, JSON] = {
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "str": {"type": "string"},
}
# pydantic ``Field`` bounds as JSON Schema keywords (lengths by the field's JSON type)
BOUNDS: dict[str, str] = {
    "gt": "exclusiveMinimum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "le": "maximum",
    "pattern": "pattern",
}


def bounded(schema: JSON, constraints: Iterable[Constraint]) -> JSON:
    """``schema`` with literal ``Field``/``Input`` bounds as JSON Schema keywords: numbers'
    (``minimum``...), a string's or an array's length (``minLength``/``minItems``), a
    string's ``pattern``. In a union each option of a type the bound applies to gets it."""
    constraints = tuple(constraints)
    if not constraints:
        return schema
    if "anyOf" in schema:
        return {**schema, "anyOf": [bounded(option, constraints) for option in schema["anyOf"]]}
    kind = schema.get("type")
    if "format" in schema or "contentEncoding" in schema:
        return schema  # a date, bytes...: a string form of its own (no plain string)
    out = dict(schema)
    for bound in constraints:
        if kind not in BOUND_KINDS[bound.name]:
            continue
        if bound.name in BOUNDS:
            out[BOUNDS[bound.name]] = bound.value
        else:
            side = "min" if bound.name == "min_length" else "max"
            out[f"{side}{'Items' if kind == 'array' else 'Length'}"] = bound.value
    return out


def _described_input(schema: JSON, param: Parameter) -> JSON:
    """A parameter's schema with what its ``Input``/``Field`` descriptor states: bounds,
    ``choices`` (``enum``, on the option they apply to) and a literal ``default``."""
    found = param.input
    if found is None:
        return schema
    schema = bounded(schema, found.constraints)
    if found.choices:
        schema = _with_choices(schema, list(found.choices))
    if found.default is not None:
        schema = {**schema, "default": found.default.value}
    return schema


def _with_choices(schema: JSON, choices: list[Any]) -> JSON:
    if "anyOf" in schema:
        return {**schema, "anyOf": [_with_choices(o, choices) for o in schema["anyOf"]]}
    if schema.get("type") == choice_kind(tuple(choices)) and "format" not in schema:
        return {**schema, "enum": choices}
    return schema


def _ndarray(dtype: str, defs: set[str]) -> JSON:
    """Nested arrays of one item type, any depth (a named recursive definition)."""
    if dtype == "any":
        return {"type": "array", "description": "An n-dimensional array as nested arrays."}
    name = f"ndarray_{dtype}"
    defs.add(name)
    return {"type": "array", "items": {"$ref": DEFS_PREFIX + name}}


def _ndarray_definition(name: str) -> JSON:
    """``x-svc-ndarray`` names the item type: the served runtime reports one error for a
    value that is neither an item nor an array of them, by that marker (never by the title,
    which is documentation)."""
    item = NDARRAY_ITEMS[name.removeprefix("ndarray_")]
    return {
        "title": f"ndarray of {item['type']}",
        "anyOf": [item, {"type": "array", "items": {"$ref": DEFS_PREFIX + name}}],
        NDARRAY_MARKER: item["type"],
    }


def type_schema(node: TypeNode, defs: set[str], output: bool = False) -> JSON:
    """JSON Schema of one type node; TypedDict and model names referenced are added to
    ``defs``. ``output``: the result's form where it differs (a pandas Series)."""
    match node:
        case AnyType():
            return {}
        case IntType():
            return {"type": "integer"}
        case FloatType():
            return {"type": "number"}
        case StrType():
            return {"type": "string"}
        case BoolType():
            return {"type": "boolean"}
        case NoneType():
            return {"type": "null"}
        case ListType() | DictType() | TupleType() | UnionType():
            return _container_schema(node, defs, output)
        case LiteralType() | TypedDictType() | ValueType() | EnumType() | ModelType():
            return _named_schema(node, defs)
        case NdarrayType() | DataFrameType() | SeriesType():
            return _data_schema(node, defs, output)
        case UnsupportedType() | UnresolvedType():
            raise LoweringError(f"{node.text!r} has no JSON Schema")
        case _:
            assert_never(node)


def _container_schema(
    node: ListType | DictType | TupleType | UnionType, defs: set[str], output: bool
) -> JSON:
    match node:
        case ListType(item=item):
            return {"type": "array", "items": type_schema(item, defs, output)}
        case DictType(value=value):
            return {"type": "object", "additionalProperties": type_schema(value, defs, output)}
        case TupleType(items=items, variadic=variadic):
            if variadic is not None:
                return {"type": "array", "items": type_schema(variadic, defs, output)}
            if not items:
                return {"type": "array", "maxItems": 0}
            return {
                "type": "array",
                "prefixItems": [type_schema(i, defs, output) for i in items],
                "items": False,
                "minItems": len(items),
                "maxItems": len(items),
            }
        case UnionType(options=options):
            if any(isinstance(o, AnyType) for o in options):
                return {}
            return {"anyOf": [type_schema(o, defs, output) for o in options]}
        case _:
            assert_never(node)


def _named_schema(
    node: LiteralType | TypedDictType | ValueType | EnumType | ModelType, defs: set[str]
) -> JSON:
    match node:
        case LiteralType(values=values):
            return {"const": values[0]} if len(values) == 1 else {"enum": list(values)}
        case TypedDictType(name=name) | ModelType(name=name):
            defs.add(name)
            return {"$ref": DEFS_PREFIX + name}
        case ValueType(name=name):
            return dict(VALUE_SCHEMAS[name])
        case EnumType(name=name, values=values):
            return {"title": name, "enum": list(values)}
        case _:
            assert_never(node)


def _data_schema(
    node: NdarrayType | DataFrameType | SeriesType, defs: set[str], output: bool
) -> JSON:
    match node:
        case NdarrayType(dtype=dtype):
            return _ndarray(dtype, defs)
        case DataFrameType():
            return {
                "type": "array",
                "items": {"type": "object"},
                "description": "A table as a list of records (one object per row).",
            }
        case SeriesType():
            if output:
                return {"type": "object", "description": "A series: values keyed by its index."}
            return {"type": "array", "description": "A series: its values in order."}
        case _:
            assert_never(node)


def _lower_definition(ir: ModuleIR, name: str) -> tuple[JSON, frozenset[str]]:
    """One definition (a TypedDict, a model or an ndarray) and the names it references."""
    if name.startswith("ndarray_"):
        return _ndarray_definition(name), frozenset({name})
    index = module_index(ir)
    decl = index.models.get(name)
    if decl is not None:
        return _model_definition(decl)
    if name not in index.typed_dicts:
        raise LoweringError(f"TypedDict {name!r} is not defined")
    fields = index.typed_dict_fields(name)
    reached: set[str] = set()
    definition = {
        "type": "object",
        "title": name,
        "properties": {f.name: type_schema(f.type, reached) for f in fields},
        "required": [f.name for f in fields if f.required],
        "additionalProperties": False,
    }
    return definition, frozenset(reached)


def _model_definition(decl: ModelDecl) -> tuple[JSON, frozenset[str]]:
    """A dataclass, pydantic model or NamedTuple as a closed object (pydantic's
    ``extra="allow"`` opens it), its ``Field`` bounds as JSON Schema keywords."""
    reached: set[str] = set()
    properties: JSON = {}
    for field in decl.fields:
        schema = bounded(type_schema(field.type, reached), field.constraints)
        if field.description:
            schema = {**schema, "description": field.description}
        properties[field.name] = schema
    definition = {
        "type": "object",
        "title": decl.name,
        "properties": properties,
        "required": [f.name for f in decl.fields if f.required],
        "additionalProperties": decl.extra == "allow",
    }
    return definition, frozenset(reached)


def definitions(ir: ModuleIR, names: Iterable[str]) -> JSON:
    """Definitions for ``names`` and every name they reach, sorted by name. Each definition
    is lowered once per IR and shared (callers never mutate it), so a call costs what it
    returns: MCP asks once per tool (each ``$defs`` is self-contained), REST once for the
    whole document (its components are shared by every operation)."""
    lowered: dict[str, tuple[JSON, frozenset[str]]]
    lowered = module_index(ir).derived.setdefault(__name__, {})
    out: JSON = {}
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in out:
            continue
        found = lowered.get(name)
        if found is None:
            found = lowered[name] = _lower_definition(ir, name)
        out[name] = found[0]
        pending.extend(r for r in found[1] if r not in out)
    return dict(sorted(out.items()))


@frozen(kw_only=True)
class RequestSchema:
    """A capability's schema and the definitions it references directly (``refs``):
    :func:`definitions` adds what those reach, per tool (MCP) or per document (REST)."""

    schema: JSON
    refs: frozenset[str]

    def self_contained(self, ir: ModuleIR) -> JSON:
        """One document with ``$defs`` inline (MCP ``inputSchema``)."""
        defs = definitions(ir, self.refs)
        return {**self.schema, "$defs": defs} if defs else dict(self.schema)


def _gap_rule(cap: Capability) -> tuple[JSON, str | None]:
    """``dependentRequired`` for positional-only parameters with defaults, and its prose."""
    optional = [p.name for p in cap.params if p.kind == "positional_only" and p.default]
    if len(optional) < 2:
        return {}, None
    # A chain (each one requires the one before it) states the rule in O(n): JSON Schema
    # applies every present key's dependency, so supplying the k-th requires the (k-1)-th,
    # which, present, requires the (k-2)-th, and so on. Listing every earlier name under
    # each parameter would say the same in O(n²) bytes.
    rule = {later: [optional[i - 1]] for i, later in enumerate(optional) if i > 0}
    names = ", ".join(f"`{n}`" for n in optional)
    prose = (
        f"Positional-only parameters {names} keep their order: supplying one requires "
        "supplying every earlier one (a gap is refused with 422)."
    )
    return rule, prose


def request_schema(cap: Capability) -> RequestSchema:
    """The closed object of a capability's parameters (``{}`` bodies for no parameters)."""
    refs: set[str] = set()
    properties: JSON = {}
    required: list[str] = []
    described = parameter_descriptions(cap)  # the code's own, else the docstring's
    for param in cap.params:
        if param.kind in ("var_positional", "var_keyword"):
            raise LoweringError(f"{cap.name}: *{param.name} cannot be a request field")
        if left_out(param):  # no JSON shape, a default: never sent (SVC-R052)
            continue
        lowered = _described_input(type_schema(param.type, refs), param)
        if param.name in described:
            lowered = {**lowered, "description": described[param.name]}
        properties[param.name] = lowered
        if param.required:
            required.append(param.name)
    schema: JSON = {
        "type": "object",
        "title": f"{cap.name}_request",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    dependent, prose = _gap_rule(cap)
    if dependent:
        schema["dependentRequired"] = dependent
        schema["description"] = prose
    return RequestSchema(schema=schema, refs=frozenset(refs))


def result_schema(cap: Capability) -> RequestSchema | None:
    """The documented result (return types are never enforced); ``None`` when unknown. A
    stream's result, where one is collected (MCP), is the list of its items."""
    item = item_schema(cap) if cap.stream is not None else None
    if item is not None:
        return RequestSchema(schema={"type": "array", "items": item.schema}, refs=item.refs)
    if cap.returns.annotation is None or cap.stream is not None:
        return None
    return _documented(cap.returns.type, cap)


def item_schema(cap: Capability) -> RequestSchema | None:
    """A stream's documented item (``itemSchema``); ``None`` when unknown or no stream."""
    returns = answered(cap)
    if cap.stream is None or returns.annotation is None:
        return None
    return _documented(returns.type, cap)


def _documented(node: TypeNode, cap: Capability) -> RequestSchema | None:
    """``node``'s output schema with the docstring's description of what ``cap`` returns
    (or yields: then it describes each item)."""
    refs: set[str] = set()
    try:
        schema = type_schema(node, refs, output=True)
    except LoweringError:
        return None
    said = result_description(cap)
    if said:
        schema = {**schema, "description": said}
    return RequestSchema(schema=schema, refs=frozenset(refs))


def relocate_refs(value: Any, prefix: str) -> Any:
    """A copy of ``value`` with ``#/$defs/X`` references rewritten to ``prefix + X``."""
    if isinstance(value, Mapping):
        out = {}
        for key, sub in value.items():
            if key == "$ref" and isinstance(sub, str) and sub.startswith(DEFS_PREFIX):
                out[key] = prefix + sub[len(DEFS_PREFIX) :]
            else:
                out[key] = relocate_refs(sub, prefix)
        return out
    if isinstance(value, list):
        return [relocate_refs(v, prefix) for v in value]
    return value
