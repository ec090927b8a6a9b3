"""The REST server of a governed bundle: every call runs in a worker, never in this process.

Copied only into governed bundles (``app.py`` imports it instead of ``rest``). The server
is the direct one (``rest.build_app``: validation, routing, documents) with a different
endpoint: the call goes to the executor the manifest names (a local worker process, or an
OCI container), is cancelled (its worker killed) if the client goes away first, and the
executor's refusals are answered as such: too many calls waiting (or, in a container, out
of memory) is a 503 with ``Retry-After``, the time limit a 504, any other failure a 500
whose details the worker already logged. This process never imports the bundled source.
"""

import asyncio
import math
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from .bodies import BodyReader
from .calls import CallShape
from .encoding import Invoke
from .integrity import StartupError, load_document, load_manifest
from .metrics_governed import observed_executor
from .network import App
from .prevalidate import Prevalidator
from .rest import MANIFEST, MANIFEST_SCHEMA, build_app, served
from .rest_endpoint import (
    INTERNAL_ERROR,
    JSON_HEADERS,
    CapabilityEndpoint,
    Receive,
    Send,
    error_body,
    log,
    respond,
)
from .rest_stream import StreamEndpoint
from .streaming import Open, StreamLimits, stream_limits
from .tracing import start as start_tracing
from .tracing_governed import traced_executor
from .validation import RequestValidator


class GovernedErrors:
    """How the executor's failures map to answers."""

    __slots__ = ("busy", "busy_body", "retry_after", "timeouts")

    def __init__(
        self,
        timeouts: tuple[type[BaseException], ...],
        busy: tuple[type[BaseException], ...],
        retry_after: float,
        busy_body: bytes,
    ) -> None:
        self.timeouts = timeouts
        self.busy = busy
        self.retry_after = str(max(1, math.ceil(retry_after))).encode()
        self.busy_body = busy_body


class GovernedEndpoint(CapabilityEndpoint):
    """``POST /capabilities/<name>``, the call made by the executor."""

    __slots__ = ("_errors",)

    def __init__(
        self,
        invoke: Invoke,
        shape: CallShape,
        validator: RequestValidator,
        bodies: BodyReader,
        prevalidator: Prevalidator | None,
        *,
        errors: GovernedErrors,
    ) -> None:
        super().__init__(invoke, shape, validator, bodies, prevalidator)
        self._errors = errors

    async def _call(
        self, receive: Receive, send: Send, args: list[Any], kwargs: dict[str, Any]
    ) -> None:
        """The call, in this task, cancelled (its worker killed) if the client goes away
        first: a watcher task cancels it then (one task more per call, not two)."""
        task = asyncio.current_task()
        assert task is not None
        gone = asyncio.ensure_future(_cancel_when_gone(receive, task))
        try:
            payload = await self._invoke(args, kwargs)
        except asyncio.CancelledError:
            if not gone.done() or gone.cancelled() or task.uncancel():
                raise  # cancelled by something else (the server stopping)
            log.warning("capability %s: the client disconnected; call cancelled", self._shape.name)
            return
        except Exception as exc:
            failure: Exception | None = exc
        else:
            failure = None
        finally:
            gone.cancel()  # before answering: the answer is never cancelled
        if failure is not None:
            await self._failed(send, failure)
            return
        await respond(send, 200, payload)

    async def _failed(self, send: Send, exc: Exception) -> None:
        """The answer to a call that gave no result."""
        errors = self._errors
        if isinstance(exc, errors.busy):
            log.warning("capability %s: %s", self._shape.name, exc)
            headers = [*JSON_HEADERS, (b"retry-after", errors.retry_after)]
            await respond(send, 503, errors.busy_body, headers)
        elif isinstance(exc, errors.timeouts):
            log.error("capability %s: %s", self._shape.name, exc)
            await respond(send, 504, error_body("Gateway Timeout"))
        else:  # the worker already logged the details
            log.error("capability %s: %s", self._shape.name, exc)
            await respond(send, 500, INTERNAL_ERROR)


class GovernedStreamEndpoint(StreamEndpoint):
    """A stream capability's endpoint, its worker started by the executor: a refusal before
    it starts is answered as a call's (503 with ``Retry-After``); what ends it early is the
    final record (the deadline: 504, ``Gateway Timeout``; a failure: 500)."""

    __slots__ = ("_errors",)

    def __init__(self, *args: Any, errors: GovernedErrors, limits: StreamLimits) -> None:
        super().__init__(*args, limits=limits)
        self._errors = errors

    async def _unopened(self, send: Send, exc: Exception) -> None:
        errors = self._errors
        if isinstance(exc, errors.busy):
            log.warning("capability %s: %s", self._shape.name, exc)
            headers = [*JSON_HEADERS, (b"retry-after", errors.retry_after)]
            await respond(send, 503, errors.busy_body, headers)
            return
        await super()._unopened(send, exc)


async def _cancel_when_gone(receive: Receive, call: "asyncio.Task[Any]") -> None:
    """Cancels ``call`` when the client has gone (the body was already read in full)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            call.cancel()
            return


def _executor(
    bundle: Path, manifest: dict[str, Any], ir: dict[str, Any]
) -> tuple[Any, GovernedErrors, Callable[[], None] | None]:
    """The executor the manifest names, its error mapping and its shutdown."""
    if manifest["execution"].get("backend") == "oci-container":
        from .container import executor as oci

        executor: Any = oci.start_container_executor(bundle, manifest, ir)
        # Out of memory is a 503 as well; the pool goes with the server (uvicorn re-raises
        # SIGTERM after its shutdown, so atexit would not run).
        busy_body = error_body("Service Unavailable: the call ran out of memory")
        errors = GovernedErrors((oci.CallTimeout,), (oci.CallOOM,), executor.retry_after, busy_body)
        return executor, errors, executor.close
    from .governed.executor import CallBusy, CallTimeout, start_executor

    executor = start_executor(bundle, manifest, ir)  # never imports the source
    busy_body = error_body("Service Unavailable: too many calls waiting; retry later")
    errors = GovernedErrors((CallTimeout,), (CallBusy,), executor.retry_after, busy_body)
    # Its template and scratch directory go with the server: uvicorn re-raises SIGTERM after
    # its shutdown, so the executor's atexit would never run.
    return executor, errors, executor.close


def create_app(bundle: Path) -> App:
    """Verify, start the executor and build; any problem is a one-line StartupError."""
    manifest = load_manifest(bundle, MANIFEST, MANIFEST_SCHEMA)
    start_tracing(manifest["module"])  # OTEL_* (``tracing``): off unless configured
    if manifest["execution"]["mode"] != "governed":
        raise StartupError(f"{MANIFEST}: not a governed bundle; run it with svc_runtime.rest")
    ir = load_document(bundle, "capability-ir.json")
    executor, errors, on_shutdown = _executor(bundle, manifest, ir)
    executor = traced_executor(observed_executor(executor))  # counted; a span per call
    invokers: dict[str, tuple[Invoke | Open, CallShape]] = {
        c["name"]: (partial(executor.call, c["name"]), CallShape.from_ir(c))
        for c in ir["capabilities"]
    }
    streams = {c["name"] for c in ir["capabilities"] if c.get("stream") is not None}
    if streams and not hasattr(executor, "stream"):
        raise StartupError(
            f"{', '.join(sorted(streams))}: streams are served by local-process workers "
            "(policy v1) and in direct mode, not by the container backend"
        )
    for name in streams:
        invokers[name] = (partial(executor.stream, name), invokers[name][1])
    app = build_app(
        bundle,
        ir,
        invokers,
        max_body=executor.max_input,
        endpoint=partial(GovernedEndpoint, errors=errors),
        stream_endpoint=lambda: partial(
            GovernedStreamEndpoint, errors=errors, limits=stream_limits()
        ),
    )
    if on_shutdown is not None:
        app.framework.router.on_shutdown.append(on_shutdown)
    return served(app)
