"""Strict JSON text of a plain value, integers of any size included.

Python refuses to turn an integer of more than 4,300 digits into text (a guard against
quadratic conversions of hostile input), so ``json.dumps(10**5000)`` raises and a function
that validly returns such an integer was a 500. Inputs never reach that size (the request
parsers refuse such literals); results are the function's own, so they are encoded: the C
encoder first, and on that one error pydantic-core's serializer, which writes big integers
itself. NaN and infinities stay refused (``ValueError``): they are not JSON.
"""

import json
import math
from typing import Any

from pydantic_core import to_json

_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_INT_LIMIT = "integer string conversion"


def dumps(value: Any) -> str:
    """``value`` (dicts with str keys, lists, tuples, str, int, float, bool, None) as
    compact JSON text; ``TypeError`` for anything else, ``ValueError`` for NaN/infinity."""
    try:
        return _ENCODER.encode(value)
    except ValueError as exc:
        if _INT_LIMIT not in str(exc):
            raise
    _check_finite(value)
    return to_json(value).decode("utf-8")


def _check_finite(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"Out of range float values are not JSON compliant: {item!r}")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def loads_int(text: str) -> int:
    """``parse_int`` for :func:`json.loads` of trusted text holding big integers (a
    result already checked as strict JSON, bounded by an output limit)."""
    if len(text) <= 4300:
        return int(text)
    import decimal

    return int(decimal.Decimal(text))


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


_LIMIT_BITS = 14_000  # under 4,300 decimal digits (4,300 * log2(10) is about 14,284)
