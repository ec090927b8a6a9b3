"""``/health`` latency of a generated REST server while another client sends a hostile body.

One client posts a 15 MB JSON body of 3.75 million invalid list items in a loop (each
answer must be a small 422); another asks ``/health`` every 20 ms and records the latency.
The same ``/health`` loop first runs on the idle server: the ratio loaded/idle is printed
with p50, p99 and max, the hostile requests answered, and the server's resident memory
before and after. Target: p99 under load < 100 ms.

Usage: ``python bench/bench_hostile_load.py [--seconds 20]``. Not part of the test suite.
"""

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

PYTHON = sys.executable
SVCC = str(Path(PYTHON).parent / "svcc")
SOURCE = 'def total(xs: list[int]) -> int:\n    """Sum."""\n    return sum(xs)\n'
HOSTILE = b'{"xs": [' + b",".join([b'"a"'] * 3_749_990) + b"]}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def health_latencies(url: str, seconds: float) -> list[float]:
    out = []
    deadline = time.monotonic() + seconds
    with httpx.Client(base_url=url, timeout=60) as client:
        while time.monotonic() < deadline:
            started = time.perf_counter()
            if client.get("/health").status_code != 200:
                raise SystemExit("/health failed")
            out.append(time.perf_counter() - started)
            time.sleep(0.02)
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def describe(name: str, values: list[float]) -> str:
    return (
        f"{name:6s} /health n={len(values):4d}  p50 {statistics.median(values) * 1000:7.1f} ms  "
        f"p99 {percentile(values, 0.99) * 1000:7.1f} ms  max {max(values) * 1000:7.1f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="svcc-bench-hostile-") as tmp:
        base = Path(tmp)
        (base / "total.py").write_text(SOURCE)
        bundle = base / "bundle"
        subprocess.run(
            [
                SVCC,
                "compile",
                str(base / "total.py"),
                "--target",
                "rest",
                "--output-dir",
                str(bundle),
            ],
            check=True,
            capture_output=True,
        )
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [PYTHON, "-m", "uvicorn", "app:app", "--port", str(port), "--log-level", "warning"],
            cwd=bundle,
            stdout=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx.get(url + "/health", timeout=1)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("server did not start") from None
                    time.sleep(0.05)
            idle = health_latencies(url, min(5.0, args.seconds))
            before = rss_mib(server.pid)
            stop = threading.Event()
            answers: list[tuple[int, int, float]] = []

            def hostile() -> None:
                with httpx.Client(base_url=url, timeout=300) as client:
                    while not stop.is_set():
                        started = time.perf_counter()
                        r = client.post(
                            "/capabilities/total",
                            content=HOSTILE,
                            headers={"content-type": "application/json"},
                        )
                        answers.append(
                            (r.status_code, len(r.content), time.perf_counter() - started)
                        )

            sender = threading.Thread(target=hostile)
            sender.start()
            time.sleep(0.5)
            loaded = health_latencies(url, args.seconds)
            stop.set()
            sender.join()
            after = rss_mib(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(describe("idle", idle))
    print(describe("loaded", loaded))
    statuses = sorted({a[0] for a in answers})
    largest = max(a[1] for a in answers)
    each = statistics.median(a[2] for a in answers)
    print(
        f"hostile 15 MB bodies answered: {len(answers)} (statuses {statuses}, largest answer "
        f"{largest} bytes, median {each:.2f} s each)"
    )
    print(f"server RSS: {before:.1f} MiB before, {after:.1f} MiB after the hostile load")
    p99 = percentile(loaded, 0.99) * 1000
    print(
        f"ratio loaded/idle p99: {percentile(loaded, 0.99) / percentile(idle, 0.99):.1f}x; "
        f"p99 under load {p99:.1f} ms (target < 100 ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
