"""The MCP server of a governed bundle: every call runs in a worker, never in this process.

Copied only into governed bundles (``server.py`` imports it instead of ``mcp``). The server
is the direct one (``mcp.main``: the protected protocol stream, argument and result
validation) with tools whose calls go to the executor the manifest names (a local worker
process, or an OCI container). The executor's refusals are tool errors that say what
happened (the time limit, too many calls waiting); any other failure is the generic tool
error, its details already in the worker's log. This process never imports the bundled
source.
"""

from pathlib import Path
from typing import Any

from .calls import CallShape
from .encoding import Invoke
from .integrity import StartupError
from .mcp import MANIFEST
from .mcp import main as serve
from .mcp_tool import INTERNAL_ERROR, Answer, Tool, log, tool_error
from .metrics_governed import observed_executor
from .tracing_governed import traced_executor
from .wire import CallError


def governed_invoker(executor: Any, name: str) -> Invoke:
    """A fresh worker returns finite JSON bytes, served as they are."""

    async def invoke(args: list[Any], kwargs: dict[str, Any]) -> bytes:
        result: bytes = await executor.call(name, args, kwargs)
        return result

    return invoke


class GovernedTool(Tool):
    """A tool whose calls the executor makes, and whose refusals say what happened. The
    policy's ``max_input_bytes`` bounds its arguments (``Tool``'s ``max_input``), as it
    bounds a REST body: an argument over it never reaches a worker."""

    __slots__ = ("_busy", "_timeouts")

    def __init__(
        self,
        definition: dict[str, Any],
        invoke: Invoke,
        shape: CallShape,
        timeouts: tuple[type[BaseException], ...],
        busy: tuple[type[BaseException], ...],
        *,
        max_input: int | None = None,
    ) -> None:
        super().__init__(definition, invoke, shape, max_input=max_input)
        self._timeouts = timeouts
        self._busy = busy

    def failed(self, exc: BaseException) -> Answer:
        return governed_failure(self._shape.name, exc, self._timeouts, self._busy)


def governed_failure(
    name: str,
    exc: BaseException,
    timeouts: tuple[type[BaseException], ...],
    busy: tuple[type[BaseException], ...],
) -> Answer:
    """The tool error of a governed call that gave no result: what happened, never the
    worker's details (already in its log)."""
    status = exc.status if isinstance(exc, CallError) else 500
    if isinstance(exc, timeouts):
        log.error("tool %s: %s", name, exc)
        return tool_error("timed out: the tool passed its time limit"), status
    if isinstance(exc, busy):
        log.warning("tool %s: %s", name, exc)
        return tool_error("busy: too many calls are waiting; retry later"), status
    log.error("tool %s: %s", name, exc)  # the worker logged the details
    return tool_error(INTERNAL_ERROR), status


def governed_stream_tool(
    definition: dict[str, Any],
    executor: Any,
    shape: CallShape,
    timeouts: tuple[type[BaseException], ...],
    busy: tuple[type[BaseException], ...],
    *,
    max_input: int | None = None,
) -> Tool:
    """A stream capability's tool, its items from a local-process worker (``mcp_stream``)."""
    from functools import partial

    from .mcp_stream import StreamTool
    from .streaming import stream_limits

    if not hasattr(executor, "stream"):
        raise StartupError(
            f"{shape.name}: streams are served by local-process workers (policy v1) and in "
            "direct mode, not by the container backend"
        )

    class GovernedStreamTool(StreamTool):
        def failed(self, exc: BaseException) -> Answer:
            return governed_failure(self._shape.name, exc, timeouts, busy)

    return GovernedStreamTool(
        definition,
        partial(executor.stream, shape.name),
        shape,
        limits=stream_limits(),
        max_input=max_input,
    )


def governed_tools(
    bundle: Path, manifest: dict[str, Any], ir: dict[str, Any], definitions: dict[str, Any]
) -> dict[str, Tool]:
    """One tool per capability, served by the executor the manifest names."""
    execution = manifest["execution"]
    if execution["mode"] != "governed":
        raise StartupError(f"{MANIFEST}: not a governed bundle; run it with svc_runtime.mcp")
    if execution.get("backend") == "oci-container":
        from .container import executor as oci

        executor: Any = oci.start_container_executor(bundle, manifest, ir)
        errors: tuple[tuple[type[Exception], ...], ...] = ((oci.CallTimeout,), ())
    else:
        from .governed.executor import CallBusy, CallTimeout, start_executor

        executor = start_executor(bundle, manifest, ir)  # never imports the source
        errors = ((CallTimeout,), (CallBusy,))
    executor = traced_executor(observed_executor(executor))  # counted; a span per call
    max_input = getattr(executor, "max_input", None)
    return {
        c["name"]: governed_stream_tool(
            definitions[c["name"]], executor, shape, *errors, max_input=max_input
        )
        if shape.stream
        else GovernedTool(
            definitions[c["name"]],
            governed_invoker(executor, c["name"]),
            shape,
            *errors,
            max_input=max_input,
        )
        for c in ir["capabilities"]
        for shape in (CallShape.from_ir(c),)
    }


def main(bundle: Path) -> None:
    serve(bundle, governed_tools)
