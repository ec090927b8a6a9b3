"""Readiness over a repository's module graph.

Each module is judged by the ordinary readiness pass, with imports resolved over the graph
(local ones, absolute or relative, resolve to repository modules; external ones against the
standard library and the declared dependencies). Then every capability inherits the
import-time risks of each repository module that importing it executes: its parent
packages, the modules it imports at module level and in its own body, transitively. Each
inherited reason (``SVC-R024``) names the risky module's file and line; the walk visits a
module once, so import cycles terminate.

A single file is judged by the same walk: its local import closure (the modules beside it
that it imports, lowered once by ``compiler.closure``) is a small repository with the file
as its main module (``LocalClosure.repository``), whose capabilities inherit through
:meth:`RepositoryReadiness.inherit`, so ``svcc inspect FILE`` and ``svcc inspect DIR`` say
the same of the same function.
"""

import sys
from collections.abc import Callable, Sequence

import attrs
from svcc.compiler.passes.readiness import (
    Assessment,
    Environment,
    ReadinessReport,
    classify,
    module_reasons,
    order,
)
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import R021_LOCAL_IMPORT, R024_IMPORTED_MODULE_RISK
from svcc.frontends.repository import Repository, Resolution, collection_paused, parents
from svcc.ir.canonical import digest_bytes
from svcc.ir.model import Capability, Import, ModuleIR, Span
from svcc.ir.serde import ir_to_json

DECLARE_HINT = (
    "declare it in [project] dependencies of pyproject.toml, [tool.svcc] dependencies, "
    "or with --requirements FILE"
)


class RepositoryReadiness:
    """Runs once per repository; ``reports`` maps module name → its readiness report."""

    def __init__(
        self,
        repo: Repository,
        declared_imports: frozenset[str],
        declared_requirements: tuple[str, ...],
        allow: frozenset[str] = frozenset(),
        unmapped: tuple[str, ...] = (),
    ) -> None:
        self.repo = repo
        self.allow = allow
        self.unmapped = unmapped
        self.declared_imports = declared_imports
        self.declared_requirements = declared_requirements
        self.envs: dict[str, Environment] = {}
        self.ir_json: dict[str, bytes] = {}
        self._risks: dict[str, list[str]] = {}
        self._closures: dict[str, list[str]] = {}
        self._module_level: dict[str, tuple[list[Diagnostic], frozenset[str]]] = {}

    def resolver(self, module: str, ir: ModuleIR) -> Callable[[Import], str | None]:
        by_import: dict[Import, Resolution] = {
            imp: self.repo.graph.resolutions[(module, i)] for i, imp in enumerate(ir.imports)
        }

        def resolve(imp: Import) -> str | None:
            res = by_import[imp]
            if res.problem is not None:
                return res.problem
            if res.external is None:
                return None
            root = res.external.split(".", 1)[0]
            if (
                root == "__future__"
                or root in sys.stdlib_module_names
                or root in self.declared_imports
            ):
                return None
            return (
                f"import {res.external!r} is not standard library, a module of the "
                f"repository, or a declared dependency; {DECLARE_HINT}"
            )

        return resolve

    def env(self, module: str, ir: ModuleIR) -> Environment:
        if module not in self.envs:
            self.envs[module] = Environment(
                declared_imports=self.declared_imports,
                declared_requirements=self.declared_requirements,
                resolve_import=self.resolver(module, ir),
                allow=self.allow,
                unmapped=self.unmapped,
                data_files=self.repo.data_files_of(module),
            )
        return self.envs[module]

    def risks(self, module: str) -> list[str]:
        """The import-time risks of one module, each ``path:line: message``."""
        if module not in self._risks:
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
                    for r in sorted(module_reasons(ir, self.env(module, ir)), key=order)
                    if r.severity == "error"
                ]
        return self._risks[module]

    def closure(self, target: str) -> list[str]:
        if target not in self._closures:
            self._closures[target] = self.repo.graph.import_closure([target])
        return self._closures[target]

    def _walk(
        self, starts: Sequence[tuple[str, Span | None]], reported: set[str]
    ) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        known = self._risks
        for target, span in starts:
            # closures overlap: most of each one is reported already (one pass to skip it)
            for reached in [r for r in self.closure(target) if r not in reported]:
                if reached in reported:  # twice in one closure
                    continue
                reported.add(reached)
                risks = known.get(reached)
                if risks is None:
                    risks = self.risks(reached)
                if not risks:
                    continue
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

    def inherited(self, module: str, cap: Capability) -> list[Diagnostic]:
        """Reasons from the modules that importing ``module`` executes (shared by all its
        capabilities, computed once), then from ``cap``'s own function-scope imports."""
        edges = self.repo.graph.edges.get(module, [])
        if module not in self._module_level:
            reported = {module}
            starts: list[tuple[str, Span | None]] = [(p, None) for p in parents(module)]
            starts += [(e.target, e.span) for e in edges if e.scope == ""]
            self._module_level[module] = (self._walk(starts, reported), frozenset(reported))
        shared, seen = self._module_level[module]
        own = [(e.target, e.span) for e in edges if e.scope == cap.qualname]
        return [*shared, *self._walk(own, set(seen))] if own else list(shared)

    def report(self, module: str) -> ReadinessReport | None:
        ir = self.repo.modules[module].ir
        if ir is None:
            return None
        from svcc.compiler.passes.pipeline import ModuleUnit, run_passes

        ir_json = self.repo.modules[module].result.ir_json or ir_to_json(ir)  # see there
        self.ir_json[module] = ir_json
        unit = ModuleUnit(
            path=self.repo.modules[module].file.path,
            ir=ir,
            env=self.env(module, ir),
            digest=digest_bytes(ir_json),
        )
        return self.inherit(module, run_passes(unit))

    def inherit(self, module: str, base: ReadinessReport) -> ReadinessReport:
        """``base`` (the ordinary pass's report of ``module``) with every capability's
        inherited import-time risks added; a single file's local closure is judged by
        this same walk, so ``inspect FILE`` and ``inspect DIR`` agree."""
        ir = self.repo.modules[module].ir
        assert ir is not None
        assessments = []
        for cap, assessment in zip(ir.capabilities, base.assessments, strict=True):
            # one reason per import: where the single-file pass already said the import
            # cannot work (SVC-R021: unparseable, undeclared, above the top package), the
            # imported module's risks add nothing
            cannot = {r.span for r in assessment.reasons if r.code == R021_LOCAL_IMPORT.code}
            extra = [
                d for d in self.inherited(module, cap) if d.span is None or d.span not in cannot
            ]
            if not extra:
                assessments.append(assessment)
                continue
            reasons = sorted([*assessment.reasons, *extra], key=order)
            assessments.append(
                Assessment(
                    capability_id=assessment.capability_id,
                    name=assessment.name,
                    klass=classify(reasons),
                    reasons=tuple(reasons),
                )
            )
        return attrs.evolve(base, assessments=tuple(assessments))

    def run(self) -> dict[str, ReadinessReport | None]:
        with collection_paused():  # see there: the same many small acyclic objects
            return {module: self.report(module) for module in sorted(self.repo.modules)}
