"""Execution policies behind one loader: ``svc.execution/v1`` (a local process per call,
:mod:`.v1`) and ``svc.execution/v2`` (a container per call, :mod:`.v2`).

A policy file says which it is by its ``schema``; :func:`load_execution` reads the file once
(bounded, UTF-8, strict JSON), tells the two apart and checks the runtime-image options that
only v2 takes. Every caller (single files, repositories, the analysis service) loads through
it, so a refusal is worded the same wherever a policy is given. The schemas are documented in
``docs/execution-policy.md``.
"""

import json
from pathlib import Path
from typing import Any, Final, overload

from svcc.contracts.errors import InputError, UsageError
from svcc.contracts.policy.v1 import POLICY_SCHEMA, ExecutionPolicy, parse_policy
from svcc.contracts.policy.v2 import (
    POLICY_V2_SCHEMA,
    ExecutionPolicyV2,
    OciExecution,
    check_image_options,
    image_options_without_policy,
    parse_policy_v2,
)

__all__ = [
    "AnyExecution",
    "load_execution",
    "read_policy_json",
    "execution_mode",
    "image_options_without_policy",
    "MAX_POLICY_BYTES",
    "POLICY_SCHEMA",
    "ExecutionPolicy",
    "parse_policy",
    "POLICY_V2_SCHEMA",
    "ExecutionPolicyV2",
    "OciExecution",
    "parse_policy_v2",
]

MAX_POLICY_BYTES: Final = 64 * 1024

AnyExecution = ExecutionPolicy | OciExecution


@overload
def load_execution(
    path: str | Path, image: str | None = None, platform: str | None = None, *, local_only: str
) -> ExecutionPolicy: ...


@overload
def load_execution(
    path: str | Path,
    image: str | None = None,
    platform: str | None = None,
    *,
    local_only: None = None,
) -> AnyExecution: ...


def load_execution(
    path: str | Path,
    image: str | None = None,
    platform: str | None = None,
    *,
    local_only: str | None = None,
) -> AnyExecution:
    """The execution policy file, v1 or v2 by its ``schema``, with the image options (v2 only).

    ``local_only`` names what only a v1 policy can govern (``"a repository bundle"``): a v2
    policy is then a usage error (exit 2) saying so."""
    path = Path(path)
    data = read_policy_json(path)
    if isinstance(data, dict) and data.get("schema") == POLICY_V2_SCHEMA:
        if local_only is not None:
            raise UsageError(
                f"{path}: {POLICY_V2_SCHEMA} (a container per call) serves single-file "
                f"bundles; {local_only} is governed by an svc.execution/v1 policy (a local "
                "process per call)"
            )
        policy = parse_policy_v2(data, str(path))
        image, platform = check_image_options(image, platform)
        return OciExecution(policy=policy, image=image, platform=platform)  # type: ignore[arg-type]
    v1 = parse_policy(data, str(path))
    if image is not None or platform is not None:
        raise UsageError(
            "--runtime-image and --runtime-platform are for svc.execution/v2 policies; "
            f"{path} is svc.execution/v1 (local-process)"
        )
    return v1


def execution_mode(policy: AnyExecution | None) -> dict[str, str]:
    """The ``execution`` record of a manifest and of a compile result: one shape everywhere."""
    if policy is None:
        return {"mode": "direct"}
    if isinstance(policy, OciExecution):
        return {
            "mode": "governed",
            "backend": "oci-container",
            "image": policy.image,
            "platform": policy.platform,
        }
    return {"mode": "governed", "backend": "local-process"}


def read_policy_json(path: str | Path) -> object:
    """A policy file's JSON (v1 or v2): bounded, UTF-8, no NaN/Infinity, one-line errors."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_POLICY_BYTES:
            raise InputError(f"{path}: over the {MAX_POLICY_BYTES}-byte policy limit")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data: Any = json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON: {exc}") from None
    return data


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")
