"""Reading one source file from disk, bounded and without waiting.

A path named on the command line (or reached through a local import) may be anything: a
symlink to ``/dev/zero``, a named pipe nobody writes to, a directory, a huge file. The
file is opened non-blocking (opening a FIFO never waits for a writer), checked to be a
regular file on the open descriptor (no race between the check and the read), and read
up to a byte limit.
"""

import os
import stat
from typing import Final

from svcc.contracts.errors import InputError

MAX_SOURCE_BYTES: Final = 16 * 1024 * 1024


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_source_file(path: "str | os.PathLike[str]", limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is an
    :class:`InputError` with a one-line reason naming ``path``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise InputError(
            f"{path}: is a directory (inspect accepts directories; compile needs one file)"
        ) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(
                f"{path}: is a directory (inspect accepts directories; compile needs one file)"
            )
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{path}: is {_kind(info.st_mode)}; expected a regular file")
        if info.st_size > limit:
            raise InputError(f"{path}: {info.st_size} bytes is over the {limit}-byte limit")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while being read
                raise InputError(f"{path}: over the {limit}-byte limit")
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
