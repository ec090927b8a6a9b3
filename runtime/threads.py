"""Where a sync capability runs: one pool of threads per server process (a sync generator's
stream too, ``streaming``: calls and streams share its limit).

A sync function must not block the event loop, so each call is handed to a pool thread
and its result handed back. anyio's ``to_thread.run_sync`` does that with a capacity
limiter, a cancel scope and a queue per thread: about 45 microseconds of CPU per call here,
more than a small REST call spends on everything else; ``concurrent.futures`` with
``asyncio.wrap_future`` still takes about 15 (a future of each kind, a lock and a condition
per call, the result copied between them by two callbacks). The pool below keeps what a
call needs and nothing else (about 4): the threads take calls from one queue (C's
``SimpleQueue``), and a thread hands the result straight to the caller's asyncio future
(one ``call_soon_threadsafe``). What a call keeps of it:

- at most :data:`MAX_THREADS` calls and streams run at once (anyio's default limit), the
  others wait for a thread in order of arrival;
- the function runs in a copy of the caller's context (context variables, a trace span);
- cancelling the caller while the function runs does not abandon it: a thread cannot be
  interrupted, so the cancellation is answered once the function has returned (and the
  direct-mode limits still count the call as running until then); a call cancelled before
  a thread took it never runs.

The threads are daemon threads: every call that ran on one was waited for by its caller
(a cancelled one too, above), so the interpreter's exit has nothing left to wait for on
them.
"""

import asyncio
import contextlib
import contextvars
import os
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any, Generic, TypeVar

MAX_THREADS = 40

T = TypeVar("T")

Job = Callable[[], None]


class Pool:
    """Threads taking jobs from one queue in order of arrival, at most ``limit`` of them,
    a new one made only when a job finds none idle (as ``ThreadPoolExecutor`` does)."""

    __slots__ = ("_idle", "_jobs", "_lock", "_threads", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._jobs: SimpleQueue[Job | None] = SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads: list[threading.Thread] = []

    def put(self, job: Job) -> None:
        self._jobs.put(job)
        with self._lock:
            if self._idle:
                self._idle -= 1
                return
            if len(self._threads) >= self.limit:
                return
            thread = threading.Thread(
                target=self._work, name=f"svc-call_{len(self._threads)}", daemon=True
            )
            self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        jobs, lock = self._jobs, self._lock
        while True:
            job = jobs.get()
            if job is None:
                return
            try:
                job()
            except BaseException as exc:  # a job's own failure does not end the thread
                threading.excepthook(
                    threading.ExceptHookArgs(
                        (type(exc), exc, exc.__traceback__, threading.current_thread())
                    )
                )
            del job  # what it holds is not kept while the thread waits
            with lock:
                self._idle += 1

    def close(self) -> None:
        """Let every thread end once the jobs queued before are done, and wait for them."""
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._jobs.put(None)
        for thread in threads:
            thread.join()


_pool: list[Pool] = []  # at most one: this process's, made on first use


def _executor() -> Pool:
    if not _pool:
        _pool.append(Pool(MAX_THREADS))
    return _pool[0]


os.register_at_fork(after_in_child=_pool.clear)  # a forked server makes its own threads


class Started:
    """A function :func:`start` handed to the pool: taken back with :meth:`cancel` until a
    thread takes it."""

    __slots__ = ("_ticket",)

    def __init__(self) -> None:
        self._ticket = [True]  # popped once, atomically: by a thread or by a cancellation

    def _pop(self) -> bool:
        try:
            self._ticket.pop()
        except IndexError:
            return False
        return True

    def cancel(self) -> bool:
        """On the loop: whether it was taken back before a thread took it (then it never
        runs)."""
        return self._pop()

    def take(self) -> bool:
        """In the thread: whether it may run (it was not taken back)."""
        return self._pop()


def start(function: Callable[[], None]) -> Started:
    """``function()`` handed to a pool thread now, in a copy of the caller's context, and
    not awaited: for work the caller follows by other means (a stream's generator,
    ``streaming``, which catches what it raises and says when it has ended), under the
    same limit as the calls. No future per call: a stream's first item costs what a call
    costs."""
    started = Started()
    context = contextvars.copy_context()

    def job() -> None:
        if started.take():
            context.run(function)

    _executor().put(job)
    return started


class _Call(Generic[T]):
    """One call of :func:`run_sync`: run by a pool thread, answered on the caller's loop."""

    __slots__ = (
        "_after",
        "_args",
        "_context",
        "_function",
        "_kwargs",
        "_loop",
        "_ticket",
        "ended",
        "future",
    )

    def __init__(
        self, function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._context = contextvars.copy_context()
        self._function = function
        self._args = args
        self._kwargs = kwargs
        self._ticket = Started()
        self._after: asyncio.Future[None] | None = None
        self.ended = False
        self.future: asyncio.Future[T] = self._loop.create_future()

    def take_back(self) -> bool:
        """On the loop: whether the call was taken back before a thread took it (then it
        never runs)."""
        return self._ticket.cancel()

    def run(self) -> None:
        """In a pool thread."""
        if not self._ticket.take():
            return  # cancelled while it waited for a thread
        try:
            result = self._context.run(self._function, *self._args, **self._kwargs)
        except BaseException as exc:  # the caller's to judge
            self._answer(None, exc)
        else:
            self._answer(result, None)

    def _answer(self, result: Any, exc: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            self._loop.call_soon_threadsafe(self._end, result, exc)

    def _end(self, result: T, exc: BaseException | None) -> None:
        """On the loop, once the function has returned or raised."""
        self.ended = True
        future = self.future
        if not future.done():
            if exc is None:
                future.set_result(result)
            else:
                future.set_exception(exc)
        if self._after is not None and not self._after.done():
            self._after.set_result(None)

    async def until_ended(self) -> None:
        """After a cancellation, on the loop: wait until the function has returned, through
        any further cancellation."""
        if self.ended:
            return
        after = self._after = self._loop.create_future()
        while not after.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait((after,))


async def run_sync(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` in a pool thread, awaited (see the module docstring)."""
    call = _Call(function, args, kwargs)
    _executor().put(call.run)
    try:
        return await call.future
    except asyncio.CancelledError:
        if not call.take_back():
            await call.until_ended()  # it runs to its end: the cancellation waits for it
        raise
