"""The one canonical encoding of svcc documents, and their ``sha256:`` digests.

Canonical means: UTF-8, keys sorted, compact separators, no NaN/Infinity, one
trailing newline. Every digest svcc prints or checks is over these bytes, so two
machines agree on a digest whatever their hash seed or dict order.
"""

import codecs
import json
from collections.abc import Callable
from typing import Any, Protocol


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


# The interpreter's own sha256 (``_sha2`` from Python 3.12, ``_sha256`` before) digests what a
# process hashes first: ``hashlib`` loads OpenSSL, about 2.5 ms of every start, more than the
# digests of a small file cost. The built-in one is about ten times slower, so past this many
# bytes (about what it hashes in the time OpenSSL takes to load) OpenSSL's is loaded and used:
# a directory's files, a large module. The digests are the same.
BUILTIN_BYTES = 1 << 18
_hashed = [0]


class Hasher(Protocol):
    def update(self, data: bytes, /) -> None: ...
    def hexdigest(self) -> str: ...


def _builtin_sha256() -> Callable[[], Hasher] | None:
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:  # an interpreter built without them
            return None
    return sha256  # type: ignore[no-any-return]


_BUILTIN = _builtin_sha256()


def sha256(size: int) -> Hasher:
    """A new sha256 object for ``size`` more bytes: the built-in one while this process has
    hashed at most ``BUILTIN_BYTES`` (these included), OpenSSL's after."""
    _hashed[0] += size
    if _BUILTIN is not None and _hashed[0] <= BUILTIN_BYTES:
        return _BUILTIN()
    import hashlib

    return hashlib.sha256()


def digest_bytes(data: bytes) -> str:
    hasher = sha256(len(data))
    hasher.update(data)
    return "sha256:" + hasher.hexdigest()
