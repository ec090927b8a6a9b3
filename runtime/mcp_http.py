"""MCP over streamable HTTP: the same server as over stdio, at ``/mcp``, with the SDK's
transport.

``python server.py`` speaks stdio (nothing here changes that);
``python server.py --transport streamable-http --host H --port P`` serves the tools the
stdio server serves (same validation, results, tool errors, startup integrity checks, in
every execution mode) through the SDK's session managers: stateless (a fresh transport per
request: any replica answers any request, and nothing grows with the number of clients),
JSON responses (an SSE one to a request that asks for progress, so that its notifications
reach the client: ``mcp_http_answers``), and the SDK's DNS-rebinding protection always on.
Allowed ``Host`` values are loopback, the bound address, and whatever ``--allowed-hosts`` or
``SVC_MCP_ALLOWED_HOSTS`` add (comma-separated; ``name`` allows it on any port,
``name:port`` on that port only); a request with any other ``Host`` is refused (421) before
it reaches a tool, and an ``Origin`` is accepted only for an allowed host. ``GET /health``,
bearer tokens, ``/metrics`` and request ids are the REST server's (``network``), and so are
the body limit (``SVC_MAX_BODY_BYTES``, 413) and deadlines (408: :class:`BoundedBody`); one
process serves (run one per pod, or several pods: the transport keeps no session).
"""

import argparse
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .bodies import BodyReader, BodyTimeout, body_reader
from .integrity import exit_on_startup_error
from .mcp_disconnect import CancelOnDisconnect
from .mcp_http_answers import JsonOrStream
from .network import is_loopback, network_layer
from .validation import TooLarge, check_size, max_body_bytes

ALLOWED_HOSTS_ENV = "SVC_MCP_ALLOWED_HOSTS"
MCP_PATH = "/mcp"
DEFAULT_PORT = 8000
TRANSPORTS = ("stdio", "streamable-http")
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def parse_options(argv: list[str]) -> argparse.Namespace:
    """``server.py``'s command line; a mistake is argparse's usage line and exit 2."""
    parser = argparse.ArgumentParser(
        prog="server.py", description="The bundle's MCP server (stdio unless told otherwise)."
    )
    parser.add_argument("--transport", choices=TRANSPORTS, default="stdio")
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help=f"port to listen on (default {DEFAULT_PORT})")
    parser.add_argument(
        "--allowed-hosts",
        metavar="NAMES",
        help=f"Host header values to accept besides loopback (also ${ALLOWED_HOSTS_ENV})",
    )
    options = parser.parse_args(argv)
    http_only = [f for f in ("host", "port", "allowed_hosts") if getattr(options, f) is not None]
    if options.transport == "stdio" and http_only:
        flags = ", ".join("--" + f.replace("_", "-") for f in http_only)
        parser.error(f"{flags}: only with --transport streamable-http")
    if options.port is not None and not 0 < options.port < 65536:
        parser.error(f"--port {options.port}: expected 1-65535")
    return options


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def allowed_hosts(host: str, extra: str | None) -> list[str]:
    """The ``Host`` values the transport accepts (the SDK's ``name:*`` means any port)."""
    names = [*_LOOPBACK_HOSTS]
    if not is_loopback(host) and host not in ("0.0.0.0", "::", ""):
        names.append(_bracketed(host))
    for source in (extra, os.environ.get(ALLOWED_HOSTS_ENV)):
        names += [n.strip() for n in (source or "").split(",") if n.strip()]
    allowed: list[str] = []
    for name in names:
        has_port = name.rsplit("]", 1)[-1].count(":") == 1 if name.startswith("[") else ":" in name
        for value in (name,) if has_port else (name, f"{name}:*"):
            if value not in allowed:
                allowed.append(value)
    return allowed


def transport_security(host: str, extra: str | None) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = allowed_hosts(host, extra)
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class BoundedBody:
    """The request body read in full, at most ``limit`` bytes (``SVC_MAX_BODY_BYTES``, the
    one size rule of ``validation``) and within its deadlines (``bodies``), before the
    SDK sees it (the SDK's transport has its own limit, which is set to the same one). Over
    the limit (announced or read) is the REST server's 413, and a body that did not arrive
    in time its 408, each with a JSON-RPC error as the body (:func:`_error_body`).
    ``GET /mcp`` is 405 once the SDK's host and origin check passed: the server is
    stateless and offers no server-to-client stream (the SDK opened one that never ended).

    A body for ``/mcp`` that is not one valid message is answered here (:func:`_refusal`),
    but only once the SDK's transport would read it: with ``security`` (its own Host,
    Origin and Content-Type rule, :func:`transport_security`) and an ``Accept`` it takes.
    Otherwise the SDK's answer stands (421, 403, 406): a batch from a host that is not
    allowed was answered 400 for its body, where the SDK refuses the host."""

    def __init__(self, app: Any, bodies: BodyReader, security: Any = None) -> None:
        from mcp.server.transport_security import TransportSecurityMiddleware

        self.app = app
        self._bodies = bodies
        self._security = TransportSecurityMiddleware(security)
        self._too_large = _error_body(
            f"Invalid request: the message is over {bodies.limit} bytes"  # stdio's words
        )
        self._late = _error_body("Request Timeout: the request body did not arrive in time")
        self._no_stream = _error_body(
            "Method Not Allowed: the server is stateless and offers no stream"
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            if scope.get("method") == "GET" and scope["path"].rstrip("/") == MCP_PATH:
                await self._get(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        try:
            body = await self._read(scope, receive)
        except TooLarge:
            await _answer(send, 413, self._too_large)
            return
        except BodyTimeout:
            await _answer(send, 408, self._late, _CLOSE)
            return
        if body is None:
            return  # the client went away
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()  # a disconnect, later
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        if scope["path"].rstrip("/") == MCP_PATH and await self._answered(
            scope, body, replay, send
        ):
            return
        await self.app(scope, replay, send)

    async def _answered(self, scope: Any, body: bytes, receive: Any, send: Any) -> bool:
        """Whether this request to ``/mcp`` has been answered here: refused on its headers
        by the SDK's own security rule (answered as the SDK answers it; asking twice would
        log its warning twice), or, if the SDK's transport would read its body, refused for
        that body (:func:`_refusal`). An ``Accept`` the SDK refuses is left to it (406)."""
        from mcp.server.streamable_http import check_accept_headers
        from starlette.requests import Request

        request = Request(scope)
        refused = await self._security.validate_request(request, is_post=True)
        if refused is not None:
            await refused(scope, receive, send)
            return True
        accepts_json, _ = check_accept_headers(request)  # both answers' managers require it
        if not accepts_json:
            return False
        refusal = _refusal(body)
        if refusal is None:
            return False
        await _answer(send, 400, refusal)
        return True

    async def _get(self, scope: Any, receive: Any, send: Any) -> None:
        """``GET /mcp``: the SDK's answer to a host or origin it refuses, else 405."""
        from starlette.requests import Request

        refused = await self._security.validate_request(Request(scope), is_post=False)
        if refused is not None:
            await refused(scope, receive, send)
            return
        await _answer(send, 405, self._no_stream, _ALLOW_POST)

    async def _read(self, scope: Any, receive: Any) -> bytes | None:
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit():
                check_size(int(value), self._bodies.limit)
        return await self._bodies.read(receive)


def _refusal(body: bytes) -> bytes | None:
    """The JSON-RPC error answering a body that is not one valid message, by stdio's rule
    (``mcp_stdio.to_message``), or ``None``: the SDK's transport left a batch and a request
    with a ``null`` or fractional id unanswered (a 202, or a 400 with a multi-line
    validation error), and took ``NaN`` and lone surrogates. A response or notification
    stdio would drop is answered too: over HTTP a 400 is the answer to a refused body."""
    import mcp_types

    from .mcp_stdio import rpc_error, to_message

    message, error = to_message(body)
    if message is not None:
        return None
    if error is None:
        why = "Invalid request: not a JSON-RPC message"
        error = rpc_error(None, mcp_types.INVALID_REQUEST, why)
    return error.model_dump_json(by_alias=True, exclude_unset=True).encode()


def _error_body(message: str) -> bytes:
    """A JSON-RPC error with id ``null`` (the body was not read, or not in full):
    ``-32600``, as stdio answers a message it cannot take."""
    import mcp_types

    from .mcp_stdio import rpc_error

    error = rpc_error(None, mcp_types.INVALID_REQUEST, message)
    return error.model_dump_json(by_alias=True, exclude_unset=True).encode()


# The rest of a late body may still come: the connection ends with the answer.
_CLOSE = ((b"connection", b"close"),)
_ALLOW_POST = ((b"allow", b"POST"),)


async def _answer(
    send: Any, status: int, body: bytes, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def serve_http(
    bundle: Path,
    create_server: Callable[[Path, Any], Any],
    tools_of: Any,
    options: argparse.Namespace,
) -> None:
    """Verify and build exactly as over stdio, then serve ``/mcp`` until SIGTERM/SIGINT."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    host = options.host or "127.0.0.1"
    port = options.port or DEFAULT_PORT
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    with exit_on_startup_error("svc-mcp"):
        limit = max_body_bytes()
        server = create_server(bundle, tools_of)  # counts its calls (``metrics``)

        async def health(_request: Any) -> JSONResponse:
            return JSONResponse({"status": "ok"})

        security = transport_security(host, options.allowed_hosts)
        mcp = JsonOrStream(server, security, limit)
        app = Starlette(
            routes=[Route(MCP_PATH, mcp), Route("/health", health, methods=["GET"])],
            lifespan=lambda _app: mcp.running(),
        )
        bounded = BoundedBody(CancelOnDisconnect(app), body_reader(limit), security)
        served = network_layer(
            bounded, capabilities={}, host=host, prefix="svc-mcp", resource_path=MCP_PATH
        )
    config = uvicorn.Config(
        served, host=host, port=port, access_log=False, lifespan="on", log_level="info"
    )
    uvicorn.Server(config).run()
