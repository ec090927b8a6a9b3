"""Requests/second of a generated REST server against a hand-written FastAPI app and a
hand-optimised raw ASGI app.

All three serve the same small sync function with the same semantics: strict validation
with extra fields forbidden, the sync function run in the thread pool, the result not
validated (svcc documents return types, it does not enforce them) and encoded once. The
raw ASGI baseline is the floor of that work under uvicorn: one strict pydantic-core
``validate_json``, the function through anyio's thread pool, one JSON encode, two
``send`` calls, no framework. All run under uvicorn with one worker; the same load
generator (keep-alive connections on loopback, in a separate process) alternates between
them over several rounds in one run, and the medians are compared. uvicorn's own access
log is off everywhere (``--no-access-log``); the generated server runs twice per round:
with its defaults (Prometheus metrics, its access line written to a file, request ids:
what production runs, target at least 0.95x raw ASGI's requests/second) and bare
(``SVC_METRICS=0 SVC_ACCESS_LOG=0``), so the cost of the features is the difference.
Besides requests/second, each server's CPU time per request (its process's user + system
time over the load, divided by the requests answered) is printed: on a shared machine it
moves less with the load than wall time. The load average is printed with every round.
Resident memory of each server is read after its load.

A second part measures what the types and results cost: one generated server serving
``add`` (two ints), ``move`` (a ``@dataclass`` parameter, built per call) and ``peak`` (a
numpy result, ``np.argmax``, encoded per call); each one's request time is compared with
``add``'s in the same run (target: at most 1.2x).

A third part times the access line alone, in this process: the runtime's way (the default
stderr handler takes the finished line) against the same line through ``logging`` as a
record (what every line cost before), both to a file, alternating, best of 5 per round.

A fourth part (``--part tracing``, not in ``all``) measures OpenTelemetry: see
:func:`tracing_part`.

Usage: ``python bench/bench_rest.py [--seconds 4] [--rounds 3] [--connections 32]
[--part all|frameworks|types|log|tracing]``. Not part of the test suite; it never asserts a time.
"""

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SVCC = str(Path(PYTHON).parent / "svcc")

SOURCE = '''\
"""The benchmark's function."""


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''

HANDWRITTEN = '''\
"""What a careful person writes by hand for the same function and semantics."""

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict


def add(a: int, b: int) -> int:
    return a + b


class AddRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    a: int
    b: int


app = FastAPI()


@app.post("/capabilities/add")
def add_endpoint(request: AddRequest):  # sync: FastAPI runs it in the thread pool
    return add(request.a, request.b)
'''

RAW = '''\
"""The same work as the generated endpoint, by hand, as raw ASGI: the floor under uvicorn."""

import json
from functools import partial

from anyio import to_thread
from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs


def add(a: int, b: int) -> int:
    return a + b


_int = cs.int_schema(strict=True)
_validator = SchemaValidator(
    cs.typed_dict_schema(
        {"a": cs.typed_dict_field(_int), "b": cs.typed_dict_field(_int)},
        extra_behavior="forbid",
        strict=True,
    )
)
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
_JSON = (b"content-type", b"application/json")


async def _answer(send, status, payload):
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [_JSON, (b"content-length", str(len(payload)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": payload})


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    message = await receive()
    body = message.get("body", b"")
    while message.get("more_body", False):
        message = await receive()
        body += message.get("body", b"")
    try:
        values = _validator.validate_json(body, strict=True)
    except ValidationError as exc:
        await _answer(send, 422, _encode({"detail": exc.errors(include_url=False)}).encode())
        return
    result = await to_thread.run_sync(partial(add, **values))
    await _answer(send, 200, _encode(result).encode())
'''

# The same raw app with the plainest thread hand-off there is (asyncio's own executor, no
# anyio): the floor under the floor, against which the generated server's own worker pool
# (``threads``) is no advantage.
RAW_EXECUTOR = RAW.replace("from anyio import to_thread\n", "import asyncio\n").replace(
    "await to_thread.run_sync(partial(add, **values))",
    "await asyncio.get_running_loop().run_in_executor(None, partial(add, **values))",
)

TYPES_SOURCE = '''\
"""The types benchmark: a plain int capability, a dataclass parameter, a numpy result."""

from dataclasses import dataclass

import numpy as np


@dataclass
class Point:
    x: int
    y: int


def add(a: int, b: int) -> int:
    return a + b


def move(p: Point) -> int:
    return p.x + p.y


def peak(a: int, b: int) -> int:
    return np.argmax((a, b))  # an np.int64, encoded as 1
'''


def request(name: str, body: bytes) -> bytes:
    return (
        f"POST /capabilities/{name} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()
        + b"Content-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


BODY = b'{"a": 20, "b": 22}'
REQUEST = request("add", BODY)
TYPE_REQUESTS = {
    "int (add)": REQUEST,
    "dataclass (move)": request("move", b'{"p": {"x": 20, "y": 22}}'),
    "numpy result (peak)": request("peak", BODY),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# What the generated server runs with: its defaults (metrics, its access line, request ids),
# and bare (``SVC_METRICS=0 SVC_ACCESS_LOG=0``; request ids cannot be turned off).
DEFAULTS: dict[str, str] = {}
BARE = {"SVC_METRICS": "0", "SVC_ACCESS_LOG": "0"}


def start(directory: Path, port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "uvicorn",
            "app:app",
            "--port",
            str(port),
            "--workers",
            "1",
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        cwd=directory,
        # uvicorn's own access log is off everywhere (``--no-access-log``); the generated
        # server writes its own line per request unless ``SVC_ACCESS_LOG=0``.
        env={**os.environ, **(BARE if env is None else env)},
        stdout=subprocess.DEVNULL,
        # A file, not a pipe: a pipe nobody reads fills after ~64 KiB of log lines and
        # stalls the server mid-load (the generated server logs every request by default).
        stderr=(directory / "server.log").open("wb"),
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            if proc.poll() is not None:
                log = (directory / "server.log").read_text()
                raise SystemExit(f"server in {directory} failed: {log!r}") from None
            time.sleep(0.05)
    raise SystemExit(f"server in {directory} did not start")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


LOADGEN = textwrap.dedent(
    """
    import asyncio, sys, time
    port, seconds, conns = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    request = sys.stdin.buffer.read()
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass

    async def client(deadline, counts):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        done = errors = 0
        while time.monotonic() < deadline:
            writer.write(request)
            head = await reader.readuntil(b"\\r\\n\\r\\n")
            length = 0
            for line in head.split(b"\\r\\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            if head.startswith(b"HTTP/1.1 200"):
                done += 1
            else:
                errors += 1
        writer.close()
        counts.append((done, errors))

    async def main():
        counts = []
        deadline = time.monotonic() + seconds
        await asyncio.gather(*(client(deadline, counts) for _ in range(conns)))
        print(sum(c[0] for c in counts), sum(c[1] for c in counts))

    asyncio.run(main())
    """
)


def load(port: int, seconds: float, connections: int, payload: bytes = REQUEST) -> float:
    """Requests/second answered over ``seconds``."""
    return load_counted(port, seconds, connections, payload)[0]


def load_counted(
    port: int, seconds: float, connections: int, payload: bytes = REQUEST
) -> tuple[float, int]:
    """``(requests/second, requests answered)`` over ``seconds``."""
    started = time.monotonic()
    out = subprocess.run(
        [PYTHON, "-c", LOADGEN, str(port), str(seconds), str(connections)],
        input=payload,
        capture_output=True,
        check=True,
    ).stdout.split()
    elapsed = time.monotonic() - started
    done, errors = int(out[0]), int(out[1])
    if errors:
        raise SystemExit(f"{errors} non-200 responses on port {port}")
    return done / max(elapsed, seconds), done


def types_part(args: argparse.Namespace) -> None:
    """Request time of a dataclass parameter and a numpy result against the int one, all
    three on one generated server, alternating over the rounds."""
    with tempfile.TemporaryDirectory(prefix="svcc-bench-types-") as tmp:
        base = Path(tmp)
        (base / "kinds.py").write_text(TYPES_SOURCE)
        (base / "requirements.txt").write_text("numpy\n")
        generated = base / "generated"
        subprocess.run(
            [
                SVCC, "generate", "rest", str(base / "kinds.py"), "--requirements",
                str(base / "requirements.txt"), "--output-dir", str(generated),
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
        rates: dict[str, list[float]] = {name: [] for name in TYPE_REQUESTS}
        port = free_port()
        proc = start(generated, port)
        try:
            for payload in TYPE_REQUESTS.values():
                load(port, 1.0, args.connections, payload)  # warm-up (numpy imported)
            for round_ in range(args.rounds):
                for name, payload in TYPE_REQUESTS.items():
                    rate = load(port, args.seconds, args.connections, payload)
                    rates[name].append(rate)
                    print(f"round {round_ + 1}: {name:20s} {rate:8.0f} req/s", flush=True)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=10)
    medians = {name: statistics.median(r) for name, r in rates.items()}
    plain = medians["int (add)"]
    print()
    for name, rate in medians.items():
        print(
            f"{name:20s} {rate:8.0f} req/s, {1000 / rate:.3f} ms per request, "
            f"time ratio to int {plain / rate:.2f}x (target <= 1.2x)"
        )


def frameworks_part(args: argparse.Namespace) -> None:
    """Raw ASGI, the generated server with its defaults, the generated server bare, and
    FastAPI, alternating within each round."""
    with tempfile.TemporaryDirectory(prefix="svcc-bench-rest-") as tmp:
        base = Path(tmp)
        (base / "add.py").write_text(SOURCE)
        generated = base / "generated"
        subprocess.run(
            [
                SVCC, "compile", str(base / "add.py"), "--target", "rest", "--output-dir",
                str(generated),
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
        handwritten = base / "handwritten"
        handwritten.mkdir()
        (handwritten / "app.py").write_text(HANDWRITTEN)
        raw = base / "raw"
        raw.mkdir()
        (raw / "app.py").write_text(RAW)
        executor = base / "executor"
        executor.mkdir()
        (executor / "app.py").write_text(RAW_EXECUTOR)
        servers = {
            "raw ASGI": (raw, BARE),
            "raw ASGI, executor": (executor, BARE),
            "generated, defaults": (generated, DEFAULTS),
            "generated, bare": (generated, BARE),
            "handwritten": (handwritten, BARE),
        }
        rates: dict[str, list[float]] = {name: [] for name in servers}
        cpu: dict[str, list[float]] = {name: [] for name in servers}
        memory: dict[str, int] = {}
        loads = []
        for round_ in range(args.rounds):
            for name, (directory, env) in servers.items():
                port = free_port()
                proc = start(directory, port, env)
                try:
                    load(port, 1.0, args.connections)  # warm-up
                    before = cpu_seconds(proc.pid)
                    rate, done = load_counted(port, args.seconds, args.connections)
                    cpu[name].append((cpu_seconds(proc.pid) - before) / done * 1e6)
                    rates[name].append(rate)
                    memory[name] = rss_kib(proc.pid)
                finally:
                    proc.send_signal(signal.SIGINT)
                    proc.wait(timeout=10)
                loads.append(os.getloadavg()[0])
                print(
                    f"round {round_ + 1}: {name:20s} {rate:8.0f} req/s  "
                    f"{cpu[name][-1]:5.0f} us CPU/request  RSS {memory[name] / 1024:.1f} MiB  "
                    f"load {loads[-1]:.1f}",
                    flush=True,
                )
    rate = {name: statistics.median(r) for name, r in rates.items()}
    us = {name: statistics.median(c) for name, c in cpu.items()}
    print(
        f"\nmedians of {args.rounds} rounds ({os.cpu_count()} cores, load average "
        f"{min(loads):.1f} to {max(loads):.1f}, median {statistics.median(loads):.1f}):"
    )
    for name in servers:
        print(f"{name:20s} {rate[name]:8.0f} req/s  {us[name]:5.0f} us CPU/request")
    raw_rate, raw_us = rate["raw ASGI"], us["raw ASGI"]
    for name in ("generated, defaults", "generated, bare"):
        print(
            f"{name}/raw ASGI: {rate[name] / raw_rate:.2f}x the req/s (target >= 0.95x), "
            f"{us[name] / raw_us:.2f}x the CPU per request; against raw ASGI, executor: "
            f"{rate[name] / rate['raw ASGI, executor']:.2f}x the req/s, "
            f"{us[name] / us['raw ASGI, executor']:.2f}x the CPU"
        )
    defaults, bare = "generated, defaults", "generated, bare"
    print(
        f"the features (metrics, access line) on/off: {rate[defaults] / rate[bare]:.2f}x the "
        f"req/s, {us[defaults] / us[bare]:.2f}x the CPU per request"
    )
    gen = rate[defaults]
    print(f"generated, defaults/handwritten: {gen / rate['handwritten']:.2f}x (target >= 1.5x)")
    print(
        f"memory after load: generated {memory['generated, defaults'] / 1024:.1f} MiB, "
        f"handwritten {memory['handwritten'] / 1024:.1f} MiB, ratio "
        f"{memory['generated, defaults'] / memory['handwritten']:.2f}x (target <= 1.1x)"
    )


def log_part(args: argparse.Namespace) -> None:
    """Microseconds per access line: the default handler's direct write against a record
    through ``logging.StreamHandler``, on the same logger and file."""
    import logging
    import timeit

    from svcc.runtime import network

    fields = (
        "127.0.0.1:53888",
        "POST",
        "/capabilities/add",
        200,
        1.234,
        "0123456789abcdef01234567",
    )
    logger, lines = network.access_log, 20000
    saved = (logger.handlers[:], logger.level, logger.propagate)
    times: dict[str, list[float]] = {"direct": [], "logging": []}
    with (
        tempfile.TemporaryDirectory(prefix="svcc-bench-log-") as tmp,
        open(Path(tmp) / "access.log", "w") as sink,
    ):
        record = logging.StreamHandler(sink)
        record.setFormatter(logging.Formatter("%(message)s"))
        ways = {
            "direct": (network.AccessLines(sink), lambda: network._log_access(*fields)),
            "logging": (record, lambda: logger.info(network.ACCESS_LINE, *fields)),
        }
        logger.setLevel(logging.INFO)
        logger.propagate = False
        try:
            for _ in range(args.rounds):
                for name, (handler, write) in ways.items():
                    logger.handlers[:] = [handler]
                    best = min(timeit.repeat(write, number=lines, repeat=5))
                    times[name].append(best / lines * 1e6)
        finally:
            logger.handlers[:], logger.level, logger.propagate = saved
    direct, through = statistics.median(times["direct"]), statistics.median(times["logging"])
    print(
        f"access line: {direct:.1f} us direct, {through:.1f} us as a logging record "
        f"({through / direct:.1f}x; medians of {args.rounds} rounds, best of 5 x {lines} lines; "
        f"load average {os.getloadavg()[0]:.1f})"
    )


# --- OpenTelemetry: on with a no-op exporter, off, and raw ASGI (issue 42) -----------------

NOOP_EXPORTER = '''\
"""A trace exporter that drops every batch: the SDK's whole pipeline, no output."""

from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


class NoopExporter(SpanExporter):
    def export(self, spans):
        return SpanExportResult.SUCCESS
'''


def noop_exporter_path(base: Path) -> Path:
    """A folder that, on ``PYTHONPATH``, registers ``svc_bench_noop`` with the SDK as a trace
    exporter (an entry point, as any exporter package registers itself), so the server picks
    it by ``OTEL_TRACES_EXPORTER=svc_bench_noop`` through its ordinary configuration."""
    folder = base / "noop-exporter"
    info = folder / "svc_bench_noop-0.dist-info"
    info.mkdir(parents=True)
    (folder / "svc_bench_noop.py").write_text(NOOP_EXPORTER)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: svc-bench-noop\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[opentelemetry_traces_exporter]\nsvc_bench_noop = svc_bench_noop:NoopExporter\n"
    )
    return folder


def tracing_part(args: argparse.Namespace) -> None:
    """The generated server with tracing off (``OTEL_TRACES_EXPORTER=none``, the same as
    unset) and on (every request a recorded span with its attributes, batched by the SDK's
    ``BatchSpanProcessor`` to an exporter that drops the batch: :func:`noop_exporter_path`;
    only the export does nothing), and on with a tenth of new traces sampled
    (``parentbased_traceidratio``, 0.1: the rest get the SDK's non-recording span), against
    raw ASGI, the four alternating within each round (the generated server's defaults:
    metrics, its access line, request ids). Then, in this process, microseconds per request
    of the runtime's span (made by the network layer: ``tracing.ServerSpans``) against the
    SDK's ASGI instrumentation around the same trivial app, when
    ``opentelemetry-instrumentation-asgi`` is installed.
    Goal: on >= 0.90 of raw ASGI; off equal to a server without tracing."""
    with tempfile.TemporaryDirectory(prefix="svcc-bench-otel-") as tmp:
        base = Path(tmp)
        (base / "add.py").write_text(SOURCE)
        generated = base / "generated"
        subprocess.run(
            [
                SVCC, "compile", str(base / "add.py"), "--target", "rest", "--output-dir",
                str(generated),
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
        raw = base / "raw"
        raw.mkdir()
        (raw / "app.py").write_text(RAW)
        path = os.pathsep.join(
            p for p in (str(noop_exporter_path(base)), os.environ.get("PYTHONPATH")) if p
        )
        servers: dict[str, tuple[Path, dict[str, str]]] = {
            "raw ASGI": (raw, {}),
            "OTel off": (generated, {"OTEL_TRACES_EXPORTER": "none"}),
            "OTel on, no-op": (
                generated,
                {"OTEL_TRACES_EXPORTER": "svc_bench_noop", "PYTHONPATH": path},
            ),
            "OTel on, 10%": (
                generated,
                {
                    "OTEL_TRACES_EXPORTER": "svc_bench_noop",
                    "PYTHONPATH": path,
                    "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                    "OTEL_TRACES_SAMPLER_ARG": "0.1",
                },
            ),
        }
        rates: dict[str, list[float]] = {name: [] for name in servers}
        cpu: dict[str, list[float]] = {name: [] for name in servers}
        loads: list[float] = []
        for round_ in range(args.rounds):
            for name, (directory, env) in servers.items():
                port = free_port()
                proc = start(directory, port, env=env)
                try:
                    load(port, 1.0, args.connections)  # warm-up
                    before = cpu_seconds(proc.pid)
                    rate, done = load_counted(port, args.seconds, args.connections)
                    cpu[name].append((cpu_seconds(proc.pid) - before) / done * 1e6)
                    rates[name].append(rate)
                finally:
                    proc.send_signal(signal.SIGINT)
                    proc.wait(timeout=10)
                loads.append(os.getloadavg()[0])
                print(
                    f"round {round_ + 1}: {name:15s} {rate:8.0f} req/s  "
                    f"{cpu[name][-1]:5.0f} us CPU/request  load {loads[-1]:.1f}",
                    flush=True,
                )
    rate = {name: statistics.median(r) for name, r in rates.items()}
    us = {name: statistics.median(c) for name, c in cpu.items()}
    raw_rate, on, off = rate["raw ASGI"], rate["OTel on, no-op"], rate["OTel off"]
    print(f"\nmedians of {args.rounds} rounds:")
    for name in servers:
        print(f"{name:15s} {rate[name]:8.0f} req/s  {us[name]:5.0f} us CPU/request")
    print(f"ratio OTel on (no-op exporter)/raw ASGI: {on / raw_rate:.2f}x (target >= 0.90x)")
    print(f"ratio OTel off/raw ASGI: {off / raw_rate:.2f}x; on/off {on / off:.2f}x")
    sampled = rate["OTel on, 10%"]
    print(
        f"ratio OTel on, 10% sampled/raw ASGI: {sampled / raw_rate:.2f}x; /off {sampled / off:.2f}x"
    )
    raw_us, on_us, off_us = us["raw ASGI"], us["OTel on, no-op"], us["OTel off"]
    sampled_us = us["OTel on, 10%"]
    print(
        f"in CPU per request (steadier under load): on/raw ASGI {raw_us / on_us:.2f}x, "
        f"off/raw ASGI {raw_us / off_us:.2f}x, on/off {off_us / on_us:.2f}x "
        f"(+{on_us - off_us:.0f} us a request); 10% sampled/raw ASGI "
        f"{raw_us / sampled_us:.2f}x (+{sampled_us - off_us:.0f} us)"
    )
    print(
        f"load average {min(loads):.1f} to {max(loads):.1f} over the rounds; for a quiet "
        "re-run: .venv/bin/python bench/bench_rest.py --part tracing --seconds 4 --rounds 5"
    )
    span_cost(args)


def span_cost(args: argparse.Namespace) -> None:
    """CPU microseconds per request around a trivial ASGI app (this process's CPU time, the
    SDK's export thread included: it moves less with the machine's load than wall time):
    the network layer without a span, with the runtime's span, and the bare app under the
    SDK's ASGI instrumentation (its send and receive spans excluded, then included)."""
    import asyncio
    import timeit

    try:
        from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
    except ImportError:
        OpenTelemetryMiddleware = None  # the runtime's variants still run
        print("span cost: the SDK's ASGI instrumentation is not installed, left out")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from svcc.runtime.network import NetworkLayer
    from svcc.runtime.tracing import Tracing

    class Drop(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:  # noqa: ARG002
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Drop()))
    trace.set_tracer_provider(provider)

    async def app(_scope: Any, _receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"application/json"), (b"x-request-id", b"r")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"42"})

    scope = {
        "type": "http", "method": "POST", "path": "/capabilities/add", "root_path": "",
        "raw_path": b"/capabilities/add", "query_string": b"", "scheme": "http",
        "http_version": "1.1", "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5000),
        "headers": [(b"host", b"127.0.0.1"), (b"content-length", b"18")],
    }  # fmt: skip
    tracing = Tracing(provider.get_tracer("svc_runtime"))
    capabilities = {"/capabilities/add": "add"}
    spans = tracing.server_spans(capabilities)
    layer = {"capabilities": capabilities, "tokens": None, "metrics": None}
    variants: dict[str, Any] = {
        "bare app": app,
        "layer, no span": NetworkLayer(app, **layer),
        "layer, runtime span": NetworkLayer(app, **layer, spans=spans),
    }
    if OpenTelemetryMiddleware is not None:
        variants["ASGI instr., 1 span"] = OpenTelemetryMiddleware(
            app, exclude_spans=["receive", "send"]
        )
        variants["ASGI instr."] = OpenTelemetryMiddleware(app)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        pass

    async def requests(variant: Any, n: int) -> None:
        for _ in range(n):
            await variant(dict(scope), receive, send)

    n = 5000
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, variant in variants.items():
            seconds = timeit.timeit(
                lambda v=variant: asyncio.run(requests(v, n)), timer=time.process_time, number=1
            )
            times[name].append(seconds / n * 1e6)
    provider.shutdown()
    print("span cost, CPU per request (medians, in-process):")
    for name, values in times.items():
        print(f"  {name:20s} {statistics.median(values):6.1f} us")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument(
        "--part", choices=("all", "frameworks", "types", "log", "tracing"), default="all"
    )
    args = parser.parse_args()
    if args.part in ("all", "types"):
        types_part(args)
    if args.part in ("all", "log"):
        log_part(args)
    if args.part in ("all", "frameworks"):
        frameworks_part(args)
    if args.part == "tracing":
        tracing_part(args)
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    raise SystemExit(main())
