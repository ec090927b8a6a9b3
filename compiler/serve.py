"""``svcc serve BUNDLE``: run a generated bundle in its own, cached environment.

The bundle's ``requirements.txt`` (and ``application-requirements.txt`` when present) are
installed into a virtual environment outside the bundle, under the cache directory, keyed
by the digest of those files and the interpreter version, so a second ``serve`` of the same
requirements starts at once. Environments are built under a lock and marked complete only
after pip succeeds; a failed or interrupted build is discarded, never reused. The server
then replaces this process (``exec``), so signals reach it directly.
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

from attrs import frozen
from svcc.compiler.errors import InputError

MANIFESTS: Final = {"svc-rest.json": "rest", "svc-mcp.json": "mcp"}
READY_MARKER: Final = ".svcc-ready"


@frozen(kw_only=True)
class Bundle:
    path: Path
    interface: str
    requirements: tuple[Path, ...]


def open_bundle(path: str | Path) -> Bundle:
    root = Path(path)
    if not root.is_dir():
        raise InputError(f"{root}: not a directory (expected a bundle written by svcc)")
    found = [kind for name, kind in MANIFESTS.items() if (root / name).is_file()]
    if not found:
        known = ", ".join(MANIFESTS)
        raise InputError(f"{root}: not a svcc bundle (no {known})")
    requirements = tuple(
        root / name
        for name in ("requirements.txt", "application-requirements.txt")
        if (root / name).is_file()
    )
    if not requirements:
        raise InputError(f"{root}: the bundle has no requirements.txt")
    return Bundle(path=root.resolve(), interface=found[0], requirements=requirements)


def default_cache_dir() -> Path:
    explicit = os.environ.get("SVCC_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "svcc"


def environment_key(bundle: Bundle) -> str:
    """The interpreter and the set of requirement lines installed (whichever file holds
    them, in any order): bundles that install the same things share one environment."""
    digest = hashlib.sha256()
    digest.update(f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}".encode())
    lines = set()
    for path in bundle.requirements:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            text = line.strip()
            if text and not text.startswith("#"):
                lines.add(text)
    for text in sorted(lines):
        digest.update(b"\0" + text.encode())
    return digest.hexdigest()[:32]


def _run(command: list[str], what: str) -> None:
    try:
        code = subprocess.call(command, stdout=sys.stderr)
    except OSError as exc:
        raise InputError(f"{what} failed: {exc.strerror or exc}") from None
    if code != 0:
        raise InputError(f"{what} failed (exit {code}); see the output above")


def ensure_environment(bundle: Bundle, cache_dir: Path) -> Path:
    """The interpreter of a complete environment for ``bundle`` (built if needed)."""
    envs = cache_dir / "envs"
    try:
        envs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{envs}: cannot create the cache directory: {exc.strerror}") from None
    key = environment_key(bundle)
    env = envs / key
    python = env / "bin" / "python"
    with open(envs / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (env / READY_MARKER).is_file():
            return python
        shutil.rmtree(env, ignore_errors=True)  # an earlier build that did not finish
        sys.stderr.write(f"svcc: installing the bundle's requirements into {env}\n")
        try:
            _run([sys.executable, "-m", "venv", str(env)], "creating the environment")
            install = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
            for path in bundle.requirements:
                install += ["-r", str(path)]
            _run(install, "installing the bundle's requirements")
        except BaseException:
            shutil.rmtree(env, ignore_errors=True)
            raise
        (env / READY_MARKER).write_text(key + "\n")
    return python


def server_command(bundle: Bundle, python: Path, host: str, port: int) -> list[str]:
    """REST: uvicorn on ``host:port``; MCP: ``server.py`` speaking MCP on stdin/stdout."""
    if bundle.interface == "mcp":
        return [str(python), "server.py"]
    return [str(python), "-m", "uvicorn", "app:app", "--host", host, "--port", str(port)]


def serve(path: str | Path, *, host: str, port: int, cache_dir: Path | None = None) -> None:
    """Install (or reuse) the environment, then become the server. Does not return."""
    bundle = open_bundle(path)
    if not 0 < port < 65536:
        raise InputError(f"--port {port}: expected 1-65535")
    python = ensure_environment(bundle, cache_dir or default_cache_dir())
    command = server_command(bundle, python, host, port)
    os.chdir(bundle.path)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)
