"""A helper process ends with the process that started it.

A child notices that its parent has gone only when a pipe closes or a timeout expires; after
a SIGKILL of the parent it would live on, parented to PID 1. On Linux the kernel ends it with
its parent instead (``PR_SET_PDEATHSIG``). Used by the REST body-prevalidation helper (copied
into bundles), the analysis service's processes, the processes lowering a directory, and the
pip and venv processes of ``svcc lock``, ``svcc serve`` and the plugin commands, and a REST
server's process under a ``multiprocessing`` supervisor (uvicorn's multi-process mode);
imports nothing of svcc.
"""

import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int, signum: int = signal.SIGKILL) -> None:
    """Ask the kernel to send this process ``signum`` (SIGKILL unless told) when its parent
    dies, and exit now if ``parent`` is already gone. Elsewhere than Linux the caller's pipe
    ends it instead."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(0)


def end_with_supervisor() -> None:
    """A server process that a ``multiprocessing`` parent started (uvicorn's multi-process
    mode, its ``--reload``) ends when that parent ends, however it ends.

    uvicorn's server processes notice nothing when their supervisor is SIGKILLed: they went
    on serving on the shared port under PID 1, with their body-prevalidation helpers and the
    supervisor's resource tracker. The signal is SIGTERM, so such a process shuts down as it
    does on ``docker stop`` (what it started goes with it). A server started any other way
    is left alone: its parent (a shell, ``svcc serve``'s caller, systemd) may rightly end
    first. A process that never imported ``multiprocessing`` is not its child.
    """
    process = sys.modules.get("multiprocessing.process")
    parent = None if process is None else process.parent_process()
    supervisor = None if parent is None else parent.ident  # ``pid`` is None on a parent
    if supervisor is not None:
        die_with_parent(supervisor, signal.SIGTERM)
