"""Execution policy ``svc.execution/v1`` (governed local-process execution): its schema.

Strict: unknown keys, wrong types and out-of-range limits are input errors (exit 2), each
named by its JSON path. ``{}`` is a valid policy and means every default. A control the
local-process backend cannot enforce (network or subprocess denial) is understood but
refused (exit 1): a policy is only accepted when every control it states will hold.
The schema is documented in ``docs/execution-policy.md``; files are read and told from v2
by :func:`svcc.contracts.policy.load_execution`.
"""

import json
import re
from typing import Any, Final, Literal

from attrs import field, frozen, validators
from svcc.contracts.errors import IneligibleError, InputError

POLICY_SCHEMA: Final = "svc.execution/v1"
MIB: Final = 1024 * 1024
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_USER_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?|[0-9]{1,10}")

Control = Literal["inherit", "allow", "deny"]
UNENFORCEABLE: Final = ("deny",)


def _between(low: int, high: int) -> Any:
    return [validators.instance_of(int), validators.ge(low), validators.le(high)]


@frozen(kw_only=True)
class Limits:
    wall_time_ms: int = field(default=5000, validator=_between(1, 3_600_000))
    max_input_bytes: int = field(default=MIB, validator=_between(1, 1024 * MIB))
    max_output_bytes: int = field(default=MIB, validator=_between(1, 1024 * MIB))
    max_concurrent_calls: int = field(default=8, validator=_between(1, 1024))
    max_queued_calls: int = field(default=64, validator=_between(0, 100_000))
    max_log_bytes: int = field(default=64 * 1024, validator=_between(0, 1024 * MIB))


def _env_names(_: object, __: object, names: tuple[str, ...]) -> None:
    for name in names:
        if not _ENV_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not an environment variable name")
    if len(set(names)) != len(names):
        raise ValueError("names are listed twice")


@frozen(kw_only=True)
class Environment:
    allow: tuple[str, ...] = field(default=(), validator=_env_names)
    inherit: bool = False


def _user_name(_: object, __: object, name: str | None) -> None:
    if name is not None and not _USER_NAME.fullmatch(name):
        raise ValueError(f"worker_user: {name!r} is not a user name or numeric user id")


@frozen(kw_only=True)
class ExecutionPolicy:
    schema: Literal["svc.execution/v1"] = POLICY_SCHEMA
    limits: Limits = Limits()
    environment: Environment = Environment()
    working_directory: Literal["fresh"] = "fresh"
    network: Control = "inherit"
    subprocess: Control = "inherit"
    worker_user: str | None = field(default=None, validator=_user_name)

    def to_json(self) -> dict[str, Any]:
        """The normalised policy, every default written out (what the bundle carries)."""
        return {
            "schema": self.schema,
            "limits": {
                "wall_time_ms": self.limits.wall_time_ms,
                "max_input_bytes": self.limits.max_input_bytes,
                "max_output_bytes": self.limits.max_output_bytes,
                "max_concurrent_calls": self.limits.max_concurrent_calls,
                "max_queued_calls": self.limits.max_queued_calls,
                "max_log_bytes": self.limits.max_log_bytes,
            },
            "environment": {
                "allow": sorted(self.environment.allow),
                "inherit": self.environment.inherit,
            },
            "working_directory": self.working_directory,
            "network": self.network,
            "subprocess": self.subprocess,
            "worker_user": self.worker_user,
        }


def _converter() -> Any:
    from cattrs import Converter

    converter = Converter(forbid_extra_keys=True, detailed_validation=True)
    converter.register_structure_hook(bool, _strict_bool)
    converter.register_structure_hook(int, _strict_int)
    return converter


def _strict_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {json.dumps(value)}")
    return value


def _strict_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {json.dumps(value)}")
    return value


def parse_policy(data: Any, origin: str) -> ExecutionPolicy:
    """A policy from decoded JSON; problems are :class:`InputError` naming the field."""
    from cattrs import ClassValidationError
    from svcc.contracts.explain import structure_problems

    if not isinstance(data, dict):
        raise InputError(f"{origin}: an execution policy is a JSON object")
    try:
        policy: ExecutionPolicy = _converter().structure(data, ExecutionPolicy)
    except ClassValidationError as exc:
        problems = structure_problems(exc, "$")
        raise InputError(f"{origin}: invalid execution policy: {'; '.join(problems)}") from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"{origin}: invalid execution policy: {exc}") from None
    for control in ("network", "subprocess"):
        if getattr(policy, control) in UNENFORCEABLE:
            raise IneligibleError(
                f"{origin}: {control}: {getattr(policy, control)!r} cannot be enforced by the "
                "local-process backend (it has no sandbox); use 'inherit' or 'allow'"
            )
    return policy
