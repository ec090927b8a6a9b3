"""Long calls over MCP through the official client, over stdio and streamable HTTP: progress
notifications while a call runs past the threshold (only when the client sent a
``progressToken``), and ``notifications/cancelled`` stopping the call: an async function is
cancelled (its concurrency slot comes back at once), a sync one runs to its end (its slot
comes back when it ends), a governed call's worker is killed. A REST client that
disconnects during a governed call has its worker killed too
(``test_hostile_runtime.test_a_disconnected_client_cancels_its_call``). Over streamable
HTTP a request asking for progress is answered with SSE, one without with JSON; a stream's
items as progress over HTTP: ``test_streaming.test_mcp_over_streamable_http_with_progress``."""

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_client import McpBundle
from servers import Server, generate, serving_mcp_http

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SLOW = FIXTURES / "limits" / "slow.py"
ONE_AT_A_TIME = {"SVC_MAX_CONCURRENCY": "1"}
BUSY = "busy: too many calls are waiting; retry later"
Progress = list[tuple[float, float | None, str | None]]


def _recorder(into: Progress) -> Callable[[float, float | None, str | None], Awaitable[None]]:
    async def record(progress: float, total: float | None, message: str | None) -> None:
        into.append((progress, total, message))

    return record


async def _cancel_after(session: ClientSession, seconds: float, name: str, args: Any) -> None:
    """Start a call and abandon it after ``seconds``: the client sends
    ``notifications/cancelled``."""
    call = asyncio.ensure_future(session.call_tool(name, args))
    await asyncio.sleep(seconds)
    call.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await call


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def _check_progress(seen: Progress) -> None:
    assert seen, "a call past the threshold sends progress"
    values = [p for p, _, _ in seen]
    assert values == sorted(values)
    assert len(set(values)) == len(values), "progress rises"
    assert all(total is None for _, total, _ in seen)
    assert all(message and message.startswith("running for") for _, _, message in seen)


@pytest.fixture(scope="module")
def direct_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("long") / "mcp"
    generate(SLOW, out, interface="mcp")
    return out


@pytest.fixture(scope="module")
def stdio(direct_bundle: Path) -> Iterator[McpBundle]:
    client = McpBundle(direct_bundle, env=ONE_AT_A_TIME)
    yield client
    client.close()


def test_progress_over_stdio(stdio: McpBundle) -> None:
    assert stdio.session is not None
    session = stdio.session
    seen: Progress = []
    answer = stdio.run(
        session.call_tool("nap", {"seconds": 2.6}, progress_callback=_recorder(seen))
    )
    assert answer.structured_content == {"result": 2.6}
    _check_progress(seen)
    quick: Progress = []
    stdio.run(session.call_tool("nap", {"seconds": 0.1}, progress_callback=_recorder(quick)))
    assert quick == [], "a short call sends none"


def test_cancelling_an_async_call_frees_it_at_once(stdio: McpBundle) -> None:
    assert stdio.session is not None
    started = time.monotonic()
    stdio.run(_cancel_after(stdio.session, 1.0, "nap", {"seconds": 30}))
    deadline = time.monotonic() + 5
    while (answer := stdio.call("nap", {"seconds": 0})).is_error:  # the cancel is in flight
        assert _text(answer) == BUSY
        assert time.monotonic() < deadline, "the cancelled call kept its slot"
        time.sleep(0.1)
    assert answer.structured_content == {"result": 0}
    assert time.monotonic() - started < 10


def test_a_cancelled_sync_call_runs_to_its_end(stdio: McpBundle) -> None:
    assert stdio.session is not None
    stdio.run(_cancel_after(stdio.session, 0.5, "doze", {"seconds": 3}))
    busy = stdio.call("nap", {"seconds": 0})
    assert busy.is_error, "the thread still runs: its slot is still taken"
    assert _text(busy) == BUSY
    time.sleep(3)
    assert stdio.call("nap", {"seconds": 0}).structured_content == {"result": 0}


def _over_http(url: str, step: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with (
            httpx2.AsyncClient(timeout=60) as http,
            streamable_http_client(url + "/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await step(session)

    return asyncio.run(main())


def test_progress_and_cancel_over_http_direct(direct_bundle: Path) -> None:
    with serving_mcp_http(direct_bundle, ONE_AT_A_TIME) as server:
        seen: Progress = []

        async def long(session: ClientSession) -> types.CallToolResult:
            args = {"seconds": 2.6}  # a sync function, in its thread
            return await session.call_tool("doze", args, progress_callback=_recorder(seen))

        assert _over_http(server.url, long).structured_content == {"result": 2.6}
        _check_progress(seen)

        async def cancel(session: ClientSession) -> None:
            await _cancel_after(session, 1.0, "nap", {"seconds": 30})

        _over_http(server.url, cancel)

        async def quick(session: ClientSession) -> types.CallToolResult:
            return await session.call_tool("nap", {"seconds": 0})

        deadline = time.monotonic() + 5
        while (answer := _over_http(server.url, quick)).is_error:
            assert time.monotonic() < deadline, "the cancelled call kept its slot"
            time.sleep(0.1)
        assert answer.structured_content == {"result": 0}


def _call(ident: int, seconds: float, token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "nap", "arguments": {"seconds": seconds}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


def test_http_answers_json_unless_progress_is_asked(direct_bundle: Path) -> None:
    """A call without a ``progressToken`` (or from a client that takes only JSON) is one
    JSON body, as before; one with a token is an SSE stream: its progress, then its
    result."""
    both = {"accept": "application/json, text/event-stream"}
    with (
        serving_mcp_http(direct_bundle) as server,
        httpx2.Client(base_url=server.url, timeout=30) as http,
    ):
        plain = http.post("/mcp", json=_call(1, 0), headers=both)
        assert plain.status_code == 200
        assert plain.headers["content-type"] == "application/json"
        assert plain.json()["result"]["structuredContent"] == {"result": 0}
        only_json = {"accept": "application/json"}
        asked = http.post("/mcp", json=_call(2, 0, "t"), headers=only_json)
        assert asked.headers["content-type"] == "application/json"
        assert asked.json()["id"] == 2
        _check_streamed(http.post("/mcp", json=_call(3, 1.6, "t"), headers=both), 3)
        sessionless = {  # the 2026-07-28 revision: no initialize, its headers and _meta
            **both,
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "nap",
        }
        call = _call(4, 1.6, "t")
        call["params"]["_meta"].update(
            {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        )
        _check_streamed(http.post("/mcp", json=call, headers=sessionless), 4)
    assert "disconnected" not in server.log.read_text(), "a complete answer is no cancel"


def _check_streamed(answer: httpx2.Response, ident: int) -> None:
    """An SSE answer: progress notifications, then the call's result."""
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = [
        json.loads(line[len("data:") :])
        for line in answer.text.splitlines()
        if line.startswith("data:") and line[len("data:") :].strip()
    ]
    progress = [e for e in events if e.get("method") == "notifications/progress"]
    assert progress, "a call past the threshold sends progress"
    assert progress[0]["params"]["progressToken"] == "t"
    assert events[-1]["id"] == ident
    assert events[-1]["result"]["structuredContent"] == {"result": 1.6}


# -- governed: the worker is killed ------------------------------------------------------------
def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait(predicate: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(scope="module")
def governed_bundle() -> Iterator[tuple[Path, Path]]:
    """``(bundle, shared folder)``: the hostile governed fixture's ``hang`` notes its
    worker's pid in the shared folder."""
    # Outside pytest's private temporary root, as the hostile tests keep it: workers may run
    # as nobody, who must reach the pid files but not the bundle.
    tmp = Path(tempfile.mkdtemp(prefix="svcc-long-governed-"))
    shared = Path(tempfile.mkdtemp(prefix="svcc-long-shared-"))
    os.chmod(tmp, 0o755)
    os.chmod(shared, 0o1777)
    try:
        policy = tmp / "policy.json"
        limits = {"limits": {"wall_time_ms": 30000}}
        as_root = {"worker_user": "nobody"} if os.geteuid() == 0 else {}
        policy.write_text(json.dumps({**limits, **as_root}))
        out = tmp / "mcp"
        generate(
            FIXTURES / "hostile" / "gov_hostile.py",
            out,
            "--requirements",
            str(FIXTURES / "hostile" / "requirements.txt"),
            "--allow",
            "process,paths",
            "--execution-policy",
            str(policy),
            interface="mcp",
        )
        yield out, shared
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(shared, ignore_errors=True)


@pytest.fixture(scope="module")
def governed_http(governed_bundle: tuple[Path, Path]) -> Iterator[tuple[Server, Path]]:
    out, shared = governed_bundle
    with serving_mcp_http(out) as server:
        yield server, shared


async def _cancel_once_running(session: ClientSession, pidfile: Path) -> None:
    """Call ``hang`` and cancel it once its worker has noted its pid."""
    call = asyncio.ensure_future(
        session.call_tool("hang", {"pidfile": str(pidfile), "seconds": 30})
    )
    while not (pidfile.exists() and pidfile.read_text()):
        await asyncio.sleep(0.05)
    call.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await call


def test_governed_progress_and_cancel_over_stdio(governed_bundle: tuple[Path, Path]) -> None:
    out, shared = governed_bundle
    client = McpBundle(out)
    try:
        assert client.session is not None
        session = client.session
        seen: Progress = []
        args = {"pidfile": str(shared / "stdio-long.pid"), "seconds": 2.6}
        answer = client.run(session.call_tool("hang", args, progress_callback=_recorder(seen)))
        assert answer.structured_content == {"result": 2.6}
        _check_progress(seen)
        pidfile = shared / "stdio-cancelled.pid"
        client.run(_cancel_once_running(session, pidfile))
        pid = int(pidfile.read_text())
        assert _wait(lambda: not _alive(pid)), "the cancelled call's worker kept running"
    finally:
        client.close()


def test_governed_progress_and_cancel_over_http(governed_http: tuple[Server, Path]) -> None:
    server, shared = governed_http
    seen: Progress = []

    async def long(session: ClientSession) -> types.CallToolResult:
        args = {"pidfile": str(shared / "long.pid"), "seconds": 2.6}
        return await session.call_tool("hang", args, progress_callback=_recorder(seen))

    assert _over_http(server.url, long).structured_content == {"result": 2.6}
    _check_progress(seen)

    pidfile = shared / "cancelled.pid"

    async def cancel(session: ClientSession) -> None:
        await _cancel_once_running(session, pidfile)

    _over_http(server.url, cancel)
    pid = int(pidfile.read_text())
    assert _wait(lambda: not _alive(pid)), "the cancelled call's worker kept running"
