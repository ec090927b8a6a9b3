"""Running a child process with its output and time bounded *while* it runs.

Output is counted as it is read (not after the fact), the deadline covers reading and
waiting, and on any breach the child's whole process group (it runs in a new session) is
killed. The child runs under a watcher (``contracts.watch.session_watched``) so that the group
is killed too when this process dies without its ``finally`` (SIGKILL, the OOM killer): an
extension and the engine client it runs, and what they started, never outlive their starter.
Used for extensions (by the core) and for the engine client (by svc-oci).
"""

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from attrs import frozen
from svcc.contracts.watch import session_watched

STOP_S = 5  # the watcher's own stop (it is ours): only a wedged machine takes longer


class Exceeded(Exception):
    """``what`` is ``"timeout"`` or the name of the stream over its budget; ``partial`` is
    what the child wrote before (stdout then stderr, each within its budget), for a log."""

    def __init__(self, what: str, partial: bytes = b"") -> None:
        super().__init__(what)
        self.what = what
        self.partial = partial


@frozen
class Completed:
    status: int
    stdout: bytes
    stderr: bytes


def run_bounded(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout_ms: int,
    stdin: bytes = b"",
    max_stdout: int,
    max_stderr: int,
    shared_budget: bool = False,
) -> Completed:
    """``shared_budget``: stdout and stderr count against one budget (``max_stdout``)."""
    deadline = time.monotonic() + timeout_ms / 1000
    proc = _start(argv, env, cwd)
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    out, err = bytearray(), bytearray()
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, ("stdout", out))
    sel.register(proc.stderr, selectors.EVENT_READ, ("stderr", err))
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise Exceeded("timeout", bytes(out + err))
            for key, _ in sel.select(left):
                what, buf = key.data
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf += chunk
                if shared_budget and len(out) + len(err) > max_stdout:
                    raise Exceeded("output", bytes(out + err)[:max_stdout])
                if not shared_budget and len(buf) > (
                    max_stdout if what == "stdout" else max_stderr
                ):
                    raise Exceeded(what)
        try:
            status = proc.wait(max(deadline - time.monotonic(), 0.001))
        except subprocess.TimeoutExpired:
            raise Exceeded("timeout", bytes(out + err)) from None
    finally:
        sel.close()
        if proc.poll() is None:
            _stop(proc)
        proc.stdout.close()
        proc.stderr.close()
    return Completed(status, bytes(out), bytes(err))


def _start(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> "subprocess.Popen[bytes]":
    """The watcher, once it has started ``argv`` (an ``OSError`` if it could not)."""
    report, report_w = os.pipe()
    try:
        proc = subprocess.Popen(
            session_watched(argv, report_fd=report_w, env_names=sorted(env)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            close_fds=True,
            pass_fds=(report_w,),
            start_new_session=True,  # a terminal's Ctrl-C reaches this process only
        )
    finally:
        os.close(report_w)
    with os.fdopen(report, "rb") as reader:
        failed = reader.read()
    if failed:
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            assert stream is not None
            stream.close()
        errno = int(failed)
        raise OSError(errno, os.strerror(errno), argv[0])
    return proc


def _stop(proc: "subprocess.Popen[bytes]") -> None:
    """The watcher kills the command's group on SIGTERM, then ends by the same signal."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(STOP_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
