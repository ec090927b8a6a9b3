"""A command in a process group of its own that ends with the process that started it.

A child started in a new session (so that a timeout or a limit can kill it with everything it
started: git's transport helpers, an engine client's children) is out of reach of any signal
sent to its starter, and when the starter dies without running its ``finally`` (SIGKILL, the
OOM killer) nothing kills the group: ``git fetch`` waited on a silent server forever. Run
under :func:`watched`, the command's group is led by a small watcher that the kernel tells
when its parent dies (``PR_SET_PDEATHSIG``, Linux) and that then kills the whole group. The
command's exit status is the watcher's (a signal that ended it, the same signal).

A temporary directory has the same problem: its ``finally`` never runs after a SIGKILL.
:func:`private_directory` hands it to a remover that removes it when its starter ends.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final

WATCHER: Final = """
import ctypes, os, signal, subprocess, sys
signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
except (OSError, AttributeError):
    pass
if os.getppid() == 1:
    sys.exit(1)
code = subprocess.call(sys.argv[1:])
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def watched(argv: Sequence[str]) -> list[str]:
    """``argv`` under the watcher; start it with ``start_new_session=True``."""
    return [sys.executable, "-I", "-S", "-c", WATCHER, *argv]


@contextlib.contextmanager
def _watched_process(argv: Sequence[str], **popen: Any) -> "Iterator[subprocess.Popen[Any]]":
    """``argv`` started under :func:`watched` in a session of its own, its stdin the null
    device: the command and everything it starts end with this process, SIGKILL included
    (pip runs a build backend in a child of its own, which ``PR_SET_PDEATHSIG`` on pip did
    not end: a killed ``plugins fetch`` left setuptools writing in the checkout). Whatever
    interrupts the wait (a timeout, Ctrl-C) kills the whole group before the exception goes
    on, so the caller's ``finally`` never removes a folder the command is still writing
    (pip made its folders again, and ``svcc lock`` stopped with SIGINT sometimes left
    ``svcc-lock-*``)."""
    with subprocess.Popen(
        watched(argv),
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # one group, which the watcher kills with it
        **popen,
    ) as proc:
        try:
            yield proc
        except BaseException:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise


def run_watched(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: "str | os.PathLike[str] | None" = None,
) -> "subprocess.CompletedProcess[str]":
    """``subprocess.run(argv, capture_output=True, text=True)`` under the watcher (see
    :func:`_watched_process`); on ``timeout`` the whole group is killed, then
    ``subprocess.TimeoutExpired`` is raised."""
    popen = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    with _watched_process(argv, env=env, cwd=cwd, **popen) as proc:
        out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def call_watched(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdout: "int | IO[Any] | None" = None,
) -> int:
    """``subprocess.call(argv)`` under the watcher (see :func:`_watched_process`), its output
    to ``stdout`` as it comes (``svcc serve`` shows pip's progress). Ctrl-C reaches this
    process only (the command leads a session of its own), which then ends the command.
    Its stdin is the null device (an MCP client's requests are on this process's stdin)."""
    with _watched_process(argv, env=env, stdout=stdout) as proc:
        return proc.wait()


# The child leads a session of its own (an extension must: it is isolated from the core's
# terminal and group), so the watcher cannot kill it with its own group: it kills the child's
# group instead, when its starter dies (PR_SET_PDEATHSIG) or sends it SIGTERM (a timeout).
# argv: report fd (the errno of a failed start, then closed), the starter's pid, the names of
# the environment the child gets (the interpreter may add LC_CTYPE to its own), the command.
SESSION_WATCHER: Final = """
import ctypes, os, signal, subprocess, sys
report, starter, names = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
child, stopping = None, False
def stop(*_):
    global stopping
    stopping = True
    if child is not None:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            pass
signal.signal(signal.SIGTERM, stop)
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
except (OSError, AttributeError):
    pass
if os.getppid() != starter:
    sys.exit(1)
env = {name: value for name, value in os.environ.items() if name in names}
try:
    started = subprocess.Popen(sys.argv[4:], env=env, start_new_session=True)
except OSError as exc:
    os.write(report, str(exc.errno or 0).encode())
    sys.exit(127)
os.close(report)
child = started
if stopping:
    stop()
code = child.wait()
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def session_watched(argv: Sequence[str], *, report_fd: int, env_names: Sequence[str]) -> list[str]:
    """``argv`` in a session of its own under a watcher that kills that session's group when
    the caller dies (SIGKILL included) or sends the watcher SIGTERM. Start it with
    ``start_new_session=True`` and ``pass_fds=(report_fd,)``; the watcher writes to
    ``report_fd`` the errno of a failed start, and closes it once the command has started."""
    names = ",".join(env_names)
    return [sys.executable, "-I", "-S", "-c", SESSION_WATCHER, str(report_fd), str(os.getpid()),
            names, *argv]  # fmt: skip


# Waits for end of file on its standard input (its starter has closed it, or has died however
# it died: the kernel closes a dead process's descriptors, SIGKILL included), then removes the
# paths it was given. A process killed at that moment may still write one last file, so the
# removal is retried until the path is gone.
REMOVER: Final = """
import os, shutil, sys, time
sys.stdin.buffer.read()
for path in sys.argv[1:]:
    for _ in range(200):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            break
        time.sleep(0.05)
"""

_HELD: set[int] = set()  # write ends of removers' pipes; no forked child may keep one open


def _close_held() -> None:
    for fd in _HELD:
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_held)


@contextlib.contextmanager
def private_directory(prefix: str, parent: str | Path | None = None) -> Iterator[Path]:
    """A new private temporary directory (``tempfile.mkdtemp``) that is gone when the block
    ends, and also when this process dies without running its ``finally`` (SIGKILL, the OOM
    killer): a remover, started in a session of its own so that no signal to this process's
    group reaches it, waits on a pipe from this process and removes the directory at its
    end of file. Only a kill of both at once (a cgroup, a container stopped) leaves it."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        remover = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", REMOVER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
        )
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    assert remover.stdin is not None
    held = remover.stdin.fileno()
    _HELD.add(held)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        _HELD.discard(held)
        remover.stdin.close()
        remover.wait()
