"""What a JSON value is here, in one place: finite numbers, integers of bounded size on the
way in and of any size on the way out, and strict JSON text of a plain value.

- NaN, ``Infinity`` and a literal that overflows to infinity (``1e400``) are not JSON: every
  parser of the runtime refuses them (:func:`loads_strict`, :func:`check_strict`), and
  every check of a decoded value finds them (:func:`first_non_finite`, :func:`plain_json`).
- Python refuses to turn text of more than :data:`MAX_INT_DIGITS` digits into an integer,
  or back (a guard against quadratic conversions of hostile input). Inputs are bounded by
  it (:func:`loads_strict` refuses such a literal, as the request validators do); results
  are the function's own, so they are encoded whatever their size (:func:`dumps`), and
  read back without that limit (:func:`loads_int`, :func:`check_strict`).

Standard library only at import (``pydantic_core`` is imported only to write an integer
over the limit), so it also runs where nothing else is installed.
"""

import json
import math
from typing import Any

MAX_INT_DIGITS = 4300  # Python's default int/str conversion limit
MAX_DEPTH = 200  # of a plain value checked by :func:`plain_json`
_LIMIT_BITS = 14_000  # under 4,300 decimal digits (4,300 * log2(10) is about 14,284)
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class NotStrictJson(ValueError):
    """Text that is not strict JSON here; the message says why, in a few words."""


def is_int_limit(exc: BaseException) -> bool:
    """Whether ``exc`` is Python's refusal to convert an integer over the digit limit."""
    return isinstance(exc, ValueError) and "integer string conversion" in str(exc)


def first_non_finite(value: Any) -> float | None:
    """The first NaN or infinity in a decoded value (dicts, lists, tuples), or ``None``."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


def plain_json(value: Any, depth: int = 0) -> bool:
    """Exactly JSON: dicts with str keys, lists, str, int, finite float, bool, None (types
    exact: no subclass, tuple or set), at most :data:`MAX_DEPTH` levels deep."""
    if depth > MAX_DEPTH:
        return False
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(plain_json(item, depth + 1) for item in value)
    if kind is dict:
        return all(type(k) is str and plain_json(v, depth + 1) for k, v in value.items())
    return False


# -- parsing -------------------------------------------------------------------------------


def _no_constant(name: str) -> Any:
    raise NotStrictJson(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotStrictJson(f"the number {text[:40]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise NotStrictJson(f"an integer has more than {MAX_INT_DIGITS} digits")
    return int(text)


def _unconverted_int(_text: str) -> int:
    return 0  # checked, never used: no conversion, whatever its size


def loads_strict(text: str) -> Any:
    """What a client sent, decoded: :class:`NotStrictJson` for NaN/Infinity, a number that
    overflows, or an integer over :data:`MAX_INT_DIGITS` digits (``ValueError`` for text
    that is not JSON at all, ``RecursionError`` for nesting the decoder cannot take)."""
    return json.loads(
        text, parse_constant=_no_constant, parse_int=_bounded_int, parse_float=_finite_float
    )


def check_strict(data: bytes) -> bool:
    """Whether ``data`` is strict, finite JSON in UTF-8, integers of any size allowed (a
    result: checked without converting its integers)."""
    try:
        json.loads(
            data.decode("utf-8"),
            parse_constant=_no_constant,
            parse_int=_unconverted_int,
            parse_float=_finite_float,
        )
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return True


def loads_int(text: str) -> int:
    """``parse_int`` for :func:`json.loads` of trusted text holding big integers (a
    result already encoded or checked as strict JSON, bounded by an output limit)."""
    if len(text) <= MAX_INT_DIGITS:
        return int(text)
    import decimal

    return int(decimal.Decimal(text))


# -- writing -------------------------------------------------------------------------------


def dumps(value: Any) -> str:
    """``value`` (dicts with str keys, lists, tuples, str, int, float, bool, None) as
    compact JSON text, integers of any size; ``TypeError`` for anything else,
    ``ValueError`` for NaN/infinity."""
    try:
        return _ENCODER.encode(value)
    except ValueError as exc:
        if not is_int_limit(exc):
            raise
    bad = first_non_finite(value)
    if bad is not None:
        raise ValueError(f"Out of range float values are not JSON compliant: {bad!r}")
    from pydantic_core import to_json

    return to_json(value).decode("utf-8")


def small_ints(value: Any) -> Any:
    """``value`` with every integer over the conversion limit replaced by 1 (same type, same
    place): what a result is checked against its schema with, since the JSON validator
    refuses such literals (``number out of range``) though they are valid integers."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return 1 if value.bit_length() > _LIMIT_BITS else value
    if isinstance(value, dict):
        return {key: small_ints(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [small_ints(item) for item in value]
    return value
