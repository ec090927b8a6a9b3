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
from svcc.compiler.diagnostics import Diagnostic, where
from svcc.compiler.errors import IneligibleError, UsageError
from svcc.compiler.passes.readiness import Assessment, ReadinessReport
from svcc.ir.index import module_index
from svcc.ir.model import ModuleIR

SHOWN_NAMES = 20  # of the module's functions, when a selection names one it lacks


def parse_selection(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    items = tuple(item.strip() for item in text.split(","))
    if not items or any(not item for item in items):
        raise UsageError(f"--select {text!r}: expected comma-separated names or ids")
    return items


def describe_reason(reason: Diagnostic) -> str:
    """``SVC-R007 line 10: module-level call runs at import``."""
    at = f" {where(reason.span)}" if reason.span is not None else ""
    return f"{reason.code}{at}: {reason.message}"


def describe_blocking(assessment: Assessment) -> str:
    """``area is conditional (SVC-R001 line 3: decorated function; SVC-R007 line 10: ...)``."""
    reasons = "; ".join(describe_reason(r) for r in assessment.blocking())
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
            unknown = []
            names = [c.name for c in ir.capabilities]
            for item in selection:
                cap = by_name.get(item)
                if cap is None:
                    close = difflib.get_close_matches(item, names, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    unknown.append(f"{item!r}{hint}")
                elif cap.id not in chosen_ids:
                    chosen_ids.add(cap.id)
                    chosen.append(cap)
            if unknown:
                known = ", ".join(names[:SHOWN_NAMES]) or "none"
                if len(names) > SHOWN_NAMES:
                    known += f" and {len(names) - SHOWN_NAMES} more"
                raise UsageError(
                    f"{path}: unknown selection {', '.join(unknown)}; the module's functions "
                    f"are: {known}"
                )
        assessments = {a.capability_id: a for a in report.assessments}
        blocked: list[Assessment] = []
        for cap in chosen:
            assessment = assessments.get(cap.id)
            assert assessment is not None
            if not assessment.can_generate_interface:
                blocked.append(assessment)
        if blocked:
            reasons = list(dict.fromkeys(r for a in blocked for r in a.blocking()))
            raise IneligibleError(
                f"{path}: cannot generate: " + "; ".join(map(describe_blocking, blocked)),
                reasons,
            )
        if tuple(chosen) == ir.capabilities:
            return ir  # the same object: what was derived from it (its JSON) is reused
        return attrs.evolve(ir, capabilities=tuple(chosen))
