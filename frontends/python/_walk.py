"""``ast.walk`` and ``ast.iter_child_nodes`` without a generator per node.

The front end walks every module-level expression and every capability's body, often
more than once; over the standard library ``ast.walk``'s generators and ``iter_fields``
cost more than the judgements made on the nodes. These give the same nodes in the same
order (breadth first, children in field order), so every "first node found" is unchanged,
except the context and operator nodes (``Load``, ``Store``, ``Add``, ``Eq``, ...): they
have no children and no judgement of the front end reads them (a name's context is read
from the name), and they are a third of a typical module's nodes.
"""

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

# Fields that never hold a node the walk yields: names and flags (strings, numbers), the
# context and operator fields, and a constant's value.
_NOT_NODES: Final = frozenset(
    {"ctx", "op", "ops", "id", "arg", "attr", "asname", "kind", "level", "module", "rest"}
    | {"conversion", "is_async", "type_comment", "simple", "name", "tag", "lineno"}
)
_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}


def _fields(kind: type) -> tuple[str, ...]:
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(
            f
            for f in kind._fields  # type: ignore[attr-defined]
            if f not in _NOT_NODES
        )
    return fields


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` without context and operator nodes."""
    out: list[ast.AST] = []
    append = out.append
    node_type = ast.AST
    fields = _FIELDS.get(type(node))
    if fields is None:
        fields = _fields(type(node))
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, node_type):
            append(value)
        elif isinstance(value, list):
            for item in value:  # a loop, not a generator per field
                if isinstance(item, node_type):
                    append(item)
    return out


# Inside ``shared_walks``: each node's walk, and the memos other readers keep by name.
_SHARED: ContextVar[dict[object, Any] | None] = ContextVar("shared_walks", default=None)


@contextmanager
def shared_walks() -> Iterator[None]:
    """Within it, ``walk`` of the same node is computed once and the list returned again
    (callers only read it): a capability's body is walked by a dozen readers (reach,
    parameter uses, unbound names, binding counts, ...), and its helpers once per caller.
    The memo holds the nodes it was given (so no identity is reused) and is dropped at the
    end: one module's lowering."""
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def shared_memo(name: str) -> dict[Any, Any] | None:
    """The memo named ``name`` of the current ``shared_walks`` (``None`` outside one), for
    a fact read from syntax the same way each time (keyed by the nodes themselves)."""
    memo = _SHARED.get()
    if memo is None:
        return None
    found: dict[Any, Any] | None = memo.get(name)
    if found is None:
        found = memo[name] = {}
    return found


def walk(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))`` without context and operator nodes: ``node`` and everything
    below it, breadth first. The same list for the same node inside ``shared_walks``: the
    caller must not change it."""
    memo = _SHARED.get()
    if memo is None:
        return _walk(node)
    found: list[ast.AST] | None = memo.get(node)
    if found is None:
        found = memo[node] = _walk(node)
    return found


def walk_parts(node: ast.AST) -> list[ast.AST]:
    """The nodes of ``walk(node)``, in another order: ``node``, then the walk of each of
    its children in turn (each parent still before what is below it). For a reader that
    needs the set, not the order, of a function's nodes: its statements' walks are shared
    (``shared_walks``) with the readers that walk them one by one."""
    nodes = [node]
    for child in children(node):
        nodes += walk(child)  # a copy in C, not a generator's step per node
    return nodes


def _walk(node: ast.AST) -> list[ast.AST]:
    nodes = [node]
    append = nodes.append
    known = _FIELDS
    node_type = ast.AST
    for current in nodes:  # a list iterator sees what is appended meanwhile: breadth first
        fields = known.get(type(current))
        if fields is None:
            fields = _fields(type(current))
        for name in fields:
            value = getattr(current, name, None)
            if isinstance(value, node_type):
                append(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, node_type):
                        append(item)
    return nodes
