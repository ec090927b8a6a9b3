"""Assembling a service bundle: source layout, runtime copy, analysis documents, manifest.

Every bundle (REST, MCP; a file or a repository; direct or governed) is the same skeleton
around its own server file, so the rules live here once: the source keeps its exact bytes (a
``.py`` file is copied as read, so its encoding declaration stays true; a notebook's
converted module is written as UTF-8 and the notebook's original bytes are kept under
``original/``), a dotted module name becomes packages under ``source/``, the runtime modules
are copied byte for byte from ``svcc.runtime`` into ``svc_runtime/``, and the manifest hashes
every other file. What a repository bundle adds (``ctx.repository``): ``source/`` holds the
import closure of the selected capabilities under their module paths (namespace packages
stay marker-free), the IR document holds every selected module, and the manifest carries
``"bundle_kind": "repository"``, the declared modules, namespace and top-level packages and
the provenance.
"""

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from svcc import __version__
from svcc.backends._common.cog_shim import SHIM_FILE, shim_files
from svcc.backends._common.governed import governed_files, repository_governed_files
from svcc.backends._common.governed_oci import governed_oci_files
from svcc.backends._common.runtime_copy import runtime_files
from svcc.backends._common.schema import LoweringError
from svcc.compiler.passes.cog_shim import SHIM_MODULE
from svcc.contracts.policy import ExecutionPolicy, OciExecution, execution_mode
from svcc.contracts.target import BundleSpec, EmitContext, FileTree, RepositoryLayout
from svcc.ir.canonical import canonical_json, digest_bytes, json_utf8
from svcc.ir.model import ModuleIR
from svcc.ir.serde import ir_to_json, unstructure

IR_FILE: Final = "capability-ir.json"
READINESS_FILE: Final = "readiness.json"
REPOSITORY_IR_SCHEMA: Final = "svc.repository-ir/v1"


def pretty_json(value: object) -> bytes:
    """Sorted, indented, one trailing newline: deterministic and readable in review."""
    return json_utf8(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


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
    manifest: dict[str, Any] = {
        "schema": schema,
        "generator": {"name": "svcc", "version": __version__},
        "interface": interface,
        "module": ir.module,
        "execution": dict(execution),
        "capabilities": [{"id": c.id, "name": c.name} for c in ir.capabilities],
        "source": {  # a notebook's also lists the cells its served module keeps
            "path": module_path,
            "digest": digest_bytes(files[module_path]),
            "original": ir.source.path,
            "original_digest": ir.source.sha256,
            "format": ir.source.format,
            **_notebook_cells(ir),
        },
        "ir_digest": digest_bytes(files[IR_FILE]),
        "readiness_digest": digest_bytes(files[READINESS_FILE]),
        "files": {path: digest_bytes(data) for path, data in sorted(files.items())},
        **({"allow": list(allow)} if allow else {}),
    }
    return FileTree.of({**files, name: canonical_json(manifest)})


def _notebook_cells(ir: ModuleIR) -> dict[str, Any]:
    """For a notebook, the cells its served module holds (the IR's statements say where
    each one sits); the others were left out by their tags, nbdev directives or the
    slice, and ``readiness.json`` says why, cell by cell."""
    if ir.source.format != "notebook":
        return {}
    return {"cells_kept": sorted({s.span.cell for s in ir.statements if s.span.cell})}


def assemble(
    kind: BundleSpec, ir: ModuleIR, ctx: EmitContext, interface_files: Mapping[str, bytes]
) -> FileTree:
    """The whole bundle: shared skeleton, the interface's own files, governed files when
    ``ctx.execution`` is set, and the manifest over all of them; a repository's layout when
    ``ctx.repository`` is set."""
    if ctx.repository is not None:
        return _assemble_repository(kind, ctx.repository, ctx, interface_files)
    module_path, files = source_files(ir, ctx)
    files |= shim_files((ir,), files)
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


def merge_documents(into: dict[str, Any], part: Mapping[str, Any], what: str) -> None:
    """Merge one module's named definitions into a repository's, refusing a name two
    selected modules define differently."""
    for key, value in part.items():
        if key in into and into[key] != value:
            raise LoweringError(
                f"{what} {key!r} is defined differently by two selected modules; "
                "select capabilities of one of them"
            )
        into[key] = value


def _repository_ir(layout: RepositoryLayout) -> bytes:
    capabilities = [unstructure(c) for ir in layout.modules for c in ir.capabilities]
    return canonical_json(
        {
            "schema": REPOSITORY_IR_SCHEMA,
            "capabilities": sorted(capabilities, key=lambda c: c["id"]),
            "modules": [unstructure(ir) for ir in layout.modules],
        }
    )


def _assemble_repository(
    kind: BundleSpec,
    layout: RepositoryLayout,
    ctx: EmitContext,
    interface_files: Mapping[str, bytes],
) -> FileTree:
    names = [c.name for ir in layout.modules for c in ir.capabilities]
    if len(set(names)) != len(names):
        raise LoweringError("two selected capabilities have the same name")
    files: dict[str, bytes] = {s.bundle_path: s.data for s in layout.sources}
    shim = shim_files(layout.modules, files)
    files |= shim
    files |= {path: data for path, _, data in layout.data}  # verified at startup like source
    files[IR_FILE] = _repository_ir(layout)
    files[READINESS_FILE] = canonical_json(dict(layout.readiness))
    files |= runtime_files((*kind.runtime_modules, "repository"))
    if ctx.execution is not None:
        files |= runtime_files(kind.governed_runtime_modules, with_init=False)
    files |= requirement_files(kind.server_requirements, ctx)
    files |= interface_files
    modules = {s.module: s.bundle_path for s in layout.sources}
    packages = list(layout.packages)
    if shim:  # the finder imports the shim as it imports the repository's own modules
        modules[SHIM_MODULE] = SHIM_FILE
        packages = sorted({*packages, SHIM_MODULE})
    repository = {
        "modules": modules,
        "namespace_packages": list(layout.namespaces),
        "packages": packages,
    }
    if isinstance(ctx.execution, ExecutionPolicy):
        paths = {s.module: s.bundle_path for s in layout.sources}
        files |= repository_governed_files(
            layout.modules, paths, layout.name, ctx.execution, files, repository
        )
    capabilities = sorted(
        ({"id": c.id, "name": c.name} for ir in layout.modules for c in ir.capabilities),
        key=lambda c: c["id"],
    )
    manifest = {
        "schema": kind.manifest_schema,
        "bundle_kind": "repository",
        "generator": {"name": "svcc", "version": __version__},
        "interface": kind.interface,
        "module": layout.name,
        "execution": execution_mode(ctx.execution),
        "capabilities": capabilities,
        "repository": {
            **repository,
            "original_paths": {s.bundle_path: s.path for s in layout.sources},
            **({"data_files": {p: tree for p, tree, _ in layout.data}} if layout.data else {}),
        },
        "provenance": dict(layout.provenance),
        "ir_digest": digest_bytes(files[IR_FILE]),
        "readiness_digest": digest_bytes(files[READINESS_FILE]),
        "files": {path: digest_bytes(data) for path, data in sorted(files.items())},
    }
    return FileTree.of({**files, kind.manifest: canonical_json(manifest)})
