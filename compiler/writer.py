"""The only code that touches an output directory.

Rules (DESIGN §6, generate rule 1): the output directory must be new or empty; a symlink
anywhere on its path, or an existing file, is refused; there is no force option. The
tree is written through directory file descriptors (``O_NOFOLLOW``, ``O_EXCL``) into a
temporary sibling, then renamed into place in one step, so a refused or failed write
leaves nothing behind, and of two concurrent writers exactly one wins.
"""

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

from svcc.compiler.errors import OutputError
from svcc.compiler.target import FileTree

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


def _components(path: Path) -> list[str]:
    """Absolute path components with ``.``/``..`` folded. Folding ``..`` lexically equals
    the kernel's reading because every component walked is checked not to be a symlink."""
    absolute = path if path.is_absolute() else Path(os.getcwd()) / path
    parts: list[str] = []
    for part in absolute.parts[1:]:
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
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

    def check_target(self, parent: int, name: str) -> None:
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            return
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
        finally:
            os.close(fd)

    def write(self, tree: FileTree) -> Path:
        parts = _components(self.output)
        name = parts[-1]
        parent = self.open_parent(parts)
        self.check_target(parent, name)
        temp = f".{name}.svcc-{secrets.token_hex(6)}"
        os.mkdir(temp, 0o755, dir_fd=parent)
        try:
            root = self._open_dir(temp, parent)
            self._write_files(root, tree)
            try:
                os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                    raise OutputError(
                        f"{self.output}: appeared or filled while writing (another "
                        "writer?); nothing written"
                    ) from None
                raise
        except BaseException as exc:
            shutil.rmtree(temp, dir_fd=parent, ignore_errors=True)
            self._remove_created_parents()
            if isinstance(exc, OSError) and not isinstance(exc, OutputError):
                raise OutputError(
                    f"{self.output}: write failed: {_describe(exc)}; nothing written"
                ) from None
            raise
        return Path("/", *parts)

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
