"""Serving on a network (DESIGN §13), with real servers on loopback: the MCP bundle under its
own streamable HTTP server driven by the official ``mcp`` client, bearer tokens for REST and
MCP, ``/metrics`` read by ``prometheus-client``'s own parser, request ids, and no process
left behind after SIGTERM."""

import asyncio
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from helpers import ROOT
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families
from servers import Server, free_port, generate, serving, serving_mcp_http, spawn

SHAPES = ROOT / "examples" / "shapes.py"
GOVERNED = ROOT / "tests" / "fixtures" / "governed"
PLAIN_TOKEN = "plain-Token_1.~+/="
HASHED_TOKEN = "only-its-digest-is-stored"
TOKENS = (
    f"# who may call\n\n{PLAIN_TOKEN}\nsha256:{hashlib.sha256(HASHED_TOKEN.encode()).hexdigest()}\n"
)
MCP_HEADERS = {"accept": "application/json, text/event-stream"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


@pytest.fixture(scope="module")
def mcp_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("net") / "mcp"
    generate(SHAPES, out, interface="mcp")
    return out


@pytest.fixture(scope="module")
def rest_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("net") / "rest"
    generate(SHAPES, out)
    return out


@pytest.fixture(scope="module")
def tokens_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tokens") / "tokens"
    path.write_text(TOKENS)
    return path


@pytest.fixture(scope="module")
def mcp_server(mcp_bundle: Path) -> Iterator[Server]:
    with serving_mcp_http(mcp_bundle) as server:
        yield server


Step = Callable[[ClientSession], Awaitable[Any]]


def over_http(url: str, *steps: Step, headers: dict[str, str] | None = None) -> list[Any]:
    """Each step's result, in one session of the official client over streamable HTTP."""

    async def main() -> list[Any]:
        async with (
            httpx2.AsyncClient(headers=headers or {}, timeout=30) as http,
            streamable_http_client(url + "/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return [await step(session) for step in steps]

    return asyncio.run(main())


def metrics_of(
    server: Server, headers: dict[str, str] | None = None
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics``, parsed by prometheus-client's own parser."""
    response = httpx.get(server.url + "/metrics", headers=headers or {}, timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid``."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
                )
            except (OSError, IndexError, ValueError):
                continue
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


# -- MCP over streamable HTTP ---------------------------------------------------------------


def test_mcp_http_lists_calls_and_reports_invalid_arguments(
    mcp_server: Server, mcp_bundle: Path
) -> None:
    listed, answered, invalid = over_http(
        mcp_server.url,
        lambda s: s.list_tools(),
        lambda s: s.call_tool("circle_area", {"radius": 2}),
        lambda s: s.call_tool("circle_area", {"radius": "two"}),
    )
    declared = json.loads((mcp_bundle / "mcp-tools.json").read_text())["tools"]
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools] == declared
    assert not answered.is_error
    assert answered.structured_content == {"result": pytest.approx(12.566370614359172)}
    assert invalid.is_error
    assert invalid.content[0].text.startswith("invalid arguments: radius:")


def test_mcp_http_refuses_a_foreign_host_and_origin(mcp_server: Server) -> None:
    url = mcp_server.url + "/mcp"
    ok = httpx.post(url, json=LIST_TOOLS, headers=MCP_HEADERS)
    assert ok.status_code == 200
    assert ok.json()["result"]["tools"]
    foreign = httpx.post(url, json=LIST_TOOLS, headers={**MCP_HEADERS, "host": "evil.example"})
    assert foreign.status_code == 421
    origin = httpx.post(
        url, json=LIST_TOOLS, headers={**MCP_HEADERS, "origin": "http://evil.example"}
    )
    assert origin.status_code == 403
    assert httpx.get(mcp_server.url + "/health").json() == {"status": "ok"}


def test_allowed_hosts_widen_the_check(mcp_bundle: Path) -> None:
    with serving_mcp_http(
        mcp_bundle, {"SVC_MCP_ALLOWED_HOSTS": "from-env.example"}, "--allowed-hosts", "svc.example"
    ) as server:
        url = server.url + "/mcp"
        for host in ("svc.example", "svc.example:8000", "from-env.example:1"):
            answer = httpx.post(url, json=LIST_TOOLS, headers={**MCP_HEADERS, "host": host})
            assert answer.status_code == 200, host
        refused = httpx.post(url, json=LIST_TOOLS, headers={**MCP_HEADERS, "host": "other.example"})
        assert refused.status_code == 421


def test_stdio_stays_the_default_and_http_options_need_the_transport(mcp_bundle: Path) -> None:
    done = subprocess.run(
        [sys.executable, "server.py", "--port", "9"],
        cwd=mcp_bundle,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--port: only with --transport streamable-http" in done.stderr


# -- bearer tokens --------------------------------------------------------------------------


def _auth_answers(post: Callable[[dict[str, str]], httpx.Response]) -> None:
    missing = post({})
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert missing.json() == {"detail": "Not authenticated"}
    wrong = post({"authorization": "Bearer not-a-token"})
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"].startswith("Bearer")
    assert wrong.json() == {"detail": "Not authenticated"}
    assert post({"authorization": f"Basic {PLAIN_TOKEN}"}).status_code == 401
    assert post({"authorization": f"Bearer {PLAIN_TOKEN}"}).status_code == 200
    assert post({"authorization": f"bearer {HASHED_TOKEN}"}).status_code == 200
    assert (
        post(
            {"authorization": "Bearer " + hashlib.sha256(HASHED_TOKEN.encode()).hexdigest()}
        ).status_code
        == 401
    )


def test_rest_tokens(rest_bundle: Path, tokens_file: Path) -> None:
    with serving(rest_bundle, env={"SVC_AUTH_TOKENS_FILE": str(tokens_file)}) as server:
        url = server.url
        _auth_answers(
            lambda h: httpx.post(url + "/capabilities/circle_area", json={"radius": 2}, headers=h)
        )
        assert httpx.get(url + "/health").status_code == 200  # always open
        assert httpx.get(url + "/openapi.json").status_code == 401
        assert httpx.get(url + "/metrics").status_code == 401
        served = httpx.get(
            url + "/openapi.json", headers={"authorization": f"Bearer {PLAIN_TOKEN}"}
        )
        assert served.content == (rest_bundle / "openapi.json").read_bytes()
        log = server.log_text()
    assert PLAIN_TOKEN not in log
    assert HASHED_TOKEN not in log
    assert "not-a-token" not in log
    assert "without SVC_AUTH_TOKENS_FILE" not in log


def test_mcp_tokens(mcp_bundle: Path, tokens_file: Path) -> None:
    with serving_mcp_http(mcp_bundle, {"SVC_AUTH_TOKENS_FILE": str(tokens_file)}) as server:
        url = server.url
        _auth_answers(
            lambda h: httpx.post(url + "/mcp", json=LIST_TOOLS, headers={**MCP_HEADERS, **h})
        )
        (answered,) = over_http(
            url,
            lambda s: s.call_tool("circle_area", {"radius": 1}),
            headers={"authorization": f"Bearer {HASHED_TOKEN}"},
        )
        assert not answered.is_error
        with pytest.raises(ExceptionGroup) as refused:  # the client's task group around it
            over_http(url, lambda s: s.list_tools())
        assert "Server returned an error response" in repr(refused.value)
        assert httpx.get(url + "/health").status_code == 200
        log = server.log_text()
    assert PLAIN_TOKEN not in log
    assert HASHED_TOKEN not in log


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("", "holds no token"),
        ("# only a comment\n\n", "holds no token"),
        ("sha256:abc\n", "line 1: sha256: must be followed by 64 hex digits"),
        ("good-token\nhas a space\n", "line 2: not a bearer token"),
        (None, "cannot be read"),
    ],
)
def test_a_bad_tokens_file_refuses_startup(
    rest_bundle: Path, mcp_bundle: Path, tmp_path: Path, content: str | None, reason: str
) -> None:
    path = tmp_path / "tokens"
    if content is not None:
        path.write_text(content)
    env = {**os.environ, "SVC_AUTH_TOKENS_FILE": str(path)}
    rest = subprocess.run(
        [sys.executable, "-m", "uvicorn", "app:app", "--port", str(free_port())],
        cwd=rest_bundle,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    mcp = subprocess.run(
        [sys.executable, "server.py", "--transport", "streamable-http", "--port", str(free_port())],
        cwd=mcp_bundle,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    for done, prefix in ((rest, "svc-rest"), (mcp, "svc-mcp")):
        assert done.returncode == 4, done.stderr
        (line,) = [x for x in done.stderr.splitlines() if "startup refused" in x]
        assert line.startswith(f"{prefix}: startup refused: SVC_AUTH_TOKENS_FILE {path}")
        assert reason in line
        assert "Traceback" not in done.stderr
        assert "has a space" not in done.stderr
        assert "good-token" not in done.stderr


def test_a_public_bind_without_tokens_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    from svcc.runtime.network import network_layer

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("not called")

    with caplog.at_level("WARNING", logger="svc.network"):
        network_layer(app, capabilities={}, host="0.0.0.0", prefix="svc-rest")
        network_layer(app, capabilities={}, host="127.0.0.1", prefix="svc-rest")
        network_layer(app, capabilities={}, host="::1", prefix="svc-rest")
    assert [r.getMessage() for r in caplog.records] == [
        "svc-rest: listening on 0.0.0.0 without SVC_AUTH_TOKENS_FILE: anyone who can reach "
        "it can call every capability"
    ]


# -- metrics and request ids ----------------------------------------------------------------


def test_rest_metrics_and_request_ids(rest_bundle: Path) -> None:
    with serving(rest_bundle) as server, server.client() as client:
        before = metrics_of(server)
        for _ in range(2):
            assert client.post("/capabilities/circle_area", json={"radius": 1}).status_code == 200
        echoed = client.post(
            "/capabilities/circle_area",
            json={"radius": "x"},
            headers={"x-request-id": "trace-42.a:b"},
        )
        assert echoed.status_code == 422
        assert echoed.headers["x-request-id"] == "trace-42.a:b"
        for bad in ("has spaces", "x" * 129, "semi;colon"):
            replaced = client.get("/health", headers={"x-request-id": bad})
            generated = replaced.headers["x-request-id"]
            assert re.fullmatch(r"[0-9a-f]{24}", generated), bad
        after = metrics_of(server)
        time.sleep(0.2)
        log = server.log_text()
    ok = ("svc_requests_total", (("capability", "circle_area"), ("status", "200")))
    invalid = ("svc_requests_total", (("capability", "circle_area"), ("status", "422")))
    assert after[ok] - before.get(ok, 0) == 2
    assert after[invalid] - before.get(invalid, 0) == 1
    count = ("svc_request_duration_seconds_count", (("capability", "circle_area"),))
    assert after[count] - before.get(count, 0) == 3
    assert ("svc_requests_in_flight", ()) in after
    assert '"POST /capabilities/circle_area" 422' in log
    assert "request_id=trace-42.a:b" in log
    assert f"request_id={generated}" in log
    assert "metrics" not in (rest_bundle / "openapi.json").read_text()
    # the whole line, as the README shows it: client, method, path, status, duration, id
    lines = [line for line in log.splitlines() if "request_id=trace-42.a:b" in line]
    assert len(lines) == 1
    assert re.fullmatch(
        r'127\.0\.0\.1:\d+ "POST /capabilities/circle_area" 422 \d+\.\dms '
        r"request_id=trace-42\.a:b",
        lines[0],
    ), lines


async def _no_content(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def _post_through_layer(path: str) -> None:
    """One POST through a network layer (no tokens, no metrics) around a 204 app."""
    from svcc.runtime.network import NetworkLayer

    layer = NetworkLayer(_no_content, capabilities={}, tokens=None, metrics=None)

    async def main() -> None:
        transport = httpx.ASGITransport(app=layer, client=("127.0.0.1", 4321))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.post(path, headers={"x-request-id": "id-1"})
            assert response.status_code == 204

    asyncio.run(main())


def test_access_lines_reach_a_program_that_configures_the_logger() -> None:
    """The default handler takes finished lines directly only while it is the logger's one
    destination: a handler or filter added later sees (or drops) ordinary records."""
    import io
    import logging

    from svcc.runtime import network

    call = _post_through_layer
    logger = network.access_log
    saved = (logger.handlers[:], logger.level, logger.propagate, logger.filters[:])
    stream = io.StringIO()
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep()
    logger.handlers[:] = []
    try:
        default = network.AccessLines(stream)
        logger.addHandler(default)
        logger.setLevel(logging.INFO)
        logger.propagate = False
        call("/alone")
        logger.addFilter(lambda record: "dropped" not in record.getMessage())
        call("/dropped")
        logger.addHandler(keep)
        call("/with/another/handler")
    finally:
        logger.handlers[:], logger.level, logger.propagate, logger.filters[:] = saved
    written = stream.getvalue().splitlines()
    assert [re.sub(r" \d+\.\dms ", " Nms ", line) for line in written] == [
        '127.0.0.1:4321 "POST /alone" 204 Nms request_id=id-1',
        '127.0.0.1:4321 "POST /with/another/handler" 204 Nms request_id=id-1',
    ]
    assert [r.getMessage() for r in records] == written[1:]
    assert records[0].msg == network.ACCESS_LINE


def test_mcp_metrics_count_tool_calls(mcp_server: Server) -> None:
    before = metrics_of(mcp_server)
    over_http(
        mcp_server.url,
        lambda s: s.call_tool("circle_area", {"radius": 1}),
        lambda s: s.call_tool("circle_area", {}),
        lambda s: s.call_tool("no_such_tool", {}),
    )
    after = metrics_of(mcp_server)
    # one label shape on both interfaces: the status REST answers the same outcome with
    ok = ("svc_requests_total", (("capability", "circle_area"), ("status", "200")))
    invalid = ("svc_requests_total", (("capability", "circle_area"), ("status", "422")))
    assert after[ok] - before.get(ok, 0) == 1
    assert after[invalid] - before.get(invalid, 0) == 1
    assert not any("no_such_tool" in str(labels) for _, labels in after)
    assert not any(labels[-1][1] in ("ok", "error") for _, labels in after if labels)


def test_mcp_over_stdio_counts_tool_calls(mcp_bundle: Path, tmp_path: Path) -> None:
    """Over stdio there is no ``/metrics``: the counts are in the multiprocess directory,
    read here by ``prometheus-client``'s own collector."""
    from mcp_client import McpBundle
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    directory = tmp_path / "prometheus"
    directory.mkdir()
    server = McpBundle(mcp_bundle, env={"PROMETHEUS_MULTIPROC_DIR": str(directory)})
    try:
        assert not server.call("circle_area", {"radius": 1}).is_error
        assert server.call("circle_area", {"radius": "x"}).is_error
        assert server.call("circle_area", {"radius": 1e200}).is_error  # OverflowError: 500
    finally:
        server.close()
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))
    counts = {
        (sample.labels["capability"], sample.labels["status"]): sample.value
        for family in registry.collect()
        for sample in family.samples
        if sample.name == "svc_requests_total"
    }
    assert counts == {("circle_area", s): 1 for s in ("200", "422", "500")}


def test_metrics_with_several_workers(rest_bundle: Path, tmp_path: Path) -> None:
    """Multiprocess mode: whichever worker answers the scrape, it counts every worker's calls."""
    directory = tmp_path / "prometheus"
    directory.mkdir()
    port = free_port()
    log = tmp_path / "workers.log"
    with log.open("wb") as sink:
        proc = spawn(
            [sys.executable, "-m", "uvicorn", "app:app", "--port", str(port), "--workers", "2"],
            cwd=rest_bundle,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)},
        )
    server = Server(proc, f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + 60
        while log.read_text().count("Application startup complete") < 2:
            assert time.monotonic() < deadline, log.read_text()
            assert proc.poll() is None, log.read_text()
            time.sleep(0.1)
        for _ in range(12):  # fresh connections: the kernel spreads them over both workers
            with httpx.Client(base_url=server.url) as one:
                assert one.post("/capabilities/circle_area", json={"radius": 1}).status_code == 200
        pids = {p.name for p in directory.iterdir()}
        assert len({re.sub(r"\D", "", n) for n in pids if n.startswith("counter")}) == 2, pids
        for _ in range(4):
            samples = metrics_of(server)
            assert (
                samples[("svc_requests_total", (("capability", "circle_area"), ("status", "200")))]
                == 12
            )
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


# -- governed bundles over HTTP, and SIGTERM ------------------------------------------------


def test_governed_mcp_over_http_counts_workers_and_leaves_nothing(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"limits": {"wall_time_ms": 3000}}))
    bundle = tmp_path / "governed-mcp"
    generate(
        GOVERNED / "gov.py",
        bundle,
        "--requirements",
        str(GOVERNED / "requirements.txt"),
        "--allow",
        "env,process",
        "--execution-policy",
        str(policy),
        interface="mcp",
    )
    with serving_mcp_http(bundle) as server:
        added, slow, invalid = over_http(
            server.url,
            lambda s: s.call_tool("add", {"a": 2, "b": 3}),
            lambda s: s.call_tool("sleep", {"seconds": 30}),
            lambda s: s.call_tool("add", {"a": "2"}),
        )
        assert added.structured_content == {"result": 5}
        assert slow.is_error
        assert slow.content[0].text == "timed out: the tool passed its time limit"
        assert invalid.is_error
        assert invalid.content[0].text.startswith("invalid arguments")
        samples = metrics_of(server)
        assert samples[("svc_governed_worker_starts_total", ())] == 2
        assert samples[("svc_governed_timeouts_total", ())] == 1
        assert samples[("svc_governed_limit_kills_total", ())] == 0
        below = descendants(server.proc.pid)
        assert below  # the warm worker template
        scratch = {Path(os.readlink(f"/proc/{pid}/cwd")) for pid in below}
        scratch = {path for path in scratch if path.name.startswith("svc-governed-")}
        assert scratch
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=15) in (0, -signal.SIGTERM)
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in below) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in below if Path(f"/proc/{pid}").exists()]
    # uvicorn re-raises SIGTERM (no atexit, no close): the template removes the directory
    while any(path.exists() for path in scratch) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [path for path in scratch if path.exists()] == []


def test_governed_rest_counts_timeouts_and_leaves_nothing(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"limits": {"wall_time_ms": 3000, "max_output_bytes": 100}}))
    bundle = tmp_path / "governed-rest"
    generate(
        GOVERNED / "gov.py",
        bundle,
        "--requirements",
        str(GOVERNED / "requirements.txt"),
        "--allow",
        "env,process",
        "--execution-policy",
        str(policy),
    )
    with serving(bundle) as server, server.client() as client:
        assert client.post("/capabilities/add", json={"a": 1, "b": 2}).json() == 3
        assert client.post("/capabilities/sleep", json={"seconds": 30}).status_code == 504
        assert client.post("/capabilities/big", json={"n": 1000}).status_code == 500
        samples = metrics_of(server)
        assert samples[("svc_governed_worker_starts_total", ())] == 3
        assert samples[("svc_governed_timeouts_total", ())] == 1
        assert samples[("svc_governed_limit_kills_total", ())] == 1  # the output limit
        timeout = ("svc_requests_total", (("capability", "sleep"), ("status", "504")))
        assert samples[timeout] == 1
        below = descendants(server.proc.pid)
        assert below
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=15)
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in below) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in below if Path(f"/proc/{pid}").exists()]


# -- slow request heads (slowloris) -----------------------------------------------------------


def test_slow_request_heads_do_not_stall_the_rest_server(rest_bundle: Path) -> None:
    """uvicorn reads heads on its event loop: 100 connections trickling their headers a
    byte at a time hold a file descriptor each, not the server; other clients are answered
    (what bounds them is the process's file limit: README, "Slow clients")."""
    with serving(rest_bundle) as server:
        host, port = server.url.removeprefix("http://").split(":")
        slow = [socket.create_connection((host, int(port))) for _ in range(100)]
        try:
            for byte in b"POST /capabilities/circle_area HTTP/1.1\r\n"[:20]:
                for sock in slow:
                    sock.sendall(bytes([byte]))
                with httpx.Client(base_url=server.url, timeout=10) as client:
                    answer = client.post("/capabilities/circle_area", json={"radius": 1})
                assert answer.status_code == 200
        finally:
            for sock in slow:
                sock.close()


def test_mcp_over_http_bounds_the_body_as_rest_does(mcp_bundle: Path) -> None:
    """The server refuses a body over ``SVC_MAX_BODY_BYTES`` with REST's 413, announced or
    streamed, before the SDK holds it, and says so with a JSON-RPC error, as stdio does."""
    with serving_mcp_http(mcp_bundle, {"SVC_MAX_BODY_BYTES": "4096"}) as server:
        headers = {**MCP_HEADERS, "content-type": "application/json"}
        big = json.dumps({**LIST_TOOLS, "params": {"pad": "x" * 10_000}}).encode()
        with httpx.Client(base_url=server.url, timeout=30) as client:
            announced = client.post("/mcp", content=big, headers=headers)
            streamed = client.post("/mcp", content=iter([big[:3000], big[3000:]]), headers=headers)
            small = client.post("/mcp", json=LIST_TOOLS, headers=MCP_HEADERS)
    for refused in (announced, streamed):
        assert refused.status_code == 413
        assert refused.json() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid request: the message is over 4096 bytes"},
        }
    assert small.status_code == 200
    assert "circle_area" in small.text


def test_an_access_line_that_cannot_be_written_never_fails_the_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A broken stderr is reported the way ``logging`` reports a failed write; the request
    is answered all the same."""
    import io
    import logging

    from svcc.runtime import network

    logger = network.access_log
    saved = (logger.handlers[:], logger.level, logger.propagate)
    closed = io.StringIO()
    closed.close()
    logger.handlers[:] = [network.AccessLines(closed)]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        _post_through_layer("/broken/stderr")
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved
    assert "--- Logging error ---" in capsys.readouterr().err


def test_mcp_over_http_answers_every_message_it_cannot_take(mcp_server: Server) -> None:
    """Over HTTP as over stdio, a message that cannot be taken is answered with one
    JSON-RPC error line: the SDK's transport answered a ``null`` or fractional id with a
    202 and nothing (the agent waits forever), a batch with a multi-line validation error,
    and let ``NaN`` and a lone surrogate through."""
    headers = {**MCP_HEADERS, "content-type": "application/json"}
    call = {"jsonrpc": "2.0", "method": "tools/list", "params": {}}
    cases = {
        "null id": ({**call, "id": None}, -32600, "the id must be a string or an integer"),
        "fraction id": ({**call, "id": 1.5}, -32600, "the id must be a string or an integer"),
        "boolean id": ({**call, "id": True}, -32600, "the id must be a string or an integer"),
        "batch": ([LIST_TOOLS, LIST_TOOLS], -32600, "a batch"),
        "no method": ({"jsonrpc": "2.0", "id": 7, "params": {}}, -32600, "Invalid request"),
    }
    with httpx.Client(base_url=mcp_server.url, timeout=30) as client:
        answers = {
            name: (client.post("/mcp", content=json.dumps(body), headers=headers), code, words)
            for name, (body, code, words) in cases.items()
        }
        nan = client.post(
            "/mcp", content=b'{"jsonrpc":"2.0","id":3,"method":"x","params":{"a":NaN}}',
            headers=headers,
        )  # fmt: skip
        surrogate = client.post(
            "/mcp", content=b'{"jsonrpc":"2.0","id":4,"method":"x","params":{"a":"\\ud800"}}',
            headers=headers,
        )  # fmt: skip
        notification = client.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        fine = client.post("/mcp", json=LIST_TOOLS, headers=MCP_HEADERS)
    for name, (answer, code, words) in answers.items():
        assert answer.status_code == 400, name
        error = answer.json()
        assert error["jsonrpc"] == "2.0", name
        assert error["error"]["code"] == code, name
        assert words in error["error"]["message"], name
        assert "\n" not in error["error"]["message"], name
    assert nan.status_code == 400
    assert nan.json()["id"] == 3
    assert nan.json()["error"]["code"] == -32700
    assert surrogate.status_code == 400
    assert "lone surrogate" in surrogate.text
    assert notification.status_code == 202
    assert fine.status_code == 200
    assert "circle_area" in fine.text


def test_mcp_over_http_refuses_on_headers_before_it_reads_the_body(mcp_server: Server) -> None:
    """The SDK's transport refuses a request on its headers before it reads the body (a
    host or origin not allowed, an ``Accept`` without JSON); the body check that answers
    what the SDK would leave unanswered came first, so a batch from a host that is not
    allowed was answered 400 for its body. And an invalid request is told what is wrong
    with it, by stdio's rule (it was ``4 validation errors for union[...]``)."""
    batch = json.dumps([LIST_TOOLS, LIST_TOOLS])
    json_body = {"content-type": "application/json"}
    cases = {
        "host": ({**MCP_HEADERS, **json_body, "host": "evil.example"}, 421, "Invalid Host"),
        "origin": ({**MCP_HEADERS, **json_body, "origin": "http://evil.example"}, 403, "Origin"),
        "accept": ({"accept": "text/event-stream", **json_body}, 406, "Not Acceptable"),
        "content type": ({**MCP_HEADERS, "content-type": "text/plain"}, 400, "Content-Type"),
    }
    with httpx.Client(base_url=mcp_server.url, timeout=30) as client:
        answers = {
            name: (client.post("/mcp", content=batch, headers=headers), status, words)
            for name, (headers, status, words) in cases.items()
        }
        wrong = client.post(
            "/mcp", json={**LIST_TOOLS, "id": 5, "params": [1]}, headers=MCP_HEADERS
        )
    for name, (answer, status, words) in answers.items():
        assert (answer.status_code, name) == (status, name)
        assert words in answer.text, name
        assert "batch" not in answer.text, name
    assert wrong.status_code == 400
    assert wrong.json() == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {
            "code": -32600,
            "message": "Invalid request: params: Input should be a valid dictionary",
        },
    }
