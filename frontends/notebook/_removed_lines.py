"""Functions whose body lost a line to the IPython conversion.

A line magic or shell escape inside a function (``lines = !ls``) is removed from the module
(``pass`` takes its place): the served function then does something else than the one the
notebook ran, and ``lines`` is never bound. Each such function gets a ``code`` effect whose
callee is ``IPYTHON_REMOVED`` at the removed line; the readiness pass refuses it
(``SVC-R061``).
"""

import attrs
from svcc.contracts.diagnostics import Diagnostic
from svcc.contracts.diagnostics.codes import F004_LINE_MAGIC, F006_SHELL_ESCAPE
from svcc.frontends.python.unbound import IPYTHON_REMOVED
from svcc.ir.model import Capability, Evaluation, ModuleIR

_REMOVALS = frozenset({F004_LINE_MAGIC.code, F006_SHELL_ESCAPE.code})


def mark_removed_lines(ir: ModuleIR, diagnostics: tuple[Diagnostic, ...]) -> ModuleIR:
    """``ir`` with each capability whose body held a removed IPython line marked."""
    removed = [d for d in diagnostics if d.code in _REMOVALS and d.span is not None]
    if not removed:
        return ir
    capabilities = tuple(_marked(cap, removed) for cap in ir.capabilities)
    return attrs.evolve(ir, capabilities=capabilities)


def _marked(cap: Capability, removed: list[Diagnostic]) -> Capability:
    added = [
        Evaluation(
            kind="code",
            text=f"line {d.span.line} of cell {d.span.cell} was IPython syntax, removed from "
            f"its body ({d.message})",
            callee=IPYTHON_REMOVED,
            span=d.span,
        )
        for d in removed
        if d.span is not None
        and d.span.cell == cap.span.cell
        and cap.span.line < d.span.line <= cap.span.end_line
    ]
    if not added:
        return cap
    effects = sorted([*cap.effects, *added], key=lambda e: (e.span.line, e.span.column))
    return attrs.evolve(cap, effects=tuple(effects))


__all__ = ["mark_removed_lines"]
