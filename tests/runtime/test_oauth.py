"""OAuth 2.1 resource server (DESIGN §15): JWT access tokens minted here with real keys (RS256,
ES256), a JWKS from a file and from an HTTPS server on loopback (with key rotation), the
protected resource metadata (RFC 9728), bundles served under uvicorn and the MCP bundle's
streamable HTTP server driven by the official ``mcp`` client with a token."""

import asyncio
import base64
import datetime
import hashlib
import hmac
import http.server
import json
import os
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from helpers import ROOT
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from servers import free_port, generate, serving, serving_mcp_http

SHAPES = ROOT / "examples" / "shapes.py"
ISSUER = "https://issuer.example.test"
AUDIENCE = "https://api.example.test"
SUBJECT = "alice-subject-never-logged"
MCP_HEADERS = {"accept": "application/json, text/event-stream"}
CALL = "/capabilities/circle_area"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Keys:
    def __init__(self) -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.rotated = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwk(self, which: str) -> dict[str, Any]:
        if which == "ec-1":
            data = json.loads(ECAlgorithm.to_jwk(self.ec.public_key()))
            data["alg"] = "ES256"
        else:
            key = self.rsa if which == "rsa-1" else self.rotated
            data = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
        data["kid"] = which
        data["use"] = "sig"
        return data

    def jwks(self, *kids: str) -> bytes:
        return json.dumps({"keys": [self.jwk(k) for k in kids]}).encode()

    def token(self, kid: str = "rsa-1", **overrides: Any) -> str:
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": SUBJECT,
            "iat": now,
            "exp": now + 300,
            "scope": "geometry",
        }
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        if kid == "ec-1":
            return jwt.encode(claims, self.ec, algorithm="ES256", headers={"kid": kid})
        key = self.rsa if kid in ("rsa-1", "unknown") else self.rotated
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys()


@pytest.fixture(scope="module")
def rest_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("oauth") / "rest"
    generate(SHAPES, out)
    return out


@pytest.fixture(scope="module")
def mcp_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("oauth") / "mcp"
    generate(SHAPES, out, interface="mcp")
    return out


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, keys: Keys) -> dict[str, str]:
    where = tmp_path_factory.mktemp("oauth-settings")
    (where / "jwks.json").write_bytes(keys.jwks("rsa-1", "ec-1"))
    (where / "scopes.json").write_text(
        json.dumps({"circle_area": ["geometry"], "scale": ["admin"]})
    )
    return {
        "SVC_OAUTH_ISSUER": ISSUER,
        "SVC_OAUTH_AUDIENCE": AUDIENCE,
        "SVC_OAUTH_JWKS": str(where / "jwks.json"),
        "SVC_OAUTH_AUTHORIZATION_SERVERS": "https://login.example.test",
        "SVC_OAUTH_SCOPES_FILE": str(where / "scopes.json"),
    }


def _forged(keys: Keys, how: str) -> str:
    """Tokens a careless validator would accept."""
    good = keys.token()
    header, payload, signature = good.split(".")
    if how == "none":
        head = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": "rsa-1"}).encode())
        return f"{head}.{payload}."
    if how == "hs256-public-key":
        head = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}).encode())
        secret = keys.rsa.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        mac = hmac.new(secret, f"{head}.{payload}".encode(), hashlib.sha256).digest()
        return f"{head}.{payload}.{_b64(mac)}"
    if how == "tampered":
        claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
        claims["sub"] = "mallory"
        return f"{header}.{_b64(json.dumps(claims).encode())}.{signature}"
    raise AssertionError(how)


def test_tokens_are_validated_and_the_metadata_is_served(
    rest_bundle: Path, keys: Keys, settings: dict[str, str]
) -> None:
    now = int(time.time())
    refused = {
        "expired": keys.token(exp=now - 3600, iat=now - 7200),
        "not yet valid": keys.token(nbf=now + 3600),
        "wrong audience": keys.token(aud="https://other.example.test"),
        "wrong issuer": keys.token(iss="https://evil.example.test"),
        "no exp": keys.token(exp=None),
        "unknown kid": keys.token(kid="unknown"),
        "alg none": _forged(keys, "none"),
        "hs256 with the public key": _forged(keys, "hs256-public-key"),
        "tampered payload": _forged(keys, "tampered"),
        "not a jwt": "plainly-not-a-jwt",
    }
    with serving(rest_bundle, env=settings) as server, server.client() as client:
        body = {"radius": 2}
        for kid in ("rsa-1", "ec-1"):
            ok = client.post(
                CALL, json=body, headers={"authorization": f"Bearer {keys.token(kid)}"}
            )
            assert ok.status_code == 200, (kid, ok.text)
        missing = client.post(CALL, json=body)
        assert missing.status_code == 401
        assert missing.json() == {"detail": "Not authenticated"}
        metadata_url = "http://127.0.0.1:{}/.well-known/oauth-protected-resource".format(
            server.url.rsplit(":", 1)[1]
        )
        assert missing.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
        for why, token in refused.items():
            answer = client.post(CALL, json=body, headers={"authorization": f"Bearer {token}"})
            assert answer.status_code == 401, why
            assert answer.headers["www-authenticate"] == (
                f'Bearer error="invalid_token", resource_metadata="{metadata_url}"'
            ), why
        # scopes: circle_area needs "geometry" (granted), scale needs "admin" (not granted)
        short = client.post(
            "/capabilities/scale",
            json={"points": [[1, 2]]},
            headers={"authorization": f"Bearer {keys.token()}"},
        )
        assert short.status_code == 403
        assert short.headers["www-authenticate"].startswith(
            'Bearer error="insufficient_scope", scope="admin", resource_metadata='
        )
        admin = keys.token(scope="geometry admin")
        assert (
            client.post(
                "/capabilities/scale",
                json={"points": [[1, 2]]},
                headers={"authorization": f"Bearer {admin}"},
            ).status_code
            == 200
        )
        # open without a token: health and the metadata document
        assert client.get("/health").status_code == 200
        document = client.get("/.well-known/oauth-protected-resource")
        assert document.status_code == 200
        assert document.json() == {
            "resource": server.url,
            "authorization_servers": ["https://login.example.test"],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["admin", "geometry"],
        }
        assert client.get("/openapi.json").status_code == 401
        log = server.log_text()
    for token in (*refused.values(), keys.token(), admin):
        assert token not in log
        assert all(part not in log for part in token.split(".") if len(part) > 8)
    assert SUBJECT not in log


def test_static_tokens_still_pass_beside_oauth(
    rest_bundle: Path, keys: Keys, settings: dict[str, str], tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("a-static-operator-token\n")
    env = {**settings, "SVC_AUTH_TOKENS_FILE": str(tokens), "SVC_OAUTH_SCOPES_FILE": ""}
    with serving(rest_bundle, env=env) as server, server.client() as client:
        for token in ("a-static-operator-token", keys.token()):
            answer = client.post(
                CALL, json={"radius": 1}, headers={"authorization": f"Bearer {token}"}
            )
            assert answer.status_code == 200
        assert (
            client.post(
                CALL, json={"radius": 1}, headers={"authorization": "Bearer nope"}
            ).status_code
            == 401
        )


def test_the_mcp_client_calls_with_a_token(
    mcp_bundle: Path, keys: Keys, settings: dict[str, str]
) -> None:
    import asyncio

    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    env = {
        **settings,
        "SVC_OAUTH_SCOPES_FILE": "",
        "SVC_OAUTH_RESOURCE": "https://mcp.example.test/mcp",
    }

    async def call(url: str, token: str) -> Any:
        async with (
            httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30) as http,
            streamable_http_client(url + "/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool("circle_area", {"radius": 1})

    with serving_mcp_http(mcp_bundle, env) as server:
        answered = asyncio.run(call(server.url, keys.token("ec-1")))
        assert not answered.is_error
        refused = httpx.post(
            server.url + "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers=MCP_HEADERS,
        )
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == (
            'Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"'
        )
        document = httpx.get(server.url + "/.well-known/oauth-protected-resource/mcp").json()
        assert document["resource"] == "https://mcp.example.test/mcp"
        log = server.log_text()
    assert SUBJECT not in log


class _Jwks(http.server.BaseHTTPRequestHandler):
    body = b""
    fetches = 0

    def do_GET(self) -> None:
        type(self).fetches += 1
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


def _certificate(where: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    import ipaddress

    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = where / "cert.pem", where / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def jwks_server(tmp_path: Path, keys: Keys) -> Iterator[tuple[str, Path, type[_Jwks]]]:
    cert, key = _certificate(tmp_path)
    handler = type("Jwks", (_Jwks,), {"body": keys.jwks("rsa-1"), "fetches": 0})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{httpd.server_address[1]}/jwks.json", cert, handler
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_a_rotated_key_is_fetched_once_a_minute_at_most(
    rest_bundle: Path, keys: Keys, jwks_server: tuple[str, Path, type[_Jwks]]
) -> None:
    url, cert, handler = jwks_server
    env = {
        "SVC_OAUTH_ISSUER": ISSUER,
        "SVC_OAUTH_AUDIENCE": AUDIENCE,
        "SVC_OAUTH_JWKS": url,
        "SSL_CERT_FILE": str(cert),
    }
    with serving(rest_bundle, env=env) as server, server.client() as client:
        assert handler.fetches == 1  # at startup
        assert (
            client.post(
                CALL, json={"radius": 1}, headers={"authorization": f"Bearer {keys.token()}"}
            ).status_code
            == 200
        )
        handler.body = keys.jwks("rsa-1", "rsa-2")  # the issuer rotates
        # the startup fetch was under a minute ago: an unknown kid does not refetch yet
        assert (
            client.post(
                CALL, json={"radius": 1}, headers={"authorization": f"Bearer {keys.token('rsa-2')}"}
            ).status_code
            == 401
        )
        for _ in range(20):
            client.post(
                CALL, json={"radius": 1}, headers={"authorization": f"Bearer {keys.token('rsa-9')}"}
            )
        assert handler.fetches == 1
    # the refresh interval passing, in process (no minute-long wait)
    from svcc.runtime import oauth

    handler.body = keys.jwks("rsa-1")
    before = handler.fetches

    async def rotation() -> tuple[Any, Any]:
        configured = oauth.load_oauth(env)
        assert configured is not None
        handler.body = keys.jwks("rsa-1", "rsa-2")
        early = await configured.claims(keys.token("rsa-2").encode())
        configured._fetched -= oauth.REFRESH_SECONDS  # as if a minute had gone by
        return early, await configured.claims(keys.token("rsa-2").encode())

    saved = os.environ.get("SSL_CERT_FILE")
    os.environ["SSL_CERT_FILE"] = str(cert)
    try:
        early, late = asyncio.run(rotation())
    finally:
        if saved is None:
            del os.environ["SSL_CERT_FILE"]
        else:
            os.environ["SSL_CERT_FILE"] = saved
    assert early is None
    assert late is not None
    assert late["sub"] == SUBJECT
    assert handler.fetches == before + 2  # its startup, then one refresh


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        (
            {"SVC_OAUTH_ISSUER": ISSUER},
            "SVC_OAUTH_ISSUER is set but SVC_OAUTH_AUDIENCE and SVC_OAUTH_JWKS are not",
        ),
        (
            {"SVC_OAUTH_AUDIENCE": AUDIENCE},
            "SVC_OAUTH_AUDIENCE is set but SVC_OAUTH_ISSUER and SVC_OAUTH_JWKS are not",
        ),
        (
            {
                "SVC_OAUTH_ISSUER": "http://issuer",
                "SVC_OAUTH_AUDIENCE": "a",
                "SVC_OAUTH_JWKS": "{jwks}",
            },
            "SVC_OAUTH_ISSUER must be an https:// URL",
        ),
        (
            {
                "SVC_OAUTH_ISSUER": ISSUER,
                "SVC_OAUTH_AUDIENCE": "a",
                "SVC_OAUTH_JWKS": "http://127.0.0.1:9/k",
            },
            "SVC_OAUTH_JWKS must be an https:// URL",
        ),
        (
            {
                "SVC_OAUTH_ISSUER": ISSUER,
                "SVC_OAUTH_AUDIENCE": "a",
                "SVC_OAUTH_JWKS": "https://127.0.0.1:9/k",
            },
            "cannot be fetched",
        ),
        (
            {"SVC_OAUTH_ISSUER": ISSUER, "SVC_OAUTH_AUDIENCE": "a", "SVC_OAUTH_JWKS": "{missing}"},
            "cannot be read",
        ),
        (
            {"SVC_OAUTH_ISSUER": ISSUER, "SVC_OAUTH_AUDIENCE": "a", "SVC_OAUTH_JWKS": "{empty}"},
            "holds no usable signature key",
        ),
        (
            {
                "SVC_OAUTH_ISSUER": ISSUER,
                "SVC_OAUTH_AUDIENCE": "a",
                "SVC_OAUTH_JWKS": "{jwks}",
                "SVC_OAUTH_SCOPES_FILE": "{typo}",
            },
            "no capability is named 'circle_aera'",
        ),
        (
            {
                "SVC_OAUTH_ISSUER": ISSUER,
                "SVC_OAUTH_AUDIENCE": "a",
                "SVC_OAUTH_JWKS": "{jwks}",
                "SVC_OAUTH_LEEWAY": "3600",
            },
            "SVC_OAUTH_LEEWAY must be a whole number",
        ),
    ],
)
def test_a_bad_configuration_refuses_startup(
    rest_bundle: Path, keys: Keys, tmp_path: Path, env: dict[str, str], reason: str
) -> None:
    (tmp_path / "jwks.json").write_bytes(keys.jwks("rsa-1"))
    (tmp_path / "empty.json").write_text('{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}')
    (tmp_path / "typo.json").write_text('{"circle_aera": ["x"]}')
    places = {k: str(tmp_path / f"{k}.json") for k in ("jwks", "missing", "empty", "typo")}
    filled = {k: v.format(**places) for k, v in env.items()}
    done = subprocess.run(
        [sys.executable, "-m", "uvicorn", "app:app", "--port", str(free_port())],
        cwd=rest_bundle,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **filled},
        check=False,
    )
    assert done.returncode == 4, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "startup refused" in x]
    assert line.startswith("svc-rest: startup refused: ")
    assert reason in line
    assert "Traceback" not in done.stderr
