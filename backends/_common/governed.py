"""The execution files of a governed bundle (policy ``svc.execution/v1``, local-process).

``execution/policy.json`` is the normalised policy (every default written out),
``execution/plans/<name>.json`` binds each capability to the source digest, the policy
digest and its call shape, and ``execution/worker.py`` starts the worker template; the
runtime is copied as ``svc_runtime/governed/`` and ``svc_runtime/wire.py``. The interface
files (OpenAPI, tool definitions) are not touched: they are byte-identical to the direct
bundle's.
"""

from collections.abc import Callable, Mapping
from typing import Any, Final

from svcc import __version__
from svcc.backends._common.runtime_copy import runtime_files
from svcc.backends._common.schema import LoweringError
from svcc.backends.templates import render
from svcc.contracts.policy import ExecutionPolicy
from svcc.contracts.program import Program
from svcc.ir.canonical import canonical_json, digest_bytes
from svcc.ir.model import Capability, ModuleIR

PLAN_SCHEMA: Final = "svc.execution-plan/v1"
GOVERNED_PACKAGE: Final = "svc_runtime/governed"
GOVERNED_MODULES: Final = ("executor", "processes", "scratch", "template")
# Shared with the OCI backend and the container worker (``svc_runtime/wire.py``).
WIRE_MODULES: Final = ("wire",)


def call_shape(cap: Capability) -> dict[str, Any]:
    return {
        "name": cap.name,
        "execution": cap.execution,
        "params": [
            {"name": p.name, "kind": p.kind, "default": p.default is not None} for p in cap.params
        ],
    }


def declared_sources(files: Mapping[str, bytes]) -> dict[str, str]:
    """The digest of every file under ``source/``: what each plan binds and what a worker
    verifies before importing any of them (v1, v2, single-file and repository bundles)."""
    return {
        path: digest_bytes(data)
        for path, data in sorted(files.items())
        if path.startswith("source/")
    }


def source_binding(module_path: str, sources: Mapping[str, str]) -> dict[str, Any]:
    """A plan's ``source``: the capability's module file and every declared source file."""
    return {"path": module_path, "digest": sources[module_path], "files": dict(sources)}


# Libraries whose state does not survive a fork once initialised (threads, device contexts).
FORK_UNSAFE: Final = ("jax", "tensorflow", "torch")


def fork_unsafe_service(ir: ModuleIR) -> None:
    """Refuse a service class whose module imports a fork-unsafe library: the worker
    template builds the instance before it forks each worker (``template.preload``)."""
    if not ir.services:
        return
    roots = sorted(
        {i.module.split(".")[0] for i in ir.imports if not i.type_checking and i.level == 0}
        & set(FORK_UNSAFE)
    )
    if roots:
        raise LoweringError(
            f"service class {ir.services[0].name}: the module imports {', '.join(roots)}, which "
            "cannot be forked once initialised, and local-process workers (policy v1) are forked "
            "from a template that built the instance; serve it in direct mode or with the "
            "container backend (policy v2), which builds it in each container"
        )


def plan_files(
    program: Program, files: Mapping[str, bytes], fields: Callable[[Capability], dict[str, Any]]
) -> dict[str, bytes]:
    """``execution/plans/<name>.json`` for every selected capability: its id, module and
    module file with every declared source file (``files``: the bundle's so far), and
    ``fields(cap)`` (the policy's schema, digests and call shape)."""
    sources = declared_sources(files)
    out = {}
    for ir in program.modules:
        for cap in ir.capabilities:
            plan = {
                "capability": cap.id,
                "module": ir.module,
                "source": source_binding(program.module_path(ir.module), sources),
                **fields(cap),
            }
            out[f"execution/plans/{cap.name}.json"] = canonical_json(plan)
    return out


def governed_files(
    program: Program, policy: ExecutionPolicy, files: Mapping[str, bytes]
) -> dict[str, bytes]:
    """The files a governed bundle adds: one plan per capability binding its module, its
    module file, every declared source file and the policy (and what the program's layout
    adds: a repository's function and declared modules), so the worker imports through the
    same closed set as a direct server. ``files`` are the bundle's files so far."""
    for ir in program.modules:
        fork_unsafe_service(ir)
    policy_bytes = canonical_json(policy.to_json())
    out = {"execution/policy.json": policy_bytes}
    out |= plan_files(
        program,
        files,
        lambda cap: {
            "schema": PLAN_SCHEMA,
            "policy_digest": digest_bytes(policy_bytes),
            "call": call_shape(cap),
            **program.layout.plan_fields(cap),
        },
    )
    out["execution/worker.py"] = render(
        "svcc.backends._common", "worker.py.jinja", module=program.name, version=__version__
    )
    out |= runtime_files(GOVERNED_MODULES, package="svcc.runtime.governed", into=GOVERNED_PACKAGE)
    out |= runtime_files(WIRE_MODULES)
    return out
