"""Third hostile pass over the generated servers' wire (issue 38), with real servers on
loopback: MCP over streamable HTTP takes what stdio takes, a request body that stops arriving
is answered 408 and its bytes are freed, ``GET /mcp`` is 405, an access line cannot be forged,
and a tokens setting that is empty or a public bind under gunicorn is never silent."""

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import ROOT
from servers import Server, free_port, generate, serving, serving_mcp_http, spawn
from test_hostile_requests import rss_kib

SHAPES = ROOT / "examples" / "shapes.py"
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
MIB = 1024 * 1024
# Small deadlines, so that a stalled body is answered within a second or two.
DEADLINES = {"SVC_BODY_IDLE_TIMEOUT": "0.5", "SVC_BODY_TIMEOUT": "2"}


@pytest.fixture(scope="module")
def rest_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wire3") / "rest"
    generate(SHAPES, out)
    return out


@pytest.fixture(scope="module")
def mcp_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wire3") / "mcp"
    generate(SHAPES, out, interface="mcp")
    return out


@pytest.fixture(scope="module")
def rest_server(rest_bundle: Path) -> Iterator[Server]:
    with serving(rest_bundle, DEADLINES) as server:
        yield server


@pytest.fixture(scope="module")
def mcp_server(mcp_bundle: Path) -> Iterator[Server]:
    with serving_mcp_http(mcp_bundle, DEADLINES) as server:
        yield server


def describe_call(ident: int, size: int) -> bytes:
    """A valid ``tools/call`` of ``size`` bytes or a little more (a string argument)."""
    arguments = {"shape": "x" * size, "precision": 12}
    message = {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
               "params": {"name": "describe", "arguments": arguments}}  # fmt: skip
    return json.dumps(message).encode()


# -- 5. MCP over HTTP takes what stdio takes ------------------------------------------------


def test_mcp_over_http_takes_a_message_as_large_as_stdio_does(mcp_server: Server) -> None:
    """The SDK's transport has its own 4 MiB limit (a plain-text 413); the documented one
    is ``SVC_MAX_BODY_BYTES`` (16 MiB), and what is over it is a JSON-RPC error."""
    with httpx.Client(base_url=mcp_server.url, timeout=60) as client:
        taken = client.post("/mcp", content=describe_call(5, 5 * MIB), headers=MCP_HEADERS)
        refused = client.post("/mcp", content=describe_call(17, 17 * MIB), headers=MCP_HEADERS)
    assert taken.status_code == 200, taken.text[:200]
    answer = taken.json()
    assert answer["id"] == 5
    assert answer["result"]["content"][0]["text"] == "'" + "x" * 11
    assert refused.status_code == 413
    assert refused.headers["content-type"] == "application/json"
    error = refused.json()
    assert error["jsonrpc"] == "2.0"
    assert error["id"] is None
    assert error["error"]["code"] == -32600
    assert f"over {16 * MIB} bytes" in error["error"]["message"]


# -- 6. bodies have a deadline --------------------------------------------------------------


def _head(path: str, length: int, host: str = "127.0.0.1") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\ncontent-length: {length}\r\n\r\n"
    ).encode()


def _connect(server: Server) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def _status(sock: socket.socket) -> tuple[int, bytes]:
    """The status of the answer on ``sock`` and what was read of it (until it closes)."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            raise AssertionError(f"no answer; read so far: {data[:200]!r}") from None
        if not chunk:
            break
        data += chunk
    assert data.startswith(b"HTTP/1.1 "), data[:200]
    return int(data[9:12]), data


@pytest.mark.parametrize("interface", ["rest", "mcp"])
def test_a_body_that_stops_arriving_is_408_after_the_pause_bound(
    interface: str, rest_server: Server, mcp_server: Server
) -> None:
    server, path = (rest_server, "/capabilities/describe") if interface == "rest" else (
        mcp_server, "/mcp")  # fmt: skip
    with _connect(server) as sock:
        sock.sendall(_head(path, 1000) + b'{"shape": "')
        started = time.monotonic()
        status, answer = _status(sock)  # the server closes the connection after it
        waited = time.monotonic() - started
    assert status == 408
    assert 0.4 < waited < 4, waited
    assert b"connection: close" in answer.lower()
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    if interface == "mcp":
        assert body["error"]["code"] == -32600
        assert "body" in body["error"]["message"]
    else:
        assert "body" in body["detail"]


@pytest.mark.parametrize("interface", ["rest", "mcp"])
def test_a_body_that_trickles_is_408_after_the_total_bound(
    interface: str, rest_server: Server, mcp_server: Server
) -> None:
    """A byte every 0.2 s never pauses for the pause bound; the total bound ends it."""
    server, path = (rest_server, "/capabilities/describe") if interface == "rest" else (
        mcp_server, "/mcp")  # fmt: skip
    with _connect(server) as sock:
        sock.sendall(_head(path, 1000) + b'{"shape": "')
        started = time.monotonic()
        sock.settimeout(0.2)
        while time.monotonic() - started < 6:
            try:
                sock.send(b"x")
            except OSError:
                break  # answered and closed
            try:
                if sock.recv(1, socket.MSG_PEEK):
                    break
            except TimeoutError:
                continue
        waited = time.monotonic() - started
        sock.settimeout(10)
        status, _ = _status(sock)
    assert status == 408
    assert 1.8 < waited < 5, waited


def test_twenty_bodies_stalled_near_the_limit_are_freed(rest_bundle: Path) -> None:
    """Twenty clients that stop two bytes short of 16 MiB held 320 MB for as long as they
    kept the connection open; now each is answered 408 and the server's memory comes back.
    (A pause bound of 4 s: all twenty are held at once before the first is given up.)"""
    deadlines = {"SVC_BODY_IDLE_TIMEOUT": "4", "SVC_BODY_TIMEOUT": "30"}
    with serving(rest_bundle, deadlines) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:  # warm the server
            assert client.post("/capabilities/describe", json={"shape": 1}).status_code == 200
        pid = server.proc.pid
        before = rss_kib(pid)
        length = 16 * MIB
        body = b'{"shape": "' + b"x" * (length - 13)  # 2 bytes short: '"}'
        clients = [_connect(server) for _ in range(20)]
        try:
            for sock in clients:
                sock.sendall(_head("/capabilities/describe", length) + body)
            held = rss_kib(pid) - before
            statuses = [_status(sock)[0] for sock in clients]
        finally:
            for sock in clients:
                sock.close()
        assert statuses == [408] * 20
        assert held > 10 * length // 1024, f"only {held} KiB held: the bodies were not read"
        deadline = time.monotonic() + 5
        while (grown := rss_kib(pid) - before) > 32 * 1024 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert grown < 32 * 1024, f"{grown} KiB more after 20 stalled bodies of 16 MiB"
        with httpx.Client(base_url=server.url, timeout=30) as client:
            assert client.get("/health").status_code == 200


def test_a_shutdown_while_a_body_is_read_stays_a_cancellation() -> None:
    """The deadline cancels the reader and takes its cancellation back; any other
    cancellation (the server shutting down) is not turned into a 408."""
    from svcc.runtime.bodies import BodyReader, BodyTimeout

    async def main() -> None:
        reader = BodyReader(100, 0.05, 1)
        never = asyncio.Event()

        async def receive() -> dict[str, object]:
            await never.wait()
            raise AssertionError("unreachable")

        task = asyncio.create_task(reader.read(receive))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        started = time.monotonic()
        with pytest.raises(BodyTimeout):
            await reader.read(receive)
        assert time.monotonic() - started < 0.5
        current = asyncio.current_task()
        assert current is not None
        assert current.cancelling() == 0  # the deadline's cancellation was taken back

    asyncio.run(main())


def test_a_body_deadline_that_is_not_a_positive_number_refuses_startup(
    rest_bundle: Path,
) -> None:
    for name, value in (("SVC_BODY_IDLE_TIMEOUT", "soon"), ("SVC_BODY_TIMEOUT", "0")):
        done = subprocess.run(
            [sys.executable, "-m", "uvicorn", "app:app", "--port", str(free_port())],
            cwd=rest_bundle, capture_output=True, text=True, timeout=60,
            env={**os.environ, name: value}, check=False,
        )  # fmt: skip
        assert done.returncode == 4, done.stderr
        assert (
            f"svc-rest: startup refused: {name}: expected a positive number, got {value!r}"
            in done.stderr
        )
        assert "Traceback" not in done.stderr


# -- 7. GET /mcp on the stateless server ----------------------------------------------------


def test_get_mcp_is_405_as_delete_is(mcp_server: Server) -> None:
    """The stateless server offers no server-to-client stream: a ``GET`` was a 200 event
    stream that never ended (one task and one connection held per client, forever)."""
    with httpx.Client(base_url=mcp_server.url, timeout=5) as client:
        got = client.get("/mcp", headers={"accept": "text/event-stream"})
        deleted = client.delete("/mcp", headers={"accept": "application/json, text/event-stream"})
        foreign = client.get(
            "/mcp", headers={"accept": "text/event-stream", "host": "evil.example"}
        )
    assert deleted.status_code == 405
    assert got.status_code == 405
    assert got.headers["allow"] == "POST"
    assert got.json()["error"]["code"] == deleted.json()["error"]["code"]
    assert foreign.status_code == 421  # the host check comes first, as for every method


# -- 8. the access line cannot be forged ----------------------------------------------------

_LINE = re.compile(r'(\S+) "(\S+) ((?:[^"\\]|\\.)*)" (\d{3}) [\d.]+ms request_id=(\S+)')


def test_an_access_line_cannot_be_forged(rest_server: Server) -> None:
    """A ``"`` in the path (``%22``) closed the quoted request early: this 404 read as a 200
    with the client's own request id to anyone parsing the line."""
    forged = '/none" 200 0.1ms request_id=forged "GET /health'
    quoted = forged.replace(" ", "%20").replace('"', "%22")
    slash = "/back%5C%22slash%0A"
    with httpx.Client(base_url=rest_server.url, timeout=30) as client:
        assert client.get(quoted, headers={"x-request-id": "mine-1"}).status_code == 404
        assert client.get(slash, headers={"x-request-id": "mine-2"}).status_code == 404
    deadline = time.monotonic() + 5
    while True:
        lines = [x for x in rest_server.log_text().splitlines() if "request_id=mine-" in x]
        if len(lines) >= 2 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    first, second = lines[-2:]
    naive = re.match(r'\S+ "[^"]*" (\d{3})', first)
    assert naive is not None, first
    assert naive.group(1) == "404", first
    parsed = _LINE.fullmatch(first)
    assert parsed is not None, first
    assert parsed.group(4) == "404"
    assert parsed.group(5) == "mine-1"
    assert parsed.group(3) == forged.replace('"', "\\x22")
    parsed = _LINE.fullmatch(second)
    assert parsed is not None, second
    assert parsed.group(3) == "/back\\\\\\x22slash\\n"
    assert parsed.group(4) == "404"


# -- 9. configuration fails closed ----------------------------------------------------------


def test_an_empty_tokens_file_setting_refuses_startup(rest_bundle: Path, mcp_bundle: Path) -> None:
    """``SVC_AUTH_TOKENS_FILE=`` (a variable emptied by a template) served with no token
    check at all; it is a mistake in the setting like any other."""
    env = {**os.environ, "SVC_AUTH_TOKENS_FILE": ""}
    rest = subprocess.run(
        [sys.executable, "-m", "uvicorn", "app:app", "--port", str(free_port())],
        cwd=rest_bundle, capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    mcp = subprocess.run(
        [sys.executable, "server.py", "--transport", "streamable-http", "--port", str(free_port())],
        cwd=mcp_bundle, capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    for done, prefix in ((rest, "svc-rest"), (mcp, "svc-mcp")):
        assert done.returncode == 4, done.stderr
        (line,) = [x for x in done.stderr.splitlines() if "startup refused" in x]
        assert line.startswith(f"{prefix}: startup refused: SVC_AUTH_TOKENS_FILE is set but empty")
        assert "Traceback" not in done.stderr


def test_a_public_bind_under_gunicorn_warns(rest_bundle: Path, tmp_path: Path) -> None:
    """gunicorn binds the socket and names no ``--host``: the warning is decided from the
    socket the server listens on, not from uvicorn's command line."""
    port = free_port()
    log = tmp_path / "gunicorn.log"
    env = {k: v for k, v in os.environ.items() if k != "SVC_AUTH_TOKENS_FILE"}
    with log.open("wb") as sink:
        proc = spawn(
            [sys.executable, "-m", "gunicorn", "-k", "uvicorn.workers.UvicornWorker",
             "-w", "1", "--no-control-socket", "-b", f"0.0.0.0:{port}", "app:app"],
            cwd=rest_bundle, stdout=sink, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    text = log.read_text()
    warnings = [x for x in text.splitlines() if "without SVC_AUTH_TOKENS_FILE" in x]
    assert len(warnings) == 1, text
    assert "svc-rest: listening on 0.0.0.0 without SVC_AUTH_TOKENS_FILE" in warnings[0]
