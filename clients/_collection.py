"""The view model every format renders: one collection, its requests, stable names and ids.

Formats only place what is computed here: the request order (``GET /health`` first, then
one POST per capability in the bundle's order), the example bodies (already checked by
the bundle's validator), file stems and ids. Ids are derived from capability ids with
SHA-256 (never random, never the clock), so an export is the same bytes every time and a
request keeps its id across regenerations.
"""

import hashlib
import re
import uuid
from typing import Final
from urllib.parse import urlsplit

from attrs import frozen
from svcc.contracts.errors import UsageError

DEFAULT_BASE_URL: Final = "http://127.0.0.1:8000"
BASE_URL_VARIABLE: Final = "baseUrl"
# The bearer token a server started with SVC_AUTH_TOKENS_FILE asks for (DESIGN §13): empty
# by default (a server without tokens ignores the header); set it in the client.
TOKEN_VARIABLE: Final = "token"
HEALTH_ID: Final = "svc:health"
MAX_URL_CHARS: Final = 2048
MAX_COLLECTION_NAME: Final = 100
_UNSAFE_URL: Final = re.compile(r"[^A-Za-z0-9\-._~:/@!$&'()*+,;=%\[\]]")
_NAMESPACE: Final = uuid.uuid5(uuid.NAMESPACE_URL, "https://svcc.invalid/clients")
# Stems a request file cannot take: names Windows refuses whatever the extension, and
# Bruno's own collection and folder files.
_RESERVED_STEMS: Final = frozenset(
    {"con", "prn", "aux", "nul", "collection", "folder"}
    | {f"{p}{i}" for p in ("com", "lpt") for i in range(1, 10)}
)


@frozen(kw_only=True)
class Request:
    key: str  # the capability id (or HEALTH_ID:<module>): the source of every id
    name: str  # shown in the client: the capability's route name
    stem: str  # file stem, unique even on case-insensitive file systems
    method: str
    path: str  # "/health", "/capabilities/<name>"
    summary: str
    description: str | None
    body: str | None  # the JSON body text (brace-safe), None for GET

    @property
    def segments(self) -> list[str]:
        return self.path.strip("/").split("/")

    def uuid(self, salt: str = "") -> str:
        return str(uuid.uuid5(_NAMESPACE, f"{self.key}\0{salt}"))


@frozen(kw_only=True)
class Collection:
    name: str
    module: str
    base_url: str
    requests: tuple[Request, ...]

    def uuid(self) -> str:
        return str(uuid.uuid5(_NAMESPACE, f"collection\0{self.module}"))


def stable_hex(*parts: str, length: int = 32) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:length]


def check_base_url(raw: str) -> str:
    """An absolute http(s) URL without credentials, query or fragment; no trailing ``/``."""
    if len(raw) > MAX_URL_CHARS:
        raise UsageError(f"--base-url is over {MAX_URL_CHARS} characters")
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"--base-url {raw!r}: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise UsageError(f"--base-url {raw!r}: only http:// and https:// URLs are accepted")
    if not parts.hostname:
        raise UsageError(f"--base-url {raw!r}: no host")
    if parts.username is not None or parts.password is not None:
        raise UsageError(
            f"--base-url {raw!r}: credentials do not belong in a collection; configure them "
            "in the client"
        )
    if parts.query or "?" in raw:
        raise UsageError(f"--base-url {raw!r}: a base URL has no query string")
    if parts.fragment or "#" in raw:
        raise UsageError(f"--base-url {raw!r}: a base URL has no fragment")
    bad = _UNSAFE_URL.search(raw)
    if bad is not None:
        raise UsageError(
            f"--base-url {raw!r}: character {bad.group()!r} is not allowed (percent-encode it; "
            "IDN hosts in their xn-- form)"
        )
    if port == 0:
        raise UsageError(f"--base-url {raw!r}: port 0 is not a server port")
    return raw.rstrip("/")


def check_name(raw: str) -> str:
    """A collection name: one printable line of at most 100 characters."""
    if not raw or raw != raw.strip():
        raise UsageError("--name must be non-empty, without leading or trailing spaces")
    if len(raw) > MAX_COLLECTION_NAME:
        raise UsageError(f"--name is over {MAX_COLLECTION_NAME} characters")
    if not raw.isprintable() or "{{" in raw or "{%" in raw:
        raise UsageError(
            "--name must be printable text on one line, without template braces ({{, {%)"
        )
    return raw


def file_stems(keys_and_names: list[tuple[str, str]]) -> dict[str, str]:
    """capability id → file stem: the route name, disambiguated by a hash of the id where
    two names differ only in case (or hit a name Windows reserves)."""
    folded: dict[str, int] = {}
    for _, name in keys_and_names:
        folded[name.casefold()] = folded.get(name.casefold(), 0) + 1
    stems: dict[str, str] = {}
    for key, name in keys_and_names:
        clash = folded[name.casefold()] > 1 or name.split(".")[0].casefold() in _RESERVED_STEMS
        stems[key] = f"{name}-{stable_hex(key, length=8)}" if clash else name
    return stems
