"""Traces of governed execution: a span for the worker of each call, inside the call's span.

Copied only into governed bundles, beside ``metrics_governed``. The executor is wrapped, never
changed (as for its metrics): the span ``worker <capability>`` (kind ``INTERNAL``) covers the
call from the executor's point of view (waiting for a worker, the worker's run, reading its
result), so a trace shows how much of a request the worker took. Its attributes are
``svc.capability``, ``svc.status_code`` (the HTTP status the outcome is answered with) and,
when the worker was stopped, ``svc.worker.killed`` (``timeout`` or ``limit``); a failure sets
the span's status and ``error.type`` (the error's class), never the error's message, which is
for the server log only. Streams are not wrapped: their items are read long after the call
returns.
"""

from typing import Any

from .tracing import CAPABILITY, STATUS, Tracing, current
from .wire import CallError

KILLED = "svc.worker.killed"


class TracedExecutor:
    """A governed executor whose calls each get a span; everything else is its own."""

    __slots__ = ("_executor", "_tracing")

    def __init__(self, executor: Any, tracing: Tracing) -> None:
        self._executor = executor
        self._tracing = tracing

    async def call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> bytes:
        tracing = self._tracing
        span = tracing.tracer.start_span(
            f"worker {name}", kind=tracing.internal_kind, attributes={CAPABILITY: name}
        )
        token = tracing.attach(tracing.in_context(span))
        try:
            result: bytes = await self._executor.call(name, args, kwargs)
            span.set_attribute(STATUS, 200)
            return result
        except CallError as exc:
            span.set_attribute(STATUS, exc.status)
            if exc.killed is not None:
                span.set_attribute(KILLED, exc.killed)
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(tracing.error)
            raise
        except BaseException as exc:  # cancelled (the client left), or a failure of our own
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(tracing.error)
            raise
        finally:
            tracing.detach(token)
            span.end()

    def __getattr__(self, name: str) -> Any:
        if name == "_executor":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self._executor, name)


def traced_executor(executor: Any) -> Any:
    """``executor`` with a span per call (itself when tracing is off)."""
    tracing = current()
    return executor if tracing is None else TracedExecutor(executor, tracing)
