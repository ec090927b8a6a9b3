"""Which module-level names a top-level statement binds and reads, from its ``ast``.

Python's scoping rules, statically: a function body's free names are read when it is called
(later), a class body's and a comprehension's when the statement runs (now); parameters,
assignments, imports, ``except ... as``, ``match`` captures and nested definitions bind
locally, ``global`` sends a name back to the module; a class body does not enclose the
functions inside it. This is what :mod:`symtable` computes, done on the tree the front end
already parsed (``symtable`` compiles the text again: three times the front end's own cost
on a large notebook).
"""

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen


_FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSION = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef | ast.expr


@frozen
class Names:
    binds: frozenset[str]  # module-level names the statement binds (or deletes)
    now: frozenset[str]  # read when the statement runs
    later: frozenset[str]  # read when a function it defines is called
    global_writes: frozenset[str]  # module names its functions rebind through ``global``


class _Collect:
    """One scope's own bindings and reads; nested scopes are set aside to be analysed."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.reads: set[str] = set()
        self.globals: set[str] = set()
        self.nested: list[_Scope] = []

    def walk(self, nodes: list[ast.AST]) -> None:
        stack = list(reversed(nodes))
        while stack:
            node = stack.pop()
            children = self._visit(node)
            stack.extend(reversed(children))

    def _visit(self, node: ast.AST) -> list[ast.AST]:
        if isinstance(node, ast.Name):
            (self.reads if isinstance(node.ctx, ast.Load) else self.bound).add(node.id)
            return []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bound.add(node.name)
            self.nested.append(node)
            return [*node.decorator_list, *_signature_parts(node.args), *_opt(node.returns)]
        if isinstance(node, ast.Lambda):
            self.nested.append(node)
            return [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        if isinstance(node, ast.ClassDef):
            self.bound.add(node.name)
            self.nested.append(node)
            return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
        if isinstance(node, _COMPREHENSION):
            self.nested.append(node)
            return [node.generators[0].iter]
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    self.bound.add(alias.asname or alias.name.split(".")[0])
            return []
        if isinstance(node, ast.Global):
            self.globals.update(node.names)
            return []
        if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            self.bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            self.bound.add(node.rest)
        return list(ast.iter_child_nodes(node))


def _opt(node: ast.expr | None) -> list[ast.expr]:
    return [node] if node is not None else []


def _all_args(args: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


def _signature_parts(args: ast.arguments) -> list[ast.expr]:
    """What a ``def`` evaluates in the enclosing scope: defaults and annotations."""
    annotations = [a.annotation for a in _all_args(args) if a.annotation is not None]
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None), *annotations]


def _scope(node: _Scope) -> tuple[set[str], set[str], set[str]]:
    """``(now, later, global writes)`` of a nested scope: ``now`` are the free names it
    reads when its own code runs, ``later`` those its inner functions read."""
    collect = _Collect()
    params: set[str] = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        params = {a.arg for a in _all_args(node.args)}
        collect.walk(list(node.body))
    elif isinstance(node, ast.Lambda):
        params = {a.arg for a in _all_args(node.args)}
        collect.walk([node.body])
    elif isinstance(node, ast.ClassDef):
        collect.walk(list(node.body))
    elif isinstance(node, _COMPREHENSION):
        parts: list[ast.AST] = (
            [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        )
        for number, generator in enumerate(node.generators):
            parts += [generator.target, *generator.ifs]
            if number:
                parts.append(generator.iter)
        collect.walk(parts)
    local = (params | collect.bound) - collect.globals
    now, later, writes = _with_nested(collect, collect.reads - local)
    writes |= collect.bound & collect.globals
    if not isinstance(node, ast.ClassDef):  # a class body encloses nothing
        now -= local
        later -= local
    return now, later, writes


def _with_nested(collect: _Collect, now: set[str]) -> tuple[set[str], set[str], set[str]]:
    """``now`` joined with what the nested scopes of ``collect`` read and write: a function's
    reads happen later (when it is called), a class body's or comprehension's now."""
    later: set[str] = set()
    writes: set[str] = set()
    for sub in collect.nested:
        sub_now, sub_later, sub_writes = _scope(sub)
        writes |= sub_writes
        if isinstance(sub, _FUNCTION):
            later |= sub_now | sub_later
        else:
            now |= sub_now
            later |= sub_later
    return now, later, writes


def statement_names(stmt: ast.stmt) -> Names:
    """The module-level names one top-level statement binds and reads."""
    collect = _Collect()
    collect.walk([stmt])
    now, later, writes = _with_nested(collect, set(collect.reads))
    return Names(
        binds=frozenset(collect.bound),
        now=frozenset(now),
        later=frozenset(later),
        global_writes=frozenset(writes),
    )


__all__ = ["Names", "statement_names"]
