"""A command in a process group of its own that ends with the process that started it.

A child started in a new session (so that a timeout or a limit can kill it with everything it
started: git's transport helpers, an engine client's children) is out of reach of any signal
sent to its starter, and when the starter dies without running its ``finally`` (SIGKILL, the
OOM killer) nothing kills the group: ``git fetch`` waited on a silent server forever. Run
under :func:`watched`, the command's group is led by a small watcher that the kernel tells
when its parent dies (``PR_SET_PDEATHSIG``, Linux) and that then kills the whole group. The
command's exit status is the watcher's (a signal that ended it, the same signal).
"""

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
