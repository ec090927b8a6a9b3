"""``POST /capabilities/<name>`` of a stream: JSON Lines or Server-Sent Events (DESIGN §14).

The request is read and validated exactly as a call's (``rest.CapabilityEndpoint``: a 422 is
a plain 422, before anything is streamed); then the answer is ``200`` with one item per
line (``application/jsonl``, the default) or one ``event: item`` per item
(``text/event-stream``, when ``Accept`` prefers it), and always one final record:
``{"done": true, "items": N}`` or ``{"error": {"status": S, "detail": ...}, "items": N}``
(SSE ``event: done`` / ``event: error``). A client that leaves closes the generator. The
outcome's status is left in the request's scope (``svc.outcome``) for the network layer,
which counts and logs the stream once, at its end.
"""

import asyncio
import contextlib
from contextvars import ContextVar
from typing import Any, Final

from .bodies import BodyReader
from .calls import CallShape
from .prevalidate import Prevalidator
from .rest_endpoint import (
    INTERNAL_ERROR,
    CapabilityEndpoint,
    Message,
    Receive,
    Scope,
    Send,
    log,
    respond,
)
from .streaming import Open, StreamError, StreamLimits, final_record, items_of
from .validation import RequestValidator

JSONL: Final = b"application/jsonl"
EVENT_STREAM: Final = b"text/event-stream"
OUTCOME_KEY: Final = "svc.outcome"
# Seconds a stream's head waits for its first item before it is written alone.
HEAD_WAIT: Final = 0.05

# The request being answered, for ``_call`` (whose signature the endpoints share).
_REQUEST: ContextVar[Scope] = ContextVar("svc_stream_request")


def media_type(scope: Scope) -> bytes:
    """``text/event-stream`` when ``Accept`` ranks it above JSON Lines, else JSON Lines."""
    accept = b""
    for name, value in scope["headers"]:
        if name == b"accept":
            accept += value + b","
    best, best_q = JSONL, -1.0
    for part in accept.split(b","):
        media, _, params = part.strip().partition(b";")
        media = media.strip().lower()
        if media not in (JSONL, EVENT_STREAM):
            continue
        q = 1.0
        for param in params.split(b";"):
            key, _, value = param.strip().partition(b"=")
            if key.strip().lower() == b"q":
                with contextlib.suppress(ValueError):
                    q = float(value)
        if q > best_q or (q == best_q and media == JSONL):
            best, best_q = media, q
    return best if best_q != 0 else JSONL


def frame(media: bytes, batch: list[bytes]) -> bytes:
    """Items as the wire carries them."""
    if media == JSONL:
        return b"\n".join(batch) + b"\n"
    return b"".join(b"event: item\ndata: " + data + b"\n\n" for data in batch)


def end_frame(media: bytes, items: int, error: StreamError | None) -> bytes:
    record = final_record(items, error)
    if media == JSONL:
        return record + b"\n"
    return b"event: " + (b"done" if error is None else b"error") + b"\ndata: " + record + b"\n\n"


class StreamEndpoint(CapabilityEndpoint):
    """A stream capability's endpoint: the call's validation, then the stream."""

    __slots__ = ("_limits", "_open")

    def __init__(
        self,
        open_stream: Open,
        shape: CallShape,
        validator: RequestValidator,
        bodies: BodyReader,
        prevalidator: Prevalidator | None = None,
        *,
        limits: StreamLimits,
    ) -> None:
        super().__init__(_never, shape, validator, bodies, prevalidator)
        self._open = open_stream
        self._limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = _REQUEST.set(scope)
        try:
            await super().__call__(scope, receive, send)
        finally:
            _REQUEST.reset(token)

    async def _call(
        self, receive: Receive, send: Send, args: list[Any], kwargs: dict[str, Any]
    ) -> None:
        """The stream, written in this task; a client that leaves cancels it (:class:`_Watch`),
        which closes the generator."""
        scope = _REQUEST.get()
        watch = _Watch(receive)
        try:
            await self._write(scope, media_type(scope), send, args, kwargs, watch=watch)
        except asyncio.CancelledError:
            if not watch.left:
                raise  # the server's own cancellation (shutdown)
            watch.uncancel()
            if OUTCOME_KEY not in scope:  # else the end was said: the client just left
                log.warning("capability %s: the client left; stream closed", self._shape.name)
                scope[OUTCOME_KEY] = 499  # the client closed the request
        finally:
            watch.stop()

    async def _write(
        self,
        scope: Scope,
        media: bytes,
        send: Send,
        args: list[Any],
        kwargs: dict[str, Any],
        *,
        watch: "_Watch",
    ) -> None:
        try:
            source = await self._open(args, kwargs)
        except Exception as exc:  # nothing was started: a plain answer, as a call's
            await self._unopened(send, exc)
            return
        head = _Head(send, media, watch)
        items = 0
        error: StreamError | None = None
        async with contextlib.aclosing(items_of(source, self._limits, self._failed)) as batches:
            try:
                async for batch in batches:
                    if not isinstance(batch, list):
                        error = batch
                        break
                    items += len(batch)
                    await head.write(frame(media, batch), more=True)
                # the end is said before the generator is closed (a sync one may be mid-item)
                scope[OUTCOME_KEY] = 200 if error is None else error.status
                if error is not None:
                    log.error("capability %s: stream ended: %s", self._shape.name, error)
                await head.write(end_frame(media, items, error), more=False)
            finally:
                head.cancel()

    async def _unopened(self, send: Send, exc: Exception) -> None:
        """The answer when the stream could not be opened (no response started yet)."""
        log.error("capability %s: the stream could not start: %s", self._shape.name, exc)
        await respond(send, 500, INTERNAL_ERROR)

    def _failed(self, exc: BaseException) -> None:
        log.error("capability %s failed while streaming", self._shape.name, exc_info=exc)


class _Watch:
    """Whether the client left: a task reading ``receive`` that cancels the stream's task
    when the client disconnects. It starts with the response head (:class:`_Head`: with the
    first item, or alone after :data:`HEAD_WAIT`), not before, so a quick first item costs
    no task and no pass of the loop more than a call's answer; a client that leaves earlier
    is noticed when the head is written, at most :data:`HEAD_WAIT` after the request."""

    __slots__ = ("_over", "_receive", "_task", "_watcher", "left")

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._watcher: asyncio.Future[None] | None = None
        self._over = False
        self.left = False

    def start(self) -> None:
        if self._watcher is None:
            self._watcher = asyncio.ensure_future(_disconnected(self._receive))
            self._watcher.add_done_callback(self._leave)

    def _leave(self, watcher: "asyncio.Future[None]") -> None:
        if self._over or watcher.cancelled() or watcher.exception() is not None:
            return
        self.left = True
        self._task.cancel()

    def uncancel(self) -> None:
        self._task.uncancel()

    def stop(self) -> None:
        self._over = True
        if self._watcher is not None:
            self._watcher.cancel()


class _Head:
    """A stream's response head: written with the first item (or the final record), so a
    client reads both at once and the first item costs no more than a call's answer; a
    generator slow to its first item (over :data:`HEAD_WAIT`) gets its head written
    first, so the client and any proxy see the response started. The client is watched
    (:class:`_Watch`) from then on, or from the first body on."""

    __slots__ = ("_message", "_send", "_task", "_timer", "_watch")

    def __init__(self, send: Send, media: bytes, watch: _Watch) -> None:
        self._send = send
        self._watch = watch
        headers = [(b"content-type", media), (b"cache-control", b"no-cache")]
        headers.append((b"x-accel-buffering", b"no"))
        self._message: Message | None = {
            "type": "http.response.start",
            "status": 200,
            "headers": headers,
        }
        self._task: asyncio.Future[None] | None = None
        self._timer = asyncio.get_running_loop().call_later(HEAD_WAIT, self._early)

    def _early(self) -> None:
        message, self._message = self._message, None
        if message is not None:
            self._task = asyncio.ensure_future(self._send(message))
            self._watch.start()

    async def write(self, body: bytes, *, more: bool) -> None:
        """``body``, after the head if it is not written yet."""
        message: Message = {"type": "http.response.body", "body": body, "more_body": more}
        head, self._message = self._message, None
        if head is not None:
            self._timer.cancel()
            await self._send(head)
        elif self._task is not None:  # written early: once that is done
            task, self._task = self._task, None
            await task
        else:
            await self._send(message)
            return
        await self._send(message)
        self._watch.start()

    def cancel(self) -> None:
        self._timer.cancel()


async def _never(_args: list[Any], _kwargs: dict[str, Any]) -> bytes:
    raise AssertionError("a stream is opened, never invoked")


async def _disconnected(receive: Receive) -> None:
    """Returns when the client has gone (the body was already read in full)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
