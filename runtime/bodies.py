"""How a request body is read (REST and MCP over HTTP): under the one size rule of
``validation`` and under two deadlines. A body that stops arriving is given up after a pause
bound, one that trickles after a total bound, and what was buffered of it goes with it (the
server answers 408 and closes the connection).

Neither uvicorn nor gunicorn bounds the time a request body takes, so a client could hold a
body just short of the size limit for as long as it kept the connection open. One watcher
per server checks the bodies being read a few times per pause bound and cancels the reader
of an expired one; reading a body costs a dictionary entry, not a timer per request (the
request path is kept lean). Both bounds are seconds from the environment, read at startup:
``SVC_BODY_IDLE_TIMEOUT`` (default 30) and ``SVC_BODY_TIMEOUT`` (default 120); a value that
is not a positive number refuses startup.
"""

import asyncio
from collections.abc import Callable
from time import monotonic
from typing import Any

from .settings import positive
from .validation import check_size

IDLE_ENV = "SVC_BODY_IDLE_TIMEOUT"
TOTAL_ENV = "SVC_BODY_TIMEOUT"
DEFAULT_IDLE = 30.0
DEFAULT_TOTAL = 120.0


class BodyTimeout(Exception):
    """A request body that did not arrive in time (answered 408)."""


class BodyReader:
    """Reads request bodies of at most ``limit`` bytes within the pause bound ``idle`` and
    the total bound ``total`` (seconds). The bodies being read are kept with the time each
    must make progress by; a watcher task (started with the first body of a busy spell, gone
    after a tick that saw none) cancels the reader of one that passed it."""

    __slots__ = (
        "_busy",
        "_due",
        "_expired",
        "_gave_up",
        "_reading",
        "_tick",
        "_watcher",
        "idle",
        "limit",
        "total",
    )

    def __init__(self, limit: int, idle: float, total: float) -> None:
        self.limit = limit
        self.idle = idle
        self.total = total
        self._due = min(idle, total)  # the first due time, from the start
        self._tick = min(max(self._due / 4, 0.05), 1.0)
        self._reading: dict[asyncio.Task[Any], float] = {}
        self._expired: set[asyncio.Task[Any]] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._gave_up = False
        self._busy = False  # a body was read since the watcher's last tick

    async def read(self, receive: Callable[[], Any]) -> bytes | None:
        """The whole ASGI request body under the one size rule (:class:`TooLarge` as soon as
        what was announced or read is over ``limit``: a body is never held past it) and the
        deadlines (:class:`BodyTimeout`); what was read of a refused body is dropped.
        ``None`` when the client went away first."""
        task: Any = asyncio.current_task()
        started = monotonic()
        reading = self._reading
        reading[task] = started + self._due
        self._busy = True
        if self._watcher is None:
            self._watcher = asyncio.get_running_loop().create_task(self._watch())
        try:
            chunks: list[bytes] = []
            size = 0
            while True:
                try:
                    message = await receive()
                except asyncio.CancelledError:
                    if self._expired_here(task):
                        raise BodyTimeout from None
                    raise
                if message["type"] == "http.disconnect":
                    return None
                chunk: bytes = message.get("body", b"")
                size += len(chunk)
                check_size(size, self.limit)
                if not message.get("more_body", False):
                    if not chunks:
                        return chunk  # the whole body in one message: no copy
                    chunks.append(chunk)
                    return b"".join(chunks)
                chunks.append(chunk)
                # the pause bound again, never past the total one
                reading[task] = min(monotonic() + self.idle, started + self.total)
        finally:
            del reading[task]
            if self._expired:
                self._expired.discard(task)

    def _expired_here(self, task: asyncio.Task[Any]) -> bool:
        """Whether the cancellation ``task`` is handling is the watcher's alone (it is then
        taken back; a shutdown's cancellation stays)."""
        if task not in self._expired:
            return False
        self._expired.discard(task)
        return task.uncancel() == 0

    async def _watch(self) -> None:
        try:
            # Until a whole tick saw no body: a body that arrives with its request is read
            # before the watcher first runs, and a watcher per request cost a task each.
            while self._reading or self._gave_up or self._busy:
                self._busy = False
                await asyncio.sleep(self._tick)
                if self._gave_up:  # those readers have dropped their bytes since
                    self._gave_up = False
                    return_memory()
                now = monotonic()
                # No await in this loop: each reader is suspended in ``receive``.
                for task, due in self._reading.items():
                    if due <= now and task not in self._expired:
                        self._expired.add(task)
                        task.cancel()
                        self._gave_up = True
        finally:
            self._watcher = None


_trim: list[Callable[[int], int] | None] = []


def return_memory() -> None:
    """Give the memory of bodies given up back to the system (glibc's ``malloc_trim``, at
    most once per watcher tick). The C allocator keeps freed chunks between live ones for
    reuse: of twenty 16 MiB bodies dropped at once, 70 MB stayed resident without this."""
    if not _trim:
        try:
            import ctypes

            _trim.append(ctypes.CDLL(None).malloc_trim)
        except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to ask
            _trim.append(None)
    if _trim[0] is not None:
        _trim[0](0)


def body_reader(limit: int) -> BodyReader:
    """The reader of bodies of at most ``limit`` bytes, with the deadlines the environment
    sets (a :class:`StartupError` for a value that is not a positive number)."""
    return BodyReader(
        limit, positive(IDLE_ENV, DEFAULT_IDLE, float), positive(TOTAL_ENV, DEFAULT_TOTAL, float)
    )
