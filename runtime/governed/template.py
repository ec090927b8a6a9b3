"""The template process and the workers it forks (governed local-process execution).

The template starts with the policy's clean environment, imports only the runtime, checks
the bundle's execution files and compiles the verified source bytes (compiling runs none of
it). It is single-threaded, so forking it is safe. For each call the server sends one
message carrying a fresh socket (``SCM_RIGHTS``); the template forks a worker that gets its
own process group and a fresh temporary working directory, and answers on that socket. The
template reaps every worker, kills what is left of its process group, removes its directory,
and (as a child subreaper) also reaps orphans, so no zombie outlives a call.

A worker re-checks the digests of its plan, the policy and the source before running the
module, so a bundle changed after startup gives a sanitised error, never a silent change.
"""

import asyncio
import contextlib
import ctypes
import hashlib
import json
import math
import os
import pickle
import selectors
import shutil
import signal
import socket
import sys
import tempfile
import traceback
import types
from pathlib import Path
from typing import Any

from ..calls import CallShape, shape_problem
from ..integrity import sha256_file
from . import protocol as p

PR_SET_CHILD_SUBREAPER = 36
READY = b"ready"


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
        limits = self.policy["limits"]
        self.max_output = int(limits["max_output_bytes"])
        self.wall_seconds = int(limits["wall_time_ms"]) / 1000

    def checks(self, name: str) -> list[tuple[Path, str]]:
        """Files a worker re-verifies before running ``name``: plan, policy, source files."""
        plan = self.plans[name]
        out = [
            (self.root / "execution" / "plans" / f"{name}.json", self.plan_digests[name]),
            (self.root / "execution" / "policy.json", self.policy_digest),
        ]
        out += [
            (self.root / rel, digest) for rel, digest in sorted(plan["source"]["files"].items())
        ]
        return out


# -- worker (a forked child, one call) ------------------------------------------------------


def _finite_json(value: Any, depth: int = 0) -> bool:
    """Exactly JSON: dicts with str keys, lists, str, int, finite float, bool, None."""
    if depth > 200:
        return False
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_finite_json(item, depth + 1) for item in value)
    if kind is dict:
        return all(type(k) is str and _finite_json(v, depth + 1) for k, v in value.items())
    return False


def _read_exact(conn: socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = conn.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


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
    import importlib
    import importlib.util

    parent = prepared.module.rpartition(".")[0]
    if parent:
        importlib.import_module(parent)
    spec = importlib.util.spec_from_file_location(prepared.module, prepared.source_path)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[prepared.module] = module
    exec(prepared.code, module.__dict__)
    return module


def run_call(conn: socket.socket, prepared: Prepared) -> None:
    conn.sendall(p.frame(p.PID, str(os.getpid()).encode()))
    _, size = p.HEADER.unpack(_read_exact(conn, p.HEADER.size))
    name, args, kwargs = pickle.loads(_read_exact(conn, size))

    def fail(error: str, detail: str) -> None:
        _log(name, detail)
        conn.sendall(p.frame(p.ERROR, error.encode()))

    plan = prepared.plans.get(name)
    if plan is None:
        return fail(p.CHANGED, "no plan for this capability")
    for path, digest in prepared.checks(name):
        try:
            actual = sha256_file(path)
        except OSError as exc:
            return fail(p.CHANGED, f"{path.relative_to(prepared.root)}: {exc.strerror}")
        if actual != digest:
            return fail(p.CHANGED, f"{path.relative_to(prepared.root)} changed since startup")
    try:
        if prepared.repository is not None:
            module = _import_declared(prepared, plan["module"])
        else:
            module = _execute_module(prepared)
        function = getattr(module, plan.get("function", name), None)
        problem = shape_problem(function, plan["call"]) if function else "function is missing"
        if problem:
            return fail(p.CHANGED, f"callable shape changed: {problem}")
        if CallShape.from_ir(plan["call"]).is_async:
            result = asyncio.run(function(*args, **kwargs))  # type: ignore[misc]
        else:
            result = function(*args, **kwargs)  # type: ignore[misc]
    except BaseException:  # the user's code failed, whatever it raised: sanitised
        sys.stderr.write(f"svc-governed: {name}: the call raised\n{traceback.format_exc()}")
        return fail(p.EXCEPTION, "exception (traceback above)")
    if not _finite_json(result):
        return fail(p.NOT_JSON, f"result of type {type(result).__name__} is not finite JSON")
    payload = json.dumps(result, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    data = payload.encode("utf-8")
    if len(data) > prepared.max_output:
        return fail(p.TOO_LARGE, f"result of {len(data)} bytes is over the output limit")
    conn.sendall(p.frame(p.RESULT, data))
    return None


def _worker(conn_fd: int, workdir: str, prepared: Prepared, closing: list[Any]) -> None:
    """In the forked child: own process group, fresh directory, one call, then exit."""
    code = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for item in closing:
            item.close()
        os.setpgid(0, 0)
        os.chdir(workdir)
        # A backstop if the server cannot kill us: the default SIGALRM action terminates.
        signal.setitimer(signal.ITIMER_REAL, prepared.wall_seconds + 1.0)
        with socket.socket(fileno=conn_fd) as conn:
            run_call(conn, prepared)
    except BaseException:  # nothing may escape a forked child
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


# -- template ----------------------------------------------------------------------------------


def _become_subreaper() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: orphans go to init, which reaps them


def serve(root: Path, control: socket.socket) -> None:
    prepared = Prepared(root)
    _become_subreaper()
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    workers: dict[int, str] = {}
    control.sendall(READY)

    def reap() -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            workdir = workers.pop(pid, None)
            if workdir is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)  # leftovers of the call's process group
                shutil.rmtree(workdir, ignore_errors=True)

    try:
        while True:
            for key, _ in selector.select():
                if key.fileobj is wake_r:
                    try:
                        while wake_r.recv(512):
                            pass
                    except BlockingIOError:
                        pass
                    reap()
                    continue
                message, fds, _, _ = socket.recv_fds(control, 16, 4)
                if not message:
                    return  # the server is gone
                for fd in fds:
                    workdir = tempfile.mkdtemp(prefix="svc-call-")
                    pid = os.fork()
                    if pid == 0:
                        _worker(fd, workdir, prepared, [selector, control, wake_r, wake_w])
                    os.close(fd)
                    workers[pid] = workdir
    finally:
        for pid in list(workers):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        reap()
        for workdir in workers.values():
            shutil.rmtree(workdir, ignore_errors=True)


def main(root: Path, control_fd: int) -> None:
    sys.path.insert(0, str(root / "source"))  # sibling modules and parent packages
    control = socket.socket(fileno=control_fd)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            serve(root, control)
    except Exception as exc:
        sys.stderr.write(f"svc-governed: template failed: {type(exc).__name__}: {exc}\n")
        raise SystemExit(2) from None
