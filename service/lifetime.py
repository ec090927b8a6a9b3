"""The service's processes end with the process that started them.

gunicorn's sync worker notices that its master has gone only when its ``select`` times
out (half the worker timeout: 75 s by default), and an analysis child only when its worker
closes the pipe; after a SIGKILL of the master they lived on, parented to PID 1. On Linux
the kernel ends them with their parent instead (``PR_SET_PDEATHSIG``).
"""

import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Be killed (SIGKILL) when the parent process dies; end now if it already has."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            return
    if os.getppid() != parent:
        os._exit(1)
