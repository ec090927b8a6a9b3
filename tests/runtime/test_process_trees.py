"""No process a server starts outlives it, second pass (issue 27 item 7): the paths
``test_process_lifetime`` does not take.

- A governed server stopped while a call runs that has started a chain of processes in a
  session of its own: the template, a subreaper, gets each level back only as the level
  above it dies, and it exited after killing the first two, leaving the rest under PID 1
  (REST: SIGKILL; MCP over stdio, which stops at once: every signal). A template killed
  from outside (the OOM killer) left the same under PID 1 for good.
- ``svcc serve`` stopped while pip builds a requirement (pip runs the build backend in a
  child of its own, which the parent-death signal set on pip does not reach): the backend
  went on under PID 1, and pip's folders stayed in ``$TMPDIR``.
- A REST server run as ``uvicorn app:app --workers N`` (the README's multi-process
  metrics): a SIGKILL of uvicorn's supervisor left its workers serving on the port, their
  body-prevalidation helpers and multiprocessing's resource tracker.
- ``run_watched`` (``svcc lock``, ``plugins fetch|install``) interrupted by Ctrl-C: the
  folder the command worked in was removed while it still ran, and pip made it again.

Descendants are listed before the signal (a SIGKILLed parent's children are reparented to
PID 1) and each must be gone after it.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from servers import free_port, generate, spawn
from test_process_lifetime import (
    SIGNALS,
    _mcp,
    cmdline,
    descendants,
    gone,
    post_large_invalid,
    stop,
    survivors,
    wait_healthy,
)

CHAIN = '''
import os
import time


def chain_and_hang(depth: int, seconds: float) -> int:
    """A session leader heading a chain of ``depth`` processes, each the parent of the
    next, the last one ``sleep 300``; then wait ``seconds``."""
    if os.fork() == 0:
        os.setsid()
        for _ in range(depth):
            if os.fork() != 0:
                time.sleep(300)
                os._exit(0)
        os.execvp("sleep", ["sleep", "300"])
    time.sleep(seconds)
    return 0
'''
LEAF = b"sleep\x00300\x00"


def _uvicorn(bundle: Path, *options: str) -> tuple["subprocess.Popen[bytes]", str, Path]:
    port = free_port()
    log = bundle.parent / f"{bundle.name}-{port}.log"
    with log.open("wb") as sink:
        proc = spawn(
            [sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port",
             str(port), *options],
            cwd=bundle,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url + "/health", proc, log)
    return proc, url, log


def _governed_chain(tmp_path_factory: pytest.TempPathFactory, wall_time_ms: int) -> Path:
    """The governed REST bundle of ``CHAIN`` with a call's wall time limited to this."""
    tmp = tmp_path_factory.mktemp("lifetime-chain")
    source = tmp / "chain.py"
    source.write_text(CHAIN)
    policy = tmp / "policy.json"
    policy.write_text(json.dumps({"limits": {"wall_time_ms": wall_time_ms}}))
    out = tmp / "governed"
    generate(source, out, "--allow", "process", "--execution-policy", str(policy))
    return out


@pytest.fixture(scope="module")
def chain_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _governed_chain(tmp_path_factory, 60_000)


def _chain_below(pid: int, why: Callable[[], str]) -> set[int]:
    """Every process below ``pid`` once the chain's leaf has started (``why``: what a
    failure says, 30 s on)."""
    deadline = time.monotonic() + 30
    started: set[int] = set()
    while not any(cmdline(p) == LEAF for p in started):
        assert time.monotonic() < deadline, why()
        time.sleep(0.05)
        started = descendants(pid)
    return started | descendants(pid)


def _post_quietly(url: str, body: dict[str, object]) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the server is stopped mid-call
        httpx.post(url, json=body, timeout=90)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_what_a_running_call_started_goes_with_the_governed_server(
    chain_bundle: Path, signum: int
) -> None:
    proc, url, log = _uvicorn(chain_bundle)
    started: set[int] = set()
    try:
        call = url + "/capabilities/chain_and_hang"
        # SIGTERM and SIGINT: uvicorn lets the call finish first (its worker then ends
        # what it started); SIGKILL: the template must end it all, level by level
        body = {"depth": 4, "seconds": 4}
        threading.Thread(target=_post_quietly, args=(call, body), daemon=True).start()
        started = _chain_below(proc.pid, lambda: log.read_text(errors="replace"))
        # the template, the worker, the session leader, three links of the chain, the leaf
        assert len(started) >= 7, started
    finally:
        stop(proc, signum)
    assert survivors(started, 10) == set(), log.read_text(errors="replace")


@pytest.fixture(scope="module")
def chain_short(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _governed_chain(tmp_path_factory, 4000)


def test_what_a_call_started_goes_when_its_template_is_killed(chain_short: Path) -> None:
    """The template SIGKILLed mid-call (the out-of-memory killer): its worker dies with it,
    and what the call started in a session of its own went to PID 1 (the template, the
    subreaper that would have killed it, was gone). The server is a subreaper too now: it
    gets them, and ends them when it starts the next template (or stops)."""
    proc, url, log = _uvicorn(chain_short)
    started: set[int] = set()
    try:
        with httpx.Client(base_url=url, timeout=60) as client, ThreadPoolExecutor(1) as pool:
            body = {"depth": 2, "seconds": 60}
            running = pool.submit(client.post, "/capabilities/chain_and_hang", json=body)
            deadline = time.monotonic() + 30
            while not any(cmdline(pid) == LEAF for pid in started):
                assert time.monotonic() < deadline, log.read_text(errors="replace")
                time.sleep(0.05)
                started = descendants(proc.pid)
            template = {pid for pid in started if _parent(pid) == proc.pid}
            assert len(template) == 1, template
            os.kill(template.pop(), signal.SIGKILL)
            # what the call started holds its socket: the answer comes at the deadline
            assert running.result().status_code in (500, 504)
            quick = client.post("/capabilities/chain_and_hang", json={"depth": 0, "seconds": 0})
            assert quick.status_code == 200  # on a new template
        assert survivors(started, 10) == set(), log.read_text(errors="replace")
    finally:
        stop(proc, signal.SIGTERM)


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


@pytest.fixture(scope="module")
def chain_mcp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("lifetime-chain-mcp")
    source = tmp / "chain.py"
    source.write_text(CHAIN)
    policy = tmp / "policy.json"
    policy.write_text(json.dumps({"limits": {"wall_time_ms": 60_000}}))
    out = tmp / "governed"
    generate(source, out, "--allow", "process", "--execution-policy", str(policy), interface="mcp")
    return out


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_what_a_running_tool_started_goes_with_the_governed_mcp_server(
    chain_mcp: Path, signum: int
) -> None:
    """The MCP server stops at once on every signal (its exit handlers close the executor),
    so this is the template's close on SIGTERM and SIGINT too."""
    proc = _mcp(chain_mcp)
    started: set[int] = set()
    try:
        assert proc.stdin is not None
        arguments = {"depth": 4, "seconds": 60}
        params = {"name": "chain_and_hang", "arguments": arguments}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
        proc.stdin.write(json.dumps(call).encode() + b"\n")
        proc.stdin.flush()
        started = _chain_below(proc.pid, lambda: "the chain did not start")
        assert len(started) >= 7, started
    finally:
        stop(proc, signum)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
    assert survivors(started, 10) == set()


@pytest.fixture(scope="module")
def plain_rest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_process_lifetime import hostile_rest

    return hostile_rest(tmp_path_factory.mktemp("lifetime-workers") / "rest")


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_uvicorn_workers_go_with_their_supervisor(
    plain_rest: Path, tmp_path: Path, signum: int
) -> None:
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(metrics)
    try:
        proc, url, log = _uvicorn(plain_rest, "--workers", "2")
    finally:
        del os.environ["PROMETHEUS_MULTIPROC_DIR"]
    started: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while log.read_text(errors="replace").count("Application startup complete") < 2:
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
        for _ in range(6):  # fresh connections reach both workers; each starts its helper
            post_large_invalid(url)
        started = descendants(proc.pid)
        assert len(started) >= 4, started  # two workers, a helper or two, the tracker
    finally:
        stop(proc, signum)
    assert survivors(started, 10) == set(), log.read_text(errors="replace")


SLOW_BUILD = """import time

from setuptools import setup

time.sleep(120)  # a build that takes its time (a compiled extension)
setup(name="slowpkg", version="0")
"""


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_serve_installation_ends_with_the_build_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    """The installation runs before the bundle is read, so any folder with a manifest and
    requirements will do; the requirement is a local project built without isolation
    (nothing is downloaded)."""
    from test_lifetime_commands import stopped_mid_pip

    bundle = tmp_path / "bundle"
    (bundle / "slowpkg").mkdir(parents=True)
    (bundle / "slowpkg" / "setup.py").write_text(SLOW_BUILD)
    (bundle / "svc-rest.json").write_text("{}")
    (bundle / "requirements.txt").write_text(f"{bundle / 'slowpkg'}\n")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_NO_BUILD_ISOLATION", "0")  # pip's spelling of the flag's "on"
    argv = ["serve", str(bundle), "--cache-dir", str(tmp_path / "cache"), "--port",
            str(free_port())]  # fmt: skip
    assert stopped_mid_pip(argv, tmp_path, signum, marker=b"_in_process") == (set(), [])


WRITER = """
import os, sys, time
folder, seen = sys.argv[1], sys.argv[2]
os.mkdir(os.path.join(folder, "w"))
while os.path.isdir(folder):  # pip would make its folders again here, parents included
    time.sleep(0.001)
open(seen, "w").close()  # the folder went while this command still ran
"""
RUNS_A_WRITER = f"""
import sys
from svcc.contracts.watch import private_directory, run_watched
with private_directory("svcc-test-") as folder:
    print(folder, flush=True)
    run_watched([sys.executable, "-c", {WRITER!r}, str(folder), sys.argv[1]], timeout=300)
"""


def test_an_interrupted_watched_command_stops_before_its_folder_is_removed(
    tmp_path: Path,
) -> None:
    """Ctrl-C during ``run_watched`` (``svcc lock``, ``plugins fetch|install``): the
    caller's ``finally`` removed the folder while the command still ran (it was killed only
    once svcc had exited), and pip makes its folders again: ``svcc-lock-*`` stayed now and
    then (``test_lock_leaves_no_pip_and_no_folder[SIGINT]`` failed under load)."""
    seen = tmp_path / "removed-under-the-command"
    private = tmp_path / "tmp"
    private.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNS_A_WRITER, str(seen)],
        stdout=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(private)},
    )
    assert proc.stdout is not None
    folder = Path(proc.stdout.readline().decode().strip())
    started: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        while not (folder / "w").exists():
            assert time.monotonic() < deadline, "the command did not start"
            time.sleep(0.05)
        started = descendants(proc.pid)
    finally:
        stop(proc, signal.SIGINT)
        proc.stdout.close()
    assert survivors(started, 10) == set()
    assert gone({folder}, seconds=20) == []
    assert not seen.exists()
