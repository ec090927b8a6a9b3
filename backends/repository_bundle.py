"""Assembling a direct repository bundle (REST or MCP) from several modules' IR.

The skeleton is the single-file bundle's (runtime copy, requirement files, glue, manifest
hashing every other file); what differs: ``source/`` holds the import closure of the
selected capabilities under their module paths (regular packages keep their ``__init__.py``,
namespace packages stay markers-free so they import as namespaces), capability names are
dotted (``shop.pricing.total``), the interface documents are merged over the modules with
every name checked for collisions, and the manifest carries ``"bundle_kind": "repository"``,
the declared modules, namespace packages, top-level packages and the provenance.
"""

from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs
from attrs import frozen
from svcc.backends._common.bundle import READINESS_FILE, pretty_json
from svcc.backends._common.runtime_copy import runtime_files
from svcc.backends._common.schema import LoweringError
from svcc.backends.templates import render
from svcc.compiler.policy import ExecutionPolicy, execution_mode
from svcc.compiler.target import BundleSpec, FileTree
from svcc.ir.canonical import canonical_json, digest_bytes
from svcc.ir.model import ModuleIR
from svcc.ir.serde import unstructure

from svcc import __version__

IR_FILE: Final = "capability-ir.json"
REPOSITORY_IR_SCHEMA: Final = "svc.repository-ir/v1"
Interface = Literal["rest", "mcp"]


@frozen(kw_only=True)
class DeclaredSource:
    module: str
    is_package: bool
    path: str  # the file's path in the repository (display, provenance)
    data: bytes

    @property
    def bundle_path(self) -> str:
        parts = self.module.split(".")
        if self.is_package:
            return "/".join(["source", *parts, "__init__.py"])
        return "/".join(["source", *parts]) + ".py"


@frozen(kw_only=True)
class RepositoryBundleSpec:
    """Everything a repository bundle holds besides what the target derives."""

    name: str
    modules: tuple[ModuleIR, ...]  # selected capabilities only, with dotted names
    sources: tuple[DeclaredSource, ...]
    namespaces: tuple[str, ...]
    packages: tuple[str, ...]
    readiness: Mapping[str, Any]
    requirements: tuple[str, ...]
    provenance: Mapping[str, Any]
    # Governed local-process execution (``--execution-policy``); ``None`` is direct mode.
    execution: ExecutionPolicy | None = None


def qualified(ir: ModuleIR) -> ModuleIR:
    """The module's capabilities named ``<module>.<function>`` (routes, tools)."""
    caps = tuple(attrs.evolve(c, name=f"{ir.module}.{c.qualname}") for c in ir.capabilities)
    return attrs.evolve(ir, capabilities=caps)


def _merge(into: dict[str, Any], part: Mapping[str, Any], what: str) -> None:
    for key, value in part.items():
        if key in into and into[key] != value:
            raise LoweringError(
                f"{what} {key!r} is defined differently by two selected modules; "
                "select capabilities of one of them"
            )
        into[key] = value


def openapi(spec: RepositoryBundleSpec) -> dict[str, Any]:
    from svcc.backends.rest import openapi_document

    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for ir in spec.modules:
        doc = openapi_document(ir)
        for path in doc["paths"]:
            if path in paths and path != "/health":
                raise LoweringError(f"two capabilities would be served at {path}")
        paths.update(doc["paths"])
        _merge(schemas, doc["components"]["schemas"], "schema")
    return {
        "openapi": "3.1.0",
        "info": {"title": spec.name, "version": "1"},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(schemas.items()))},
    }


def tools(spec: RepositoryBundleSpec) -> dict[str, Any]:
    from svcc.backends.mcp import TOOLS_SCHEMA, tools_document

    out: list[Any] = []
    seen: set[str] = set()
    for ir in spec.modules:
        for tool in tools_document(ir)["tools"]:
            if tool["name"] in seen:
                raise LoweringError(f"two capabilities would be the MCP tool {tool['name']!r}")
            seen.add(tool["name"])
            out.append(tool)
    return {"schema": TOOLS_SCHEMA, "tools": sorted(out, key=lambda t: t["name"])}


def _ir_document(spec: RepositoryBundleSpec) -> bytes:
    capabilities = [unstructure(c) for ir in spec.modules for c in ir.capabilities]
    return canonical_json(
        {
            "schema": REPOSITORY_IR_SCHEMA,
            "capabilities": sorted(capabilities, key=lambda c: c["id"]),
            "modules": [unstructure(ir) for ir in spec.modules],
        }
    )


def governed_files(
    spec: RepositoryBundleSpec,
    policy: ExecutionPolicy,
    files: Mapping[str, bytes],
    repository: Mapping[str, Any],
) -> dict[str, bytes]:
    """The governed execution files: one plan per capability binding its module, function,
    module file, every declared source file and the policy; the worker imports through the
    same closed set as a direct server."""
    from svcc.backends._common.governed import (
        GOVERNED_MODULES,
        GOVERNED_PACKAGE,
        PLAN_SCHEMA,
        WIRE_MODULES,
        call_shape,
        declared_sources,
        source_binding,
    )

    policy_bytes = canonical_json(policy.to_json())
    sources = declared_sources(files)
    paths = {s.module: s.bundle_path for s in spec.sources}
    out = {"execution/policy.json": policy_bytes}
    for ir in spec.modules:
        for cap in ir.capabilities:
            plan = {
                "schema": PLAN_SCHEMA,
                "capability": cap.id,
                "module": ir.module,
                "function": cap.qualname,
                "repository": dict(repository),
                "source": source_binding(paths[ir.module], sources),
                "policy_digest": digest_bytes(policy_bytes),
                "call": call_shape(cap),
            }
            out[f"execution/plans/{cap.name}.json"] = canonical_json(plan)
    out["execution/worker.py"] = render(
        "svcc.backends._common", "worker.py.jinja", module=spec.name, version=__version__
    )
    out |= runtime_files(GOVERNED_MODULES, package="svcc.runtime.governed", into=GOVERNED_PACKAGE)
    out |= runtime_files(WIRE_MODULES)
    return out


def emit_repository(interface: Interface, kind: BundleSpec, spec: RepositoryBundleSpec) -> FileTree:
    names = [c.name for ir in spec.modules for c in ir.capabilities]
    if len(set(names)) != len(names):
        raise LoweringError("two selected capabilities have the same name")
    files: dict[str, bytes] = {s.bundle_path: s.data for s in spec.sources}
    files[IR_FILE] = _ir_document(spec)
    files[READINESS_FILE] = canonical_json(dict(spec.readiness))
    files |= runtime_files((*kind.runtime_modules, "repository"))
    governed = spec.execution is not None
    if governed:
        files |= runtime_files(kind.governed_runtime_modules, with_init=False)
    files["requirements.txt"] = "".join(f"{r}\n" for r in sorted(kind.server_requirements)).encode()
    if spec.requirements:
        files["application-requirements.txt"] = "".join(
            f"{line}\n" for line in spec.requirements
        ).encode()
    if interface == "rest":
        from svcc.backends.rest import server_module

        files["openapi.json"] = pretty_json(openapi(spec))
        files["app.py"] = render(
            "svcc.backends.rest",
            "app.py.jinja",
            module=spec.name,
            version=__version__,
            server=server_module(governed),
        )
    else:
        from svcc.backends.mcp import server_module as mcp_server_module

        files["mcp-tools.json"] = pretty_json(tools(spec))
        files["server.py"] = render(
            "svcc.backends.mcp",
            "server.py.jinja",
            module=spec.name,
            version=__version__,
            server=mcp_server_module(governed),
        )
    repository = {
        "modules": {s.module: s.bundle_path for s in spec.sources},
        "namespace_packages": list(spec.namespaces),
        "packages": list(spec.packages),
    }
    if spec.execution is not None:
        files |= governed_files(spec, spec.execution, files, repository)
    capabilities = sorted(
        ({"id": c.id, "name": c.name} for ir in spec.modules for c in ir.capabilities),
        key=lambda c: c["id"],
    )
    manifest = {
        "schema": kind.manifest_schema,
        "bundle_kind": "repository",
        "generator": {"name": "svcc", "version": __version__},
        "interface": interface,
        "module": spec.name,
        "execution": execution_mode(spec.execution),
        "capabilities": capabilities,
        "repository": {
            **repository,
            "original_paths": {s.bundle_path: s.path for s in spec.sources},
        },
        "provenance": dict(spec.provenance),
        "ir_digest": digest_bytes(files[IR_FILE]),
        "readiness_digest": digest_bytes(files[READINESS_FILE]),
        "files": {path: digest_bytes(data) for path, data in sorted(files.items())},
    }
    return FileTree.of({**files, kind.manifest: canonical_json(manifest)})
