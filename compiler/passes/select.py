"""The selection pass: ``--select`` and generate rules 2-3 of the specification.

Without ``--select`` every capability must be eligible. With it, each entry (a name or a
full id) must exist (else exit 2) and be eligible (else exit 1 with its reason codes);
selecting a ready function excludes unrelated ones but never overrides the selected
function's own uncertainty. Output: the IR restricted to the selection.
"""

import difflib
from collections.abc import Sequence
from typing import ClassVar

import attrs
from svcc.compiler.diagnostics import Diagnostic
from svcc.compiler.errors import IneligibleError, UsageError
from svcc.compiler.passes.readiness import Assessment, ReadinessReport
from svcc.ir.index import module_index
from svcc.ir.model import ModuleIR


def parse_selection(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    items = tuple(item.strip() for item in text.split(","))
    if not items or any(not item for item in items):
        raise UsageError(f"--select {text!r}: expected comma-separated names or ids")
    return items


def _where(reason: Diagnostic) -> str:
    span = reason.span
    if span is None:
        return ""
    if span.cell is not None:
        return f" cell {span.cell} line {span.line}"
    return f" line {span.line}"


def describe_blocking(assessment: Assessment) -> str:
    """``area is conditional (SVC-R001 line 3, SVC-R007 line 10)``."""
    reasons = ", ".join(f"{r.code}{_where(r)}" for r in assessment.blocking())
    return f"{assessment.name} is {assessment.klass} ({reasons})"


class SelectPass:
    name: ClassVar[str] = "select"

    def run(
        self, ir: ModuleIR, report: ReadinessReport, selection: Sequence[str] | None, path: str
    ) -> ModuleIR:
        if selection is None:
            chosen = list(ir.capabilities)
            if not chosen:
                raise IneligibleError(f"{path}: no public module-level functions to expose")
        else:
            chosen = []
            chosen_ids: set[str] = set()
            by_name = module_index(ir).capabilities
            for item in selection:
                cap = by_name.get(item)
                if cap is None:
                    names = [c.name for c in ir.capabilities]
                    close = difflib.get_close_matches(item, names, n=1)
                    hint = f"; did you mean {close[0]!r}?" if close else ""
                    raise UsageError(f"{path}: unknown selection {item!r}{hint}")
                if cap.id not in chosen_ids:
                    chosen_ids.add(cap.id)
                    chosen.append(cap)
        assessments = {a.capability_id: a for a in report.assessments}
        blocked = []
        for cap in chosen:
            assessment = assessments.get(cap.id)
            assert assessment is not None
            if not assessment.can_generate_interface:
                blocked.append(describe_blocking(assessment))
        if blocked:
            raise IneligibleError(f"{path}: cannot generate: " + "; ".join(blocked))
        if tuple(chosen) == ir.capabilities:
            return ir  # the same object: what was derived from it (its JSON) is reused
        return attrs.evolve(ir, capabilities=tuple(chosen))
