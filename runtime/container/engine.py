"""A small blocking client of the Docker Engine HTTP API over its Unix socket.

The standard library only (``http.client`` over ``AF_UNIX``), so a bundle needs no extra
server dependency. ``attach`` hijacks the connection (``Upgrade: tcp``) and returns the raw
socket: stdin is written to it, stdout/stderr come back multiplexed (8-byte frame headers).
"""

import http.client
import json
import os
import socket
from typing import Any
from urllib.parse import quote

API = "/v1.41"
DEFAULT_HOST = "unix:///var/run/docker.sock"


class EngineError(Exception):
    """The engine refused a request or could not be reached (message for the log)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def engine_socket() -> str:
    """The engine's socket path from ``DOCKER_HOST`` (only ``unix://`` is supported)."""
    host = os.environ.get("DOCKER_HOST") or DEFAULT_HOST
    if not host.startswith("unix://"):
        raise EngineError(f"DOCKER_HOST={host!r}: governed OCI execution needs a unix:// socket")
    return host.removeprefix("unix://")


class _Connection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


class Engine:
    def __init__(self, path: str) -> None:
        self.path = path

    def request(
        self, method: str, url: str, body: Any = None, *, timeout: float = 30.0
    ) -> tuple[int, Any]:
        connection = _Connection(self.path, timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {"Content-Type": "application/json"} if data is not None else {}
            connection.request(method, API + url, body=data, headers=headers)
            response = connection.getresponse()
            raw = response.read()
        except OSError as exc:
            raise EngineError(f"engine at {self.path}: {exc.strerror or exc}") from None
        finally:
            connection.close()
        try:
            return response.status, json.loads(raw) if raw.strip() else None
        except ValueError:
            return response.status, raw.decode(errors="replace")

    def ok(self, method: str, url: str, body: Any = None, *, timeout: float = 30.0) -> Any:
        status, value = self.request(method, url, body, timeout=timeout)
        if status >= 300:
            message = value.get("message") if isinstance(value, dict) else value
            raise EngineError(f"{method} {url}: {status} {message}", status)
        return value

    def attach(self, container: str, timeout: float = 30.0) -> tuple[socket.socket, bytes]:
        """The hijacked stdin/stdout stream of ``container`` and any bytes already read."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(self.path)
            sock.sendall(
                (
                    f"POST {API}/containers/{quote(container)}/attach"
                    "?stream=1&stdin=1&stdout=1&stderr=0 HTTP/1.1\r\n"
                    "Host: localhost\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
                    "Content-Length: 0\r\n\r\n"
                ).encode()
            )
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(4096)
                if not chunk:
                    raise EngineError("attach: the engine closed the connection")
                data += chunk
        except OSError as exc:
            sock.close()
            raise EngineError(f"attach: {exc.strerror or exc}") from None
        head, _, rest = data.partition(b"\r\n\r\n")
        status = head.split(b" ", 2)[1:2]
        if status not in ([b"101"], [b"200"]):
            sock.close()
            raise EngineError(f"attach: {head.splitlines()[0].decode(errors='replace')}")
        return sock, rest
