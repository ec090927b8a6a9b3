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
from typing import Final

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


def walk(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))`` without context and operator nodes: ``node`` and everything
    below it, breadth first."""
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
