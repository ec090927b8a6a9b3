"""Module names a function reads on every call that nothing in the served module binds.

A function reading ``UNDEFINED`` (or ``display``, ``get_ipython``, a value from a notebook
cell left out, a name bound only under ``if __name__ == "__main__":`` or by ``exec``) fails
with a ``NameError`` on every call once served. The front end records each such read as a
fact (a ``read`` effect whose callee is ``<unbound>.NAME``: ``<`` starts no module name, so
it cannot collide with an import); the readiness pass refuses the function (``SVC-R061``).

Bound means: by any module-level statement the served module runs (blocks included, a
``__main__`` guard's body and a ``TYPE_CHECKING`` body excluded), through ``global`` in any
function, or by Python itself (builtins, module dunders). A star import may bind anything:
the rule is then off. The module's own functions the function calls are followed (their
reads happen on the call too), a bounded number of calls deep.
"""

import ast
import builtins
from collections.abc import Callable
from typing import Final

import attrs
from svcc.frontends.python._statements import is_main_guard, nested_bindings
from svcc.frontends.python.scopes import statement_names
from svcc.ir.model import Capability, Evaluation, Span

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

UNBOUND_PREFIX: Final = "<unbound>."
# The callee of a ``code`` effect marking a body line the notebook conversion removed
# (IPython syntax: ``lines = !ls`` became ``pass``), recorded by the notebook front end.
IPYTHON_REMOVED: Final = "<ipython>"
# Names every module has before its first statement runs.
MODULE_NAMES: Final = frozenset(dir(builtins)) | frozenset(
    {
        "__name__", "__doc__", "__file__", "__spec__", "__loader__", "__package__",
        "__builtins__", "__path__", "__cached__", "__annotations__", "__dict__",
    }
)  # fmt: skip
_DEPTH: Final = 3  # module functions followed, calls deep
# Statements that hold no function body (no ``global`` to find in them).
_SIMPLE: Final = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class ModuleNames:
    """The names the served module binds, gathered statement by statement."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.star = False
        self.functions: dict[str, FunctionNode] = {}
        # Statements holding function bodies, whose ``global`` writes bind too: read only
        # when a name is not bound otherwise (rare), not on every module.
        self._scoped: list[ast.stmt] = []
        self._known: set[str] | None = None
        self._globals: set[str] | None = None

    def add(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.If) and (is_main_guard(stmt.test) or _is_type_checking(stmt.test)):
            for sub in stmt.orelse:  # the body never runs when the module is served
                self.add(sub)
            return
        if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
            self.star = True
        self.bound.update(nested_bindings(stmt))
        if not isinstance(stmt, _SIMPLE):
            self._scoped.append(stmt)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            self.functions[stmt.name] = stmt
        elif isinstance(stmt, ast.If | ast.Try | ast.TryStar | ast.With | ast.AsyncWith):
            blocks = [*stmt.body, *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", [])]
            for handler in getattr(stmt, "handlers", []):
                blocks.extend(handler.body)
            for sub in blocks:
                if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef):
                    self.functions.setdefault(sub.name, sub)

    def _global_writes(self) -> set[str]:
        """Module names functions rebind through ``global`` (walked once, when needed)."""
        if self._globals is None:
            self._globals = set()
            for stmt in self._scoped:
                self._globals |= statement_names(stmt).global_writes
        return self._globals

    def unbound_reads(self, fn: FunctionNode) -> dict[str, tuple[ast.Name, str]]:
        """Name -> (its first read, the function it is read in) for each module name ``fn``
        reads on a call (through the module functions it calls) that nothing binds."""
        if self.star:
            return {}
        if self._known is None:  # every statement is added by now: computed once
            self._known = self.bound | MODULE_NAMES
        known = self._known
        out: dict[str, tuple[ast.Name, str]] = {}
        seen = {fn.name}
        pending: list[tuple[FunctionNode, int]] = [(fn, 0)]
        while pending:
            current, depth = pending.pop(0)
            for name in sorted(statement_names(current).later):
                called = self.functions.get(name)
                if name in known:
                    if called is not None and name not in seen and depth < _DEPTH:
                        seen.add(name)
                        pending.append((called, depth + 1))
                elif name not in out and name not in self._global_writes():
                    read = _first_read(current, name)
                    if read is not None:
                        out[name] = (read, current.name)
        return out


def _first_read(fn: FunctionNode, name: str) -> ast.Name | None:
    reads = [
        node
        for node in ast.walk(fn)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
    ]
    return min(reads, key=lambda n: (n.lineno, n.col_offset), default=None)


def with_unbound_reads(
    capabilities: dict[str, Capability],
    nodes: dict[str, FunctionNode],
    names: ModuleNames,
    span: Callable[[ast.AST], Span],
) -> dict[str, Capability]:
    """The capabilities, each with a ``read`` effect per unbound module name it reads."""
    out: dict[str, Capability] = {}
    for key, cap in capabilities.items():
        node = nodes.get(key)
        found = names.unbound_reads(node) if node is not None else {}
        if not found:
            out[key] = cap
            continue
        added = [
            Evaluation(
                kind="read",
                text=f"read of {name}" + (f" in {where}()" if where != cap.name else ""),
                callee=f"{UNBOUND_PREFIX}{name}",
                span=span(read),
            )
            for name, (read, where) in found.items()
        ]
        effects = sorted([*cap.effects, *added], key=lambda e: (e.span.line, e.span.column))
        out[key] = attrs.evolve(cap, effects=tuple(effects))
    return out


__all__ = ["IPYTHON_REMOVED", "MODULE_NAMES", "UNBOUND_PREFIX", "ModuleNames", "with_unbound_reads"]
