"""Repositories for the library API (:mod:`svcc.compiler.driver`): analyse a tree, select
capabilities, build a bundle.

``analyze_repository`` runs the repository front end and readiness over the module graph;
``select`` takes ``--select`` dotted names / full ids, or an exposure policy;
``repository_bundle`` builds any servable target's bundle in memory through the target
protocol (``ctx.repository``). ``svcc compile DIR``, ``svcc generate INTERFACE DIR`` (both
through ``driver.compile_path``) and ``svc expose build`` use the same functions, so a local
tree and a git snapshot of it give the same bytes.
"""

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs
from attrs import frozen
from svcc.compiler.passes.readiness import Assessment, ReadinessReport
from svcc.contracts.errors import IneligibleError, InputError
from svcc.contracts.requirements import DeclaredRequirements, parse_requirements
from svcc.frontends.repository import Repository, RepositoryTree, TreeLimits, TreeRefused
from svcc.ir.model import Capability, ModuleIR

if TYPE_CHECKING:
    from svcc.compiler.driver import Analysis, CompileResult
    from svcc.contracts.policy import ExecutionPolicy
    from svcc.contracts.target import BundleSpec, FileTree, RepositoryLayout, Target


REPOSITORY_READINESS_SCHEMA: Final = "svc.repository-readiness/v1"


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
            **({"data_files": _data_digests(tree)} if tree.data else {}),
        }


def _data_digests(tree: RepositoryTree) -> dict[str, str]:
    """``[tool.svcc] data-files`` as read: tree path → ``sha256:`` of its bytes."""
    from svcc.ir.canonical import digest_bytes

    return {f.path: digest_bytes(f.data) for f in tree.data}


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
    workers: int | None = 1,
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
            workers=workers,
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
    workers: int | None = 1,
    allow: frozenset[str] = frozenset(),
) -> RepositoryAnalysis:
    """Front end and readiness over the graph. ``strict`` (bundles) refuses a tree with any
    refused entry (exit 2); otherwise (``inspect``, the analysis service) refused entries are
    reported in the document and the rest is analysed. ``folder_name``: the root folder's
    name for the user (a git export's is its ``--subdir``'s; see ``read_tree``).
    ``workers``: processes lowering a large tree (``None``: one per CPU, as the CLI asks)."""
    from svcc.compiler.driver import version_tuple

    repo = read_checked(
        Path(root),
        version_tuple(python_version),
        limits,
        strict=strict,
        encoding=encoding,
        folder_name=folder_name,
        workers=workers,
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


def select(
    analysis: RepositoryAnalysis,
    selection: Sequence[str] | None,
    *,
    exclude: Sequence[str] = (),
    include_all_ready: bool = False,
) -> list[tuple[ModuleIR, Capability]]:
    """Selected capabilities, in id order: the one selection (``passes.select``) over every
    module. Items are dotted names (``shop.pricing.total``) or full ids
    (``python:shop.pricing:total``). Unknown items exit 2; a selected capability that is not
    eligible exits 1 with its reason codes."""
    from svcc.compiler.passes.select import select as select_entries

    entries = sorted(analysis.capabilities(), key=lambda e: e[1].id)
    return select_entries(
        entries,
        selection,
        where="the repository",
        exclude=exclude,
        include_all_ready=include_all_ready,
    )


# -- bundles --------------------------------------------------------------------------------


def tree_digest(repo: Repository) -> str:
    """``sha256:`` over the declared files and data files (path → digest) and
    ``pyproject.toml``."""
    from svcc.ir.canonical import canonical_json, digest_bytes

    files = {f.path: digest_bytes(f.data) for f in repo.tree.files}
    files |= {f.path: digest_bytes(f.data) for f in repo.tree.data}  # [tool.svcc] data-files
    if repo.tree.config.pyproject_sha256:
        files["pyproject.toml"] = repo.tree.config.pyproject_sha256
    return digest_bytes(canonical_json(files))


def repository_bundle(
    analysis: RepositoryAnalysis,
    backend: "Target",
    selected: list[tuple[ModuleIR, Capability]],
    *,
    name: str,
    provenance: Mapping[str, Any],
    execution: "ExecutionPolicy | None" = None,
) -> "FileTree":
    """The bundle's ``FileTree`` from any servable target (or one that wraps one): the
    import closure of ``selected`` under ``source/``, emitted through the target protocol
    with the repository's layout in the context."""
    from svcc.compiler.driver import emit_target, served_bundle
    from svcc.contracts.target import DeclaredSource, EmitContext, RepositoryLayout

    kind = served_bundle(backend, "a repository")
    repo = analysis.repository
    graph = repo.graph
    by_module: dict[str, list[Capability]] = {}
    for ir, cap in selected:
        by_module.setdefault(ir.module, []).append(cap)
    closure = carried_modules(analysis, by_module, kind)
    modules = tuple(
        qualified(attrs.evolve(ir, capabilities=tuple(caps)))
        for ir, caps in ((_ir_of(repo, m), c) for m, c in sorted(by_module.items()))
    )
    tops = {m.split(".", 1)[0] for m in closure}
    layout = RepositoryLayout(
        name=name,
        modules=modules,
        sources=tuple(
            DeclaredSource(
                module=m,
                is_package=repo.modules[m].file.is_package,
                path=repo.modules[m].file.path,
                data=repo.modules[m].file.data,
            )
            for m in closure
        ),
        namespaces=tuple(
            sorted(
                n
                for n in graph.namespaces
                if n.split(".", 1)[0] in tops and any(m.startswith(n + ".") for m in closure)
            )
        ),
        packages=tuple(sorted(t for t in graph.tops if t not in sys.stdlib_module_names)),
        provenance=provenance,
        readiness=analysis.document(sorted(by_module)),
        data=tuple((f.bundle_path, f.path, f.data) for f in repo.tree.data),
    )
    view = _bundle_view(layout)
    reports = [analysis.reports[m] for m in sorted(by_module)]
    ids = {c.id for c in view.capabilities}
    ctx = EmitContext(
        readiness=ReadinessReport(
            module=name,
            source={"kind": "repository"},
            ir_digest="",
            assessments=tuple(
                a for r in reports if r is not None for a in r.assessments if a.capability_id in ids
            ),
        ),
        source_path="",
        source_bytes=b"",
        module_text="",
        requirements=analysis.requirements.lines if analysis.requirements else (),
        execution=execution,
        repository=layout,
    )
    return emit_target(backend, view, ctx)


def carried_modules(
    analysis: RepositoryAnalysis, by_module: Mapping[str, list[Capability]], kind: "BundleSpec"
) -> list[str]:
    """The repository modules a bundle's ``source/`` holds, sorted: what importing the
    selected modules runs (their packages and module-level imports, transitively) and what
    the selected capabilities import in their bodies (checked: a module the bundle's own
    files or the standard library would shadow is refused), then every module any carried
    module imports anywhere else (a helper's or a method's body, when called), as a single
    file's bundle carries its local closure; one of those that would be shadowed is left
    out, since the server could never import it from ``source/``."""
    repo = analysis.repository
    graph = repo.graph
    starts: list[str] = []
    for module, caps in by_module.items():
        starts.append(module)
        qualnames = {c.qualname for c in caps}
        starts += [e.target for e in graph.edges[module] if e.scope in qualnames]
    closure = set(graph.import_closure(starts))
    for module in sorted(closure):
        problem = kind.module_name_problem(module)
        if problem is not None:
            raise IneligibleError(f"{problem} ({repo.modules[module].file.path}); rename it")
    pending = sorted(closure)
    while pending:
        later = [e.target for m in pending for e in graph.edges.get(m, []) if e.scope]
        found = [
            m
            for m in graph.import_closure(later)
            if m not in closure and kind.module_name_problem(m) is None
        ]
        closure.update(found)
        pending = found
    return sorted(closure)


def qualified(ir: ModuleIR) -> ModuleIR:
    """The module's capabilities named ``<module>.<function>`` (routes, tools)."""
    caps = tuple(attrs.evolve(c, name=f"{ir.module}.{c.qualname}") for c in ir.capabilities)
    return attrs.evolve(ir, capabilities=caps)


def _bundle_view(layout: "RepositoryLayout") -> ModuleIR:
    """The IR a target sees for a repository bundle: the repository's name, every selected
    capability (dotted names, id order); the modules themselves are in ``ctx.repository``."""
    caps = sorted((c for ir in layout.modules for c in ir.capabilities), key=lambda c: c.id)
    first = layout.modules[0]
    return attrs.evolve(
        first,
        module=layout.name,
        docstring=None,
        statements=(),
        bindings=(),
        imports=(),
        classes=(),
        typed_dicts=(),
        globals=(),
        global_reads=(),
        capabilities=tuple(caps),
    )


def _ir_of(repo: Repository, module: str) -> ModuleIR:
    ir = repo.modules[module].ir
    assert ir is not None  # selected capabilities come from analysed modules only
    return ir


def selected_bundle(
    analysis: RepositoryAnalysis,
    backend: "Target",
    *,
    selection: Sequence[str] | None,
    name: str,
    provenance: Mapping[str, Any],
    exclude: Sequence[str] = (),
    include_all_ready: bool = False,
    execution: "ExecutionPolicy | None" = None,
) -> "tuple[list[tuple[ModuleIR, Capability]], FileTree]":
    """Selection, then the bundle in memory."""
    selected = select(analysis, selection, exclude=exclude, include_all_ready=include_all_ready)
    tree = repository_bundle(
        analysis, backend, selected, name=name, provenance=provenance, execution=execution
    )
    return selected, tree


def write_repository_bundle(
    analysis: RepositoryAnalysis,
    backend: "Target",
    output_dir: str | Path,
    *,
    selection: Sequence[str] | None,
    name: str,
    provenance: Mapping[str, Any],
    exclude: Sequence[str] = (),
    include_all_ready: bool = False,
    execution: "ExecutionPolicy | None" = None,
) -> "CompileResult":
    from svcc.compiler.driver import CompileResult
    from svcc.compiler.writer import write_tree
    from svcc.contracts.policy import execution_mode

    selected, tree = selected_bundle(
        analysis,
        backend,
        selection=selection,
        name=name,
        provenance=provenance,
        exclude=exclude,
        include_all_ready=include_all_ready,
        execution=execution,
    )
    written = write_tree(tree, output_dir)
    return CompileResult(
        target=backend.name,
        output_dir=written,
        files=tuple(tree.paths()),
        capabilities=tuple(cap.id for _, cap in selected),
        execution=execution_mode(execution),
        bundle_kind="repository",
    )


def local_name(root: Path) -> str:
    name = root.resolve().name
    return name if name else "repository"


def compile_repository(
    root: str | Path,
    backend: "Target",
    *,
    output_dir: str | Path,
    selection: Sequence[str] | None,
    python_version: str | tuple[int, int] | None = None,
    requirements: DeclaredRequirements | None = None,
    policy: "ExecutionPolicy | None" = None,
    allow: frozenset[str] = frozenset(),
) -> "CompileResult":
    """A local tree: analysis, selection and the bundle of any servable target (or one
    that wraps one, such as ``oci`` and ``k8s``); options were checked by the caller.
    ``allow``: the security effect kinds opted into (``--allow``)."""
    root = Path(root)
    analysis = analyze_repository(
        root,
        python_version=python_version,
        requirements=requirements,
        workers=None,
        allow=allow,
    )
    return write_repository_bundle(
        analysis,
        backend,
        output_dir,
        selection=selection,
        name=analysis.repository.tree.config.name or local_name(root),
        provenance={"kind": "directory", "repository_digest": tree_digest(analysis.repository)},
        execution=policy,
    )
