"""The one bundle assembler: selected capabilities of any :class:`Analysis` → a target's
``FileTree``, through the target protocol, and the writer.

A file's bundle carries its module and local import closure (``EmitContext.source_*``,
``local_files``); a directory's carries the import closure of the selected modules
(``EmitContext.repository``: the manifest's ``bundle_kind`` is ``"repository"``). The rest
is the same for both: selection (:func:`svcc.compiler.analysis.select`), the module-name
checks of the bundle, a :class:`~svcc.contracts.target.Wrapper` given the bundle of the
servable target it names, the manifest size limit and :func:`write_bundle`'s result.
"""

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs
from attrs import frozen
from svcc.contracts.errors import IneligibleError, InputError
from svcc.ir.model import Capability, ModuleIR

if TYPE_CHECKING:
    from pathlib import Path

    from svcc.compiler.analysis import Analysis
    from svcc.contracts.policy import AnyExecution
    from svcc.contracts.target import (
        BundleSpec,
        EmitContext,
        FileTree,
        RepositoryLayout,
        Target,
    )
    from svcc.frontends.repository import Repository


MAX_MANIFEST_BYTES: Final = 1024 * 1024  # the specification's bundle manifest limit
Selected = list[tuple[ModuleIR, Capability]]


@frozen(kw_only=True)
class CompileResult:
    """What was written. ``module`` is a file's module; ``bundle_kind`` is ``"repository"``
    for a directory (a file's result keeps today's JSON shape, without it)."""

    target: str
    output_dir: "Path"
    files: tuple[str, ...]
    capabilities: tuple[str, ...]
    execution: Mapping[str, str]
    module: str | None = None
    bundle_kind: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"target": self.target, "output_dir": str(self.output_dir)}
        if self.module is not None:
            out["module"] = self.module
        if self.bundle_kind is not None:
            out["bundle_kind"] = self.bundle_kind
        return out | {
            "capabilities": list(self.capabilities),
            "execution": dict(self.execution),
            "files": list(self.files),
        }


def served_bundle(backend: "Target", what: str) -> "BundleSpec":
    """The bundle ``backend`` writes or wraps (``oci``, ``k8s``: their ``--interface``'s);
    a target that does neither cannot build ``what`` (a repository)."""
    from svcc.compiler.registry import servable_target
    from svcc.contracts.errors import UsageError
    from svcc.contracts.target import Wrapper

    if backend.bundle is not None:
        return backend.bundle
    if isinstance(backend, Wrapper):
        return servable_target(backend.wrapped_target(), backend.name)[1]
    raise UsageError(
        f"target {backend.name!r} writes no service bundle, so it cannot build {what}; "
        "use a servable target or one that wraps one (`svcc targets`)"
    )


def emit_target(backend: "Target", ir: ModuleIR, ctx: "EmitContext") -> "FileTree":
    """``backend.emit``, through the protocol: a :class:`~svcc.contracts.target.Wrapper` gets
    the bundle of the servable target it names, emitted from the same IR and context. Every
    service bundle's manifest is held to the specification's size limit."""
    from svcc.compiler.registry import servable_target
    from svcc.contracts.target import Wrapper

    if isinstance(backend, Wrapper) and backend.bundle is None:
        inner, spec = servable_target(backend.wrapped_target(), backend.name)
        bundle = _checked(spec, inner.emit(ir, ctx))
        return backend.emit(ir, attrs.evolve(ctx, bundle=bundle, served=spec))
    tree = backend.emit(ir, ctx)
    return tree if backend.bundle is None else _checked(backend.bundle, tree)


def _checked(spec: "BundleSpec", tree: "FileTree") -> "FileTree":
    manifest = tree.get(spec.manifest) or b""
    if len(manifest) > MAX_MANIFEST_BYTES:
        raise InputError(
            f"the bundle manifest would be {len(manifest)} bytes, over the "
            f"{MAX_MANIFEST_BYTES}-byte limit; select fewer capabilities"
        )
    return tree


def build_bundle(
    analysis: "Analysis",
    backend: "Target",
    *,
    select: str | Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    include_all_ready: bool = False,
    execution: "AnyExecution | None" = None,
    name: str | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> "tuple[Selected, FileTree]":
    """Selection, then the bundle in memory: ``(the selected capabilities, the tree)``. No
    I/O. ``name`` and ``provenance`` describe a directory's bundle (default: the project's
    name, else the folder's, and the directory's digest)."""
    from svcc.compiler.analysis import select as select_capabilities

    if analysis.repository is None:
        _check_file(analysis, backend)
    else:
        served_bundle(backend, "a repository")
    selected = select_capabilities(
        analysis, select, exclude=exclude, include_all_ready=include_all_ready
    )
    if analysis.repository is None:
        ir, ctx = _file_context(analysis, selected, execution)
    else:
        ir, ctx = _repository_context(
            analysis, backend, selected, name=name, provenance=provenance, execution=execution
        )
    return selected, emit_target(backend, ir, ctx)


def _check_file(analysis: "Analysis", backend: "Target") -> None:
    """A file that analysed, whose module (and local modules) the bundle can hold."""
    from svcc.contracts.target import Wrapper

    if analysis.error is not None or analysis.ir is None or analysis.readiness is None:
        raise InputError(analysis.error_message())
    if analysis.module_text is None:
        raise IneligibleError(f"{analysis.path}: no module text")
    kind = backend.bundle
    if kind is None and isinstance(backend, Wrapper):
        kind = served_bundle(backend, "a bundle")
    if kind is None:
        return
    problem = kind.module_name_problem(analysis.module)
    if problem:
        raise InputError(f"{problem}; choose another with --module-name")
    for local in sorted({p.split("/")[1].removesuffix(".py") for p, _ in analysis.local_files}):
        problem = kind.module_name_problem(local)
        if local != analysis.module.split(".")[0] and problem:
            raise IneligibleError(
                f"{analysis.path}: imports the local module {local!r}: {problem}; rename it"
            )


def _file_context(
    analysis: "Analysis", selected: Selected, execution: "AnyExecution | None"
) -> "tuple[ModuleIR, EmitContext]":
    """A file's bundle: its IR restricted to the selection, its source and closure."""
    from svcc.contracts.target import EmitContext

    ir, readiness, text = analysis.ir, analysis.readiness, analysis.module_text
    assert ir is not None  # _check_file said so
    assert readiness is not None
    assert text is not None
    chosen = tuple(cap for _, cap in selected)
    if chosen != ir.capabilities:  # else the same object: what was derived from it is reused
        ir = attrs.evolve(ir, capabilities=chosen)
    requirements = analysis.requirements
    return ir, EmitContext(
        readiness=readiness,
        source_path=analysis.path,
        source_bytes=analysis.source_bytes,
        module_text=text,
        requirements=requirements.lines if requirements else (),
        local_files=analysis.local_files,
        module_is_package=analysis.is_package,
        execution=execution,
    )


def _repository_context(
    analysis: "Analysis",
    backend: "Target",
    selected: Selected,
    *,
    name: str | None,
    provenance: Mapping[str, Any] | None,
    execution: "AnyExecution | None",
) -> "tuple[ModuleIR, EmitContext]":
    """A directory's bundle: the import closure of ``selected`` under ``source/``, and the
    view a target sees (the repository's name, dotted capability names)."""
    from svcc.compiler.passes.readiness import ReadinessReport
    from svcc.contracts.policy import ExecutionPolicy
    from svcc.contracts.target import DeclaredSource, EmitContext, RepositoryLayout

    repo = analysis.repository
    assert repo is not None
    if execution is not None and not isinstance(execution, ExecutionPolicy):
        raise InputError("a repository bundle is governed by an svc.execution/v1 policy")
    if name is None:
        name = repo.tree.config.name or local_name(analysis.path)
    if provenance is None:
        provenance = {"kind": "directory", "repository_digest": tree_digest(repo)}
    kind = served_bundle(backend, "a repository")
    graph = repo.graph
    by_module: dict[str, list[Capability]] = {}
    for ir, cap in selected:
        by_module.setdefault(ir.module, []).append(cap)
    closure = carried_modules(repo, by_module, kind)
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
    requirements = analysis.requirements
    return view, EmitContext(
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
        requirements=requirements.lines if requirements else (),
        execution=execution,
        repository=layout,
    )


def carried_modules(
    repo: "Repository", by_module: Mapping[str, list[Capability]], kind: "BundleSpec"
) -> list[str]:
    """The repository modules a bundle's ``source/`` holds, sorted: what importing the
    selected modules runs (their packages and module-level imports, transitively) and what
    the selected capabilities import in their bodies (checked: a module the bundle's own
    files or the standard library would shadow is refused), then every module any carried
    module imports anywhere else (a helper's or a method's body, when called), as a single
    file's bundle carries its local closure; one of those that would be shadowed is left
    out, since the server could never import it from ``source/``."""
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


def _ir_of(repo: "Repository", module: str) -> ModuleIR:
    ir = repo.modules[module].ir
    assert ir is not None  # selected capabilities come from analysed modules only
    return ir


def tree_digest(repo: "Repository") -> str:
    """``sha256:`` over the declared files and data files (path → digest) and
    ``pyproject.toml``."""
    from svcc.ir.canonical import canonical_json, digest_bytes

    files = {f.path: digest_bytes(f.data) for f in repo.tree.files}
    files |= {f.path: digest_bytes(f.data) for f in repo.tree.data}  # [tool.svcc] data-files
    if repo.tree.config.pyproject_sha256:
        files["pyproject.toml"] = repo.tree.config.pyproject_sha256
    return digest_bytes(canonical_json(files))


def local_name(root: "str | Path") -> str:
    """A directory's bundle name when its project names none: the folder's name."""
    from pathlib import Path

    name = Path(root).resolve().name
    return name if name else "repository"


def write_bundle(
    analysis: "Analysis",
    backend: "Target",
    output_dir: "str | Path",
    *,
    select: str | Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    include_all_ready: bool = False,
    execution: "AnyExecution | None" = None,
    name: str | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> CompileResult:
    """:func:`build_bundle`, then the writer: nothing is written unless every step
    succeeds."""
    from svcc.compiler.writer import write_tree
    from svcc.contracts.policy import execution_mode

    selected, tree = build_bundle(
        analysis,
        backend,
        select=select,
        exclude=exclude,
        include_all_ready=include_all_ready,
        execution=execution,
        name=name,
        provenance=provenance,
    )
    written = write_tree(tree, output_dir)
    repository = analysis.repository is not None
    return CompileResult(
        target=backend.name,
        output_dir=written,
        files=tuple(tree.paths()),
        capabilities=tuple(cap.id for _, cap in selected),
        execution=execution_mode(execution),
        module=None if repository else analysis.module,
        bundle_kind="repository" if repository else None,
    )
