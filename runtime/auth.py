"""Bearer-token authentication for the HTTP servers (REST, MCP over streamable HTTP).

Off unless ``SVC_AUTH_TOKENS_FILE`` is set; it names a file (set but empty refuses startup).
The file holds one token a line, either the token itself or ``sha256:<64 hex>`` of it (so the
server need not hold the secret); blank lines and ``#`` comments are skipped. Every token is
kept only as its SHA-256, and a presented token is hashed and compared with every stored
digest in constant time (no early exit), so neither the comparison nor the number of tokens
leaks which prefix matched. A file that cannot be read, holds no token or a malformed line is
a :class:`StartupError`: the server refuses to start rather than serve with a credential
check it cannot honour.
No token, nor any part of one, is ever written to a log line or an error message.
"""

import hashlib
import hmac
import os
import re
from pathlib import Path
from typing import Final

from .integrity import StartupError

TOKENS_ENV = "SVC_AUTH_TOKENS_FILE"
MAX_TOKENS_FILE = 1024 * 1024
# RFC 6750 b64token: what a bearer credential may hold.
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_DIGEST = re.compile(r"sha256:([0-9a-fA-F]{64})")


class Tokens:
    """The accepted tokens, as SHA-256 digests."""

    __slots__ = ("_digests",)

    def __init__(self, digests: list[bytes]) -> None:
        self._digests = tuple(digests)

    def __len__(self) -> int:
        return len(self._digests)

    def accepts(self, token: bytes) -> bool:
        """Whether ``token`` is one of the accepted ones (constant time in its content)."""
        presented = hashlib.sha256(token).digest()
        found = False
        for digest in self._digests:
            found |= hmac.compare_digest(presented, digest)
        return found


def parse_tokens(text: str, where: str) -> Tokens:
    """The tokens of a file's text; a malformed line is named by number, never shown."""
    digests: list[bytes] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        hashed = _DIGEST.fullmatch(line)
        if hashed is not None:
            digests.append(bytes.fromhex(hashed.group(1)))
        elif line.lower().startswith("sha256:"):
            raise StartupError(f"{where} line {number}: sha256: must be followed by 64 hex digits")
        elif _TOKEN.fullmatch(line) is None:
            raise StartupError(
                f"{where} line {number}: not a bearer token (letters, digits and -._~+/ "
                "only, optionally ending in =) nor sha256:<64 hex>"
            )
        else:
            digests.append(hashlib.sha256(line.encode("ascii")).digest())
    if not digests:
        raise StartupError(f"{where} holds no token (an empty file would lock everyone out)")
    return Tokens(digests)


def load_tokens(environ: dict[str, str] | None = None) -> Tokens | None:
    """The tokens ``SVC_AUTH_TOKENS_FILE`` names, or ``None`` when it is unset (auth off).
    Set but empty is a mistake like any other in it (a template that emptied the variable
    meant a file): the server refuses to start rather than serve without a token check."""
    env = os.environ if environ is None else environ
    name = env.get(TOKENS_ENV)
    if name is None:
        return None
    if not name.strip():
        raise StartupError(
            f"{TOKENS_ENV} is set but empty: name the tokens file, or unset it to serve "
            "without tokens"
        )
    where = f"{TOKENS_ENV} {name}"
    data = read_setting_file(Path(name), MAX_TOKENS_FILE, where)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise StartupError(f"{where} is not UTF-8 text") from None
    return parse_tokens(text, where)


# Where the server was started: a setting's relative path is relative to it, whatever the
# working directory the served code is given (``calls.enter_source``).
STARTED_IN: Final = os.getcwd()


def read_setting_file(path: Path, limit: int, where: str) -> bytes:
    """The bytes of a file a setting names (``where``: the setting and its value, for the
    message), at most ``limit`` of them: never read in part, and any problem a one-line
    :class:`StartupError`."""
    path = Path(STARTED_IN, path)  # an absolute ``path`` stays itself
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise StartupError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise StartupError(f"{where} is over {limit} bytes")
    return data


def bearer(authorization: bytes | None) -> bytes | None:
    """The credential of an ``Authorization: Bearer <token>`` header value, else ``None``."""
    if authorization is None:
        return None
    scheme, _, credential = authorization.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    credential = credential.strip()
    return credential or None
