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

_SKIPPED: Final = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` without context and operator nodes."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            if not isinstance(value, _SKIPPED):
                out.append(value)
        elif isinstance(value, list):
            out.extend(
                item
                for item in value
                if isinstance(item, ast.AST) and not isinstance(item, _SKIPPED)
            )
    return out


def walk(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))`` without context and operator nodes: ``node`` and everything
    below it, breadth first."""
    nodes = [node]
    append = nodes.append
    index = 0
    while index < len(nodes):
        current = nodes[index]
        index += 1
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, ast.AST):
                if not isinstance(value, _SKIPPED):
                    append(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST) and not isinstance(item, _SKIPPED):
                        append(item)
    return nodes
