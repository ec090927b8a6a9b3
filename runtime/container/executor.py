"""The server side of governed OCI-container execution: startup checks, the pool, calls.

Startup (before serving; any problem is one line and a non-zero exit): the policy and
every plan are bound to this bundle's source; the engine answers on its Unix socket; the
runtime image is present by its full id, speaks the worker protocol (its label) and is of
the planned platform; the source is readable by the worker's uid; containers left by a
server instance that died are removed. A reaper process then waits for this server to end
and removes its containers however it ended (SIGKILL included, a call's container too).

Containers come from launcher threads (``LAUNCHERS``: much of a container's start is the
engine waiting, so starts overlap well; measured on two busy cores, 1 → 5.5, 2 → 5.9,
3 → 6.9, 4 → 7.5 calls/s with 4 clients), each container created, attached and started,
its worker blocked on stdin (used ones are removed by ``REMOVERS`` threads). Launchers
keep ``pool.size`` containers ready, plus one for each call waiting for one (so with pool
0 a call waits for a container started for it, and no container idles). While the pool
still holds a container, a refill first yields to the calls in flight (bounded), so
refills do not slow pooled calls; when calls are waiting, launching is all that matters.

A call takes a concurrency slot; from then on its wall time (``limits.wall_time_ms``) bounds
everything the client waits for: getting a container (a cold start included), sending the
request, the call in its container, the reply. Deadline → the container is removed at once
(killed), :class:`CallTimeout` (504). The engine's ``State.OOMKilled`` → :class:`CallOOM`
(503). Anything else → :class:`CallFailed` (a sanitised 500). A used container is removed in
the background; every container is used once.
"""

import asyncio
import atexit
import collections
import concurrent.futures
import contextlib
import json
import os
import pickle
import socket
import stat
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import wire as p
from ..calls import CallShape
from ..integrity import StartupError, sha256_file
from .engine import Engine, EngineError, engine_socket

WORKER_UID = 65532
SOURCE_MOUNT = "/opt/svc/source"
LABEL_GOVERNED = "io.svcc.governed"
LABEL_INSTANCE = "io.svcc.instance"
LABEL_HOST = "io.svcc.server-host"
LABEL_PID = "io.svcc.server-pid"
REFILL_YIELD_SECONDS = 0.05
LAUNCHERS = 4
REMOVERS = 2
LAUNCH_RETRY_SECONDS = 0.5
# Runs in a session of its own (no signal to the server's process group reaches it) and
# waits for end of file on its stdin, which it gets when the server ends, however it ends:
# the kernel closes a dead process's pipes, SIGKILL included. It then removes every
# container of the server's instance (argv: engine.py, loaded by path, the engine's
# socket, the instance's label). A kill of both at once leaves them to the next sweep.
REAPER = """
import importlib.util, json, sys
from urllib.parse import quote
spec = importlib.util.spec_from_file_location("engine", sys.argv[1])
engine = importlib.util.module_from_spec(spec)
spec.loader.exec_module(engine)
client = engine.Engine(sys.argv[2])
sys.stdin.buffer.read()
filters = quote(json.dumps({"label": [sys.argv[3]]}))
try:
    for container in client.ok("GET", "/containers/json?all=1&filters=" + filters) or []:
        client.request("DELETE", "/containers/" + container["Id"] + "?force=1&v=1")
except engine.EngineError:
    pass
"""


class CallTimeout(p.CallError):
    """The call passed its wall deadline; its container was killed and removed."""

    status = 504
    killed = p.KILLED_TIMEOUT


class CallOOM(p.CallError):
    """The engine killed the call's container for exceeding its memory limit."""

    status = 503
    killed = p.KILLED_LIMIT


class CallFailed(p.CallError):
    """Any other failure of a governed call. The message is for the server log only."""


class CallOverLimit(CallFailed):
    """The result was over ``limits.max_output_bytes``."""

    killed = p.KILLED_LIMIT


class _Expired(Exception):
    """The call's deadline passed before its container was ready."""


class Slot:
    """One started container whose worker waits on stdin, and its attached stream."""

    def __init__(self, container: str, sock: socket.socket, buffered: bytes) -> None:
        self.container = container
        self.sock = sock
        self.buffered = buffered


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_readable(source: Path) -> None:
    """The worker (uid 65532, not the owner) must read the bind-mounted source."""
    for folder in [source, *source.parents]:
        if not folder.stat().st_mode & stat.S_IXOTH:
            raise StartupError(
                f"{folder} is not searchable by others: the container worker (uid "
                f"{WORKER_UID}) cannot read the bundle's source (chmod o+x)"
            )
    for path in source.rglob("*"):
        mode = path.stat().st_mode
        if not mode & stat.S_IROTH or (path.is_dir() and not mode & stat.S_IXOTH):
            raise StartupError(
                f"{path} is not readable by others: the container worker (uid {WORKER_UID}) "
                "cannot read it (chmod o+rX)"
            )


def check_plans(bundle: Path, manifest: Mapping[str, Any], ir: Mapping[str, Any]) -> None:
    policy_path = bundle / "execution" / "policy.json"
    policy = json.loads(policy_path.read_bytes())
    if policy.get("schema") != "svc.execution/v2":
        raise StartupError("execution/policy.json is not an svc.execution/v2 policy")
    policy_digest = sha256_file(policy_path)
    runtime_digest = sha256_file(bundle / "execution" / "runtime.json")
    for capability in ir["capabilities"]:
        name = capability["name"]
        try:
            plan = json.loads((bundle / "execution" / "plans" / f"{name}.json").read_bytes())
        except (OSError, ValueError):
            raise StartupError(f"execution/plans/{name}.json is missing or invalid") from None
        if plan.get("policy_digest") != policy_digest:
            raise StartupError(f"execution/plans/{name}.json was planned for another policy")
        if plan.get("runtime_digest") != runtime_digest:
            raise StartupError(f"execution/plans/{name}.json was planned for another image")
        if plan.get("source", {}).get("digest") != manifest["source"]["digest"]:
            raise StartupError(f"execution/plans/{name}.json binds another source")


class ContainerExecutor:
    def __init__(self, bundle: Path, manifest: Mapping[str, Any], ir: Mapping[str, Any]) -> None:
        self._bundle = bundle
        self._manifest = manifest
        self._policy = json.loads((bundle / "execution" / "policy.json").read_bytes())
        self._runtime = json.loads((bundle / "execution" / "runtime.json").read_bytes())
        limits = self._policy["limits"]
        self.max_input = int(limits["max_input_bytes"])
        self._max_output = int(limits["max_output_bytes"])
        self._wall = int(limits["wall_time_ms"]) / 1000
        self.retry_after = self._wall
        self._pool_size = int(self._policy["pool"]["size"])
        self._shapes = {c["name"]: CallShape.from_ir(c) for c in ir["capabilities"]}
        # Every declared source file, which the worker verifies before importing any.
        self._source_files = {
            path: digest
            for path, digest in sorted(manifest["files"].items())
            if path.startswith("source/")
        }
        self.instance = uuid.uuid4().hex
        self._engine = Engine(engine_socket())
        self._slots_count = int(limits["max_concurrent_calls"])
        self._threads = concurrent.futures.ThreadPoolExecutor(
            self._slots_count, thread_name_prefix="svc-call"
        )
        self._semaphore: asyncio.Semaphore | None = None
        self._pool: collections.deque[Slot] = collections.deque()
        self._lock = threading.Condition()
        self._in_flight = 0
        self._waiting = 0  # calls waiting for a container
        self._launching = 0
        self._failures = 0  # launches that failed (waiting calls fail with them)
        self._last_failure = ""
        self._closed = False
        self._removals: collections.deque[str] = collections.deque()
        self._workers: list[threading.Thread] = []
        self._reaper: subprocess.Popen[bytes] | None = None

    # -- startup ------------------------------------------------------------------------
    def check_engine(self) -> None:
        try:
            self._engine.ok("GET", "/_ping", timeout=10)
            image = self._runtime["image"]
            status, info = self._engine.request("GET", f"/images/{quote(image)}/json")
        except EngineError as exc:
            raise StartupError(f"the container engine is not reachable: {exc}") from None
        if status == 404:
            raise StartupError(
                f"runtime image {image} is not present in the engine at {self._engine.path} "
                "(build it from the runtime-image context; it is never pulled)"
            )
        if status != 200 or not isinstance(info, dict):
            raise StartupError(f"runtime image {image}: the engine answered {status}")
        if info.get("Id") != image:
            raise StartupError(f"runtime image {image}: the engine has {info.get('Id')} instead")
        labels = (info.get("Config") or {}).get("Labels") or {}
        if labels.get(p.PROTOCOL_LABEL) != p.WORKER_PROTOCOL:
            raise StartupError(
                f"runtime image {image} has no {p.PROTOCOL_LABEL}={p.WORKER_PROTOCOL} label: "
                "it is not an svcc runtime image"
            )
        platform = f"{info.get('Os')}/{info.get('Architecture')}"
        if platform != self._runtime["platform"]:
            raise StartupError(
                f"runtime image {image} is {platform}, the bundle was planned for "
                f"{self._runtime['platform']}"
            )

    def sweep(self) -> int:
        """Remove containers of server instances on this host that are no longer alive."""
        filters = json.dumps({"label": [f"{LABEL_GOVERNED}=1"]})
        containers = self._engine.ok("GET", f"/containers/json?all=1&filters={quote(filters)}")
        removed = 0
        host = socket.gethostname()
        for container in containers or []:
            labels = container.get("Labels") or {}
            pid = labels.get(LABEL_PID, "")
            if labels.get(LABEL_HOST) != host or not pid.isdigit():
                continue
            if labels.get(LABEL_INSTANCE) == self.instance or _pid_alive(int(pid)):
                continue
            self._remove(container["Id"])
            removed += 1
        return removed

    def start(self) -> None:
        self.check_engine()
        _check_readable(self._bundle / "source")
        self._reaper = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", REAPER, str(Path(__file__).with_name("engine.py")),
             self._engine.path, f"{LABEL_INSTANCE}={self.instance}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
        )  # fmt: skip
        try:
            self.sweep()
        except EngineError as exc:
            raise StartupError(f"cannot remove leftover containers: {exc}") from None
        if self._pool_size:
            try:
                self._pool.append(self._launch())  # proves the image runs before serving
            except (EngineError, OSError) as exc:
                while self._removals:  # no remover runs yet: leave nothing behind
                    self._remove(self._removals.popleft())
                raise StartupError(f"cannot start a worker container: {exc}") from None
        targets = [(self._launcher, f"svc-launch-{i}") for i in range(LAUNCHERS)]
        targets += [(self._remover, f"svc-remove-{i}") for i in range(REMOVERS)]
        for target, name in targets:
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._workers.append(thread)
        atexit.register(self.close)

    # -- containers -----------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        limits = self._policy["limits"]
        memory = int(limits["memory_mib"]) * 1024 * 1024
        env = [
            f"{name}={os.environ[name]}"
            for name in self._policy["environment"]["allow"]
            if name in os.environ
        ]
        return {
            "Image": self._runtime["image"],
            "User": f"{WORKER_UID}:{WORKER_UID}",
            "Env": env,
            "AttachStdin": True,
            "AttachStdout": True,
            "AttachStderr": False,
            "OpenStdin": True,
            "StdinOnce": True,
            "Tty": False,
            "NetworkDisabled": True,
            "Labels": {
                LABEL_GOVERNED: "1",
                LABEL_INSTANCE: self.instance,
                LABEL_HOST: socket.gethostname(),
                LABEL_PID: str(os.getpid()),
            },
            "HostConfig": {
                "Binds": [f"{(self._bundle / 'source').resolve()}:{SOURCE_MOUNT}:ro"],
                "NetworkMode": "none",
                "CapDrop": ["ALL"],
                "SecurityOpt": ["no-new-privileges"],
                "ReadonlyRootfs": True,
                "IpcMode": "private",
                "PidMode": "",
                "Memory": memory,
                "MemorySwap": memory,
                "NanoCpus": int(limits["cpus_millis"]) * 1_000_000,
                "PidsLimit": int(limits["pids"]),
                "Tmpfs": {"/tmp": f"rw,nosuid,nodev,size={int(limits['tmp_mib'])}m,mode=1777"},
                "RestartPolicy": {"Name": "no"},
                "LogConfig": {"Type": "none", "Config": {}},
                "AutoRemove": False,
                "Privileged": False,
            },
        }

    def _launch(self) -> Slot:
        """Create, attach and start one container; its worker then waits on stdin."""
        platform = quote(self._runtime["platform"])
        created = self._engine.ok("POST", f"/containers/create?platform={platform}", self._config())
        container = created["Id"]
        try:
            sock, buffered = self._engine.attach(container)
            try:
                self._engine.ok("POST", f"/containers/{container}/start")
            except BaseException:
                sock.close()
                raise
        except BaseException:
            self._discard(container)
            raise
        return Slot(container, sock, buffered)

    def _remove(self, container: str) -> None:
        """Kill (if it still runs) and remove ``container``; errors are the sweep's job."""
        with contextlib.suppress(EngineError):
            self._engine.request("DELETE", f"/containers/{container}?force=1&v=1")

    def _wanted(self) -> bool:
        """Whether one more launch is needed: the pool's size plus the waiting calls."""
        return len(self._pool) + self._launching < self._pool_size + self._waiting

    def _launcher(self) -> None:
        while True:
            with self._lock:
                while not self._closed and not self._wanted():
                    self._lock.wait()
                if self._closed:
                    return
                # Pacing: while the pool still holds a container and no call waits, a
                # refill yields to the calls in flight (bounded: a busy server still refills).
                deadline = time.monotonic() + REFILL_YIELD_SECONDS * 4
                while (
                    self._pool
                    and self._in_flight
                    and not self._waiting
                    and not self._stopping()
                    and time.monotonic() < deadline
                ):
                    self._lock.wait(REFILL_YIELD_SECONDS)
                if self._stopping() or not self._wanted():
                    continue
                self._launching += 1
            slot: Slot | None = None
            failure = ""
            try:
                slot = self._launch()
            except (EngineError, OSError) as exc:
                failure = str(exc) or type(exc).__name__
            with self._lock:
                self._launching -= 1
                if slot is None:
                    self._failures += 1
                    self._last_failure = failure
                elif not self._stopping() and len(self._pool) < self._pool_size + self._waiting:
                    self._pool.append(slot)
                    slot = None
                self._lock.notify_all()
            if slot is not None:  # closed meanwhile, or the call it was for gave up
                slot.sock.close()
                self._discard(slot.container)
            elif failure:
                time.sleep(LAUNCH_RETRY_SECONDS)  # the engine is unwell; do not spin

    def _stopping(self) -> bool:
        return self._closed  # a call, so a type checker does not narrow it across waits

    def _remover(self) -> None:
        while True:
            with self._lock:
                while not self._removals and not self._closed:
                    self._lock.wait()
                if not self._removals:
                    return
                container = self._removals.popleft()
            self._remove(container)

    def _discard(self, container: str) -> None:
        with self._lock:
            self._removals.append(container)
            self._lock.notify_all()

    def close(self) -> None:
        """Remove the pool and every container still queued for removal."""
        with self._lock:
            self._closed = True
            pool = list(self._pool)
            self._pool.clear()
            self._lock.notify_all()
        for worker in self._workers:
            worker.join(timeout=30)
        for slot in pool:
            slot.sock.close()
            self._remove(slot.container)
        while self._removals:
            self._remove(self._removals.popleft())
        self._threads.shutdown(wait=False)
        if self._reaper is not None and self._reaper.stdin is not None:
            self._reaper.stdin.close()  # it finds nothing left, and ends
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._reaper.wait(timeout=30)

    # -- one call -----------------------------------------------------------------------
    async def call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> bytes:
        """The result as finite JSON bytes; CallTimeout, CallOOM or CallFailed."""
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self._slots_count)
        async with self._semaphore:
            deadline = time.monotonic() + self._wall  # from here on, everything is charged
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                self._threads, self._call, name, args, kwargs, deadline
            )

    def _request(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> bytes:
        payload = {
            "name": name,
            "module": self._manifest["module"],
            "files": self._source_files,
            "is_async": self._shapes[name].is_async,
            "max_output": self._max_output,
            "args": args,
            "kwargs": kwargs,
        }
        return p.frame(p.REQUEST, pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))

    def _take(self, deadline: float) -> Slot:
        """A ready container: from the pool, or the next one a launcher starts for this call
        (with pool 0, or when the pool is empty) — until the deadline."""
        with self._lock:
            if self._pool:
                return self._pool.popleft()
            if not self._workers:  # closed, or never started
                raise CallFailed("the executor is not running")
            self._waiting += 1
            failures = self._failures
            self._lock.notify_all()
            try:
                while not self._pool:
                    if self._closed:
                        raise CallFailed("the server is shutting down")
                    if self._failures != failures:
                        raise CallFailed(f"cannot start a worker container: {self._last_failure}")
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise _Expired
                    self._lock.wait(remaining)
                return self._pool.popleft()
            finally:
                self._waiting -= 1
                self._lock.notify_all()

    def _call(self, name: str, args: list[Any], kwargs: dict[str, Any], deadline: float) -> bytes:
        request = self._request(name, args, kwargs)
        with self._lock:
            self._in_flight += 1
        try:
            try:
                slot = self._take(deadline)
            except _Expired:
                raise CallTimeout(
                    f"passed its {self._wall:g} s deadline waiting for a container"
                ) from None
            return self._exchange(slot, request, deadline)
        finally:
            with self._lock:
                self._in_flight -= 1
                self._lock.notify_all()

    def _exchange(self, slot: Slot, request: bytes, deadline: float) -> bytes:
        done = False
        try:
            reply = _Reply(slot, deadline, self._max_output)
            slot.sock.settimeout(max(deadline - time.monotonic(), 0.001))
            slot.sock.sendall(request)
            kind, data = reply.read()
            done = True
        except TimeoutError:
            self._remove(slot.container)  # kill and remove now, before answering
            raise CallTimeout(f"passed its {self._wall:g} s deadline") from None
        except _OverOutput as exc:
            self._remove(slot.container)
            raise CallOverLimit(str(exc)) from None
        except (OSError, EOFError, _ProtocolError) as exc:
            reason = self._why_ended(slot.container)
            self._remove(slot.container)
            if reason == "oom":
                raise CallOOM("the container ran out of memory (OOMKilled)") from None
            raise CallFailed(f"the worker ended without a result ({reason}; {exc})") from None
        finally:
            slot.sock.close()
            if done:
                self._discard(slot.container)
        if kind == p.RESULT:
            if not p.is_strict_json(data):
                raise CallFailed("the worker sent a result that is not strict, finite JSON")
            return data
        if kind == p.ERROR:
            reported = data.decode(errors="replace")
            failure = CallOverLimit if reported == p.TOO_LARGE else CallFailed
            raise failure(f"worker reported {reported}")
        raise CallFailed("worker protocol error")

    def _why_ended(self, container: str) -> str:
        try:
            self._engine.request("POST", f"/containers/{container}/wait", timeout=5)
            info = self._engine.ok("GET", f"/containers/{container}/json", timeout=5)
        except EngineError as exc:
            return f"engine: {exc}"
        state = info.get("State") or {}
        if state.get("OOMKilled"):
            return "oom"
        return f"exit code {state.get('ExitCode')}"


class _ProtocolError(Exception):
    pass


class _OverOutput(_ProtocolError):
    """The worker's reply frame is over the output limit."""


class _Reply:
    """Reads the worker's one reply frame from the engine's multiplexed stdout stream."""

    def __init__(self, slot: Slot, deadline: float, max_output: int) -> None:
        self._sock = slot.sock
        self._raw = slot.buffered
        self._stdout = b""
        self._deadline = deadline
        self._max_output = max_output

    def _need(self, size: int) -> bytes:
        while len(self._stdout) < size:
            while len(self._raw) >= 8 and len(self._raw) >= 8 + int.from_bytes(self._raw[4:8]):
                length = int.from_bytes(self._raw[4:8])
                if self._raw[0] == 1:
                    self._stdout += self._raw[8 : 8 + length]
                self._raw = self._raw[8 + length :]
            if len(self._stdout) >= size:
                break
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self._sock.settimeout(remaining)
            chunk = self._sock.recv(1 << 20)
            if not chunk:
                raise EOFError("stdout closed")
            self._raw += chunk
        data, self._stdout = self._stdout[:size], self._stdout[size:]
        return data

    def read(self) -> tuple[bytes, bytes]:
        kind, size = p.HEADER.unpack(self._need(p.HEADER.size))
        if size > self._max_output + 64:
            raise _OverOutput("the worker sent more than the output limit")
        return kind, self._need(size)


def start_container_executor(
    bundle: Path, manifest: Mapping[str, Any], ir: Mapping[str, Any]
) -> ContainerExecutor:
    """The governed OCI startup rules, then a first ready container. Never imports source."""
    check_plans(bundle, manifest, ir)
    try:
        executor = ContainerExecutor(bundle, manifest, ir)
    except EngineError as exc:
        raise StartupError(str(exc)) from None
    executor.start()
    return executor
