"""A wheel's METADATA headers, read from the archive (never installed), bounded."""

import email.parser
import hashlib
import zipfile
from email.message import Message
from pathlib import Path
from typing import Final

from svcc.images.errors import ImageInputError

MAX_METADATA_HEADERS: Final = 64 * 1024


def metadata_headers(archive: zipfile.ZipFile, label: str, code: str) -> Message:
    """The headers of the one ``*.dist-info/METADATA`` at the top of ``archive``; refused
    with ``code`` when there is not exactly one or its headers are over 64 KiB."""
    names = [
        n for n in archive.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
    ]
    if len(names) != 1:
        raise ImageInputError(code, f"{label}: not exactly one .dist-info/METADATA")
    with archive.open(names[0]) as handle:
        data = handle.read(MAX_METADATA_HEADERS + 2)
    head, blank, _ = data.partition(b"\n\n")
    if len(head) > MAX_METADATA_HEADERS or (not blank and len(data) > MAX_METADATA_HEADERS):
        raise ImageInputError(code, f"{label}: metadata headers over {MAX_METADATA_HEADERS} bytes")
    return email.parser.BytesHeaderParser().parsebytes(head)


def sha256_of(path: Path) -> str:
    """The hex SHA-256 of a file (a wheel), read in blocks: the one file digest of the image
    and extension code."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
