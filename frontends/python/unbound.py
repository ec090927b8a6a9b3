"""Module names a function reads on every call that nothing in the served module binds.

A function reading ``UNDEFINED`` (or ``display``, ``get_ipython``, a value from a notebook
cell left out, a name bound only under ``if __name__ == "__main__":`` or by ``exec``) fails
with a ``NameError`` on every call once served. The front end records each such read as a
fact (a ``read`` effect whose callee is ``<unbound>.NAME``: ``<`` starts no module name, so
it cannot collide with an import); the readiness pass refuses the function (``SVC-R061``).

Bound means: by any module-level statement the served module runs (blocks included, a
``__main__`` guard's body and a ``TYPE_CHECKING`` body excluded), through ``global`` in any
function, or by Python itself (builtins, module dunders). Module-level code that binds names
the source does not spell (a star import, ``globals()``, ``exec``, an Enum's ``_convert_``)
turns the rule off for the module. The module's own functions the function calls are
followed (their reads happen on the call too), a bounded number of calls deep.
"""

import ast
import builtins
from collections.abc import Callable
from typing import Final

from svcc.frontends.python._statements import is_main_guard, nested_bindings
from svcc.frontends.python._walk import children, walk, walk_parts
from svcc.frontends.python.scopes import statement_names
from svcc.ir.model import Capability, Evaluation, Span
from svcc.ir.records import evolve

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

UNBOUND_PREFIX: Final = "<unbound>."
# The callee of a ``code`` effect marking a body line the notebook conversion removed
# (IPython syntax: ``lines = !ls`` became ``pass``), recorded by the notebook front end.
IPYTHON_REMOVED: Final = "<ipython>"
# Names every module has before its first statement runs.
MODULE_NAMES: Final = frozenset(dir(builtins)) | frozenset(
    {
        "__name__", "__doc__", "__file__", "__spec__", "__loader__", "__package__",
        "__builtins__", "__path__", "__cached__", "__annotations__", "__dict__", "__class__",
    }
)  # fmt: skip
_DEPTH: Final = 3  # module functions followed, calls deep
# Statements that hold no function body (no ``global`` to find in them).
_SIMPLE: Final = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)


def main_guard_binds(stmt: ast.stmt) -> list[str]:
    """The names an ``if __name__ == "__main__":`` block binds (none for another
    statement): a notebook's kernel runs it, a served module never does."""
    if not (isinstance(stmt, ast.If) and is_main_guard(stmt.test)):
        return []
    return [name for sub in stmt.body for name in nested_bindings(sub)]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class ModuleNames:
    """The names the served module binds, gathered statement by statement."""

    def __init__(self, mentions: Callable[[ast.AST, str], bool] | None = None) -> None:
        # whether a line of a node holds a word (``SourceText.mentions``): a statement with
        # no ``global`` on its lines needs no scope analysis for its ``global`` writes
        self._mentions = mentions
        self.bound: set[str] = set()
        self._statements: list[ast.stmt] = []  # scanned for dynamic bindings when needed
        self._dynamic: bool | None = None
        self.functions: dict[str, FunctionNode] = {}
        # Statements holding function bodies, whose ``global`` writes bind too: read only
        # when a name is not bound otherwise (rare), not on every module.
        self._scoped: list[ast.stmt] = []
        self._known: set[str] | None = None
        self._globals: set[str] | None = None
        self._memo: dict[int, tuple[dict[str, ast.Name], list[str]]] = {}
        # a function's nodes (``_names_of`` reads their set, whatever the order)
        self.nodes: Callable[[ast.AST], list[ast.AST]] = walk_parts

    def add(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.If) and (is_main_guard(stmt.test) or _is_type_checking(stmt.test)):
            for sub in stmt.orelse:  # the body never runs when the module is served
                self.add(sub)
            return
        self._statements.append(stmt)
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

    def _binds_dynamically(self) -> bool:
        """Whether module-level code binds names the source does not spell (scanned once,
        only when some function reads a name nothing else binds)."""
        if self._dynamic is None:
            self._dynamic = any(_binds_dynamically(stmt) for stmt in self._statements)
        return self._dynamic

    def _global_writes(self) -> set[str]:
        """Module names functions rebind through ``global`` (walked once, when needed)."""
        if self._globals is None:
            self._globals = set()
            mentions = self._mentions
            for stmt in self._scoped:
                if mentions is None or mentions(stmt, "global"):
                    self._globals |= statement_names(stmt).global_writes
        return self._globals

    def unbound_reads(self, fn: FunctionNode) -> dict[str, tuple[ast.Name, str]]:
        """Name -> (its first read, the function it is read in) for each module name ``fn``
        reads on a call (through the module functions it calls) that nothing binds."""
        if self._known is None:  # every statement is added by now: computed once
            self._known = self.bound | MODULE_NAMES
        out: dict[str, tuple[ast.Name, str]] = {}
        seen = {fn.name}
        pending: list[tuple[FunctionNode, int]] = [(fn, 0)]
        while pending:
            current, depth = pending.pop(0)
            unbound, called = self._own(current)
            for name, read in unbound.items():
                out.setdefault(name, (read, current.name))
            for name in called:
                if depth < _DEPTH and name not in seen:
                    seen.add(name)
                    pending.append((self.functions[name], depth + 1))
        return out

    def _own(self, fn: FunctionNode) -> tuple[dict[str, ast.Name], list[str]]:
        """What one function's body reads that nothing binds, and the module functions it
        names (memoised: capabilities share their helpers)."""
        found = self._memo.get(id(fn))
        if found is not None:
            return found
        loads, local, first = _names_of(self.nodes(fn))
        called = sorted((loads & self.functions.keys()) - local)
        unbound: dict[str, ast.Name] = {}
        candidates = loads - local - (self._known or set())
        # a name bound nowhere in the module: the scope analysis decides
        if candidates and not self._binds_dynamically():
            free = statement_names(fn).later
            for name in sorted(candidates & free):
                if name not in self._global_writes():
                    unbound[name] = first[name]
        self._memo[id(fn)] = (unbound, called)
        return unbound, called


# Module-level code that binds names the source does not spell: a star import (in any
# block), ``globals()[...] = ``/``vars()``/``exec`` and an Enum's ``_convert_`` (which adds
# its members to the module's globals). The rule is then off for the module.
_DYNAMIC_NAMES: Final = frozenset({"globals", "vars", "locals", "exec", "eval"})
_DYNAMIC_METHODS: Final = frozenset({"_convert_", "_convert", "global_enum"})


def _binds_dynamically(stmt: ast.stmt) -> bool:
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.ImportFrom and any(a.name == "*" for a in node.names):  # type: ignore[attr-defined]
            return True
        if kind is ast.Name and node.id in _DYNAMIC_NAMES:  # type: ignore[attr-defined]
            return True
        if kind is ast.Attribute and node.attr in _DYNAMIC_METHODS:  # type: ignore[attr-defined]
            return True
        if kind is ast.Attribute and node.attr == "modules":  # type: ignore[attr-defined]
            return True  # ``sys.modules[__name__]``: the module object itself
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            stack.extend(
                [*getattr(node, "decorator_list", ()), *_defaults(node)]
            )  # the body runs later, not at import
            continue
        stack.extend(children(node))
    return False


def _defaults(node: ast.AST) -> list[ast.expr]:
    args: ast.arguments = node.args  # type: ignore[attr-defined]
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


def _names_of(nodes: list[ast.AST]) -> tuple[set[str], set[str], dict[str, ast.Name]]:
    """One pass over a function's nodes (``walk_parts(fn)``: a parent before what is below
    it, the order otherwise free): the names it loads, the names bound anywhere inside it
    (its own and nested scopes': an over-approximation of its locals, refined by
    ``scopes.statement_names`` only when a load is bound nowhere else), and the first load
    of each name (by position)."""
    local: set[str] = set()
    first: dict[str, ast.Name] = {}  # its keys: the names loaded
    annotations: set[int] = set()  # never evaluated on a call (local or postponed ones)
    for node in nodes:  # ``walk_parts(fn)``
        kind = type(node)
        if kind is ast.Name:  # the commonest node: tested first (a name holds no annotation)
            if id(node) in annotations:
                continue
            name = node.id  # type: ignore[attr-defined]
            if type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                seen = first.get(name)
                if seen is None or (node.lineno, node.col_offset) < (  # type: ignore[attr-defined]
                    seen.lineno,
                    seen.col_offset,
                ):
                    first[name] = node  # type: ignore[assignment]
            else:
                local.add(name)
            continue
        annotation = _ANNOTATED.get(kind)
        if annotation is not None:
            value = getattr(node, annotation)
            if value is not None:
                annotations.update(id(sub) for sub in walk(value))
        if kind is ast.arg:
            local.add(node.arg)  # type: ignore[attr-defined]
        elif kind in _BINDERS:
            local.update(_bound_by(node))
    return set(first), local, first


def _bound_by(node: ast.AST) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [a.asname or a.name.split(".")[0] for a in node.names]
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


# Where an annotation hangs: a parameter's, a nested function's return, a variable's.
_ANNOTATED: Final[dict[type, str]] = {
    ast.arg: "annotation",
    ast.FunctionDef: "returns",
    ast.AsyncFunctionDef: "returns",
    ast.AnnAssign: "annotation",
}
_BINDERS: Final = frozenset(
    {
        ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
        ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping,
    }
)  # fmt: skip


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
        out[key] = evolve(cap, effects=tuple(effects))
    return out


__all__ = [
    "IPYTHON_REMOVED",
    "MODULE_NAMES",
    "UNBOUND_PREFIX",
    "main_guard_binds",
    "ModuleNames",
    "with_unbound_reads",
]
