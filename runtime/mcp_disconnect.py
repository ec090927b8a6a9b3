"""MCP over streamable HTTP: a request whose client goes away stops the call it made.

The bundle's HTTP transport is stateless, so a client's
``notifications/cancelled`` arrives as a request of its own that knows nothing of the call
it names; what does reach the server is the abandoned request's connection closing (the
official client closes it when a call is cancelled). :class:`CancelOnDisconnect` watches
for that once the request's body has been read, and cancels the request's handling: an
``async def`` capability is cancelled, a sync one runs to its end in its thread (its answer
is dropped), a call made in a process of its own has that process killed, as a REST call
whose client disconnects.
"""

import asyncio
import contextlib
import logging
from typing import Any

log = logging.getLogger("svc.mcp")


class CancelOnDisconnect:
    """ASGI middleware: a ``POST`` whose client disconnects before the answer is cancelled."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        read = asyncio.Event()  # the whole body has been handed to the app
        gone = asyncio.Event()

        async def tracked() -> Any:
            if read.is_set():  # the app asks again: it hears of the disconnect when it comes
                await gone.wait()
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            elif not message.get("more_body", False):
                read.set()
            return message

        async def watch() -> None:
            await read.wait()
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        answered = False  # the last byte of the answer has gone out

        async def sending(message: Any) -> None:
            nonlocal answered
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True

        handling = asyncio.ensure_future(self.app(scope, tracked, sending))
        watcher = asyncio.ensure_future(watch())
        disconnected = asyncio.ensure_future(gone.wait())
        try:
            await asyncio.wait({handling, disconnected}, return_when=asyncio.FIRST_COMPLETED)
            # the server reports a disconnect once the answer is complete: that is no cancel
            if not handling.done() and not answered:
                handling.cancel()
                with contextlib.suppress(BaseException):
                    await handling
                log.warning("the client disconnected; its call was cancelled")
                return
            await handling
        finally:
            for task in (watcher, disconnected, handling):
                if not task.done():
                    task.cancel()
