"""Streams in governed mode (issue 40): a local-process worker streams a generator's items.

The worker sends each item as it comes; the policy's wall deadline applies to the whole
stream (its worker killed, the record a 504); a client that leaves kills the worker too; a
failure is the sanitised 500 record. Async functions run in workers as well.
"""

import asyncio
import contextlib
import json
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import run_svcc
from mcp import ClientSession
from mcp_client import McpBundle
from servers import Server, generate, serving
from test_governed import children_of, name_of
from test_streaming import with_progress

SOURCE = """
import asyncio
import time
from collections.abc import AsyncIterator, Iterator


def words(text: str) -> Iterator[str]:
    for word in text.split():
        yield word


async def ticks(n: int) -> AsyncIterator[int]:
    for i in range(n):
        await asyncio.sleep(0)
        yield i


def two_then_fail() -> Iterator[int]:
    yield 1
    yield 2
    raise ValueError("the third item is missing")


def slow(delay: float) -> Iterator[int]:
    i = 0
    while True:
        yield i
        i += 1
        time.sleep(delay)


def late(delay: float) -> Iterator[int]:
    time.sleep(delay)
    yield 0


async def awaited(x: int) -> int:
    await asyncio.sleep(0)
    return x * 2
"""
POLICY = {"limits": {"wall_time_ms": 3000}, "environment": {"allow": []}}


def build(tmp: Path, interface: str) -> Path:
    source = tmp / "gov_streams.py"
    source.write_text(textwrap.dedent(SOURCE))
    policy = tmp / "policy.json"
    policy.write_text(json.dumps(POLICY))
    out = tmp / f"bundle-{interface}"
    result = generate(source, out, "--execution-policy", str(policy), interface=interface)
    assert result["execution"] == {"mode": "governed", "backend": "local-process"}
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(build(tmp_path_factory.mktemp("governed-streams"), "rest")) as running:
        yield running


def lines(server: Server, name: str, body: dict[str, Any]) -> list[Any]:
    with (
        server.client() as client,
        client.stream("POST", f"/capabilities/{name}", json=body) as response,
    ):
        assert response.status_code == 200
        return [json.loads(line) for line in response.iter_lines() if line]


def workers_of(server: Server) -> list[int]:
    """The live workers: the template's children, but the spare (the next call's worker,
    forked ahead and waiting)."""
    (template,) = [pid for pid, _ in children_of(server.proc.pid)]
    return [
        pid
        for pid, state in children_of(template)
        if state != "Z" and name_of(pid) not in ("svc-spare", "")
    ]


def no_worker_left(server: Server) -> bool:
    deadline = time.monotonic() + 10
    while workers_of(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not workers_of(server)


def test_a_worker_streams_items_and_the_done_record(server: Server) -> None:
    assert lines(server, "words", {"text": "a b c"}) == ["a", "b", "c", {"done": True, "items": 3}]
    assert lines(server, "ticks", {"n": 3}) == [0, 1, 2, {"done": True, "items": 3}]


def test_a_failure_after_two_items_is_the_sanitised_record(server: Server) -> None:
    assert lines(server, "two_then_fail", {}) == [
        1, 2, {"error": {"status": 500, "detail": "Internal Server Error"}, "items": 2},
    ]  # fmt: skip
    # the worker's traceback reaches the server's log as the stream ends, not before the
    # client has read the final record: wait for the line, boundedly
    deadline = time.monotonic() + 10
    while "ValueError: the third item is missing" not in server.log_text():
        assert time.monotonic() < deadline, server.log_text()
        time.sleep(0.05)


def test_the_deadline_applies_to_the_whole_stream(server: Server) -> None:
    started = time.monotonic()
    got = lines(server, "slow", {"delay": 0.2})
    assert 2.5 < time.monotonic() - started < 8
    assert got[-1] == {"error": {"status": 504, "detail": "Gateway Timeout"}, "items": len(got) - 1}
    assert got[:-1] == list(range(len(got) - 1))
    assert len(got) > 5
    assert "the stream passed its deadline; worker killed" in server.log_text()
    assert no_worker_left(server)


def test_a_client_that_leaves_kills_the_worker(server: Server) -> None:
    with (
        server.client() as client,
        client.stream("POST", "/capabilities/slow", json={"delay": 0.05}) as response,
    ):
        received = response.iter_lines()  # kept: dropping it closes the response
        assert next(received) == "0"
        assert next(received) == "1"
        assert workers_of(server)
    assert no_worker_left(server)
    assert "the stream was closed early; worker killed" in server.log_text()


def test_a_client_that_leaves_before_the_first_item_kills_the_worker(server: Server) -> None:
    with (
        server.client() as client,
        client.stream("POST", "/capabilities/late", json={"delay": 2.0}) as response,
    ):
        assert response.status_code == 200  # the head, the first item still to come
        assert workers_of(server)
    assert no_worker_left(server)


def test_async_functions_run_in_workers(server: Server) -> None:
    with server.client() as client:
        assert client.post("/capabilities/awaited", json={"x": 21}).json() == 42


def test_mcp_streams_from_a_worker_with_progress(tmp_path: Path) -> None:
    client = McpBundle(build(tmp_path, "mcp"))
    try:
        assert client.session is not None
        result, seen = client.run(with_progress(client.session, "words", {"text": "x y"}))
        assert result.structured_content == {"result": ["x", "y"]}
        assert [m for _, _, m in seen] == ['"x"', '"y"']
        failed = client.call("two_then_fail", {})
        assert failed.is_error
        assert "(after 2 items)" in failed.content[0].text  # type: ignore[union-attr]
        timed_out = client.call("slow", {"delay": 0.2})
        assert timed_out.is_error
        assert "Gateway Timeout" in timed_out.content[0].text  # type: ignore[union-attr]
        client.run(cancel_after(client.session, "slow", {"delay": 0.05}, 0.5))
        deadline = time.monotonic() + 10  # a cancelled request kills its worker
        while "the stream was closed early; worker killed" not in client.stderr():
            assert time.monotonic() < deadline, client.stderr()
            time.sleep(0.05)
    finally:
        client.close()


async def cancel_after(
    session: ClientSession, name: str, arguments: dict[str, Any], seconds: float
) -> None:
    """Calls a tool and cancels the request after ``seconds`` (``notifications/cancelled``)."""
    call = asyncio.ensure_future(session.call_tool(name, arguments))
    await asyncio.sleep(seconds)
    call.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await call


def test_a_container_policy_refuses_streams_with_the_reason(tmp_path: Path) -> None:
    """Policy v2 (containers): the generation is refused, saying why (no engine needed)."""
    source = tmp_path / "s.py"
    source.write_text(
        "from collections.abc import Iterator\n\n\n"
        "def words(text: str) -> Iterator[str]:\n    yield from text.split()\n"
    )
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"schema": "svc.execution/v2", "environment": {"allow": []}}))
    proc = run_svcc(
        "generate", "rest", str(source), "--output-dir", str(tmp_path / "out"),
        "--execution-policy", str(policy), "--runtime-image", "sha256:" + "a" * 64,
        "--runtime-platform", "linux/amd64",
    )  # fmt: skip
    assert proc.returncode == 1
    assert "words: a stream is served in direct mode and by local-process workers" in proc.stderr
    assert not (tmp_path / "out").exists()
