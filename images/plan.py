"""``svcc image plan``: the request files of a build and a push, and the operator policy they
need, written for the user instead of by hand.

``build.json`` (svc.oci-build/v1) comes from the options; ``push.json`` (svc.oci-push/v1)
needs the build's result (image id, inputs digest), so it is written once ``--build-result``
is given. The policy is a *proposal*: exactly the ``image.build`` and ``image.push`` grants
these requests need, bound to the enabled extension, for an operator to review. It carries
``"proposed_by": "svcc image plan"`` and the core refuses any operator policy that still does
(``refuse_proposal``): svcc never treats its own proposal as a grant; the operator removes the
field once they have read it. Every request is validated by the same parsers the core and the
extension use, and each grant is checked against its request before anything is written.
"""

import json
from pathlib import Path
from typing import Any, Final

from attrs import asdict, frozen
from svcc.images.errors import ImageInputError
from svcc.images.push_request import (
    PUSH_PERMISSIONS,
    check_push_grant,
    parse_push_request,
)
from svcc.images.push_request import SCHEMA as PUSH_SCHEMA
from svcc.images.reference import parse_reference
from svcc.images.request import (
    BUILD_PERMISSIONS,
    PluginIdentity,
    check_build_grant,
    parse_build_request,
)
from svcc.images.request import SCHEMA as BUILD_SCHEMA

PROPOSAL_KEY: Final = "proposed_by"
PROPOSER: Final = "svcc image plan"
POLICY_FILE: Final = "operator-policy.proposed.json"


def refuse_proposal(policy: object, path: object) -> None:
    """A policy svcc proposed is not a grant until an operator has made it theirs."""
    if isinstance(policy, dict) and PROPOSAL_KEY in policy:
        raise ImageInputError(
            "grant_missing",
            f"operator policy {path}: a proposal ({PROPOSAL_KEY}: {policy[PROPOSAL_KEY]!r}), "
            f"not a grant: an operator reviews it and removes {PROPOSAL_KEY!r} to grant it",
        )


@frozen(kw_only=True)
class PlanInputs:
    bundle: Path
    interface: str
    base_image: str
    platform: str
    tag: str
    destination: str
    lock: Path
    wheelhouse: Path
    engine_executable: str
    engine_socket: str
    engine_builder: str | None
    credentials: Path
    ca_file: Path | None
    build_timeout_ms: int
    push_timeout_ms: int


def _abs(path: Path) -> str:
    return str(path.absolute())


def build_request(inputs: PlanInputs) -> dict[str, Any]:
    return {
        "schema": BUILD_SCHEMA,
        "bundle": _abs(inputs.bundle),
        "interface": inputs.interface,
        "base_image": inputs.base_image,
        "platform": inputs.platform,
        "tag": inputs.tag,
        "requirements": _abs(inputs.lock),
        "wheelhouse": _abs(inputs.wheelhouse),
        "engine": _engine(inputs),
        "timeout_ms": inputs.build_timeout_ms,
    }


def _engine(inputs: PlanInputs) -> dict[str, Any]:
    return {
        "executable": inputs.engine_executable,
        "socket": inputs.engine_socket,
        "builder": inputs.engine_builder,
    }


def push_request(inputs: PlanInputs, build_result: dict[str, Any]) -> dict[str, Any]:
    missing = [k for k in ("image_id", "inputs_sha256", "platform") if k not in build_result]
    if missing:
        raise ImageInputError(
            "request_invalid", f"--build-result: not a build result (no {', '.join(missing)})"
        )
    if build_result["platform"] != inputs.platform:
        raise ImageInputError(
            "request_invalid",
            f"--build-result is for {build_result['platform']}, the plan for {inputs.platform}",
        )
    authentication: dict[str, str] = {"config_file": _abs(inputs.credentials)}
    if inputs.ca_file is not None:
        authentication["ca_file"] = _abs(inputs.ca_file)
    return {
        "schema": PUSH_SCHEMA,
        "image_id": build_result["image_id"],
        "platform": build_result["platform"],
        "inputs_sha256": build_result["inputs_sha256"],
        "destination": inputs.destination,
        "engine": _engine(inputs),
        "authentication": authentication,
        "timeout_ms": inputs.push_timeout_ms,
    }


def proposed_policy(
    build: dict[str, Any], destination: str, plugin: PluginIdentity
) -> dict[str, Any]:
    parsed = parse_build_request(build)
    ref = parse_reference(destination, what="destination", require_tag=True)
    repository = f"{ref.registry}/{ref.repository}"
    return {
        "schema": "svc.operator-policy/v1",
        PROPOSAL_KEY: PROPOSER,
        "grants": [
            {
                "operation": "image.build",
                "permissions": sorted(BUILD_PERMISSIONS),
                "plugin": asdict(plugin),
                "target": parsed.target_fields(),
            },
            {
                "operation": "image.push",
                "permissions": sorted(PUSH_PERMISSIONS),
                "plugin": asdict(plugin),
                "repository": repository,
            },
        ],
    }


def _text(value: object) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def _write(path: Path, data: bytes) -> None:
    """New, or already holding exactly ``data``; a different file is never replaced."""
    if path.is_symlink():
        raise ImageInputError("request_invalid", f"{path}: a symlink; not written")
    if path.exists():
        if path.read_bytes() != data:
            raise ImageInputError(
                "request_invalid", f"{path} exists with other content; choose a new --output-dir"
            )
        return
    with path.open("xb") as handle:
        handle.write(data)


def write_plan(
    inputs: PlanInputs,
    plugin: PluginIdentity,
    output_dir: Path,
    build_result: dict[str, Any] | None,
) -> dict[str, str]:
    """Validate everything, then write; the paths written by name."""
    build = build_request(inputs)
    parse_build_request(build)
    parse_reference(inputs.base_image, what="base image", require_digest=True)
    policy = proposed_policy(build, inputs.destination, plugin)
    check_build_grant(policy, parse_build_request(build), plugin)
    files = {"build.json": _text(build), POLICY_FILE: _text(policy)}
    if build_result is not None:
        push = push_request(inputs, build_result)
        check_push_grant(policy, parse_push_request(push), plugin)
        files["push.json"] = _text(push)
    else:  # the destination is still checked now, with a placeholder image
        placeholder = {"image_id": "sha256:" + "0" * 64, "inputs_sha256": "0" * 64}
        check_push_grant(
            policy,
            parse_push_request(push_request(inputs, {**placeholder, "platform": inputs.platform})),
            plugin,
        )
    output_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, data in files.items():
        _write(output_dir / name, data)
        written[name] = str((output_dir / name).absolute())
    return written
