"""The passes every module goes through, in one ordered list: :data:`PASSES`.

A file, a notebook and each module of a repository take the same steps after the front
end: ``verify`` (the IR's invariants: a front-end bug never reaches a target), ``readiness``
(the rule tables) and ``inherit`` (what importing the module runs, over its module graph).
Each pass is a :class:`Pass`: a name and ``run(unit) -> unit`` over a :class:`ModuleUnit`,
so a new check is one class added to the list, on every path at once. Selection is not per
module: it runs once over every module's assessments
(:func:`svcc.compiler.passes.select.select`).
"""

from typing import TYPE_CHECKING, ClassVar, Final, Protocol

from svcc.compiler.passes.readiness import ReadinessPass, ReadinessReport
from svcc.compiler.passes.rule_subject import Environment
from svcc.ir.model import ModuleIR
from svcc.ir.records import evolve

if TYPE_CHECKING:
    from attrs import frozen
    from svcc.contracts.diagnostics import Diagnostic
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen


class ModuleGraphRisks(Protocol):
    """The import-time risks a module inherits over its module graph (the repository walk:
    ``repository_readiness.RepositoryReadiness``)."""

    def module_reasons(self, module: str, ir: ModuleIR, env: Environment) -> "list[Diagnostic]":
        """``readiness.module_reasons(ir, env)``, which the walk may have computed already
        (a module's import-time risks, which the walk reads for the modules importing it)."""
        ...

    def inherit(self, module: str, ir: ModuleIR, base: ReadinessReport) -> ReadinessReport: ...


@frozen(kw_only=True)
class ModuleUnit:
    """One module between passes: its name and IR, the environment it is judged in, its IR
    digest (``""`` when nobody shows it), the front end's diagnostics, the module graph it
    sits in (``None``: it stands alone) and, once judged, its report."""

    path: str
    module: str = ""
    ir: ModuleIR
    env: Environment
    digest: str
    diagnostics: "tuple[Diagnostic, ...]" = ()
    graph: ModuleGraphRisks | None = None
    report: ReadinessReport | None = None


class Pass(Protocol):
    name: ClassVar[str]

    def run(self, unit: ModuleUnit) -> ModuleUnit: ...


class VerifyPass:
    """The IR's invariants (``svcc.ir.verify``); a violation is svcc's bug, said as such."""

    name: ClassVar[str] = "verify"

    def run(self, unit: ModuleUnit) -> ModuleUnit:
        from svcc.contracts.errors import InternalError
        from svcc.ir.verify import IRInvariantError, verify

        try:
            verify(unit.ir)
        except IRInvariantError as exc:
            raise InternalError(f"{unit.path}: {exc}") from None
        return unit


class JudgePass:
    """The readiness rules of one module (``passes.readiness``)."""

    name: ClassVar[str] = "readiness"

    def run(self, unit: ModuleUnit) -> ModuleUnit:
        graph = unit.graph
        report = ReadinessPass().run(
            unit.ir,
            unit.env,
            unit.digest,
            diagnostics=unit.diagnostics,
            module_wide=None
            if graph is None
            else graph.module_reasons(unit.module, unit.ir, unit.env),
        )
        return evolve(unit, report=report)


class InheritPass:
    """What importing the module runs, judged over its module graph: every capability
    inherits the import-time risks of the modules it loads (``SVC-R024``)."""

    name: ClassVar[str] = "inherit"

    def run(self, unit: ModuleUnit) -> ModuleUnit:
        if unit.graph is None or unit.report is None:
            return unit
        return evolve(unit, report=unit.graph.inherit(unit.module, unit.ir, unit.report))


PASSES: Final[tuple[Pass, ...]] = (VerifyPass(), JudgePass(), InheritPass())


def run_passes(unit: ModuleUnit) -> ReadinessReport:
    """Every pass in order; the module's readiness report."""
    for step in PASSES:
        unit = step.run(unit)
    assert unit.report is not None  # the readiness pass is in the list
    return unit.report
