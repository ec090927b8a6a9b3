"""The execution files of an OCI-governed bundle (policy ``svc.execution/v2``).

``execution/policy.json`` is the normalised v2 policy, ``execution/runtime.json`` names the
runtime image (full id, platform, worker protocol), and ``execution/plans/<name>.json``
binds each capability to the source, the policy and the image. The server side of the
runtime is copied as ``svc_runtime/container/`` and ``svc_runtime/wire.py``; the worker
itself lives in the runtime image (target ``runtime-image``). The interface files are not
touched: they are byte-identical to the direct bundle's.
"""

from collections.abc import Mapping
from typing import Final

from svcc.backends._common.governed import WIRE_MODULES, plan_files
from svcc.backends._common.runtime_copy import runtime_files
from svcc.backends._common.schema import LoweringError
from svcc.contracts.policy import OciExecution
from svcc.contracts.program import Program
from svcc.ir.canonical import canonical_json, digest_bytes

PLAN_SCHEMA: Final = "svc.execution-plan/v2"
CONTAINER_PACKAGE: Final = "svc_runtime/container"
CONTAINER_MODULES: Final = ("engine", "executor")


def governed_oci_files(
    program: Program, execution: OciExecution, files: Mapping[str, bytes]
) -> dict[str, bytes]:
    """The files an OCI-governed bundle adds; ``files`` are the bundle's files so far."""
    streams = [c.name for ir in program.modules for c in ir.capabilities if c.stream is not None]
    if streams:
        raise LoweringError(
            f"{', '.join(streams)}: a stream is served in direct mode and by local-process "
            "workers (policy v1), not by the container backend (policy v2), whose worker "
            "protocol answers a call with one result; select other functions or use a v1 "
            "policy"
        )
    policy_bytes = canonical_json(execution.policy.to_json())
    runtime_bytes = canonical_json(execution.runtime_json())
    out = {"execution/policy.json": policy_bytes, "execution/runtime.json": runtime_bytes}
    out |= plan_files(
        program,
        files,
        lambda cap: {
            "schema": PLAN_SCHEMA,
            "name": cap.name,
            "policy_digest": digest_bytes(policy_bytes),
            "runtime_digest": digest_bytes(runtime_bytes),
        },
    )
    out |= runtime_files(
        CONTAINER_MODULES, package="svcc.runtime.container", into=CONTAINER_PACKAGE
    )
    out |= runtime_files(WIRE_MODULES)
    return out
