"""Assembling a service bundle: source layout, runtime copy, analysis documents, manifest.

Every bundle (REST, MCP; a file or a repository; direct or governed) is the same skeleton
around its own server file, so the rules live here once: the source keeps its exact bytes (a
``.py`` file is copied as read, so its encoding declaration stays true; a notebook's
converted module is written as UTF-8 and the notebook's original bytes are kept under
``original/``), a dotted module name becomes packages under ``source/``, the runtime modules
are copied byte for byte from ``svcc.runtime`` into ``svc_runtime/``, and the manifest hashes
every other file. A file and a directory are both a :class:`~svcc.contracts.program.Program`;
what outside tools read differently in their bundles (the IR document, the manifest's
``source`` or ``repository`` section) is the program's layout, asked here, never branched on.
"""

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from svcc import __version__
from svcc.backends._common.cog_shim import shim_files
from svcc.backends._common.governed import governed_files
from svcc.backends._common.governed_oci import governed_oci_files
from svcc.backends._common.runtime_copy import runtime_files
from svcc.backends._common.schema import LoweringError
from svcc.contracts.policy import OciExecution, execution_mode
from svcc.contracts.program import Program
from svcc.contracts.target import BundleSpec, EmitContext, FileTree
from svcc.ir.canonical import canonical_json, digest_bytes, json_utf8
from svcc.ir.model import ModuleIR

IR_FILE: Final = "capability-ir.json"
READINESS_FILE: Final = "readiness.json"


def pretty_json(value: object) -> bytes:
    """Sorted, indented, one trailing newline: deterministic and readable in review."""
    return json_utf8(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def requirement_files(server: Iterable[str], ctx: EmitContext) -> dict[str, bytes]:
    """``requirements.txt`` (the server's own, sorted) and, when the user declared
    dependencies, ``application-requirements.txt`` (as declared, in file order)."""
    files = {"requirements.txt": "".join(f"{r}\n" for r in sorted(server)).encode()}
    if ctx.requirements:
        files["application-requirements.txt"] = "".join(
            f"{line}\n" for line in ctx.requirements
        ).encode()
    return files


def assemble(
    kind: BundleSpec, ir: ModuleIR, ctx: EmitContext, interface_files: Mapping[str, bytes]
) -> FileTree:
    """The whole bundle of ``ctx.program``: its files, the analysis documents, the runtime,
    the interface's own files, governed files when ``ctx.execution`` is set, and the
    manifest over all of them. ``ir`` is the program's view (its name, every selected
    capability)."""
    program = ctx.program
    names = [c.name for c in ir.capabilities]
    if len(set(names)) != len(names):
        raise LoweringError("two selected capabilities have the same name")
    files = dict(program.files)
    files |= shim_files(program.layout.provided, files)  # ``source/cog.py`` for Cog
    files[IR_FILE] = program.layout.ir_document(program)
    files[READINESS_FILE] = canonical_json(dict(program.readiness))
    runtime = (*kind.runtime_modules, *program.layout.runtime_modules)
    files |= runtime_files(runtime) if runtime else {}  # a server with no runtime has none
    if ctx.execution is not None:
        files |= runtime_files(kind.governed_runtime_modules, with_init=False)
    files |= requirement_files(kind.server_requirements, ctx)
    files |= interface_files
    if isinstance(ctx.execution, OciExecution):
        files |= governed_oci_files(program, ctx.execution, files)
    elif ctx.execution is not None:
        files |= governed_files(program, ctx.execution, files)
    allow = ctx.readiness.allow
    manifest: dict[str, Any] = {
        "schema": kind.manifest_schema,
        "generator": {"name": "svcc", "version": __version__},
        "interface": kind.interface,
        "module": ir.module,
        "execution": execution_mode(ctx.execution),
        "capabilities": [{"id": c.id, "name": c.name} for c in ir.capabilities],
        **({"services": services} if (services := served_classes(program)) else {}),
        **program.layout.manifest_fields(program, files),
        "ir_digest": digest_bytes(files[IR_FILE]),
        "readiness_digest": digest_bytes(files[READINESS_FILE]),
        "files": {path: digest_bytes(data) for path, data in sorted(files.items())},
        **({"allow": list(allow)} if allow else {}),
    }
    return FileTree.of({**files, kind.manifest: canonical_json(manifest)})


def served_classes(program: Program) -> list[dict[str, Any]]:
    """The service classes a bundle builds at startup (a selected method's class), each
    with its module and the setup method run once after construction (``None``: none)."""
    out = []
    for module in program.modules:
        owners = {c.qualname.partition(".")[0] for c in module.capabilities if "." in c.qualname}
        out += [
            {"class": s.name, "module": module.module, "setup": s.setup}
            for s in module.services
            if s.name in owners
        ]
    return out


def merge_documents(into: dict[str, Any], part: Mapping[str, Any], what: str) -> None:
    """Merge one module's named definitions into a program's, refusing a name two
    selected modules define differently."""
    for key, value in part.items():
        if key in into and into[key] != value:
            raise LoweringError(
                f"{what} {key!r} is defined differently by two selected modules; "
                "select capabilities of one of them"
            )
        into[key] = value
