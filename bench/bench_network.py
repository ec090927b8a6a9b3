"""What serving on a network costs (DESIGN §13), each figure a ratio within one run.

1. REST requests/second of one generated bundle with bearer-token authentication and
   Prometheus metrics on (``SVC_AUTH_TOKENS_FILE`` set, metrics on by default) against the
   same bundle with both off (no tokens file, ``SVC_METRICS=0``); goal >= 0.95. Both send the
   same request, ``Authorization`` header included, and both write the access log line
   (request ids are always on). Same load generator as ``bench_rest.py`` (keep-alive
   connections on loopback, in a separate process), the two servers alternating over rounds.
2. MCP ``call_tool`` round-trip latency over streamable HTTP: the generated bundle
   (``python server.py --transport streamable-http``, metrics on) against a hand-written
   ``MCPServer`` tool for the same function served the same way (stateless, JSON
   responses), one official client session each, sequential calls, alternating in blocks;
   goal <= 1.0x.

Usage: ``python bench/bench_network.py [--seconds 4] [--rounds 3] [--calls 300] [--blocks 4]``.
Not part of the test suite; it never asserts a time.
"""

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rest import BODY, LOADGEN, PYTHON, SOURCE, SVCC, free_port

TOKEN = "bench-token-0123456789"
REQUEST = (
    b"POST /capabilities/add HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n"
    b"Content-Length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY
)

HANDWRITTEN_MCP = '''\
"""What a careful person writes with the SDK's high-level API, served over streamable HTTP."""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("add", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run(
        "streamable-http",
        host="127.0.0.1",
        port=int(sys.argv[1]),
        stateless_http=True,
        json_response=True,
    )
'''


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(
    proc: subprocess.Popen[bytes], port: int, seconds: float, conns: int
) -> tuple[float, float]:
    """``(requests/second, requests per server CPU-second)`` of one load window: the second
    figure holds still when other work on the machine takes the CPU away from the server."""
    cpu = cpu_seconds(proc.pid)
    started = time.monotonic()
    out = subprocess.run(
        [PYTHON, "-c", LOADGEN, str(port), str(seconds), str(conns)],
        input=REQUEST,
        capture_output=True,
        check=True,
    ).stdout.split()
    elapsed = time.monotonic() - started
    done, errors = int(out[0]), int(out[1])
    if errors:
        raise SystemExit(f"{errors} non-200 responses on port {port}")
    return done / max(elapsed, seconds), done / max(cpu_seconds(proc.pid) - cpu, 1e-9)


def start(command: list[str], cwd: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A server whose output is discarded (the access log would fill a pipe), once healthy."""
    import httpx

    proc = subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server in {cwd} exited {proc.returncode}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=0.5)
            return proc
        except httpx.TransportError:
            time.sleep(0.1)
    raise SystemExit(f"server in {cwd} did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def compile_bundle(base: Path, target: str) -> Path:
    out = base / target
    subprocess.run(
        [SVCC, "compile", str(base / "add.py"), "--target", target, "--output-dir", str(out)],
        check=True,
        capture_output=True,
    )
    return out


def rest_ratio(base: Path, seconds: float, rounds: int, connections: int) -> None:
    bundle = compile_bundle(base, "rest")
    tokens = base / "tokens"
    tokens.write_text(f"# bench\n{TOKEN}\n")
    variants = {
        "auth+metrics on": {"SVC_AUTH_TOKENS_FILE": str(tokens)},
        "both off": {"SVC_METRICS": "0"},
    }
    rates: dict[str, list[float]] = {name: [] for name in variants}
    per_cpu: dict[str, list[float]] = {name: [] for name in variants}
    for round_ in range(rounds):
        for name, env in variants.items():
            port = free_port()
            command = [PYTHON, "-m", "uvicorn", "app:app", "--port", str(port)]
            proc = start([*command, "--no-access-log", "--log-level", "warning"], bundle, port, env)
            try:
                load(proc, port, 1.0, connections)  # warm-up
                rate, cpu_rate = load(proc, port, seconds, connections)
            finally:
                stop(proc)
            rates[name].append(rate)
            per_cpu[name].append(cpu_rate)
            print(
                f"round {round_ + 1}: REST {name:16s} {rate:8.0f} req/s "
                f"{cpu_rate:8.0f} req per server CPU-second",
                flush=True,
            )
    on, off = (statistics.median(rates[n]) for n in variants)
    cpu_on, cpu_off = (statistics.median(per_cpu[n]) for n in variants)
    print(f"\nREST auth+metrics on {on:8.0f} req/s, both off {off:8.0f} req/s (medians)")
    print(f"ratio on/off: {on / off:.2f} (goal >= 0.95)")
    print(
        f"per server CPU-second: on {cpu_on:.0f}, off {cpu_off:.0f}, ratio {cpu_on / cpu_off:.2f}\n"
    )


async def _latencies(url: str, calls: int) -> list[float]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for _ in range(20):  # warm-up
            await session.call_tool("add", {"a": 1, "b": 2})
        out = []
        for i in range(calls):
            started = time.perf_counter()
            result: Any = await session.call_tool("add", {"a": i, "b": 1})
            out.append(time.perf_counter() - started)
            assert not result.is_error
    return out


def mcp_ratio(base: Path, calls: int, blocks: int) -> None:
    bundle = compile_bundle(base, "mcp")
    hand = base / "handwritten-mcp"
    hand.mkdir()
    (hand / "server.py").write_text(HANDWRITTEN_MCP)
    servers = {
        "generated": (bundle, ["server.py", "--transport", "streamable-http", "--port"]),
        "handwritten": (hand, ["server.py"]),
    }
    samples: dict[str, list[float]] = {name: [] for name in servers}
    for block in range(blocks):
        for name, (directory, args) in servers.items():
            port = free_port()
            proc = start([PYTHON, *args, str(port)], directory, port, {})
            try:
                block_samples = asyncio.run(_latencies(f"http://127.0.0.1:{port}/mcp", calls))
            finally:
                stop(proc)
            samples[name] += block_samples
            median = statistics.median(block_samples) * 1000
            print(f"block {block + 1}: MCP {name:11s} median {median:.2f} ms", flush=True)
    gen, hand_ms = (statistics.median(samples[n]) * 1000 for n in servers)
    print(
        f"\nMCP over streamable HTTP: generated {gen:.2f} ms, "
        f"hand-written MCPServer {hand_ms:.2f} ms"
    )
    print(f"ratio generated/hand-written: {gen / hand_ms:.2f}x (goal <= 1.0x)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--blocks", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="svcc-bench-network-") as tmp:
        base = Path(tmp)
        (base / "add.py").write_text(SOURCE)
        rest_ratio(base, args.seconds, args.rounds, args.connections)
        mcp_ratio(base, args.calls, args.blocks)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
