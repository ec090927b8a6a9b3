"""The one canonical encoding of svcc documents, and their ``sha256:`` digests.

Canonical means: UTF-8, keys sorted, compact separators, no NaN/Infinity, one
trailing newline. Every digest svcc prints or checks is over these bytes, so two
machines agree on a digest whatever their hash seed or dict order.
"""

import hashlib
import json
from typing import Any

ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
)


def canonical_json(value: Any) -> bytes:
    """Encode an unstructured (plain JSON) value canonically."""
    return (ENCODER.encode(value) + "\n").encode("utf-8")


def digest_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
