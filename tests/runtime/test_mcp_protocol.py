"""Protocol currency: which MCP revisions a bundle serves, checked with the official client.

The pinned SDK negotiates the newest handshake revision over ``initialize`` and serves the
sessionless 2026-07-28 revision over ``server/discover``; an older client that offers an
older revision gets that revision back. The negotiated versions are printed (``pytest -s``
shows them). Structured results keep the ``{"result": ...}`` wrapper in every revision:
the tool definitions (``outputSchema``) are one document served to every client."""

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from helpers import case_input
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
)
from servers import generate, serving_mcp_http

Step = Callable[[ClientSession], Awaitable[Any]]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("protocol") / "mcp"
    source = case_input("agent_hints")
    generate(
        source,
        out,
        "--data",
        str(source.parent / "prices.json"),
        "--allow",
        "paths,process",
        interface="mcp",
    )
    return out


def over_stdio(bundle: Path, step: Step) -> Any:
    async def main() -> Any:
        params = StdioServerParameters(command=sys.executable, args=["server.py"], cwd=str(bundle))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await step(session)

    return asyncio.run(main())


async def _handshake(session: ClientSession) -> tuple[str, Any, Any]:
    result = await session.initialize()
    tools = await session.list_tools()
    call = await session.call_tool("circle_area", {"radius": 1.0})
    return result.protocol_version, tools, call


async def _discover(session: ClientSession) -> tuple[list[str], Any, Any]:
    found = await session.discover()
    tools = await session.list_tools()
    call = await session.call_tool("circle_area", {"radius": 1.0})
    return list(found.supported_versions), tools, call


def _check(tools: Any, call: Any) -> None:
    listed = {t.name: t for t in tools.tools}
    assert listed["circle_area"].title == "Circle area"
    assert listed["circle_area"].annotations.read_only_hint is True
    assert [t.name for t in tools.tools] == sorted(listed, key=list(listed).index)
    assert call.structured_content == {"result": 3.141592653589793}  # the wrapper, always


def test_negotiated_versions_over_stdio(bundle: Path) -> None:
    version, tools, call = over_stdio(bundle, _handshake)
    print(f"\ninitialize negotiated {version}")
    assert version == LATEST_HANDSHAKE_VERSION
    _check(tools, call)
    supported, tools, call = over_stdio(bundle, _discover)
    print(f"server/discover supports {supported}")
    assert LATEST_MODERN_VERSION in supported
    dumped = tools.model_dump(by_alias=True, exclude_none=True)
    assert {"ttlMs", "cacheScope"} <= set(dumped), "2026-07-28 listing fields"
    _check(tools, call)


@pytest.mark.parametrize("offered", HANDSHAKE_PROTOCOL_VERSIONS[:-1])
def test_an_older_client_gets_its_version(bundle: Path, offered: str) -> None:
    """A raw ``initialize`` offering an older revision, as an older client sends it."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": offered,
            "capabilities": {},
            "clientInfo": {"name": "old-client", "version": "1"},
        },
    }
    with subprocess.Popen(
        [sys.executable, "server.py"],
        cwd=bundle,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        proc.stdin.close()
        proc.wait(timeout=30)
    assert answer["result"]["protocolVersion"] == offered


def test_negotiated_versions_over_http(bundle: Path) -> None:
    with serving_mcp_http(bundle) as server:

        def over_http(step: Step) -> Any:
            async def main() -> Any:
                async with (
                    httpx2.AsyncClient(timeout=30) as http,
                    streamable_http_client(server.url + "/mcp", http_client=http) as (r, w),
                    ClientSession(r, w) as session,
                ):
                    return await step(session)

            return asyncio.run(main())

        version, tools, call = over_http(_handshake)
        print(f"\ninitialize over HTTP negotiated {version}")
        assert version == LATEST_HANDSHAKE_VERSION
        _check(tools, call)
        supported, tools, call = over_http(_discover)
        print(f"server/discover over HTTP supports {supported}")
        assert LATEST_MODERN_VERSION in supported
        _check(tools, call)
