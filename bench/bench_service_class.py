"""Service classes: the first call and the median call of a class whose setup stands for a
model load, served directly and by governed local-process workers (policy v1), against the
same work written as a module-level function that loads on every call, and a function with
no setup at all.

The "model load" is about half a second of pure computation in ``setup()`` (a sum of
squares: a sleep would be a clock read, which readiness refuses at construction), sized
with ``--size``; the function without setup is a module of its own. Each subject is a
generated REST bundle under uvicorn (one process, access
log off); the first call is timed from the moment ``/health`` answers, then ``--calls``
calls are timed one after another and their median is kept. Subjects run interleaved over
``--rounds`` rounds, so a busy machine moves them alike. Goal: a governed v1 call of the
service class within 1.2x of a governed call of the function without setup (the setup is
paid once, in the worker template, not per call).

Usage: ``python bench/bench_service_class.py [--rounds 3] [--calls 20] [--size 3000000]``.
Not part of the test suite; it never asserts a time.
"""

import argparse
import json
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
"""The benchmark's service class and functions."""

SIZE = {size}


class Model:
    """Loads once."""

    def setup(self) -> None:
        self.offset = sum(i * i for i in range(SIZE)) % 7

    def predict(self, x: int) -> int:
        return x * x + self.offset


def load_and_predict(x: int) -> int:
    """Loads on every call."""
    offset = sum(i * i for i in range(SIZE)) % 7
    return x * x + offset
'''

PLAIN = '''\
"""The same answer with no setup at all, a module of its own."""


def plain(x: int) -> int:
    return x * x
'''

SUBJECTS = (
    ("direct", "Model.predict"),
    ("direct", "load_and_predict"),
    ("direct-plain", "plain"),
    ("governed", "Model.predict"),
    ("governed", "load_and_predict"),
    ("governed-plain", "plain"),
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def generate(work: Path, mode: str) -> Path:
    out = work / mode
    source = work / ("plain.py" if mode.endswith("plain") else "model.py")
    command = [SVCC, "generate", "rest", str(source), "--output-dir", str(out)]
    if mode.startswith("governed"):
        policy = work / "policy.json"
        policy.write_text(json.dumps({"limits": {"wall_time_ms": 60000}}))
        command += ["--execution-policy", str(policy)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return out


def start(bundle: Path) -> tuple["subprocess.Popen[bytes]", str, float]:
    """The server, its URL and the moment it answered ``/health``."""
    port = free_port()
    proc = subprocess.Popen(
        [PYTHON, "-m", "uvicorn", "app:app", "--port", str(port), "--no-access-log"],
        cwd=bundle,
        env={**os.environ, "SVC_ACCESS_LOG": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc, url, time.perf_counter()
        except httpx.HTTPError:
            time.sleep(0.05)
    stop(proc)
    raise SystemExit(f"the server in {bundle} did not start")


def stop(proc: "subprocess.Popen[bytes]") -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def measure(bundle: Path, name: str, calls: int) -> tuple[float, float]:
    """(first call, median call) in seconds."""
    proc, url, ready = start(bundle)
    try:
        with httpx.Client(base_url=url, timeout=120) as client:
            first = client.post(f"/capabilities/{name}", json={"x": 3})
            first.raise_for_status()
            first_time = time.perf_counter() - ready
            times = []
            for i in range(calls):
                started = time.perf_counter()
                client.post(f"/capabilities/{name}", json={"x": i}).raise_for_status()
                times.append(time.perf_counter() - started)
    finally:
        stop(proc)
    return first_time, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--size", type=int, default=3_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "model.py").write_text(SOURCE.format(size=args.size))
        (work / "plain.py").write_text(PLAIN)
        modes = ("direct", "governed", "direct-plain", "governed-plain")
        bundles = {mode: generate(work, mode) for mode in modes}
        results: dict[tuple[str, str], list[tuple[float, float]]] = {s: [] for s in SUBJECTS}
        for round_ in range(args.rounds):
            for mode, name in SUBJECTS:
                results[(mode, name)].append(measure(bundles[mode], name, args.calls))
            print(f"round {round_ + 1}: load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"{'mode':<14} {'capability':<17} {'first call':>11} {'median call':>12}")
    medians = {}
    for (mode, name), found in results.items():
        first = statistics.median(f for f, _ in found)
        median = statistics.median(m for _, m in found)
        medians[(mode, name)] = median
        print(f"{mode:<14} {name:<17} {first * 1000:>9.1f}ms {median * 1000:>10.1f}ms")
    ratio = medians[("governed", "Model.predict")] / medians[("governed-plain", "plain")]
    print(f"governed service call / governed call without setup: {ratio:.2f}x (goal <= 1.2x)")


if __name__ == "__main__":
    main()
