"""The only code that touches an output directory.

Rules (DESIGN §6, generate rule 1): the output directory must be new or empty; a symlink
anywhere on its path, or an existing file, is refused; there is no force option. The
tree is written through directory file descriptors (``O_NOFOLLOW``, ``O_EXCL``) into a
temporary sibling, then renamed into place in one step, so a refused or failed write
leaves nothing behind, and of two concurrent writers exactly one wins.

The staging sibling (``.NAME.svcc-<random>``) is held under an exclusive ``flock`` for the
life of the write. SIGTERM and SIGINT during a write remove it before the process ends
(the signal is then delivered as it would have been), and a later write to the same
output sweeps staging trees nobody holds any more: those of writers killed with SIGKILL
or by a power cut.
"""

import contextlib
import errno
import fcntl
import os
import re
import secrets
import shutil
import signal
import stat
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import FrameType

from svcc.contracts.errors import OutputError
from svcc.contracts.target import FileTree

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def _require_host_support() -> None:
    if (
        not hasattr(os, "O_NOFOLLOW")
        or not hasattr(os, "O_DIRECTORY")
        or os.open not in os.supports_dir_fd
        or os.mkdir not in os.supports_dir_fd
        or os.rename not in os.supports_dir_fd
    ):
        raise OutputError(
            "this host lacks directory-descriptor/no-follow file facilities; "
            "svcc refuses to write output here"
        )


# A staging tree untouched for this long and not locked by its writer is stale.
STALE_AFTER_SECONDS = 10.0


def _components(path: Path) -> list[str]:
    """Absolute path components with ``.``/``..`` folded. Folding ``..`` lexically equals
    the kernel's reading because every component walked is checked not to be a symlink,
    and a component that ``..`` steps out of is checked here (``link/../x`` is refused:
    the kernel would have followed ``link`` first)."""
    absolute = path if path.is_absolute() else Path(os.getcwd()) / path
    parts: list[str] = []
    for part in absolute.parts[1:]:
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                if os.path.islink("/" + "/".join(parts)):
                    raise OutputError(
                        f"{path}: /{'/'.join(parts)} is a symlink; refusing to write through it"
                    )
                parts.pop()
            continue
        parts.append(part)
    if not parts:
        raise OutputError("refusing to write to the file-system root")
    return parts


def _describe(err: OSError) -> str:
    return os.strerror(err.errno) if err.errno else str(err)


class _Transaction:
    def __init__(self, output: Path) -> None:
        self.output = output
        self.created_parents: list[tuple[int, str]] = []  # (parent fd, name) in creation order
        self.fds: list[int] = []

    def _open_dir(self, name: str, parent: int) -> int:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        self.fds.append(fd)
        return fd

    def open_parent(self, parts: list[str]) -> int:
        """Walk to the output's parent, refusing symlinks and creating missing directories."""
        fd = os.open("/", _DIR_FLAGS)
        self.fds.append(fd)
        walked = "/"
        for name in parts[:-1]:
            walked = os.path.join(walked, name)
            try:
                fd = self._open_dir(name, fd)
                continue
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise OutputError(
                        f"{self.output}: {walked} is a symlink or not a "
                        "directory; refusing to write through it"
                    ) from None
                raise OutputError(
                    f"{self.output}: cannot open {walked}: {_describe(exc)}"
                ) from None
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except OSError as exc:
                raise OutputError(
                    f"{self.output}: cannot create {walked}: {_describe(exc)}"
                ) from None
            self.created_parents.append((fd, name))
            fd = self._open_dir(name, fd)
        return fd

    def check_target(self, parent: int, name: str) -> os.stat_result | None:
        """Refuse anything but a missing or empty directory; the latter's status."""
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise OutputError(
                    f"{self.output}: exists and is a symlink or a file; output "
                    "must go to a new or empty directory"
                ) from None
            raise OutputError(f"{self.output}: {_describe(exc)}") from None
        try:
            if os.listdir(fd):
                raise OutputError(
                    f"{self.output}: directory is not empty; output must go to a "
                    "new or empty directory (there is no force option)"
                )
            return os.fstat(fd)
        finally:
            os.close(fd)

    def write(self, tree: FileTree) -> Path:
        parts = _components(self.output)
        name = parts[-1]
        parent = self.open_parent(parts)
        existing = self.check_target(parent, name)
        _sweep_stale(parent, name)
        temp = f".{name}.svcc-{secrets.token_hex(6)}"
        try:
            with _cleanup_on_signals():
                try:
                    os.mkdir(temp, 0o755, dir_fd=parent)
                except OSError as exc:
                    self._remove_created_parents()
                    raise OutputError(
                        f"{self.output}: cannot write in {Path('/', *parts[:-1])}: "
                        f"{_describe(exc)}; nothing written"
                    ) from None
                try:
                    root = self._open_dir(temp, parent)
                    fcntl.flock(root, fcntl.LOCK_EX | fcntl.LOCK_NB)  # "a writer is alive"
                    self._write_files(root, tree)
                    if existing is not None:
                        _keep_identity(root, existing)
                    self._rename(temp, name, parent)
                except BaseException as exc:
                    with _signals_blocked():
                        shutil.rmtree(temp, dir_fd=parent, ignore_errors=True)
                        self._remove_created_parents()
                    if isinstance(exc, OSError) and not isinstance(exc, OutputError):
                        raise OutputError(
                            f"{self.output}: write failed: {_describe(exc)}; nothing written"
                        ) from None
                    raise
        except _Signalled as exc:
            exc.deliver()
            raise  # only when the restored handler returned (it normally ends the process)
        return Path("/", *parts)

    def _rename(self, temp: str, name: str, parent: int) -> None:
        try:
            os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                raise OutputError(
                    f"{self.output}: appeared or filled while writing (another "
                    "writer?); nothing written"
                ) from None
            raise

    def _write_files(self, root: int, tree: FileTree) -> None:
        dirs: dict[str, int] = {"": root}
        for path, data in tree:
            head, _, filename = path.rpartition("/")
            fd = self._ensure_dir(dirs, head)
            out = os.open(filename, _FILE_FLAGS, 0o644, dir_fd=fd)
            try:
                view = memoryview(data)
                while view:
                    written = os.write(out, view)
                    view = view[written:]
            finally:
                os.close(out)

    def _ensure_dir(self, dirs: dict[str, int], path: str) -> int:
        if path in dirs:
            return dirs[path]
        head, _, name = path.rpartition("/")
        parent = self._ensure_dir(dirs, head)
        os.mkdir(name, 0o755, dir_fd=parent)
        dirs[path] = self._open_dir(name, parent)
        return dirs[path]

    def _remove_created_parents(self) -> None:
        for fd, name in reversed(self.created_parents):
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError:
                break

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _keep_identity(root: int, existing: os.stat_result) -> None:
    """The tree replaces an existing empty directory: keep its mode (and owner, when we
    may), so ``0700`` stays ``0700``."""
    os.fchmod(root, stat.S_IMODE(existing.st_mode))
    st = os.fstat(root)
    if (st.st_uid, st.st_gid) != (existing.st_uid, existing.st_gid):
        with contextlib.suppress(PermissionError):
            os.fchown(root, existing.st_uid, existing.st_gid)


def _staging_pattern(name: str) -> "re.Pattern[str]":
    return re.compile(re.escape(f".{name}.svcc-") + r"[0-9a-f]{12}")


def _sweep_stale(parent: int, name: str) -> None:
    """Remove staging trees of ``name`` left by dead writers: unlocked and not recent.
    Best effort: a tree we cannot remove stays for the next writer."""
    pattern = _staging_pattern(name)
    try:
        entries = [e.name for e in os.scandir(parent) if pattern.fullmatch(e.name)]
    except OSError:
        return
    now = time.time()
    for entry in entries:
        try:
            fd = os.open(entry, _DIR_FLAGS, dir_fd=parent)
        except OSError:
            continue
        try:
            if now - os.fstat(fd).st_mtime < STALE_AFTER_SECONDS:
                continue  # a writer may be between mkdir and flock
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its writer is alive
            shutil.rmtree(entry, dir_fd=parent, ignore_errors=True)
        finally:
            os.close(fd)


class _Signalled(BaseException):
    """SIGTERM arrived during a write: unwind (removing the staging tree), then deliver."""

    def __init__(self, signum: int, previous: object) -> None:
        super().__init__(signum)
        self.signum = signum
        self.previous = previous

    def deliver(self) -> None:
        signal.signal(self.signum, self.previous)  # type: ignore[arg-type]
        if self.previous == signal.SIG_DFL:
            signal.raise_signal(self.signum)
        elif callable(self.previous):
            self.previous(self.signum, None)


@contextlib.contextmanager
def _cleanup_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM unwinds it (SIGINT already does: KeyboardInterrupt).
    Only from the main thread and only over the default action: a host application's own
    handler (a server's graceful shutdown) is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous != signal.SIG_DFL:
        yield
        return

    def handler(signum: int, _: FrameType | None) -> None:
        raise _Signalled(signum, previous)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            if signal.getsignal(signal.SIGTERM) is handler:
                signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _signals_blocked() -> Iterator[None]:
    """Clean-up runs to the end: a second SIGTERM/SIGINT waits until it is done."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGTERM, signal.SIGINT}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def write_tree(tree: FileTree, output_dir: str | Path) -> Path:
    """Write ``tree`` to ``output_dir`` all at once or not at all; return the absolute path."""
    _require_host_support()
    transaction = _Transaction(Path(output_dir))
    try:
        return transaction.write(tree)
    finally:
        transaction.close()


# -- single files into a directory (the analysis service's ``process_file``/``generate_*``) --


class TargetExists(OutputError):
    """A file to write exists and the caller did not ask to replace it."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


_NAME_MAX = 255


def _check_flat_name(name: str) -> None:
    if (
        not name
        or name in (".", "..")
        or "/" in name
        or "\0" in name
        or len(os.fsencode(name)) > _NAME_MAX
    ):
        raise OutputError(f"{name!r}: not a valid file name")


def write_files(
    directory: str | Path, files: Mapping[str, bytes], *, overwrite: bool = False
) -> list[Path]:
    """Write ``files`` (flat names → bytes) into ``directory``, created if missing; return
    the absolute paths in the order given.

    Unlike :func:`write_tree` the directory may hold other files: this is for tools that
    add files to a project. The same descriptor discipline applies: every directory on the
    way is opened with ``O_NOFOLLOW`` (a symlink anywhere is refused), each file is written
    to an ``O_EXCL`` temporary beside its target and moved into place relative to the
    directory's descriptor, so a path swapped for a symlink between a check and the write
    is never followed. Without ``overwrite`` the file is linked into place, which fails if
    the name appeared meanwhile (:class:`TargetExists`); with it, only a regular file is
    replaced. Every target is checked before anything is written; a failure removes what
    this call created (a file already replaced with ``overwrite`` stays replaced)."""
    _require_host_support()
    for name in files:
        _check_flat_name(name)
    parts = _components(Path(directory))
    transaction = _Transaction(Path(directory))
    temporaries: list[str] = []
    linked: list[str] = []
    fd = -1
    try:
        fd = transaction.open_parent([*parts, ""])
        for name in files:
            _check_replaceable(fd, name, overwrite, Path("/", *parts))
        for name, data in files.items():
            temp = f".{name[: _NAME_MAX - 32]}.svcc-{secrets.token_hex(6)}"
            out = os.open(temp, _FILE_FLAGS, 0o644, dir_fd=fd)
            temporaries.append(temp)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view) :]
            finally:
                os.close(out)
        for temp, name in zip(temporaries, files, strict=True):
            if overwrite:
                os.rename(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
            else:
                try:
                    os.link(temp, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
                except FileExistsError:
                    raise TargetExists(
                        Path("/", *parts, name), "appeared while writing; nothing written"
                    ) from None
                linked.append(name)
                os.unlink(temp, dir_fd=fd)
    except BaseException as exc:
        if fd >= 0:
            for name in [*temporaries, *linked]:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=fd)
        transaction._remove_created_parents()
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(
                f"{Path('/', *parts)}: write failed: {_describe(exc)}; nothing written"
            ) from None
        raise
    finally:
        transaction.close()
    return [Path("/", *parts, name) for name in files]


def _check_replaceable(parent: int, name: str, overwrite: bool, where: Path) -> None:
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"{where / name}: {_describe(exc)}") from None
    if not stat.S_ISREG(info.st_mode):
        raise OutputError(
            f"{where / name}: exists and is not a regular file; refusing to replace it"
        )
    if not overwrite:
        raise TargetExists(where / name, "exists; refusing to replace it")
