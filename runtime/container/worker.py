"""The container worker (``svc.container-worker/v1``): one call, then exit.

Runs inside the runtime image (``python -I -B -m svc_runtime.container.worker``) as uid
65532 with a read-only root, no network and the bundle's ``source/`` mounted read-only at
``/opt/svc/source``. The image holds this module with the one it shares with the server
(``svc_runtime/wire.py``: frames, error kinds, strict JSON), copied byte for byte.

It prints nothing before it has read its request (a pre-started container waits here on
stdin), keeps the reply channel (the original stdout) to itself and sends the user's prints
to stderr. Before anything of the bundle runs, it reads and verifies every declared source
file (the request names them with their digests: the module, its packages, any other file
under ``source/``); one missing or changed is a ``bundle-changed`` error and nothing is
imported. The declared modules are then imported from the bytes just verified (never read
again), the function is called and one framed reply is written.

Start-up is on every call's path, so the worker imports only what the request needs
(``asyncio`` for a coroutine, ``traceback`` for a failure; no ``typing``) and the image carries
precompiled bytecode for the standard library, the dependencies and the worker.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from importlib.machinery import ModuleSpec

from .. import wire

TYPE_CHECKING = False
if TYPE_CHECKING:  # not at run time: typing and importlib.abc cost the worker ~10 ms
    from collections.abc import Mapping, Sequence
    from importlib.abc import Loader
    from types import ModuleType
    from typing import Any
else:
    Loader = object

SOURCE_ROOT = "/opt/svc"


class _VerifiedSource(Loader):
    """Imports the declared modules from the bytes that were verified, not from the disk
    (a meta path finder and its loader)."""

    def __init__(self, modules: Mapping[str, tuple[str, bytes]]) -> None:
        self.modules = modules  # dotted name -> (path, verified bytes)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,  # noqa: ARG002 -- the finder protocol
        target: ModuleType | None = None,  # noqa: ARG002
    ) -> ModuleSpec | None:
        found = self.modules.get(fullname)
        if found is None:
            return None
        file = found[0]
        is_package = os.path.basename(file) == "__init__.py"
        spec = ModuleSpec(fullname, self, origin=file, is_package=is_package)
        spec.has_location = True  # sets __file__
        if is_package:
            spec.submodule_search_locations = [os.path.dirname(file)]
        return spec

    def create_module(self, spec: ModuleSpec) -> None:  # noqa: ARG002 -- default creation
        return None

    def exec_module(self, module: ModuleType) -> None:
        file, data = self.modules[module.__name__]
        exec(compile(data, file, "exec", dont_inherit=True), module.__dict__)


def _module_name(relpath: str) -> str | None:
    """``source/a/b.py`` -> ``a.b``; ``source/a/__init__.py`` -> ``a``; others None."""
    parts = relpath.split("/")[1:]
    if not parts or not parts[-1].endswith(".py"):
        return None
    parts[-1] = parts[-1].removesuffix(".py")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None


def verify_sources(files: Mapping[str, str]) -> tuple[dict[str, tuple[str, bytes]], str | None]:
    """Every declared file read and checked; ``(modules, None)`` or ``({}, problem)``."""
    modules: dict[str, tuple[str, bytes]] = {}
    for relpath, digest in sorted(files.items()):
        parts = relpath.split("/")
        if parts[0] != "source" or any(p in ("", ".", "..") for p in parts):
            return {}, f"{relpath}: not a path under source/"
        path = os.path.join(SOURCE_ROOT, *parts)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            return {}, f"{relpath}: {exc.strerror or exc}"
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            return {}, f"{relpath} changed since startup"
        name = _module_name(relpath)
        if name is not None:
            modules[name] = (path, data)
    return modules, None


def _run(request: Mapping[str, Any]) -> tuple[bytes, bytes]:
    name = request["name"]

    def fail(kind: str, detail: str) -> tuple[bytes, bytes]:
        sys.stderr.write(f"svc-worker: {name}: {detail}\n")
        return wire.ERROR, kind.encode()

    modules, problem = verify_sources(request["files"])
    if problem is not None:
        return fail(wire.CHANGED, problem)
    if request["module"] not in modules:
        return fail(wire.CHANGED, f"module {request['module']} is not a declared source file")
    sys.meta_path.insert(0, _VerifiedSource(modules))
    sys.path.insert(0, os.path.join(SOURCE_ROOT, "source"))
    try:
        __import__(request["module"])
        module = sys.modules[request["module"]]
        if "." in name:  # a service method: its class built in this fresh container
            from .. import services

            function = services.attribute_of(module, name)
        else:
            function = getattr(module, name)
        if request["is_async"]:
            import asyncio

            result = asyncio.run(function(*request["args"], **request["kwargs"]))
        else:
            result = function(*request["args"], **request["kwargs"])
    except BaseException:  # the user's code failed, whatever it raised: sanitised
        import traceback

        return fail(wire.EXCEPTION, f"the call raised\n{traceback.format_exc()}")
    try:
        return wire.RESULT, wire.encode_result(result, request["max_output"])
    except wire.ResultError as exc:
        return fail(exc.kind, str(exc))


def main() -> None:
    reply = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # the user's prints go to stderr, never into the reply channel
    sys.stdout = sys.stderr
    read = sys.stdin.buffer.read
    kind, size = wire.HEADER.unpack(wire.read_exact(read, wire.HEADER.size))
    if kind != wire.REQUEST:
        raise SystemExit(2)
    request = pickle.loads(wire.read_exact(read, size))
    out_kind, payload = _run(request)
    reply.write(wire.frame(out_kind, payload))
    reply.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
