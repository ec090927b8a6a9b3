"""Execution policy ``svc.execution/v2`` (governed OCI-container execution).

Strict like v1 (:mod:`svcc.contracts.policy.v1`): unknown keys, wrong types and out-of-range
values are input errors (exit 2) named by their JSON path; ``{"schema": "svc.execution/v2"}``
means every default. The schema key is what tells v2 from v1, so a v2 policy must state it.
Every control a v2 policy states is enforced by the container engine; ``network:
"inherit"`` would leave the sandbox open and is refused (exit 1).

A v2 policy needs the runtime image, named by its full local image id (``sha256:`` and 64
hex digits: immutable, never pulled), and its platform. Generation checks only their
form; the generated server checks the image against the engine before serving.
The schema is documented in ``docs/execution-policy.md``; files are read and told from v1
by :func:`svcc.contracts.policy.load_execution`.
"""

import re
from typing import Any, Final, Literal

from attrs import field, frozen, validators
from svcc.contracts.errors import IneligibleError, InputError, UsageError
from svcc.contracts.policy.v1 import MIB, _converter, _env_names

POLICY_V2_SCHEMA: Final = "svc.execution/v2"
IMAGE_ID: Final = re.compile(r"sha256:[0-9a-f]{64}")
PLATFORMS: Final = ("linux/amd64", "linux/arm64")
WORKER_PROTOCOL: Final = "svc.container-worker/v1"


def _between(low: int, high: int) -> Any:
    return [validators.instance_of(int), validators.ge(low), validators.le(high)]


@frozen(kw_only=True)
class ContainerLimits:
    wall_time_ms: int = field(default=5000, validator=_between(100, 3_600_000))
    max_input_bytes: int = field(default=MIB, validator=_between(1, 64 * MIB))
    max_output_bytes: int = field(default=MIB, validator=_between(1, 64 * MIB))
    max_concurrent_calls: int = field(default=4, validator=_between(1, 256))
    memory_mib: int = field(default=256, validator=_between(16, 64 * 1024))
    cpus_millis: int = field(default=1000, validator=_between(10, 64_000))
    pids: int = field(default=64, validator=_between(8, 32_768))
    tmp_mib: int = field(default=16, validator=_between(1, 16 * 1024))


@frozen(kw_only=True)
class Pool:
    size: int = field(default=2, validator=_between(0, 64))


@frozen(kw_only=True)
class ContainerEnvironment:
    allow: tuple[str, ...] = field(default=(), validator=_env_names)


@frozen(kw_only=True)
class ExecutionPolicyV2:
    schema: Literal["svc.execution/v2"]
    limits: ContainerLimits = ContainerLimits()
    environment: ContainerEnvironment = ContainerEnvironment()
    network: Literal["deny", "inherit"] = "deny"
    pool: Pool = Pool()

    def to_json(self) -> dict[str, Any]:
        """The normalised policy, every default written out (what the bundle carries)."""
        limits = self.limits
        return {
            "schema": self.schema,
            "limits": {
                name: getattr(limits, name)
                for name in (
                    "wall_time_ms",
                    "max_input_bytes",
                    "max_output_bytes",
                    "max_concurrent_calls",
                    "memory_mib",
                    "cpus_millis",
                    "pids",
                    "tmp_mib",
                )
            },
            "environment": {"allow": sorted(self.environment.allow)},
            "network": self.network,
            "pool": {"size": self.pool.size},
        }


@frozen(kw_only=True)
class OciExecution:
    """A v2 policy with the runtime image it runs in: everything an OCI bundle is planned for."""

    policy: ExecutionPolicyV2
    image: str
    platform: Literal["linux/amd64", "linux/arm64"]

    def runtime_json(self) -> dict[str, Any]:
        return {
            "schema": "svc.runtime-image/v1",
            "image": self.image,
            "platform": self.platform,
            "worker_protocol": WORKER_PROTOCOL,
        }


def parse_policy_v2(data: dict[str, Any], origin: str) -> ExecutionPolicyV2:
    from cattrs import ClassValidationError
    from svcc.contracts.explain import structure_problems

    try:
        policy: ExecutionPolicyV2 = _converter().structure(data, ExecutionPolicyV2)
    except ClassValidationError as exc:
        problems = structure_problems(exc, "$")
        raise InputError(f"{origin}: invalid execution policy: {'; '.join(problems)}") from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"{origin}: invalid execution policy: {exc}") from None
    if policy.network != "deny":
        raise IneligibleError(
            f"{origin}: network: 'inherit' would leave the container's network open; "
            "governed OCI execution only runs calls without a network ('deny')"
        )
    return policy


def check_image_options(image: str | None, platform: str | None) -> tuple[str, str]:
    """The runtime image id and platform of an OCI bundle, or a usage error (exit 2)."""
    if image is None or platform is None:
        missing = [
            name
            for name, value in (("--runtime-image", image), ("--runtime-platform", platform))
            if value is None
        ]
        raise UsageError(f"a svc.execution/v2 policy needs {' and '.join(missing)}")
    if not IMAGE_ID.fullmatch(image):
        raise UsageError(
            f"--runtime-image {image!r}: give the full local image id (sha256: and 64 lowercase "
            "hex digits, as `docker image inspect --format '{{.Id}}'` prints); tags, short ids "
            "and registry references are refused"
        )
    if platform not in PLATFORMS:
        raise UsageError(f"--runtime-platform {platform!r}: one of {', '.join(PLATFORMS)}")
    return image, platform


def image_options_without_policy(image: str | None, platform: str | None) -> None:
    if image is not None or platform is not None:
        raise UsageError("--runtime-image and --runtime-platform need --execution-policy (v2)")
