"""Load test of the analysis service: 8 concurrent clients, 200 ``/analyze_file/`` requests
against ``svcc serve-analysis`` with 2 gunicorn workers on loopback. Zero errors expected;
prints p50/p99 latency and throughput.

Each analysis runs in a forked child under the request budget (``svcc.service.budget``);
the bench also prints that isolation's cost in the same run: the same analysis called
directly vs through ``run_within``, and the ratio. With ``--huge`` it then sends 15 MB of
``x = 1`` lines and prints the answer, its time and the worker's peak resident memory
(``VmHWM``), then checks the worker still answers.

Usage: ``python bench/bench_service.py [--clients 8] [--requests 200] [--huge]``. Not part
of the test suite; it never asserts a time.
"""

import argparse
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

ROOT = Path(__file__).resolve().parent.parent
SVCC = str(Path(sys.executable).parent / "svcc")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def isolation_ratio(source: bytes, rounds: int = 200) -> None:
    """The same analysis in-process and in the worker's sandbox; the ratio is the fork's cost."""
    from svcc.service.analysis import analyse_upload
    from svcc.service.budget import Budget, Sandbox

    def analyse() -> bytes:
        return analyse_upload(
            source, "shapes.py", python_version="3.11", encoding=None, only=None, ignore=[]
        )

    analyse()  # warm imports and caches, as a running worker has them
    sandbox = Sandbox(Budget())

    def isolated() -> bytes:
        return sandbox.run(
            analyse_upload,
            source,
            "shapes.py",
            python_version="3.11",
            encoding=None,
            only=None,
            ignore=[],
        )

    timings = {}
    for name, call in (("direct", analyse), ("child", isolated)):
        started = time.perf_counter()
        for _ in range(rounds):
            call()
        timings[name] = (time.perf_counter() - started) / rounds
    sandbox.stop()
    print(
        f"analysis of shapes.py: direct {timings['direct'] * 1000:.2f} ms, in the worker's sandbox "
        f"{timings['child'] * 1000:.2f} ms, ratio {timings['child'] / timings['direct']:.2f}"
    )


def huge_upload(url: str, master: int) -> None:
    from pathlib import Path as P

    (worker, *_) = [int(p) for p in P(f"/proc/{master}/task/{master}/children").read_text().split()]
    source = b"x = 1\n" * (15 * 1024 * 1024 // 6)
    started = time.perf_counter()
    response = httpx.post(url + "/analyze_file/", files={"file": ("huge.py", source)}, timeout=300)
    took = time.perf_counter() - started
    peaks = {}
    for pid in [int(p) for p in P(f"/proc/{master}/task/{master}/children").read_text().split()]:
        for line in P(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peaks[pid] = int(line.split()[1]) / 1024
    print(
        f"15 MB of `x = 1`: {response.status_code} in {took:.1f} s "
        f"({response.text[:120]}); worker peak RSS "
        + ", ".join(f"{mib:.0f} MiB" for mib in peaks.values())
        + f"; worker {worker} {'alive' if worker in peaks else 'gone'}"
    )
    again = httpx.post(url + "/analyze_file/", files={"file": ("g.py", b"x = 1\n")}, timeout=60)
    print(f"next request: {again.status_code}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--huge", action="store_true", help="also send 15 MB of `x = 1`")
    args = parser.parse_args()
    source = (ROOT / "examples" / "shapes.py").read_bytes()
    isolation_ratio(source)
    with tempfile.TemporaryDirectory(prefix="svcc-bench-service-") as workspace:
        port = free_port()
        proc = subprocess.Popen(
            [
                SVCC,
                "serve-analysis",
                "--workspace",
                workspace,
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    httpx.post(url + "/analyze_file/", timeout=2)
                    break
                except httpx.TransportError:
                    time.sleep(0.05)
            latencies: list[float] = []
            errors: list[str] = []
            lock = threading.Lock()

            def client() -> None:
                mine, bad = [], []
                with httpx.Client(base_url=url, timeout=60) as http:
                    for i in range(args.requests):
                        started = time.perf_counter()
                        response = http.post(
                            "/analyze_file/",
                            files={"file": (f"shapes{i}.py", source)},
                            data={"python_version": "3.11"},
                        )
                        mine.append(time.perf_counter() - started)
                        if response.status_code != 200 or len(response.json()["functions"]) != 4:
                            bad.append(f"{response.status_code}: {response.text[:200]}")
                with lock:
                    latencies.extend(mine)
                    errors.extend(bad)

            threads = [threading.Thread(target=client) for _ in range(args.clients)]
            started = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - started
            if args.huge:
                huge_upload(url, proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    print(f"{len(latencies)} requests, {len(errors)} errors, {len(latencies) / elapsed:.0f} req/s")
    print(f"p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
    for error in errors[:5]:
        print("error:", error)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
