"""A command in a process group of its own that ends with the process that started it.

A child started in a new session (so that a timeout or a limit can kill it with everything it
started: git's transport helpers, an engine client's children) is out of reach of any signal
sent to its starter, and when the starter dies without running its ``finally`` (SIGKILL, the
OOM killer) nothing kills the group: ``git fetch`` waited on a silent server forever. Run
under :func:`watched`, the command's group is led by a small watcher that the kernel tells
when its parent dies (``PR_SET_PDEATHSIG``, Linux) and that then kills the whole group. The
command's exit status is the watcher's (a signal that ended it, the same signal).
"""

import os
import sys
from collections.abc import Sequence
from typing import Final

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
