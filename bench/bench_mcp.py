"""Median round-trip latency of ``call_tool`` through a generated MCP bundle against a
hand-written server for the same function using the SDK's own high-level API (``MCPServer``).

Both run over stdio under the same interpreter, driven by the same official client in this
process; calls are sequential and the two servers alternate in blocks, so drift in the
machine's load hits both. Usage: ``python bench/bench_mcp.py [--calls 400] [--blocks 5]``.
Not part of the test suite; it never asserts a time.
"""

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SVCC = str(Path(sys.executable).parent / "svcc")

SOURCE = '''\
"""The benchmark's function."""


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''

HANDWRITTEN = '''\
"""What a careful person writes with the SDK's high-level API for the same function."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("add")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run()
'''


async def measure(directory: Path, script: str, calls: int, blocks: int) -> list[list[float]]:
    """Per block, the latencies (seconds) of ``calls`` sequential ``call_tool`` round trips."""
    params = StdioServerParameters(command=sys.executable, args=[script], cwd=str(directory))
    out: list[list[float]] = []
    with open(directory / "stderr.log", "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            for _ in range(50):  # warm-up
                await session.call_tool("add", {"a": 1, "b": 2})
            for _ in range(blocks):
                block = []
                for i in range(calls):
                    started = time.perf_counter()
                    result = await session.call_tool("add", {"a": i, "b": 1})
                    block.append(time.perf_counter() - started)
                    if result.is_error or result.structured_content != {"result": i + 1}:
                        raise SystemExit(f"wrong result from {directory.name}: {result}")
                out.append(block)
                await asyncio.sleep(0)
    return out


async def run(args: argparse.Namespace, servers: dict[str, tuple[Path, str]]) -> dict[str, Any]:
    latencies: dict[str, list[float]] = {name: [] for name in servers}
    for round_ in range(args.blocks):
        for name, (directory, script) in servers.items():
            blocks = await measure(directory, script, args.calls, 1)
            latencies[name].extend(blocks[0])
            median_ms = statistics.median(blocks[0]) * 1000
            print(f"block {round_ + 1}: {name:11s} median {median_ms:.3f} ms", flush=True)
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--blocks", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="svcc-bench-mcp-") as tmp:
        base = Path(tmp)
        (base / "add.py").write_text(SOURCE)
        generated = base / "generated"
        subprocess.run(
            [SVCC, "generate", "mcp", str(base / "add.py"), "--output-dir", str(generated)],
            check=True,
            capture_output=True,
        )
        handwritten = base / "handwritten"
        handwritten.mkdir()
        (handwritten / "server.py").write_text(HANDWRITTEN)
        servers = {"generated": (generated, "server.py"), "handwritten": (handwritten, "server.py")}
        latencies = asyncio.run(run(args, servers))
    gen = statistics.median(latencies["generated"]) * 1000
    hand = statistics.median(latencies["handwritten"]) * 1000
    p90 = {
        name: statistics.quantiles(values, n=10)[-1] * 1000 for name, values in latencies.items()
    }
    print(f"\ngenerated   median {gen:.3f} ms  p90 {p90['generated']:.3f} ms")
    print(f"handwritten median {hand:.3f} ms  p90 {p90['handwritten']:.3f} ms")
    print(f"ratio generated/handwritten (median): {gen / hand:.2f}x (target <= 1.1x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
