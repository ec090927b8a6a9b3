"""The wire between the server and a container worker (``svc.container-worker/v1``).

The worker prints nothing before it has read its request. Server → worker on stdin: one
frame, the pickled call (the server is trusted; values keep their Python types). Worker →
server on stdout: exactly one ``R`` frame (the result, already finite JSON) or ``E`` frame
(an error kind; details go to stderr, which the engine discards). The server never
unpickles what a container sends.
"""

import struct

WORKER_PROTOCOL = "svc.container-worker/v1"
PROTOCOL_LABEL = "io.svcc.worker-protocol"
HEADER = struct.Struct("!cQ")
REQUEST = b"A"
RESULT = b"R"
ERROR = b"E"

EXCEPTION = "exception"
NOT_JSON = "result-not-json"
TOO_LARGE = "result-too-large"
CHANGED = "bundle-changed"


def frame(kind: bytes, payload: bytes) -> bytes:
    return HEADER.pack(kind, len(payload)) + payload
