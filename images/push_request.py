"""The push request ``svc.oci-push/v1``, validated strictly, and the ``image.push`` grant.

The core parses the request and checks the grant before the extension starts or any input
(the credentials file included) is read; the extension parses it again with the same code,
so the request and its binding to a grant are defined once. The grant is bound to the
installed extension and to the exact repository (``registry[:port]/namespace/image``) of the
destination, literally (DESIGN §8).
"""

from typing import Any, Final

from attrs import asdict, frozen
from svcc.images.errors import ImageInputError
from svcc.images.reference import ImageReference, parse_reference
from svcc.images.request import (
    LOG_DEFAULT,
    LOG_MAX,
    PLATFORMS,
    TIMEOUT_DEFAULT,
    TIMEOUT_MAX,
    Engine,
    PluginIdentity,
    _bad,
    _differences,
    _integer,
    _only,
    _string,
    parse_engine,
)

SCHEMA: Final = "svc.oci-push/v1"
PUSH_PERMISSIONS: Final = frozenset({"registry.read", "registry.publish"})
HEX: Final = frozenset("0123456789abcdef")


@frozen(kw_only=True)
class Authentication:
    config_file: str
    ca_file: str | None


@frozen(kw_only=True)
class PushRequest:
    image_id: str
    platform: str
    inputs_sha256: str
    destination: str
    engine: Engine
    authentication: Authentication
    timeout_ms: int = TIMEOUT_DEFAULT
    max_log_bytes: int = LOG_DEFAULT

    @property
    def reference(self) -> ImageReference:
        return parse_reference(self.destination, what="destination", require_tag=True)

    @property
    def repository(self) -> str:
        """What an ``image.push`` grant binds: ``registry[:port]/namespace/image``."""
        ref = self.reference
        return f"{ref.registry}/{ref.repository}"


def _hex(value: str, length: int) -> bool:
    return len(value) == length and set(value) <= HEX


def parse_push_request(obj: object) -> PushRequest:
    if not isinstance(obj, dict):
        raise _bad("the push request must be a JSON object")
    _only(
        obj,
        "request",
        {
            "schema",
            "image_id",
            "platform",
            "inputs_sha256",
            "destination",
            "engine",
            "authentication",
        },
        {"timeout_ms", "max_log_bytes"},
    )
    if obj["schema"] != SCHEMA:
        raise _bad(f"schema: must be {SCHEMA!r}")
    engine = parse_engine(obj["engine"])
    auth = obj["authentication"]
    if not isinstance(auth, dict):
        raise _bad("authentication: must be an object")
    _only(auth, "authentication", {"config_file"}, {"ca_file"})
    ca_file = None
    if "ca_file" in auth:
        ca_file = _string(auth, "ca_file", "authentication.", absolute=True)
    request = PushRequest(
        image_id=_string(obj, "image_id", ""),
        platform=_string(obj, "platform", ""),
        inputs_sha256=_string(obj, "inputs_sha256", ""),
        destination=_string(obj, "destination", ""),
        engine=engine,
        authentication=Authentication(
            config_file=_string(auth, "config_file", "authentication.", absolute=True),
            ca_file=ca_file,
        ),
        timeout_ms=_integer(obj, "timeout_ms", TIMEOUT_DEFAULT, TIMEOUT_MAX),
        max_log_bytes=_integer(obj, "max_log_bytes", LOG_DEFAULT, LOG_MAX),
    )
    algorithm, _, encoded = request.image_id.partition(":")
    if algorithm != "sha256" or not _hex(encoded, 64):
        raise _bad("image_id: must be sha256:<64 lowercase hex digits> from the build result")
    if not _hex(request.inputs_sha256, 64):
        raise _bad("inputs_sha256: must be 64 lowercase hex digits from the build result")
    if request.platform not in PLATFORMS:
        raise _bad(f"platform: must be one of {', '.join(PLATFORMS)}")
    ref = request.reference  # reference_invalid: scheme, credentials, IP, implicit latest
    if ref.digest is not None:
        raise ImageInputError(
            "reference_invalid",
            f"destination {request.destination!r}: a destination is a tag, not a digest",
        )
    return request


def check_push_grant(policy: object, request: PushRequest, plugin: PluginIdentity) -> None:
    """An ``image.push`` grant with exactly ``registry.read`` and ``registry.publish``, bound
    literally to this extension and the destination's repository; otherwise
    ``grant_missing`` / ``grant_mismatch`` naming the fields that differ."""
    if not isinstance(policy, dict) or policy.get("schema") != "svc.operator-policy/v1":
        raise ImageInputError("grant_missing", "operator policy: not svc.operator-policy/v1")
    grants = policy.get("grants")
    if not isinstance(grants, list):
        raise ImageInputError("grant_missing", "operator policy: grants must be a list")
    wanted: dict[str, Any] = {"plugin": asdict(plugin), "repository": request.repository}
    best: list[str] | None = None
    for grant in grants:
        if not isinstance(grant, dict) or grant.get("operation") != "image.push":
            continue
        permissions = grant.get("permissions")
        problems = []
        if not isinstance(permissions, list) or set(permissions) != PUSH_PERMISSIONS:
            problems.append("permissions")
        problems += _differences(grant.get("plugin"), wanted["plugin"], "plugin.")
        problems += _differences(grant.get("repository"), wanted["repository"], "repository.")
        if not problems:
            return
        if best is None or len(problems) < len(best):
            best = problems
    if best is None:
        raise ImageInputError("grant_missing", "operator policy: no image.push grant")
    raise ImageInputError("grant_mismatch", "image.push grant does not match: " + ", ".join(best))
