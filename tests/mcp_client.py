"""A generated MCP bundle driven by the official ``mcp`` client over stdio, from sync tests.

The client session lives in one background event loop for as long as the fixture does
(``stdio_client`` and ``ClientSession`` must be entered and left in the same task); tests
submit coroutines to it and wait for their results.
"""

import asyncio
import os
import sys
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

T = TypeVar("T")


class McpBundle:
    def __init__(
        self, bundle: Path, env: dict[str, str] | None = None, command: list[str] | None = None
    ) -> None:
        """``command``: how to start the server (default: ``python server.py`` in the bundle;
        the OCI tests pass ``docker run -i IMAGE``)."""
        self.bundle = bundle
        self._command = command or [sys.executable, "server.py"]
        self.errlog_path = bundle.parent / f"{bundle.name}-stderr.log"
        self._env = {**os.environ, **(env or {})}
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self.session: ClientSession | None = None
        self.initialize_result: types.InitializeResult | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(60):
            raise AssertionError("MCP session did not start")
        if self._failure is not None:
            raise AssertionError(f"MCP session failed: {self._failure!r}: {self.stderr()}")

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported to the test thread
            self._failure = exc
            self._ready.set()

    async def _main(self) -> None:
        params = StdioServerParameters(
            command=self._command[0], args=self._command[1:], cwd=str(self.bundle), env=self._env
        )
        with self.errlog_path.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                self.initialize_result = await session.initialize()
                self.session = session
                self._loop = asyncio.get_running_loop()
                self._stop = asyncio.Event()
                self._ready.set()
                await self._stop.wait()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        assert self._loop is not None
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout)

    def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        assert self.session is not None
        return self.run(self.session.call_tool(name, arguments))

    def list_tools(self) -> types.ListToolsResult:
        assert self.session is not None
        return self.run(self.session.list_tools())

    def stderr(self) -> str:
        return self.errlog_path.read_text(errors="replace") if self.errlog_path.exists() else ""

    def close(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
