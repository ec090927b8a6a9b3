"""The one bundle driver: selected capabilities of any :class:`Analysis` → a target's
``FileTree``, through the target protocol, and the writer.

Every analysis is a program: its kind (:mod:`svcc.compiler.program_kinds`, chosen by the
front end) checks what the bundle can hold and gathers the
:class:`~svcc.contracts.program.Program` the target is given. The rest is one path:
selection, a :class:`~svcc.contracts.target.Wrapper` given the bundle of the servable target
it names, the manifest size limit and :func:`write_bundle`'s result.
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs
from attrs import frozen
from svcc.contracts.errors import IneligibleError, InputError
from svcc.ir.model import Capability, ModuleIR

if TYPE_CHECKING:
    from pathlib import Path

    from svcc.compiler.driver import Analysis
    from svcc.contracts.policy import AnyExecution
    from svcc.contracts.target import BundleSpec, EmitContext, FileTree, Target
    from svcc.frontends.repository import Repository


MAX_MANIFEST_BYTES: Final = 1024 * 1024  # the specification's bundle manifest limit
Selected = list[tuple[ModuleIR, Capability]]


@frozen(kw_only=True)
class CompileResult:
    """What was written. ``bundle_kind`` is ``"file"`` or ``"repository"``; the JSON shape
    outside tools read names a file's ``module`` and a directory's ``bundle_kind``."""

    target: str
    output_dir: "Path"
    files: tuple[str, ...]
    capabilities: tuple[str, ...]
    execution: Mapping[str, str]
    bundle_kind: str = "file"
    module: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"target": self.target, "output_dir": str(self.output_dir)}
        out |= {"module": self.module} if self.bundle_kind == "file" else {}
        out |= {"bundle_kind": self.bundle_kind} if self.bundle_kind != "file" else {}
        return out | {
            "capabilities": list(self.capabilities),
            "execution": dict(self.execution),
            "files": list(self.files),
        }


@frozen(kw_only=True)
class BundleRequest:
    """What a bundle names besides its selection: the bundle ``spec`` the target writes
    or wraps, a directory's bundle ``name`` and
    ``provenance`` (default: the project's name, else the folder's, and the tree's
    digest); ``execution``, the governed-execution policy (``None``: direct)."""

    spec: "BundleSpec | None" = None
    name: str | None = None
    provenance: Mapping[str, Any] | None = None
    execution: Any = None


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
    spec = analysis.kind.check(analysis, backend)
    selected = analysis.select(select, exclude=exclude, include_all_ready=include_all_ready)
    request = BundleRequest(spec=spec, name=name, provenance=provenance, execution=execution)
    return selected, emit_program(analysis, backend, selected, request)


def emit_program(
    analysis: "Analysis", backend: "Target", selected: Selected, request: BundleRequest
) -> "FileTree":
    """The bundle of ``selected``: the analysis's program, emitted by ``backend``
    (``request.spec``: what ``analysis.kind.check`` found the target writes)."""
    from svcc.contracts.target import EmitContext

    view, readiness, program = analysis.kind.program(analysis, selected, request)
    requirements = analysis.requirements
    ctx = EmitContext(
        readiness=readiness,
        program=program,
        requirements=requirements.lines if requirements else (),
        execution=request.execution,
    )
    return emit_target(backend, view, ctx)


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
    return compile_result(analysis, backend, selected, tree, written, execution)


def compile_result(  # noqa: PLR0917 (the write pass's and write_bundle's record)
    analysis: "Analysis",
    backend: "Target",
    selected: Selected,
    tree: "FileTree",
    written: "Path",
    execution: "AnyExecution | None",
) -> CompileResult:
    """What :func:`write_bundle` (or the compile pipeline's write pass) wrote."""
    from svcc.contracts.policy import execution_mode

    return CompileResult(
        target=backend.name,
        output_dir=written,
        files=tuple(tree.paths()),
        capabilities=tuple(cap.id for _, cap in selected),
        execution=execution_mode(execution),
        bundle_kind=analysis.kind.bundle_kind,
        module=analysis.module,
    )
