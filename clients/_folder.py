"""Careful file operations inside an existing export folder (``sync`` only).

Every path is walked from the folder's descriptor with ``O_NOFOLLOW``: a symlink, a
directory or a device where a collection file should be is reported, never followed.
Each file is replaced atomically (written to a temporary sibling, then renamed), so a
reader sees the old bytes or the new ones, never a mix.
"""

import contextlib
import errno
import fcntl
import os
import secrets
import stat
from pathlib import Path
from typing import Final

from svcc.contracts.errors import OutputError

_DIR: Final = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_READ: Final = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_WRITE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)

MISSING: Final = "missing"
NOT_A_FILE: Final = "not a regular file"


class Folder:
    """The export folder, opened once; paths are relative POSIX paths inside it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            self.fd = os.open(root, _DIR)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise OutputError(f"{root}: is a symlink or not a directory") from None
            raise OutputError(f"{root}: {os.strerror(exc.errno or 0)}") from None
        self._dirs: dict[str, int] = {"": self.fd}
        try:  # one sync at a time per folder (released when the descriptor closes)
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.fd)
            raise OutputError(f"{root}: another sync is running on this folder") from None

    def close(self) -> None:
        for fd in self._dirs.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._dirs = {}

    def _dir(self, path: str, *, create: bool) -> int | None:
        if path in self._dirs:
            return self._dirs[path]
        head, _, name = path.rpartition("/")
        parent = self._dir(head, create=create)
        if parent is None:
            return None
        try:
            fd = os.open(name, _DIR, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(name, 0o755, dir_fd=parent)
            fd = os.open(name, _DIR, dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise OutputError(
                    f"{self.root / path}: is a symlink or not a directory; not written through"
                ) from None
            raise
        self._dirs[path] = fd
        return fd

    def read(self, path: str, limit: int) -> bytes | str:
        """The file's bytes, or :data:`MISSING` / :data:`NOT_A_FILE`."""
        head, _, name = path.rpartition("/")
        try:
            parent = self._dir(head, create=False)
        except OutputError:
            return NOT_A_FILE
        if parent is None:
            return MISSING
        try:
            fd = os.open(name, _READ, dir_fd=parent)
        except FileNotFoundError:
            return MISSING
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
                return NOT_A_FILE
            raise OutputError(f"{self.root / path}: {os.strerror(exc.errno or 0)}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return NOT_A_FILE
            chunks = []
            size = 0
            while chunk := os.read(fd, 1 << 20):
                size += len(chunk)
                if size > limit:
                    return NOT_A_FILE  # not something svcc wrote
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def write(self, path: str, data: bytes) -> None:
        head, _, name = path.rpartition("/")
        parent = self._dir(head, create=True)
        assert parent is not None
        temp = f".{name}.svcc-{secrets.token_hex(6)}"
        fd = os.open(temp, _WRITE, 0o644, dir_fd=parent)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise

    def remove(self, path: str) -> None:
        """Remove a file, then its parent folders that became empty (never the root)."""
        head, _, name = path.rpartition("/")
        parent = self._dir(head, create=False)
        if parent is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=parent)
        while head:
            up, _, leaf = head.rpartition("/")
            upper = self._dir(up, create=False)
            if upper is None:
                return
            try:
                os.rmdir(leaf, dir_fd=upper)
            except OSError:
                return
            with contextlib.suppress(OSError):
                os.close(self._dirs.pop(head))
            head = up
