"""Assembling a service bundle: source layout, runtime copy, analysis documents, manifest.

Every bundle (REST, MCP; direct or governed) is the same skeleton around its own server
file, so the rules live here once: the source keeps its exact bytes (a ``.py`` file is
copied as read, so its encoding declaration stays true; a notebook's converted module is
written as UTF-8 and the notebook's original bytes are kept under ``original/``), a dotted
module name becomes packages under ``source/``, the runtime modules are copied byte for
byte from ``svcc.runtime`` into ``svc_runtime/``, and the manifest hashes every other file.
"""

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from svcc.backends._common.governed import governed_files
from svcc.backends._common.governed_oci import governed_oci_files
from svcc.backends._common.runtime_copy import runtime_files
from svcc.compiler.policy import execution_mode
from svcc.compiler.policy_v2 import OciExecution
from svcc.compiler.target import BundleSpec, EmitContext, FileTree
from svcc.ir.canonical import canonical_json, digest_bytes
from svcc.ir.model import ModuleIR
from svcc.ir.serde import ir_to_json

from svcc import __version__

IR_FILE: Final = "capability-ir.json"
READINESS_FILE: Final = "readiness.json"


def pretty_json(value: object) -> bytes:
    """Sorted, indented, one trailing newline: deterministic and readable in review."""
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def source_files(ir: ModuleIR, ctx: EmitContext) -> tuple[str, dict[str, bytes]]:
    """``(module path, files)``: the module under ``source/`` with package ``__init__``s
    (empty unless the local import closure holds the real ones) and the closure's files
    (the modules beside the source that it imports), each with its exact bytes."""
    parts = ir.module.split(".")
    files: dict[str, bytes] = {}
    for depth in range(1, len(parts)):
        files["/".join(["source", *parts[:depth], "__init__.py"])] = b""
    files |= dict(ctx.local_files)
    if ctx.module_is_package:
        module_path = "/".join(["source", *parts, "__init__.py"])
    else:
        module_path = "/".join(["source", *parts]) + ".py"
    if ir.source.format == "notebook":
        files[module_path] = ctx.module_text.encode("utf-8")
        files[f"original/{ctx.source_path}"] = ctx.source_bytes
    else:
        files[module_path] = ctx.source_bytes
    return module_path, files


def analysis_files(ir: ModuleIR, ctx: EmitContext) -> dict[str, bytes]:
    """The selected IR and the module's readiness report."""
    return {
        IR_FILE: ir_to_json(ir),
        READINESS_FILE: canonical_json(ctx.readiness.to_json()),
    }


def requirement_files(server: Iterable[str], ctx: EmitContext) -> dict[str, bytes]:
    """``requirements.txt`` (the server's own, sorted) and, when the user declared
    dependencies, ``application-requirements.txt`` (as declared, in file order)."""
    files = {"requirements.txt": "".join(f"{r}\n" for r in sorted(server)).encode()}
    if ctx.requirements:
        files["application-requirements.txt"] = "".join(
            f"{line}\n" for line in ctx.requirements
        ).encode()
    return files


def with_manifest(
    name: str,
    schema: str,
    files: Mapping[str, bytes],
    *,
    ir: ModuleIR,
    module_path: str,
    interface: str,
    execution: Mapping[str, Any],
    allow: Sequence[str] = (),
) -> FileTree:
    """The tree plus its manifest, which hashes every other file and links the digests.
    ``allow``: the security effect kinds opted into (recorded when any)."""
    manifest = {
        "schema": schema,
        "generator": {"name": "svcc", "version": __version__},
        "interface": interface,
        "module": ir.module,
        "execution": dict(execution),
        "capabilities": [{"id": c.id, "name": c.name} for c in ir.capabilities],
        "source": {
            "path": module_path,
            "digest": digest_bytes(files[module_path]),
            "original": ir.source.path,
            "original_digest": ir.source.sha256,
            "format": ir.source.format,
        },
        "ir_digest": digest_bytes(files[IR_FILE]),
        "readiness_digest": digest_bytes(files[READINESS_FILE]),
        "files": {path: digest_bytes(data) for path, data in sorted(files.items())},
        **({"allow": list(allow)} if allow else {}),
    }
    return FileTree.of({**files, name: canonical_json(manifest)})


def assemble(
    kind: BundleSpec, ir: ModuleIR, ctx: EmitContext, interface_files: Mapping[str, bytes]
) -> FileTree:
    """The whole bundle: shared skeleton, the interface's own files, governed files when
    ``ctx.execution`` is set, and the manifest over all of them."""
    module_path, files = source_files(ir, ctx)
    files |= analysis_files(ir, ctx)
    files |= runtime_files(kind.runtime_modules)
    if ctx.execution is not None:
        files |= runtime_files(kind.governed_runtime_modules, with_init=False)
    files |= requirement_files(kind.server_requirements, ctx)
    files |= interface_files
    if isinstance(ctx.execution, OciExecution):
        files |= governed_oci_files(ir, ctx.execution, files, module_path)
    elif ctx.execution is not None:
        files |= governed_files(ir, ctx.execution, files, module_path)
    return with_manifest(
        kind.manifest,
        kind.manifest_schema,
        files,
        ir=ir,
        module_path=module_path,
        interface=kind.interface,
        execution=execution_mode(ctx.execution),
        allow=ctx.readiness.allow,
    )
