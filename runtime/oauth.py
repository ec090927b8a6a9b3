"""OAuth 2.1 resource server for the HTTP servers (REST, MCP over streamable HTTP).

Hosted agent platforms cannot send a static bearer header: they obtain an access token from
the operator's authorization server, which they find through this server's protected
resource metadata (RFC 9728), and present it. So the bundle only *validates* tokens and says
where to get them; it never issues one. Off unless ``SVC_OAUTH_ISSUER`` is set; then
``SVC_OAUTH_AUDIENCE`` and ``SVC_OAUTH_JWKS`` (an ``https://`` URL or a file path) are
required, and a configuration that cannot be honoured refuses startup (one line), because a
credential check that silently accepts too much is worse than a server that does not start.

A token is a JWT (RFC 9068 profile) signed with an asymmetric algorithm of :data:`ALGORITHMS`
by a key of the issuer's JWKS chosen by its ``kid``; ``iss``, ``aud`` and ``exp`` are
required and checked (``exp``/``nbf`` with a bounded leeway). Symmetric algorithms and
``none`` are never accepted: the keys are public, so an HMAC "signed" with one proves
nothing. An unknown ``kid`` refetches a URL key set (the issuer may have rotated), at most
once per :data:`REFRESH_SECONDS`, so a stream of made-up ``kid`` values cannot turn the
server into a load generator against the issuer.

Verification is validation only: no claim or token is logged or echoed.
"""

import asyncio
import json
import os
import re
import ssl
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .auth import read_setting_file
from .integrity import StartupError

ISSUER_ENV = "SVC_OAUTH_ISSUER"
AUDIENCE_ENV = "SVC_OAUTH_AUDIENCE"
JWKS_ENV = "SVC_OAUTH_JWKS"
SERVERS_ENV = "SVC_OAUTH_AUTHORIZATION_SERVERS"
RESOURCE_ENV = "SVC_OAUTH_RESOURCE"
SCOPES_ENV = "SVC_OAUTH_SCOPES_FILE"
LEEWAY_ENV = "SVC_OAUTH_LEEWAY"
ALL_ENV = (ISSUER_ENV, AUDIENCE_ENV, JWKS_ENV, SERVERS_ENV, RESOURCE_ENV, SCOPES_ENV, LEEWAY_ENV)

METADATA_PATH = "/.well-known/oauth-protected-resource"
ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
DEFAULT_LEEWAY = 30
MAX_LEEWAY = 300
REFRESH_SECONDS = 60.0
FETCH_TIMEOUT = 5.0
MAX_JWKS_BYTES = 1024 * 1024
MAX_SCOPES_BYTES = 256 * 1024
MAX_TOKEN_BYTES = 16 * 1024
# RFC 6749 scope-token: printable ASCII but space, '"' and '\'.
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")


Key = tuple[Any, str | None]  # a PyJWK and the algorithm its ``alg`` member pins, if any


class KeySet:
    """The issuer's signing keys by ``kid`` (``None`` for a key that has none)."""

    __slots__ = ("_keys",)

    def __init__(self, keys: dict[str | None, Key]) -> None:
        self._keys = keys

    def __len__(self) -> int:
        return len(self._keys)

    def get(self, kid: str | None) -> Key | None:
        """The key a token's ``kid`` names; a token without one may use a sole key."""
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return self._keys.get(kid)


def parse_jwks(data: bytes, where: str) -> KeySet:
    """The signature keys of a JWKS document; keys for other uses or algorithms are left
    out, and a set with none left is refused (every token would then be refused)."""
    import jwt

    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        raise StartupError(f"{where} is not a JSON document") from None
    entries = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise StartupError(f"{where} is not a JWKS (an object with a 'keys' list)")
    keys: dict[str | None, Key] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        alg = entry.get("alg")
        if alg is not None and alg not in ALGORITHMS:
            continue
        try:
            key = jwt.PyJWK(entry)
        except (jwt.PyJWTError, ValueError, TypeError, KeyError):
            continue
        if key.algorithm_name not in ALGORITHMS:  # a shared secret ("oct") proves nothing here
            continue
        kid = entry.get("kid")
        keys[kid if isinstance(kid, str) else None] = (key, alg)
    if not keys:
        raise StartupError(
            f"{where} holds no usable signature key ({', '.join(sorted(ALGORITHMS))})"
        )
    return KeySet(keys)


def _fetch(url: str) -> bytes:
    """The bytes at ``url``, bounded in time and size (certificates checked as usual)."""
    request = urllib.request.Request(url, headers={"accept": "application/json"})
    context = ssl.create_default_context()
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT, context=context) as response:
        data: bytes = response.read(MAX_JWKS_BYTES + 1)
    if len(data) > MAX_JWKS_BYTES:
        raise ValueError(f"over {MAX_JWKS_BYTES} bytes")
    return data


def parse_scopes(
    data: bytes, where: str, capabilities: frozenset[str] | None
) -> dict[str, tuple[str, ...]]:
    """The required scopes by capability name (``"*"``: every capability without its own
    entry, and the MCP endpoint). A name no capability has is refused: a typo would
    otherwise leave that capability guarded only by ``"*"``."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        raise StartupError(f"{where} is not a JSON document") from None
    if not isinstance(document, dict):
        raise StartupError(f"{where} is not an object of capability names to scope lists")
    required: dict[str, tuple[str, ...]] = {}
    for name, scopes in document.items():
        if not isinstance(scopes, list) or not all(
            isinstance(s, str) and _SCOPE.fullmatch(s) for s in scopes
        ):
            raise StartupError(f"{where}: {name!r} must be a list of scope names")
        if name != "*" and capabilities is not None and name not in capabilities:
            raise StartupError(f"{where}: no capability is named {name!r}")
        required[name] = tuple(scopes)
    return required


def _granted(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token grants: ``scope`` (RFC 9068, space-separated) or ``scp`` (a list)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, list):
        return frozenset(s for s in scp if isinstance(s, str))
    return frozenset()


class OAuth:
    """The validator and the metadata of one configured resource server."""

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        keys: KeySet,
        jwks_url: str | None,
        authorization_servers: tuple[str, ...],
        resource: str | None,
        scopes: Mapping[str, tuple[str, ...]],
        leeway: int,
    ) -> None:
        self.issuer = issuer
        self.audience = audience
        self._keys = keys
        self._jwks_url = jwks_url
        self.authorization_servers = authorization_servers
        self.resource = resource
        self._scopes = dict(scopes)
        self._leeway = leeway
        self._fetched = time.monotonic()
        self._refreshing: asyncio.Lock | None = None

    def required_scopes(self, capability: str | None) -> tuple[str, ...]:
        """What a call of ``capability`` (``None``: the MCP endpoint) must be granted."""
        if capability is not None and capability in self._scopes:
            return self._scopes[capability]
        return self._scopes.get("*", ())

    async def claims(self, token: bytes) -> dict[str, Any] | None:
        """The token's claims when it is valid for this resource, else ``None``."""
        import jwt

        if len(token) > MAX_TOKEN_BYTES:
            return None
        try:
            text = token.decode("ascii")
            header = jwt.get_unverified_header(text)
        except (UnicodeDecodeError, jwt.PyJWTError, ValueError, TypeError):
            return None
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in ALGORITHMS or not (kid is None or isinstance(kid, str)):
            return None
        found = self._keys.get(kid)
        if found is None and self._jwks_url is not None and kid is not None:
            found = await self._refreshed_key(kid)
        if found is None or found[1] not in (None, alg):
            return None
        try:
            # The key object's type decides which algorithms can use it: an RSA key under
            # an ES256 header (or any key under HS256) is refused by PyJWT itself.
            claims: dict[str, Any] = jwt.decode(
                text,
                found[0].key,
                algorithms=[alg],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self._leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWTError, ValueError, TypeError):
            return None
        return claims

    def missing_scopes(self, claims: Mapping[str, Any], capability: str | None) -> tuple[str, ...]:
        """The required scopes of ``capability`` the token does not grant."""
        required = self.required_scopes(capability)
        if not required:
            return ()
        granted = _granted(claims)
        return tuple(s for s in required if s not in granted)

    async def _refreshed_key(self, kid: str) -> Key | None:
        """The key ``kid`` after refetching the key set, if the last fetch is old enough;
        a failed fetch keeps the keys there were (the issuer may be briefly away)."""
        if self._refreshing is None:
            self._refreshing = asyncio.Lock()
        async with self._refreshing:
            key = self._keys.get(kid)
            if key is not None or time.monotonic() - self._fetched < REFRESH_SECONDS:
                return key
            self._fetched = time.monotonic()
            assert self._jwks_url is not None
            try:
                data = await asyncio.to_thread(_fetch, self._jwks_url)
                self._keys = parse_jwks(data, JWKS_ENV)
            except (OSError, ValueError, StartupError):
                return None
            return self._keys.get(kid)

    def metadata(self, resource: str) -> bytes:
        """The RFC 9728 protected resource metadata document for ``resource``."""
        document: dict[str, Any] = {
            "resource": resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        scopes = sorted({s for names in self._scopes.values() for s in names})
        if scopes:
            document["scopes_supported"] = scopes
        return json.dumps(document, separators=(",", ":")).encode()


def _https(value: str, name: str) -> str:
    if not value.startswith("https://") or len(value) <= len("https://"):
        raise StartupError(f"{name} must be an https:// URL, not {value[:80]!r}")
    return value


def load_oauth(
    environ: Mapping[str, str] | None = None, capabilities: frozenset[str] | None = None
) -> OAuth | None:
    """The resource server ``SVC_OAUTH_*`` configure, or ``None`` when none is set."""
    env = os.environ if environ is None else environ
    present = [name for name in ALL_ENV if env.get(name)]
    if not present:
        return None
    missing = [name for name in (ISSUER_ENV, AUDIENCE_ENV, JWKS_ENV) if not env.get(name)]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise StartupError(f"{present[0]} is set but {' and '.join(missing)} {verb} not")
    try:
        import jwt
        import jwt.algorithms

        if not jwt.algorithms.has_crypto:
            raise ImportError("cryptography")
    except ImportError:
        raise StartupError(f"{ISSUER_ENV} needs PyJWT with cryptography installed") from None
    issuer = env[ISSUER_ENV]
    _https(issuer, ISSUER_ENV)
    source = env[JWKS_ENV]
    jwks_url: str | None = None
    if "://" in source:
        jwks_url = _https(source, JWKS_ENV)
        try:
            data = _fetch(jwks_url)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise StartupError(f"{JWKS_ENV} {jwks_url} cannot be fetched: {reason}") from None
    else:
        data = read_setting_file(Path(source), MAX_JWKS_BYTES, f"{JWKS_ENV} {source}")
    keys = parse_jwks(data, f"{JWKS_ENV} {jwks_url or source}")
    servers = tuple(
        _https(s, SERVERS_ENV) for s in env.get(SERVERS_ENV, "").replace(",", " ").split()
    ) or (issuer,)
    resource = env.get(RESOURCE_ENV) or None
    if resource is not None:
        _https(resource, RESOURCE_ENV)
    scopes: dict[str, tuple[str, ...]] = {}
    if env.get(SCOPES_ENV):
        path = env[SCOPES_ENV]
        where = f"{SCOPES_ENV} {path}"
        scopes = parse_scopes(
            read_setting_file(Path(path), MAX_SCOPES_BYTES, where), where, capabilities
        )
    leeway_text = env.get(LEEWAY_ENV) or str(DEFAULT_LEEWAY)
    if not leeway_text.isdigit() or int(leeway_text) > MAX_LEEWAY:
        raise StartupError(f"{LEEWAY_ENV} must be a whole number of seconds from 0 to {MAX_LEEWAY}")
    return OAuth(
        issuer=issuer,
        audience=env[AUDIENCE_ENV],
        keys=keys,
        jwks_url=jwks_url,
        authorization_servers=servers,
        resource=resource,
        scopes=scopes,
        leeway=int(leeway_text),
    )
