"""The language server under edits: diagnostics latency and memory.

Starts ``svcc lsp`` on stdio (pygls' client), opens a module of about 2,000 lines (200
functions, a module-level ``print``, an unannotated parameter each: 201 diagnostics), then:

- **latency**: ``--edits`` edits, one at a time; each changes one function's body (a
  literal), and the time runs from sending ``didChange`` to receiving the diagnostics
  published for that version (the debounce included, as a user waits it). Prints the
  median, p90 and the slowest.
- **memory**: ``--memory-edits`` more edits the same way (each waited for, so each is
  analysed), with the server's resident set (``VmRSS``) read after the warm-up and at the
  end; the growth after the warm-up is what the edits kept.

Usage: ``python bench/bench_lsp.py [--edits 40] [--memory-edits 500] [--debounce-ms 100]``.
Not part of the test suite; it never asserts a time (the machine is shared).
"""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

SVCC = str(Path(sys.executable).parent / "svcc")


def module(functions: int = 200) -> list[str]:
    lines = ['"""A large module."""', "import math", "", 'print("loaded")', ""]
    for i in range(functions):
        lines += [
            "",
            f"def f{i}(x: float, y=2):",
            f'    """Function {i}: scales x and adds y."""',
            f"    a = x * {i}",
            "    b = a + y",
            "    if a > b:",
            "        return math.sqrt(a)",
            "    c = [a, b, a * b]",
            "    return sum(c) / len(c)",
            "",
        ]
    return lines


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Bench:
    def __init__(self, client: LanguageClient, uri: str, lines: list[str]) -> None:
        self.client = client
        self.uri = uri
        self.lines = lines
        self.version = 1
        self.arrived: dict[int, float] = {}
        self.waiting: dict[int, asyncio.Future[float]] = {}

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            if params.uri != self.uri or params.version is None:
                return
            now = time.perf_counter()
            future = self.waiting.pop(params.version, None)
            if future is not None and not future.done():
                future.set_result(now)

    def expect(self, version: int) -> "asyncio.Future[float]":
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiting[version] = future
        return future

    async def open(self) -> None:
        arrived = self.expect(1)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=self.uri, language_id="python", version=1, text="\n".join(self.lines)
                )
            )
        )
        await asyncio.wait_for(arrived, 120)

    async def edit(self, n: int) -> float:
        """One edit (a literal in function ``n % 200``), its latency in seconds."""
        self.version += 1
        line = 5 + (n % 200) * 10 + 3  # ``    a = x * {i}`` of that function
        new = f"    a = x * {n + 1000}"
        arrived = self.expect(self.version)
        sent = time.perf_counter()
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri, version=self.version
                ),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=line, character=0),
                            end=types.Position(line=line, character=len(self.lines[line])),
                        ),
                        text=new,
                    )
                ],
            )
        )
        self.lines[line] = new
        return await asyncio.wait_for(arrived, 120) - sent


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--memory-edits", type=int, default=500)
    parser.add_argument("--debounce-ms", type=int, default=100)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="svcc-bench-lsp-") as tmp:
        path = Path(tmp) / "big.py"
        lines = module()
        path.write_text("\n".join(lines))
        client = LanguageClient("bench", "1")
        await client.start_io(SVCC, "lsp", "--debounce-ms", str(args.debounce_ms))
        assert client._server is not None  # the server process: its pid, for /proc
        pid = client._server.pid
        try:
            await client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(), root_uri=Path(tmp).as_uri()
                )
            )
            client.initialized(types.InitializedParams())
            bench = Bench(client, path.as_uri(), lines)
            started = time.perf_counter()
            await bench.open()
            print(
                f"module: {len(lines)} lines; first diagnostics after open: "
                f"{(time.perf_counter() - started) * 1000:.0f} ms"
            )
            for n in range(5):  # warm-up
                await bench.edit(n)
            latencies = [await bench.edit(n) for n in range(args.edits)]
            ms = sorted(x * 1000 for x in latencies)
            print(
                f"latency after an edit (debounce {args.debounce_ms} ms included), "
                f"{len(ms)} edits: median {statistics.median(ms):.0f} ms, "
                f"p90 {ms[int(len(ms) * 0.9) - 1]:.0f} ms, max {ms[-1]:.0f} ms"
            )
            for n in range(20):  # warm-up of the memory phase
                await bench.edit(n)
            before = rss_kib(pid)
            started = time.perf_counter()
            for n in range(args.memory_edits):
                await bench.edit(n)
            after = rss_kib(pid)
            print(
                f"server memory: {before / 1024:.1f} MiB after warm-up, {after / 1024:.1f} MiB "
                f"after {args.memory_edits} more edits ({(after - before) / 1024:+.1f} MiB; "
                f"{time.perf_counter() - started:.0f} s)"
            )
            print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            await client.shutdown_async(None)
            client.exit(None)
        finally:
            await client.stop()


if __name__ == "__main__":
    asyncio.run(main())
