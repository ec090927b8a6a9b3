"""Metrics of governed execution: worker starts, timeouts and limit kills.

Copied only into governed bundles, beside the server glue that starts the executor:
``svc_governed_worker_starts_total`` (calls that reached a fresh worker process or
container), ``svc_governed_timeouts_total`` (workers killed at the policy's wall-time
deadline) and ``svc_governed_limit_kills_total`` (workers stopped for passing another limit:
the output size, or a container's memory). The executor is wrapped, never changed: its
errors say what happened by their class (``wire.CallError``: ``started``, ``killed``), never
by their message, so the executors stay the only place that decides it.
"""

from typing import Any

from .metrics import current
from .wire import KILLED_LIMIT, KILLED_TIMEOUT, CallError


def _counters(registry: Any) -> tuple[Any, Any, Any]:
    from prometheus_client import Counter

    return (
        Counter(
            "svc_governed_worker_starts",
            "Calls that started a fresh worker (process or container).",
            registry=registry,
        ),
        Counter(
            "svc_governed_timeouts",
            "Workers killed at the policy's wall-time deadline.",
            registry=registry,
        ),
        Counter(
            "svc_governed_limit_kills",
            "Workers stopped for passing a policy limit other than time "
            "(output size, container memory).",
            registry=registry,
        ),
    )


class ObservedExecutor:
    """A governed executor whose calls are counted; everything else is the executor's own."""

    __slots__ = ("_executor", "_kills", "_starts", "_timeouts")

    def __init__(self, executor: Any, counters: tuple[Any, Any, Any]) -> None:
        self._executor = executor
        self._starts, self._timeouts, self._kills = counters

    async def call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> bytes:
        try:
            result: bytes = await self._executor.call(name, args, kwargs)
        except CallError as exc:
            if exc.started:
                self._starts.inc()
            if exc.killed == KILLED_TIMEOUT:
                self._timeouts.inc()
            elif exc.killed == KILLED_LIMIT:
                self._kills.inc()
            raise
        except BaseException:  # cancelled (the client left): its worker was started
            self._starts.inc()
            raise
        self._starts.inc()
        return result

    def __getattr__(self, name: str) -> Any:
        if name == "_executor":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self._executor, name)


def observed_executor(executor: Any) -> Any:
    """``executor`` with its calls counted (itself when metrics are off)."""
    metrics = current()
    if metrics is None:
        return executor
    return ObservedExecutor(executor, metrics.extra("governed", _counters))
