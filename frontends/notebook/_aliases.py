"""Names that may hold the same object: ``M = L``, ``row`` in ``for row in rows``.

The slice keeps a statement that changes an object kept code reads; a change made through
another name for that object (``M = L`` then ``M.append(1)``; ``for row in rows: row["x"] =
1``) changes it too. Names are grouped when one is bound to the other or to a part of it (an
attribute, an item, a slice: a view may share its data), or to the elements it iterates
(``for``, comprehensions); a change through any name of a group counts for all of them.
Erring on keeping: a copy spelled as a subscript (``L[:]``) is grouped too.
"""

import ast
from collections.abc import Iterable


def _chain_root(node: ast.expr) -> str | None:
    """The name an attribute/subscript chain (no call) starts from."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _target_names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


class _Groups:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, name: str) -> str:
        root = name
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while name != root:  # path compression
            self.parent[name], name = root, self.parent.get(name, name)
        return root

    def union(self, a: str, b: str) -> None:
        self.parent.setdefault(a, a)
        self.parent.setdefault(b, b)
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)  # the same groups whatever the order


def alias_groups(nodes: Iterable[ast.AST], objects: set[str]) -> dict[str, frozenset[str]]:
    """Each name of ``objects`` (names the notebook binds) that shares its object with
    another -> its group; ``nodes``: what runs at import (no function or class bodies)."""
    groups = _Groups()
    for node in nodes:
        pairs: list[tuple[list[str], list[str]]] = []
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            roots = [r for v in values if (r := _chain_root(v)) is not None]
            pairs.append(([n for t in targets for n in _target_names(t)], roots))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            iterated = [n.id for n in ast.walk(node.iter) if isinstance(n, ast.Name)]
            pairs.append((_target_names(node.target), iterated))
        for names, roots in pairs:
            for name in names:
                for root in roots:
                    if name in objects and root in objects and name != root:
                        groups.union(name, root)
    members: dict[str, set[str]] = {}
    for name in groups.parent:
        members.setdefault(groups.find(name), set()).add(name)
    out: dict[str, frozenset[str]] = {}
    for group in members.values():
        frozen = frozenset(group)
        for name in group:
            out[name] = frozen
    return out


__all__ = ["alias_groups"]
