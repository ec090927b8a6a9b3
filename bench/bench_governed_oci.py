"""Per-call latency of governed OCI-container execution against ``docker run --rm``.

One runtime image (built from the context ``svcc compile --target runtime-image`` emits, on
the engine of the OCI stack, ``$SVCC_OCI_STATE/stack.json``) serves two governed REST
bundles of the same trivial function under uvicorn: one with a warm pool (policy
``pool.size`` 2) and one with pool 0 (a cold container per call). The baseline, measured in
the same run, is what a user would do without svcc: ``docker run --rm -i`` of the same
image with the same limits and mounts, fed the same framed request. Then 4 clients call
the warm-pool server for a few seconds (sustained calls/s).

Usage: ``python bench/bench_governed_oci.py [--calls 40] [--seconds 8]``.
Not part of the test suite; it never asserts a time.
"""

import argparse
import concurrent.futures
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
SVCC = str(Path(sys.executable).parent / "svcc")
DOCKER = "/usr/local/bin/docker"
SOURCE = "def add(a: int, b: int) -> int:\n    return a + b\n"


def stack_env() -> dict[str, str]:
    state = Path(os.environ.get("SVCC_OCI_STATE") or ROOT / ".oci-state")
    env: dict[str, str] = json.loads((state / "stack.json").read_text())["env"]
    return env


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        args, capture_output=True, text=True, cwd=cwd, env=env, check=False, timeout=600
    )
    if proc.returncode:
        raise SystemExit(f"{' '.join(args[:3])}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


def serve(bundle: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app:app", "--port", str(port), "--no-access-log"],
        cwd=bundle,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the server of {bundle} did not start")


def timed_calls(url: str, calls: int, pause: float) -> list[float]:
    samples = []
    with httpx.Client(base_url=url, timeout=60) as client:
        for i in range(calls):
            started = time.perf_counter()
            reply = client.post("/capabilities/add", json={"a": i, "b": 1})
            samples.append(time.perf_counter() - started)
            assert reply.json() == i + 1, reply.text
            time.sleep(pause)  # the warm pool refills between calls, as between real requests
    return samples


def docker_run_calls(image: str, bundle: Path, calls: int, env: dict[str, str]) -> list[float]:
    manifest = json.loads((bundle / "svc-rest.json").read_text())
    payload = {
        "name": "add",
        "module": manifest["module"],
        "files": {k: v for k, v in manifest["files"].items() if k.startswith("source/")},
        "is_async": False,
        "max_output": 1 << 20,
        "args": [1, 2],
        "kwargs": {},
    }
    data = pickle.dumps(payload)
    request = b"A" + len(data).to_bytes(8, "big") + data
    command = [
        DOCKER, "run", "--rm", "-i", "--network", "none", "--user", "65532:65532",
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only",
        "--memory", "256m", "--memory-swap", "256m", "--cpus", "1", "--pids-limit", "64",
        "--tmpfs", "/tmp:size=16m", "--log-driver", "none", "--label", "io.svcc.bench=1",
        "-v", f"{bundle / 'source'}:/opt/svc/source:ro", image,
    ]  # fmt: skip
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        out = subprocess.run(command, input=request, capture_output=True, env=env, check=True)
        samples.append(time.perf_counter() - started)
        assert out.stdout.endswith(b"3"), out
    return samples


def sustained(url: str, seconds: float, clients: int) -> float:
    stop = time.monotonic() + seconds

    def client_loop(offset: int) -> int:
        done = 0
        with httpx.Client(base_url=url, timeout=60) as client:
            while time.monotonic() < stop:
                assert client.post("/capabilities/add", json={"a": offset, "b": 1}).json()
                done += 1
        return done

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        total = sum(pool.map(client_loop, range(clients)))
    return total / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument(
        "--pause", type=float, default=0.5, help="seconds between warm-pool calls (refill time)"
    )
    options = parser.parse_args()
    stack = stack_env()
    env = {
        **os.environ,
        "DOCKER_HOST": stack["CI_DOCKER_DOCKER_HOST"],
        "DOCKER_CONFIG": stack["CI_DOCKER_DOCKER_CONFIG"],
    }
    with tempfile.TemporaryDirectory(prefix="bench-gov-oci-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)  # the worker (uid 65532) reads the bind-mounted source
        (tmp / "calc.py").write_text(SOURCE)
        ctx = tmp / "ctx"
        run(SVCC, "compile", str(tmp / "calc.py"), "--target", "runtime-image",
            "--base-image", stack["BASE_IMAGE"], "--output-dir", str(ctx))  # fmt: skip
        image = run(DOCKER, "build", "--network", "none", "-q", "--label", "io.svcc.bench=1",
                    "-f", "Containerfile", ".", cwd=ctx, env=env)  # fmt: skip
        bundles = {}
        for pool in (2, 0):
            policy = tmp / f"policy-{pool}.json"
            policy.write_text(json.dumps({"schema": "svc.execution/v2", "pool": {"size": pool}}))
            bundles[pool] = tmp / f"pool-{pool}"
            run(SVCC, "generate", "rest", str(tmp / "calc.py"), "--output-dir", str(bundles[pool]),
                "--execution-policy", str(policy), "--runtime-image", image,
                "--runtime-platform", "linux/amd64")  # fmt: skip
        results: dict[str, list[float]] = {}
        servers = {pool: serve(bundles[pool], 18600 + pool, env) for pool in bundles}
        try:
            timed_calls("http://127.0.0.1:18602", 3, options.pause)  # warm-up
            results["warm pool (2)"] = timed_calls(
                "http://127.0.0.1:18602", options.calls, options.pause
            )
            results["pool 0 (cold)"] = timed_calls("http://127.0.0.1:18600", options.calls // 2, 0)
            results["docker run --rm"] = docker_run_calls(
                image, bundles[0], options.calls // 2, env
            )
            rate = sustained("http://127.0.0.1:18602", options.seconds, 4)
        finally:
            for proc in servers.values():
                proc.terminate()
                proc.wait()
    baseline = statistics.median(results["docker run --rm"])
    print(f"{'mode':<18} {'calls':>5} {'median ms':>10} {'p90 ms':>8} {'vs docker run':>14}")
    for name, samples in results.items():
        median, p90 = percentiles(samples)
        print(
            f"{name:<18} {len(samples):>5} {median * 1000:>10.1f} {p90 * 1000:>8.1f} "
            f"{baseline / median:>13.1f}x"
        )
    print(f"sustained, 4 clients, warm pool: {rate:.1f} calls/s over {options.seconds:g} s")


if __name__ == "__main__":
    main()
