"""The scratch directory a governed server gives its template, and what removes it.

Every call's working directory lives in one ``svc-governed-*`` directory under the temporary
directory. Three things remove it, so that none outlives the server however it ends:

- a graceful stop (SIGTERM, Ctrl-C): the server closes its executor, which removes it;
- a SIGKILL of the server (or a crash): the template is told by the kernel
  (``PR_SET_PDEATHSIG`` with SIGTERM, which it handles), kills its workers and removes the
  directory, its own working directory, before it exits;
- both killed at once (a whole process group or cgroup SIGKILLed, the OOM killer): nothing
  runs in either, so the next governed server started with the same temporary directory
  and user sweeps it. A server holds an exclusive ``flock`` on ``<dir>/.lock`` for as long
  as it lives, and the kernel releases it when the server dies, however it dies (across PID
  namespaces too: the lock belongs to the file, not to a pid that may be reused). A
  directory is stale exactly when its lock can be taken. A directory without a lock file
  (made by another program, or by an older runtime) is never touched.

The directory is made under a private name, locked, then renamed into place, so a sweeper
never sees an unlocked directory that is alive.
"""

import contextlib
import fcntl
import os
import shutil
import tempfile
from pathlib import Path

PREFIX = "svc-governed-"
_MAKING = ".svc-governed-new-"  # not yet locked: never swept under this name
LOCK = ".lock"


class Scratch:
    """A locked scratch directory; :meth:`release` unlocks it (after it was removed)."""

    __slots__ = ("_lock", "path")

    def __init__(self, root: str | None = None) -> None:
        making = tempfile.mkdtemp(prefix=_MAKING, dir=root)
        self._lock: int | None = os.open(
            os.path.join(making, LOCK), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600
        )
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.path = os.path.join(os.path.dirname(making), PREFIX + making[-8:])
        try:
            os.rename(making, self.path)
        except OSError:  # the (random) name is taken: keep the private one, still locked
            self.path = making

    def remove(self) -> None:
        """Remove the directory, then let go of its lock."""
        shutil.rmtree(self.path, ignore_errors=True)
        self.release()

    def release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def sweep(root: str | None = None) -> list[str]:
    """Remove every scratch directory under ``root`` (the temporary directory) whose server
    is gone: owned by this user, holding a lock file nobody holds. Returns what it removed."""
    base = root or tempfile.gettempdir()
    removed: list[str] = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        with contextlib.suppress(OSError):
            if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != os.geteuid():
                continue
            if _stale(entry.path):
                removed.append(entry.path)
    return removed


def _stale(path: str) -> bool:
    """Take the directory's lock; if that works, its server is gone: remove it (holding the
    lock, so that two sweepers do not race)."""
    try:
        lock = os.open(os.path.join(path, LOCK), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False  # no lock file: not ours to judge
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # its server is alive
        shutil.rmtree(Path(path), ignore_errors=True)
        return True
    finally:
        os.close(lock)
