"""What every HTTP server of a bundle does around its routes (REST, MCP over HTTP).

One raw ASGI layer, so a request pays for it once and no framework middleware stack: an
``X-Request-ID`` is taken from the request when it is 1 to 128 of ``A-Z a-z 0-9 . _ : -``
(anything else is replaced, never echoed) or generated, echoed on the response and written
in the access log line; with ``SVC_AUTH_TOKENS_FILE`` every request but ``GET /health``
needs ``Authorization: Bearer <token>`` (else 401, ``WWW-Authenticate: Bearer``, the JSON
error body); ``GET /metrics`` is the Prometheus exposition (see ``metrics``), and capability
calls are counted and timed. The interface documents never mention any of it: they describe
the capabilities, which are the same whoever deploys them and however.

The access log line holds the client address, method, path (escaped, bounded), status,
duration and request id; never a header value, a query string or a body. It goes through the
``svc.access`` logger, so an embedding program can configure it like any other; the default
destination (stderr, one flushed line per request) takes the finished line directly, without
building a ``LogRecord`` per request, which cost a quarter of the server's throughput.
"""

import ipaddress
import logging
import os
import re
import sys
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from time import perf_counter
from typing import Any, TextIO

from .auth import TOKENS_ENV, Tokens, bearer, load_tokens
from .metrics import Metrics, current

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

HEALTH = "/health"
METRICS = "/metrics"
_REQUEST_ID = re.compile(rb"[A-Za-z0-9._:\-]{1,128}")
_JSON = (b"content-type", b"application/json")
_UNAUTHORIZED = b'{"detail":"Not authenticated"}'
_CHALLENGE = (b"www-authenticate", b"Bearer")
_INVALID = (b"www-authenticate", b'Bearer error="invalid_token"')

access_log = logging.getLogger("svc.access")
log = logging.getLogger("svc.network")
ACCESS_LINE = '%s "%s %s" %d %.1fms request_id=%s'


def _printable(path: str) -> str:
    text = path if path.isprintable() else path.encode("unicode_escape").decode("ascii")
    return text if len(text) <= 256 else text[:256] + "..."


class NetworkLayer:
    """The layer around an ASGI app; attribute access falls through to the app."""

    def __init__(
        self,
        app: App,
        *,
        capabilities: Mapping[str, str],
        tokens: Tokens | None,
        metrics: Metrics | None,
    ) -> None:
        self.app = app
        self._capabilities = dict(capabilities)
        self._tokens = tokens
        self._metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = authorization = None
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                request_id = value
            elif name == b"authorization":
                authorization = value
        if request_id is None or _REQUEST_ID.fullmatch(request_id) is None:
            request_id = os.urandom(12).hex().encode()
        echo = (b"x-request-id", request_id)
        status = 0

        async def answer(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), echo]
            await send(message)

        path, method = scope["path"], scope["method"]
        root = scope.get("root_path")
        if root and path.startswith(root):
            path = path[len(root) :]
        metrics = self._metrics
        started = perf_counter()
        if metrics is not None:
            metrics.in_flight.inc()
        try:
            refusal = self._refusal(path, method, authorization)
            if refusal is not None:
                await _respond(answer, 401, _UNAUTHORIZED, [_JSON, refusal])
            elif metrics is not None and path == METRICS and method == "GET":
                body, media = metrics.exposition()
                await _respond(answer, 200, body, [(b"content-type", media.encode())])
            else:
                await self.app(scope, receive, answer)
        finally:
            elapsed = perf_counter() - started
            if metrics is not None:
                metrics.in_flight.dec()
                capability = self._capabilities.get(path) if method == "POST" else None
                if capability is not None:  # a stream: its outcome, once, at its end
                    outcome = scope.get("svc.outcome") or status or 500
                    metrics.observe(capability, str(outcome), elapsed)
            if access_log.isEnabledFor(logging.INFO):
                client = scope.get("client")
                _log_access(
                    f"{client[0]}:{client[1]}" if client else "-",
                    method,
                    _printable(path),
                    status,
                    elapsed * 1000,
                    request_id.decode("ascii"),
                )

    def _refusal(
        self, path: str, method: str, authorization: bytes | None
    ) -> tuple[bytes, bytes] | None:
        """The challenge header of a 401, or ``None`` when the request may pass."""
        if self._tokens is None or (path == HEALTH and method == "GET"):
            return None
        token = bearer(authorization)
        if token is None:
            return _CHALLENGE
        return None if self._tokens.accepts(token) else _INVALID

    def __getattr__(self, name: str) -> Any:
        if name == "app":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.app, name)


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class AccessLines(logging.StreamHandler[TextIO]):
    """The default access log handler: each line as it is, on stderr, flushed."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self._plain = logging.Formatter("%(message)s")
        self.setFormatter(self._plain)

    def sole_sink_of(self, logger: logging.Logger) -> bool:
        """Whether an INFO line of ``logger`` reaches this handler and nothing else, as its
        bare message: then nothing but the finished text is needed (checked per line, so a
        program that adds a handler or a filter later gets the ordinary records)."""
        handlers = logger.handlers
        return (
            len(handlers) == 1
            and handlers[0] is self
            and not logger.propagate
            and not logger.disabled
            and not logger.filters
            and not self.filters
            and self.level <= logging.INFO
            and self.formatter is self._plain
        )

    def write_line(self, line: str) -> None:
        """What ``emit`` writes for a record of that message, and how: whole, flushed, under
        the handler's lock; a failed write is reported as logging reports one."""
        self.acquire()
        try:
            self.stream.write(line + self.terminator)
            self.stream.flush()
        except Exception:
            self.handleError(logging.makeLogRecord({"msg": line, "name": access_log.name}))
        finally:
            self.release()


def _log_access(*fields: Any) -> None:
    """One access line (:data:`ACCESS_LINE` of ``fields``), straight to the default handler
    when it is the only destination, else as a record through the logger."""
    handlers = access_log.handlers
    if handlers and isinstance(handlers[0], AccessLines) and handlers[0].sole_sink_of(access_log):
        handlers[0].write_line(ACCESS_LINE % fields)
    else:
        access_log.info(ACCESS_LINE, *fields)


def _enable_access_log() -> None:
    """One line per request on stderr, unless the embedding program configured it."""
    if not access_log.handlers and os.environ.get("SVC_ACCESS_LOG", "1") != "0":
        access_log.addHandler(AccessLines(sys.stderr))
        access_log.setLevel(logging.INFO)
        access_log.propagate = False


def is_loopback(host: str) -> bool:
    """Whether a bind address only listens on this machine (``localhost``, 127/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def warn_if_exposed(host: str | None, tokens: Tokens | None, prefix: str) -> None:
    """One warning line when a server listens beyond loopback with nobody asked for a token."""
    if tokens is None and host is not None and not is_loopback(host):
        log.warning(
            "%s: listening on %s without %s: anyone who can reach it can call every capability",
            prefix,
            host,
            TOKENS_ENV,
        )


def uvicorn_host(argv: list[str] | None = None) -> str | None:
    """The address uvicorn was told to bind (``--host``, ``UVICORN_HOST``; default
    loopback), read from the command line the server was started with."""
    args = sys.argv if argv is None else argv
    for i, arg in enumerate(args):
        if arg == "--host" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--host="):
            return arg.split("=", 1)[1]
    return os.environ.get("UVICORN_HOST", "127.0.0.1")


def network_layer(
    app: App, *, capabilities: Mapping[str, str], host: str | None, prefix: str
) -> NetworkLayer:
    """``app`` behind the layer, configured from the environment; a bad tokens file is a
    :class:`StartupError` (raised before anything is served)."""
    tokens = load_tokens()
    warn_if_exposed(host, tokens, prefix)
    _enable_access_log()
    return NetworkLayer(app, capabilities=capabilities, tokens=tokens, metrics=current())
