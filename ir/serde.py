"""The one mapping between IR objects and plain JSON values.

The shape: a record is an object of all its fields under their names, a tuple is an array,
and a type node (the :data:`~svcc.ir.types.TypeNode` union) also carries its ``kind``.
:func:`unstructure` writes that shape; cattrs reads it back (:func:`structure`), strict by
construction: unknown keys are refused, type nodes are a tagged union on ``kind``, and a
failure is reported with JSON paths (``... @ $.capabilities[0].params[1].type``) through
``cattrs.transform_error``. Writing needs no cattrs: ``svcc inspect --format json`` (the
IR's digest) would otherwise pay for importing it and building its hooks on every start,
about a fifth of the command's time for a small file; the converter's unstructuring
delegates here, so there is one writer of the shape. The IR's canonical bytes are written
as text straight from the records (:func:`_text`), from the same layout (:func:`_layout`).
"""

import json
from collections.abc import Callable, Iterator
from functools import cache
from json.encoder import encode_basestring  # the C one where built
from typing import Any, TypeVar

from svcc.ir.canonical import ENCODER, digest_bytes, json_utf8, sha256
from svcc.ir.model import ConstraintValue, InputValue, ModuleIR
from svcc.ir.records import field_names
from svcc.ir.types import (
    TYPE_NODE_CLASSES,
    LiteralValue,
    TypeNode,
    resolve_forward_references,
)

T = TypeVar("T")


class IRFormatError(ValueError):
    """A JSON document is not a valid IR document; ``errors`` lists ``message @ path``."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


def _literal_value(value: Any, _: Any) -> LiteralValue:
    """A ``Literal[...]`` member: a JSON string, integer, boolean or null, nothing else."""
    if value is None or type(value) in (str, int, bool):
        return value  # type: ignore[no-any-return]
    raise ValueError(f"{value!r} is not a str, int, bool or null literal")


def _constraint_value(value: Any, _: Any) -> ConstraintValue:
    """A model field's bound: a JSON number or string (never a boolean)."""
    if type(value) in (int, float, str):
        return value  # type: ignore[no-any-return]
    raise ValueError(f"{value!r} is not a number or a string")


def _input_value(value: Any, _: Any) -> InputValue:
    """A parameter's literal default: a JSON scalar (a string, number, boolean or null)."""
    if value is None or type(value) in (str, int, float, bool):
        return value  # type: ignore[no-any-return]
    raise ValueError(f"{value!r} is not a JSON scalar")


def _kind_of(cls: type) -> str:
    kind: str = cls.KIND  # type: ignore[attr-defined]  # every TypeNode class has one
    return kind


@cache
def converter() -> Any:
    """Build (once, lazily: cattrs costs tens of milliseconds to import) the converter."""
    import cattrs
    from cattrs.strategies import configure_tagged_union

    resolve_forward_references()
    conv = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    conv.register_unstructure_hook_func(_is_record, unstructure)
    # ``TypeNode | None`` (an optional node, e.g. ``TupleType.variadic``) is a union of its
    # own to cattrs: route it through the tagged union so the tag is read.
    conv.register_structure_hook(
        TypeNode | None,
        lambda value, _: None if value is None else conv.structure(value, TypeNode),  # type: ignore[arg-type]  # a union, not a class
    )
    conv.register_structure_hook(LiteralValue, _literal_value)
    conv.register_structure_hook(ConstraintValue, _constraint_value)
    conv.register_structure_hook(InputValue, _input_value)
    # After the optional hooks: the strategy builds its members' hooks eagerly.
    configure_tagged_union(TypeNode, conv, tag_generator=_kind_of, tag_name="kind")
    return conv


_SCALARS = frozenset({str, int, bool, float, type(None)})
_RECORDS: dict[type, Callable[[Any], dict[str, Any]]] = {}


def _is_record(cls: Any) -> bool:
    import attrs

    return isinstance(cls, type) and attrs.has(cls)


def _layout(cls: type) -> tuple[tuple[str, ...], str | None]:
    """A record class's keys in sorted order (a type node's tag among them, which replaces
    a field of its name) and that tag: the one rule of a record's shape, for both writers
    (:func:`unstructure` and :func:`_text`)."""
    names = field_names(cls)  # attrs' fields, without importing attrs for a generated record
    if names is None:
        raise TypeError(f"not an IR value: {cls.__name__}")
    tag = _kind_of(cls) if cls in TYPE_NODE_CLASSES else None
    return tuple(sorted({*names, "kind"} if tag is not None else names)), tag


def _record_writer(cls: type) -> Callable[[Any], dict[str, Any]]:
    """The writer of one record class, built once: its field names, and a type node's tag
    (which replaces a field of its name)."""
    # the keys in sorted order, the tag's among them: the IR's encoder need not sort them
    # (see ``_IR_ENCODER``)
    keys, tag = _layout(cls)
    scalars = _SCALARS

    def write(value: Any) -> dict[str, Any]:
        out = {}
        for name in keys:
            if name == "kind" and tag is not None:  # the tag replaces a field of its name
                out[name] = tag
                continue
            item = getattr(value, name)
            out[name] = item if type(item) in scalars else unstructure(item)
        return out

    _RECORDS[cls] = write
    return write


def unstructure(value: Any) -> Any:
    """``value`` (an IR record, or a tuple, list or dict of them, or a JSON scalar) as plain
    JSON values."""
    cls = type(value)
    if cls in _SCALARS:
        return value
    if cls is tuple or cls is list:
        return [unstructure(item) for item in value]
    if cls is dict:
        return {key: unstructure(item) for key, item in sorted(value.items())}
    write = _RECORDS.get(cls)
    return (write or _record_writer(cls))(value)


def structure(data: Any, cls: type[T]) -> T:
    import cattrs

    try:
        return converter().structure(data, cls)  # type: ignore[no-any-return]
    except cattrs.BaseValidationError as exc:
        raise IRFormatError(cattrs.transform_error(exc)) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        # Unknown union tag or a non-object where an object belongs.
        raise IRFormatError([f"invalid value: {exc!r} @ $"]) from None


_BATCH = 4096  # records encoded per write: bounded lists whatever the module's size
# ``ENCODER`` without sorting, for what :func:`_text` leaves to it (floats, dicts), which
# :func:`unstructure` writes with their keys in sorted order already. The bytes are
# ``canonical_json``'s (``tests/ir/test_ir.py``).
_IR_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_TEXTS: dict[type, Callable[[Any], str]] = {}


def _text_writer(cls: type) -> Callable[[Any], str]:
    """The canonical JSON text of one record class's values, built once as a function of
    its own (generated, as attrs generates ``__init__``): each key's text (with its
    separator) a constant, each field read and written inline as :func:`_text` writes it
    (a string, an int and ``None`` without a call), the pieces joined by one f-string: one
    string built, where a ``+`` per piece would copy all the text before it. A loop over the
    fields cost a third of encoding the standard library's IRs."""
    keys, tag = _layout(cls)
    lines = ["def write(value):"]
    pieces = []  # an f-string's parts: its text, each field's expression
    for position, name in enumerate(keys):
        key = ("," if position else "{") + encode_basestring(name) + ":"
        if name == "kind" and tag is not None:  # the tag replaces a field of its name
            pieces.append(_literal(key + encode_basestring(tag)))
            continue
        lines.append(f"    x{position} = value.{name}")
        lines.append(f"    t{position} = type(x{position})")
        pieces.append(_literal(key))
        pieces.append(
            f"{{enc(x{position}) if t{position} is str else int_text(x{position}) "
            f'if t{position} is int else "null" if x{position} is None else text(x{position})}}'
        )
    pieces.append(_literal("}"))
    lines.append("    return f'''" + "".join(pieces) + "'''")
    namespace: dict[str, Any] = {
        "enc": encode_basestring,
        "int_text": int.__repr__,
        "text": _text,
    }
    exec(compile("\n".join(lines), f"<svcc text writer {cls.__name__}>", "exec"), namespace)
    write: Callable[[Any], str] = namespace["write"]
    _TEXTS[cls] = write
    return write


def _literal(text: str) -> str:
    """``text`` as the text of an f-string written in triple single quotes."""
    if "\\" in text or "'" in text:  # a key or tag is an identifier: never
        raise ValueError(f"cannot be an f-string's text: {text!r}")
    return text.replace("{", "{{").replace("}", "}}")


def _text(value: Any) -> str:
    """``_IR_ENCODER.encode(unstructure(value))``, written straight from the records: the
    plain values built only to be encoded were most of encoding an IR (0.7 s of the
    standard library's CPU time; 0.5 s written this way, byte for byte the same)."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is tuple or kind is list:  # an f-string: one string built (see _text_writer)
        return f"[{','.join([_text(item) for item in value])}]"
    write = _TEXTS.get(kind)
    if write is None and kind is not float and kind is not dict:
        write = _text_writer(kind)
    if write is not None:
        return write(value)
    return _IR_ENCODER.encode(unstructure(value))  # a float (its checks), a dict


def _encode_ir(ir: ModuleIR) -> Iterator[bytes]:
    """The canonical bytes of ``ir`` in pieces: each record of the IR's lists encoded on
    its own (batched), never the whole IR's text at once."""
    yield b"{"
    for position, name in enumerate(sorted(field_names(ModuleIR) or ())):
        value = getattr(ir, name)
        yield (b"," if position else b"") + ENCODER.encode(name).encode("utf-8") + b":"
        if not isinstance(value, tuple):
            yield json_utf8(_text(value))
            continue
        yield b"["
        for start in range(0, len(value), _BATCH):
            batch = value[start : start + _BATCH]
            yield (b"," if start else b"") + json_utf8(",".join([_text(item) for item in batch]))
        yield b"]"
    yield b"}\n"


def ir_to_json(ir: ModuleIR) -> bytes:
    """``canonical_json(unstructure(ir))``, byte for byte, built one record at a time (the
    whole unstructured IR costs about 1 KB per module-level statement), once per IR object:
    the analysis and the bundle of an unselected module share it."""
    import io

    from svcc.ir.index import module_index

    derived = module_index(ir).derived
    cached: bytes | None = derived.get(__name__)
    if cached is None:
        out = io.BytesIO()
        for piece in _encode_ir(ir):
            out.write(piece)
        cached = derived[__name__] = out.getvalue()
    return cached


def ir_from_json(data: bytes | str) -> ModuleIR:
    import json

    try:
        value = json.loads(data)
    except ValueError as exc:
        raise IRFormatError([f"not JSON: {exc}"]) from None
    if not isinstance(value, dict):
        raise IRFormatError(["expected a JSON object @ $"])
    from svcc.ir.verify import IRInvariantError, verify

    ir = structure(value, ModuleIR)
    try:
        return verify(ir)
    except IRInvariantError as exc:
        raise IRFormatError(exc.problems) from None


def ir_digest(ir: ModuleIR) -> str:
    """The digest of ``ir_to_json(ir)``; computed while encoding when the bytes have not been
    asked for, so a digest alone never holds the document."""
    from svcc.ir.index import module_index

    cached: bytes | None = module_index(ir).derived.get(__name__)
    if cached is not None:
        return digest_bytes(cached)
    # the size is known only once encoded: about a kilobyte of IR per line of source
    lines = ir.statements[-1].span.end_line if ir.statements else 0
    hasher = sha256(lines * 1024)
    for piece in _encode_ir(ir):
        hasher.update(piece)
    return "sha256:" + hasher.hexdigest()


__all__ = [
    "IRFormatError",
    "converter",
    "ir_digest",
    "ir_from_json",
    "ir_to_json",
    "structure",
    "unstructure",
]
