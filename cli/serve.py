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
import sys
from pathlib import Path
from typing import Final

from attrs import frozen
from svcc.contracts.errors import InputError, SvccError
from svcc.contracts.target import BundleSpec
from svcc.contracts.watch import private_directory

READY_MARKER: Final = ".svcc-ready"


@frozen(kw_only=True)
class Bundle:
    path: Path
    target: str
    spec: BundleSpec
    requirements: tuple[Path, ...]


def _bundle_kinds() -> tuple[dict[str, BundleSpec], list[str]]:
    """Every installed servable target's bundle, and the targets that failed to load (a
    broken plug-in must not stop another target's bundle from being served)."""
    from svcc.compiler.registry import discover

    kinds: dict[str, BundleSpec] = {}
    broken: list[str] = []
    for name, entry in discover().items():
        try:
            spec = entry.load_class().bundle
        except SvccError:
            broken.append(name)
            continue
        if spec is not None:
            kinds[name] = spec
    return kinds, broken


def open_bundle(path: str | Path) -> Bundle:
    root = Path(path)
    if not root.is_dir():
        raise InputError(f"{root}: not a directory (expected a bundle written by svcc)")
    kinds, broken = _bundle_kinds()
    found = [(name, spec) for name, spec in kinds.items() if (root / spec.manifest).is_file()]
    if not found:
        known = ", ".join(sorted(spec.manifest for spec in kinds.values()))
        unloaded = f"; targets that failed to load: {', '.join(broken)}" if broken else ""
        raise InputError(f"{root}: not a svcc bundle (no {known}){unloaded}")
    if len(found) > 1:
        names = ", ".join(spec.manifest for _, spec in found)
        raise InputError(f"{root}: more than one bundle manifest ({names})")
    requirements = tuple(
        root / name
        for name in ("requirements.txt", "application-requirements.txt")
        if (root / name).is_file()
    )
    if not requirements:
        raise InputError(f"{root}: the bundle has no requirements.txt")
    target, spec = found[0]
    return Bundle(path=root.resolve(), target=target, spec=spec, requirements=requirements)


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


def _run(command: list[str], what: str, tmp: Path) -> None:
    """Run an installation step; it ends with this process however this process ends, with
    all it started (a ``svcc serve`` stopped with SIGTERM left pip installing into the cache,
    racing the next build of the same environment; one stopped while pip built a
    requirement left the build backend, pip's child, running), and its temporary folders
    are under ``tmp``, which goes with this process (pip's own stayed in ``/tmp``)."""
    from svcc.contracts.watch import call_watched

    try:
        code = call_watched(command, env={**os.environ, "TMPDIR": str(tmp)}, stdout=sys.stderr)
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
            os.utime(env / READY_MARKER)  # last used: what `svcc cache prune` goes by
            return python
        shutil.rmtree(env, ignore_errors=True)  # an earlier build that did not finish
        sys.stderr.write(f"svcc: installing the bundle's requirements into {env}\n")
        try:
            with private_directory("svcc-serve-") as tmp:  # pip's and ensurepip's folders
                _run([sys.executable, "-m", "venv", str(env)], "creating the environment", tmp)
                # pip's own progress goes to stderr: a first serve downloads for tens of seconds
                install = [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
                for path in bundle.requirements:
                    install += ["-r", str(path)]
                _run(install, "installing the bundle's requirements", tmp)
        except BaseException:
            shutil.rmtree(env, ignore_errors=True)
            raise
        (env / READY_MARKER).write_text(key + "\n")
    return python


def check_port_free(host: str, port: int, option: str = "--port") -> None:
    """Refuse a port another process holds before minutes are spent on an environment.

    The server binds it again a moment later; this check only turns the common mistake
    (a server already running) into an input error naming the port (and ``option``, the
    one that chooses it: ``svcc serve-analysis`` takes ``--bind``).
    """
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InputError(f"host {host!r}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise InputError(
                f"port {port} on {host} is not available ({exc.strerror}); "
                f"stop what holds it or choose another with {option}"
            ) from None


def transport_arguments(
    bundle: Bundle, transport: str | None, host: str, port: int, allowed_hosts: str | None
) -> tuple[bool, list[str]]:
    """``(listens, extra arguments)``: a bundle that speaks stdio (MCP) keeps to it unless
    ``--transport`` names one of its declared ``http_transports`` (MCP: streamable HTTP at
    ``/mcp`` on ``--host``/``--port``, DESIGN §13); a bundle that already listens (REST)
    takes no transport."""
    listens = bundle.spec.listens
    if transport is None or (transport == "stdio" and not listens):
        if allowed_hosts is not None:
            raise InputError("--allowed-hosts: only with --transport streamable-http")
        return listens, []
    if listens or transport not in bundle.spec.http_transports:
        raise InputError(
            f"--transport: the {bundle.target} bundle serves HTTP on --host/--port already; "
            "--transport is for MCP bundles"
            if listens
            else f"--transport {transport}: the {bundle.target} bundle speaks stdio only"
        )
    extra = ["--transport", transport, "--host", host, "--port", str(port)]
    if allowed_hosts is not None:
        extra += ["--allowed-hosts", allowed_hosts]
    return True, extra


def prepare(path: str | Path, cache_dir: Path | None = None) -> Path:
    """``svcc serve BUNDLE --prepare``: build (or find) the bundle's environment and return
    it, without serving: an MCP client that starts the server itself then never waits on
    ``initialize`` while pip installs."""
    bundle = open_bundle(path)
    return ensure_environment(bundle, cache_dir or default_cache_dir()).parent.parent


def serve(
    path: str | Path,
    *,
    host: str,
    port: int,
    cache_dir: Path | None = None,
    transport: str | None = None,
    allowed_hosts: str | None = None,
) -> None:
    """Install (or reuse) the environment, then become the server. Does not return."""
    bundle = open_bundle(path)
    if not 0 < port < 65536:
        raise InputError(f"--port {port}: expected 1-65535")
    listens, extra = transport_arguments(bundle, transport, host, port, allowed_hosts)
    if listens:
        check_port_free(host, port)
    python = ensure_environment(bundle, cache_dir or default_cache_dir())
    if listens:
        check_port_free(host, port)  # again: the install may have taken minutes
    command = [*bundle.spec.serve_command(str(python), host, port), *extra]
    os.chdir(bundle.path)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)
