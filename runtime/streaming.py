"""Streams: a generator capability's items, encoded one by one, and how the stream ended.

Every served stream (REST in both media types, MCP's collected list) reads its items from an
:class:`ItemSource` and ends with one outcome: :data:`DONE`, or a :class:`StreamError`
holding the status and detail a non-streaming call would have answered (DESIGN §14). The
limits (``SVC_STREAM_MAX_ITEMS``, ``SVC_STREAM_MAX_BYTES``, ``SVC_STREAM_IDLE_SECONDS``)
end a stream with such an error too, so a client always tells a short answer from a broken
one.

A sync generator runs in one thread for its whole life (never on the event loop; it takes
a thread of the pool sync calls run on, ``threads``, so calls and streams run 40 threads at
most together), handing items over through a bounded buffer: a slow reader makes the
generator wait, never the server buffer without bound.
Closing a source closes the generator where it runs (``close()`` in its thread,
``aclose()`` on the loop), so its ``finally`` blocks run; a sync generator busy inside
``next()`` is closed when that item returns, since a thread cannot be interrupted.
"""

import asyncio
import threading
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from typing import Any, Final

from .encoding import encode_result
from .settings import positive
from .threads import Started, start

MAX_ITEMS_ENV: Final = "SVC_STREAM_MAX_ITEMS"
MAX_BYTES_ENV: Final = "SVC_STREAM_MAX_BYTES"
IDLE_ENV: Final = "SVC_STREAM_IDLE_SECONDS"
DEFAULT_MAX_ITEMS: Final = 100_000
DEFAULT_MAX_BYTES: Final = 64 * 1024 * 1024
DEFAULT_IDLE: Final = 60.0
# What a sync generator may run ahead of its reader (items, encoded bytes).
BUFFER_ITEMS: Final = 256
BUFFER_BYTES: Final = 1024 * 1024


class StreamLimits:
    """The bounds of one stream: items, encoded bytes, seconds waited for the next item."""

    __slots__ = ("idle", "max_bytes", "max_items")

    def __init__(self, max_items: int, max_bytes: int, idle: float) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.idle = idle


def stream_limits() -> StreamLimits:
    """The limits from the environment (a bad value refuses startup: :class:`StartupError`)."""
    return StreamLimits(
        positive(MAX_ITEMS_ENV, DEFAULT_MAX_ITEMS, int),
        positive(MAX_BYTES_ENV, DEFAULT_MAX_BYTES, int),
        positive(IDLE_ENV, DEFAULT_IDLE, float),
    )


class StreamError(Exception):
    """How a stream ended early: the status and detail of its final record."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail


INTERNAL: Final = "Internal Server Error"


def final_record(items: int, error: StreamError | None) -> bytes:
    """The last record of a stream (DESIGN §14)."""
    if error is None:
        return b'{"done":true,"items":%d}' % items
    return encode_result(
        {"error": {"status": error.status, "detail": error.detail}, "items": items}
    )


Encode = Callable[[Any], bytes]


def item_encoder(walk: bool) -> Encode:
    """One item as JSON bytes; an item with no JSON form ends the stream as a result with
    none ends a call (500)."""

    def encode(item: Any) -> bytes:
        return encode_result(item, walk)

    return encode


class ItemSource:
    """Encoded items in batches (``None``: the generator is exhausted); ``close`` ends it."""

    async def batch(self, idle: float) -> list[bytes] | None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


def over(limit: str, setting: str) -> StreamError:
    """The record of a stream longer than its limit: a 500, as a result too large to answer."""
    return StreamError(500, f"{INTERNAL}: the stream passed {limit} ({setting})")


def idle_error(idle: float) -> StreamError:
    return StreamError(504, f"Gateway Timeout: no item within {idle:g} s ({IDLE_ENV})")


class AsyncItems(ItemSource):
    """An async generator's items, each awaited on the loop."""

    def __init__(self, agen: Any, encode: Encode) -> None:
        self._agen = agen
        self._encode = encode

    async def batch(self, idle: float) -> list[bytes] | None:
        try:
            async with asyncio.timeout(idle):
                item = await self._agen.__anext__()
        except StopAsyncIteration:
            return None
        except TimeoutError:
            raise idle_error(idle) from None
        return [self._encode(item)]

    async def close(self) -> None:
        await self._agen.aclose()


class ThreadedItems(ItemSource):
    """A sync generator run in one thread for its whole life (a generator may hold what
    only its own thread may use, as a ``sqlite3`` cursor), its items handed over in
    batches through a buffer of at most :data:`BUFFER_ITEMS` items and :data:`BUFFER_BYTES`
    bytes.

    The first item is the stream's time to its first byte, so it costs what a call's
    result costs: the generator is handed to a thread of the calls' pool at once
    (``threads.start``: one hop, no task, no token of another limiter; over the pool's
    limit it waits for a thread in order of arrival, as a call does), the reader waits on
    a future the producer resolves from its thread (one wake-up of the loop), and after
    that item the producer waits until the reader asks again, so the loop sends it while
    the generator holds no GIL against it. Later items go in batches of what came
    meanwhile. A thread only wakes when what it waits for changed (a woken thread takes
    the GIL)."""

    __slots__ = (
        "_asked",
        "_buffer",
        "_bytes",
        "_encode",
        "_ended",
        "_failure",
        "_finished",
        "_full",
        "_gen",
        "_lock",
        "_loop",
        "_stop",
        "_taken",
        "_thread",
        "_waiter",
    )

    def __init__(self, gen: Generator[Any, None, Any], encode: Encode) -> None:
        self._gen = gen
        self._encode = encode
        self._lock = threading.Condition()
        self._buffer: deque[bytes] = deque()
        self._bytes = 0
        self._stop = False
        self._taken = False  # the reader took the first item
        self._asked = False  # ... and asks for more
        self._finished = False
        self._full = False  # the producer waits for room in the buffer
        self._failure: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._ended: asyncio.Future[None] | None = None  # close() waits for the thread's end
        self._loop = asyncio.get_running_loop()
        self._thread: Started = start(self._produce)

    def _wake(self) -> None:
        """Under the lock, from the producer's thread: let a waiting reader in."""
        waiter, self._waiter = self._waiter, None
        if waiter is not None:
            self._loop.call_soon_threadsafe(_resolve, waiter)

    def _asked_for_more(self) -> bool:
        """Under the lock: waits until the reader asks for more items or the stream is
        closed; whether to go on."""
        self._lock.wait_for(lambda: self._stop or self._asked)
        return not self._stop

    def _produce(self) -> None:
        gen, encode, lock = self._gen, self._encode, self._lock
        failure: BaseException | None = None
        first = True
        try:
            closed = self._stop  # closed while it waited for a thread: it never runs
            for item in () if closed else gen:
                data = encode(item)
                with lock:
                    while not self._stop and (
                        len(self._buffer) >= BUFFER_ITEMS or self._bytes >= BUFFER_BYTES
                    ):
                        self._full = True
                        lock.wait()
                    self._full = False
                    if self._stop:
                        break
                    self._buffer.append(data)
                    self._bytes += len(data)
                    self._wake()
                    if first:  # the loop sends it without this thread in its way
                        first = False
                        if not self._asked_for_more():
                            break
        except BaseException as exc:
            failure = exc
        finally:
            try:
                gen.close()  # here, in its thread: its finally blocks run
            except BaseException as exc:
                failure = failure or exc
            with lock:
                self._failure = failure
                self._finished = True
                self._wake()
                ended, self._ended = self._ended, None
                if ended is not None:
                    self._loop.call_soon_threadsafe(_resolve, ended)

    async def batch(self, idle: float) -> list[bytes] | None:
        while True:
            with self._lock:
                if self._buffer:
                    items = list(self._buffer)
                    self._buffer.clear()
                    self._bytes = 0
                    self._taken = True
                    if self._full:  # else no wake-up: a woken thread takes the GIL
                        self._lock.notify()
                    return items
                if self._finished:
                    if self._failure is not None:
                        raise self._failure
                    return None
                if self._taken and not self._asked:
                    self._asked = True
                    self._lock.notify()
                waiter = self._waiter = self._loop.create_future()
            timer = self._loop.call_later(idle, _expire, waiter)
            try:
                await waiter
            except TimeoutError:
                raise idle_error(idle) from None
            finally:
                timer.cancel()

    async def close(self) -> None:
        """Closes the generator in its thread and returns once it is closed (a generator
        that never got a thread is closed here: it never ran, so nothing of it runs)."""
        with self._lock:
            self._stop = True
            self._lock.notify()
            if self._finished:
                return
            if self._thread.cancel():  # still waiting for a thread
                self._gen.close()
                return
            ended = self._ended = self._ended or self._loop.create_future()
        await asyncio.shield(ended)  # resolved by the thread once the generator is closed


def _resolve(waiter: "asyncio.Future[None]") -> None:
    if not waiter.done():
        waiter.set_result(None)


def _expire(waiter: "asyncio.Future[None]") -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


Open = Callable[[list[Any], dict[str, Any]], Awaitable[ItemSource]]


def direct_opener(function: Callable[..., Any], walk: bool) -> Open:
    """Direct mode, REST and MCP alike: each call's items from the generator function in
    this process (an async generator on the loop, a sync one in a pool thread)."""
    encode = item_encoder(walk)

    async def open_stream(args: list[Any], kwargs: dict[str, Any]) -> ItemSource:
        produced = function(*args, **kwargs)
        if hasattr(produced, "__anext__"):
            return AsyncItems(produced, encode)
        return ThreadedItems(produced, encode)

    return open_stream


def failure_error(exc: BaseException) -> StreamError:
    """The record of what a generator raised: what a non-streaming call would answer."""
    from starlette.exceptions import HTTPException

    if isinstance(exc, StreamError):
        return exc
    if isinstance(exc, HTTPException):
        return StreamError(exc.status_code, exc.detail)
    return StreamError(500, INTERNAL)


async def items_of(
    source: ItemSource, limits: StreamLimits, on_failure: Callable[[BaseException], None]
) -> AsyncGenerator[list[bytes] | StreamError | None, None]:
    """The source's batches within the limits, then its outcome: ``None`` (done) or the
    :class:`StreamError` that ended it. The source is closed whatever happens (a consumer
    that stops early closes it too)."""
    items = size = 0
    try:
        while True:
            try:
                batch = await source.batch(limits.idle)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                if not isinstance(exc, StreamError):
                    on_failure(exc)
                yield failure_error(exc)
                return
            if batch is None:
                yield None
                return
            room = limits.max_items - items
            error = None
            if len(batch) > room:
                batch = batch[:room]
                error = over(f"{limits.max_items} items", MAX_ITEMS_ENV)
            for index, data in enumerate(batch):
                size += len(data) + 1
                if size > limits.max_bytes:
                    batch = batch[:index]
                    error = over(f"{limits.max_bytes} bytes", MAX_BYTES_ENV)
                    break
            items += len(batch)
            if batch:
                yield batch
            if error is not None:
                yield error
                return
    finally:
        await source.close()
