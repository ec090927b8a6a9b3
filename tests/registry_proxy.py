"""A loopback TLS-terminating forwarder in front of the test registry, to inject faults for
real: it can answer one request itself (a 500 to a manifest PUT) or act right after one (another
client retagging the destination between the check and the promotion).

It presents the registry's own certificate (``registry.test``, signed by the stack's CA), so
the name still verifies for the extension and the engine; it forwards to the registry over
TLS verified with the same CA and rewrites the registry's absolute ``Location`` headers to
itself, so the engine's uploads stay on the proxied path. Everything it saw is recorded.
"""

import http.client
import http.server
import ssl
import threading
from collections.abc import Callable
from pathlib import Path

Answer = tuple[int, bytes]
Hook = Callable[[str, str], Answer | None]
After = Callable[[str, str, int], None]
HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class _Handler(http.server.BaseHTTPRequestHandler):
    """One request through the proxy (``proxy``: set on a subclass per proxy)."""

    protocol_version = "HTTP/1.1"
    proxy: "RegistryProxy"

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _body(self) -> bytes | None:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = self.headers.get("Content-Length")
        return self.rfile.read(int(length)) if length else None

    def _handle(self) -> None:
        method, path = self.command, self.path
        if self.proxy.stop_during is not None and self.proxy.stop_during(method, path):
            self.proxy.stop_during = None
            self.rfile.read(1024 * 1024)  # the upload is under way...
            self.proxy.seen.append((method, path, 0))
            self.proxy.stopped.set()
            threading.Thread(target=self.proxy.stop, daemon=True).start()
            self.close_connection = True
            self.connection.close()  # ...and the registry goes away
            return
        body = self._body()
        for hook in self.proxy.before:
            answer = hook(method, path)
            if answer is not None:
                self.proxy.seen.append((method, path, answer[0]))
                self._reply(answer[0], {"Content-Type": "application/json"}, answer[1])
                return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        headers["Host"] = f"{self.proxy.upstream_host}:{self.proxy.upstream_port}"
        conn = http.client.HTTPSConnection(
            self.proxy.upstream_host, self.proxy.upstream_port, context=self.proxy.client_context
        )
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
            out = {k: v for k, v in response.getheaders() if k.lower() not in HOP}
        finally:
            conn.close()
        own = f"https://{self.proxy.upstream_host}:{self.proxy.port}"
        for key, value in list(out.items()):
            if key.lower() == "location":
                out[key] = value.replace(
                    f"https://{self.proxy.upstream_host}:{self.proxy.upstream_port}", own
                )
        self.proxy.seen.append((method, path, response.status))
        self._reply(response.status, out, data)
        for after in self.proxy.after:
            after(method, path, response.status)

    def _reply(self, status: int, headers: dict[str, str], data: bytes) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _handle


class RegistryProxy:
    def __init__(self, upstream: str, state: Path) -> None:
        host, _, port = upstream.rpartition(":")
        self.upstream_host, self.upstream_port = host, int(port)
        self.client_context = ssl.create_default_context(cafile=str(state / "registry/ca.crt"))
        server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_context.load_cert_chain(
            str(state / "registry/server.crt"), str(state / "registry/server.key")
        )
        self.before: list[Hook] = []
        self.after: list[After] = []
        self.seen: list[tuple[str, str, int]] = []
        # "the registry stops in the middle of an upload": the first request this matches has
        # part of its body read, then the connection is cut and the proxy stops listening
        self.stop_during: Callable[[str, str], bool] | None = None
        self.stopped = threading.Event()
        handler = type("Handler", (_Handler,), {"proxy": self})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.server.socket = server_context.wrap_socket(self.server.socket, server_side=True)
        self.port: int = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.closed = False

    @property
    def registry(self) -> str:
        return f"{self.upstream_host}:{self.port}"

    def __enter__(self) -> "RegistryProxy":
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop listening (idempotent): new connections are refused from now on."""
        if not self.closed:
            self.closed = True
            self.server.shutdown()
            self.server.server_close()

    def __exit__(self, *exc: object) -> None:
        self.stop()
