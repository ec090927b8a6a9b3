"""A helper process ends with the process that started it.

A child notices that its parent has gone only when a pipe closes or a timeout expires; after
a SIGKILL of the parent it would live on, parented to PID 1. On Linux the kernel ends it with
its parent instead (``PR_SET_PDEATHSIG``). Used by the REST body-prevalidation helper (copied
into bundles), the analysis service's processes, the processes lowering a directory, and the
pip and venv processes of ``svcc lock``, ``svcc serve`` and the plugin commands; imports
nothing of svcc.
"""

import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Ask the kernel to kill this process (SIGKILL) when its parent dies, and exit now if
    ``parent`` is already gone. Elsewhere than Linux the caller's pipe ends it instead."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(0)
