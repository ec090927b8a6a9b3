"""Functions whose body lost a line to the IPython conversion.

A line magic or shell escape inside a function (``lines = !ls``) is removed from the module
(``pass`` takes its place): the served function then does something else than the one the
notebook ran, and ``lines`` is never bound. Each such function gets a ``code`` effect whose
callee is ``IPYTHON_REMOVED`` at the removed line; the readiness pass refuses it
(``SVC-R061``).
"""

import ast

import attrs
from svcc.contracts.diagnostics import Diagnostic
from svcc.contracts.diagnostics.codes import F004_LINE_MAGIC, F006_SHELL_ESCAPE
from svcc.frontends.python.scopes import statement_names
from svcc.frontends.python.unbound import IPYTHON_REMOVED, main_guard_binds
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


def mark_main_guard_reads(ir: ModuleIR, tree: ast.Module) -> ModuleIR:
    """``ir`` with each capability that reads a name an ``if __name__ == "__main__":``
    block of the served module binds marked: a kernel runs that block (its ``__name__`` is
    ``__main__``), the served module never does, so the function would see another value
    than in the notebook (or none)."""
    guarded: dict[str, ast.stmt] = {}
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for stmt in tree.body:
        for name in main_guard_binds(stmt):
            guarded.setdefault(name, stmt)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            functions[stmt.name] = stmt
    if not guarded:
        return ir
    marked = []
    for cap in ir.capabilities:
        fn = functions.get(cap.name)
        names = sorted(statement_names(fn).later & guarded.keys()) if fn is not None else []
        if not names:
            marked.append(cap)
            continue
        added = Evaluation(
            kind="code",
            text=f'reads {", ".join(names)}, which `if __name__ == "__main__":` binds: the '
            "notebook's kernel runs that block, the served module never does",
            callee=IPYTHON_REMOVED,
            span=cap.span,
        )
        marked.append(attrs.evolve(cap, effects=(*cap.effects, added)))
    return attrs.evolve(ir, capabilities=tuple(marked))


__all__ = ["mark_main_guard_reads", "mark_removed_lines"]
