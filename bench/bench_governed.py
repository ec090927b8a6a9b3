"""Per-call latency of governed (local-process) execution against direct mode.

The same trivial function is served by a direct and a governed REST bundle under uvicorn
(one worker each). Measured in one run: serial latency (median, p99), then 8 concurrent
clients (calls/s, median, p99), and memory (proportional set size of the server and every
process below it: template and workers) with 8 calls in flight.

Usage: ``python bench/bench_governed.py [--calls 300] [--seconds 5]``.
Not part of the test suite; it never asserts a time.
"""

import argparse
import json
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

SVCC = str(Path(sys.executable).parent / "svcc")
SOURCE = """\
import time


def add(a: int, b: int) -> int:
    return a + b


def hold(seconds: float) -> float:
    time.sleep(seconds)
    return seconds
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(bundle: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "app:app",
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        cwd=bundle,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(url + "/health").status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.05)
    raise SystemExit(f"{bundle} did not start")


def descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
            except OSError:
                pass
    out, frontier = [pid], [pid]
    while frontier:
        current = frontier.pop()
        kids = [p for p, parent in parents.items() if parent == current]
        out += kids
        frontier += kids
    return out


def pss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def serial(url: str, calls: int) -> list[float]:
    out = []
    with httpx.Client(base_url=url) as client:
        for i in range(calls):
            started = time.perf_counter()
            response = client.post("/capabilities/add", json={"a": i, "b": 1})
            out.append(time.perf_counter() - started)
            assert response.json() == i + 1
    return out


def concurrent(url: str, seconds: float, clients: int = 8) -> tuple[float, list[float]]:
    latencies: list[float] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def run() -> None:
        mine = []
        with httpx.Client(base_url=url) as client:
            while time.monotonic() < deadline:
                started = time.perf_counter()
                response = client.post("/capabilities/add", json={"a": 1, "b": 2})
                mine.append(time.perf_counter() - started)
                assert response.json() == 3
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=run) for _ in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(latencies) / (time.monotonic() - started), latencies


def memory_in_flight(url: str, pid: int, clients: int = 8) -> int:
    def hold() -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            client.post("/capabilities/hold", json={"seconds": 1.5})

    threads = [threading.Thread(target=hold) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(0.8)
    pss = pss_kib(descendants(pid))
    for t in threads:
        t.join()
    return pss


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="svcc-bench-governed-") as tmp:
        base = Path(tmp)
        (base / "trivial.py").write_text(SOURCE)
        (base / "policy.json").write_text(json.dumps({"limits": {"max_concurrent_calls": 8}}))
        bundles = {"direct": base / "direct", "governed": base / "governed"}
        for name, out in bundles.items():
            extra = ["--execution-policy", str(base / "policy.json")] if name == "governed" else []
            subprocess.run(
                [
                    SVCC,
                    "generate",
                    "rest",
                    str(base / "trivial.py"),
                    "--output-dir",
                    str(out),
                    *extra,
                ],
                check=True,
                capture_output=True,
            )
        for name, bundle in bundles.items():
            proc, url = start(bundle)
            try:
                serial(url, 30)  # warm-up
                lat = serial(url, args.calls)
                rate, conc = concurrent(url, args.seconds)
                pss = memory_in_flight(url, proc.pid)
            finally:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=15)
            results[name] = (lat, rate, conc, pss)
            print(
                f"{name:9s} serial median {statistics.median(lat) * 1000:6.2f} ms  "
                f"p99 {ms(lat, 0.99):6.2f} ms | 8 clients {rate:7.1f} calls/s  "
                f"median {statistics.median(conc) * 1000:6.2f} ms  p99 {ms(conc, 0.99):6.2f} ms"
                f" | PSS with 8 in flight {pss / 1024:6.1f} MiB",
                flush=True,
            )
    d_lat, d_rate, _, d_pss = results["direct"]
    g_lat, g_rate, _, g_pss = results["governed"]
    overhead = (statistics.median(g_lat) - statistics.median(d_lat)) * 1000
    print(f"\nmedian governed overhead per call (serial): {overhead:.2f} ms (target <= 10 ms)")
    print(
        f"governed throughput with 8 clients: {g_rate:.0f} calls/s (target >= 100); "
        f"direct {d_rate:.0f} calls/s"
    )
    print(
        f"memory with 8 calls in flight: governed {g_pss / 1024:.1f} MiB vs direct "
        f"{d_pss / 1024:.1f} MiB = {g_pss / d_pss:.2f}x (target <= 3x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
