"""The registry's HTTP API (distribution v2), spoken by this extension itself so that what is
published is established by the registry's answers, never by the engine's word.

TLS always verifies the certificate and the host name: the system's trust plus, when given,
the request's ``ca_file`` (added, never substituted for verification). Credentials are the
one record of the credentials file: sent as basic auth when the registry asks for it, or
exchanged for a bearer token at the ``https`` realm a registry names. A manifest's digest is
the sha256 of the bytes fetched (a ``Docker-Content-Digest`` header must agree); a blob is
checked against its digest as it is read. A tag is absent only when the registry answers
404 with the ``MANIFEST_UNKNOWN`` error code.
"""

import hashlib
import http.client
import json
import re
import ssl
import time
import urllib.parse
from typing import Any, Final

from attrs import frozen
from svcc.images.errors import ImageInputError

from svc_oci.credentials import Credentials

MANIFEST_TYPES: Final = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
INDEX_TYPES: Final = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
MAX_MANIFEST: Final = 4 * 1024 * 1024
MAX_CONFIG: Final = 4 * 1024 * 1024
MAX_ERROR_BODY: Final = 64 * 1024
_PARAM = re.compile(r'(\w+)="([^"]*)"')


@frozen
class Manifest:
    media_type: str
    data: bytes
    digest: str  # sha256:<hex> of data

    def parsed(self) -> dict[str, Any]:
        try:
            value = json.loads(self.data)
        except ValueError:
            raise ImageInputError("registry_failed", "the manifest is not JSON") from None
        if not isinstance(value, dict):
            raise ImageInputError("registry_failed", "the manifest is not a JSON object")
        return value

    def config_digest(self) -> str | None:
        """The config of a single-platform manifest; None for an index or anything else."""
        if self.media_type not in MANIFEST_TYPES:
            return None
        config = self.parsed().get("config")
        digest = config.get("digest") if isinstance(config, dict) else None
        return digest if isinstance(digest, str) else None


@frozen
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


class Registry:
    """One registry, one repository, one set of credentials, one deadline."""

    def __init__(
        self,
        registry: str,
        repository: str,
        credentials: Credentials,
        ca_file: str | None,
        deadline: float,
    ) -> None:
        self.registry = registry
        self.repository = repository
        self.credentials = credentials
        self.deadline = deadline
        host, _, port = registry.rpartition(":") if ":" in registry else (registry, "", "443")
        self.host = "registry-1.docker.io" if registry == "docker.io" else host
        self.port = int(port)
        self.context = ssl.create_default_context()  # CERT_REQUIRED and check_hostname
        if ca_file is not None:
            try:
                self.context.load_verify_locations(cafile=ca_file)
            except (OSError, ssl.SSLError) as exc:
                raise ImageInputError(
                    "request_invalid", f"authentication.ca_file {ca_file}: not a PEM file ({exc})"
                ) from None
        self.authorization: str | None = None

    # -- transport -----------------------------------------------------------------------

    def _remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ImageInputError(
                "registry_failed", "the registry did not answer within timeout_ms"
            )
        return left

    def _send(
        self,
        host: str,
        port: int,
        method: str,
        target: str,
        *,
        headers: dict[str, str],
        body: bytes | None,
        limit: int,
    ) -> Response:
        conn = http.client.HTTPSConnection(
            host, port, context=self.context, timeout=self._remaining()
        )
        try:
            conn.request(method, target, body=body, headers=headers)
            answer = conn.getresponse()
            data = answer.read(limit + 1)
        except ssl.SSLCertVerificationError as exc:
            raise ImageInputError(
                "registry_untrusted",
                f"{host}:{port}: certificate did not verify ({exc.verify_message})",
            ) from None
        except ssl.SSLError as exc:
            raise ImageInputError(
                "registry_untrusted", f"{host}:{port}: TLS failed ({exc.reason})"
            ) from None
        except (OSError, http.client.HTTPException) as exc:
            raise ImageInputError(
                "registry_failed", f"{host}:{port}: {type(exc).__name__}: {exc}"
            ) from None
        finally:
            conn.close()
        if len(data) > limit:
            raise ImageInputError(
                "registry_failed", f"{method} {target}: answer over {limit} bytes"
            )
        return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, data)

    def _token(self, challenge: str) -> str:
        params = dict(_PARAM.findall(challenge))
        realm = urllib.parse.urlsplit(params.get("realm", ""))
        if realm.scheme != "https" or not realm.hostname:
            raise ImageInputError("registry_failed", "the registry's token realm is not https")
        query = {k: params[k] for k in ("service", "scope") if k in params}
        target = realm.path or "/"
        merged = "&".join(x for x in (realm.query, urllib.parse.urlencode(query)) if x)
        answer = self._send(
            realm.hostname,
            realm.port or 443,
            "GET",
            f"{target}?{merged}" if merged else target,
            headers={"Authorization": f"Basic {self.credentials.auth}"},
            body=None,
            limit=MAX_ERROR_BODY,
        )
        if answer.status in (401, 403):
            raise ImageInputError(
                "registry_unauthorized", "the token service refused the credentials"
            )
        try:
            document = json.loads(answer.body)
            token = document.get("token") or document.get("access_token")
        except (ValueError, AttributeError):
            token = None
        if answer.status != 200 or not isinstance(token, str):
            raise ImageInputError("registry_failed", f"the token service answered {answer.status}")
        return f"Bearer {token}"

    def request(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: bytes | None = None,
        limit: int = MAX_ERROR_BODY,
    ) -> Response:
        """One API call on this registry, authenticating when it asks (once per challenge)."""
        base = {"User-Agent": "svc-oci", **(headers or {})}

        def send() -> Response:
            sent = dict(base)
            if self.authorization is not None:
                sent["Authorization"] = self.authorization
            return self._send(
                self.host, self.port, method, path, headers=sent, body=body, limit=limit
            )

        answer = send()
        if answer.status == 401:
            challenge = answer.headers.get("www-authenticate", "")
            scheme = challenge.split(" ", 1)[0].lower()
            if scheme == "basic":
                self.authorization = f"Basic {self.credentials.auth}"
                answer = send()
            elif scheme == "bearer":
                self.authorization = self._token(challenge)
                answer = send()
        if answer.status in (401, 403):
            raise ImageInputError(
                "registry_unauthorized",
                f"{self.registry} refused the credentials ({answer.status} to {method})",
            )
        return answer

    # -- the API ---------------------------------------------------------------------------

    def _path(self, kind: str, reference: str) -> str:
        return f"/v2/{self.repository}/{kind}/{urllib.parse.quote(reference, safe=':')}"

    @staticmethod
    def _error_codes(body: bytes) -> list[str]:
        try:
            errors = json.loads(body).get("errors")
            return [str(e.get("code")) for e in errors if isinstance(e, dict)]
        except (ValueError, AttributeError, TypeError):
            return []

    def manifest(self, reference: str, *, absent: frozenset[str]) -> Manifest | None:
        """The manifest under a tag or digest; None only when the registry answers 404 with
        an error code in ``absent`` (``MANIFEST_UNKNOWN``; ``NAME_UNKNOWN`` before the first
        upload, when the repository itself may be new)."""
        answer = self.request(
            "GET",
            self._path("manifests", reference),
            headers={"Accept": ", ".join(MANIFEST_TYPES + INDEX_TYPES)},
            limit=MAX_MANIFEST,
        )
        if answer.status == 404:
            codes = self._error_codes(answer.body)
            if codes and set(codes) <= absent:
                return None
            raise ImageInputError(
                "registry_failed",
                f"{reference}: 404 without an exact manifest-unknown answer ({codes or 'no code'})",
            )
        if answer.status != 200:
            raise ImageInputError(
                "registry_failed", f"{reference}: the registry answered {answer.status}"
            )
        digest = "sha256:" + hashlib.sha256(answer.body).hexdigest()
        claimed = answer.headers.get("docker-content-digest")
        if claimed is not None and claimed != digest:
            raise ImageInputError(
                "registry_failed", f"{reference}: the registry's digest {claimed} is not {digest}"
            )
        media_type = answer.headers.get("content-type", "").split(";")[0].strip()
        return Manifest(media_type, answer.body, digest)

    def blob(self, digest: str, limit: int = MAX_CONFIG) -> bytes:
        answer = self.request("GET", self._path("blobs", digest), limit=limit)
        if answer.status in (301, 302, 303, 307, 308):  # storage redirect: no credentials
            target = urllib.parse.urlsplit(answer.headers.get("location", ""))
            if target.scheme != "https" or not target.hostname:
                raise ImageInputError("registry_failed", f"blob {digest}: redirect is not https")
            path = target.path + (f"?{target.query}" if target.query else "")
            answer = self._send(
                target.hostname, target.port or 443, "GET", path, headers={}, body=None, limit=limit
            )
        if answer.status != 200:
            raise ImageInputError(
                "registry_failed", f"blob {digest}: the registry answered {answer.status}"
            )
        if "sha256:" + hashlib.sha256(answer.body).hexdigest() != digest:
            raise ImageInputError(
                "registry_failed", f"blob {digest}: the content has another digest"
            )
        return answer.body

    def put_manifest(self, tag: str, manifest: Manifest) -> None:
        """Promotion: the verified bytes under ``tag`` (the blobs are already there)."""
        answer = self.request(
            "PUT",
            self._path("manifests", tag),
            headers={"Content-Type": manifest.media_type},
            body=manifest.data,
        )
        if answer.status != 201:
            raise ImageInputError(
                "registry_failed", f"the manifest PUT of {tag} was answered {answer.status}"
            )
        claimed = answer.headers.get("docker-content-digest")
        if claimed is not None and claimed != manifest.digest:
            raise ImageInputError(
                "registry_failed", f"the registry stored {claimed}, not {manifest.digest}"
            )
