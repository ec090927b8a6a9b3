"""``svc plugins run --log-file PATH``: the engine's output of one build or push, kept for the
person who asked and for no one else.

The file is created new (``O_EXCL``: an existing path, or a symlink, is refused and never
overwritten) with mode 0600, after the grant is checked and before the extension starts. What
goes in is the extension's stderr: the engine client's bounded output, already stripped of
credentials by the extension; the core strips them again (the password, the ``auth`` value and
``user:password``, read from the push request's credentials file) so that one slip in the
extension cannot leak them. Nothing of the log reaches stdout, stderr or the result.
"""

import base64
import binascii
import json
import os
from pathlib import Path
from typing import Any, Final

from svcc.plugins.errors import PluginError

MAX_CREDENTIALS: Final = 64 * 1024
REDACTED: Final = b"<redacted>"


def create(path: Path) -> int:
    """A new 0600 file at ``path``; its descriptor."""
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise PluginError(
            "request_invalid", f"--log-file {path}: exists; a log is never overwritten"
        ) from None
    except OSError as exc:
        raise PluginError("request_invalid", f"--log-file {path}: {exc.strerror}") from None


def secrets_of(arguments: Any) -> tuple[bytes, ...]:
    """The credentials a request's ``authentication.config_file`` holds, in every form a log
    could show them: the ``auth`` value, ``user:password`` and the password. Read leniently
    (the extension judged the file); an unreadable file holds nothing to strip."""
    auth = arguments.get("authentication") if isinstance(arguments, dict) else None
    path = auth.get("config_file") if isinstance(auth, dict) else None
    if not isinstance(path, str):
        return ()
    try:
        with open(path, "rb") as handle:
            document = json.loads(handle.read(MAX_CREDENTIALS))
    except (OSError, ValueError):
        return ()
    records = document.get("auths") if isinstance(document, dict) else None
    found: list[bytes] = []
    for record in (records or {}).values() if isinstance(records, dict) else ():
        value = record.get("auth") if isinstance(record, dict) else None
        if not isinstance(value, str) or not value:
            continue
        found.append(value.encode())
        try:
            decoded = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            continue
        _, colon, password = decoded.partition(b":")
        found.append(decoded)
        if colon and password:
            found.append(password)
    # longest first: a secret that contains another is stripped whole
    return tuple(sorted(set(found), key=len, reverse=True))


def scrub(data: bytes, secrets: tuple[bytes, ...]) -> bytes:
    for secret in secrets:
        data = data.replace(secret, REDACTED)
    return data


def write(fd: int, data: bytes) -> None:
    """Write everything and close."""
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
