"""The passes every module goes through, in one ordered list: :data:`PASSES`.

A file, a notebook and each module of a repository take the same steps after the front
end: ``verify`` (the IR's invariants: a front-end bug never reaches a target) and
``readiness`` (the per-module rules; a repository's walk then adds what importing the module
runs). Each pass is a :class:`Pass`: a name and ``run(unit) -> unit`` over a
:class:`ModuleUnit`, so a new check is one class added to the list, on every path at once.
Selection is not per module: it runs once over every module's assessments
(:func:`svcc.compiler.passes.select.select`).
"""

from typing import TYPE_CHECKING, ClassVar, Final, Protocol

import attrs
from attrs import frozen
from svcc.compiler.passes.readiness import ReadinessPass, ReadinessReport
from svcc.compiler.passes.rule_subject import Environment
from svcc.ir.model import ModuleIR

if TYPE_CHECKING:
    from svcc.contracts.diagnostics import Diagnostic


@frozen(kw_only=True)
class ModuleUnit:
    """One module between passes: its IR, the environment it is judged in, its IR digest
    (``""`` when nobody shows it), the front end's diagnostics and, once judged, its report."""

    path: str
    ir: ModuleIR
    env: Environment
    digest: str
    diagnostics: "tuple[Diagnostic, ...]" = ()
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
        report = ReadinessPass().run(unit.ir, unit.env, unit.digest, diagnostics=unit.diagnostics)
        return attrs.evolve(unit, report=report)


PASSES: Final[tuple[Pass, ...]] = (VerifyPass(), JudgePass())


def run_passes(unit: ModuleUnit) -> ReadinessReport:
    """Every pass in order; the module's readiness report."""
    for step in PASSES:
        unit = step.run(unit)
    assert unit.report is not None  # the readiness pass is in the list
    return unit.report
