"""No process a server starts outlives it: each server kind, stopped by each signal.

The descendants of a running server (the REST body-prevalidation helper, a governed
template and its workers, the analysis service's workers) are listed while it runs; after
the signal every one of them must be gone, whatever the signal (SIGTERM as ``docker stop``
sends it, SIGINT as Ctrl-C, SIGKILL). A governed server stopped gracefully also removes its
scratch directory.
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import SVCC
from servers import free_port, generate
from svcc.runtime.governed.scratch import sweep

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGKILL]
POLICY = {
    "limits": {"wall_time_ms": 4000, "max_input_bytes": 1_000_000, "max_output_bytes": 4000},
    "environment": {"allow": []},
}
# Over the 256 KiB the REST server validates in its helper process, and invalid.
LARGE_INVALID = b'{"xs": [' + b",".join([b'"a"'] * 100_000) + b"]}"


def post_large_invalid(url: str) -> None:
    """A body over the prevalidation threshold, refused (422) by the helper it starts."""
    answer = httpx.post(
        url + "/capabilities/total",
        content=LARGE_INVALID,
        headers={"content-type": "application/json"},
        timeout=60,
    )
    assert answer.status_code == 422


def _parents() -> dict[int, int]:
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            found[int(entry.name)] = int(fields[1])
    return found


def descendants(pid: int) -> set[int]:
    parents = _parents()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def survivors(pids: set[int], seconds: float = 15) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = {pid for pid in pids if alive(pid)}
        if not left:
            return left
        time.sleep(0.1)
    left = {pid for pid in pids if alive(pid)}
    for pid in left:  # the test cleans up what it started, whatever it asserts
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


def stop(proc: subprocess.Popen[bytes], signum: int) -> None:
    proc.send_signal(signum)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text(errors="replace")
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"did not start: {log.read_text(errors='replace')}")


def gone(paths: set[Path], seconds: float = 30) -> list[Path]:
    """Those of ``paths`` that still exist after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(path.exists() for path in paths):
        time.sleep(0.05)
    return [path for path in paths if path.exists()]


def uvicorn(bundle: Path, *, session: bool = False) -> tuple[subprocess.Popen[bytes], str, Path]:
    port = free_port()
    log = bundle.parent / f"{bundle.name}-{port}.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "app:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=bundle,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=session,
        )
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url + "/health", proc, log)
    return proc, url, log


def hostile_rest(out: Path) -> Path:
    """The REST bundle of the hostile fixture (a helper process per call), at ``out``."""
    hostile = FIXTURES / "hostile"
    generate(hostile / "hostile.py", out, "--requirements", str(hostile / "requirements.txt"))
    return out


@pytest.fixture(scope="module")
def rest_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_rest(tmp_path_factory.mktemp("lifetime") / "rest")


def governed(tmp: Path, interface: str) -> Path:
    policy = tmp / f"policy-{interface}.json"
    policy.write_text(json.dumps(POLICY))
    out = tmp / f"governed-{interface}"
    fixture = FIXTURES / "governed"
    generate(
        fixture / "gov.py",
        out,
        "--requirements",
        str(fixture / "requirements.txt"),
        "--allow",
        "env,process",
        "--execution-policy",
        str(policy),
        interface=interface,
    )
    return out


@pytest.fixture(scope="module")
def governed_rest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return governed(tmp_path_factory.mktemp("lifetime-gov"), "rest")


@pytest.fixture(scope="module")
def governed_mcp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return governed(tmp_path_factory.mktemp("lifetime-gov-mcp"), "mcp")


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_rest_prevalidation_helper_goes_with_the_server(rest_bundle: Path, signum: int) -> None:
    proc, url, log = uvicorn(rest_bundle)
    try:
        post_large_invalid(url)
        started = descendants(proc.pid)
        assert started, "the helper process was not started"
    finally:
        stop(proc, signum)
    assert survivors(started) == set(), log.read_text(errors="replace")


def _scratch_of(pids: set[int]) -> set[Path]:
    found = set()
    for pid in pids:
        try:
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
        if cwd.name.startswith("svc-governed-"):
            found.add(cwd)
    return found


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_governed_rest_template_and_scratch_go_with_the_server(
    governed_rest: Path, signum: int
) -> None:
    proc, url, log = uvicorn(governed_rest)
    try:
        assert httpx.post(url + "/capabilities/add", json={"a": 1, "b": 2}).json() == 3
        answer = httpx.post(
            url + "/capabilities/add",
            content=b'{"a": 1, "b": "' + b"x" * 300_000 + b'"}',
            headers={"content-type": "application/json"},
            timeout=60,
        )
        assert answer.status_code == 422
        started = descendants(proc.pid)
        scratch = _scratch_of(started)
        assert len(started) >= 2, started  # the template and the helper
        assert scratch
    finally:
        stop(proc, signum)
    assert survivors(started) == set(), log.read_text(errors="replace")
    # SIGTERM/SIGINT: the server removes it; SIGKILL: its template does, told by the kernel
    assert gone(scratch) == [], log.read_text(errors="replace")


def test_governed_template_removes_its_scratch_when_its_control_closes(
    governed_rest: Path, tmp_path: Path
) -> None:
    """The template's control socket closing is the first sign of a SIGKILLed server: the
    kernel closes a dying process's files before it reparents its children or sends their
    death signal, so a template can read EOF while its parent id is still the server's. It
    must remove the directory then, not only on the signal (CI saw one left behind)."""
    scratch = tmp_path / "svc-governed-direct"
    scratch.mkdir()
    (scratch / "left-by-a-call").write_text("x")
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    template = subprocess.Popen(
        [sys.executable, "-s", str(governed_rest / "execution" / "worker.py"),
         str(theirs.fileno())],
        pass_fds=[theirs.fileno()],
        cwd=scratch,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    theirs.close()
    try:
        ours.settimeout(30)
        assert ours.recv(16) == b"ready"
    finally:
        ours.close()  # EOF, and this process (its parent) lives on
    assert template.wait(timeout=30) == 0
    assert not scratch.exists()


def test_governed_scratch_left_by_a_killed_group_is_swept_at_the_next_start(
    governed_rest: Path,
) -> None:
    """Server and template SIGKILLed together (a process group, a cgroup, the OOM killer):
    nothing of either runs, the directory stays; the next governed server removes it, and
    leaves alone the directory of a server that is alive."""
    proc, url, _ = uvicorn(governed_rest, session=True)
    try:
        assert httpx.post(url + "/capabilities/add", json={"a": 1, "b": 2}).json() == 3
        started = descendants(proc.pid)
        scratch = _scratch_of(started)
        assert scratch
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert survivors(started) == set()
    assert [path for path in scratch if path.exists()] == list(scratch)  # nothing ran
    live, _, live_log = uvicorn(governed_rest)
    try:
        live_scratch = _scratch_of(descendants(live.pid))
        assert [path for path in scratch if path.exists()] == []  # swept at startup
        assert live_scratch
        assert sweep() == []  # the live server holds its directory's lock
        assert [path for path in live_scratch if path.exists()] == list(live_scratch)
    finally:
        stop(live, signal.SIGTERM)
    assert gone(live_scratch) == [], live_log.read_text(errors="replace")


def _mcp(bundle: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "server.py"],
        cwd=bundle,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    proc.stdin.write(json.dumps(hello).encode() + b"\n")
    proc.stdin.flush()
    assert b'"id":1' in proc.stdout.readline()
    return proc


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_governed_mcp_template_and_scratch_go_with_the_server(
    governed_mcp: Path, signum: int
) -> None:
    proc = _mcp(governed_mcp)
    try:
        started = descendants(proc.pid)
        scratch = _scratch_of(started)
        assert started
        assert scratch
    finally:
        stop(proc, signum)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
    assert survivors(started) == set()
    assert gone(scratch) == []


@pytest.fixture
def analysis_service(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    port = free_port()
    log = tmp_path / "service.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [SVCC, "serve-analysis", "--workspace", str(workspace), "--bind",
             f"127.0.0.1:{port}", "--workers", "2"],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url + "/probe", proc, log)
        yield proc, url
    finally:
        if proc.poll() is None:
            stop(proc, signal.SIGKILL)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_analysis_service_workers_go_with_the_server(
    analysis_service: tuple[subprocess.Popen[bytes], str], signum: int
) -> None:
    proc, url = analysis_service
    answer = httpx.post(
        url + "/analyze_file/", files={"file": ("m.py", b"def f(x: int) -> int:\n    return x\n")}
    )
    assert answer.status_code == 200, answer.text
    deadline = time.monotonic() + 10
    while len(descendants(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    started = descendants(proc.pid)
    assert len(started) >= 2
    stop(proc, signum)
    assert survivors(started, seconds=40) == set()


def _depth(pid: int, root: int) -> int:
    parents = _parents()
    depth = 0
    while pid != root and pid in parents:
        pid, depth = parents[pid], depth + 1
    return depth if pid == root else -1


def test_directory_analysis_processes_go_with_the_server(tmp_path: Path) -> None:
    """``/analyse_directory/`` analyses a large directory in a pool of processes forked by
    the analysis child (master → worker → child → pool): SIGKILL of the master mid-analysis
    must end the pool too (each level dies with its parent)."""
    workspace = tmp_path / "ws"
    (workspace / "pkg").mkdir(parents=True)
    body = "".join(
        f"def f{i}(x: int, y: str = 'a') -> int:\n    return x + {i}\n\n" for i in range(3000)
    )
    for n in range(40):
        (workspace / "pkg" / f"m{n}.py").write_text(body)
    port = free_port()
    log = tmp_path / "service.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [SVCC, "serve-analysis", "--workspace", str(workspace), "--bind",
             f"127.0.0.1:{port}", "--workers", "1"],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    started: set[int] = set()
    try:
        wait_healthy(url + "/probe", proc, log)
        with httpx.Client(timeout=120) as client:
            request = client.build_request(
                "POST", url + "/analyse_directory/", data={"directory_path": "pkg"}
            )
            threading.Thread(target=lambda: _quietly(client, request), daemon=True).start()
            deadline = time.monotonic() + 60
            pool = os.cpu_count() or 1  # the pool forks all its processes at once
            while time.monotonic() < deadline:
                started = descendants(proc.pid)
                if sum(_depth(pid, proc.pid) >= 3 for pid in started) >= pool:
                    break
                time.sleep(0.05)
            assert any(_depth(pid, proc.pid) >= 3 for pid in started), log.read_text()
    finally:
        stop(proc, signal.SIGKILL)
    assert survivors(started) == set()


def _quietly(client: httpx.Client, request: httpx.Request) -> None:
    with contextlib.suppress(httpx.HTTPError):
        client.send(request)


def test_serve_installation_ends_with_the_command(rest_bundle: Path, tmp_path: Path) -> None:
    """``svcc serve`` stopped with SIGTERM while it installs a bundle's requirements left
    pip running, installing into the cache and racing the next build of that environment.
    pip is held here by an index that accepts the connection and never answers."""
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        index = f"http://127.0.0.1:{silent.getsockname()[1]}/simple"
        env = {**os.environ, "PIP_INDEX_URL": index, "PIP_CONFIG_FILE": os.devnull,
               "PIP_TIMEOUT": "120", "PIP_RETRIES": "0"}  # fmt: skip
        proc = subprocess.Popen(
            [SVCC, "serve", str(rest_bundle), "--cache-dir", str(tmp_path / "cache"),
             "--port", str(free_port())],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        started: set[int] = set()
        try:
            started = running_below(proc, INSTALLING, 120)
        finally:
            stop(proc, signal.SIGTERM)
        assert survivors(started) == set()  # the index still silent: pip would wait on


INSTALLING = b"-m\0pip\0install"  # not ``python -m venv``'s own ensurepip


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def running_below(proc: "subprocess.Popen[bytes]", marker: bytes, seconds: float) -> set[int]:
    """The live processes below ``proc`` once one whose command line holds ``marker`` runs;
    a failed test when none does before ``seconds`` pass or ``proc`` ends."""
    started: set[int] = set()
    deadline = time.monotonic() + seconds
    while proc.poll() is None and time.monotonic() < deadline:
        started = descendants(proc.pid)
        if any(marker in cmdline(pid) for pid in started):
            return started
        time.sleep(0.05)
    raise AssertionError(f"nothing running {marker!r} below {proc.pid}: {sorted(started)}")
