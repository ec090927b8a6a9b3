"""What one request may cost: the analysis of untrusted input runs in a child process with
its own memory and CPU limits, so a hostile upload costs an answer, never the worker.

Why a child process rather than checks before parsing: the cost of an analysis depends on
the shape of the source (15 MB of ``x = 1`` lines is 2.5 million statements; a few KB of
nested brackets can be as costly as megabytes of comments), so no size check made before
parsing bounds it, and a ``MemoryError`` or a runaway pass inside the worker would leave
the worker bloated or stuck until gunicorn kills it mid-answer. A forked child (the
compiler is already imported, so forking costs about a millisecond; see
``bench/bench_service.py``) gets ``RLIMIT_AS`` (its current size plus the memory budget),
``RLIMIT_CPU`` and a wall-clock deadline enforced by the parent, which kills the child's
whole process group. The worker's own memory does not grow with the input beyond the upload
itself, and every overrun is answered :class:`OverBudget` (422, JSON).
"""

import contextlib
import os
import pickle
import resource
import select
import signal
import time
import traceback
from collections.abc import Callable
from typing import Any, Final, TypeVar

from attrs import frozen

T = TypeVar("T")

DEFAULT_MEMORY: Final = 1024 * 1024 * 1024
DEFAULT_SECONDS: Final = 60
_RESET_SIGNALS: Final = ("SIGTERM", "SIGINT", "SIGQUIT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGABRT")


@frozen(kw_only=True)
class Budget:
    """Limits for one request's analysis: address-space growth and seconds (CPU and wall)."""

    memory_bytes: int = DEFAULT_MEMORY
    seconds: float = DEFAULT_SECONDS

    def describe_memory(self) -> str:
        return f"{self.memory_bytes // (1024 * 1024)} MiB"


class OverBudget(Exception):
    """The analysis needed more memory or time than one request may use."""


class ChildFailed(Exception):
    """The child raised something that could not cross back (a bug); the text is its traceback."""


# In the child only: the memory budget and the resident size when the watch was last marked.
_WATCH: dict[str, int] = {}


def _status_kib(field: str) -> int:
    with open("/proc/self/status", "rb") as handle:
        for line in handle:
            if line.startswith(field.encode() + b":"):
                return int(line.split()[1])
    return 0


def mark_memory() -> None:
    """Start watching the peak resident size afresh (Linux resets it on ``clear_refs`` 5)."""
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "wb") as handle:
        handle.write(b"5")
    _WATCH["mark"] = _status_kib("VmRSS") * 1024


def memory_exhausted() -> bool:
    """Whether the work since :func:`mark_memory` came near the budget. The front ends turn
    a ``MemoryError`` into a diagnostic (CPython's parser raises it for deep nesting too);
    this tells an analysis that ran out of its budget from a source that is merely deep."""
    if "budget" not in _WATCH:
        return False
    peak = _status_kib("VmHWM") * 1024
    return peak - _WATCH.get("mark", 0) >= _WATCH["budget"] // 2


def _address_space() -> int:
    with open("/proc/self/statm", "rb") as handle:
        return int(handle.read().split()[0]) * resource.getpagesize()


def _limit_child(budget: Budget) -> None:
    for name in _RESET_SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    os.setpgid(0, 0)  # one group: the parent can kill anything the child started
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limit = _address_space() + budget.memory_bytes
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or limit < hard:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _WATCH["budget"] = budget.memory_bytes
    mark_memory()
    seconds = max(1, int(budget.seconds + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))


def _child(budget: Budget, work: Callable[[], Any], out: int) -> None:
    try:
        _limit_child(budget)
        try:
            outcome: tuple[str, Any] = ("ok", work())
        except MemoryError:
            outcome = ("memory", None)
        except Exception as exc:  # crosses back and is raised again in the parent
            outcome = ("raise", exc)
        try:
            data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            data = pickle.dumps(("memory", None))
        except Exception:
            data = pickle.dumps(("bug", traceback.format_exc()))
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]
    except MemoryError:
        with contextlib.suppress(BaseException):
            os.write(out, pickle.dumps(("memory", None)))
    except BaseException:
        with contextlib.suppress(BaseException):
            os.write(out, pickle.dumps(("bug", traceback.format_exc())))
    finally:
        os._exit(0)


def run_within(budget: Budget, work: Callable[[], T]) -> T:
    """``work()`` in a forked child under ``budget``; its result (pickled) or its exception.

    Raises :class:`OverBudget` when the child runs out of memory, CPU or wall-clock time."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        os.close(read_end)
        _child(budget, work, write_end)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + budget.seconds
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_end], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except BaseException:  # the worker is being stopped: the child goes first
        timed_out = True
        raise
    finally:
        os.close(read_end)
        if timed_out:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # anything the child left behind
    seconds = f"{budget.seconds:g} seconds"
    if timed_out:
        raise OverBudget(f"the analysis took longer than {seconds}")
    if not chunks:
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
            raise OverBudget(f"the analysis used more than {seconds} of CPU time")
        raise OverBudget(f"the analysis needed more than {budget.describe_memory()} of memory")
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "ok":
        return value  # type: ignore[no-any-return]
    if kind == "memory":
        raise OverBudget(f"the analysis needed more than {budget.describe_memory()} of memory")
    if kind == "raise":
        raise value
    raise ChildFailed(value)
