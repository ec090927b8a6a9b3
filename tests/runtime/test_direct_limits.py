"""Direct-mode limits under load: ``SVC_MAX_CONCURRENCY`` refuses what is over the cap at
once (503 with ``Retry-After`` over REST, the busy tool error over MCP), admitted calls
answer, ``SVC_ASYNC_DEADLINE`` ends an async call with 504, and nothing hangs: every
request of a burst is answered within a bound, and the server serves again afterwards."""

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import mcp_types as types
import pytest
from mcp_client import McpBundle
from servers import Server, failed_start, generate, serving

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "limits" / "slow.py"
LIMITS = {"SVC_MAX_CONCURRENCY": "2", "SVC_ASYNC_DEADLINE": "3"}
BURST = 6
NAP = 1.5  # long enough that the whole burst arrives while the first two run


@pytest.fixture(scope="module")
def rest_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("limits") / "rest"
    generate(SOURCE, out)
    return out


@pytest.fixture(scope="module")
def server(rest_bundle: Path) -> Iterator[Server]:
    with serving(rest_bundle, env=LIMITS) as running:
        yield running


async def _burst(url: str, name: str, seconds: float) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        return await asyncio.gather(
            *(client.post(f"/capabilities/{name}", json={"seconds": seconds}) for _ in range(BURST))
        )


@pytest.mark.parametrize("name", ["nap", "doze"])
def test_rest_cap_refuses_the_excess_and_answers_the_rest(server: Server, name: str) -> None:
    started = time.monotonic()
    answers = asyncio.run(_burst(server.url, name, NAP))
    took = time.monotonic() - started
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [200, 200, *[503] * (BURST - 2)], [r.text for r in answers]
    for refused in (r for r in answers if r.status_code == 503):
        assert refused.headers["retry-after"] == "1"
        assert "too many calls" in refused.json()["detail"]
    assert all(r.json() == NAP for r in answers if r.status_code == 200)
    assert took < NAP + 5, "nothing waits for a slot: the excess is refused at once"
    with server.client() as client:  # the slots were given back
        assert client.post(f"/capabilities/{name}", json={"seconds": 0}).status_code == 200


def test_rest_async_deadline_is_a_504(server: Server) -> None:
    with server.client() as client:
        started = time.monotonic()
        late = client.post("/capabilities/nap", json={"seconds": 30})
        assert late.status_code == 504
        assert time.monotonic() - started < 10
        assert client.post("/capabilities/nap", json={"seconds": 0}).json() == 0


def test_a_bad_limit_stops_startup(rest_bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_MAX_CONCURRENCY", "many")
    code, output = failed_start(rest_bundle)
    assert code != 0
    assert "SVC_MAX_CONCURRENCY: expected a positive number, got 'many'" in output
    assert "Traceback" not in output


def test_mcp_cap_gives_the_busy_tool_error(tmp_path: Path) -> None:
    out = tmp_path / "mcp"
    generate(SOURCE, out, interface="mcp")
    client = McpBundle(out, env=LIMITS)
    try:
        assert client.session is not None
        session = client.session

        async def burst() -> list[types.CallToolResult]:
            calls = [session.call_tool("nap", {"seconds": NAP}) for _ in range(BURST)]
            return list(await asyncio.gather(*calls))

        results = client.run(burst())
        ok = [r for r in results if not r.is_error]
        busy = [r for r in results if r.is_error]
        assert len(ok) == 2
        assert [r.structured_content for r in ok] == [{"result": NAP}] * 2
        assert len(busy) == BURST - 2
        assert {r.content[0].text for r in busy} == {  # type: ignore[union-attr]
            "busy: too many calls are waiting; retry later"
        }
        late = client.call("nap", {"seconds": 30})
        assert late.is_error
        assert late.content[0].text == "timed out: the tool passed its time limit"  # type: ignore[union-attr]
        assert client.call("nap", {"seconds": 0}).structured_content == {"result": 0}
    finally:
        client.close()
