"""Readiness over a repository's module graph: the one readiness walk, for a directory and
for a file alike.

Each module is judged by the ordinary readiness pass, with imports resolved over the graph
(local ones, absolute or relative, resolve to repository modules; external ones against the
standard library and the declared dependencies). Then every capability inherits the
import-time risks of each repository module that importing it executes: its parent
packages, the modules it imports at module level and in its own body, transitively. Each
inherited reason (``SVC-R024``) names the risky module's file and line; the walk visits a
module once, so import cycles terminate.

A file is a one-module repository here: the modules beside it that it imports (its local
import closure, lowered once by :mod:`svcc.frontends.file_repository`) are the rest of its
repository, so ``svcc inspect FILE`` and ``svcc inspect DIR`` say the same of the same
import, with the same code and words. A file that imports nothing beside it and has no
relative import has no graph to walk (``repo`` is ``None``): every import it has is
external, judged by the same rule.
"""

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from svcc.compiler.passes.import_resolution import undeclared
from svcc.compiler.passes.readiness import (
    Keyed,
    ReadinessReport,
    classify,
    in_order,
    keyed,
    module_reasons,
    order,
    sorted_keyed,
    stronger,
)
from svcc.compiler.passes.rule_subject import Environment, ImportProblem
from svcc.compiler.passes.sibling_imports import bare_sibling, sibling_import_problem
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import (
    R021_LOCAL_IMPORT,
    R024_IMPORTED_MODULE_RISK,
    ReadinessClass,
)
from svcc.ir.canonical import digest_bytes
from svcc.ir.model import Capability, Import, ModuleIR, Span
from svcc.ir.records import evolve

if TYPE_CHECKING:
    from svcc.frontends.repository import (
        Held,
        LoweringPool,
        ModuleGraph,
        Repository,
        Resolution,
        Spilled,
    )


class RepositoryReadiness:
    """Runs once per repository; ``reports`` maps module name → its readiness report.

    ``reserved`` are the top-level names the bundle's own files take (an import of a local
    module by one of them is ``SVC-R021``); ``governed`` asks for governed execution's
    rules; ``data_files`` gives a module's declared data files (``--data``) where the
    repository's ``[tool.svcc] data-files`` do not; ``declared_by_project`` false says
    undeclared imports as a file's user declares them (``--requirements FILE``)."""

    def __init__(
        self,
        repo: "Repository | None",
        declared_imports: frozenset[str],
        declared_requirements: tuple[str, ...],
        allow: frozenset[str] = frozenset(),
        unmapped: tuple[str, ...] = (),
        *,
        reserved: frozenset[str] = frozenset(),
        governed: bool = False,
        data_files: Mapping[str, frozenset[str]] | None = None,
        declared_by_project: bool = True,
    ) -> None:
        self.repo = repo
        # what a worker process needs to judge its modules as this walk would
        self.settings = {
            "declared_imports": declared_imports,
            "declared_requirements": declared_requirements,
            "allow": allow,
            "unmapped": unmapped,
            "reserved": reserved,
            "governed": governed,
            "data_files": data_files,
            "declared_by_project": declared_by_project,
        }
        self.allow = allow
        self.unmapped = unmapped
        self.declared_imports = declared_imports
        self.declared_requirements = declared_requirements
        self.reserved = reserved
        self.governed = governed
        self.data_files = data_files or {}
        self.declared_by_project = declared_by_project
        self.envs: dict[str, Environment] = {}
        self._risks: dict[str, list[str]] = {}
        # per module: its module-wide reasons (its risks and its report both start from
        # them), with the IR and environment they are of
        self._module_wide: dict[str, tuple[ModuleIR, Environment, list[Diagnostic]]] = {}
        self._reach: dict[str, frozenset[str]] = {}
        # per module: what importing it runs (keyed, sorted), its class, the modules said
        self._module_level: dict[str, tuple[list[Keyed], ReadinessClass, frozenset[str]]] = {}

    def resolver(
        self, module: str, ir: ModuleIR, base: Environment
    ) -> "Callable[[Import], tuple[ImportProblem, str] | None] | None":
        if self.repo is None:
            return None
        graph = self.repo.graph
        by_import: dict[Import, Resolution] = {
            imp: graph.resolutions[(module, i)] for i, imp in enumerate(ir.imports)
        }

        def resolve(imp: Import) -> "tuple[ImportProblem, str] | None":
            res = by_import[imp]
            if res.problem is not None:
                return ("local" if imp.level > 0 else "missing"), res.problem
            if res.external is None:
                clash = next((m for m in res.local if m.split(".", 1)[0] in self.reserved), None)
                if clash is None:
                    return None
                return "local", (
                    f"local module {clash.split('.', 1)[0]!r} clashes with a module of the "
                    "bundle itself; rename it"
                )
            why = undeclared(res.external, base)
            if why is None:
                return None
            sibling = bare_sibling(graph, module, res.external)
            if sibling is not None:
                return "local", sibling_import_problem(module, res.external, sibling)
            return "external", why

        return resolve

    def env(self, module: str, ir: ModuleIR) -> Environment:
        if module not in self.envs:
            data = self.data_files.get(module)
            if data is None and self.repo is not None and module in self.repo.modules:
                data = self.repo.data_files_of(module)
            base = Environment(
                declared_imports=self.declared_imports,
                declared_requirements=self.declared_requirements,
                allow=self.allow,
                unmapped=self.unmapped,
                data_files=data or frozenset(),
                governed=self.governed,
                repository=self.declared_by_project,
            )
            self.envs[module] = evolve(base, resolve_import=self.resolver(module, ir, base))
        return self.envs[module]

    def module_reasons(self, module: str, ir: ModuleIR, env: Environment) -> list[Diagnostic]:
        """``readiness.module_reasons(ir, env)``, computed once per module: a module's risks
        (:meth:`risks`) and its report (``module_passes.JudgePass``) both need them."""
        cached = self._module_wide.get(module)
        if cached is not None and cached[0] is ir and cached[1] is env:
            return cached[2]
        found = module_reasons(ir, env)
        self._module_wide[module] = (ir, env, found)
        return found

    def risks(self, module: str) -> list[str]:
        """The import-time risks of one module, each ``path:line: message``."""
        if module not in self._risks:
            assert self.repo is not None
            source = self.repo.modules[module]
            ir = source.ir
            if ir is None:
                error = next((d for d in source.result.diagnostics if d.severity == "error"), None)
                where = error.location(source.file.path) if error else source.file.path
                message = error.message if error else "cannot be analysed"
                self._risks[module] = [f"{where}: {message}"]
            else:
                self._risks[module] = [
                    f"{r.location(source.file.path)}: {r.message}"
                    for r in sorted(
                        self.module_reasons(module, ir, self.env(module, ir)), key=order
                    )
                    if r.severity == "error"
                ]
        return self._risks[module]

    def risky_reach(self, start: str) -> frozenset[str]:
        """The risky modules (those with import-time risks) that running ``start`` executes,
        itself included: every module's set is computed once, a strongly connected component
        at a time (Tarjan's walk, without recursion), each from its members and the sets of
        what it imports, so a chain of N modules costs N, not N² (each module's whole import
        closure walked)."""
        reach = self._reach
        if start in reach:
            return reach[start]
        assert self.repo is not None
        edges = self.repo.graph.edges

        def imported(module: str) -> list[str]:
            return [e.target for e in edges.get(module, []) if e.scope == ""]

        index: dict[str, int] = {start: 0}
        low: dict[str, int] = {start: 0}
        stack, on_stack = [start], {start}
        work = [(start, iter(imported(start)))]
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor in reach:
                    continue
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(imported(successor))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] != index[node]:
                    continue
                component: list[str] = []
                while not component or component[-1] != node:
                    component.append(stack.pop())
                    on_stack.discard(component[-1])
                members = set(component)
                found = {m for m in component if self.risks(m)}
                for m in component:
                    for successor in imported(m):
                        if successor not in members:
                            found |= reach[successor]
                result = frozenset(found)
                for m in component:
                    reach[m] = result
        return reach[start]

    def _walk(
        self, starts: Sequence[tuple[str, Span | None]], reported: set[str]
    ) -> list[Diagnostic]:
        """One ``SVC-R024`` per risky module the ``starts`` execute that is not ``reported``
        yet (each is said through the first start that runs it). Their order here does not
        matter: reasons are sorted by place, code and message, which names the module."""
        assert self.repo is not None
        loaded = self.repo.graph.loaded
        out: list[Diagnostic] = []
        for target, span in starts:
            found: set[str] = set()
            for module in loaded(target):
                found |= self.risky_reach(module)
            for reached in sorted(found - reported):
                reported.add(reached)
                risks = self.risks(reached)
                more = f" (and {len(risks) - 1} more)" if len(risks) > 1 else ""
                via = "" if reached == target else f" through {target}"
                out.append(
                    diag(
                        R024_IMPORTED_MODULE_RISK,
                        f"importing {reached}{via} runs code at import: {risks[0]}{more}",
                        span,
                    )
                )
        return out

    def inherited(self, module: str, cap: Capability) -> tuple[list[Keyed], ReadinessClass]:
        """Reasons from the modules that importing ``module`` executes (shared by all its
        capabilities: computed, keyed, sorted and classified once), then from ``cap``'s own
        function-scope imports; with their class (``classify``). The list may be the shared
        one: not to be changed."""
        if self.repo is None:
            return [], "eligible"
        edges = self.repo.graph.edges.get(module, [])
        if module not in self._module_level:
            from svcc.frontends.repository import parents  # once per module, not per capability

            reported = {module}
            starts: list[tuple[str, Span | None]] = [(p, None) for p in parents(module)]
            starts += [(e.target, e.span) for e in edges if e.scope == ""]
            found = self._walk(starts, reported)
            self._module_level[module] = (
                sorted_keyed(found),
                classify(found),
                frozenset(reported),
            )
        shared, shared_class, seen = self._module_level[module]
        own = [(e.target, e.span) for e in edges if e.scope == cap.qualname]
        more = self._walk(own, set(seen)) if own else []
        if not more:
            return shared, shared_class
        return [*shared, *keyed(more)], stronger(shared_class, classify(more))

    def report(
        self,
        module: str,
        ir: ModuleIR | None = None,
        *,
        serialize: bool = True,
        diagnostics: tuple[Diagnostic, ...] = (),
    ) -> ReadinessReport | None:
        """One module's report (``None`` when it did not analyse): the module passes, the
        last of which asks this walk for the risks it inherits. ``ir`` defaults to the
        repository's; ``serialize=False`` leaves the IR digest empty (a report that shows
        neither it nor the IR); ``diagnostics`` (the front end's) are carried by the
        report."""
        if ir is None:
            assert self.repo is not None
            ir = self.repo.modules[module].ir
        if ir is None:
            return None
        from svcc.compiler.passes.module_passes import ModuleUnit, run_passes

        digest = ""
        source = self.repo.modules.get(module) if self.repo is not None else None
        if serialize:
            # a worker that lowered the module has encoded its IR (``FrontendResult.ir_json``)
            encoded = source.result.ir_json if source is not None else None
            if encoded is None:
                from svcc.ir.serde import ir_digest

                digest = ir_digest(ir)
            else:
                digest = digest_bytes(encoded)
        path = source.file.path if source is not None else module
        unit = ModuleUnit(
            path=path,
            module=module,
            ir=ir,
            env=self.env(module, ir),
            digest=digest,
            diagnostics=diagnostics,
            graph=self if self.repo is not None else None,
        )
        return run_passes(unit)

    def inherit(self, module: str, ir: ModuleIR, base: ReadinessReport) -> ReadinessReport:
        """``base`` (the ordinary pass's report of ``module``) with every capability's
        inherited import-time risks added."""
        if self.repo is None:
            return base
        assessments = []
        for cap, assessment in zip(ir.capabilities, base.assessments, strict=True):
            extra, extra_class = self.inherited(module, cap)
            # one reason per import: where the pass already said the import cannot work
            # (SVC-R021: a relative import that does not resolve, a clash), the imported
            # module's risks add nothing
            cannot = {r.span for r in assessment.reasons if r.code == R021_LOCAL_IMPORT.code}
            if cannot:
                extra = [(k, d) for k, d in extra if d.span is None or d.span not in cannot]
                extra_class = classify(d for _, d in extra)
            if not extra:
                assessments.append(assessment)
                continue
            # the pass's reasons first, as ``sorted([*reasons, *extra], key=order)`` puts
            # them on a tie; its class is its reasons' (``ReadinessPass.run``)
            reasons = keyed(assessment.reasons)
            reasons += extra
            assessments.append(
                evolve(
                    assessment,
                    klass=stronger(assessment.klass, extra_class),
                    reasons=in_order(reasons),
                )
            )
        return evolve(base, assessments=tuple(assessments))

    def run(
        self, pool: "LoweringPool | None" = None, *, keep: bool = True
    ) -> Mapping[str, ReadinessReport | None]:
        """Every module's report, sorted by module. ``pool``: the worker processes that
        lowered the repository and hold its IRs; each judges the modules it holds (the
        parent, which holds only their JSON, never decodes them): first each module's own
        import-time risks, which the parent gathers and hands to all, then the reports.
        ``keep`` false: the workers render the documents next (``render_in_workers``) and
        the parent reads no report, so none is sent (reading one is an error)."""
        from svcc.frontends.repository import collection_paused

        assert self.repo is not None
        if pool is None:
            with collection_paused():  # see there: the same many small acyclic objects
                return {module: self.report(module) for module in sorted(self.repo.modules)}
        from svcc.frontends.repository import parents

        graph = self.repo.graph
        # whose risks a walk can reach: what an import loads, and every package
        reached = {e.target for edges in graph.edges.values() for e in edges}
        reached |= {p for module in self.repo.modules for p in parents(module)}
        risks: dict[str, list[str]] = {}
        for part in pool.each(_own_risks, (graph, self.settings, reached)):
            risks |= part
        encoded: dict[str, memoryview | None] = {}
        for judged in pool.each(_reports, (risks, keep)):
            encoded |= {m: None if at is None else pool.spilled(at) for m, at in judged.items()}
        return EncodedReports({module: encoded[module] for module in sorted(self.repo.modules)})


# -- in a worker process of a LoweringPool ------------------------------------------------


def _own_risks(
    held: "Held", argument: "tuple[ModuleGraph, dict[str, Any], set[str]]"
) -> dict[str, list[str]]:
    """The import-time risks of the modules this worker holds that a walk can reach,
    judged over ``graph`` (the walk is kept for :func:`_reports`)."""
    from svcc.frontends.repository import ModuleSource, Repository

    graph, settings, reached = argument
    files = {f.module: f for f in held.tree.files}
    modules = {m: ModuleSource(file=files[m], result=r) for m, r in held.results.items()}
    repo = Repository(tree=held.tree, modules=modules, graph=graph)
    walk = held.scratch["walk"] = RepositoryReadiness(repo, **settings)
    return {module: walk.risks(module) for module in modules if module in reached}


def _reports(
    held: "Held", argument: tuple[dict[str, list[str]], bool]
) -> "dict[str, Spilled | None]":
    """The reports of the modules this worker holds, given every module's risks (kept in
    ``held.scratch["reports"]`` for what the parent asks next), each pickled on its own
    into the worker's spill file for :class:`EncodedReports` (``None``: the module did not
    lower); when the parent will not read them (``keep`` false: their documents are
    rendered here next), an empty piece instead (pickling them cost each worker a tenth of
    its judging)."""
    import pickle

    risks, keep = argument
    walk: RepositoryReadiness = held.scratch["walk"]
    walk._risks |= risks
    reports = held.scratch["reports"] = {module: walk.report(module) for module in held.results}
    return {
        module: None
        if report is None
        else held.spill.put(pickle.dumps(report, pickle.HIGHEST_PROTOCOL) if keep else b"")
        for module, report in reports.items()
    }


class EncodedReports(Mapping[str, ReadinessReport | None]):
    """Reports judged in worker processes, as the parent holds them: each one unpickled
    on first use. ``inspect DIR --format json`` has the workers render the documents and
    reads no report in the parent, whose serial part would otherwise unpickle all of them
    (the workers then send none: an empty piece, see ``_reports``). Which modules have
    none (they did not lower) is known without decoding (:meth:`failed`)."""

    __slots__ = ("_decoded", "_encoded")

    def __init__(self, encoded: "Mapping[str, bytes | memoryview | None]") -> None:
        self._encoded = encoded
        self._decoded: dict[str, ReadinessReport | None] = {}

    def __getitem__(self, module: str) -> ReadinessReport | None:
        try:
            return self._decoded[module]
        except KeyError:
            pass
        data = self._encoded[module]
        if data is None:
            return None
        if not data:
            raise RuntimeError(f"{module}: its report was rendered in its worker, not sent")
        import pickle

        report: ReadinessReport = pickle.loads(data)
        self._decoded[module] = report
        return report

    def __iter__(self) -> "Iterator[str]":
        return iter(self._encoded)

    def __len__(self) -> int:
        return len(self._encoded)

    def failed(self) -> list[str]:
        """The modules with no report, in order."""
        return [module for module, data in self._encoded.items() if data is None]
