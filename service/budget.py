"""What one request may cost: the analysis of untrusted input runs in a child process with
its own memory and CPU limits, so a hostile upload costs an answer, never the worker.

Why a child process rather than checks before parsing: the cost of an analysis depends on
the shape of the source (15 MB of ``x = 1`` lines is 2.5 million statements; a 60 KB chain
of TypedDict subclasses once cost 2 GB), so no size check made before parsing bounds it,
and a ``MemoryError`` or a runaway pass inside the worker would leave the worker bloated or
stuck until gunicorn kills it mid-answer.

Each gunicorn worker keeps one :class:`Sandbox`: a child forked from the (warm) worker on
its first request that runs one call at a time, sent over a pipe as ``(function, args)``.
The child runs under ``RLIMIT_AS`` (its size at start plus the memory budget); before each
call its ``RLIMIT_CPU`` soft limit is set to the CPU it has used plus the budget (the kernel
ends it with ``SIGXCPU`` even inside C code); the parent enforces a wall-clock deadline and
kills the child's whole process group past it. A child that ran out of anything, or grew
by more than :data:`RETIRE_GROWTH`, is replaced before the next call, so every call starts
with the whole budget. Forking once per worker instead of once per request keeps the
request path as fast as an in-process analysis (``bench/bench_service.py`` prints both).
"""

import contextlib
import os
import pickle
import resource
import select
import signal
import struct
import time
import traceback
from collections.abc import Callable
from typing import Any, Final, TypeVar

from attrs import frozen
from svcc.runtime.lifetime import die_with_parent

T = TypeVar("T")

DEFAULT_MEMORY: Final = 1024 * 1024 * 1024
DEFAULT_SECONDS: Final = 60
RETIRE_GROWTH: Final = 256 * 1024 * 1024
_RESET_SIGNALS: Final = (
    "SIGTERM",
    "SIGINT",
    "SIGQUIT",
    "SIGHUP",
    "SIGUSR1",
    "SIGUSR2",
    "SIGABRT",
    "SIGWINCH",
    "SIGCHLD",
)
_LENGTH: Final = struct.Struct("!Q")


@frozen(kw_only=True)
class Budget:
    """Limits for one request's analysis: address-space growth, CPU seconds, and wall-clock
    seconds (by default twice the CPU seconds: a busy machine must not turn a fair request
    into a refusal, but a call blocked on something else still ends)."""

    memory_bytes: int = DEFAULT_MEMORY
    seconds: float = DEFAULT_SECONDS
    wall_seconds: float | None = None

    @property
    def deadline_seconds(self) -> float:
        return self.wall_seconds if self.wall_seconds is not None else 2 * self.seconds

    def describe_memory(self) -> str:
        return f"{self.memory_bytes // (1024 * 1024)} MiB"


class OverBudget(Exception):
    """The analysis needed more memory or time than one request may use."""


class ChildFailed(Exception):
    """The child raised something that could not cross back (a bug); the text is its traceback."""


# -- in the child ------------------------------------------------------------------------------

# The memory budget and the resident size when the watch was last marked (child only).
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


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _read_exact(fd: int, size: int) -> bytes | None:
    parts: list[bytes] = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _serve(budget: Budget, requests: int, replies: int) -> None:
    """The child's loop: one call per message until the worker closes the pipe."""
    for name in _RESET_SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    die_with_parent(os.getppid())  # a worker killed with its master takes its analysis child along
    os.setpgid(0, 0)  # one group: the parent can kill anything a call started
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    start = _address_space()
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = start + budget.memory_bytes
    if hard == resource.RLIM_INFINITY or limit < hard:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _WATCH["budget"] = budget.memory_bytes
    seconds = max(1, int(budget.seconds + 0.999))
    _soft, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
    start_rss = _status_kib("VmRSS") * 1024
    while True:
        head = _read_exact(requests, _LENGTH.size)
        if head is None:
            return
        message = _read_exact(requests, _LENGTH.unpack(head)[0])
        if message is None:
            return
        soft = int(_cpu_used()) + seconds + 1
        if cpu_hard == resource.RLIM_INFINITY or soft < cpu_hard:
            resource.setrlimit(resource.RLIMIT_CPU, (soft, cpu_hard))
        mark_memory()
        try:
            function, args, kwargs = pickle.loads(message)
            del message
            outcome: tuple[str, Any] = ("ok", function(*args, **kwargs))
        except MemoryError:
            outcome = ("memory", None)
        except Exception as exc:  # crosses back and is raised again in the parent
            outcome = ("raise", exc)
        kind = outcome[0]
        try:
            data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            kind, data = "memory", pickle.dumps(("memory", None))
        except Exception:
            kind, data = "bug", pickle.dumps(("bug", traceback.format_exc()))
        del outcome
        grown = _status_kib("VmRSS") * 1024 - start_rss > RETIRE_GROWTH
        retire = kind in ("memory", "bug") or grown
        _write_all(replies, (b"\x01" if retire else b"\x00") + data)
        if retire:
            return


# -- in the worker -----------------------------------------------------------------------------


class Sandbox:
    """One child at a time that runs calls under ``budget`` (see the module docstring)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.pid = 0
        self.owner = 0
        self.requests = -1
        self.replies = -1

    def _start(self) -> None:
        requests_read, requests_write = os.pipe()
        replies_read, replies_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            try:
                os.close(requests_write)
                os.close(replies_read)
                _serve(self.budget, requests_read, replies_write)
            except BaseException:
                pass
            finally:
                os._exit(0)
        os.close(requests_read)
        os.close(replies_write)
        self.pid, self.owner = pid, os.getpid()
        self.requests, self.replies = requests_write, replies_read

    def stop(self) -> None:
        """End the child (and anything it started) and forget it."""
        if not self.pid:
            return
        for fd in (self.requests, self.replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        self.pid = 0

    def run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``function(*args, **kwargs)`` in the child (``function`` must be importable by
        name); its result or its exception. :class:`OverBudget` when the call runs out of
        memory, CPU or wall-clock time."""
        if self.pid and self.owner != os.getpid():  # inherited through a fork: not ours
            self.pid = 0
        if self.pid and os.waitpid(self.pid, os.WNOHANG)[0]:  # it died between calls
            self.pid = 0
            for fd in (self.requests, self.replies):
                with contextlib.suppress(OSError):
                    os.close(fd)
        if not self.pid:
            self._start()
        request = pickle.dumps((function, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        deadline = time.monotonic() + self.budget.deadline_seconds
        try:
            _write_all(self.requests, request)
            del request
            reply = self._reply(deadline)
        except BaseException:
            self.stop()
            raise
        seconds = f"{self.budget.seconds:g} seconds"
        if reply is None:  # the child died: the kernel's CPU limit, or worse
            status = self._reap()
            if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
                raise OverBudget(f"the analysis used more than {seconds} of CPU time")
            raise OverBudget(
                f"the analysis needed more than {self.budget.describe_memory()} of memory"
            )
        retire, kind, value = reply
        if retire:
            self.stop()
        if kind == "ok":
            return value  # type: ignore[no-any-return]
        if kind == "memory":
            raise OverBudget(
                f"the analysis needed more than {self.budget.describe_memory()} of memory"
            )
        if kind == "raise":
            raise value
        raise ChildFailed(value)

    def _reply(self, deadline: float) -> tuple[bool, str, Any] | None:
        parts: list[bytes] = []
        want = _LENGTH.size
        header = True
        while want:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise OverBudget(
                    f"the analysis took longer than {self.budget.deadline_seconds:g} seconds"
                )
            ready, _, _ = select.select([self.replies], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.replies, min(want, 1 << 20))
            if not chunk:
                return None
            parts.append(chunk)
            want -= len(chunk)
            if not want and header:
                header = False
                want = _LENGTH.unpack(b"".join(parts))[0]
                parts = []
        payload = b"".join(parts)
        kind, value = pickle.loads(payload[1:])  # the child is ours: its pickles are trusted
        return payload[:1] == b"\x01", kind, value

    def _reap(self) -> int:
        for fd in (self.requests, self.replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            status = 0
        self.pid = 0
        return status
