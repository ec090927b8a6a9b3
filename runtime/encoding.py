"""Encoding a function's result as the response body, once.

Plain JSON values go straight through the C encoder; anything else (tuples inside
dicts are fine, but sets, bytes, dataclasses, datetimes, pydantic models...) takes
FastAPI's ``jsonable_encoder`` first, as a hand-written FastAPI endpoint would. NaN and
infinities are not JSON: they raise ``ValueError`` and the caller answers 500. Integers
over 4,300 digits are encoded (``json_text``).
"""

from typing import Any

from .json_text import dumps


def encode_result(value: Any) -> bytes:
    try:
        return dumps(value).encode("utf-8")
    except TypeError:
        from fastapi.encoders import jsonable_encoder

        return dumps(jsonable_encoder(value)).encode("utf-8")
