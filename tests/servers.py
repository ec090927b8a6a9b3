"""Generated bundles under real servers on loopback: compile, start, wait, stop.

Every server a test starts on a port goes through :func:`spawn`, so none outlives the session,
however the session ends (a runner killed with SIGKILL runs no teardown and no ``finally``).
"""

import contextlib
import ctypes
import io
import json
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from helpers import SVCC, run_svcc
from svcc.cli.main import main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "rest"
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here: the child only calls into it


def _ends_with(session: int) -> Callable[[], None]:
    """Run in the child between fork and exec: the kernel sends it SIGTERM when the process
    that started it ends, however it ends (``PR_SET_PDEATHSIG`` survives exec). SIGTERM, not
    SIGKILL: the server's own shutdown then stops what it started (gunicorn's workers, a
    governed bundle's pool of containers). A session already gone: the child exits at once."""

    def in_the_child() -> None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != session:
            os._exit(1)

    return in_the_child


def spawn(command: list[str], **popen: Any) -> "subprocess.Popen[Any]":
    """``subprocess.Popen(command, **popen)`` for a server: it ends with the test session.

    The parent-death signal follows the *thread* that forked the child, so servers are
    started from the test's own (main) thread, never from a pool thread that ends first.
    (The loopback git server is detached through a shell script instead, so it watches the
    session's pid itself: ``tests/gitserver/githttpd.py --watch-pid``.)"""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("start servers from the main thread (their parent-death signal)")
    # the child only calls prctl (libc loaded above) and getppid: no lock another thread holds
    return subprocess.Popen(command, preexec_fn=_ends_with(os.getpid()), **popen)  # noqa: PLW1509


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def generate(source: Path, out: Path, *args: str, interface: str = "rest") -> dict[str, object]:
    """``svcc generate INTERFACE SOURCE --output-dir OUT ARGS`` through the command's own
    ``main``, in this process: its callers need a bundle, not a test of the command (those
    run the installed ``svcc``: ``helpers.run_svcc``), and each bundle then costs no
    interpreter start and no import of svcc (~0.3 s of CPU). A directory goes to the installed
    command: a large tree is lowered in forked workers, which this process must not fork."""
    if source.is_dir():
        proc = run_svcc("generate", interface, str(source), "--output-dir", str(out), *args)
        assert proc.returncode == 0, proc.stderr
        tree: dict[str, object] = json.loads(proc.stdout)
        return tree
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stderr = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["generate", interface, str(source), "--output-dir", str(out), *args])
    stdout.flush()
    assert code == 0, stderr.getvalue()
    result: dict[str, object] = json.loads(stdout.buffer.getvalue())  # type: ignore[attr-defined]
    return result


class Server:
    def __init__(self, proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.proc = proc
        self.url = url
        self.log = log

    def client(self, **kwargs: object) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, **kwargs)  # type: ignore[arg-type]

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def _command(port: int, python: str = sys.executable) -> list[str]:
    return [python, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(port)]


def private_interpreter(root: Path) -> str:
    """A Python under ``root`` (made mode 0700, so only its owner can enter it) that imports
    what this venv does: a copy of the base executable beside a ``lib`` link to the base
    prefix's (so the standard library is found *through* ``root``), and a venv made by it
    whose ``.pth`` adds this venv's site-packages. Where the suite's own interpreter lives
    (readable by all under /usr on a CI machine, or not under /root/.pyenv) then no longer
    decides what a test of a server on an unreadable interpreter sees."""
    root.chmod(0o700)
    base = Path(os.path.realpath(sys._base_executable))
    (root / "bin").mkdir()
    copy = root / "bin" / base.name
    copy.write_bytes(base.read_bytes())
    copy.chmod(0o755)
    stdlib = Path(sysconfig.get_paths()["stdlib"])  # <prefix>/lib/python3.X
    (root / "lib").symlink_to(stdlib.parent, target_is_directory=True)
    venv = root / "venv"
    subprocess.run([str(copy), "-m", "venv", "--without-pip", str(venv)], check=True)
    site = sysconfig.get_paths()["purelib"]
    target = venv / Path(site).relative_to(sys.prefix)
    (target / "_svcc_tests.pth").write_text(f"import site; site.addsitedir({site!r})\n")
    return str(venv / "bin" / "python")


@contextmanager
def serving(
    bundle: Path, env: dict[str, str] | None = None, python: str = sys.executable
) -> Iterator[Server]:
    """The bundle under uvicorn (this venv has the bundle's requirements) until the block ends."""
    port = free_port()
    log = bundle.parent / f"{bundle.name}-{port}.log"
    with log.open("wb") as sink:
        proc = spawn(
            _command(port, python),
            cwd=bundle,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
    server = Server(proc, f"http://127.0.0.1:{port}", log)
    try:
        _wait_healthy(server)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def failed_start(bundle: Path) -> tuple[int, str]:
    """Start the bundle expecting startup to be refused: ``(exit code, output)``."""
    with spawn(
        _command(free_port()),
        cwd=bundle,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as proc:
        try:
            output, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    return proc.returncode, output


@contextmanager
def running_service(workspace: Path, *options: str, workers: int = 1) -> Iterator[tuple[str, int]]:
    """``(base url, gunicorn master pid)`` of a running ``svcc serve-analysis`` on loopback
    (stopped with SIGTERM when the block ends)."""
    port = free_port()
    log = workspace.parent / f"service-{port}.log"
    with log.open("wb") as sink:
        proc = spawn(
            [
                SVCC,
                "serve-analysis",
                "--workspace",
                str(workspace),
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
                *options,
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                httpx.post(url + "/probe", timeout=1)  # 404: writes nothing
                break
            except httpx.TransportError:
                assert proc.poll() is None, log.read_text()
                time.sleep(0.05)
        yield url, proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


@contextmanager
def serving_mcp_http(
    bundle: Path, env: dict[str, str] | None = None, *args: str
) -> Iterator[Server]:
    """The MCP bundle's own streamable HTTP server (``python server.py --transport
    streamable-http``) on loopback until the block ends (stopped with SIGTERM)."""
    port = free_port()
    log = bundle.parent / f"{bundle.name}-mcp-{port}.log"
    command = [
        sys.executable,
        "server.py",
        "--transport",
        "streamable-http",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *args,
    ]
    with log.open("wb") as sink:
        proc = spawn(
            command,
            cwd=bundle,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
    server = Server(proc, f"http://127.0.0.1:{port}", log)
    try:
        _wait_healthy(server)
        yield server
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_healthy(server: Server) -> None:
    deadline = time.monotonic() + 30
    while True:
        if server.proc.poll() is not None:
            raise AssertionError(f"server exited {server.proc.returncode}: {server.log_text()}")
        try:
            if httpx.get(server.url + "/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"server did not start: {server.log_text()}")
        time.sleep(0.05)
