"""The server side of governed execution: startup checks, the template, one call at a time.

Startup checks the policy and every plan against the IR and the manifest, and the host's
POSIX facilities, without importing the source; then it makes the server non-dumpable
(its workers cannot read its ``/proc/<pid>/environ`` or ``mem``), starts the template (in
the policy's clean environment, working in a fresh scratch directory that holds every
call's directory) and waits until it is ready. A call takes a concurrency slot (up to
``limits.max_queued_calls`` calls wait; past that the call is refused with
:class:`CallBusy`, a 503), takes the socket of a worker the template forked ahead of it (or
hands the template a fresh socket when none is ready), sends the arguments, and waits for
the result until the wall deadline, or until the client goes away (the task is cancelled),
when the worker's whole process group is killed. The result is checked again
here to be strict, finite JSON. A template that died is started again on the next call;
its scratch directory, with whatever calls left in it, is removed in the background. The
scratch directory never outlives the server, however it ends (``scratch``).
"""

import asyncio
import atexit
import contextlib
import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from .. import wire as p
from ..integrity import StartupError, sha256_file
from ..streaming import ItemSource, StreamError, idle_error
from .processes import PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE, children_of, prctl, worker_identity
from .scratch import Scratch, sweep
from .template import CONTROL, READY

TEMPLATE_START_SECONDS = 30
DEFAULT_MAX_QUEUED = 64  # policies written before ``limits.max_queued_calls`` existed
# Workers forked ahead of their calls, waiting (each call takes one and asks for the next):
# two, so that the one a call takes was forked a call earlier and is set up by then.
SPARES = 2


class CallTimeout(p.CallError):
    """The call passed its wall deadline; its process group was killed."""

    status = 504
    killed = p.KILLED_TIMEOUT


class CallFailed(p.CallError):
    """Any other failure of a governed call. The message is for the server log only."""


class CallOverLimit(CallFailed):
    """The result was over ``limits.max_output_bytes`` (refused by the worker, or cut off
    here)."""

    killed = p.KILLED_LIMIT


class CallBusy(p.CallError):
    """Every slot is taken and the queue is full: the call was not started."""

    status = 503
    started = False


def check_host() -> None:
    missing = [
        name
        for name, present in (
            ("os.fork", hasattr(os, "fork")),
            ("os.setpgid", hasattr(os, "setpgid")),
            ("os.killpg", hasattr(os, "killpg")),
            ("socket.AF_UNIX", hasattr(socket, "AF_UNIX")),
            ("socket.SOCK_SEQPACKET", hasattr(socket, "SOCK_SEQPACKET")),
            ("socket.send_fds", hasattr(socket, "send_fds")),
            ("signal.setitimer", hasattr(signal, "setitimer")),
        )
        if not present
    ]
    if missing:
        raise StartupError(
            "governed local-process execution needs a POSIX host (fork, process groups, Unix "
            f"sockets with descriptor passing); this one lacks {', '.join(missing)}"
        )


def _call_of(capability: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": capability["name"],
        "execution": capability["execution"],
        "params": [
            {"name": q["name"], "kind": q["kind"], "default": q["default"] is not None}
            for q in capability["params"]
        ],
    }


def check_plans(bundle: Path, manifest: Mapping[str, Any], ir: Mapping[str, Any]) -> None:
    """Every capability has a plan bound to this source, this policy and this call shape."""
    policy_path = bundle / "execution" / "policy.json"
    policy = json.loads(policy_path.read_bytes())
    if policy.get("schema") != "svc.execution/v1":
        raise StartupError("execution/policy.json is not an svc.execution/v1 policy")
    policy_digest = sha256_file(policy_path)
    for capability in ir["capabilities"]:
        name = capability["name"]
        path = bundle / "execution" / "plans" / f"{name}.json"
        try:
            plan = json.loads(path.read_bytes())
        except (OSError, ValueError):
            raise StartupError(f"execution/plans/{name}.json is missing or invalid") from None
        if plan.get("policy_digest") != policy_digest:
            raise StartupError(f"execution/plans/{name}.json was planned for another policy")
        source = plan.get("source", {})
        if source.get("digest") is None or source.get("digest") != manifest["files"].get(
            source.get("path")
        ):
            raise StartupError(f"execution/plans/{name}.json binds another source")
        call = dict(plan.get("call", {}))
        for param in call.get("params", []):
            param["default"] = bool(param.get("default"))
        if call != _call_of(capability):
            raise StartupError(f"execution/plans/{name}.json does not match the call shape")


def _environment(policy: Mapping[str, Any]) -> dict[str, str]:
    env = policy["environment"]
    if env["inherit"]:
        return dict(os.environ)
    return {name: os.environ[name] for name in env["allow"] if name in os.environ}


class GovernedExecutor:
    def __init__(self, bundle: Path) -> None:
        self._bundle = bundle
        self._policy = json.loads((bundle / "execution" / "policy.json").read_bytes())
        limits = self._policy["limits"]
        self.max_input = int(limits["max_input_bytes"])
        self._wall = int(limits["wall_time_ms"]) / 1000
        self._max_frame = int(limits["max_output_bytes"]) + 64  # a result and its JSON
        self._slots_count = int(limits["max_concurrent_calls"])
        self._max_queued = int(limits.get("max_queued_calls", DEFAULT_MAX_QUEUED))
        self._slots: asyncio.Semaphore | None = None
        self._queued = 0
        # A client told to come back later waits about one call's deadline.
        self.retry_after = self._wall
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._scratch: Scratch | None = None
        self._worker_user = self._policy.get("worker_user")
        self._calls = 0  # numbers the calls, so the template can be told which to kill
        atexit.register(self.close)

    # -- the template ----------------------------------------------------------------------
    def start(self) -> None:
        """Start the template and wait until it is ready (a failure is a StartupError)."""
        self.close(background=True)
        prctl(PR_SET_DUMPABLE, 0)
        prctl(PR_SET_CHILD_SUBREAPER, 1)  # what a dead template's calls started comes here
        self._scratch = Scratch()
        if self._worker_user is not None:
            os.chmod(self._scratch.path, 0o711)  # workers may enter their own directory only
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        entry = self._bundle / "execution" / "worker.py"
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-s", str(entry), str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                env=_environment(self._policy),
                cwd=self._scratch.path,
                stdin=subprocess.DEVNULL,
                stdout=sys.stderr.fileno(),
            )
        except OSError as exc:
            ours.close()
            raise StartupError(f"cannot start the worker template: {exc.strerror}") from None
        finally:
            theirs.close()
        ours.settimeout(TEMPLATE_START_SECONDS)
        try:
            ready = ours.recv(16)
        except OSError:
            ready = b""
        if ready != READY:
            ours.close()
            self._process.kill()
            self._process.wait()
            raise StartupError("the worker template failed to start (see the line above)")
        ours.settimeout(None)
        self._control = ours
        for _ in range(SPARES):  # the first calls' workers
            self._ask_spare()

    def close(self, background: bool = False) -> None:
        if self._control is not None:
            self._control.close()  # the template sees EOF, kills its workers and exits
            self._control = None
        if self._process is not None:
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        end_strays()
        if self._scratch is not None:  # what a dead template's calls left behind
            scratch, self._scratch = self._scratch, None
            if background:
                threading.Thread(target=scratch.remove, daemon=True).start()
            else:
                scratch.remove()

    def _ask_spare(self) -> None:
        """Ask the template for the next call's worker, forked now, ahead of its call (a
        template that is gone is found and started again by the next call)."""
        if self._control is None:
            return
        self._calls += 1
        with contextlib.suppress(OSError):
            self._control.send(CONTROL.pack(b"W", self._calls))

    def _worker(self) -> tuple[socket.socket, Callable[[], None], bool]:
        """A fresh worker's socket, what kills that worker's process group, and whether it
        was the spare (then the caller asks for the next one once the request is written:
        the worker wakes before the template forks).

        The worker is the spare the template forked ahead of this call, or, when calls
        came faster than the template forks, one forked for a new socket (``C``). The
        template kills a worker when asked: it knows the pid, and that it is still its
        child (so a reused pid is never hit), and it reads the messages in order (so a
        worker killed before it started is killed as it starts). So a worker sends nothing
        before its answer, and the template is off a call's path: this process writes the
        request to a worker already waiting for it."""
        for attempt in (1, 2):
            if self._control is None or self._process is None or self._process.poll() is not None:
                try:
                    self.start()
                except StartupError as exc:
                    raise CallFailed(f"template restart failed: {exc}") from None
            control = self._control
            assert control is not None
            try:
                spare = _spare(control)
                if spare is not None:
                    number, conn = spare
                    if not _gone(conn):
                        return conn, partial(_kill, control, number), True
                    conn.close()
                    self._ask_spare()
                self._calls += 1
                number = self._calls
                ours, theirs = socket.socketpair()
                try:
                    socket.send_fds(control, [CONTROL.pack(b"C", number)], [theirs.fileno()])
                except BaseException:
                    ours.close()
                    raise
                finally:
                    theirs.close()
                return ours, partial(_kill, control, number), False
            except OSError:
                if attempt == 2:
                    break
                self.close()
        raise CallFailed("the worker template does not answer")

    # -- one call ---------------------------------------------------------------------------
    async def _slot(self) -> asyncio.Semaphore:
        """A concurrency slot, taken (the caller releases it), or :class:`CallBusy`."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._slots_count)
        if self._slots.locked() and self._queued >= self._max_queued:
            raise CallBusy(
                f"{self._slots_count} calls running and {self._queued} waiting "
                "(limits.max_queued_calls): answered 503"
            )
        self._queued += 1
        try:
            await self._slots.acquire()
        finally:
            self._queued -= 1
        return self._slots

    async def call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> bytes:
        """The result as finite JSON bytes; :class:`CallTimeout` or :class:`CallFailed`."""
        slots = await self._slot()
        try:
            return await self._call(name, args, kwargs)
        finally:
            slots.release()

    async def stream(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> "WorkerItems":
        """A stream's items from a fresh worker (:class:`WorkerItems`): it holds a slot until
        it is closed, and the policy's wall deadline applies to the whole stream."""
        slots = await self._slot()
        deadline = asyncio.get_running_loop().time() + self._wall
        try:
            reader, writer, kill, spare = await self._connect()
        except BaseException:
            slots.release()
            raise
        items = WorkerItems(
            name, reader, writer, deadline, slots.release, max_frame=self._max_frame, kill=kill
        )
        payload = pickle.dumps((name, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        writer.write(p.frame(p.REQUEST, payload))
        if spare:
            self._ask_spare()
        return items

    async def _connect(
        self,
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, Callable[[], None], bool]:
        """A fresh worker's socket as a stream (a stream's items come one frame each), what
        kills the worker, and whether it was the spare (``_worker``)."""
        conn, kill, spare = self._worker()
        try:
            conn.setblocking(False)
            reader, writer = await asyncio.open_connection(sock=conn)
        except BaseException:
            conn.close()
            kill()
            if spare:
                self._ask_spare()
            raise
        return reader, writer, kill, spare

    async def _call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> bytes:
        request = p.frame(
            p.REQUEST, pickle.dumps((name, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        )
        conn, kill, spare = self._worker()
        try:
            conn.setblocking(False)
            async with asyncio.timeout(self._wall):  # no task of its own, as wait_for makes
                return await self._exchange(conn, request, spare)
        except TimeoutError:
            kill()
            raise CallTimeout(f"{name} passed its {self._wall:g} s deadline") from None
        except asyncio.CancelledError:  # the client went away: so does the worker
            kill()
            raise
        finally:
            conn.close()

    async def _exchange(self, conn: socket.socket, request: bytes, spare: bool) -> bytes:
        """The request written, the one frame of the answer read, on the bare socket (a
        call's answer is one frame: no stream objects for it)."""
        loop = asyncio.get_running_loop()
        try:
            try:
                await loop.sock_sendall(conn, request)
            finally:
                if spare:
                    self._ask_spare()
            kind, data = await _answer(loop, conn, self._max_frame)
        except ConnectionError:
            raise CallFailed("the worker ended without a result (killed or crashed)") from None
        if kind == p.RESULT:
            return _strict_json(data)
        if kind == p.ERROR:
            raise _reported(data)
        raise CallFailed("worker protocol error")


class WorkerItems(ItemSource):
    """A stream's items as its worker sends them (``I`` frames, then ``D`` or ``E``), each
    checked to be strict JSON. Past the policy's deadline the worker's process group is
    killed and the stream ends with the timeout's record (a 504, as a call's); closing it
    early (the client left) kills the worker too. The idle limit applies between items."""

    def __init__(
        self,
        name: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        deadline: float,
        release: Callable[[], None],
        *,
        max_frame: int,
        kill: Callable[[], None],
    ) -> None:
        self._name = name
        self._max_frame = max_frame
        self._reader = reader
        self._writer = writer
        self._deadline = deadline
        self._release: Callable[[], None] | None = release
        self._kill = kill
        self._ended = False

    async def _frame(self) -> tuple[bytes, bytes]:
        kind, size = p.HEADER.unpack(await self._reader.readexactly(p.HEADER.size))
        if size > self._max_frame:  # one item within the output limit (the worker checks)
            raise CallOverLimit("worker sent more than the output limit")
        return kind, await self._reader.readexactly(size)

    async def batch(self, idle: float) -> list[bytes] | None:
        if self._ended:
            return None
        loop = asyncio.get_running_loop()
        remaining = self._deadline - loop.time()
        try:
            async with asyncio.timeout(max(0.0, min(idle, remaining))):
                kind, data = await self._frame()
        except TimeoutError:
            self._kill()
            self._ended = True
            if loop.time() >= self._deadline - 0.001:
                log_line(f"{self._name}: the stream passed its deadline; worker killed")
                raise StreamError(504, "Gateway Timeout") from None
            raise idle_error(idle) from None
        except (asyncio.IncompleteReadError, ConnectionError):
            self._ended = True
            raise CallFailed("the worker ended without a result (killed or crashed)") from None
        if kind == p.ITEM:
            return [_strict_json(data)]
        self._ended = True
        if kind == p.DONE:
            return None
        if kind == p.ERROR:
            raise _reported(data)
        raise CallFailed("worker protocol error")

    async def close(self) -> None:
        if not self._ended:  # the client left, or a limit ended the stream: so does the worker
            self._kill()
            log_line(f"{self._name}: the stream was closed early; worker killed")
            self._ended = True
        self._writer.close()
        if self._release is not None:
            release, self._release = self._release, None
            release()


def log_line(text: str) -> None:
    sys.stderr.write(f"svc-governed: {text}\n")
    sys.stderr.flush()


def _reported(data: bytes) -> CallFailed:
    """The failure a worker's ``E`` frame reports (its error kind, from the wire)."""
    kind = data.decode(errors="replace")
    return (CallOverLimit if kind == p.TOO_LARGE else CallFailed)(f"worker reported {kind}")


def _strict_json(data: bytes) -> bytes:
    """The worker's result, served only if it is strict, finite JSON (a worker runs the
    user's code: what it sends is checked, not trusted)."""
    if not p.is_strict_json(data):
        raise CallFailed("worker sent a result that is not strict, finite JSON")
    return data


def _children_outside_our_group() -> list[int]:
    """This process's children that lead or belong to another process group (``/proc``:
    Linux; elsewhere none, and orphans go to init)."""
    group = os.getpgid(0)
    found: list[int] = []
    for pid in children_of(os.getpid()):
        with contextlib.suppress(ProcessLookupError):  # gone meanwhile
            if os.getpgid(pid) != group:
                found.append(pid)
    return found


def end_strays(rounds: int = 200) -> None:
    """Kill and reap what a dead template's calls started, however deep.

    A template killed from outside (the out-of-memory killer) takes its workers along
    (``PR_SET_PDEATHSIG``), but what a call started in a session of its own went to PID 1:
    the subreaper that would have ended it was the template. The server is a subreaper as
    well, so those processes come here instead, one level at a time as each is killed; they
    are in process groups of their own (a worker leads one), while the template and the
    body-prevalidation helper stay in the server's group and are left alone. Run when a
    template is replaced and when the executor closes.
    """
    for _ in range(rounds):
        strays = _children_outside_our_group()
        if not strays:
            return
        for pid in strays:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for pid in strays:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


async def _answer(
    loop: asyncio.AbstractEventLoop, conn: socket.socket, limit: int
) -> tuple[bytes, bytes]:
    """A worker's one frame, its kind and its payload (over ``limit`` bytes: refused)."""
    data = await loop.sock_recv(conn, 1 << 16)
    while len(data) < p.HEADER.size:
        more = await loop.sock_recv(conn, 1 << 16)
        if not more:
            raise ConnectionResetError
        data += more
    kind, size = p.HEADER.unpack_from(data)
    if size > limit:
        raise CallOverLimit("worker sent more than the output limit")
    end = p.HEADER.size + size
    if len(data) >= end:
        return kind, data[p.HEADER.size : end]
    chunks, have = [data[p.HEADER.size :]], len(data)
    while have < end:
        more = await loop.sock_recv(conn, min(end - have, 1 << 20))
        if not more:
            raise ConnectionResetError
        chunks.append(more)
        have += len(more)
    return kind, b"".join(chunks)


def _spare(control: socket.socket) -> tuple[int, socket.socket] | None:
    """The spare the template sent (``S``: its call number and socket), if one is ready."""
    try:
        message, fds, _, _ = socket.recv_fds(control, CONTROL.size, 1, socket.MSG_DONTWAIT)
    except BlockingIOError:
        return None
    if not message:
        raise ConnectionResetError("the worker template closed its socket")
    kind, number = CONTROL.unpack(message)
    if kind != b"S" or len(fds) != 1:
        for fd in fds:
            os.close(fd)
        raise CallFailed("worker template protocol error")
    return number, socket.socket(fileno=fds[0])


def _gone(conn: socket.socket) -> bool:
    """Whether the worker at the other end of ``conn`` ended before its call (a spare
    killed from outside while it waited): then the call goes to another worker."""
    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False  # alive, waiting for its request
    except OSError:
        return True


def _kill(control: socket.socket, number: int) -> None:
    """Ask the template to kill call ``number``'s worker. A template that is gone took its
    workers with it (``PR_SET_PDEATHSIG``); one that cannot take the message now is busy
    forking, and reads it soon after."""
    with contextlib.suppress(OSError):
        control.send(CONTROL.pack(b"K", number))


def start_executor(
    bundle: Path, manifest: Mapping[str, Any], ir: Mapping[str, Any]
) -> GovernedExecutor:
    """The governed startup rules, then a ready template. Never imports the source."""
    check_host()
    check_plans(bundle, manifest, ir)
    sweep()  # what servers killed with their template (SIGKILL of the group) left
    executor = GovernedExecutor(bundle)
    try:
        identity = worker_identity(executor._worker_user)
    except RuntimeError as exc:
        raise StartupError(f"execution/policy.json: {exc}") from None
    notice = identity_notice(executor._worker_user, identity)
    if notice is not None:
        sys.stderr.write(f"svc-governed: warning: {notice}\n")
        sys.stderr.flush()
    executor.start()
    return executor


def identity_notice(user: Any, identity: tuple[int, int] | None) -> str | None:
    """One line for the operator about the identity workers run as, or ``None``: as root
    with no ``worker_user`` they run as root (and can read this server's environment); a
    ``worker_user`` that cannot search the interpreter's standard library directory can
    only import what the template loaded before the privilege drop."""
    if identity is None:
        if os.geteuid() == 0:
            return (
                "the server runs as root and the policy sets no worker_user: workers run as "
                "root and can read this server's environment; set worker_user"
            )
        return None
    stdlib = os.path.dirname(os.__file__)
    closed = _unsearchable(stdlib, *identity)
    if closed is None:
        return None
    return (
        f"worker_user {user!r} cannot read {closed} (the interpreter's standard library is "
        "below it): calls may use only the modules loaded before the privilege drop"
    )


def _unsearchable(path: str, uid: int, gid: int) -> str | None:
    """The first directory on ``path`` that ``uid``/``gid`` (no other groups) cannot enter."""
    current = Path(path)
    for directory in [*reversed(current.parents), current]:
        try:
            info = directory.stat()
        except OSError:
            return str(directory)
        if info.st_uid == uid:
            allowed = info.st_mode & 0o100
        elif info.st_gid == gid:
            allowed = info.st_mode & 0o010
        else:
            allowed = info.st_mode & 0o001
        if not allowed:
            return str(directory)
    return None
