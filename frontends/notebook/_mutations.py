"""Which module names a notebook function or method may change when it is called.

A module-level call ``_register(fn)`` fills ``_REGISTRY`` inside ``_register``'s body; a
``c.setup()`` rebinds ``MODEL`` through ``global`` in a method. The slice keeps such a call
when kept code reads what it changes, so it must know, per function, the module names its
body changes: rebinds through ``global``, assignments into them (``_REGISTRY[k] = v``,
``STATE.x = 1``), calls of mutating methods on them, passing them on to a call that may
change its arguments, and what the notebook functions it calls change (to a fixed point).
Methods are known by name only (``c.setup()`` may be any class's ``setup``): erring on
keeping.
"""

import ast
from collections.abc import Callable, Iterator

from svcc.frontends.python.scopes import statement_names

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
# (a call, the writers so far) -> the names the call may change (``_slice._changed_by_call``)
CallChanges = Callable[[ast.Call, dict[str, frozenset[str]]], set[str]]
Targets = Callable[[ast.AST], Iterator[ast.expr]]

_ROUNDS = 8  # the fixed point through calls of notebook functions, bounded


def _definitions(nodes: tuple[ast.stmt, ...]) -> Iterator[tuple[str, FunctionNode]]:
    """``name`` for each module-level function, ``.name`` for each method of a class."""
    for node in nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield f".{item.name}", item


def function_writers(
    statements: list[tuple[ast.stmt, ...]],
    call_changes: CallChanges,
    changed_targets: Targets,
) -> dict[str, frozenset[str]]:
    """Function name (``.name`` for a method) -> the module names a call of it may change."""
    found: dict[str, tuple[FunctionNode, frozenset[str], frozenset[str]]] = {}
    for nodes in statements:
        for key, fn in _definitions(nodes):
            names = statement_names(fn)
            free = names.later | names.global_writes
            previous = found.get(key)
            if previous is not None:  # two methods of one name: either may be called
                free |= previous[1]
            found[key] = (fn, free, names.global_writes)
    writers = {key: writes for key, (_, _, writes) in found.items() if writes}
    for _ in range(_ROUNDS):
        grown = False
        for key, (fn, free, writes) in found.items():
            changed = set(writes)
            for node in ast.walk(fn):
                if isinstance(node, ast.Call):
                    changed |= call_changes(node, writers)
                for target in changed_targets(node):
                    changed.add(_root(target))
            result = frozenset(changed & free)
            if result != writers.get(key, frozenset()):
                writers[key] = result
                grown = True
        if not grown:
            break
    return {key: names for key, names in writers.items() if names}


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


__all__ = ["function_writers"]
