"""Streams (issue 40): generators served item by item, with an explicit end.

Readiness and the IR first (which generators stream, what their items are); then the REST
server under uvicorn (JSON Lines and SSE, the final record, limits, a client that leaves),
and MCP through the official client with a progress callback.
"""

import asyncio
import contextlib
import json
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from helpers import GOLDEN, run_svcc
from httpx_sse import connect_sse
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_client import McpBundle
from prometheus_client.parser import text_string_to_metric_families
from servers import Server, generate, serving, serving_mcp_http
from svcc.compiler.driver import Analysis, analyze_file
from svcc.ir.types import AnyType, IntType, ModelType, StrType, TypedDictType


def analysed(tmp_path: Path, source: str) -> Analysis:
    path = tmp_path / "streams_src.py"
    path.write_text(textwrap.dedent(source))
    return analyze_file(path, module_name="streams_src", python_version="3.11")


def verdicts(analysis: Analysis) -> dict[str, tuple[str, list[str]]]:
    assert analysis.readiness is not None
    return {a.name: (a.klass, [r.code for r in a.reasons]) for a in analysis.readiness.assessments}


def test_every_iterator_form_streams_its_item_type(tmp_path: Path) -> None:
    analysis = analysed(
        tmp_path,
        """
        import typing
        from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterable, Iterator

        def a(n: int) -> Iterator[int]:
            yield n

        def b(n: int) -> Iterable[str]:
            yield str(n)

        def c(n: int) -> Generator[int, None, None]:
            yield n

        def d(n: int) -> typing.Iterator[int]:
            yield n

        async def e(n: int) -> AsyncIterator[int]:
            yield n

        async def f(n: int) -> AsyncGenerator[int, None]:
            yield n

        def g(n: int) -> "Iterator[int]":
            yield n
        """,
    )
    assert {name: v[0] for name, v in verdicts(analysis).items()} == dict.fromkeys(
        "abcdefg", "eligible"
    )
    assert analysis.ir is not None
    items = {cap.name: cap.stream.item for cap in analysis.ir.capabilities if cap.stream}
    assert items == {
        "a": IntType(), "b": StrType(), "c": IntType(), "d": IntType(), "e": IntType(),
        "f": IntType(), "g": IntType(),
    }  # fmt: skip


def test_items_follow_the_result_rules(tmp_path: Path) -> None:
    """Models and TypedDicts are items; an item no encoder writes is refused (R050);
    unannotated or Any items are a warning (R018), as a result is."""
    analysis = analysed(
        tmp_path,
        """
        from collections.abc import Iterator
        from dataclasses import dataclass
        from typing import Any, TypedDict

        class Row(TypedDict):
            a: int

        @dataclass
        class P:
            x: int

        class Opaque:
            pass

        def rows() -> Iterator[Row]:
            yield {"a": 1}

        def points() -> Iterator[P]:
            yield P(1)

        def opaque() -> Iterator[Opaque]:
            yield Opaque()

        def anything() -> Iterator[Any]:
            yield 1

        def bare():
            yield 1
        """,
    )
    found = verdicts(analysis)
    assert found["rows"] == ("eligible", [])
    assert found["points"] == ("eligible", [])
    assert found["opaque"][0] == "unsupported"
    assert "SVC-R050" in found["opaque"][1]
    assert found["anything"] == ("eligible", ["SVC-R018"])
    assert found["bare"] == ("eligible", ["SVC-R018"])
    assert analysis.ir is not None
    streams = {cap.name: cap.stream for cap in analysis.ir.capabilities}
    assert streams["rows"] is not None
    assert streams["rows"].item == TypedDictType(name="Row")
    assert streams["points"] is not None
    assert streams["points"].item == ModelType(name="P")
    assert streams["bare"] is not None
    assert streams["bare"].item == AnyType()


def test_send_style_generators_are_refused_with_the_reason(tmp_path: Path) -> None:
    analysis = analysed(
        tmp_path,
        """
        from collections.abc import AsyncIterator, Generator, Iterator

        def total(start: int) -> Iterator[int]:
            running = start
            while True:
                running += yield running

        async def atotal(start: int) -> AsyncIterator[int]:
            x = yield start

        def typed(n: int) -> Generator[int, int, None]:
            yield n

        def lying(n: int) -> list[int]:
            yield n
        """,
    )
    found = verdicts(analysis)
    assert found["total"] == ("unsupported", ["SVC-R016"])
    assert found["atotal"] == ("unsupported", ["SVC-R017"])
    assert found["typed"] == ("unsupported", ["SVC-R016"])
    assert found["lying"] == ("unsupported", ["SVC-R016"])
    assert analysis.readiness is not None
    reason = analysis.readiness.assessments[0].reasons[0]
    assert "send()" in reason.message
    assert reason.span is not None
    assert reason.span.line == 7


def test_a_non_generator_has_no_stream(tmp_path: Path) -> None:
    analysis = analysed(tmp_path, "def f() -> int:\n    return 1\n")
    assert analysis.ir is not None
    assert analysis.ir.capabilities[0].stream is None


def test_golden_stream_case_is_eligible_whole() -> None:
    analysis = analyze_file(
        GOLDEN / "streams" / "input.py", module_name="streams", python_version="3.11"
    )
    assert {klass for klass, _ in verdicts(analysis).values()} == {"eligible"}


# -- REST, direct mode, under uvicorn -------------------------------------------------------
STREAMS = GOLDEN / "streams" / "input.py"


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    out = tmp_path_factory.mktemp("streams") / "bundle"
    generate(STREAMS, out)
    with serving(out, env={"SVC_STREAM_MAX_ITEMS": "50", "SVC_STREAM_IDLE_SECONDS": "2"}) as s:
        yield s


def jsonl(server: Server, name: str, body: dict[str, Any]) -> list[Any]:
    with (
        server.client() as client,
        client.stream("POST", f"/capabilities/{name}", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/jsonl"
        return [json.loads(line) for line in response.iter_lines() if line]


def test_jsonl_items_then_the_done_record(rest: Server) -> None:
    assert jsonl(rest, "words", {"text": "a few words"}) == [
        "a", "few", "words", {"done": True, "items": 3},
    ]  # fmt: skip
    assert jsonl(rest, "ticks", {"n": 3}) == [0, 1, 2, {"done": True, "items": 3}]
    assert jsonl(rest, "tokens", {"text": "x y"}) == [
        {"index": 0, "text": "x"}, {"index": 1, "text": "y"}, {"done": True, "items": 2},
    ]  # fmt: skip
    assert jsonl(rest, "points", {"n": 2}) == [
        {"x": 0, "y": 0}, {"x": 1, "y": 1}, {"done": True, "items": 2},
    ]  # fmt: skip
    assert jsonl(rest, "words", {"text": ""}) == [{"done": True, "items": 0}]


def test_an_error_after_two_items_ends_with_the_error_record(rest: Server) -> None:
    assert jsonl(rest, "two_then_fail", {}) == [
        1, 2, {"error": {"status": 500, "detail": "Internal Server Error"}, "items": 2},
    ]  # fmt: skip
    assert "ValueError: the third item is missing" in rest.log_text()


def test_sse_read_with_a_real_parser(rest: Server) -> None:
    with (
        rest.client() as client,
        connect_sse(client, "POST", "/capabilities/tokens", json={"text": "a b"}) as source,
    ):
        assert source.response.headers["content-type"].startswith("text/event-stream")
        events = [(e.event, json.loads(e.data)) for e in source.iter_sse()]
    assert events == [
        ("item", {"index": 0, "text": "a"}),
        ("item", {"index": 1, "text": "b"}),
        ("done", {"done": True, "items": 2}),
    ]
    with (
        rest.client() as client,
        connect_sse(client, "POST", "/capabilities/two_then_fail", json={}) as source,
    ):
        events = [(e.event, json.loads(e.data)) for e in source.iter_sse()]
    assert events[-1] == (
        "error", {"error": {"status": 500, "detail": "Internal Server Error"}, "items": 2},
    )  # fmt: skip


def test_validation_happens_before_the_stream(rest: Server) -> None:
    with rest.client() as client:
        response = client.post("/capabilities/words", json={"text": 3})
        assert response.status_code == 422
        assert response.headers["content-type"] == "application/json"
        assert response.json()["detail"][0]["loc"] == ["body", "text"]


def test_the_limits_end_a_stream_with_the_error_record(rest: Server) -> None:
    lines = jsonl(rest, "forever", {})
    assert lines[:50] == list(range(50))
    assert lines[50]["items"] == 50
    assert lines[50]["error"]["status"] == 500
    assert "SVC_STREAM_MAX_ITEMS" in lines[50]["error"]["detail"]
    assert len(lines) == 51
    slow = jsonl(rest, "forever", {"delay": 3.0})  # idle limit: 2 s
    assert slow == [{"error": {"status": 504, "detail": slow[0]["error"]["detail"]}, "items": 0}]
    assert "SVC_STREAM_IDLE_SECONDS" in slow[0]["error"]["detail"]


def closed_count(server: Server) -> int:
    with server.client() as client:
        count: int = client.post("/capabilities/closed", json={}).json()
        return count


def settled_count(server: Server) -> int:
    """The count once no earlier test's stream is still closing (a generator closes when
    the item it was making returns: a test before may have left one mid-item)."""
    count, deadline = closed_count(server), time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.3)
        now = closed_count(server)
        if now == count:
            break
        count = now
    return count


def test_a_client_that_leaves_closes_the_generator(rest: Server) -> None:
    """The generator's ``finally`` runs (observed through its own counter)."""
    before = settled_count(rest)
    with (
        rest.client() as client,
        client.stream("POST", "/capabilities/forever", json={"delay": 0.05}) as response,
    ):
        received = response.iter_lines()  # kept: dropping it closes the response
        assert next(received) == "0"
        assert next(received) == "1"
        assert closed_count(rest) == before  # still streaming
    deadline = time.monotonic() + 10
    while closed_count(rest) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert closed_count(rest) == before + 1
    assert "the client left; stream closed" in rest.log_text()


def test_a_client_that_leaves_before_the_first_item_closes_the_generator(rest: Server) -> None:
    """The head came (the first item is slow), the client left: the generator is closed
    once the item it was making returns, not run on."""
    before = settled_count(rest)
    with (
        rest.client() as client,
        client.stream("POST", "/capabilities/forever", json={"delay": 1.0}) as response,
    ):
        assert response.status_code == 200
    deadline = time.monotonic() + 10
    while closed_count(rest) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert closed_count(rest) == before + 1


def test_a_generator_slow_to_its_first_item_gets_its_head_first(rest: Server) -> None:
    """A quick first item goes out with the response head (one read for the client); a
    slow one does not hold the head back, so a client or a proxy sees the stream begin."""
    with rest.client() as client:
        started = time.monotonic()
        with client.stream("POST", "/capabilities/forever", json={"delay": 1.5}) as response:
            head = time.monotonic() - started
            received = response.iter_lines()
            assert next(received) == "0"
            first = time.monotonic() - started
    assert head < 1.0
    assert first >= 1.5


def test_openapi_documents_both_media_types_and_docs_render(rest: Server) -> None:
    with rest.client() as client:
        document = client.get("/openapi.json").json()
        assert client.get("/docs").status_code == 200
    ok = document["paths"]["/capabilities/tokens"]["post"]["responses"]["200"]
    assert set(ok["content"]) == {"application/jsonl", "text/event-stream"}
    assert ok["content"]["application/jsonl"]["itemSchema"] == {
        "$ref": "#/components/schemas/Token"
    }
    assert "svc.StreamEnd" in document["components"]["schemas"]


@pytest.mark.slow
def test_schemathesis_over_a_bundle_with_streams(rest: Server, tmp_path: Path) -> None:
    """Every check, every operation but the one that never ends on its own (``forever``
    sleeps as long as asked; its limits are tested above)."""
    command = [
        str(Path(sys.executable).parent / "schemathesis"),
        *("run", f"{rest.url}/openapi.json", "--checks", "all", "--max-examples", "15"),
        *("--seed", "20261128", "--generation-database", "none", "--request-timeout", "20"),
        *("--no-color", "--exclude-operation-id-regex", "^forever$"),
    ]
    proc = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Tested: 9" in proc.stdout  # every capability but forever, and /health


# -- MCP, through the official client ---------------------------------------------------------
@pytest.fixture(scope="module")
def mcp_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("streams-mcp") / "bundle"
    generate(STREAMS, out, interface="mcp")
    return out


@pytest.fixture(scope="module")
def mcp_stdio(mcp_bundle: Path) -> Iterator[McpBundle]:
    client = McpBundle(mcp_bundle, env={"SVC_STREAM_MAX_ITEMS": "50"})
    try:
        yield client
    finally:
        client.close()


Progress = list[tuple[float, float | None, str | None]]


def with_progress(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    """A call with a progress callback: ``(result, notifications)``."""
    seen: Progress = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def call() -> tuple[types.CallToolResult, Progress]:
        result = await session.call_tool(name, arguments, progress_callback=on_progress)
        return result, seen

    return call()


def test_mcp_collects_the_items_and_sends_each_as_progress(mcp_stdio: McpBundle) -> None:
    assert mcp_stdio.session is not None
    result, seen = mcp_stdio.run(with_progress(mcp_stdio.session, "tokens", {"text": "a b c"}))
    assert not result.is_error
    assert result.structured_content == {
        "result": [{"index": i, "text": t} for i, t in enumerate("abc")]
    }
    assert seen == [
        (1, None, '{"index":0,"text":"a"}'),
        (2, None, '{"index":1,"text":"b"}'),
        (3, None, '{"index":2,"text":"c"}'),
    ]
    async_result = mcp_stdio.call("ticks", {"n": 4})
    assert async_result.structured_content == {"result": [0, 1, 2, 3]}
    tools = {t.name: t for t in mcp_stdio.list_tools().tools}
    assert tools["points"].output_schema is not None
    assert tools["points"].output_schema["properties"]["result"]["type"] == "array"


def test_mcp_stream_errors_and_limits_are_tool_errors(mcp_stdio: McpBundle) -> None:
    failed = mcp_stdio.call("two_then_fail", {})
    assert failed.is_error
    text = failed.content[0].text  # type: ignore[union-attr]
    assert "ValueError: the third item is missing (after 2 items)" in text
    limited = mcp_stdio.call("forever", {})
    assert limited.is_error
    assert "SVC_STREAM_MAX_ITEMS" in limited.content[0].text  # type: ignore[union-attr]
    invalid = mcp_stdio.call("words", {"text": 3})
    assert invalid.is_error


def test_mcp_over_streamable_http_with_progress(mcp_bundle: Path) -> None:
    with serving_mcp_http(mcp_bundle) as server:

        async def main() -> tuple[types.CallToolResult, Progress]:
            async with (
                httpx2.AsyncClient(timeout=30) as http,
                streamable_http_client(server.url + "/mcp", http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result: tuple[types.CallToolResult, Progress] = await with_progress(
                    session, "words", {"text": "one two"}
                )
                return result

        result, seen = asyncio.run(main())
    assert result.structured_content == {"result": ["one", "two"]}
    assert [(p, m) for p, _, m in seen] == [(1, '"one"'), (2, '"two"')]


def test_a_cancelled_mcp_call_closes_the_generator(mcp_stdio: McpBundle) -> None:
    assert mcp_stdio.session is not None
    session = mcp_stdio.session
    before = mcp_stdio.call("closed", {}).structured_content

    async def cancel_one() -> None:
        call = asyncio.ensure_future(session.call_tool("forever", {"delay": 0.05}))
        await asyncio.sleep(0.5)
        call.cancel()  # the client sends notifications/cancelled
        with contextlib.suppress(asyncio.CancelledError):
            await call

    mcp_stdio.run(cancel_one())
    assert before is not None
    deadline = time.monotonic() + 10
    count = before["result"]
    while count == before["result"] and time.monotonic() < deadline:
        time.sleep(0.1)
        now = mcp_stdio.call("closed", {}).structured_content
        assert now is not None
        count = now["result"]
    assert count == before["result"] + 1


def test_the_analysis_service_reports_streaming_capabilities() -> None:
    from svcc.service.analysis import result_document

    document = result_document(
        analyze_file(GOLDEN / "streams" / "input.py", module_name="streams", python_version="3.11")
    )
    functions = {f["name"]: f for f in document["functions"]}
    assert functions["tokens"]["stream"] == {"items": {"type": "Token", "of": []}}
    assert functions["ticks"]["stream"] == {"items": {"type": "int", "of": []}}
    assert functions["ticks"]["async"] is True
    assert "stream" not in functions["closed"]


def test_async_functions_are_awaited_on_the_loop_and_sync_generators_run_off_it(
    rest: Server,
) -> None:
    with rest.client() as client:
        assert client.post("/capabilities/on_the_loop", json={}).json() is True
    assert jsonl(rest, "item_thread", {}) == [False, {"done": True, "items": 1}]


def metric_samples(server: Server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with server.client() as client:
        exposition = client.get("/metrics").text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(exposition)
        for s in family.samples
    }


def test_a_stream_is_counted_once_with_its_outcome_and_logged_at_its_end(rest: Server) -> None:
    jsonl(rest, "two_then_fail", {})
    slow = jsonl(rest, "forever", {"delay": 2.5})  # the 2 s idle limit: a 504 record
    assert slow[-1]["error"]["status"] == 504
    total = "svc_requests_total"
    forever = (total, (("capability", "forever"), ("status", "504")))
    deadline = time.monotonic() + 10  # counted when the generator is closed: after its item
    samples = metric_samples(rest)
    while forever not in samples and time.monotonic() < deadline:
        time.sleep(0.1)
        samples = metric_samples(rest)
    assert samples[(total, (("capability", "two_then_fail"), ("status", "500")))] >= 1
    assert (total, (("capability", "two_then_fail"), ("status", "200"))) not in samples
    assert samples[forever] >= 1
    # the access line is written at the end: its duration is the whole stream's
    durations = [
        float(ms)
        for ms in re.findall(r'"POST /capabilities/forever" 200 ([0-9.]+)ms', rest.log_text())
    ]
    assert max(durations) >= 1900


def test_client_collections_show_how_to_read_a_stream(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    generate(STREAMS, bundle)
    out = tmp_path / "http"
    proc = run_svcc(
        "clients", "export", "--bundle", str(bundle), "--format", "http", "--output-dir", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    text = "\n".join(p.read_text() for p in sorted(out.rglob("*.http")))
    words = text[text.index("### words") :].split("###")[1]
    assert "Streams its items: JSON Lines" in words
    assert "Accept: text/event-stream" in words
    closed = text[text.index("### closed") :].split("###")[1]
    assert "Streams its items" not in closed
