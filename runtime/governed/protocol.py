"""The wire between the server and a worker: one socket per call, length-prefixed frames.

Server → worker: one frame, the pickled ``(capability, args, kwargs)`` (the server is
trusted; values keep their Python types, so a tuple parameter stays a tuple). Worker →
server: a ``P`` frame with its pid (so the deadline can kill its process group), then
exactly one ``R`` frame (the result, already encoded as finite JSON) or ``E`` frame (an
error kind; details go to the server log, never to the client).
"""

import struct

HEADER = struct.Struct("!cQ")
PID = b"P"
RESULT = b"R"
ERROR = b"E"

# Error kinds a worker reports (the client only ever sees a generic 500).
EXCEPTION = "exception"
NOT_JSON = "result-not-json"
TOO_LARGE = "result-too-large"
CHANGED = "bundle-changed"


def frame(kind: bytes, payload: bytes) -> bytes:
    return HEADER.pack(kind, len(payload)) + payload
