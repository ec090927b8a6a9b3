"""Load test of the analysis service: 8 concurrent clients, 200 ``/analyze_file/`` requests
against ``svcc serve-analysis`` with 2 gunicorn workers on loopback. Zero errors expected;
prints p50/p99 latency and throughput. Usage: ``python bench/bench_service.py
[--clients 8] [--requests 200]``. Not part of the test suite; it never asserts a time.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    source = (ROOT / "examples" / "shapes.py").read_bytes()
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
