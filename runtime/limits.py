"""Direct-mode limits: how many calls one server runs at once, and how long an async one may
take.

Configured from the environment when the server starts (a bad value stops startup with a
one-line reason):

- ``SVC_MAX_CONCURRENCY``: at most this many calls run at once in this server process (REST
  and MCP alike, every capability together); a call over it is refused at once, never
  queued: a 503 with ``Retry-After`` over REST, the busy tool error over MCP. Unset or
  empty: no cap (sync functions still share the thread pool's 40 threads).
- ``SVC_ASYNC_DEADLINE``: seconds an ``async def`` capability may run; past it the call is
  cancelled and answered 504 (the timed-out tool error over MCP). A sync function cannot be
  interrupted inside the process: it runs to its end (only a call run in a process of its
  own can be killed at a hard limit). Unset or empty: no deadline.
"""

import asyncio
from typing import Any

from .calls import CallShape
from .encoding import Invoke
from .settings import optional_positive

CONCURRENCY_ENV = "SVC_MAX_CONCURRENCY"
DEADLINE_ENV = "SVC_ASYNC_DEADLINE"
# A refused call may retry after this many seconds (calls in direct mode are short-lived
# compared to a client's patience; the header only has to be a valid hint).
RETRY_AFTER_SECONDS = 1


class LimitRefused(Exception):
    """A call the limits refused: its HTTP status and the MCP tool error saying why."""

    status = 503
    tool_message = "busy: too many calls are waiting; retry later"


class Busy(LimitRefused):
    pass


class DeadlineExceeded(LimitRefused):
    status = 504
    tool_message = "timed out: the tool passed its time limit"


class DirectLimits:
    """The limits of one server process; :meth:`wrap` puts them around an invoker."""

    __slots__ = ("deadline", "max_concurrency", "running")

    def __init__(self, max_concurrency: int | None, deadline: float | None) -> None:
        self.max_concurrency = max_concurrency
        self.deadline = deadline
        self.running = 0  # touched only on the event loop: no lock needed

    @classmethod
    def from_env(cls) -> "DirectLimits":
        return cls(optional_positive(CONCURRENCY_ENV, int), optional_positive(DEADLINE_ENV, float))

    @property
    def active(self) -> bool:
        return self.max_concurrency is not None or self.deadline is not None

    def wrap(self, invoke: Invoke, shape: CallShape) -> Invoke:
        """``invoke`` admitted under the cap, and (async functions) under the deadline."""
        if not self.active:
            return invoke
        deadline = self.deadline if shape.is_async else None

        async def limited(args: list[Any], kwargs: dict[str, Any]) -> bytes:
            if self.max_concurrency is not None and self.running >= self.max_concurrency:
                cap = self.max_concurrency
                raise Busy(f"{self.running} calls running ({CONCURRENCY_ENV}={cap})")
            self.running += 1
            try:
                if deadline is None:
                    return await invoke(args, kwargs)
                scope = asyncio.timeout(deadline)
                try:
                    async with scope:
                        return await invoke(args, kwargs)
                except TimeoutError:
                    if not scope.expired():
                        raise  # the function's own TimeoutError: a failure like any other
                    raise DeadlineExceeded(f"over {DEADLINE_ENV}={deadline:g}s") from None
            finally:
                self.running -= 1

        return limited
