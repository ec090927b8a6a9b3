"""Long tool calls over MCP: progress while they run, and what a cancellation stops.

When the client's request carries a ``progressToken`` and the call is still running after
:data:`PROGRESS_AFTER` seconds, the server sends ``notifications/progress`` every
:data:`PROGRESS_EVERY` seconds with the seconds elapsed (``progress``, rising; no
``total``: a function says nothing of its own progress) and a message saying so; without a
token nothing is sent.

``notifications/cancelled`` is applied by the SDK, which cancels the request's handler:
the call awaited here is cancelled with it. An ``async def`` capability is then cancelled
where it awaits; a sync function runs in a thread nothing can interrupt, so it runs to its
end (its answer is dropped); a call made in a process of its own has that process killed.
"""

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

PROGRESS_AFTER = 1.0
PROGRESS_EVERY = 1.0

T = TypeVar("T")


def progress_token(ctx: Any) -> str | int | None:
    """The request's ``_meta.progressToken``, or ``None``."""
    meta = getattr(ctx, "meta", None)
    if isinstance(meta, Mapping):
        token = meta.get("progress_token", meta.get("progressToken"))
    else:
        token = getattr(meta, "progress_token", None)
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


async def with_progress(ctx: Any, call: Awaitable[T]) -> T:
    """``call``'s result, with progress notifications while it runs long (see the module
    docstring); cancelling this cancels ``call``."""
    token = progress_token(ctx)
    if token is None:
        return await call
    started = time.monotonic()
    task = asyncio.ensure_future(call)
    wait = PROGRESS_AFTER
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=wait)
            if done:
                return task.result()
            elapsed = round(time.monotonic() - started, 1)
            with contextlib.suppress(Exception):  # a client gone: the call still answers
                await ctx.session.send_progress_notification(
                    token,
                    elapsed,
                    None,
                    f"running for {elapsed:g} s",
                    related_request_id=getattr(ctx, "request_id", None),
                )
            wait = PROGRESS_EVERY
    finally:
        if not task.done():
            task.cancel()
