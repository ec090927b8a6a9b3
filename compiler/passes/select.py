"""The selection pass: ``--select``, an exposure policy, and generate rules 2-3 of the
specification, one function for a file and a repository.

Without a selection every capability must be eligible; a refusal then names the
``--select`` that would serve the eligible ones. With one, each entry (a function
name, a dotted ``module.function`` or a full id) must exist (else exit 2, every unknown
entry named) and be eligible (else exit 1 with its reason codes); selecting a ready function
excludes unrelated ones but never overrides the selected function's own uncertainty. An
exposure policy adds every ready capability (``include_all_ready``) and takes some out
(``exclude``). A single file is a one-module repository here: its capabilities are also
reachable by their plain names.
"""

import difflib
from collections.abc import Sequence

from svcc.compiler.passes.readiness import Assessment
from svcc.contracts.diagnostics import Diagnostic, where
from svcc.contracts.errors import IneligibleError, UsageError
from svcc.ir.model import Capability, ModuleIR

SHOWN_NAMES = 20  # of the functions there are, when a selection names one that is not
Entry = tuple[ModuleIR, Capability, Assessment]


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


def describe_blocking(assessment: Assessment, name: str | None = None) -> str:
    """``area is conditional (SVC-R001 line 3: decorated function; SVC-R007 line 10: ...)``."""
    reasons = "; ".join(describe_reason(r) for r in assessment.blocking())
    return f"{name or assessment.name} is {assessment.klass} ({reasons})"


def select(
    entries: Sequence[Entry],
    selection: Sequence[str] | None,
    *,
    where: str,
    exclude: Sequence[str] = (),
    include_all_ready: bool = False,
    by_plain_name: bool = False,
) -> list[tuple[ModuleIR, Capability]]:
    """The selected capabilities, in the entries' order. ``where`` starts every message
    (the file's path; ``the repository`` for a tree). A capability is found by its id or
    ``module.name``; with ``by_plain_name`` (a file's program) by its name too, and named so."""
    single = by_plain_name
    by_key: dict[str, Entry] = {}
    for entry in entries:
        ir, cap, _ = entry
        for key in (cap.id, f"{ir.module}.{cap.name}", *((cap.name,) if single else ())):
            by_key.setdefault(key, entry)
    shown = [c.name if single else f"{ir.module}.{c.name}" for ir, c, _ in entries]
    chosen: dict[str, Entry] = {}
    if selection is None and not include_all_ready:
        chosen = {cap.id: (ir, cap, a) for ir, cap, a in entries}
        if not chosen:
            raise IneligibleError(f"{where}: no public module-level functions to expose")
    unknown = []
    for item in selection or ():
        if item not in by_key:
            close = difflib.get_close_matches(item, shown, n=1)
            unknown.append(f"{item!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            continue
        chosen.setdefault(by_key[item][1].id, by_key[item])
    if unknown:
        known = ", ".join(shown[:SHOWN_NAMES]) or "none"
        if len(shown) > SHOWN_NAMES:
            known += f" and {len(shown) - SHOWN_NAMES} more"
        whose = "the module's" if single else "its"
        raise UsageError(
            f"{where}: unknown selection {', '.join(unknown)}; {whose} functions are: {known}"
        )
    if include_all_ready:
        for ir, cap, assessment in entries:
            if assessment.can_generate_interface:
                chosen.setdefault(cap.id, (ir, cap, assessment))
    for item in exclude:
        chosen.pop(item, None)
    if not chosen:
        raise IneligibleError(f"{where}: no capability is selected")
    blocked = [(ir, cap, a) for ir, cap, a in chosen.values() if not a.can_generate_interface]
    if blocked:
        reasons = list(dict.fromkeys(r for _, _, a in blocked for r in a.blocking()))
        name = {cap.id: cap.name if single else f"{ir.module}.{cap.name}" for ir, cap, _ in entries}
        ready = [name[cap.id] for _, cap, a in chosen.values() if a.can_generate_interface]
        served = (
            f"; --select {','.join(ready)} serves the eligible "
            + ("function" if len(ready) == 1 else f"{len(ready)} functions")
            if selection is None and ready
            else ""
        )
        raise IneligibleError(
            f"{where}: cannot generate: "
            + "; ".join(describe_blocking(a, name[cap.id]) for _, cap, a in blocked)
            + served,
            reasons,
        )
    order = {cap.id: index for index, (_, cap, _) in enumerate(entries)}
    return [(ir, cap) for ir, cap, _ in sorted(chosen.values(), key=lambda e: order[e[1].id])]
