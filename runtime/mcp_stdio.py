"""The MCP server's stdio transport: every request with an id gets an answer, in linear time.

The SDK's stdio transport decodes the stream with ``errors="replace"`` (an invalid UTF-8
byte became U+FFFD and the tool ran), reads lines through a text wrapper, and hands a line
it cannot validate to the session as an exception, which answers nothing: a request with an
id was left unanswered and the agent hung. This transport reads the raw bytes instead:

- a message is one line of at most ``max_bytes`` bytes (``SVC_MAX_BODY_BYTES``, as the REST
  server: ``validation.max_body_bytes``); a longer one is skipped to its end, counted but
  never held, and answered with an error. Lines are found by scanning each byte once: cost
  is linear. A pipe (what an agent starts a server with) is read and written in the event
  loop when it is ready, without a thread hand-off per message (the SDK's transport hands
  each line and each answer to a thread): that hand-off was most of a small call's time;
- a line is strict UTF-8 and strict JSON: no ``NaN``/``Infinity``, no number that overflows
  to infinity (``1e400``), no integer over Python's 4,300-digit conversion limit, no lone
  surrogate, at most :data:`MAX_DEPTH` levels of nesting;
- anything refused is a JSON-RPC error naming the reason, with the request's id (``null``
  when the line is not JSON and no id can be read from it, as JSON-RPC says; ``null`` too
  for a batch and for a request whose id is not a string or an integer, which the SDK read
  as a notification). Notifications and responses that are refused are logged, never
  answered;
- at the end of the request stream, the requests already handed to the session are answered
  before the stream closes (the session cancels what is in flight when it closes: a client
  that wrote a ``tools/call`` and closed its end got no answer), unless the client cancelled
  them (``notifications/cancelled``).
"""

import contextlib
import json
import logging
import os
import re
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio import to_thread
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from .json_text import loads_strict

MAX_DEPTH = 128
READ_BYTES = 1 << 20

log = logging.getLogger("svc.mcp")

# Where a client puts the id (``{"jsonrpc":"2.0","id":7,...}``): read from the start of a
# line that is not JSON, so that its sender still gets an answer it can match.
_ID = re.compile(rb'^\s*\{[^{}\[\]]{0,200}?"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")\s*[,}]')


class Refused(ValueError):
    """A message this transport does not pass to the session; the text says why."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def protect_request_stream() -> BinaryIO:
    """The request stream, on a private duplicate of fd 0; fd 0 itself now reads the null
    device, so nothing the user's code reads can take a message off the protocol."""
    private = os.dup(0)
    os.set_inheritable(private, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(private, "rb", buffering=0)


def _check_value(value: Any) -> None:
    """No lone surrogate in any string or key, and at most :data:`MAX_DEPTH` levels."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise Refused(
                    types.PARSE_ERROR, f"Parse error: nested more than {MAX_DEPTH} levels deep"
                )
            if isinstance(item, dict):
                for key, sub in item.items():
                    _check_text(key)
                    stack.append((sub, depth + 1))
            else:
                stack.extend((sub, depth + 1) for sub in item)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused(types.PARSE_ERROR, "Parse error: a string holds a lone surrogate") from None


def parse_line(line: bytes) -> Any:
    """The line as strict JSON (:class:`Refused` otherwise)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(
            types.PARSE_ERROR, f"Parse error: not valid UTF-8 (byte {exc.start})"
        ) from None
    try:
        value = loads_strict(text)  # the runtime's one rule of numbers (``json_text``)
    except RecursionError:
        raise Refused(
            types.PARSE_ERROR, f"Parse error: nested more than {MAX_DEPTH} levels deep"
        ) from None
    except ValueError as exc:  # NotStrictJson included
        raise Refused(types.PARSE_ERROR, f"Parse error: {exc}") from None
    _check_value(value)
    return value


def guess_id(line: bytes | bytearray) -> Any:
    """The id a line that is not JSON seems to carry, or ``None``."""
    found = _ID.match(bytes(line[:512]))
    if found is None:
        return None
    return json.loads(found.group(1))


def _id_of(value: Any) -> tuple[bool, Any]:
    """``(is a request, its id)`` for a parsed message."""
    if isinstance(value, dict) and "method" in value and "id" in value:
        ident = value["id"]
        if type(ident) in (int, str):
            return True, ident
        return True, None
    return False, None


def _not_a_request(value: Any) -> str | None:
    """Why ``value`` cannot be answered with its own id, for what would otherwise go
    unanswered: a batch (MCP has none; the SDK dropped it) and a request whose id is not a
    string or an integer (``null``, ``1.5``, ``true``, ``[1]``: the SDK read it as a
    notification, which nothing answers). Both are answered with id ``null``, as JSON-RPC
    says when the id cannot be read."""
    if isinstance(value, list):
        return "a batch (a JSON array) is not supported; send one request per line"
    if isinstance(value, dict) and "method" in value and type(value.get("id", 0)) not in (int, str):
        return "the id must be a string or an integer"
    return None


def to_message(line: bytes) -> tuple[SessionMessage | None, types.JSONRPCError | None]:
    """A line as the session's message, or the one-line error that answers it (``(None,
    None)``: a refused notification or response, which is logged only). The one rule of
    what is a message for both transports: ``mcp_http`` asks it of a body before the SDK's
    transport, whose own answers to these were none, or a multi-line validation error."""
    try:
        value = parse_line(line)
    except Refused as exc:
        return None, rpc_error(guess_id(line), exc.code, str(exc))
    refused = _not_a_request(value)
    if refused is not None:
        return None, rpc_error(None, types.INVALID_REQUEST, f"Invalid request: {refused}")
    is_request, ident = _id_of(value)
    try:
        message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValueError as exc:
        if not is_request:
            log.warning("mcp: dropped a message that is not valid JSON-RPC: %s", exc)
            return None, None
        return None, rpc_error(ident, types.INVALID_REQUEST, f"Invalid request: {_reason(exc)}")
    return SessionMessage(message), None


def _reason(exc: ValueError) -> str:
    """What is wrong with a request, on one line: its first error as a request (``params:
    Input should be a valid dictionary``). The union's own first line said only ``4
    validation errors for union[JSONRPCRequest,...]``, the same for any mistake."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    for error in errors:
        where = error["loc"]
        if where and where[0] == "JSONRPCRequest":
            field = ".".join(str(part) for part in where[1:])
            text = f"{field}: {error['msg']}" if field else str(error["msg"])
            return " ".join(text.split())  # a key may hold a line break
    return str(exc).splitlines()[0]


def rpc_error(ident: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message)
    )


class OverLimit:
    """A message over the size limit; ``head`` is its first bytes."""

    def __init__(self, head: bytes) -> None:
        self.head = head


class LineReader:
    """Lines of at most ``limit`` bytes from the chunks fed to it; each byte is scanned
    once. A longer line is consumed to its end and reported as :class:`OverLimit` (its
    first bytes kept, to find its id)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._buffer = bytearray()
        self._scanned = 0
        self._skipping: OverLimit | None = None

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk

    def line(self) -> bytes | OverLimit | None:
        """The next whole line (without its newline) or :class:`OverLimit`; ``None`` when
        more bytes are needed."""
        buffer = self._buffer
        end = buffer.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(buffer)
            if self._scanned > self._limit:
                if self._skipping is None:
                    self._skipping = OverLimit(bytes(buffer[:512]))
                buffer.clear()
                self._scanned = 0
            return None
        line = bytes(buffer[:end])
        del buffer[: end + 1]
        self._scanned = 0
        skipping, self._skipping = self._skipping, None
        if skipping is not None:
            return skipping
        if len(line) > self._limit:
            return OverLimit(line[:512])
        return line

    def rest(self) -> bytes | OverLimit | None:
        """At the end of the stream: the last line if it had no newline, or ``None``."""
        skipping, self._skipping = self._skipping, None
        if skipping is not None:
            return skipping
        if self._buffer.strip():
            line = bytes(self._buffer)
            self._buffer.clear()
            return line
        return None


Chunks = Callable[[], Awaitable[bytes]]
Write = Callable[[bytes], Awaitable[None]]


def _is_pipe(stream: BinaryIO) -> bool:
    """Whether ``stream`` is a pipe or a socket: what the event loop can wait on."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _chunks(stream: BinaryIO) -> Chunks:
    """The next bytes of the request stream (``b""`` at its end). A pipe is read in the
    event loop, when it is readable: a message costs no thread hand-off, which is most of
    a small call's time; anything else (a file, a terminal) in a pool thread."""
    if not _is_pipe(stream):

        async def in_thread() -> bytes:
            data: bytes | None = await to_thread.run_sync(
                stream.read, READ_BYTES, abandon_on_cancel=True
            )
            return data or b""

        return in_thread
    fd = stream.fileno()

    async def in_loop() -> bytes:
        while True:
            try:
                return os.read(fd, READ_BYTES)
            except BlockingIOError:
                await anyio.wait_readable(fd)

    return in_loop


def _writer(wire: BinaryIO) -> Write:
    """Writes one answer whole to the wire: in the event loop for a pipe (waiting while
    it is full, never blocking the loop), in a pool thread otherwise."""
    if not _is_pipe(wire):

        async def in_thread(data: bytes) -> None:
            await to_thread.run_sync(_write_line, wire, data)

        return in_thread
    wire.flush()
    fd = wire.fileno()

    async def in_loop(data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(fd)

    return in_loop


@asynccontextmanager
async def stdio_transport(
    requests: BinaryIO, wire: BinaryIO, max_bytes: int
) -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` for ``Server.run`` over the raw request stream and
    the wire, answering what it refuses itself."""
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    answers = write_stream.clone()
    reader = LineReader(max_bytes)
    in_flight = InFlight()
    read_chunk = _chunks(requests)
    write = _writer(wire)

    async def next_item() -> bytes | OverLimit | None:
        while True:
            item = reader.line()
            if item is not None:
                return item
            chunk = await read_chunk()
            if not chunk:
                return reader.rest()
            reader.feed(chunk)

    async def read_requests() -> None:
        async with read_writer, answers:
            while True:
                item = await next_item()
                if item is None:
                    await in_flight.drained()
                    return
                parsed = _parsed(item, max_bytes)
                if parsed is None:
                    continue
                message, error = parsed
                if error is not None:
                    log.warning("mcp: refused a message: %s", error.error.message)
                    await answers.send(SessionMessage(error))
                elif message is not None:
                    in_flight.received(message.message)
                    await read_writer.send(message)

    async def write_answers() -> None:
        async with write_reader:
            async for item in write_reader:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                await write(data.encode("utf-8") + b"\n")
                in_flight.answered(item.message)

    pipes = [s.fileno() for s in (requests, wire) if _is_pipe(s)]
    for fd in pipes:  # the loop waits on them: reads and writes must not block it
        os.set_blocking(fd, False)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(read_requests)
            group.start_soon(write_answers)
            yield read_stream, write_stream
            group.cancel_scope.cancel()
    finally:
        for fd in pipes:  # as they were: the descriptions may outlive this server
            with contextlib.suppress(OSError):
                os.set_blocking(fd, True)


def _parsed(
    item: bytes | OverLimit, max_bytes: int
) -> tuple[SessionMessage | None, types.JSONRPCError | None] | None:
    """A line read: its message or the error answering it; ``None`` for a blank line."""
    if isinstance(item, OverLimit):
        return None, rpc_error(
            guess_id(item.head),
            types.INVALID_REQUEST,
            f"Invalid request: the message is over {max_bytes} bytes",
        )
    if not item.strip():
        return None
    return to_message(item)


class InFlight:
    """The ids of the requests handed to the session and not answered yet, so that the end
    of the request stream waits for their answers."""

    def __init__(self) -> None:
        self._ids: set[Any] = set()
        self._ended = False
        self._drained = anyio.Event()

    def received(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._ids.add(message.id)
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and isinstance(message.params, dict)
        ):  # a cancelled request is not answered (MCP): nothing to wait for
            self._done(message.params.get("requestId"))

    def answered(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._done(message.id)

    def _done(self, ident: Any) -> None:
        self._ids.discard(ident)
        if self._ended and not self._ids:
            self._drained.set()

    async def drained(self) -> None:
        """Return once every request received has been answered (or cancelled)."""
        self._ended = True
        if self._ids:
            await self._drained.wait()


def _write_line(wire: BinaryIO, data: bytes) -> None:
    wire.write(data)
    wire.flush()


def exit_on_sigterm() -> None:
    """SIGTERM (and SIGINT) ends the server after its exit handlers ran (the default
    action would end it at once, skipping ``atexit``, and what the exit handlers clean up
    was left). The
    handlers run here, then the process ends: unwinding the event loop could wait forever
    on the thread blocked reading the request stream."""
    import atexit
    import signal

    def stop(signum: int, _frame: Any) -> None:
        atexit._run_exitfuncs()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)  # Ctrl-C: the same, for the same reason
