"""The container worker (``svc.container-worker/v1``): one call, then exit.

Runs inside the runtime image as uid 65532 with a read-only root, no network and the
bundle's ``source/`` mounted read-only at ``/opt/svc/source``. It prints nothing before it
has read its request (a pre-started container waits here on stdin), keeps the reply
channel (the original stdout) to itself and sends the user's prints to stderr, checks the
source digest it was sent, runs the module fresh, calls the function and writes one framed
reply. Self-contained on purpose: it imports only the standard library.
"""

import asyncio
import hashlib
import json
import math
import os
import pickle
import struct
import sys
import traceback
from typing import Any

HEADER = struct.Struct("!cQ")
SOURCE_ROOT = "/opt/svc"


def _finite_json(value: Any, depth: int = 0) -> bool:
    if depth > 200:
        return False
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_finite_json(item, depth + 1) for item in value)
    if kind is dict:
        return all(type(k) is str and _finite_json(v, depth + 1) for k, v in value.items())
    return False


def _read_exact(stream: Any, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            raise EOFError("stdin closed before the request was complete")
        data += chunk
    return data


def _run(request: dict[str, Any]) -> tuple[bytes, bytes]:
    import importlib.util

    name = request["name"]
    path = os.path.join(SOURCE_ROOT, request["source_path"])
    with open(path, "rb") as handle:
        data = handle.read()
    if "sha256:" + hashlib.sha256(data).hexdigest() != request["source_digest"]:
        sys.stderr.write(f"svc-worker: {name}: the source changed since startup\n")
        return b"E", b"bundle-changed"
    sys.path.insert(0, os.path.join(SOURCE_ROOT, "source"))
    module_name = request["module"]
    try:
        parent = module_name.rpartition(".")[0]
        if parent:
            importlib.import_module(parent)
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        exec(compile(data, path, "exec", dont_inherit=True), module.__dict__)
        function = getattr(module, name)
        if request["is_async"]:
            result = asyncio.run(function(*request["args"], **request["kwargs"]))
        else:
            result = function(*request["args"], **request["kwargs"])
    except BaseException:  # the user's code failed, whatever it raised: sanitised
        sys.stderr.write(f"svc-worker: {name}: the call raised\n{traceback.format_exc()}")
        return b"E", b"exception"
    if not _finite_json(result):
        return b"E", b"result-not-json"
    payload = json.dumps(result, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    encoded = payload.encode("utf-8")
    if len(encoded) > request["max_output"]:
        return b"E", b"result-too-large"
    return b"R", encoded


def main() -> None:
    import importlib  # noqa: F401  (used by _run; imported before user code can shadow it)

    reply = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # the user's prints go to stderr, never into the reply channel
    sys.stdout = sys.stderr
    stdin = sys.stdin.buffer
    kind, size = HEADER.unpack(_read_exact(stdin, HEADER.size))
    if kind != b"A":
        raise SystemExit(2)
    request = pickle.loads(_read_exact(stdin, size))
    out_kind, payload = _run(request)
    reply.write(HEADER.pack(out_kind, len(payload)) + payload)
    reply.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
