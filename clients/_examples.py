"""Example request bodies derived from a capability's request schema.

Rules, in order of preference, so the body documents the function and the server takes it:

- a parameter with a default whose source text is a JSON-able literal gets that default
  (read with :func:`ast.literal_eval`, which only parses literals and never runs code);
  one whose default is an expression (``math.pi``, ``None`` where ``None`` is not allowed)
  is left out, so the function applies its own default;
- positional-only parameters keep their order: once one with a default is left out, every
  later positional-only one is left out too (the server refuses a gap);
- otherwise a value is made from the schema: the first ``Literal`` member (``const`` /
  ``enum``), ``1`` / ``1.5`` / ``"example"`` / ``true`` per type, one item per array,
  tuples item by item, every field of a TypedDict filled (recursion stops at optional
  fields and empty arrays), the first non-null branch of a union.

The caller checks the result with the bundle's own validator; a default the validator
refuses is dropped and the body checked again.
"""

import ast
import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

from svcc.contracts.errors import InputError, InternalError

MAX_DEPTH: Final = 32  # of a literal default's value
# Definitions filled inside one another for one example: ``svcc generate`` accepts a chain
# of nested TypedDicts of any length, and the server parses bodies far deeper than this.
MAX_NESTING: Final = 64
MAX_DEFAULT_CHARS: Final = 16 * 1024

_SCALARS: Final[Mapping[str, Any]] = {
    "integer": 1,
    "number": 1.5,
    "string": "example",
    "boolean": True,
    "null": None,
}
UNSET: Final = object()  # "no usable literal default"


def literal_default(text: str) -> Any:
    """The JSON value of a literal default, or ``UNSET`` when it is not a JSON literal."""
    if len(text) > MAX_DEFAULT_CHARS:
        return UNSET
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return UNSET
    return value if _is_json(value) else UNSET


def _is_json(value: Any, depth: int = 0) -> bool:
    if depth > MAX_DEPTH:
        return False
    if value is None or isinstance(value, bool | int | str):
        return not isinstance(value, int) or isinstance(value, bool) or abs(value) < 2**63
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(_is_json(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v, depth + 1) for k, v in value.items())
    return False


def _jsonify(value: Any) -> Any:
    """Tuples as lists (JSON arrays)."""
    if isinstance(value, list | tuple):
        return [_jsonify(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonify(v) for k, v in value.items()}
    return value


# a valid value of each string ``format`` svcc emits (dates, times, durations, UUIDs)
FORMAT_EXAMPLES: Final[Mapping[str, str]] = {
    "date": "2024-01-31",
    "date-time": "2024-01-31T12:00:00Z",
    "time": "12:00:00",
    "duration": "PT1H",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
}


# strings tried against a ``pattern`` in order: a Decimal's, then common shapes
PATTERN_CANDIDATES: Final = (
    "1.5", "example", "a@example.com", "https://example.com", "EXAMPLE", "ex-1", "0", "a"
)  # fmt: skip


def _string(node: Mapping[str, Any]) -> str:
    """A string the server accepts: a formatted value, base64 text, the first of
    :data:`PATTERN_CANDIDATES` a pattern admits, or ``"example"``, stretched or cut to the
    length bounds (a pattern none of them matches is caught by the validator check)."""
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt in FORMAT_EXAMPLES:
        return FORMAT_EXAMPLES[fmt]
    if node.get("contentEncoding") == "base64":
        return "ZXhhbXBsZQ=="  # b"example"
    text = "example"
    if "pattern" in node:  # the first common shape it admits (JSON Schema: a search)
        try:
            pattern = re.compile(str(node["pattern"]))
        except re.error:
            pattern = None
        if pattern is not None:
            text = next((c for c in PATTERN_CANDIDATES if pattern.search(c)), text)
    low = node.get("minLength")
    if isinstance(low, int) and len(text) < low:
        text = text * (low // len(text) + 1)
    high = node.get("maxLength")
    if isinstance(high, int):
        text = text[:high]
    return text


def _number(node: Mapping[str, Any], integer: bool) -> int | float:
    """``1`` / ``1.5``, moved inside the bounds when there are any."""
    value: int | float = 1 if integer else 1.5
    low = node.get("minimum", node.get("exclusiveMinimum"))
    high = node.get("maximum", node.get("exclusiveMaximum"))
    step = 1 if integer else 0.5
    if isinstance(low, int | float) and value <= low:
        value = (math.floor(low) if integer else low) + step
    if isinstance(high, int | float) and value >= high:
        value = (math.ceil(high) if integer else high) - step
    return value


class _Maker:
    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self.definitions = definitions

    def resolve(self, ref: str) -> tuple[str, Any]:
        name = ref.rsplit("/", 1)[-1]
        if name not in self.definitions:
            raise InternalError(f"request schema references undefined {ref!r}")
        return name, self.definitions[name]

    def recursive(self, node: Any, stack: tuple[str, ...]) -> bool:
        """Whether filling ``node`` would re-enter a definition already being filled."""
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str):
                return self.resolve(ref)[0] in stack
            return any(self.recursive(v, stack) for v in node.get("anyOf", ()))
        return False

    def value(self, node: Any, stack: tuple[str, ...] = ()) -> Any:
        if len(stack) > MAX_NESTING:
            raise InputError(
                f"the request schema nests more than {MAX_NESTING} definitions inside one "
                "another; no example body is built for it"
            )
        if node is True or not isinstance(node, Mapping):
            return "example"
        if "$ref" in node:
            name, target = self.resolve(node["$ref"])
            return self.value(target, (*stack, name))
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return node["enum"][0]
        if "anyOf" in node:
            options = list(node["anyOf"])
            ranked = sorted(
                options,
                key=lambda o: (self.recursive(o, stack), o == {"type": "null"}),
            )
            return self.value(ranked[0], stack)
        kind = node.get("type")
        if kind == "object":
            return self.object(node, stack)
        if kind == "array":
            return self.array(node, stack)
        if kind == "string":
            return _string(node)
        if kind in ("integer", "number"):
            return _number(node, kind == "integer")
        if isinstance(kind, str) and kind in _SCALARS:
            return _SCALARS[kind]
        return "example"  # any JSON value (no annotation, Any)

    def object(self, node: Mapping[str, Any], stack: tuple[str, ...]) -> Any:
        properties = node.get("properties")
        if properties is None:
            values = node.get("additionalProperties", True)
            if values is False or self.recursive(values, stack):
                return {}
            return {"key": self.value(values, stack)}
        required = set(node.get("required", ()))
        out = {}
        for name, sub in properties.items():
            if name not in required and self.recursive(sub, stack):
                continue  # an optional field that recurses: leave it out, the value ends
            out[name] = self.value(sub, stack)
        return out

    def array(self, node: Mapping[str, Any], stack: tuple[str, ...]) -> Any:
        if "prefixItems" in node:
            return [self.value(item, stack) for item in node["prefixItems"]]
        items = node.get("items", True)
        if node.get("maxItems") == 0 or items is False or self.recursive(items, stack):
            return []
        return [self.value(items, stack)]


def example_body(
    schema: Mapping[str, Any],
    definitions: Mapping[str, Any],
    *,
    defaults: Mapping[str, str],
    positional_only: tuple[str, ...],
    drop: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """A body for ``schema``; ``drop`` names optional parameters to leave out."""
    maker = _Maker(definitions)
    required = set(schema.get("required", ()))
    properties: Mapping[str, Any] = schema.get("properties", {})
    chosen: dict[str, Any] = {}
    for name in properties:
        if name not in required and name not in drop and name in defaults:
            default = literal_default(defaults[name])
            if default is not UNSET:
                chosen[name] = _jsonify(default)
    # Positional-only parameters in signature order: after the first one left out, every
    # later optional one is left out too (the server refuses a gap).
    gap = False
    for name in positional_only:
        if name in required or name not in properties:
            continue
        if gap or name not in chosen:
            gap = True
            chosen.pop(name, None)
    body: dict[str, Any] = {}
    for name, sub in properties.items():
        if name in required:
            body[name] = maker.value(sub)
        elif name in chosen:
            body[name] = chosen[name]
    return body


def dumps_body(body: Any) -> str:
    """Indented JSON whose strings never hold ``{``, ``}`` or unprintable characters.

    Every client format interpolates ``{{...}}`` in bodies (and Insomnia runs ``{% %}``
    tags); a brace inside a string is written ``\\u007b`` / ``\\u007d``, which the server
    decodes to the same text, so a value is sent exactly as derived. Line and paragraph
    separators and other unprintable characters are escaped for the line-based formats.
    """
    text = json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False)
    return _STRING.sub(_escape_string, text)


_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_UNSAFE: Final = re.compile(r"[{}]|[^\x20-\x7e]")


def _escape_string(match: "re.Match[str]") -> str:
    token = match.group()
    if not _UNSAFE.search(token):
        return token
    return "".join(
        (f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else _surrogates(ch))
        if ch in "{}" or not ch.isprintable()
        else ch
        for ch in token
    )


def _surrogates(ch: str) -> str:
    code = ord(ch) - 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
