"""Large request bodies are validated first in a helper process, so the event loop keeps
answering while a hostile body is being refused.

pydantic-core holds the GIL while it parses and validates: a 15 MB body costs the whole
server about a second, whichever thread runs it. A body above :data:`OFFLOAD_BYTES` is
therefore checked first in one helper process (started on first use, with the same
validators built from the same schemas); an invalid body is answered from the helper's
bounded errors without the server ever parsing it, a valid one is then validated in the
server as every body is (its values are needed here). A helper that died (out of memory)
is started again on the next large body; meanwhile bodies are validated in the server.

The helper never outlives the server, however the server ends: it is a plain child on two
pipes (no ``multiprocessing``, so no resource-tracker process either), it exits when its
request pipe reaches end of file (the server closed it or died: SIGTERM, SIGKILL, a crash),
and on Linux the kernel also kills it when the server dies (``PR_SET_PDEATHSIG``), even in
the middle of a validation. The server closes it on shutdown (:meth:`Prevalidator.close`).
"""

import asyncio
import contextlib
import json
import os
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import IO, Any

from .lifetime import die_with_parent
from .validation import RequestInvalid, RequestValidator

OFFLOAD_BYTES = 256 * 1024

Schemas = Mapping[str, tuple[Mapping[str, Any], Mapping[str, Any]]]

# A request: the capability name's length and the body's length, then both. An answer: its
# length, then JSON (``null`` for a valid body, else ``[errors, more]``).
_REQUEST = struct.Struct("!IQ")
_ANSWER = struct.Struct("!Q")

# Run by ``python -c`` in the helper: the server's import path, then this module's loop.
_BOOT = (
    "import sys, json, importlib; sys.path[:0] = json.loads(sys.argv[1]); "
    "importlib.import_module(sys.argv[2]).helper_main()"
)


def _read_exact(stream: IO[bytes], size: int) -> bytes | None:
    data = stream.read(size)
    if len(data) != size:
        return None
    return data


def helper_main() -> None:
    """The helper's loop: schemas first, then one answer per request until end of file."""
    die_with_parent(int(os.environ.get("SVC_PREVALIDATE_PARENT", "0")) or os.getppid())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    header = _read_exact(requests, _ANSWER.size)
    if header is None:
        return
    raw = _read_exact(requests, _ANSWER.unpack(header)[0])
    if raw is None:
        return
    validators = {
        name: RequestValidator(schema, definitions)
        for name, (schema, definitions) in json.loads(raw).items()
    }
    while True:
        header = _read_exact(requests, _REQUEST.size)
        if header is None:
            return
        name_size, body_size = _REQUEST.unpack(header)
        name = _read_exact(requests, name_size)
        body = _read_exact(requests, body_size)
        if name is None or body is None:
            return
        try:
            validators[name.decode()].validate_json(body)
            found: Any = None
        except RequestInvalid as exc:
            found = [exc.errors, exc.more]
        del body
        answer = json.dumps(found, default=str).encode()
        answers.write(_ANSWER.pack(len(answer)) + answer)
        answers.flush()


class _Helper:
    """One running helper process and its two pipes; one request at a time."""

    def __init__(self, schemas: bytes) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, json.dumps(sys.path), __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "SVC_PREVALIDATE_PARENT": str(os.getpid())},
            close_fds=True,
        )
        self._lock = threading.Lock()
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._requests = self.process.stdin
        self._answers = self.process.stdout
        self._requests.write(_ANSWER.pack(len(schemas)) + schemas)
        self._requests.flush()

    def check(self, name: str, body: bytes) -> Any:
        """The helper's answer, or :class:`EOFError` when it died."""
        encoded = name.encode()
        with self._lock:
            try:
                self._requests.write(_REQUEST.pack(len(encoded), len(body)) + encoded)
                self._requests.write(body)
                self._requests.flush()
            except (BrokenPipeError, ValueError):
                raise EOFError("the helper has gone") from None
            header = _read_exact(self._answers, _ANSWER.size)
            size = None if header is None else _ANSWER.unpack(header)[0]
            answer = None if size is None else _read_exact(self._answers, size)
            if answer is None:
                raise EOFError("the helper has gone")
        return json.loads(answer)

    def close(self) -> None:
        """End of file on its request pipe ends it; it is killed if it does not go."""
        for stream in (self._requests, self._answers):
            with contextlib.suppress(OSError):
                stream.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Prevalidator:
    """The helper process, shared by every capability of one server."""

    def __init__(self, schemas: Schemas) -> None:
        self._schemas = json.dumps(
            {name: [schema, definitions] for name, (schema, definitions) in schemas.items()}
        ).encode()
        self._helper: _Helper | None = None

    async def check(self, name: str, body: bytes) -> None:
        """Raise :class:`RequestInvalid` if the helper finds ``body`` invalid."""
        if self._helper is None:
            self._helper = _Helper(self._schemas)
        helper = self._helper
        try:
            found = await asyncio.get_running_loop().run_in_executor(None, helper.check, name, body)
        except EOFError:
            if self._helper is helper:
                self._helper = None
            helper.close()
            return  # validated in the server instead
        if found is not None:
            raise RequestInvalid(found[0], found[1])

    def close(self) -> None:
        if self._helper is not None:
            helper, self._helper = self._helper, None
            helper.close()
