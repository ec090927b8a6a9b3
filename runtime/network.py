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
destination (stderr, the lines of one turn of the event loop in one flushed write) takes the
finished line directly, without building a ``LogRecord`` per request, which cost a quarter
of the server's throughput.
"""

import asyncio
import contextlib
import ipaddress
import itertools
import logging
import os
import re
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from time import perf_counter
from typing import Any, TextIO
from urllib.parse import urlsplit

from .auth import TOKENS_ENV, Tokens, bearer, load_tokens
from .metrics import Metrics, current
from .oauth import METADATA_PATH, OAuth, load_oauth
from .tracing import ServerSpans, server_spans

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
_FORBIDDEN = b'{"detail":"Insufficient scope"}'
_HOST = re.compile(rb"[A-Za-z0-9.\-]{1,253}(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?")
Refusal = tuple[int, bytes, list[tuple[bytes, bytes]]]

# the label of each status code a call may end with, made once
_STATUS = {code: str(code) for code in range(100, 600)}

access_log = logging.getLogger("svc.access")
log = logging.getLogger("svc.network")
ACCESS_LINE = '%s "%s %s" %d %.1fms request_id=%s'


class RequestIds:
    """Request ids for requests that bring none: 24 hex digits, a random prefix per process
    (drawn again in a forked child) and a counter, so that an id costs no system call.
    They need to be unique, not secret: a client may send its own."""

    def __init__(self) -> None:
        self._draw()
        os.register_at_fork(after_in_child=self._draw)

    def _draw(self) -> None:
        self._prefix = os.urandom(6).hex().encode()
        self._next = itertools.count(int.from_bytes(os.urandom(3), "big")).__next__

    def new(self) -> bytes:
        return b"%b%012x" % (self._prefix, self._next())


_request_ids = RequestIds()


def _printable(path: str) -> str:
    """The path as the access line quotes it, with Python's escapes for ``\\``, control and
    other unprintable characters and ``"`` (``\\x22``, as nginx writes it), at most 256
    characters (then ``...``): a reader splitting the line on its quotes finds the status
    where the server wrote it, whatever the client put in the path (``%22`` is a ``"``)."""
    if path.isprintable() and '"' not in path and "\\" not in path:
        text = path
    else:
        text = path.encode("unicode_escape").decode("ascii").replace('"', "\\x22")
    return text if len(text) <= 256 else text[:256] + "..."


def _identity(headers: Iterable[tuple[bytes, bytes]]) -> tuple[bytes, bytes | None]:
    """The request's id (its own when well formed, else a new one) and its credentials."""
    request_id = authorization = None
    for name, value in headers:
        if name == b"x-request-id":
            request_id = value
        elif name == b"authorization":
            authorization = value
    if request_id is None or _REQUEST_ID.fullmatch(request_id) is None:
        request_id = _request_ids.new()
    return request_id, authorization


class NetworkLayer:
    """The layer around an ASGI app; attribute access falls through to the app."""

    def __init__(
        self,
        app: App,
        *,
        capabilities: Mapping[str, str],
        tokens: Tokens | None,
        metrics: Metrics | None,
        oauth: OAuth | None = None,
        resource_path: str = "",
        spans: ServerSpans | None = None,
    ) -> None:
        self.app = app
        self._capabilities = dict(capabilities)
        self._tokens = tokens
        self._metrics = metrics
        self._oauth = oauth
        self._resource_path = resource_path
        self._spans = spans  # tracing (``tracing``): None when off
        self._open = tokens is None and oauth is None  # nothing to check per request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id, authorization = _identity(scope["headers"])
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
        spans = self._spans
        if spans is not None:
            span, token = spans.start(scope, method, path, request_id)
        started = perf_counter()
        if metrics is not None:
            metrics.enter()
        try:
            refusal = (
                None if self._open else await self._refused(scope, path, method, authorization)
            )
            if refusal is not None:
                await _respond(answer, *refusal)
            elif metrics is not None and path == METRICS and method == "GET":
                body, media = metrics.exposition()
                await _respond(answer, 200, body, [(b"content-type", media.encode())])
            else:
                await self.app(scope, receive, answer)
        except BaseException as exc:
            if spans is not None:
                span.record_exception(exc)
            raise
        finally:
            elapsed = perf_counter() - started
            capability = self._capabilities.get(path) if method == "POST" else None
            if metrics is not None:
                metrics.leave()
                if capability is not None:  # a stream: its outcome, once, at its end
                    outcome = scope.get("svc.outcome") or status or 500
                    metrics.observe(capability, _STATUS.get(outcome) or str(outcome), elapsed)
            if access_log.isEnabledFor(logging.INFO):
                client = scope.get("client")
                _log_access(
                    f"{client[0]}:{client[1]}" if client else "-",
                    method,
                    path if capability is not None else _printable(path),
                    status,
                    elapsed * 1000,
                    request_id.decode("ascii"),
                )
            if spans is not None:
                spans.end(span, token, status, scope.get("svc.outcome") or status or 500)

    async def _refused(
        self, scope: Scope, path: str, method: str, authorization: bytes | None
    ) -> Refusal | None:
        """What to answer instead of the app when tokens or OAuth are on, or ``None``."""
        if self._oauth is None:
            return self._refusal(path, method, authorization)
        return await self._oauth_refusal(scope, path, method, authorization)

    def _refusal(self, path: str, method: str, authorization: bytes | None) -> Refusal | None:
        """The 401 to answer, or ``None`` when the request may pass (static tokens only)."""
        if self._tokens is None or (path == HEALTH and method == "GET"):
            return None
        token = bearer(authorization)
        if token is None:
            return 401, _UNAUTHORIZED, [_JSON, _CHALLENGE]
        return None if self._tokens.accepts(token) else (401, _UNAUTHORIZED, [_JSON, _INVALID])

    async def _oauth_refusal(
        self, scope: Scope, path: str, method: str, authorization: bytes | None
    ) -> Refusal | None:
        """What to answer instead of the app with OAuth on: the open metadata document, a
        401 pointing at it, a 403 naming the missing scopes, or ``None`` (pass). A static
        token from ``SVC_AUTH_TOKENS_FILE`` still passes: both kinds of client coexist."""
        oauth = self._oauth
        assert oauth is not None
        if method == "GET":
            if path == HEALTH:
                return None
            if path == METADATA_PATH or path.startswith(METADATA_PATH + "/"):
                return 200, oauth.metadata(self._resource(scope)), [_JSON]
        token = bearer(authorization)
        if token is not None and self._tokens is not None and self._tokens.accepts(token):
            return None
        claims = None if token is None else await oauth.claims(token)
        if claims is None:
            error = b"" if token is None else b'error="invalid_token", '
            return 401, _UNAUTHORIZED, [_JSON, self._challenge(scope, error)]
        capability = self._capabilities.get(path) if method == "POST" else None
        missing = oauth.missing_scopes(claims, capability)
        if missing:
            error = b'error="insufficient_scope", scope="' + " ".join(missing).encode() + b'", '
            return 403, _FORBIDDEN, [_JSON, self._challenge(scope, error)]
        return None

    def _resource(self, scope: Scope) -> str:
        """This server's resource identifier: configured, else the URL the client dialled
        (its ``Host`` when well formed, else the listening address)."""
        oauth = self._oauth
        assert oauth is not None
        if oauth.resource is not None:
            return oauth.resource
        host = next((v for k, v in scope["headers"] if k == b"host"), None)
        if host is None or _HOST.fullmatch(host) is None:
            server = scope.get("server") or ("localhost", None)
            name = f"[{server[0]}]" if ":" in str(server[0]) else str(server[0])
            text = name if server[1] is None else f"{name}:{server[1]}"
        else:
            text = host.decode("ascii")
        return f"{scope.get('scheme', 'http')}://{text}{self._resource_path}"

    def _challenge(self, scope: Scope, error: bytes) -> tuple[bytes, bytes]:
        """``WWW-Authenticate`` naming the metadata document (MCP authorization, RFC 9728)."""
        parts = urlsplit(self._resource(scope))
        url = f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{parts.path.rstrip('/')}"
        return (
            b"www-authenticate",
            b"Bearer " + error + b'resource_metadata="' + url.encode() + b'"',
        )

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
    """The default access log handler: each line as it is, on stderr. On an event loop the
    lines one turn of the loop finished are written together at its end, in one flushed
    write: every write lets the threads running sync calls take the interpreter, and a
    write per line cost a fifth of a small request's time. Elsewhere (no running loop) a line
    is written and flushed at once; :meth:`flush` (logging's shutdown calls it) writes what
    is pending."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self._plain = logging.Formatter("%(message)s")
        self.setFormatter(self._plain)
        self._pending: list[str] = []

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
        """What ``emit`` writes for a record of that message: whole, flushed, under the
        handler's lock (at the end of the loop's turn when a loop runs); a failed write is
        reported as logging reports one."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._write(line + self.terminator, line)
            return
        with self.lock or contextlib.nullcontext():  # one loop per thread may write here
            self._pending.append(line)
            first = len(self._pending) == 1
        if first:
            loop.call_soon(self.flush)

    def flush(self) -> None:
        with self.lock or contextlib.nullcontext():
            lines, self._pending = self._pending, []
        if lines:
            self._write(self.terminator.join(lines) + self.terminator, lines[0])
        super().flush()

    def _write(self, text: str, first: str) -> None:
        self.acquire()
        try:
            self.stream.write(text)
            self.stream.flush()
        except Exception:
            self.handleError(logging.makeLogRecord({"msg": first, "name": access_log.name}))
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


def warn_if_exposed(
    host: str | None, tokens: Tokens | None, prefix: str, oauth: OAuth | None = None
) -> None:
    """One warning line when a server listens beyond loopback with nobody asked for a token."""
    if tokens is None and oauth is None and host is not None and not is_loopback(host):
        log.warning(
            "%s: listening on %s without %s: anyone who can reach it can call every capability",
            prefix,
            host,
            TOKENS_ENV,
        )


def listening_hosts() -> list[str]:
    """The addresses of this process's listening TCP sockets (from its open file
    descriptors: ``/proc/self/fd``, else ``/dev/fd``), in descriptor order; empty where
    neither lists them or none is bound yet."""
    import socket
    import stat

    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            fds = sorted(int(name) for name in os.listdir(folder) if name.isdigit())
        except OSError:
            continue
        break
    else:
        return []
    hosts: list[str] = []
    for fd in fds:
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            with socket.socket(fileno=os.dup(fd)) as sock:  # its own descriptor: closed here
                if sock.family not in (socket.AF_INET, socket.AF_INET6):
                    continue
                if sock.type != socket.SOCK_STREAM or not sock.getsockopt(
                    socket.SOL_SOCKET, socket.SO_ACCEPTCONN
                ):
                    continue
                host = sock.getsockname()[0]
        except OSError:
            continue
        if host not in hosts:
            hosts.append(host)
    return hosts


def bound_host() -> str | None:
    """The address a server of this process listens on, from its bound sockets: gunicorn
    and uvicorn's supervisor bind before the application is imported, and name no
    ``--host``. Plain ``uvicorn`` binds after: its command line says where
    (:func:`uvicorn_host`). Of these, one beyond loopback if any (the one the warning is
    about)."""
    hosts = [*listening_hosts(), uvicorn_host()]
    return next((h for h in hosts if h is not None and not is_loopback(h)), hosts[0])


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
    app: App,
    *,
    capabilities: Mapping[str, str],
    host: str | None,
    prefix: str,
    resource_path: str = "",
) -> App:
    """``app`` behind the layer, configured from the environment; a bad tokens file or
    OAuth setting is a :class:`StartupError` (raised before anything is served).
    ``resource_path`` is where the protected resource lives (``/mcp`` for MCP). With
    tracing on, a span per request (``tracing``; nothing of it when off)."""
    tokens = load_tokens()
    oauth = load_oauth(capabilities=frozenset(capabilities.values()) if capabilities else None)
    warn_if_exposed(host, tokens, prefix, oauth)
    _enable_access_log()
    return NetworkLayer(
        app,
        capabilities=capabilities,
        tokens=tokens,
        metrics=current(),
        oauth=oauth,
        resource_path=resource_path,
        spans=server_spans(capabilities),
    )
