"""Acquiring a repository at one commit over HTTPS with the ``git`` command, safely.

Everything happens in a private temporary directory that is removed on every path (errors,
Ctrl-C, SIGTERM, a SIGKILL of the command: ``contracts.watch.private_directory``): a bare
repository with a fresh configuration (no system or global config, no hooks, no credential
helper, no prompt, only the https protocol, no redirects, the grant's CA through
``GIT_SSL_CAINFO``, which overrides whatever the environment sets),
``fetch --depth 1`` of exactly the requested commit, then the tree is listed and the blobs
the repository front end reads (``.py`` files, ``pyproject.toml`` and the data files its
``[tool.svcc] data-files`` declares) are exported with
``cat-file`` into a plain folder: no checkout, so no filters, no LFS smudge, no attributes.
A symlink, a submodule or an LFS pointer anywhere in the subdirectory is refused.
"""

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from attrs import frozen
from svcc.contracts.errors import InputError
from svcc.contracts.watch import private_directory, watched

COMMIT_RE: Final = re.compile(r"[0-9a-f]{40}")
LFS_POINTER: Final = b"version https://git-lfs.github.com/spec/"
TEMP_PREFIX: Final = "svcc-git-"


class GitError(InputError):
    """The repository cannot be acquired as granted; one line, exit 2."""


@frozen(kw_only=True)
class GitLimits:
    """``timeout_s`` bounds the whole acquisition (every git command shares one deadline);
    ``max_fetch_bytes`` bounds what the fetch writes, checked while it runs."""

    timeout_s: float = 120.0
    max_entries: int = 50_000
    max_fetch_bytes: int = 256 * 1024 * 1024
    max_export_bytes: int = 64 * 1024 * 1024


# The limits ``acquire`` applies when given none. Not an option of the command line: the
# specification fixes them; tests replace this value to reach a limit with a small repository.
DEFAULT_LIMITS = GitLimits()
POLL_S: Final = 0.05


@frozen(kw_only=True)
class GitSource:
    url: str
    commit: str
    subdir: str


def check_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for an invalid port
    except ValueError as exc:
        raise GitError(f"--git {url!r}: invalid URL ({exc})") from None
    if parts.scheme != "https":
        raise GitError(f"--git {url!r}: only https:// repositories are accepted")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise GitError(f"--git {url!r}: credentials in the URL are refused")
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise GitError(f"--git {url!r}: a query or fragment in the URL is refused")
    if not parts.hostname:
        raise GitError(f"--git {url!r}: the URL has no host")
    return url


def check_commit(ref: str) -> str:
    if not COMMIT_RE.fullmatch(ref):
        raise GitError(
            f"--ref {ref!r}: expected a full 40-hex commit id (no branch, tag or short id)"
        )
    return ref


def subdir_parts(subdir: str) -> list[str]:
    """``--subdir``'s folders, ``""`` and ``.`` dropped (``./app/`` is ``["app"]``)."""
    return [p for p in subdir.split("/") if p not in ("", ".")]


def check_subdir(subdir: str) -> str:
    parts = subdir_parts(subdir)
    if subdir.startswith("/") or "\\" in subdir or ".." in parts or any(p == ".git" for p in parts):
        raise GitError(f"--subdir {subdir!r}: expected a relative folder inside the repository")
    return subdir


def _environment(home: Path, ca_file: str | None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home),
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS": "",
        "GIT_ALLOW_PROTOCOL": "https",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_LFS_SKIP_SMUDGE": "1",
    }
    if ca_file is not None:
        env["GIT_SSL_CAINFO"] = ca_file  # overrides -c http.sslCAInfo and any inherited value
    return env


_CONFIG: Final = (
    "core.hooksPath=/dev/null",
    "credential.helper=",
    "http.followRedirects=false",
    "protocol.allow=never",
    "protocol.https.allow=always",
    "core.fsmonitor=false",
    "http.sslVerify=true",
    "fetch.recurseSubmodules=false",
)


class _Git:
    def __init__(self, workdir: Path, ca_file: str | None, limits: GitLimits) -> None:
        self.repo = workdir / "repo.git"
        self.env = _environment(workdir / "home", ca_file)
        (workdir / "home").mkdir()
        self.limits = limits
        self.deadline = time.monotonic() + limits.timeout_s

    def _left(self, what: str) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self._late(what)
        return left

    def _late(self, what: str) -> GitError:
        return GitError(f"{what}: over the {self.limits.timeout_s:g} s time limit")

    def command(self, *args: str) -> list[str]:
        command = ["git"]
        for item in _CONFIG:
            command += ["-c", item]
        return [*command, "--git-dir", str(self.repo), *args]

    def run(self, *args: str, stdin: bytes | None = None, what: str) -> bytes:
        try:
            proc = subprocess.run(
                self.command(*args),
                input=stdin,
                capture_output=True,
                env=self.env,
                timeout=self._left(what),
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise self._late(what) from None
        except FileNotFoundError:
            raise GitError("the git command is not installed") from None
        if proc.returncode != 0:
            raise GitError(f"{what}: {_explain(proc.stderr)}")
        return proc.stdout

    def init(self) -> None:
        try:
            subprocess.run(
                ["git", "init", "-q", "--bare", str(self.repo)],
                env=self.env,
                capture_output=True,
                check=True,
                timeout=self._left("creating the repository"),
            )
        except subprocess.TimeoutExpired:
            raise self._late("creating the repository") from None
        except FileNotFoundError:
            raise GitError("the git command is not installed") from None
        except subprocess.CalledProcessError as exc:
            raise GitError(f"creating the repository: {_explain(exc.stderr)}") from None

    def fetch(self, *args: str, what: str) -> None:
        """``git fetch``, watched while it runs: past the deadline, or once the objects it
        has written exceed ``max_fetch_bytes``, it is ended (with anything it started)."""
        limit = self.limits.max_fetch_bytes
        left = self._left(what)
        with tempfile.TemporaryFile(dir=self.repo.parent) as errors:
            try:
                proc = subprocess.Popen(
                    watched(self.command(*args)),  # ends with this process, SIGKILL included
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    env=self.env,
                    start_new_session=True,  # one group: git's helpers end with it
                )
            except FileNotFoundError:
                raise GitError("the git command is not installed") from None
            try:
                while True:
                    try:
                        code = proc.wait(timeout=min(POLL_S, left))
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    if _pack_bytes(self.repo) > limit:
                        raise GitError(f"{what}: over the {limit}-byte limit of a fetch")
                    left = self._left(what)
            finally:
                if proc.returncode is None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            if code != 0:
                errors.seek(0)
                raise GitError(f"{what}: {_explain(errors.read(1 << 16))}")
        if _pack_bytes(self.repo) > limit:
            raise GitError(f"{what}: over the {limit}-byte limit of a fetch")


def _explain(stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    joined = " ".join(lines)
    if (
        "not our ref" in joined
        or "couldn't find remote ref" in joined
        or "upload-pack: not our" in joined
    ):
        return "the commit is not in the repository"
    if "server certificate verification failed" in joined or "SSL certificate problem" in joined:
        return "TLS certificate verification failed (check the grant's ca_file)"
    if "Authentication failed" in joined or "could not read Username" in joined:
        return "the server asks for credentials; only anonymous access is supported"
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (fatal or lines or ["git failed"])[-1]


def _entries(listing: bytes) -> Iterator[tuple[str, str, str, int, str]]:
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, oid, size = meta.decode().split()
        yield (
            mode,
            kind,
            oid,
            (int(size) if size != "-" else 0),
            path.decode("utf-8", "surrogateescape"),
        )


def _wanted(relpath: str, declared: "Callable[[str], bool] | None" = None) -> bool:
    if relpath.endswith(".py") or relpath == "pyproject.toml":
        return True
    return declared is not None and declared(relpath)


def _data_patterns(git: "_Git", listing: bytes, prefix: str) -> tuple[str, ...]:
    """The ``[tool.svcc] data-files`` globs of the exported folder's ``pyproject.toml``, so
    the files they declare are exported too (the tree front end then checks them as it
    checks a local tree's; a broken file is its refusal to make, so none here)."""
    import tomllib

    from svcc.frontends.repository import DataRefused, check_pattern

    wanted = f"{prefix}/pyproject.toml" if prefix else "pyproject.toml"
    for mode, kind, oid, size, path in _entries(listing):
        if path != wanted or kind != "blob" or mode == "120000" or size > 1024 * 1024:
            continue
        try:
            tool = tomllib.loads(git.run("cat-file", "blob", oid, what=path).decode())
            value = tool.get("tool", {}).get("svcc", {}).get("data-files", [])
            if not isinstance(value, list):
                return ()
            return tuple(check_pattern(v) for v in value if isinstance(v, str))
        except (
            UnicodeDecodeError,
            tomllib.TOMLDecodeError,
            RecursionError,
            AttributeError,
            DataRefused,
        ):
            return ()
    return ()


def export(git: _Git, source: GitSource, into: Path, limits: GitLimits) -> int:
    """Write the subdirectory's ``.py`` files, ``pyproject.toml`` and declared data files
    into ``into``;
    returns the number of entries listed. Refuses symlinks, submodules and LFS pointers."""
    prefix = "/".join(subdir_parts(source.subdir))
    if prefix:
        found = git.run("cat-file", "-t", f"{source.commit}:{prefix}", what="--subdir").strip()
        if found != b"tree":
            raise GitError(f"--subdir {source.subdir!r}: not a folder at commit {source.commit}")
    args = ["ls-tree", "-r", "-z", "-l", "--full-tree", source.commit]
    if prefix:
        args += ["--", prefix]
    listing = git.run(*args, what="listing the tree")
    from svcc.frontends.repository import declared_by

    patterns = declared_by(_data_patterns(git, listing, prefix))
    wanted, count = _listed(listing, prefix, patterns, limits)
    total = sum(size for _, _, size in wanted)
    if total > limits.max_export_bytes:
        raise GitError(f"the files to read exceed {limits.max_export_bytes} bytes")
    if wanted:
        _write_blobs(git, wanted, patterns, into)
    return count


def _listed(
    listing: bytes, prefix: str, patterns: "Callable[[str], bool]", limits: GitLimits
) -> tuple[list[tuple[str, str, int]], int]:
    """The blobs to read (``(oid, path below the subdirectory, size)``: the wanted files,
    and every small blob, which is read to refuse an LFS pointer) and how many entries the
    tree lists; a symlink, a submodule or an invalid path is refused."""
    wanted: list[tuple[str, str, int]] = []
    count = 0
    for mode, kind, oid, size, path in _entries(listing):
        count += 1
        if count > limits.max_entries:
            raise GitError(f"the tree has more than {limits.max_entries} entries")
        rel = path[len(prefix) + 1 :] if prefix else path
        if mode == "120000":
            raise GitError(f"{path}: symlinks are refused in a repository")
        if kind == "commit":
            raise GitError(f"{path}: submodules are refused")
        parts = rel.split("/")
        if any(p in ("", ".", "..", ".git") for p in parts):
            raise GitError(f"{path}: invalid path in the tree")
        if _wanted(rel, patterns) or (size < 1024 and kind == "blob"):
            wanted.append((oid, rel, size))
    return wanted, count


def _write_blobs(
    git: _Git, wanted: list[tuple[str, str, int]], patterns: "Callable[[str], bool]", into: Path
) -> None:
    """Read the ``wanted`` blobs in one batch; write the wanted files below ``into``
    (created, never followed or overwritten); an LFS pointer among them is refused."""
    batch = git.run(
        "cat-file",
        "--batch",
        stdin=b"".join(f"{oid}\n".encode() for oid, _, _ in wanted),
        what="reading blobs",
    )
    offset = 0
    for oid, rel, size in wanted:
        header_end = batch.index(b"\n", offset)
        header = batch[offset:header_end].split()
        if header[0].decode() != oid or header[1] != b"blob":
            raise GitError(f"{rel}: unexpected object in the repository")
        data = batch[header_end + 1 : header_end + 1 + size]
        offset = header_end + 1 + size + 1
        if data.startswith(LFS_POINTER):
            raise GitError(f"{rel}: Git LFS pointers are refused (the content is not in git)")
        if not _wanted(rel, patterns):
            continue
        target = into.joinpath(*rel.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)


def _pack_bytes(repo: Path) -> int:
    """Bytes of the objects written so far (files vanish while git renames them)."""
    total = 0
    for current, _dirs, files in os.walk(repo / "objects"):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(current, name)).st_size
    return total


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM during acquisition unwinds like Ctrl-C, so the temporary folder goes too."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def acquire(
    source: GitSource, *, ca_file: str | None, limits: GitLimits | None = None
) -> Iterator[Path]:
    """The exported tree of ``source`` (a folder), valid inside the ``with`` block only."""
    limits = limits or DEFAULT_LIMITS
    check_url(source.url)
    check_commit(source.commit)
    check_subdir(source.subdir)
    if ca_file is not None and not Path(ca_file).is_file():
        raise GitError(f"ca_file {ca_file!r} of the git.fetch grant is not a file")
    with _terminate_as_interrupt(), private_directory(TEMP_PREFIX) as workdir:
        git = _Git(workdir, ca_file, limits)
        git.init()
        git.fetch(
            "fetch",
            "--quiet",
            "--depth",
            "1",
            "--no-tags",
            "--no-recurse-submodules",
            source.url,
            source.commit,
            what=f"fetching {source.url} at {source.commit}",
        )
        resolved = git.run("rev-parse", "--verify", f"{source.commit}^{{commit}}", what="--ref")
        if resolved.decode().strip() != source.commit:
            raise GitError(f"--ref {source.commit}: the server sent another commit")
        export_dir = workdir / "tree"
        export_dir.mkdir()
        export(git, source, export_dir, limits)
        yield export_dir
