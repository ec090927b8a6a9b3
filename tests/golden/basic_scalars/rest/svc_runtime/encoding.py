"""Encoding a function's result as the response body, once.

Plain JSON values go straight through the C encoder; anything else (tuples inside
dicts are fine, but sets, bytes, dataclasses, datetimes, pydantic models...) takes
FastAPI's ``jsonable_encoder`` first, as a hand-written FastAPI endpoint would. NaN and
infinities are not JSON: they raise ``ValueError`` and the caller answers 500.
"""

import json
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def encode_result(value: Any) -> bytes:
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except TypeError:
        from fastapi.encoders import jsonable_encoder

        return _ENCODER.encode(jsonable_encoder(value)).encode("utf-8")
