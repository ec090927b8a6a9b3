"""The generated MCP server: the official SDK's low-level ``Server`` over stdio.

``main(bundle)`` first moves the protocol off file descriptor 1: the wire keeps a private
duplicate and fd 1 points at stderr for the life of the process, so nothing the user's
code prints (at import or in a call, from Python or C) can corrupt the protocol stream.
Then the bundle is verified like the REST bundle (manifest digests, source import, callable
shapes) and each tool is served with the definition in ``mcp-tools.json``. Arguments are
validated by the same validators as REST requests (built from each tool's
``inputSchema``); invalid arguments, a failing function or a result that does not match
the declared ``outputSchema`` are tool errors (``isError``), never protocol crashes.
"""

import contextlib
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from time import perf_counter
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from .calls import CallShape, import_source, resolve_capabilities
from .conversion import attach_converters
from .encoding import direct_invoker
from .integrity import StartupError, exit_on_startup_error, load_document, load_manifest
from .limits import DirectLimits
from .mcp_progress import with_progress
from .mcp_stdio import exit_on_sigterm, protect_request_stream, stdio_transport
from .mcp_tool import (
    Tool,
    request_context,
    tool_error,
)
from .metrics import current
from .streaming import Open, direct_opener, stream_limits
from .tracing import start as start_tracing
from .validation import max_body_bytes

MANIFEST = "svc-mcp.json"
MANIFEST_SCHEMA = "svc.mcp-bundle/v1"
TOOLS_FILE = "mcp-tools.json"
Tools = Callable[[Path, dict[str, Any], dict[str, Any], dict[str, Any]], dict[str, Tool]]


def direct_tools(
    bundle: Path, manifest: dict[str, Any], ir: dict[str, Any], definitions: dict[str, Any]
) -> dict[str, Tool]:
    """The bundled source imported, its callables checked against the IR, one tool each."""
    mode = manifest["execution"]["mode"]
    if mode != "direct":  # its own glue serves it; never import its source here
        raise StartupError(f"{MANIFEST}: execution mode {mode!r} is not served by this module")
    capabilities = ir["capabilities"]
    if manifest.get("bundle_kind") == "repository":  # only repository bundles carry it
        from .repository import resolve_repository_capabilities

        functions = resolve_repository_capabilities(bundle, manifest, capabilities)
    else:
        functions = resolve_capabilities(import_source(bundle, manifest["module"]), capabilities)
    attach_converters(ir, functions)
    limits = DirectLimits.from_env()
    return {
        name: stream_tool(definitions[name], direct_opener(function, shape.walk_result), shape)
        if shape.stream
        else Tool(definitions[name], limits.wrap(direct_invoker(function, shape), shape), shape)
        for name, (function, shape) in functions.items()
    }


def stream_tool(
    definition: dict[str, Any], open_stream: Open, shape: CallShape, max_input: int | None = None
) -> Tool:
    """The tool of a stream capability (``mcp_stream``), with the limits from the environment."""
    from .mcp_stream import StreamTool

    return StreamTool(definition, open_stream, shape, limits=stream_limits(), max_input=max_input)


def create_server(bundle: Path, tools_of: Tools = direct_tools) -> Server[Any]:
    """Verify, build the tools (``tools_of``: by default, import the source) and the
    server; any problem is a one-line :class:`StartupError`."""
    manifest = load_manifest(bundle, MANIFEST, MANIFEST_SCHEMA)
    ir = load_document(bundle, "capability-ir.json")
    document = load_document(bundle, TOOLS_FILE)
    definitions = {tool["name"]: tool for tool in document["tools"]}
    if set(definitions) != {c["name"] for c in ir["capabilities"]}:
        raise StartupError(f"{TOOLS_FILE} does not list exactly the bundle's capabilities")
    metrics = current()  # before the tools: an executor they start is observed from its start
    traces = start_tracing(manifest["module"])  # OTEL_* (``tracing``): off unless configured
    tools = tools_of(bundle, manifest, ir, definitions)
    listing = types.ListToolsResult(tools=[tools[t["name"]].definition for t in document["tools"]])

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        """The tool's answer, counted on every transport (never an unknown tool's name);
        progress while a long call runs (``mcp_progress``)."""
        tool = tools.get(params.name)
        if tool is None:
            return tool_error(f"unknown tool {params.name!r}")
        started = perf_counter()
        request_context.set(ctx)  # a stream tool sends its items as progress (mcp_stream)
        call = tool.call(params.arguments)
        # a stream's progress is its items; elapsed-time progress is for the other calls
        result, status = await (call if tool.streams else with_progress(ctx, call))
        if metrics is not None:
            metrics.observe(params.name, str(status), perf_counter() - started)
        if traces is not None:  # on the MCP SDK's span of this message
            traces.tool_call(params.name, status)
        return result

    version = str(manifest.get("generator", {}).get("version", ""))
    return Server(
        manifest["module"], version=version, on_list_tools=list_tools, on_call_tool=call_tool
    )


def protect_protocol_stream() -> BinaryIO:
    """The wire, on a private duplicate of fd 1; fd 1 itself now writes to stderr."""
    sys.stdout.flush()
    wire = os.dup(1)
    os.set_inheritable(wire, False)
    os.dup2(2, 1)
    return os.fdopen(wire, "wb")


async def _serve(server: Server[Any], wire: BinaryIO, max_bytes: int) -> None:
    requests = protect_request_stream()
    async with stdio_transport(requests, wire, max_bytes) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(bundle: Path, tools_of: Tools = direct_tools) -> None:
    from .mcp_http import parse_options, serve_http

    options = parse_options(sys.argv[1:])
    if options.transport == "streamable-http":  # the same server at /mcp (mcp_http)
        serve_http(bundle, create_server, tools_of, options)
        return
    wire = protect_protocol_stream()
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    exit_on_sigterm()
    with exit_on_startup_error("svc-mcp"):
        max_bytes = max_body_bytes()
        server = create_server(bundle, tools_of)
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(_serve, server, wire, max_bytes)
