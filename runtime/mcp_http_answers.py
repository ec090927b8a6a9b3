"""How a request to ``/mcp`` is answered: one JSON body, or an SSE stream when the request
asks for progress.

The transport is stateless, so the only channel for a notification about a call is the
response to the request that made it. A JSON body carries the result alone, so a request
whose ``params._meta.progressToken`` is set, from a client whose ``Accept`` takes
``text/event-stream`` (every client must: the streamable HTTP specification), is answered
with an SSE stream instead: the progress notifications (elapsed time, ``mcp_progress``; a
stream's items, ``mcp_stream``) and then the result. Every other request keeps the JSON
answer, which any client reading JSON understands and which holds no connection open.

The SDK fixes the answer's form per session manager, not per request, so there are two,
both stateless over the same server: :class:`JsonOrStream` picks one per request.
"""

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

_TOKEN = b"progressToken"


def wants_progress(body: bytes) -> bool:
    """Whether ``body`` is one JSON-RPC request whose ``params._meta`` holds a
    ``progressToken`` (``null`` is none)."""
    if _TOKEN not in body:  # most requests: no parse
        return False
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and meta.get("progressToken") is not None


def accepts_stream(scope: Any) -> bool:
    """Whether the request's ``Accept`` takes both answers (the SDK's SSE rule)."""
    from mcp.server.streamable_http import check_accept_headers
    from starlette.requests import Request

    has_json, has_sse = check_accept_headers(Request(scope))
    return has_json and has_sse


class JsonOrStream:
    """ASGI app for ``/mcp``: the SSE manager's answer for a ``POST`` that asks for
    progress and accepts it, the JSON manager's for everything else. Its body has been
    read in full already (``mcp_http.BoundedBody``), so reading it here costs nothing;
    it is handed on as it came."""

    def __init__(self, server: Any, security: Any, limit: int) -> None:
        from mcp.server.streamable_http_manager import (
            StreamableHTTPASGIApp,
            StreamableHTTPSessionManager,
        )

        def manager(json_response: bool) -> StreamableHTTPSessionManager:
            return StreamableHTTPSessionManager(
                app=server,
                json_response=json_response,
                stateless=True,
                security_settings=security,
                max_request_body_size=limit,  # the SDK's own limit is 4 MiB
            )

        self._json, self._stream = manager(True), manager(False)
        self._json_app = StreamableHTTPASGIApp(self._json)
        self._stream_app = StreamableHTTPASGIApp(self._stream)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Both managers running (the app's lifespan)."""
        async with self._json.run(), self._stream.run():
            yield

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self._json_app(scope, receive, send)
            return
        first = await receive()
        body = first.get("body", b"") if not first.get("more_body", False) else b""
        stream = first["type"] == "http.request" and wants_progress(body)
        app = self._stream_app if stream and accepts_stream(scope) else self._json_app
        given = False

        async def replay() -> Any:
            nonlocal given
            if given:
                return await receive()
            given = True
            return first

        await app(scope, replay, send)
