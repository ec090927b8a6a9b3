"""The one converter between IR objects and plain JSON values.

Strict by construction: unknown keys are refused, type nodes are a tagged union on
``kind``, and a structuring failure is reported with JSON paths
(``... @ $.capabilities[0].params[1].type``) through ``cattrs.transform_error``.
"""

from functools import cache
from typing import Any, TypeVar

from svcc.ir.canonical import canonical_json, digest_bytes
from svcc.ir.model import ModuleIR
from svcc.ir.types import LiteralValue, TypeNode, resolve_forward_references

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
    # ``TypeNode | None`` (an optional node, e.g. ``TupleType.variadic``) is a union of its
    # own to cattrs: route both directions through the tagged union so the tag is kept.
    conv.register_unstructure_hook(
        TypeNode | None,
        lambda value: None if value is None else conv.unstructure(value, unstructure_as=TypeNode),
    )
    conv.register_structure_hook(
        TypeNode | None,
        lambda value, _: None if value is None else conv.structure(value, TypeNode),  # type: ignore[arg-type]  # a union, not a class
    )
    conv.register_structure_hook(LiteralValue, _literal_value)
    # After the optional hooks: the strategy builds its members' hooks eagerly.
    configure_tagged_union(TypeNode, conv, tag_generator=_kind_of, tag_name="kind")
    return conv


def unstructure(value: Any) -> Any:
    return converter().unstructure(value)


def structure(data: Any, cls: type[T]) -> T:
    import cattrs

    try:
        return converter().structure(data, cls)  # type: ignore[no-any-return]
    except cattrs.BaseValidationError as exc:
        raise IRFormatError(cattrs.transform_error(exc)) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        # Unknown union tag or a non-object where an object belongs.
        raise IRFormatError([f"invalid value: {exc!r} @ $"]) from None


def ir_to_json(ir: ModuleIR) -> bytes:
    return canonical_json(unstructure(ir))


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
    return digest_bytes(ir_to_json(ir))


__all__ = [
    "IRFormatError",
    "converter",
    "ir_digest",
    "ir_from_json",
    "ir_to_json",
    "structure",
    "unstructure",
]
