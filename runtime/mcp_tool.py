"""One served MCP tool (its definition, the call's validation, its answer) and the tool
errors every transport answers with: what the server (``mcp``) and its stream tools
(``mcp_stream``) share, so each imports it rather than the other.
"""

import asyncio
import json
import logging
from contextvars import ContextVar
from typing import Any

import mcp_types as types
from pydantic_core import to_json

from .calls import CallShape
from .encoding import Invoke, ResultNotJson
from .json_text import loads_int, small_ints
from .limits import LimitRefused
from .validation import RequestInvalid, RequestValidator, TooLarge, check_size

INTERNAL_ERROR = "internal error: the tool failed (details are in the server log)"
NOT_JSON_RESULT = "internal error: the result has no JSON form (details are in the server log)"
# A direct-mode tool error names the exception and the first line of its message, at most
# this many characters (never the traceback: that goes to the server log).
MAX_ERROR_MESSAGE = 300

log = logging.getLogger("svc.mcp")

# The request a tool call answers (a stream reports its items as progress on it).
request_context: ContextVar[Any] = ContextVar("svc_mcp_request", default=None)


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


class Refused(Exception):
    """Arguments a tool refuses before calling anything: the answer says why."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(answer[1])
        self.answer = answer


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

    @property
    def streams(self) -> bool:
        """Whether the tool answers a stream's items (which are then its progress)."""
        return bool(self._shape.stream)

    def bind(self, arguments: dict[str, Any] | None) -> tuple[list[Any], dict[str, Any]]:
        """The call's ``(args, kwargs)``; arguments it refuses raise :class:`Refused`."""
        if self._max_input is not None and arguments:
            try:
                check_size(len(to_json(arguments)), self._max_input, "arguments")
            except TooLarge as exc:  # never reaches the function (a 413 in REST)
                raise Refused((tool_error(f"invalid arguments: {exc}"), 413)) from None
        try:
            values = self._arguments.validate_value({} if arguments is None else arguments)
            return self._shape.bind(values)
        except RequestInvalid as exc:
            answer = tool_error(describe_errors(exc.errors, more=exc.more)), 422
            raise Refused(answer) from None

    async def call(self, arguments: dict[str, Any] | None) -> Answer:
        try:
            args, kwargs = self.bind(arguments)
        except Refused as refused:
            return refused.answer
        try:
            data = await self._invoke(args, kwargs)  # JSON bytes, encoded once
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # SystemExit, KeyboardInterrupt...: a tool error too
            return self.failed(exc)
        return self.answer(data)

    def answer(self, data: bytes) -> Answer:
        """The answer of a result (its JSON bytes), checked against ``outputSchema``."""
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
