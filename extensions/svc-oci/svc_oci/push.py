"""``push``: publish a built image under a destination tag, failing closed.

The flow of the specification's "Image publication" table:

1. before anything is uploaded: the request (strict), the credentials file, the engine
   (API >= 1.46, no insecure registries), the local image by immutable id (platform, user
   65532, inputs label), and the destination tag read from the registry: absent, or present
   with this very image (accepted: nothing is uploaded), or present with another image
   (``destination_exists``); any other answer fails closed with the registry unchanged;
2. the upload: a fresh local alias ``svc-upload-<random>`` in the destination repository,
   pushed by the engine;
3. the remote identity, read from the registry's API, never from the engine: the staging
   manifest's digest (sha256 of the bytes fetched), a single-platform manifest whose config
   digest is the local image id, a config blob whose platform, user and inputs label are the
   request's;
4. the destination checked again right before promotion (absent only on the registry's exact
   ``MANIFEST_UNKNOWN``), then promoted by a manifest PUT of the verified bytes (no
   re-upload), then read back.

Any failure once the upload has started is ``remote_state_unconfirmed`` (the detail says
what failed); staging tags are never deleted. No message carries a credential.
"""

import json
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from svcc.backends.oci.context import LABEL_INPUTS, USER
from svcc.images.errors import ImageInputError
from svcc.images.push_request import PushRequest, parse_push_request

from svc_oci.build import check_engine
from svc_oci.credentials import Credentials, read_credentials
from svc_oci.engine_push import PushEngine
from svc_oci.registry import Manifest, Registry

RESULT_SCHEMA: Final = "svc.oci-push-result/v1"
ABSENT: Final = frozenset({"MANIFEST_UNKNOWN"})
# before the first upload the repository itself may not exist yet
ABSENT_BEFORE_UPLOAD: Final = frozenset({"MANIFEST_UNKNOWN", "NAME_UNKNOWN"})


def _redacted(message: str, credentials: Credentials) -> str:
    for secret in credentials.secrets():
        message = message.replace(secret, "<redacted>")
    return message


class Publication:
    def __init__(self, request: PushRequest, credentials: Credentials, work: Path) -> None:
        self.request = request
        self.ref = request.reference
        assert self.ref.tag is not None  # parse_push_request requires it
        self.tag = self.ref.tag
        self.deadline = time.monotonic() + request.timeout_ms / 1000
        self.engine = PushEngine(request, work, credentials, self.deadline)
        self.registry = Registry(
            self.ref.registry,
            self.ref.repository,
            credentials,
            request.authentication.ca_file,
            self.deadline,
        )

    def identifies_request(self, manifest: Manifest) -> str | None:
        """None when ``manifest`` is this request's image; otherwise what differs. Read from
        the registry: the config digest is the local image id, and the config blob holds the
        platform, user and inputs label asked for."""
        config_digest = manifest.config_digest()
        if config_digest is None:
            return f"not a single-platform image manifest ({manifest.media_type or 'no type'})"
        if config_digest != self.request.image_id:
            return f"config {config_digest}, not the local image {self.request.image_id}"
        try:
            config = json.loads(self.registry.blob(config_digest))
        except ValueError:
            return "the image configuration is not JSON"
        if not isinstance(config, dict):
            return "the image configuration is not a JSON object"
        os_name, _, arch = self.request.platform.partition("/")
        problems = []
        if (config.get("os"), config.get("architecture")) != (os_name, arch):
            problems.append(f"platform {config.get('os')}/{config.get('architecture')}")
        inner = config.get("config") or {}
        if inner.get("User") != USER:
            problems.append(f"user {inner.get('User')!r}")
        if (inner.get("Labels") or {}).get(LABEL_INPUTS) != self.request.inputs_sha256:
            problems.append(f"label {LABEL_INPUTS}")
        return "; ".join(problems) or None

    def result(self, manifest: Manifest) -> dict[str, Any]:
        return {
            "schema": RESULT_SCHEMA,
            "destination": self.request.destination,
            "digest_reference": f"{self.ref.registry}/{self.ref.repository}@{manifest.digest}",
            "image_id": self.request.image_id,
            "config_digest": manifest.config_digest(),
            "manifest_digest": manifest.digest,
            "index_digest": None,
            "platform": self.request.platform,
            "inputs_sha256": self.request.inputs_sha256,
            "published": True,
        }

    def before_upload(self) -> Manifest | None:
        """The checks that leave the registry unchanged; the destination's manifest when it
        already holds this image (accepted), None when the tag is absent."""
        self.engine.check_supported()
        self.engine.local_image(
            self.request.image_id,
            platform=self.request.platform,
            user=USER,
            labels={LABEL_INPUTS: self.request.inputs_sha256},
        )
        existing = self.registry.manifest(self.tag, absent=ABSENT_BEFORE_UPLOAD)
        if existing is None:
            return None
        differs = self.identifies_request(existing)
        if differs is not None:
            raise ImageInputError(
                "destination_exists",
                f"{self.request.destination} holds another image ({existing.digest}: {differs})",
            )
        return existing

    def upload_and_promote(self, staging: str) -> Manifest:
        alias = f"{self.ref.registry}/{self.ref.repository}:{staging}"
        self.engine.push(alias)
        uploaded = self.registry.manifest(staging, absent=frozenset())
        assert uploaded is not None  # absent=frozenset(): a 404 raised
        differs = self.identifies_request(uploaded)
        if differs is not None:
            raise ImageInputError("registry_failed", f"the uploaded {staging} differs: {differs}")
        current = self.registry.manifest(self.tag, absent=ABSENT)  # right before promotion
        if current is not None:
            if current.digest == uploaded.digest:
                return uploaded  # another client published this very manifest: accepted
            raise ImageInputError(
                "destination_exists",
                f"{self.request.destination} changed to {current.digest} during the upload",
            )
        self.registry.put_manifest(self.tag, uploaded)
        promoted = self.registry.manifest(self.tag, absent=frozenset())
        if promoted is None or promoted.digest != uploaded.digest:
            found = promoted.digest if promoted is not None else "nothing"
            raise ImageInputError(
                "registry_failed", f"{self.request.destination} reads back as {found}"
            )
        return promoted


def push(arguments: Any) -> dict[str, Any]:
    request = parse_push_request(arguments)
    ref = request.reference
    credentials = read_credentials(request.authentication.config_file, ref.registry)
    check_engine(request)
    work = Path(tempfile.mkdtemp(prefix="svc-oci-push-"))
    staging = f"svc-upload-{secrets.token_hex(8)}"
    try:
        publication = Publication(request, credentials, work)
        try:
            existing = publication.before_upload()
        except ImageInputError as exc:
            raise ImageInputError(exc.code, _redacted(exc.message, credentials)) from None
        if existing is not None:
            return publication.result(existing)
        publication.engine.tag(request.image_id, f"{ref.registry}/{ref.repository}:{staging}")
        try:  # the upload starts: from here on, every failure leaves the remote unconfirmed
            published = publication.upload_and_promote(staging)
        except ImageInputError as exc:
            raise ImageInputError(
                "remote_state_unconfirmed",
                _redacted(
                    f"{exc.code}: {exc.message} (the staging tag {staging} may remain in "
                    f"{ref.registry}/{ref.repository}; nothing was deleted)",
                    credentials,
                ),
            ) from None
        except Exception as exc:  # a bug after the upload started: the state is still unknown
            raise ImageInputError(
                "remote_state_unconfirmed",
                f"{type(exc).__name__} after the upload of {staging} started",
            ) from None
        return publication.result(published)
    finally:
        shutil.rmtree(work, ignore_errors=True)
