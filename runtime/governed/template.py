"""The template process and the workers it forks (governed local-process execution).

The template starts with the policy's clean environment, imports only the runtime, checks
the bundle's execution files and compiles the verified source bytes (compiling runs none of
it). It is single-threaded, so forking it is safe. It forks each call's worker ahead of the
call (a spare, ``Template``), when the server asks (``W``), and sends the server the other
end of the worker's socket (``SCM_RIGHTS``); when no spare is ready, the server sends a
fresh socket for a worker forked then (``C``). A worker gets its own process group, a fresh
working directory (under the template's working directory, a scratch directory the server
owns and removes if the template dies) and a pipe for its stdout and stderr, waits for its
call's request on its socket and answers there.

Nothing a call starts outlives it. A worker is itself a child subreaper: whatever its
code starts (``setsid``, ``start_new_session``, a double fork) stays below it, and it kills
and reaps all of that before it answers. A worker killed at the deadline leaves its
descendants to the template (also a subreaper), which kills every child that is not a
live worker. A worker dies with the template (``PR_SET_PDEATHSIG``); the template ends with
the server, however the server ends, killing everything still below it however deep, and
removes the scratch directory as it goes (``scratch``). The template and the server are
not dumpable, so a worker cannot read their ``/proc/<pid>/environ`` or ``mem`` (as root it
could anyway: the policy's ``worker_user`` runs workers as an unprivileged user). A
worker's output goes through the template, at most ``limits.max_log_bytes`` per call; the
rest is counted and dropped with a note. A working directory left full is renamed away and
removed by a separate cleaner process, so a call that leaves 500k files never stalls the
next.

A worker re-checks the digests of its plan, the policy and the source before running the
module, so a bundle changed after startup gives a sanitised error, never a silent change.
"""

import contextlib
import errno
import gc
import hashlib
import importlib
import importlib.util  # before the privilege drop: later it may be unreadable
import inspect
import json
import os
import pickle
import selectors
import shutil
import signal
import socket
import struct
import sys
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import wire as p
from ..calls import CallShape, shape_problem
from ..integrity import sha256_file
from ..services import attribute_of
from .processes import (
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    PR_SET_NAME,
    PR_SET_PDEATHSIG,
    children_of,
    end_everything_below,
    kill_descendants,
    prctl,
    worker_identity,
)

READY = b"ready"
# A message from the server: ``C`` (start a worker for call N on the descriptor it carries),
# ``W`` (fork a spare worker for call N) or ``K`` (kill call N's worker, if it still runs),
# and N; to the server: ``S`` (spare N's socket, the descriptor it carries).
CONTROL = struct.Struct("!cQ")
# A worker's name (``/proc/<pid>/comm``, what ``ps`` shows): whether its call has come.
SPARE_NAME = b"svc-spare"
WORKER_NAME = b"svc-worker"
WARM_ROUNDS = 64  # enough for the interpreter to specialise what a worker runs
DEFAULT_MAX_LOG_BYTES = 64 * 1024  # policies written before ``limits.max_log_bytes``
TRASH = ".trash"


class Prepared:
    """What the template reads once: policy, plans, and the compiled module code."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.policy = json.loads((root / "execution" / "policy.json").read_bytes())
        self.policy_digest = sha256_file(root / "execution" / "policy.json")
        self.plans: dict[str, dict[str, Any]] = {}
        self.plan_digests: dict[str, str] = {}
        for path in sorted((root / "execution" / "plans").glob("*.json")):
            plan = json.loads(path.read_bytes())
            if plan["policy_digest"] != self.policy_digest:
                raise RuntimeError(f"{path.name} was not planned for this policy")
            self.plans[plan["call"]["name"]] = plan
            self.plan_digests[plan["call"]["name"]] = sha256_file(path)
        asynchronous = any(plan["call"]["execution"] == "async" for plan in self.plans.values())
        if asynchronous or self.policy.get("worker_user") is not None:
            # asyncio (with the subprocess, thread and TLS modules it loads) is half of what
            # a fork copies, so it is loaded, once, for its workers only when they need it:
            # a coroutine or an async generator runs on it, and a worker user that cannot
            # read the standard library may use only what is loaded before the drop.
            import asyncio  # noqa: F401
        first = next(iter(self.plans.values()))
        # Repository bundles: each plan names its module and function, and the declared
        # module set that a worker imports from (``svc_runtime.repository``).
        self.repository: dict[str, Any] | None = first.get("repository")
        self.module = first["module"]
        source = first["source"]
        data = (root / source["path"]).read_bytes()
        if "sha256:" + hashlib.sha256(data).hexdigest() != source["digest"]:
            raise RuntimeError(f"{source['path']} does not match its plan")
        self.source_path = root / source["path"]
        self.code = compile(data, str(self.source_path), "exec", dont_inherit=True)
        # What a worker needs, made once here rather than in every worker: the files each
        # capability re-verifies (as plain strings: a worker builds no paths) and the
        # module's import spec.
        self._checks = {name: self._check_list(name) for name in self.plans}
        # a one-module program is imported from its file; a repository's worker imports
        # from the declared module set instead
        self.spec = (
            None
            if self.repository
            else importlib.util.spec_from_file_location(self.module, self.source_path)
        )
        limits = self.policy["limits"]
        self.max_output = int(limits["max_output_bytes"])
        self.max_log = int(limits.get("max_log_bytes", DEFAULT_MAX_LOG_BYTES))
        self.wall_seconds = int(limits["wall_time_ms"]) / 1000
        self.user = worker_identity(self.policy.get("worker_user"))
        self.is_async = {
            name: CallShape.from_ir(plan["call"]).is_async for name, plan in self.plans.items()
        }
        # The module as the template ran it, when it serves a service class (``preload``).
        self.preloaded: dict[str, types.ModuleType] = {}

    def checks(self, name: str) -> list[tuple[str, str, str]]:
        """Files a worker re-verifies before running ``name``: plan, policy, source files,
        each as its path, its path in the bundle and its digest."""
        return self._checks[name]

    def _check_list(self, name: str) -> list[tuple[str, str, str]]:
        plan = self.plans[name]
        out = [
            (f"execution/plans/{name}.json", self.plan_digests[name]),
            ("execution/policy.json", self.policy_digest),
        ]
        out += sorted(plan["source"]["files"].items())
        return [(str(self.root / rel), rel, digest) for rel, digest in out]


# -- worker (a forked child, one call) ------------------------------------------------------


def _log(name: str, message: str) -> None:
    sys.stderr.write(f"svc-governed: {name}: {message}\n")
    sys.stderr.flush()


def _import_declared(prepared: Prepared, module: str) -> types.ModuleType:
    """Repository bundles: the closed import set, then the plan's module (its files were
    re-verified by the worker before this runs)."""
    import importlib

    from ..repository import DeclaredSourceFinder

    repo = prepared.repository
    assert repo is not None
    sys.meta_path.insert(
        0,
        DeclaredSourceFinder(
            prepared.root / "source", repo["modules"], repo["namespace_packages"], repo["packages"]
        ),
    )
    return importlib.import_module(module)


def _execute_module(prepared: Prepared) -> types.ModuleType:
    parent = prepared.module.rpartition(".")[0]
    if parent:
        importlib.import_module(parent)
    assert prepared.spec is not None
    module = importlib.util.module_from_spec(prepared.spec)
    sys.modules[prepared.module] = module
    exec(prepared.code, module.__dict__)
    return module


def preload(prepared: Prepared) -> None:
    """A bundle serving a service class runs its module and builds its instances here, once,
    before any fork: each worker starts from a copy of the set-up state, so a model loaded
    in ``setup()`` is paid for at startup, not per call. Not when the policy names a
    ``worker_user``: the construction would run as the template's user, so each worker
    builds its own after dropping to that user. A failure stops the template (and so the
    server's startup) with one line."""
    if prepared.user is not None:
        return
    for name, plan in prepared.plans.items():
        method = plan.get("function", name)
        if "." not in method:
            continue
        module = prepared.preloaded.get(plan["module"])
        if module is None:
            if prepared.repository is not None:
                module = _import_declared(prepared, plan["module"])
            else:
                module = _execute_module(prepared)
            prepared.preloaded[plan["module"]] = module
        attribute_of(module, method)  # builds and sets up the class's one instance
    # (what the setup built is frozen with the rest of the template before the first fork)


def _sample(a: int, b: float = 0.5) -> float:
    return a + b


_SAMPLE_CALL = {
    "name": "sample",
    "execution": "sync",
    "params": [
        {"name": "a", "kind": "positional_or_keyword", "default": False},
        {"name": "b", "kind": "positional_or_keyword", "default": True},
    ],
}


def rehearse(prepared: Prepared) -> None:
    """What every call runs around the user's code, run on sample values: the files'
    digests, the request's unpickling, a module made from the spec (not executed), the
    shape check, the result's encoding. Nothing of the bundle runs, and nothing is kept.

    Why: a forked worker's first write to each page of the template's memory copies it
    (a fault of a few microseconds), and running Python writes to the objects it touches
    (reference counts, the interpreter's warm-up counters in code objects), so a worker's
    runtime path cost about a millisecond of faults. The template runs this before it
    forks (its code objects settle, so no worker writes them), and a spare runs it again
    while it waits for its call (the faults it takes are off the call's path)."""
    for path, _, _ in prepared.checks(next(iter(prepared.plans)))[:3]:  # the code, warm
        with contextlib.suppress(OSError):  # the call reports it
            sha256_file(path)
    pickle.loads(pickle.dumps(("sample", [1], {"b": 0.5}), protocol=pickle.HIGHEST_PROTOCOL))
    if prepared.spec is not None:
        importlib.util.module_from_spec(prepared.spec)
    function = attribute_of(sys.modules[__name__], _sample.__name__)
    shape_problem(function, _SAMPLE_CALL)
    inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function)
    result = function(1, 0.5)
    p.frame(p.RESULT, p.encode_result([result, "x", None, True, {"k": 1}], prepared.max_output))


def run_call(
    conn: socket.socket, prepared: Prepared, drop_privileges: Callable[[], None] = lambda: None
) -> None:
    try:
        _, size = p.HEADER.unpack(p.read_exact(conn.recv, p.HEADER.size))
    except EOFError:  # a spare whose call never came (the server closed its socket)
        return None
    # the call has come: this process is its worker, with a backstop if the server cannot
    # kill it (the default SIGALRM action terminates)
    signal.setitimer(signal.ITIMER_REAL, prepared.wall_seconds + 1.0)
    prctl(PR_SET_NAME, WORKER_NAME)
    name, args, kwargs = pickle.loads(p.read_exact(conn.recv, size))

    def fail(error: str, detail: str) -> None:
        _log(name, detail)
        conn.sendall(p.frame(p.ERROR, error.encode()))

    plan = prepared.plans.get(name)
    if plan is None:
        return fail(p.CHANGED, "no plan for this capability")
    for path, rel, digest in prepared.checks(name):
        try:
            actual = sha256_file(path)
        except OSError as exc:
            return fail(p.CHANGED, f"{rel}: {exc.strerror}")
        if actual != digest:
            return fail(p.CHANGED, f"{rel} changed since startup")
    try:
        drop_privileges()
        if plan["module"] in prepared.preloaded:  # set up before the fork: this is a copy
            module = prepared.preloaded[plan["module"]]
        elif prepared.repository is not None:
            module = _import_declared(prepared, plan["module"])
        else:
            module = _execute_module(prepared)
        function = attribute_of(module, plan.get("function", name))
        problem = shape_problem(function, plan["call"]) if function else "function is missing"
        if problem:
            return fail(p.CHANGED, f"callable shape changed: {problem}")
        if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
            _stream(conn, prepared, function(*args, **kwargs))
            kill_descendants()
            conn.sendall(p.frame(p.DONE, b""))
            return None
        if prepared.is_async[name]:
            import asyncio  # loaded by the template (``Prepared``)

            result = asyncio.run(function(*args, **kwargs))
        else:
            result = function(*args, **kwargs)
    except p.ResultError as exc:  # an item of a stream that is not JSON
        kill_descendants()
        return fail(exc.kind, str(exc))
    except BaseException:  # the user's code failed, whatever it raised: sanitised
        kill_descendants()
        sys.stderr.write(f"svc-governed: {name}: the call raised\n{traceback.format_exc()}")
        return fail(p.EXCEPTION, "exception (traceback above)")
    kill_descendants()  # the call has ended: so has everything it started
    try:
        data = p.encode_result(result, prepared.max_output)
    except p.ResultError as exc:
        return fail(exc.kind, str(exc))
    conn.sendall(p.frame(p.RESULT, data))
    return None


def _stream(conn: socket.socket, prepared: Prepared, produced: Any) -> None:
    """A generator's items, one ``I`` frame each, as they come: a socket write blocks
    while the server has not read, so a slow client makes the generator wait. An item
    that is not plain JSON (or over the output limit) is :class:`wire.ResultError`."""
    if not hasattr(produced, "__anext__"):
        for item in produced:
            conn.sendall(p.frame(p.ITEM, p.encode_result(item, prepared.max_output)))
        return

    import asyncio  # loaded by the template (``Prepared``)

    async def drain() -> None:
        async for item in produced:
            conn.sendall(p.frame(p.ITEM, p.encode_result(item, prepared.max_output)))

    asyncio.run(drain())


def _worker(
    conn_fd: int,
    workdir: str,
    log_fd: int,
    prepared: Prepared,
    *,
    closing: list[Any],
    template: int,
) -> None:
    """In the forked child: own process group, fresh directory, one call, then exit. A
    spare does all this before its call comes (``run_call`` waits for it)."""
    code = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for item in closing:
            if isinstance(item, int):
                os.close(item)
            else:
                item.close()
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != template:  # the template died before the line above
            os._exit(1)
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(log_fd)
        os.setpgid(0, 0)
        os.chdir(workdir)
        prctl(PR_SET_NAME, SPARE_NAME)
        with contextlib.suppress(Exception):  # never a reason to miss the call
            rehearse(prepared)  # before the call comes (``rehearse``)
        with socket.socket(fileno=conn_fd) as conn:
            run_call(conn, prepared, lambda: _become(prepared.user))
    except BaseException:  # nothing may escape a forked child
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _become(user: tuple[int, int] | None) -> None:
    """Drop to the policy's worker user (after the files were verified, before user code)."""
    if user is None:
        return
    uid, gid = user
    template = os.getppid()
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    prctl(PR_SET_DUMPABLE, 0)  # a credential change resets both of these
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != template:
        os._exit(1)


# -- template ----------------------------------------------------------------------------------


class Call:
    """What the template tracks for one live worker."""

    __slots__ = ("dropped", "number", "pid", "workdir", "written")

    def __init__(self, pid: int, number: int, workdir: str) -> None:
        self.pid = pid
        self.number = number
        self.workdir = workdir
        self.written = 0
        self.dropped = 0


class Template:
    """The template's state: live calls, their output pipes, the cleaner.

    A worker is forked either for a socket the server sends (``C``), or as a spare (``W``):
    forked ahead of its call with a socket of its own whose other end goes to the server,
    which takes it for its next call (and asks for the next spare then), so a call waits
    for neither a fork, nor a worker's setup, nor this process. A spare is as fresh as a
    worker forked for its call: a copy of the template, which never runs a call, serving
    one call; it runs nothing of the bundle before the call comes (the files are
    re-verified and the module executed after that, as for any worker)."""

    def __init__(self, prepared: Prepared, scratch: Path) -> None:
        self.prepared = prepared
        self.scratch = scratch
        self._scratch = str(scratch)
        self.trashed = False  # something was moved to the trash since the cleaner last ran
        self.calls: dict[int, Call] = {}
        self.numbers: dict[int, int] = {}  # the server's number of a live call → its pid
        self.logs: dict[int, Call] = {}  # read end of a call's output pipe → its call
        self.cleaner: int | None = None
        self.selector = selectors.DefaultSelector()
        self.inherited: list[Any] = []  # what a worker closes first: the template's sockets

    # -- output --------------------------------------------------------------------------
    def read_log(self, fd: int) -> None:
        call = self.logs[fd]
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.selector.unregister(fd)
            os.close(fd)
            del self.logs[fd]
            if call.dropped:
                _write_all(
                    2,
                    f"svc-governed: worker {call.pid}: {call.dropped} more bytes of stdout/"
                    f"stderr dropped (over the {self.prepared.max_log}-byte per-call budget, "
                    "limits.max_log_bytes)\n".encode(),
                )
            return
        room = max(self.prepared.max_log - call.written, 0)
        if room:
            _write_all(2, data[:room])
        call.written += min(room, len(data))
        call.dropped += max(len(data) - room, 0)

    # -- calls ---------------------------------------------------------------------------
    def start(self, fd: int, number: int) -> None:
        """A worker for call ``number``, answering on ``fd`` (the server's socket)."""
        try:
            self._fork(fd, number, [])
        finally:
            os.close(fd)

    def spare(self, number: int) -> socket.socket:
        """A spare worker for call ``number``; returns the server's end of its socket."""
        ours, theirs = socket.socketpair()
        try:
            self._fork(theirs.fileno(), number, [ours])
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return ours

    def _workdir(self) -> str:
        """A new directory for one call, named at random: a worker user may enter the
        scratch directory (0711), never list it, so it cannot find another call's."""
        while True:
            path = os.path.join(self._scratch, "svc-call-" + os.urandom(8).hex())
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            return path

    def _fork(self, conn_fd: int, number: int, closing: list[Any]) -> None:
        workdir = self._workdir()
        if self.prepared.user is not None:
            os.chown(workdir, *self.prepared.user)
        read_end, write_end = os.pipe()
        template = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            os.rmdir(workdir)
            raise
        if pid == 0:
            _worker(
                conn_fd,
                workdir,
                write_end,
                self.prepared,
                closing=[*self.inherited, *self.logs, *closing, read_end],
                template=template,
            )
        # its own process group from now on (it sets it too): a kill, however early,
        # reaches it
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        os.close(write_end)
        os.set_blocking(read_end, False)
        call = Call(pid, number, workdir)
        self.calls[pid] = call
        self.numbers[number] = pid
        self.logs[read_end] = call
        self.selector.register(read_end, selectors.EVENT_READ)

    def reap(self) -> None:
        strays = False
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            call = self.calls.pop(pid, None)
            if call is None:
                if pid == self.cleaner:
                    self.cleaner = None
                else:
                    strays = True  # an orphan of a killed worker came back here
                continue
            del self.numbers[call.number]
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # leftovers of the call's process group
            if os.WIFSIGNALED(status):
                strays = True  # killed before it could clean up below itself
            self.remove(call.workdir)
        if strays:
            self.kill_strays()
        self.clean()

    def kill(self, number: int) -> None:
        """Kill call ``number``'s process group, if its worker was not reaped yet (so its
        pid cannot have been reused)."""
        pid = self.numbers.get(number)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    def kill_strays(self) -> None:
        """Kill every child that is neither a live worker nor the cleaner."""
        keep = set(self.calls) | {self.cleaner}
        for pid in children_of(os.getpid()):
            if pid not in keep:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    # -- directories ---------------------------------------------------------------------
    def remove(self, workdir: str) -> None:
        """An empty directory goes now; a full one is moved away for the cleaner."""
        try:
            os.rmdir(workdir)
            return
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                shutil.rmtree(workdir, ignore_errors=True)
                return
        trash = self.scratch / TRASH
        with contextlib.suppress(FileExistsError):
            trash.mkdir()
        with contextlib.suppress(OSError):
            os.rename(workdir, trash / os.path.basename(workdir))
            self.trashed = True

    def clean(self) -> None:
        """A cleaner process empties the trash, off the template's critical path."""
        if self.cleaner is not None or not self.trashed:
            return
        self.trashed = False
        trash = self.scratch / TRASH
        if not trash.exists() or not any(os.scandir(trash)):
            return
        pid = os.fork()
        if pid == 0:
            _clean(trash)
        self.cleaner = pid

    def close(self) -> None:
        for pid in list(self.calls):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        for _ in range(50):
            self.reap()
            if not self.calls:
                break
            signal.sigtimedwait([signal.SIGCHLD], 0.1)
        end_everything_below()  # the cleaner, the strays and all they started
        self.cleaner = None
        shutil.rmtree(self.scratch / TRASH, ignore_errors=True)
        for fd in list(self.logs):
            with contextlib.suppress(OSError):
                os.close(fd)


def _clean(trash: Path) -> None:
    """In the forked cleaner: remove everything in the trash, then exit."""
    code = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.nice(10)
        while True:
            entries = list(os.scandir(trash))
            if not entries:
                break
            for entry in entries:
                shutil.rmtree(entry.path, ignore_errors=True)
                if os.path.lexists(entry.path):  # cannot be removed: stop trying
                    raise SystemExit(1)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            continue
        except OSError:
            return


def serve(root: Path, control: socket.socket) -> None:
    prepared = Prepared(root)
    preload(prepared)
    server = os.getppid()
    prctl(PR_SET_CHILD_SUBREAPER, 1)  # not Linux: orphans go to init, which reaps them
    prctl(PR_SET_DUMPABLE, 0)  # workers cannot read this process's memory or environment
    template = Template(prepared, Path.cwd())  # the server's scratch directory
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    stopping: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _: stopping.append(signum))
    # The template does not outlive the server: the kernel sends SIGTERM when the server
    # dies, even by SIGKILL, and the template then stops its workers and removes the
    # scratch directory (``scratch``), which nothing in a SIGKILLed server can do.
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != server:  # the server died before the line above
        stopping.append(signal.SIGTERM)
    with contextlib.suppress(Exception):  # what every worker runs settles here, once
        for _ in range(WARM_ROUNDS):
            rehearse(prepared)
    # Everything the template holds moves to the collector's permanent generation: a
    # worker's collections never walk it, so they never copy its pages (copy-on-write).
    gc.freeze()
    selector = template.selector
    selector.register(control, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    template.inherited = [selector, control, wake_r, wake_w]
    try:
        control.sendall(READY)
        while not stopping:
            for key, _ in selector.select():
                if key.fileobj is wake_r:
                    _drain(wake_r)
                    template.reap()
                elif key.fileobj is not control:
                    if key.fd in template.logs:
                        template.read_log(key.fd)
                elif not _on_control(control, template):
                    stopping.append(0)  # the server closed its executor, or died
                    return
    finally:
        template.close()
        # The server is gone, or done with this template: so is the directory. EOF on the
        # control socket counts: a SIGKILLed server's files close before the kernel
        # reparents the template or sends it the death signal, so EOF may come first.
        if stopping or os.getppid() != server:
            shutil.rmtree(template.scratch, ignore_errors=True)


def _drain(wake: socket.socket) -> None:
    """Empty the signal wake-up socket (its bytes only say that a signal came)."""
    try:
        while wake.recv(512):
            pass
    except BlockingIOError:
        pass


def _on_control(control: socket.socket, template: Template) -> bool:
    """One message of the server: kill a call's worker (``K``), fork a spare (``W``), or
    start a worker on the sockets it passes. ``False`` at EOF."""
    try:
        message, fds, _, _ = socket.recv_fds(control, 16, 4)
    except ConnectionError:  # closed with a spare unread: the same as EOF
        message, fds = b"", []
    if not message:
        return False
    kind, number = CONTROL.unpack(message)
    if kind == b"K":
        template.kill(number)
    elif kind == b"W":
        _send_spare(control, template, number)
    for fd in fds:
        template.start(fd, number)
    return True


def _send_spare(control: socket.socket, template: Template, number: int) -> None:
    """Fork spare ``number`` and send the server its socket (``S``). No fork now (out of
    processes) means no spare: the server's calls fork their workers (``C``) meanwhile."""
    try:
        ours = template.spare(number)
    except OSError as exc:
        _write_all(2, f"svc-governed: no spare worker: {exc.strerror}\n".encode())
        return
    with ours, contextlib.suppress(OSError):  # the server is gone: EOF comes next
        socket.send_fds(control, [CONTROL.pack(b"S", number)], [ours.fileno()])


def main(root: Path, control_fd: int) -> None:
    sys.path.insert(0, str(root / "source"))  # sibling modules and parent packages
    control = socket.socket(fileno=control_fd)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            serve(root, control)
    except Exception as exc:
        sys.stderr.write(f"svc-governed: template failed: {type(exc).__name__}: {exc}\n")
        raise SystemExit(2) from None
