"""A stream capability as an MCP tool (DESIGN §14): the collected items are the result.

The tool's structured result is the list of every item (``{"result": [...]}``), bounded by
the stream limits (``streaming``); when the request carries a ``progressToken``, each item
is also sent as a progress notification as it comes (``progress`` = items so far,
``message`` = the item's JSON, at most :data:`MAX_MESSAGE` characters). A limit, or an
error after some items, is a tool error saying how many items came first. A cancelled
request closes the generator (its ``finally`` blocks run).
"""

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Final

from .calls import CallShape
from .mcp_tool import Answer, Refused, Tool, request_context, tool_error
from .streaming import Open, StreamError, StreamLimits, items_of

MAX_MESSAGE: Final = 1000


def _message(data: bytes) -> str:
    text = data.decode("utf-8")
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


class StreamTool(Tool):
    """A tool whose function is a generator: its items collected, each also a progress
    notification when the client asked for progress."""

    __slots__ = ("_limits", "_open")

    def __init__(
        self,
        definition: dict[str, Any],
        open_stream: Open,
        shape: CallShape,
        *,
        limits: StreamLimits,
        max_input: int | None = None,
    ) -> None:
        super().__init__(definition, _never, shape, max_input=max_input)
        self._open = open_stream
        self._limits = limits

    async def call(self, arguments: dict[str, Any] | None) -> Answer:
        try:
            args, kwargs = self.bind(arguments)
        except Refused as refused:
            return refused.answer
        report = _progress(request_context.get())
        raised: list[BaseException] = []
        items: list[bytes] = []
        error: StreamError | None = None
        try:
            source = await self._open(args, kwargs)
            async with contextlib.aclosing(items_of(source, self._limits, raised.append)) as got:
                async for batch in got:
                    if not isinstance(batch, list):
                        error = batch
                        break
                    for data in batch:
                        items.append(data)
                        if report is not None:
                            await report(len(items), _message(data))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # opening failed: a tool error too
            return self.failed(exc)
        if raised:
            result, status = self.failed(raised[0])
            return _after(result, len(items)), status
        if error is not None:
            return tool_error(f"{error.detail} (after {len(items)} items)"), error.status
        return self.answer(b"[" + b",".join(items) + b"]")


Report = Callable[[int, str], Awaitable[None]]


def _progress(ctx: Any) -> Report | None:
    """How to send one item as progress on the request ``ctx`` answers (the SDK's request
    context), or ``None`` when its client sent no ``progressToken``."""
    meta = getattr(ctx, "meta", None) or {}
    token = meta.get("progress_token") if isinstance(meta, dict) else None
    if token is None:
        return None
    session = ctx.session
    related = None if ctx.request_id is None else str(ctx.request_id)

    async def report(items: int, message: str) -> None:
        await session.send_progress_notification(
            token, items, None, message, related_request_id=related
        )

    return report


def _after(result: Any, items: int) -> Any:
    """A tool error of what a stream raised, saying how many items came before."""
    text = result.content[0].text
    return tool_error(f"{text} (after {items} items)")


async def _never(_args: list[Any], _kwargs: dict[str, Any]) -> bytes:
    raise AssertionError("a stream is opened, never invoked")
