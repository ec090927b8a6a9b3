"""The one canonical encoding of svcc documents, and their ``sha256:`` digests.

Canonical means: UTF-8, keys sorted, compact separators, no NaN/Infinity, one
trailing newline. Every digest svcc prints or checks is over these bytes, so two
machines agree on a digest whatever their hash seed or dict order.
"""

import codecs
import hashlib
import json
from typing import Any


def _escape_surrogates(error: UnicodeError) -> tuple[str, int]:
    """A lone surrogate (legal in a Python string, not in UTF-8) written as its JSON
    escape: in JSON text it can only stand inside a string, where ``\\udXXX`` reads back
    as the same character."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    chunk = error.object[error.start : error.end]
    return "".join(f"\\u{ord(c):04x}" for c in chunk), error.end


JSON_ERRORS = "svcc-json-surrogates"
codecs.register_error(JSON_ERRORS, _escape_surrogates)


def json_utf8(text: str) -> bytes:
    """JSON text → UTF-8 bytes, a lone surrogate escaped (see ``_escape_surrogates``)."""
    return text.encode("utf-8", JSON_ERRORS)


ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
)


def canonical_json(value: Any) -> bytes:
    """Encode an unstructured (plain JSON) value canonically."""
    return json_utf8(ENCODER.encode(value) + "\n")


def digest_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
