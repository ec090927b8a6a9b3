"""Median round-trip latency of ``call_tool`` through a generated MCP bundle against a
hand-written server for the same function using the SDK's own high-level API (``MCPServer``).

Both run over stdio under the same interpreter, driven by the same official client in this
process; calls are sequential and the two servers alternate in blocks, so drift in the
machine's load hits both. Besides the round trip, each server's CPU time per call (its
process's user + system time over a block, divided by the calls) is printed: on a shared
machine it moves less with the load than wall time. Usage: ``python bench/bench_mcp.py
[--calls 400] [--blocks 5]``. Not part of the test suite; it never asserts a time.
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def children() -> set[int]:
    """The pids of this process's children (``/proc``: the stdio client starts the server)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(
    directory: Path, script: str, calls: int, blocks: int
) -> tuple[list[list[float]], list[float]]:
    """Per block, the latencies (seconds) of ``calls`` sequential ``call_tool`` round trips,
    and the server's CPU seconds per call."""
    params = StdioServerParameters(command=sys.executable, args=[script], cwd=str(directory))
    out: list[list[float]] = []
    cpu: list[float] = []
    before_start = children()
    with open(directory / "stderr.log", "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            (server,) = children() - before_start
            for _ in range(50):  # warm-up
                await session.call_tool("add", {"a": 1, "b": 2})
            for _ in range(blocks):
                block = []
                spent = cpu_seconds(server)
                for i in range(calls):
                    started = time.perf_counter()
                    result = await session.call_tool("add", {"a": i, "b": 1})
                    block.append(time.perf_counter() - started)
                    if result.is_error or result.structured_content != {"result": i + 1}:
                        raise SystemExit(f"wrong result from {directory.name}: {result}")
                cpu.append((cpu_seconds(server) - spent) / calls)
                out.append(block)
                await asyncio.sleep(0)
    return out, cpu


async def run(
    args: argparse.Namespace, servers: dict[str, tuple[Path, str]]
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    latencies: dict[str, list[float]] = {name: [] for name in servers}
    cpu: dict[str, list[float]] = {name: [] for name in servers}
    for round_ in range(args.blocks):
        for name, (directory, script) in servers.items():
            blocks, spent = await measure(directory, script, args.calls, 1)
            latencies[name].extend(blocks[0])
            cpu[name].extend(spent)
            median_ms = statistics.median(blocks[0]) * 1000
            print(
                f"block {round_ + 1}: {name:11s} median {median_ms:.3f} ms  "
                f"{spent[0] * 1e6:5.0f} us CPU/call  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    return latencies, cpu


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
        latencies, cpu = asyncio.run(run(args, servers))
    gen = statistics.median(latencies["generated"]) * 1000
    hand = statistics.median(latencies["handwritten"]) * 1000
    p90 = {
        name: statistics.quantiles(values, n=10)[-1] * 1000 for name, values in latencies.items()
    }
    print(f"\ngenerated   median {gen:.3f} ms  p90 {p90['generated']:.3f} ms")
    print(f"handwritten median {hand:.3f} ms  p90 {p90['handwritten']:.3f} ms")
    print(f"ratio generated/handwritten (median): {gen / hand:.2f}x (target <= 0.9x)")
    us = {name: statistics.median(values) * 1e6 for name, values in cpu.items()}
    print(
        f"server CPU per call (median of blocks): generated {us['generated']:.0f} us, "
        f"handwritten {us['handwritten']:.0f} us, ratio {us['generated'] / us['handwritten']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
