"""The registry credentials file: exactly one ``auths`` entry, keyed by the destination's
exact ``host[:port]``, whose only field is ``auth`` (base64 of ``user:password-or-token``).

Credential helpers, identity or registry tokens, other registries and any other key are
refused: the tool never logs in, never runs a helper and never reads or changes the user's
engine configuration. The record is written into a private ``DOCKER_CONFIG`` for the engine's
client (under the historical index key for the default public registry) and used, as basic
auth, by this extension's own registry client. Messages name keys, never values.
"""

import base64
import binascii
import json
import os
from pathlib import Path
from typing import Final

from attrs import field, frozen
from svcc.images.errors import ImageInputError

MAX_FILE: Final = 64 * 1024
# the default public registry: its names, and the key its records live under in config.json
DOCKER_HUB: Final = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io"})
DOCKER_HUB_KEY: Final = "https://index.docker.io/v1/"


@frozen
class Credentials:
    registry: str
    username: str = field(repr=False)
    password: str = field(repr=False)
    auth: str = field(repr=False)  # the base64 record, as written

    def secrets(self) -> tuple[str, ...]:
        """What must never appear in a message or a log."""
        return tuple(s for s in (self.password, self.auth) if s)

    def write_engine_config(self, config_dir: Path) -> None:
        """The private ``config.json``: this one record and nothing else (no helpers)."""
        key = DOCKER_HUB_KEY if self.registry in DOCKER_HUB else self.registry
        path = config_dir / "config.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump({"auths": {key: {"auth": self.auth}}}, handle)


def _refuse(path: str, message: str) -> ImageInputError:
    return ImageInputError("credentials_refused", f"credentials file {path}: {message}")


def read_credentials(path: str, registry: str) -> Credentials:
    """The one record for ``registry`` (``host[:port]``, exactly as in the destination)."""
    try:
        fd = os.open(path, os.O_RDONLY)  # a mounted secret is often a symlink
    except OSError as exc:
        raise _refuse(path, exc.strerror or "cannot be opened") from None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        raise _refuse(path, f"over {MAX_FILE} bytes")
    try:
        document = json.loads(data)
    except ValueError:
        raise _refuse(path, "not JSON") from None
    if not isinstance(document, dict):
        raise _refuse(path, "not a JSON object")
    other = sorted(set(document) - {"auths"})
    if other:  # credsStore, credHelpers, proxies, HttpHeaders, currentContext, ...
        raise _refuse(path, "only 'auths' is allowed; refused key(s): " + ", ".join(other))
    auths = document.get("auths")
    if not isinstance(auths, dict) or len(auths) != 1:
        raise _refuse(path, "'auths' must hold exactly one registry")
    ((key, record),) = auths.items()
    if key != registry:
        raise _refuse(path, f"its registry {key!r} is not the destination's registry {registry!r}")
    if not isinstance(record, dict) or set(record) != {"auth"}:
        keys = sorted(record) if isinstance(record, dict) else []
        refused = [k for k in keys if k != "auth"]
        raise _refuse(
            path,
            "the record's only field must be 'auth'"
            + (f"; refused: {', '.join(refused)}" if refused else ""),
        )
    auth = record["auth"]
    if not isinstance(auth, str) or not auth:
        raise _refuse(path, "'auth' must be a non-empty base64 string")
    try:
        decoded = base64.b64decode(auth, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise _refuse(path, "'auth' is not base64 of UTF-8 user:password") from None
    username, colon, password = decoded.partition(":")
    if not colon or not username or not password:
        raise _refuse(path, "'auth' must decode to user:password")
    return Credentials(registry, username, password, auth)
