"""Slow request heads (slowloris) against both servers: is anyone else stalled?

Each server is measured twice in the same run: the time another client waits for one
answer with no slow connection open (the baseline), then with slow connections open that
send their request head one byte every 0.2 s (each read sees data well within any per-read
timeout). Printed: both times and their ratio.

- the analysis service (gunicorn, 2 sync workers, ``--read-timeout 2``), with 2 slow
  connections (one per worker): the head deadline frees each worker after the read timeout
  (a 408), so the other client waits about that long. Before it, the other client waited
  until the slow heads ended or the 150 s worker timeout fired (here: the client's
  ``--limit`` seconds, reported as ``>``);
- the generated REST server (uvicorn), with ``--connections`` slow connections: heads are
  read on the event loop, so the other client is not delayed; what bounds slow connections
  is the process's file limit (``ulimit -n``).

Usage: ``python bench/bench_slowloris.py [--connections 500] [--limit 60]``. Never asserts.
"""

import argparse
import contextlib
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

SVCC = str(Path(sys.executable).parent / "svcc")
SOURCE = "def area(radius: float) -> float:\n    return 3.14 * radius**2\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_up(url: str, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        assert proc.poll() is None, "the server did not start"
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.05)
    raise SystemExit(f"{url} did not answer")


class Trickle:
    """``count`` connections sending ``head`` a byte every 0.2 s until stopped."""

    def __init__(self, port: int, head: bytes, count: int) -> None:
        self.socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(head,), daemon=True)
        self._thread.start()

    def _run(self, head: bytes) -> None:
        for byte in head:
            for sock in self.socks:
                with contextlib.suppress(OSError):
                    sock.sendall(bytes([byte]))
            if self._stop.wait(0.2):
                return

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for sock in self.socks:
            sock.close()


def timed(call: Callable[[], httpx.Response], limit: float) -> str:
    start = time.perf_counter()
    try:
        call()
    except httpx.TimeoutException:
        return f">{limit:g}"
    return f"{time.perf_counter() - start:.3f}"


def ratio(with_slow: str, baseline: str) -> str:
    if with_slow.startswith(">"):
        return f">{float(with_slow[1:]) / float(baseline):.0f}x"
    return f"{float(with_slow) / float(baseline):.1f}x"


def analysis_service(work: Path, limit: float) -> None:
    workspace = work / "ws"
    workspace.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [SVCC, "serve-analysis", "--workspace", str(workspace), "--bind", f"127.0.0.1:{port}",
         "--workers", "2", "--read-timeout", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_up(url + "/probe", proc)

        def call() -> httpx.Response:
            files = {"file": ("g.py", SOURCE.encode())}
            return httpx.post(url + "/analyze_file/", files=files, timeout=limit)

        call()
        baseline = timed(call, limit)
        head = b"POST /analyze_file/ HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: a\r\n" * 10_000
        slow = Trickle(port, head, 2)
        time.sleep(0.5)
        try:
            stalled = timed(call, limit)
        finally:
            slow.close()
        print(f"analysis service, 2 workers, 2 slow heads: {baseline} s alone, "
              f"{stalled} s with them ({ratio(stalled, baseline)})")  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(30)


def rest_server(work: Path, connections: int, limit: float) -> None:
    source = work / "geometry.py"
    source.write_text(SOURCE)
    bundle = work / "rest"
    subprocess.run([SVCC, "generate", "rest", str(source), "--output-dir", str(bundle)], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app:app", "--port", str(port)],
        cwd=bundle, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_up(url + "/health", proc)

        def call() -> httpx.Response:
            return httpx.post(url + "/capabilities/area", json={"radius": 1}, timeout=limit)

        call()
        baseline = min(float(timed(call, limit)) for _ in range(5))
        head = b"POST /capabilities/area HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: a\r\n" * 10_000
        slow = Trickle(port, head, connections)
        time.sleep(1)
        try:
            with_slow = min(float(timed(call, limit)) for _ in range(5))
        finally:
            slow.close()
        print(f"REST server (uvicorn), {connections} slow heads: {baseline:.4f} s alone, "
              f"{with_slow:.4f} s with them ({with_slow / baseline:.1f}x)")  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=500)
    parser.add_argument("--limit", type=float, default=60)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        analysis_service(Path(tmp), options.limit)
        rest_server(Path(tmp), options.connections, options.limit)


if __name__ == "__main__":
    main()
