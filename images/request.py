"""The build request ``svc.oci-build/v1``, validated strictly (unknown keys, wrong types and
out-of-range values refused with the field named), and the ``image.build`` grant check.

Both the core (before the extension starts or any input is read) and the extension use
these, so the request and its binding to a grant are defined once.
"""

from collections.abc import Mapping
from typing import Any, Final

from attrs import asdict, frozen
from svcc.images.errors import ImageInputError

SCHEMA: Final = "svc.oci-build/v1"
PLATFORMS: Final = ("linux/amd64", "linux/arm64")
TIMEOUT_DEFAULT: Final = 300_000
TIMEOUT_MAX: Final = 540_000
LOG_DEFAULT: Final = 1024 * 1024
LOG_MAX: Final = 16 * 1024 * 1024
BUILD_PERMISSIONS: Final = frozenset({"image.build", "registry.read"})


@frozen(kw_only=True)
class Engine:
    executable: str
    socket: str
    builder: str | None


@frozen(kw_only=True)
class BuildRequest:
    bundle: str
    interface: str
    base_image: str
    platform: str
    tag: str
    requirements: str
    wheelhouse: str
    engine: Engine
    timeout_ms: int = TIMEOUT_DEFAULT
    max_log_bytes: int = LOG_DEFAULT

    def target_fields(self) -> dict[str, Any]:
        """What an ``image.build`` grant's ``target`` binds (DESIGN §8)."""
        fields = asdict(self)
        del fields["timeout_ms"], fields["max_log_bytes"]
        return fields


def _bad(message: str) -> ImageInputError:
    return ImageInputError("request_invalid", message)


def _only(obj: Mapping[str, Any], where: str, required: set[str], optional: set[str]) -> None:
    unknown = sorted(set(obj) - required - optional)
    if unknown:
        raise _bad(f"{where}: unknown field(s): {', '.join(unknown)}")
    missing = sorted(required - set(obj))
    if missing:
        raise _bad(f"{where}: missing field(s): {', '.join(missing)}")


def _string(obj: Mapping[str, Any], key: str, where: str, *, absolute: bool = False) -> str:
    value = obj[key]
    if not isinstance(value, str) or not value or "\0" in value:
        raise _bad(f"{where}{key}: must be a non-empty string")
    if absolute and not value.startswith("/"):
        raise _bad(f"{where}{key}: must be an absolute path")
    return value


def _integer(obj: Mapping[str, Any], key: str, default: int, maximum: int) -> int:
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise _bad(f"{key}: must be an integer from 1 to {maximum}")
    return value


def parse_engine(engine: object) -> Engine:
    """The ``engine`` object, the same shape in build and push requests: an absolute client,
    an explicit local Unix socket (TCP and SSH endpoints refused), an optional builder."""
    if not isinstance(engine, dict):
        raise _bad("engine: must be an object")
    _only(engine, "engine", {"executable", "socket", "builder"}, set())
    builder = engine["builder"]
    if builder is not None:
        builder = _string(engine, "builder", "engine.", absolute=True)
    socket = _string(engine, "socket", "engine.")
    if not socket.startswith("/"):
        raise ImageInputError(
            "engine_refused",
            f"engine.socket: {socket!r}: only an explicit local Unix socket path is supported "
            "(TCP and SSH endpoints are refused)",
        )
    return Engine(
        executable=_string(engine, "executable", "engine.", absolute=True),
        socket=socket,
        builder=builder,
    )


def parse_build_request(obj: object) -> BuildRequest:
    if not isinstance(obj, dict):
        raise _bad("the build request must be a JSON object")
    _only(
        obj,
        "request",
        {
            "schema",
            "bundle",
            "interface",
            "base_image",
            "platform",
            "tag",
            "requirements",
            "wheelhouse",
            "engine",
        },
        {"timeout_ms", "max_log_bytes"},
    )
    if obj["schema"] != SCHEMA:
        raise _bad(f"schema: must be {SCHEMA!r}")
    engine = parse_engine(obj["engine"])
    request = BuildRequest(
        bundle=_string(obj, "bundle", "", absolute=True),
        interface=_string(obj, "interface", ""),
        base_image=_string(obj, "base_image", ""),
        platform=_string(obj, "platform", ""),
        tag=_string(obj, "tag", ""),
        requirements=_string(obj, "requirements", "", absolute=True),
        wheelhouse=_string(obj, "wheelhouse", "", absolute=True),
        engine=engine,
        timeout_ms=_integer(obj, "timeout_ms", TIMEOUT_DEFAULT, TIMEOUT_MAX),
        max_log_bytes=_integer(obj, "max_log_bytes", LOG_DEFAULT, LOG_MAX),
    )
    from svcc.compiler.registry import servable_targets

    interfaces = servable_targets()  # any servable target's bundle can be an image
    if request.interface not in interfaces:
        raise _bad(f"interface: must be one of {', '.join(interfaces)}")
    if request.platform not in PLATFORMS:
        raise _bad(f"platform: must be one of {', '.join(PLATFORMS)}")
    return request


@frozen(kw_only=True)
class PluginIdentity:
    """The installed extension a grant is bound to."""

    name: str
    version: str
    sha256: str
    lock_sha256: str


def _differences(granted: object, wanted: object, prefix: str) -> list[str]:
    if isinstance(granted, dict) and isinstance(wanted, dict):
        out: list[str] = []
        for key in sorted(set(granted) | set(wanted)):
            out += _differences(granted.get(key), wanted.get(key), f"{prefix}{key}.")
        return out
    # literal match: no normalisation (type included: 1 != "1", null != "")
    same = type(granted) is type(wanted) and granted == wanted
    return [] if same else [prefix.rstrip(".")]


def check_build_grant(policy: object, request: BuildRequest, plugin: PluginIdentity) -> None:
    """An ``image.build`` grant with both permissions, bound literally to this extension and
    every target field; otherwise ``grant_missing`` / ``grant_mismatch`` naming the fields."""
    if not isinstance(policy, dict) or policy.get("schema") != "svc.operator-policy/v1":
        raise ImageInputError("grant_missing", "operator policy: not svc.operator-policy/v1")
    grants = policy.get("grants")
    if not isinstance(grants, list):
        raise ImageInputError("grant_missing", "operator policy: grants must be a list")
    wanted = {"plugin": asdict(plugin), "target": request.target_fields()}
    best: list[str] | None = None
    for grant in grants:
        if not isinstance(grant, dict) or grant.get("operation") != "image.build":
            continue
        permissions = grant.get("permissions")
        problems = []
        if not isinstance(permissions, list) or set(permissions) != BUILD_PERMISSIONS:
            problems.append("permissions")
        for key in ("plugin", "target"):
            problems += _differences(grant.get(key), wanted[key], f"{key}.")
        if not problems:
            return
        if best is None or len(problems) < len(best):
            best = problems
    if best is None:
        raise ImageInputError("grant_missing", "operator policy: no image.build grant")
    raise ImageInputError("grant_mismatch", "image.build grant does not match: " + ", ".join(best))
