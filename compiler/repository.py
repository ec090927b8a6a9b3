"""The library API for repositories: analyse a tree, select capabilities, write a bundle.

``analyze_repository`` runs the repository front end and readiness over the module graph;
``repository_bundle`` selects capabilities (``--select`` dotted names / full ids, or an
exposure policy) and builds the direct REST/MCP bundle in memory; ``compile_repository`` is
``svcc compile DIR --target rest|mcp``. ``svc expose build`` (``compiler.expose``) uses the
same functions, so a local tree and a git snapshot of it give the same bytes.
"""

import difflib
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs
from attrs import frozen
from svcc.compiler.errors import IneligibleError, InputError, UsageError
from svcc.compiler.passes.readiness import Assessment, ReadinessReport
from svcc.compiler.requirements import DeclaredRequirements, parse_requirements
from svcc.frontends.repository import Repository, TreeLimits, TreeRefused
from svcc.ir.model import Capability, ModuleIR

if TYPE_CHECKING:
    from svcc.compiler.driver import Analysis
    from svcc.compiler.policy import ExecutionPolicy
    from svcc.compiler.target import BundleSpec, FileTree


REPOSITORY_READINESS_SCHEMA: Final = "svc.repository-readiness/v1"
INTERFACES: Final = ("rest", "mcp")
MAX_MANIFEST_BYTES: Final = 1024 * 1024  # the specification's bundle manifest limit


@frozen(kw_only=True)
class RepositoryAnalysis:
    repository: Repository
    reports: Mapping[str, ReadinessReport | None]
    requirements: DeclaredRequirements | None
    ir_json: Mapping[str, bytes]

    def capabilities(self) -> list[tuple[ModuleIR, Capability, Assessment]]:
        out = []
        for module, report in sorted(self.reports.items()):
            ir = self.repository.modules[module].ir
            if report is None or ir is None:
                continue
            for cap, assessment in zip(ir.capabilities, report.assessments, strict=True):
                out.append((ir, cap, assessment))
        return out

    def module_document(self, module: str) -> dict[str, Any]:
        source = self.repository.modules[module]
        report = self.reports[module]
        if report is None:
            error = next(d for d in source.result.diagnostics if d.severity == "error")
            return {"error": {"path": source.file.path, **error.to_json()}}
        doc = report.to_json()
        doc["diagnostics"] = [d.to_json() for d in source.result.diagnostics]
        return doc

    def file_analysis(self, module: str) -> "Analysis":
        """One module as a single-file :class:`~svcc.compiler.driver.Analysis` (IR and the
        readiness judged over the graph), for callers that answer per file."""
        from svcc.compiler.driver import Analysis

        source = self.repository.modules[module]
        return Analysis(
            path=source.file.path,
            module=module,
            source_format="python",
            source_bytes=source.file.data,
            module_text=source.result.module_text,
            ir=source.ir,
            readiness=self.reports[module],
            diagnostics=source.result.diagnostics,
            is_package=source.file.is_package,
        )

    def document(self, modules: Sequence[str] | None = None) -> dict[str, Any]:
        """``inspect DIR --format json``: one readiness document per module file (keyed by
        path, as for single files; ids are dotted), which module each path is, the graph."""
        tree = self.repository.tree
        chosen = sorted(self.reports) if modules is None else sorted(modules)
        return {
            "schema": REPOSITORY_READINESS_SCHEMA,
            "source_roots": list(tree.roots),
            "dependencies": list(self.requirements.lines) if self.requirements else [],
            "diagnostics": [d.to_json() | {"path": path} for path, d in tree.problems],
            "files": {
                self.repository.modules[m].file.path: self.module_document(m)
                for m in sorted(chosen, key=lambda m: self.repository.modules[m].file.path)
            },
            "modules": {m: self.repository.modules[m].file.path for m in chosen},
            "graph": self.repository.graph.to_json(),
        }


def declared_requirements(
    repo: Repository, requirements: DeclaredRequirements | None
) -> DeclaredRequirements | None:
    """``--requirements`` when given, else the project's declared dependencies."""
    if requirements is not None:
        return requirements
    deps = repo.tree.config.dependencies
    if not deps:
        return None
    return parse_requirements(
        "\n".join(deps), "pyproject.toml dependencies", dict(repo.tree.config.import_names)
    )


def read_checked(
    root: Path,
    python_version: tuple[int, int],
    limits: TreeLimits | None,
    *,
    strict: bool = True,
    encoding: str | None = None,
    folder_name: str | None = None,
) -> Repository:
    from svcc.frontends.repository import read_repository

    if not root.is_dir():
        raise InputError(f"{root}: not a directory")
    try:
        repo = read_repository(
            root,
            python_version=python_version,
            limits=limits,
            encoding=encoding,
            folder_name=folder_name,
        )
    except TreeRefused as exc:
        raise InputError(f"{root}: {exc.diagnostic.code} {exc}") from None
    errors = repo.tree.errors
    if errors and strict:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise InputError(f"{root}: {errors[0].code} {errors[0].message}{more}")
    return repo


def analyze_repository(
    root: str | Path,
    *,
    python_version: str | tuple[int, int] | None = None,
    requirements: DeclaredRequirements | None = None,
    limits: TreeLimits | None = None,
    strict: bool = True,
    encoding: str | None = None,
    folder_name: str | None = None,
    allow: frozenset[str] = frozenset(),
) -> RepositoryAnalysis:
    """Front end and readiness over the graph. ``strict`` (bundles) refuses a tree with any
    refused entry (exit 2); otherwise (``inspect``, the analysis service) refused entries are
    reported in the document and the rest is analysed. ``folder_name``: the root folder's
    name for the user (a git export's is its ``--subdir``'s; see ``read_tree``)."""
    from svcc.compiler.driver import version_tuple

    repo = read_checked(
        Path(root),
        version_tuple(python_version),
        limits,
        strict=strict,
        encoding=encoding,
        folder_name=folder_name,
    )
    return assess_repository(repo, requirements, allow)


def assess_repository(
    repo: Repository,
    requirements: DeclaredRequirements | None = None,
    allow: frozenset[str] = frozenset(),
) -> RepositoryAnalysis:
    """Readiness over the module graph of a repository already read and lowered (the
    analysis service lowers each module under its own per-file budget, then comes here, so
    it judges exactly as ``svcc inspect DIR``)."""
    from svcc.compiler.passes.repository_readiness import RepositoryReadiness

    declared = declared_requirements(repo, requirements)
    from svcc.compiler.passes.effects import allowed_kinds

    readiness = RepositoryReadiness(
        repo,
        declared.import_names if declared else frozenset(),
        declared.distributions if declared else (),
        allow=allow | allowed_kinds(repo.tree.config.allow, "[tool.svcc] allow"),
        unmapped=declared.unmapped if declared else (),
    )
    reports = readiness.run()
    return RepositoryAnalysis(
        repository=repo, reports=reports, requirements=declared, ir_json=readiness.ir_json
    )


# -- selection ------------------------------------------------------------------------------


def _describe(module: str, assessment: Assessment) -> str:
    codes = ", ".join(
        f"{r.code}" + (f" line {r.span.line}" if r.span else "") for r in assessment.blocking()
    )
    return f"{module}.{assessment.name} is {assessment.klass} ({codes})"


def select(
    analysis: RepositoryAnalysis,
    selection: Sequence[str] | None,
    *,
    exclude: Sequence[str] = (),
    include_all_ready: bool = False,
) -> list[tuple[ModuleIR, Capability]]:
    """Selected capabilities, in id order. Items are dotted names (``shop.pricing.total``)
    or full ids (``python:shop.pricing:total``). Unknown items exit 2; a selected
    capability that is not eligible exits 1 with its reason codes."""
    entries = analysis.capabilities()
    by_key: dict[str, tuple[ModuleIR, Capability, Assessment]] = {}
    for ir, cap, assessment in entries:
        by_key[cap.id] = by_key[f"{ir.module}.{cap.name}"] = (ir, cap, assessment)
    chosen: dict[str, tuple[ModuleIR, Capability, Assessment]] = {}
    if selection is None and not include_all_ready:
        chosen = {cap.id: (ir, cap, a) for ir, cap, a in entries}
        if not chosen:
            raise IneligibleError("the repository has no public module-level functions to expose")
    for item in selection or ():
        if item not in by_key:
            close = difflib.get_close_matches(item, list(by_key), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UsageError(f"unknown selection {item!r}{hint}")
        entry = by_key[item]
        chosen[entry[1].id] = entry
    if include_all_ready:
        for ir, cap, assessment in entries:
            if assessment.can_generate_interface:
                chosen.setdefault(cap.id, (ir, cap, assessment))
    for item in exclude:
        chosen.pop(item, None)
    if not chosen:
        raise IneligibleError("no capability is selected")
    blocked = [
        _describe(ir.module, a) for ir, _, a in chosen.values() if not a.can_generate_interface
    ]
    if blocked:
        raise IneligibleError("cannot generate: " + "; ".join(blocked))
    return [(ir, cap) for _, (ir, cap, _) in sorted(chosen.items())]


# -- bundles --------------------------------------------------------------------------------


def tree_digest(repo: Repository) -> str:
    """``sha256:`` over the declared files (path → digest) and ``pyproject.toml``."""
    from svcc.ir.canonical import canonical_json, digest_bytes

    files = {f.path: digest_bytes(f.data) for f in repo.tree.files}
    if repo.tree.config.pyproject_sha256:
        files["pyproject.toml"] = repo.tree.config.pyproject_sha256
    return digest_bytes(canonical_json(files))


def repository_bundle(
    analysis: RepositoryAnalysis,
    interface: str,
    selected: list[tuple[ModuleIR, Capability]],
    *,
    name: str,
    provenance: Mapping[str, Any],
    execution: "ExecutionPolicy | None" = None,
) -> "FileTree":
    """The bundle's ``FileTree``: the import closure of ``selected`` under ``source/``."""
    from svcc.backends.repository_bundle import (
        DeclaredSource,
        RepositoryBundleSpec,
        emit_repository,
        qualified,
    )

    if interface not in INTERFACES:
        raise UsageError(f"target {interface!r} cannot build a repository bundle (rest or mcp)")
    kind = _bundle_kind(interface)
    repo = analysis.repository
    graph = repo.graph
    by_module: dict[str, list[Capability]] = {}
    for ir, cap in selected:
        by_module.setdefault(ir.module, []).append(cap)
    starts: list[str] = []
    for module, caps in by_module.items():
        starts.append(module)
        qualnames = {c.qualname for c in caps}
        starts += [e.target for e in graph.edges[module] if e.scope in qualnames]
    closure = sorted(graph.import_closure(starts))
    for module in closure:
        top = module.split(".", 1)[0]
        if kind.module_name_problem(module) is not None:
            raise IneligibleError(
                f"module {module!r} clashes with the {interface} bundle's own module {top!r}"
            )
        if top in sys.stdlib_module_names:
            raise IneligibleError(
                f"module {module!r} ({repo.modules[module].file.path}) would shadow the "
                f"standard library module {top!r} in the server; rename it"
            )
    modules = tuple(
        qualified(attrs.evolve(ir, capabilities=tuple(caps)))
        for ir, caps in ((_ir_of(repo, m), c) for m, c in sorted(by_module.items()))
    )
    sources = tuple(
        DeclaredSource(
            module=m,
            is_package=repo.modules[m].file.is_package,
            path=repo.modules[m].file.path,
            data=repo.modules[m].file.data,
        )
        for m in closure
    )
    tops = {m.split(".", 1)[0] for m in closure}
    namespaces = tuple(
        sorted(
            n
            for n in graph.namespaces
            if n.split(".", 1)[0] in tops and any(m.startswith(n + ".") for m in closure)
        )
    )
    readiness = analysis.document(sorted(by_module))
    spec = RepositoryBundleSpec(
        name=name,
        modules=modules,
        sources=sources,
        namespaces=namespaces,
        packages=tuple(sorted(t for t in graph.tops if t not in sys.stdlib_module_names)),
        readiness=readiness,
        requirements=analysis.requirements.lines if analysis.requirements else (),
        provenance=provenance,
        execution=execution,
    )
    return emit_repository("rest" if interface == "rest" else "mcp", kind, spec)


def _ir_of(repo: Repository, module: str) -> ModuleIR:
    ir = repo.modules[module].ir
    assert ir is not None  # selected capabilities come from analysed modules only
    return ir


def _bundle_kind(interface: str) -> "BundleSpec":
    from svcc.compiler.registry import get_target

    bundle = get_target(interface).bundle
    assert bundle is not None  # rest and mcp write servable bundles
    return bundle


@frozen(kw_only=True)
class RepositoryCompileResult:
    target: str
    output_dir: Path
    files: tuple[str, ...]
    capabilities: tuple[str, ...]
    execution: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "output_dir": str(self.output_dir),
            "bundle_kind": "repository",
            "capabilities": list(self.capabilities),
            "execution": dict(self.execution),
            "files": list(self.files),
        }


def selected_bundle(
    analysis: RepositoryAnalysis,
    interface: str,
    *,
    selection: Sequence[str] | None,
    name: str,
    provenance: Mapping[str, Any],
    exclude: Sequence[str] = (),
    include_all_ready: bool = False,
    execution: "ExecutionPolicy | None" = None,
) -> "tuple[list[tuple[ModuleIR, Capability]], FileTree]":
    """Selection, then the bundle in memory, its manifest within the size limit."""
    selected = select(analysis, selection, exclude=exclude, include_all_ready=include_all_ready)
    tree = repository_bundle(
        analysis, interface, selected, name=name, provenance=provenance, execution=execution
    )
    manifest = tree.get("svc-rest.json" if interface == "rest" else "svc-mcp.json") or b""
    if len(manifest) > MAX_MANIFEST_BYTES:
        raise InputError(
            f"the bundle manifest would be {len(manifest)} bytes, over the "
            f"{MAX_MANIFEST_BYTES}-byte limit; select fewer capabilities"
        )
    return selected, tree


def write_repository_bundle(
    analysis: RepositoryAnalysis,
    interface: str,
    output_dir: str | Path,
    *,
    selection: Sequence[str] | None,
    name: str,
    provenance: Mapping[str, Any],
    exclude: Sequence[str] = (),
    include_all_ready: bool = False,
    execution: "ExecutionPolicy | None" = None,
) -> RepositoryCompileResult:
    from svcc.compiler.writer import write_tree

    selected, tree = selected_bundle(
        analysis,
        interface,
        selection=selection,
        name=name,
        provenance=provenance,
        exclude=exclude,
        include_all_ready=include_all_ready,
        execution=execution,
    )
    written = write_tree(tree, output_dir)
    return RepositoryCompileResult(
        target=interface,
        output_dir=written,
        files=tuple(tree.paths()),
        capabilities=tuple(cap.id for _, cap in selected),
        execution=(
            {"mode": "governed", "backend": "local-process"} if execution else {"mode": "direct"}
        ),
    )


def local_name(root: Path) -> str:
    name = root.resolve().name
    return name if name else "repository"


COMPILE_TARGETS: Final = (*INTERFACES, "oci", "k8s")


def compile_repository(
    root: str | Path,
    *,
    target: str,
    output_dir: str | Path,
    select: str | None = None,
    python_version: str | tuple[int, int] | None = None,
    requirements: DeclaredRequirements | None = None,
    execution_policy: str | Path | None = None,
    target_options: Mapping[str, object] | None = None,
    allow: frozenset[str] = frozenset(),
) -> RepositoryCompileResult:
    """``svcc compile DIR --target rest|mcp|oci|k8s``: a local tree, no policies. ``k8s``
    writes the Kubernetes base for the capabilities the bundle would serve. ``oci`` builds
    the direct ``--interface`` bundle in memory and writes the image build context around
    it; its options (``target_options``) are checked before the tree is read."""
    from svcc.compiler.passes.select import parse_selection
    from svcc.compiler.registry import get_target

    if target not in COMPILE_TARGETS:
        raise UsageError(
            f"target {target!r} cannot compile a directory ({', '.join(COMPILE_TARGETS)})"
        )
    backend = get_target(target, target_options)
    selection = parse_selection(select)
    policy = None
    if execution_policy is not None:
        from svcc.compiler.policy import load_policy

        if not backend.supports_execution_policy:
            raise UsageError(f"target {target!r} has no governed execution mode")
        from svcc.compiler.policy import read_policy_json
        from svcc.compiler.policy_v2 import POLICY_V2_SCHEMA

        data = read_policy_json(execution_policy)
        if isinstance(data, dict) and data.get("schema") == POLICY_V2_SCHEMA:
            raise UsageError(
                f"{execution_policy}: {POLICY_V2_SCHEMA} (a container per call) serves "
                "single-file bundles; a repository bundle is governed by an "
                "svc.execution/v1 policy (a local process per call)"
            )
        policy = load_policy(execution_policy)
    root = Path(root)
    analysis = analyze_repository(
        root, python_version=python_version, requirements=requirements, allow=allow
    )
    name = analysis.repository.tree.config.name or local_name(root)
    provenance = {"kind": "directory", "repository_digest": tree_digest(analysis.repository)}
    if target == "k8s":
        return _write_k8s_base(
            backend, analysis, output_dir, selection=selection, name=name, provenance=provenance
        )
    if target != "oci":
        return write_repository_bundle(
            analysis,
            target,
            output_dir,
            selection=selection,
            name=name,
            provenance=provenance,
            execution=policy,
        )
    return _write_oci_context(
        backend, analysis, output_dir, selection=selection, name=name, provenance=provenance
    )


def _write_k8s_base(
    backend: object,
    analysis: RepositoryAnalysis,
    output_dir: str | Path,
    *,
    selection: Sequence[str] | None,
    name: str,
    provenance: Mapping[str, Any],
) -> RepositoryCompileResult:
    """The ``k8s`` target over a repository: the capabilities the image serves are the ones
    its bundle would hold (the same selection and eligibility rules), labelled by digest."""
    from svcc.backends.k8s import K8sTarget

    assert isinstance(backend, K8sTarget)  # the registry's "k8s" entry
    return _write_around_bundle(
        "k8s",
        backend.interface,
        lambda ids, _: backend.base_for(ids),
        analysis,
        output_dir,
        selection=selection,
        name=name,
        provenance=provenance,
    )


def _write_oci_context(
    backend: object,
    analysis: RepositoryAnalysis,
    output_dir: str | Path,
    *,
    selection: Sequence[str] | None,
    name: str,
    provenance: Mapping[str, Any],
) -> RepositoryCompileResult:
    """The ``oci`` target over a repository: the direct bundle, wrapped; nothing is written
    unless the bundle and the context (base reference, lock) are both accepted."""
    from svcc.backends.oci import OciTarget
    from svcc.compiler.images.bundle_input import bundle_from_tree

    assert isinstance(backend, OciTarget)  # the registry's "oci" entry
    return _write_around_bundle(
        "oci",
        backend.interface,
        lambda _, bundle: backend.wrap(bundle_from_tree(bundle)),
        analysis,
        output_dir,
        selection=selection,
        name=name,
        provenance=provenance,
    )


def _write_around_bundle(
    target: str,
    interface: str,
    make: "Callable[[list[str], FileTree], FileTree]",
    analysis: RepositoryAnalysis,
    output_dir: str | Path,
    *,
    selection: Sequence[str] | None,
    name: str,
    provenance: Mapping[str, Any],
) -> RepositoryCompileResult:
    """A target that works from the direct ``interface`` bundle (built in memory, never
    written) and the ids it serves: one selection, one write, one result shape."""
    from svcc.compiler.writer import write_tree

    selected, bundle = selected_bundle(
        analysis, interface, selection=selection, name=name, provenance=provenance
    )
    ids = [cap.id for _, cap in selected]
    tree = make(ids, bundle)
    written = write_tree(tree, output_dir)
    return RepositoryCompileResult(
        target=target,
        output_dir=written,
        files=tuple(tree.paths()),
        capabilities=tuple(ids),
        execution={"mode": "direct"},
    )
