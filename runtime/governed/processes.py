"""The processes below a governed server's template: the kernel's process controls
(``prctl``), the worker's user, and finding and ending everything below a process. Apart
from the template so the server's executor uses them without the template's call path."""

import contextlib
import ctypes
import os
import signal
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36


def worker_identity(user: Any) -> tuple[int, int] | None:
    """``(uid, gid)`` of the policy's ``worker_user`` (a name or a numeric id), or None."""
    if user is None:
        return None
    import pwd

    try:
        entry = pwd.getpwuid(int(user)) if str(user).isdigit() else pwd.getpwnam(str(user))
    except KeyError:
        raise RuntimeError(f"worker_user {user!r} does not exist on this host") from None
    if os.geteuid() != 0 and entry.pw_uid != os.geteuid():
        raise RuntimeError(f"worker_user {user!r} needs the server to run as root")
    return entry.pw_uid, entry.pw_gid


def children_of(parent: int) -> list[int]:
    """Pids whose parent is ``parent`` (from ``/proc``: Linux)."""
    out: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            out.append(int(entry))
    return out


def kill_descendants() -> None:
    """Kill and reap everything below this process (a subreaper: orphans come back here)."""
    me = os.getpid()
    for _ in range(10_000):
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no child at all: the common case costs one system call
        if pid:
            continue
        for child in children_of(me):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(-1, 0)


def end_everything_below(rounds: int = 200) -> None:
    """Kill and reap every process below this one, however deep, before this one exits.

    A call's processes in a session of their own are out of reach of the worker's group
    kill; they come back to the template (a subreaper) one level at a time, each as the
    level above it dies, so a single pass over the children left the deeper levels under
    PID 1 when the template exited with its server (SIGKILL mid-call). Bounded: a process
    that does not die (stuck in the kernel) does not keep the template alive; not Linux
    (no ``/proc``), orphans go to init anyway.
    """
    me = os.getpid()
    for _ in range(rounds):
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        children = children_of(me)
        if not children:
            return
        for child in children:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
        signal.sigtimedwait([signal.SIGCHLD], 0.05)


_LIBC: list[Any] = []


def prctl(option: int, value: int | bytes) -> bool:
    try:
        if not _LIBC:
            _LIBC.append(ctypes.CDLL(None, use_errno=True))
        return int(_LIBC[0].prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False  # not Linux
