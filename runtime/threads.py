"""Where a sync capability runs: one pool of threads per server process (a sync generator's
stream too, ``streaming``: calls and streams share its limit).

A sync function must not block the event loop, so each call is handed to a pool thread
and its result handed back. anyio's ``to_thread.run_sync`` does that with a capacity
limiter, a cancel scope and a queue per thread: about 45 microseconds of CPU per call here,
more than a small REST call spends on everything else. The pool below keeps what a call
needs of it and drops the rest (about 15 microseconds):

- at most :data:`MAX_THREADS` calls and streams run at once (anyio's default limit), the
  others wait for a thread in order of arrival;
- the function runs in a copy of the caller's context (context variables, a trace span);
- cancelling the caller while the function runs does not abandon it: a thread cannot be
  interrupted, so the cancellation is answered once the function has returned (and the
  direct-mode limits still count the call as running until then); a call cancelled before
  a thread took it never runs.
"""

import asyncio
import contextlib
import contextvars
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

MAX_THREADS = 40

T = TypeVar("T")

_pool: list[ThreadPoolExecutor] = []  # at most one: this process's, made on first use


def _executor() -> ThreadPoolExecutor:
    if not _pool:
        _pool.append(ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="svc-call"))
    return _pool[0]


def start(function: Callable[..., T], *args: Any) -> "Future[T]":
    """``function(*args)`` handed to a pool thread now, in a copy of the caller's context,
    and not awaited: for work the caller follows by other means (a stream's generator,
    ``streaming``), under the same limit as the calls."""
    return _executor().submit(contextvars.copy_context().run, function, *args)


async def run_sync(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` in a pool thread, awaited (see the module docstring)."""
    context = contextvars.copy_context()
    done = _executor().submit(context.run, function, *args, **kwargs)
    try:
        return await asyncio.wrap_future(done)
    except asyncio.CancelledError:
        if done.cancel() or done.cancelled():
            raise  # no thread took it: it never runs
        finished = asyncio.wrap_future(done)
        while not finished.done():  # it runs to its end: the cancellation waits for it
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait((finished,))
        if not finished.cancelled():
            finished.exception()  # retrieved: its outcome is dropped with the cancellation
        raise
