"""The small text files ``svcc lock`` reads from a project or a bundle (pin files, a bundle's
requirement files): the project's, so read as hostile input.

Each is read bounded and without waiting (a named pipe is refused, not read until a writer
comes; a file over the bound is refused, never read in part) and decoded as UTF-8; any
problem is one ``request_invalid`` line naming the file (exit 2), never a crash.
"""

from pathlib import Path

from svcc.contracts.errors import InputError
from svcc.frontends.source_files import read_source_file
from svcc.images.errors import ImageInputError


def read_input_bytes(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them."""
    if path.is_dir():
        raise ImageInputError("request_invalid", f"{path}: a folder, not a file")
    try:
        return read_source_file(path, limit)
    except InputError as exc:
        raise ImageInputError("request_invalid", str(exc)) from None


def read_input_text(path: Path, limit: int) -> str:
    """:func:`read_input_bytes`, as UTF-8 text."""
    data = read_input_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImageInputError("request_invalid", f"{path}: not UTF-8 (byte {exc.start})") from None
