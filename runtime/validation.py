"""Request validators built from the request's own JSON Schema.

The schema published in ``openapi.json`` (and as MCP ``inputSchema``) is the single source
of truth: this module turns it into one pydantic-core validator per capability at startup,
so what the server accepts is exactly what the document promises. The raw body is parsed
and validated in one pass (``validate_json``), strictly: strings and booleans are never
numbers, objects are closed, and an explicit ``null`` is accepted only where the schema
allows ``null``.

Only the subset svcc emits is understood; anything else is a :class:`StartupError`, so a
hand-edited schema cannot silently validate less than it documents.
"""

import json
import math
import os
from collections.abc import Callable, Mapping
from typing import Any

from pydantic_core import PydanticCustomError, SchemaValidator, ValidationError, to_json
from pydantic_core import core_schema as cs

from .integrity import StartupError
from .json_text import first_non_finite

# A request body (REST) or a message (MCP over stdio) is at most this many bytes unless
# ``SVC_MAX_BODY_BYTES`` says otherwise (:func:`max_body_bytes`).
DEFAULT_MAX_BODY = 16 * 1024 * 1024
MAX_BODY_ENV = "SVC_MAX_BODY_BYTES"
# A 422 lists at most this many errors (and how many more there were); each error's
# ``input`` is at most an excerpt of about this many characters of its JSON.
MAX_ERRORS = 20
MAX_INPUT_EXCERPT = 120
# Above this size a body is validated with arrays that stop at their first invalid item:
# the same result for a valid body, bounded work and memory for a hostile one.
FAIL_FAST_BYTES = 64 * 1024


class RequestInvalid(Exception):
    """The request does not satisfy its schema. ``errors`` use FastAPI's 422 item shape
    (at most :data:`MAX_ERRORS`); ``more`` counts the errors found beyond them."""

    def __init__(self, errors: list[dict[str, Any]], more: int = 0) -> None:
        super().__init__(errors)
        self.errors = errors
        self.more = more

    def body(self) -> dict[str, Any]:
        """The 422 document: FastAPI's ``detail``, plus ``more_errors`` when bounded."""
        if self.more:
            return {"detail": self.errors, "more_errors": self.more}
        return {"detail": self.errors}


class TooLarge(Exception):
    """A request over its size limit (REST answers 413, MCP a tool error); the message says
    how large it was when known."""


def max_body_bytes() -> int:
    """The size limit of a request body or message: ``SVC_MAX_BODY_BYTES``, else 16 MiB.
    A value that is not a positive integer refuses startup (:class:`StartupError`)."""
    raw = os.environ.get(MAX_BODY_ENV, "")
    if not raw:
        return DEFAULT_MAX_BODY
    if not raw.isdigit() or int(raw) <= 0:
        raise StartupError(f"{MAX_BODY_ENV}={raw!r} is not a positive integer")
    return int(raw)


def check_size(size: int, limit: int, what: str = "the request body") -> None:
    """The one size rule of requests: ``size`` bytes of ``what`` fit in ``limit`` bytes
    (REST bodies, declared and read; MCP arguments, measured as their JSON)."""
    if size > limit:
        raise TooLarge(f"{size} bytes of {what} is over the {limit}-byte input limit")


def _finite(value: Any) -> Any:
    """Any JSON value, except the numbers JSON does not have: ``NaN``, ``Infinity`` and a
    literal that overflows to infinity (``1e400``), which the parser lets through where the
    schema says nothing about the type (``Any``, unannotated, ``dict[str, Any]``)."""
    if first_non_finite(value) is not None:
        raise PydanticCustomError(
            "finite_number", "Input should be a finite number (NaN and Infinity are not JSON)"
        )
    return value


def _any() -> cs.CoreSchema:
    """Any JSON value (:func:`_finite`)."""
    return cs.no_info_after_validator_function(_finite, cs.any_schema())


def _ref_name(ref: str) -> str:
    for prefix in ("#/components/schemas/", "#/$defs/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    raise StartupError(f"unsupported $ref {ref!r} in a request schema")


def _object(node: Mapping[str, Any], convert: Any) -> cs.CoreSchema:
    if "properties" in node or node.get("additionalProperties") is False:
        required = set(node.get("required", ()))
        fields = {
            name: cs.typed_dict_field(_defaulted(sub, convert), required=name in required)
            for name, sub in node.get("properties", {}).items()
        }
        opened = node.get("additionalProperties") is True  # pydantic extra="allow"
        return cs.typed_dict_schema(
            fields, extra_behavior="allow" if opened else "forbid", strict=True
        )
    values = node.get("additionalProperties", True)
    value_schema = _any() if values is True else convert(values)
    return cs.dict_schema(cs.str_schema(strict=True), value_schema, strict=True)


def _defaulted(node: Any, convert: Callable[[Any], cs.CoreSchema]) -> cs.CoreSchema:
    """A property's schema; with a ``default`` (a literal the generator copied from the
    parameter's ``Input(default=...)``/``Field(default=...)``), the value the call receives
    when the property is omitted, as the schema documents: the function's own default may be
    the descriptor object itself (``pydantic.Field``), never the value it states."""
    schema: cs.CoreSchema = convert(node)
    if isinstance(node, Mapping) and "default" in node:
        return cs.with_default_schema(schema, default=node["default"])
    return schema


def _array(node: Mapping[str, Any], convert: Any, fail_fast: bool) -> cs.CoreSchema:
    if "prefixItems" in node:
        return cs.tuple_schema([convert(s) for s in node["prefixItems"]], strict=True)
    if node.get("maxItems") == 0 and "items" not in node:
        return cs.tuple_schema([], strict=True)
    items = node.get("items", True)
    return cs.list_schema(
        _any() if items is True else convert(items),
        strict=True,
        fail_fast=fail_fast,
        min_length=node.get("minItems"),
        max_length=node.get("maxItems"),
    )


def _literal_group(kind: str, members: list[Any]) -> cs.CoreSchema:
    if kind == "null":
        return cs.none_schema()
    return cs.chain_schema([_SCALARS[kind](), cs.literal_schema(members)])


def _literal(values: list[Any]) -> cs.CoreSchema:
    """Literal values compared with their JSON type first: ``true`` is never ``1``."""
    groups: dict[str, list[Any]] = {}
    for value in values:
        kind = {bool: "boolean", int: "integer", str: "string", type(None): "null"}.get(type(value))
        if kind is None:
            raise StartupError(f"unsupported literal value {value!r} in a request schema")
        groups.setdefault(kind, []).append(value)
    choices: list[cs.CoreSchema | tuple[cs.CoreSchema, str]] = [
        _literal_group(kind, members) for kind, members in groups.items()
    ]
    if len(choices) == 1:
        return _literal_group(*next(iter(groups.items())))
    expected = ", ".join(json.dumps(v) for v in values)
    # pydantic-core refuses a custom message for one of its own error types, so members of
    # several JSON types report under their own type name (a startup crash otherwise).
    return cs.union_schema(
        choices,
        custom_error_type="literal_mismatch",
        custom_error_message=f"Input should be one of {expected}",
    )


# Marks an n-dimensional array's definition (``anyOf`` an item, or an array of itself) and
# names its item type; written by the generator, never inferred from a title.
NDARRAY_MARKER = "x-svc-ndarray"


# ``format`` of a string: parsed strictly by pydantic-core into the Python value
_FORMATS: dict[str, Callable[[], cs.CoreSchema]] = {
    "date": lambda: cs.date_schema(strict=True),
    "date-time": lambda: cs.datetime_schema(strict=True),
    "time": lambda: cs.time_schema(strict=True),
    "duration": lambda: cs.timedelta_schema(strict=True),
    "uuid": lambda: cs.uuid_schema(strict=True),
}


def _string(node: Mapping[str, Any]) -> cs.CoreSchema:
    """A string, a formatted string (a date, a UUID...) or base64 text (still a string here:
    the call's conversion decodes it); lengths and a pattern are enforced."""
    fmt = node.get("format")
    if fmt is not None:
        if fmt not in _FORMATS:
            raise StartupError(f"unsupported string format {fmt!r} in a request schema")
        return _FORMATS[fmt]()
    return cs.str_schema(
        strict=True,
        pattern=node.get("pattern"),
        min_length=node.get("minLength"),
        max_length=node.get("maxLength"),
    )


def _integer_bounds(bounds: Mapping[str, Any]) -> dict[str, Any]:
    """An integer's bounds as integers, each admitting exactly the integers the schema's
    number admits (``minimum: 0.5`` is ``ge=1``, ``exclusiveMaximum: 2.5`` is ``le=2``):
    pydantic-core refuses a fractional bound on an integer when the server starts."""
    out: dict[str, Any] = {}
    for key, value in bounds.items():
        if value is not None and (isinstance(value, int) or float(value).is_integer()):
            out[key] = int(value)
    for key, value in bounds.items():
        if value is None or key in out:
            continue
        if key in ("ge", "gt"):  # x >= 0.5, x > 0.5: x >= 1
            out["ge"] = max(math.floor(value) + 1, out.get("ge", -math.inf))
        else:  # x <= 2.5, x < 2.5: x <= 2
            out["le"] = min(math.floor(value), out.get("le", math.inf))
    return out


def _number(node: Mapping[str, Any], integer: bool) -> cs.CoreSchema:
    bounds = {
        "gt": node.get("exclusiveMinimum"),
        "ge": node.get("minimum"),
        "lt": node.get("exclusiveMaximum"),
        "le": node.get("maximum"),
    }
    if integer:
        return cs.int_schema(strict=True, **_integer_bounds(bounds))
    return cs.float_schema(strict=True, allow_inf_nan=False, **bounds)


_SCALARS: dict[str, Callable[[], cs.CoreSchema]] = {
    "integer": lambda: cs.int_schema(strict=True),
    "number": lambda: cs.float_schema(strict=True, allow_inf_nan=False),
    "string": lambda: cs.str_schema(strict=True),
    "boolean": lambda: cs.bool_schema(strict=True),
    "null": cs.none_schema,
}


# Every keyword svcc emits. Anything else would be documented but not enforced: refused.
_KEYWORDS = frozenset(
    {
        "$ref", "additionalProperties", "anyOf", "const", "dependentRequired", "description",
        "enum", "items", "maxItems", "minItems", "prefixItems", "properties", "required",
        "title", "type", "format", "pattern", "contentEncoding", "minLength", "maxLength",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", NDARRAY_MARKER,
        "default",
    }
)  # fmt: skip
# The keywords that bound a value (checked with an ``enum`` too: a choice outside them is refused)
_BOUNDS = ("pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
           "exclusiveMaximum")  # fmt: skip


def to_core_schema(node: Any, fail_fast: bool = False) -> cs.CoreSchema:
    """One JSON Schema node (svcc's subset) → a strict pydantic-core schema; with
    ``fail_fast``, arrays stop validating at their first invalid item."""

    def convert(sub: Any) -> cs.CoreSchema:
        return to_core_schema(sub, fail_fast)

    if node is True or node == {}:
        return _any()
    if not isinstance(node, Mapping):
        raise StartupError(f"unsupported request schema node {node!r}")
    unknown = sorted(set(node) - _KEYWORDS)
    if unknown:
        raise StartupError(f"unsupported keyword {unknown[0]!r} in a request schema")
    if "$ref" in node:
        return cs.definition_reference_schema(_ref_name(node["$ref"]))
    if "anyOf" in node or "const" in node or "enum" in node:
        return _choices(node, convert)
    return _typed(node, convert, fail_fast)


def _choices(node: Mapping[str, Any], convert: Callable[[Any], cs.CoreSchema]) -> cs.CoreSchema:
    """A node that lists what a value may be: ``anyOf`` schemas, a ``const`` or an ``enum``."""
    if "anyOf" in node:
        item = node.get(NDARRAY_MARKER)
        if isinstance(item, str):  # an ndarray (the generator's marker): one error, not 3
            return cs.union_schema(
                [convert(s) for s in node["anyOf"]],
                custom_error_type="ndarray_item",
                custom_error_message=f"Input should be a {item} or an array of them",
            )
        return cs.union_schema([convert(s) for s in node["anyOf"]])
    if "const" in node:
        return _literal([node["const"]])
    choices = _literal(list(node["enum"]))
    bounds = {k: node[k] for k in _BOUNDS if k in node}
    if bounds and "type" in node:  # each choice must satisfy the bounds too
        return cs.chain_schema([convert({"type": node["type"], **bounds}), choices])
    return choices


def _typed(
    node: Mapping[str, Any], convert: Callable[[Any], cs.CoreSchema], fail_fast: bool
) -> cs.CoreSchema:
    """A node of one JSON ``type`` (or none: annotations only)."""
    kind = node.get("type")
    if kind == "object":
        return _object(node, convert)
    if kind == "array":
        return _array(node, convert, fail_fast)
    if kind == "string":
        return _string(node)
    if kind in ("integer", "number"):
        return _number(node, kind == "integer")
    if isinstance(kind, str) and kind in _SCALARS:
        return _SCALARS[kind]()
    if kind is None:
        return _any()  # annotation-only node (title, description)
    raise StartupError(f"unsupported request schema node {json.dumps(node, sort_keys=True)}")


def _reachable(schema: Any, definitions: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The definitions ``schema`` references, directly or through other definitions."""
    found: dict[str, Any] = {}
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = _ref_name(ref)
                if name not in found:
                    if name not in definitions:
                        raise StartupError(f"request schema references undefined {ref!r}")
                    found[name] = definitions[name]
                    pending.append(definitions[name])
            pending.extend(v for k, v in node.items() if k != "$ref")
        elif isinstance(node, list):
            pending.extend(node)
    return sorted(found.items())


class RequestValidator:
    """Validates one capability's raw JSON body into the dict of supplied arguments."""

    __slots__ = ("_dependent", "_fail_fast", "_needs", "_order", "_validator")

    def __init__(self, schema: Mapping[str, Any], definitions: Mapping[str, Any]) -> None:
        self._validator = _build(schema, definitions, fail_fast=False)
        self._fail_fast = _build(schema, definitions, fail_fast=True)
        # dependentRequired: supplying a later positional-only parameter requires the earlier.
        self._dependent = tuple(
            (name, tuple(needs)) for name, needs in schema.get("dependentRequired", {}).items()
        )
        self._needs = dict(self._dependent)
        self._order = {name: i for i, name in enumerate(schema.get("properties", {}))}

    def validate_json(self, body: bytes) -> dict[str, Any]:
        """The raw body, parsed and validated in one pass."""
        validator = self._fail_fast if len(body) > FAIL_FAST_BYTES else self._validator
        try:
            values: dict[str, Any] = validator.validate_json(body, strict=True)
        except ValidationError as exc:
            raise RequestInvalid(
                format_errors(exc), max(exc.error_count() - MAX_ERRORS, 0)
            ) from None
        if self._dependent:
            self._check_gaps(values)
        return values

    def validate_value(self, data: Any) -> dict[str, Any]:
        """The same rules for a value already decoded from JSON (MCP arguments), checked
        in JSON mode so that arrays become tuples exactly where a body's would."""
        return self.validate_json(to_json(data))

    def _check_gaps(self, values: Mapping[str, Any]) -> None:
        """Every parameter a supplied one requires, directly or through the chain the schema
        states (``p3`` requires ``p2``, which requires ``p1``), is reported once, naming the
        last supplied parameter that requires it; each parameter is visited once."""
        missing: dict[str, str] = {}  # required but absent -> the supplied one requiring it
        visited: set[str] = set()
        for name, _ in reversed(self._dependent):
            if name not in values or name in visited:
                continue
            visited.add(name)
            stack = [name]
            while stack:
                for need in self._needs.get(stack.pop(), ()):
                    if need in visited:
                        continue
                    visited.add(need)
                    if need not in values:
                        missing[need] = name
                    stack.append(need)
        if missing:
            raise RequestInvalid(
                [
                    {
                        "type": "positional_gap",
                        "loc": ["body", need],
                        "msg": (
                            f"Field required: {name!r} is positional-only and comes after "
                            f"{need!r}; supply {need!r} as well"
                        ),
                        "input": None,
                    }
                    for need, name in sorted(
                        missing.items(), key=lambda i: (self._order.get(i[0], -1), i[0])
                    )
                ]
            )


def _build(
    schema: Mapping[str, Any], definitions: Mapping[str, Any], *, fail_fast: bool
) -> SchemaValidator:
    core = to_core_schema(schema, fail_fast)
    reachable = _reachable(schema, definitions)
    if reachable:
        refs = []
        for name, sub in reachable:
            converted = dict(to_core_schema(sub, fail_fast))
            converted["ref"] = name
            refs.append(converted)
        core = cs.definitions_schema(core, refs)  # type: ignore[arg-type]
    return SchemaValidator(core)


def _jsonable(value: Any) -> Any:
    """A short excerpt of an offending value: never more than about a line of it."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError):
        text = str(value)
        value = text
    if len(text) <= MAX_INPUT_EXCERPT:
        return value
    if isinstance(value, str):
        return value[:MAX_INPUT_EXCERPT] + "…"
    return text[:MAX_INPUT_EXCERPT] + "…"


def format_errors(exc: ValidationError) -> list[dict[str, Any]]:
    """The first :data:`MAX_ERRORS` pydantic errors in FastAPI's shape, ``loc`` prefixed
    with ``"body"``. A body that is not JSON is never echoed (``input`` is null)."""
    out = []
    for error in exc.errors(include_url=False)[:MAX_ERRORS]:
        invalid_json = error["type"] == "json_invalid"
        item: dict[str, Any] = {
            "type": error["type"],
            "loc": ["body", *error["loc"]],
            "msg": error["msg"],
            "input": None if invalid_json else _jsonable(error.get("input")),
        }
        if error.get("ctx"):
            item["ctx"] = {k: _jsonable(v) for k, v in error["ctx"].items()}
        out.append(item)
    return out
