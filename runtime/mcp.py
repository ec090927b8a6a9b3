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

import asyncio
import contextlib
import json
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
from pydantic_core import to_json

from .calls import CallShape, import_source, resolve_capabilities
from .conversion import attach_converters
from .encoding import Invoke, ResultNotJson, direct_invoker
from .integrity import StartupError, exit_on_startup_error, load_document, load_manifest
from .json_text import loads_int, small_ints
from .limits import DirectLimits, LimitRefused
from .mcp_progress import with_progress
from .mcp_stdio import exit_on_sigterm, protect_request_stream, stdio_transport
from .metrics import current
from .validation import RequestInvalid, RequestValidator, TooLarge, check_size, max_body_bytes

MANIFEST = "svc-mcp.json"
MANIFEST_SCHEMA = "svc.mcp-bundle/v1"
TOOLS_FILE = "mcp-tools.json"
INTERNAL_ERROR = "internal error: the tool failed (details are in the server log)"
NOT_JSON_RESULT = "internal error: the result has no JSON form (details are in the server log)"
# A direct-mode tool error names the exception and the first line of its message, at most
# this many characters (never the traceback: that goes to the server log).
MAX_ERROR_MESSAGE = 300

log = logging.getLogger("svc.mcp")


def _validator(schema: dict[str, Any]) -> RequestValidator:
    """A validator for a self-contained schema (its definitions under ``$defs``)."""
    body = {key: value for key, value in schema.items() if key != "$defs"}
    return RequestValidator(body, schema.get("$defs", {}))


def _text(text: str) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=text)]


def tool_error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=_text(text), is_error=True)


# A tool call's answer and the HTTP status REST answers the same outcome with: the status
# metrics count an MCP call with (``metrics``), so both interfaces share one label shape.
Answer = tuple[types.CallToolResult, int]


def describe_errors(
    errors: list[dict[str, Any]], what: str = "invalid arguments", more: int = 0
) -> str:
    """``invalid arguments: shape.points.0.y: Field required (missing); ...`` (bounded:
    the validator keeps the first errors and counts the rest)."""
    parts = []
    for error in errors:
        path = ".".join(str(p) for p in error["loc"][1:]) or "(arguments)"
        parts.append(f"{path}: {error['msg']} ({error['type']})")
    if more:
        parts.append(f"and {more} more")
    return f"{what}: " + "; ".join(parts)


def exception_summary(exc: BaseException) -> str:
    """``ValueError: the first line of its message`` (bounded): what an agent can act on,
    as FastMCP reports it; never the traceback."""
    name = type(exc).__name__
    lines = str(exc).strip().splitlines()
    text = f"{name}: {lines[0]}" if lines else name
    if len(text) > MAX_ERROR_MESSAGE:
        text = text[: MAX_ERROR_MESSAGE - 1] + "…"
    return text


class Tool:
    """One served tool: definition, invoker, call shape and validators, built at startup."""

    __slots__ = ("_arguments", "_invoke", "_max_input", "_result", "_shape", "definition")

    def __init__(
        self,
        definition: dict[str, Any],
        invoke: Invoke,
        shape: CallShape,
        *,
        max_input: int | None = None,
    ) -> None:
        """``max_input``: the size limit of the arguments (their JSON), as of a REST body;
        ``None`` when the transport's message limit is the only one."""
        self.definition = types.Tool.model_validate(definition)
        self._invoke = invoke
        self._shape = shape
        self._max_input = max_input
        self._arguments = _validator(definition["inputSchema"])
        output = definition.get("outputSchema")
        self._result = _validator(output) if output is not None else None

    async def call(self, arguments: dict[str, Any] | None) -> Answer:
        if self._max_input is not None and arguments:
            try:
                check_size(len(to_json(arguments)), self._max_input, "arguments")
            except TooLarge as exc:  # never reaches the function (a 413 in REST)
                return tool_error(f"invalid arguments: {exc}"), 413
        try:
            values = self._arguments.validate_value({} if arguments is None else arguments)
            args, kwargs = self._shape.bind(values)
        except RequestInvalid as exc:
            return tool_error(describe_errors(exc.errors, more=exc.more)), 422
        try:
            data = await self._invoke(args, kwargs)  # JSON bytes, encoded once
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # SystemExit, KeyboardInterrupt...: a tool error too
            return self.failed(exc)
        plain = json.loads(data, parse_int=loads_int)  # the one decoding: structured content
        content = _text(plain if isinstance(plain, str) else data.decode("utf-8"))
        if self._result is None:
            return types.CallToolResult(content=content), 200
        structured = {"result": plain}
        try:
            self._check_result(data, structured)
        except RequestInvalid as exc:
            log.error(
                "tool %s: %s", self._shape.name, describe_errors(exc.errors, "result mismatch")
            )
            mismatch = "internal error: the result does not match the declared return type"
            return tool_error(mismatch), 500
        return types.CallToolResult(content=content, structured_content=structured), 200

    def _check_result(self, data: bytes, structured: dict[str, Any]) -> None:
        """The result's JSON against its schema; an integer over 4,300 digits, which the
        JSON validator cannot read, is checked as a small one (``json_text.small_ints``)."""
        assert self._result is not None
        try:
            self._result.validate_json(b'{"result":' + data + b"}")
        except RequestInvalid as exc:
            if exc.errors[0]["type"] != "json_invalid":
                raise
            self._result.validate_value(small_ints(structured))

    def failed(self, exc: BaseException) -> Answer:
        """The tool error for a call that raised ``exc`` (logged with its traceback):
        direct mode names the exception type and the first line of its message."""
        if isinstance(exc, LimitRefused):  # the direct-mode limits (``limits``)
            log.warning("tool %s: %s", self._shape.name, exc)
            return tool_error(exc.tool_message), exc.status
        if isinstance(exc, ResultNotJson):
            log.error("tool %s: the result has no JSON form: %s", self._shape.name, exc)
            return tool_error(NOT_JSON_RESULT), 500
        log.error("tool %s failed", self._shape.name, exc_info=exc)
        return tool_error(f"the tool raised {exception_summary(exc)}"), 500


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
        name: Tool(definitions[name], limits.wrap(direct_invoker(function, shape), shape), shape)
        for name, (function, shape) in functions.items()
    }


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
        result, status = await with_progress(ctx, tool.call(params.arguments))
        if metrics is not None:
            metrics.observe(params.name, str(status), perf_counter() - started)
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
