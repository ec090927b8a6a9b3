"""How an analysis becomes a program: the one place where a file and a directory differ
after their front ends.

The front end that read the input chooses the analysis's :class:`ProgramKind` once
(:data:`FILE` for a file, a notebook or source in memory; :data:`DIRECTORY` for a tree).
Everything after it asks the kind, never the input: which capabilities there are, how a
selection names them (a file's by its plain function names too, as its user writes them;
a directory's by ``module.function``), the readiness document, and the
:class:`~svcc.contracts.program.Program` its bundle is assembled from.
"""

import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol

from svcc.compiler.passes.cog_shim import SHIM_MODULE, imports_cog
from svcc.contracts.errors import IneligibleError, InputError
from svcc.contracts.program import DeclaredSource, FileLayout, Program, RepositoryLayout
from svcc.ir.model import Capability, ModuleIR
from svcc.ir.records import evolve

if TYPE_CHECKING:
    from svcc.compiler.bundles import BundleRequest
    from svcc.compiler.driver import Analysis
    from svcc.compiler.passes.readiness import ReadinessReport
    from svcc.compiler.passes.select import Entry
    from svcc.contracts.target import BundleSpec, Target
    from svcc.frontends.repository import Repository, RepositoryTree

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen

Selected = list[tuple[ModuleIR, Capability]]
REPOSITORY_READINESS_SCHEMA: Final = "svc.repository-readiness/v1"


class ProgramKind(Protocol):
    """What differs between a file's program and a directory's once they are read."""

    bundle_kind: ClassVar[str]
    # Whether a capability is also selected (and shown) by its plain function name.
    selects_by_function_name: ClassVar[bool]

    def capabilities(self, analysis: "Analysis") -> "list[Entry]":
        """Every capability with its module and verdict, in module then source order."""
        ...

    def selectable(self, analysis: "Analysis") -> "list[Entry]":
        """The capabilities in the order a bundle lists them."""
        ...

    def where(self, analysis: "Analysis") -> str:
        """How selection messages name the input."""
        ...

    def document(
        self, analysis: "Analysis", modules: Sequence[str] | None, *, files: bool
    ) -> dict[str, Any]:
        """The readiness document ``inspect --format json`` writes."""
        ...

    def check(self, analysis: "Analysis", backend: "Target") -> "BundleSpec | None":
        """The bundle ``backend`` writes or wraps; refuse what it could not hold."""
        ...

    def program(
        self,
        analysis: "Analysis",
        selected: Selected,
        request: "BundleRequest",
    ) -> "tuple[ModuleIR, ReadinessReport, Program]":
        """The program's view (the IR a target is given), its readiness and the program."""
        ...


@frozen
class FileProgram:
    """A file, a notebook or source in memory: one module and its local import closure."""

    bundle_kind: ClassVar[str] = "file"
    selects_by_function_name: ClassVar[bool] = True

    def capabilities(self, analysis: "Analysis") -> "list[Entry]":
        if analysis.ir is None or analysis.readiness is None:
            return []
        pairs = zip(analysis.ir.capabilities, analysis.readiness.assessments, strict=True)
        return [(analysis.ir, cap, assessment) for cap, assessment in pairs]

    def selectable(self, analysis: "Analysis") -> "list[Entry]":
        return self.capabilities(analysis)

    def where(self, analysis: "Analysis") -> str:
        if analysis.error is not None or analysis.ir is None or analysis.readiness is None:
            raise InputError(analysis.error_message())
        return analysis.path

    def document(
        self, analysis: "Analysis", _modules: Sequence[str] | None, *, files: bool
    ) -> dict[str, Any]:
        """The module's readiness document, or ``{"error": ...}`` when it did not analyse."""
        del files  # a file's document is its one module's
        if analysis.readiness is None:
            error = analysis.error
            assert error is not None
            return {"error": {"path": analysis.path, **error.to_json()}}
        return analysis.readiness.to_json()

    def check(self, analysis: "Analysis", backend: "Target") -> "BundleSpec | None":
        """A file that analysed, whose module (and local modules) the bundle can hold."""
        from svcc.compiler.bundles import served_bundle
        from svcc.contracts.target import Wrapper

        if analysis.error is not None or analysis.ir is None or analysis.readiness is None:
            raise InputError(analysis.error_message())
        if analysis.module_text is None:
            raise IneligibleError(f"{analysis.path}: no module text")
        spec = backend.bundle
        if spec is None and isinstance(backend, Wrapper):
            spec = served_bundle(backend, "a bundle")
        if spec is None:
            return None
        problem = spec.module_name_problem(analysis.module)
        if problem:
            raise InputError(f"{problem}; choose another with --module-name")
        for local in sorted({p.split("/")[1].removesuffix(".py") for p, _ in analysis.local_files}):
            problem = spec.module_name_problem(local)
            if local != analysis.module.split(".")[0] and problem:
                raise IneligibleError(
                    f"{analysis.path}: imports the local module {local!r}: {problem}; rename it"
                )
        return spec

    def program(
        self,
        analysis: "Analysis",
        selected: Selected,
        _request: "BundleRequest",
    ) -> "tuple[ModuleIR, ReadinessReport, Program]":
        """The module restricted to the selection, under ``source/`` with its package
        ``__init__``s (empty unless the closure holds the real ones) and its local import
        closure, each with its exact bytes (a notebook: its converted module, and the
        notebook under ``original/``)."""
        ir, readiness, text = analysis.ir, analysis.readiness, analysis.module_text
        assert ir is not None  # check() said so
        assert readiness is not None
        assert text is not None
        chosen = tuple(cap for _, cap in selected)
        if chosen != ir.capabilities:  # else the same object: what was derived from it is reused
            ir = evolve(ir, capabilities=chosen)
        parts = ir.module.split(".")
        files = {"/".join(["source", *parts[:d], "__init__.py"]): b"" for d in range(1, len(parts))}
        files |= dict(analysis.local_files)
        leaf = ["__init__.py"] if analysis.is_package else []
        module_path = "/".join(["source", *parts, *leaf]) + ("" if leaf else ".py")
        if ir.source.format == "notebook":
            files[module_path] = text.encode("utf-8")
            files[f"original/{analysis.path}"] = analysis.source_bytes
        else:
            files[module_path] = analysis.source_bytes
        program = Program(
            name=ir.module,
            modules=(ir,),
            files=tuple(files.items()),
            module_paths=((ir.module, module_path),),
            readiness=readiness.to_json(),
            layout=FileLayout(provided=shipped((ir,))),
        )
        return ir, readiness, program


@frozen
class DirectoryProgram:
    """A directory: its modules judged over the module graph; a bundle carries the import
    closure of the selected modules, its capabilities named ``<module>.<function>``."""

    bundle_kind: ClassVar[str] = "repository"
    selects_by_function_name: ClassVar[bool] = False

    def capabilities(self, analysis: "Analysis") -> "list[Entry]":
        repo = _repository(analysis)
        out = []
        for module, report in sorted(analysis.reports.items()):
            ir = repo.modules[module].ir
            if report is None or ir is None:
                continue
            for cap, assessment in zip(ir.capabilities, report.assessments, strict=True):
                out.append((ir, cap, assessment))
        return out

    def selectable(self, analysis: "Analysis") -> "list[Entry]":
        return sorted(self.capabilities(analysis), key=lambda e: e[1].id)

    def where(self, _analysis: "Analysis") -> str:
        return "the repository"

    def document(
        self, analysis: "Analysis", modules: Sequence[str] | None, *, files: bool
    ) -> dict[str, Any]:
        """``inspect DIR --format json``'s document over ``modules`` (default all): one
        readiness document per module file (keyed by path; ids are dotted), which module
        each path is, the graph. ``files=False``: ``"files"`` left empty
        (``compiler.repository_document`` renders them)."""
        repo = _repository(analysis)
        tree = repo.tree
        chosen = sorted(analysis.reports) if modules is None else sorted(modules)
        requirements = analysis.requirements
        return {
            "schema": REPOSITORY_READINESS_SCHEMA,
            "source_roots": list(tree.roots),
            "dependencies": list(requirements.lines) if requirements else [],
            "diagnostics": [d.to_json() | {"path": path} for path, d in tree.problems],
            "files": {
                repo.modules[m].file.path: analysis.module_document(m)
                for m in sorted(chosen, key=lambda m: repo.modules[m].file.path)
                if files
            },
            "modules": {m: repo.modules[m].file.path for m in chosen},
            "graph": repo.graph.to_json(),
            **({"data_files": _data_digests(tree)} if tree.data else {}),
        }

    def check(self, _analysis: "Analysis", backend: "Target") -> "BundleSpec | None":
        from svcc.compiler.bundles import served_bundle

        return served_bundle(backend, "a repository")

    def program(
        self,
        analysis: "Analysis",
        selected: Selected,
        request: "BundleRequest",
    ) -> "tuple[ModuleIR, ReadinessReport, Program]":
        """The import closure of ``selected`` under ``source/``, and the view a target sees
        (the repository's name, dotted capability names, id order)."""
        from svcc.compiler.bundles import carried_modules, local_name, tree_digest
        from svcc.compiler.passes.readiness import ReadinessReport
        from svcc.contracts.policy import ExecutionPolicy

        repo = _repository(analysis)
        spec = request.spec
        assert spec is not None  # check() said so
        if request.execution is not None and not isinstance(request.execution, ExecutionPolicy):
            raise InputError("a repository bundle is governed by an svc.execution/v1 policy")
        name = request.name or repo.tree.config.name or local_name(analysis.path)
        provenance = request.provenance
        if provenance is None:
            provenance = {"kind": "directory", "repository_digest": tree_digest(repo)}
        by_module: dict[str, list[Capability]] = {}
        for ir, cap in selected:
            by_module.setdefault(ir.module, []).append(cap)
        closure = carried_modules(repo, by_module, spec)
        modules = tuple(
            qualified(evolve(_ir_of(repo, m), capabilities=tuple(caps)))
            for m, caps in sorted(by_module.items())
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
        layout = RepositoryLayout(
            sources=sources,
            namespaces=_namespaces(repo, closure),
            packages=tuple(sorted(t for t in repo.graph.tops if t not in sys.stdlib_module_names)),
            provenance=provenance,
            data=tuple((f.bundle_path, f.path) for f in repo.tree.data),
            provided=shipped(_ir_of(repo, m) for m in closure),
        )
        files = {s.bundle_path: s.data for s in sources}
        files |= {f.bundle_path: f.data for f in repo.tree.data}  # verified like source
        program = Program(
            name=name,
            modules=modules,
            files=tuple(files.items()),
            module_paths=tuple((s.module, s.bundle_path) for s in sources),
            readiness=analysis.document(sorted(by_module)),
            layout=layout,
        )
        view = _view(name, modules)
        ids = {c.id for c in view.capabilities}
        reports = [analysis.reports[m] for m in sorted(by_module)]
        readiness = ReadinessReport(
            module=name,
            source={"kind": "repository"},
            ir_digest="",
            assessments=tuple(
                a for r in reports if r is not None for a in r.assessments if a.capability_id in ids
            ),
        )
        return view, readiness, program


FILE = FileProgram()
DIRECTORY = DirectoryProgram()


def _repository(analysis: "Analysis") -> "Repository":
    assert analysis.repository is not None  # the directory front end fills it
    return analysis.repository


def _data_digests(tree: "RepositoryTree") -> dict[str, str]:
    """``[tool.svcc] data-files`` as read: tree path → ``sha256:`` of its bytes."""
    from svcc.ir.canonical import digest_bytes

    return {f.path: digest_bytes(f.data) for f in tree.data}


def _namespaces(repo: "Repository", closure: Sequence[str]) -> tuple[str, ...]:
    """The namespace packages (no ``__init__.py``) above the carried modules."""
    tops = {m.split(".", 1)[0] for m in closure}
    return tuple(
        sorted(
            n
            for n in repo.graph.namespaces
            if n.split(".", 1)[0] in tops and any(m.startswith(n + ".") for m in closure)
        )
    )


def qualified(ir: ModuleIR) -> ModuleIR:
    """The module's capabilities named ``<module>.<function>`` (routes, tools)."""
    caps = tuple(evolve(c, name=f"{ir.module}.{c.qualname}") for c in ir.capabilities)
    return evolve(ir, capabilities=caps)


def _view(name: str, modules: Sequence[ModuleIR]) -> ModuleIR:
    """The IR a target sees for a directory's program: the program's name, every selected
    capability (dotted names, id order); the modules themselves are in ``ctx.program``."""
    caps = sorted((c for ir in modules for c in ir.capabilities), key=lambda c: c.id)
    return evolve(
        modules[0],
        module=name,
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


def shipped(modules: "Iterable[ModuleIR | None]") -> tuple[str, ...]:
    """The runtime's modules a bundle of ``modules`` ships beside its sources: the ``cog``
    shim when one of them imports ``cog``."""
    return (
        (SHIM_MODULE,) if any(ir is not None and imports_cog(ir.imports) for ir in modules) else ()
    )
