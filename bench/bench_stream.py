"""Streams: items/second of a generated server's JSON Lines against a hand-written FastAPI
``StreamingResponse`` of the same generator, and the time to the first item against a
non-streaming call of the same work.

Both servers run under uvicorn, one process each, access logs off, and are read by the same
client (httpx, streaming, on loopback) alternately over several rounds in one run; medians
are compared. The generator yields 10,000 small objects (``{"i": i, "sq": i * i}``); the
hand-written app encodes each with ``json.dumps`` and a newline, as a careful person writes
a JSON Lines endpoint (FastAPI iterates a sync generator in its thread pool, an item per
hop). Goals: items/second >= 1.0x the hand-written app's; time to the first item of a
one-item stream <= 1.1x the time of a plain call returning the same item (the two requests
alternate one by one, so a change of load meets both). The load average is printed with
each round: on a shared machine every wall-clock figure moves with it, so the server's CPU
time per request is read too (Linux: the server threads' ``schedstat``), for a one-item
stream read to its end and for a plain call. Last, the same two first bodies are timed in
this process, the application called without a network and the two alternating (the
server's own share of the time to the first item), in wall-clock time and in CPU time up to
the first body, on the event loop uvicorn would use (uvloop when installed), for sync and
for ``async def`` functions.

Usage: ``python bench/bench_stream.py [--rounds 5] [--items 10000]``. Not part of the test
suite; it never asserts a time.
"""

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

PYTHON = sys.executable
SVCC = str(Path(PYTHON).parent / "svcc")

SOURCE = '''\
"""The benchmark's functions."""

from collections.abc import AsyncIterator, Iterator
from typing import TypedDict


class Row(TypedDict):
    i: int
    sq: int


def rows(n: int) -> Iterator[Row]:
    """n small objects, one at a time."""
    for i in range(n):
        yield {"i": i, "sq": i * i}


def first_row(n: int) -> Row:
    """The first of them, returned."""
    return {"i": 0, "sq": 0}


def all_rows(n: int) -> list[Row]:
    """All n, returned at once."""
    return [{"i": i, "sq": i * i} for i in range(n)]


async def async_rows(n: int) -> AsyncIterator[Row]:
    """rows, as an async generator (on the event loop)."""
    for i in range(n):
        yield {"i": i, "sq": i * i}


async def async_first_row(n: int) -> Row:
    """first_row, as an async function."""
    return {"i": 0, "sq": 0}
'''

HANDWRITTEN = '''\
"""What a careful person writes by hand: the same generator as a JSON Lines stream."""

import json

from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict


def rows(n):
    for i in range(n):
        yield {"i": i, "sq": i * i}


class RowsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    n: int


app = FastAPI()


@app.post("/capabilities/rows")
def rows_endpoint(request: RowsRequest):
    lines = (json.dumps(row, separators=(",", ":")) + "\\n" for row in rows(request.n))
    return StreamingResponse(lines, media_type="application/jsonl")
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(directory: Path, port: int) -> "subprocess.Popen[bytes]":
    command = [PYTHON, "-m", "uvicorn", "app:app", "--port", str(port), "--no-access-log"]
    proc = subprocess.Popen(
        command,
        cwd=directory,
        env={**os.environ, "SVC_ACCESS_LOG": "0", "SVC_STREAM_MAX_ITEMS": "1000000"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/docs", timeout=1)
            return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    stop(proc)
    raise SystemExit(f"the server in {directory} did not start")


def stop(proc: "subprocess.Popen[bytes]") -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def stream_rate(client: httpx.Client, url: str, items: int) -> float:
    """Items per second of one whole stream (every line read and counted)."""
    started = time.perf_counter()
    count = 0
    with client.stream("POST", url, json={"n": items}) as response:
        for line in response.iter_lines():
            if line:
                count += 1
    elapsed = time.perf_counter() - started
    assert count >= items, count
    return items / elapsed


def first_item(client: httpx.Client, url: str, n: int = 1) -> float:
    """Seconds to the first line of a stream of ``n`` items."""
    started = time.perf_counter()
    with client.stream("POST", url, json={"n": n}) as response:
        lines = response.iter_lines()
        next(lines)
        elapsed = time.perf_counter() - started
        for _ in lines:
            pass
    return elapsed


def plain_call(client: httpx.Client, url: str, n: int = 1) -> float:
    started = time.perf_counter()
    response = client.post(url, json={"n": n})
    response.read()
    return time.perf_counter() - started


def median_of(fn: "object", repeat: int) -> float:
    return statistics.median(fn() for _ in range(repeat))  # type: ignore[operator]


def cpu_seconds(pid: int) -> float:
    """The CPU time every thread of a process has used so far (Linux: nanoseconds in each
    thread's ``schedstat``; the server's pool threads live as long as it does)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return total / 1e9


class Paired:
    """A one-item stream's first item and a plain call of the same work, alternating one by
    one (which goes first alternates too): wall-clock seconds each, and the server's CPU
    seconds for each request whole (the stream read to its end)."""

    def __init__(self, client: httpx.Client, base: str, pid: int) -> None:
        self.client, self.base, self.pid = client, base, pid
        self.cpu_ok = Path(f"/proc/{pid}/task").is_dir()
        self.first: list[float] = []
        self.plain: list[float] = []
        self.first_cpu: list[float] = []
        self.plain_cpu: list[float] = []

    def _timed(self, stream: bool) -> None:
        before = cpu_seconds(self.pid) if self.cpu_ok else 0.0
        if stream:
            self.first.append(first_item(self.client, f"{self.base}/rows"))
        else:
            self.plain.append(plain_call(self.client, f"{self.base}/first_row"))
        if self.cpu_ok:
            used = cpu_seconds(self.pid) - before
            (self.first_cpu if stream else self.plain_cpu).append(used)

    def round(self, pairs: int) -> tuple[float, float]:
        """``pairs`` of each; the medians of this round."""
        start = len(self.first)
        for index in range(pairs):
            self._timed(stream=index % 2 == 0)
            self._timed(stream=index % 2 == 1)
        return (
            statistics.median(self.first[start:]),
            statistics.median(self.plain[start:]),
        )


Figures = tuple[float, float, float, float]


def in_process(bundle: Path, repeat: int = 500) -> tuple[Figures, Figures]:
    """The server's own time to the first body of a one-item stream and to a plain call's
    body (median seconds, the two alternating), and the CPU time this process used up to
    it (mean seconds, every thread), its application called in this process without a
    network: less noise than a round trip on a loaded machine, the client's work left out.
    For sync functions, then for ``async def`` ones."""
    import asyncio

    os.environ["SVC_ACCESS_LOG"] = "0"
    sys.path.insert(0, str(bundle))
    from svc_runtime.rest import create_app  # type: ignore[import-not-found]

    app = create_app(bundle)

    async def first_body(path: str) -> tuple[float, float]:
        delivered, ended = [False], asyncio.Event()
        first: list[tuple[float, float]] = []

        async def receive() -> dict[str, object]:
            if not delivered[0]:
                delivered[0] = True
                return {"type": "http.request", "body": b'{"n": 1}', "more_body": False}
            await ended.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, object]) -> None:
            if message["type"] == "http.response.body":
                if not first:
                    first.append((time.perf_counter(), time.process_time()))
                if not message.get("more_body"):
                    ended.set()

        headers = [(b"content-type", b"application/json")]
        scope = {"type": "http", "method": "POST", "path": path, "headers": headers}
        started, cpu = time.perf_counter(), time.process_time()
        await app(scope, receive, send)
        return first[0][0] - started, first[0][1] - cpu

    async def measure(stream: str, plain: str) -> Figures:
        for _ in range(100):
            await first_body(f"/capabilities/{stream}")
            await first_body(f"/capabilities/{plain}")
        streams: list[tuple[float, float]] = []
        plains: list[tuple[float, float]] = []
        for index in range(repeat):
            order = [(streams, stream), (plains, plain)]
            for into, name in order if index % 2 == 0 else order[::-1]:
                into.append(await first_body(f"/capabilities/{name}"))
        return (
            statistics.median(wall for wall, _ in streams),
            statistics.median(wall for wall, _ in plains),
            statistics.fmean(cpu for _, cpu in streams),
            statistics.fmean(cpu for _, cpu in plains),
        )

    async def both() -> tuple[Figures, Figures]:
        sync = await measure("rows", "first_row")
        return sync, await measure("async_rows", "async_first_row")

    try:  # the event loop uvicorn serves on when it is installed (``--loop auto``)
        import uvloop
    except ImportError:
        return asyncio.run(both())
    return uvloop.run(both())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--items", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bench_streams.py").write_text(SOURCE)
        bundle = root / "generated"
        subprocess.run(
            [SVCC, "generate", "rest", str(root / "bench_streams.py"), "--output-dir", str(bundle)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        hand = root / "handwritten"
        hand.mkdir()
        (hand / "app.py").write_text(HANDWRITTEN)
        ports = {"generated": free_port(), "handwritten": free_port()}
        servers = {"generated": start(bundle, ports["generated"])}
        servers["handwritten"] = start(hand, ports["handwritten"])
        rates: dict[str, list[float]] = {"generated": [], "handwritten": []}
        firsts: list[float] = []
        plains: list[float] = []
        paired: Paired | None = None
        hand_firsts: list[float] = []
        long_firsts: list[float] = []
        long_plains: list[float] = []
        try:
            with httpx.Client(timeout=60) as client:
                for port in ports.values():  # warm-up
                    stream_rate(client, f"http://127.0.0.1:{port}/capabilities/rows", 1000)
                base = f"http://127.0.0.1:{ports['generated']}/capabilities"
                paired = Paired(client, base, servers["generated"].pid)
                hand = f"http://127.0.0.1:{ports['handwritten']}/capabilities/rows"
                for index in range(args.rounds):
                    for name, port in ports.items():
                        url = f"http://127.0.0.1:{port}/capabilities/rows"
                        rates[name].append(stream_rate(client, url, args.items))
                    first, plain = paired.round(21)
                    firsts.append(first)
                    plains.append(plain)
                    hand_firsts.append(median_of(lambda: first_item(client, hand), 21))
                    long_firsts.append(
                        median_of(lambda: first_item(client, f"{base}/rows", args.items), 5)
                    )
                    long_plains.append(
                        median_of(lambda: plain_call(client, f"{base}/all_rows", args.items), 5)
                    )
                    load = os.getloadavg()[0]
                    print(
                        f"round {index + 1}: generated {rates['generated'][-1]:,.0f} items/s, "
                        f"hand-written {rates['handwritten'][-1]:,.0f} items/s; first item "
                        f"{firsts[-1] * 1000:.2f} ms (hand-written "
                        f"{hand_firsts[-1] * 1000:.2f} ms), plain call {plains[-1] * 1000:.2f} ms "
                        f"(load {load:.1f})"
                    )
        finally:
            for proc in servers.values():
                stop(proc)
        sync, asynchronous = in_process(bundle)
    generated = statistics.median(rates["generated"])
    handwritten = statistics.median(rates["handwritten"])
    first = statistics.median(firsts)
    plain = statistics.median(plains)
    print(
        f"items/s over JSON Lines ({args.items:,} items): generated {generated:,.0f}, "
        f"hand-written StreamingResponse {handwritten:,.0f}: {generated / handwritten:.2f}x "
        "(goal >= 1.0x)"
    )
    print(
        f"time to the first item {first * 1000:.2f} ms, plain call of the same work "
        f"{plain * 1000:.2f} ms: {first / plain:.2f}x (goal <= 1.1x); the hand-written "
        f"stream's first item {statistics.median(hand_firsts) * 1000:.2f} ms"
    )
    if paired is not None and paired.cpu_ok:
        stream_used = statistics.fmean(paired.first_cpu)
        plain_used = statistics.fmean(paired.plain_cpu)
        print(
            f"server CPU per request: a one-item stream read to its end {stream_used * 1e6:.0f} "
            f"us, a plain call {plain_used * 1e6:.0f} us: {stream_used / plain_used:.2f}x"
        )
    print(
        f"first item of a {args.items:,}-item stream {statistics.median(long_firsts) * 1000:.2f} "
        f"ms, the same {args.items:,} items returned at once "
        f"{statistics.median(long_plains) * 1000:.2f} ms"
    )
    for label, (stream_body, plain_body, stream_cpu, plain_cpu) in (
        ("", sync),
        (", async def", asynchronous),
    ):
        print(
            f"in process (no network{label}): first body of a stream {stream_body * 1e6:.0f} "
            f"us, of a plain call {plain_body * 1e6:.0f} us: {stream_body / plain_body:.2f}x; "
            f"CPU time to it {stream_cpu * 1e6:.0f} us against {plain_cpu * 1e6:.0f} us: "
            f"{stream_cpu / plain_cpu:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
