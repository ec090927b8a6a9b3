"""The wire between a governed server and its workers: one implementation for both governed
backends (local process, OCI container) and the container worker.

Frames are a kind byte and a length (``HEADER``) then the payload. The server sends one
request frame (the pickled call: the server is trusted, so values keep their Python types);
a worker answers with exactly one ``R`` frame (the result, already strict finite JSON) or
``E`` frame (an error kind below; details go to the worker's stderr, never to the client);
a stream's worker answers with its items, one ``I`` frame each, then ``D`` or ``E``.
The server never unpickles what a worker sends, and checks a result again
(:func:`is_strict_json`, ``json_text.check_strict``): a worker runs the user's code, so
what it sends is not trusted.

Standard library only, and of the runtime only ``json_text`` (the rules of strict JSON):
the runtime image copies both next to the container worker (``svc_runtime/wire.py``,
``svc_runtime/json_text.py``).
"""

from __future__ import annotations

import json
import struct

from .json_text import check_strict, is_int_limit, plain_json

TYPE_CHECKING = False
if TYPE_CHECKING:  # not at run time: the container worker starts for every call
    from collections.abc import Callable
    from typing import Any

HEADER = struct.Struct("!cQ")
REQUEST = b"A"
RESULT = b"R"
ERROR = b"E"
# A stream (a generator capability): ``I`` frames, one item each (strict finite JSON, each
# at most the output limit), then ``D`` (empty: the generator ended) or ``E``.
ITEM = b"I"
DONE = b"D"

# Error kinds a worker reports (the client only ever sees a generic 500).
EXCEPTION = "exception"
NOT_JSON = "result-not-json"
TOO_LARGE = "result-too-large"
CHANGED = "bundle-changed"

# The container worker's protocol, named by a label of the runtime image.
WORKER_PROTOCOL = "svc.container-worker/v1"
PROTOCOL_LABEL = "io.svcc.worker-protocol"


class CallError(Exception):
    """A governed call that gave no result; the message is for the server log only.

    What happened is said by the class, never read from the message: ``status`` is the
    HTTP status that answers it (REST; over MCP, the status the call is counted with),
    ``started`` whether a worker ran for it, ``killed`` why its worker was stopped
    (:data:`KILLED_TIMEOUT`, :data:`KILLED_LIMIT`) or ``None``. Each executor's
    exceptions subclass it."""

    status = 500
    started = True
    killed: str | None = None


KILLED_TIMEOUT = "timeout"  # the policy's wall-time deadline
KILLED_LIMIT = "limit"  # another limit: the output size, a container's memory


class ResultError(Exception):
    """A result the wire refuses: ``kind`` is one of the error kinds, the message a detail."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


def frame(kind: bytes, payload: bytes) -> bytes:
    return HEADER.pack(kind, len(payload)) + payload


def read_exact(read: Callable[[int], bytes], size: int) -> bytes:
    """``size`` bytes from ``read`` (a socket's ``recv`` or a stream's ``read``)."""
    chunks = []
    while size:
        chunk = read(min(size, 1 << 20))
        if not chunk:
            raise EOFError("the stream ended inside a frame")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def encode_result(value: Any, max_output: int) -> bytes:
    """The ``R`` payload of a function's result, or :class:`ResultError`."""
    if not plain_json(value):
        raise ResultError(
            NOT_JSON,
            f"result of type {type(value).__name__} is not finite JSON (governed mode serves "
            "results that are already plain JSON: numpy, pandas, dates, objects are encoded "
            "in direct mode only; convert them in the function)",
        )
    try:
        data = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:  # an int over 4,300 digits: the worker's own result, encoded
        if not is_int_limit(exc):
            raise ResultError(NOT_JSON, str(exc)) from None
        import sys

        sys.set_int_max_str_digits(0)  # this one-call worker process only
        data = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    encoded = data.encode("utf-8")
    if len(encoded) > max_output:
        raise ResultError(TOO_LARGE, f"result of {len(encoded)} bytes is over the output limit")
    return encoded


def is_strict_json(data: bytes) -> bool:
    """Whether a worker's ``R`` payload is strict, finite JSON (checked by the server, by
    the one rule of ``json_text``)."""
    return check_strict(data)
