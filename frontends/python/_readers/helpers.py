"""Helpers: the module's own functions and classes that module-level code calls, with
the calls and reads of their bodies (followed ``HELPER_DEPTH`` calls deep)."""

import ast
import re
from collections.abc import Iterator

from svcc.frontends.python._effects import origin, plain_facts
from svcc.frontends.python._readers.evaluations import EvaluationReader
from svcc.frontends.python._readers.state import FunctionNode
from svcc.frontends.python._statements import assigned_names, nested_bindings
from svcc.ir.model import Evaluation, Helper


class HelperReader(EvaluationReader):
    def _helpers(self) -> tuple[Helper, ...]:
        """The facts of every local function or class called at import, following their
        own calls (and a class's local bases) to ``HELPER_DEPTH`` levels."""
        pending = sorted({n for e in self._all_evaluations() for n in _local_names(e.callee)})
        done: dict[str, Helper] = {}
        for _ in range(HELPER_DEPTH):
            following: set[str] = set()
            for name in pending:
                if name in done:
                    continue
                helper = self._helper(name)
                if helper is None:
                    continue
                done[name] = helper
                following.update(n for e in helper.calls for n in _local_names(e.callee))
                if name in self._class_nodes:
                    for base in self._class_nodes[name].bases:
                        following.update(
                            n for n in [_local_name(self.symbols.qualify(base))] if n is not None
                        )
            pending = sorted(following - set(done))
            if not pending:
                break
        return tuple(done.values())

    def _all_evaluations(self) -> Iterator[Evaluation]:
        for stmt in self.statements:
            yield from stmt.evaluations
        for cls in self.classes:
            yield from cls.evaluations

    def _helper(self, name: str) -> Helper | None:
        if "." in name:  # ``C.m``: a method called on an instance of the module's class
            return self._method_helper(*name.split(".", 1))
        fn = self._functions.get(name)
        if fn is not None:
            calls, opaque = self._body_facts([fn])
            return Helper(name=name, calls=calls, opaque=opaque, span=self.src.span(fn))
        cls = self._class_nodes.get(name)
        if cls is None:
            return None
        bodies: list[FunctionNode] = []
        first: Evaluation | None = None
        for item in cls.body:
            if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            plain_decorators = all(
                self.symbols.qualify(d) in ("builtins.staticmethod", "builtins.classmethod")
                for d in item.decorator_list
            )
            if not plain_decorators:
                first = first or self._code(f"decorated method {item.name}", item)
            elif item.name in _CONSTRUCTION:
                bodies.append(item)
            elif item.name.startswith("__") and item.name.endswith("__"):
                first = first or self._code(f"method {item.name}", item)
        calls, inner = self._body_facts(bodies)
        return Helper(name=name, calls=calls, opaque=first or inner, span=self.src.span(cls))

    def _method_helper(self, cls_name: str, method: str) -> Helper | None:
        """The facts of method ``method`` of the module's class ``cls_name`` (its body runs
        when module-level code calls it on an instance), ``None`` when the class defines no
        such method (an attribute)."""
        cls = self._class_nodes.get(cls_name)
        item = next(
            (
                s
                for s in (cls.body if cls is not None else [])
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == method
            ),
            None,
        )
        if item is None:
            return None
        name = f"{cls_name}.{method}"
        if item.decorator_list or isinstance(item, ast.AsyncFunctionDef):
            return Helper(
                name=name,
                calls=(),
                opaque=self._code(f"decorated method {method}", item),
                span=self.src.span(item),
            )
        calls, opaque = self._body_facts([item])
        return Helper(name=name, calls=calls, opaque=opaque, span=self.src.span(item))

    def _body_facts(
        self, functions: list[FunctionNode]
    ) -> tuple[tuple[Evaluation, ...], Evaluation | None]:
        """The calls and reads of the bodies, and their first part outside the facts."""
        found: list[Evaluation] = []
        for fn in functions:
            args = fn.args
            local = {
                a.arg
                for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                if a is not None
            }
            for stmt in fn.body:
                local.update(nested_bindings(stmt))
            names = {**self._origins, **dict.fromkeys(local, "?")}

            def resolve(node: ast.expr, names: dict[str, str] = names) -> str:
                return origin(node, self.symbols.qualify, names)

            stack: list[ast.stmt] = list(reversed(fn.body))
            while stack:
                stmt = stack.pop()
                expressions, blocks, ok = _helper_statement(stmt, local)
                if not ok:
                    return tuple(found), self._code(self._describe(stmt), stmt)
                for expr in expressions:
                    facts = plain_facts(expr, resolve)
                    if facts is None:
                        return tuple(found), self._code(self._describe(expr), expr)
                    calls, reads = facts
                    found.extend(
                        self._facts(
                            calls, reads, f"{self._describe(calls[0])}" if calls else "", resolve
                        )
                    )
                stack.extend(reversed(blocks))
        return tuple(found), None


# How deep module-level calls are followed into the module's own helpers.
HELPER_DEPTH = 3


_CONSTRUCTION = frozenset({"__init__", "__new__", "__post_init__"})


def _local_name(callee: str | None) -> str | None:
    """``helper`` for ``local.helper``, ``local.helper()``, ``local.Point().x``."""
    if callee is None or not callee.startswith("local."):
        return None
    rest = callee[6:]
    end = len(rest)
    for mark in ".([":
        at = rest.find(mark)
        if at != -1:
            end = min(end, at)
    return rest[:end]


def _local_names(callee: str | None) -> list[str]:
    """The helpers a call or read of ``callee`` runs: the function or class, and for a
    method of an instance of the module's class (``local.C().m``) the method ``C.m``."""
    name = _local_name(callee)
    if name is None or callee is None:
        return []
    method = re.fullmatch(r"local\.(\w+)\(\)\.(\w+)", callee)
    return [name, f"{method[1]}.{method[2]}"] if method else [name]


def _helper_statement(
    stmt: ast.stmt, local: set[str]
) -> tuple[list[ast.expr], list[ast.stmt], bool]:
    """A helper body statement's evaluated expressions and nested blocks, or ``ok=False``
    when the facts do not describe it (``global``, ``async with``, ``while``, ``yield`` inside,
    nested scopes, imports, writes to names that are not the function's own)."""
    if isinstance(stmt, ast.Expr | ast.Return):
        value = stmt.value
        if value is None or isinstance(value, ast.Constant):
            return [], [], True
        return [value], [], True
    if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if not all(_writes_local(target, local) for target in targets):
            return [], [], False
        value = stmt.value
        return ([] if value is None else [value]), [], True
    if isinstance(stmt, ast.If):
        return [stmt.test], [*stmt.body, *stmt.orelse], True
    if isinstance(stmt, ast.For):
        return [stmt.iter], [*stmt.body, *stmt.orelse], True
    if isinstance(stmt, ast.Try | ast.TryStar):
        return _try_parts(stmt)
    if isinstance(stmt, ast.With):  # the context's calls are facts; ``as`` binds a local
        if any(
            item.optional_vars is not None
            and not (isinstance(item.optional_vars, ast.Name) and item.optional_vars.id in local)
            for item in stmt.items
        ):
            return [], [], False
        return [item.context_expr for item in stmt.items], list(stmt.body), True
    if isinstance(stmt, ast.Raise):
        return [e for e in (stmt.exc, stmt.cause) if e is not None], [], True
    if isinstance(stmt, ast.Assert):
        return [stmt.test], [], True
    if isinstance(stmt, ast.Pass | ast.Break | ast.Continue):
        return [], [], True
    return [], [], False


def _writes_local(target: ast.expr, local: set[str]) -> bool:
    """Whether assigning to ``target`` writes only the function's own names (``x``,
    ``x.a``, ``x[0]``, ``a, b``), nothing of the module or the world."""
    root = target
    while isinstance(root, ast.Attribute | ast.Subscript | ast.Starred):
        root = root.value
    if isinstance(root, ast.Tuple | ast.List):
        return assigned_names(root) is not None
    return isinstance(root, ast.Name) and root.id in local


def _try_parts(stmt: ast.Try | ast.TryStar) -> tuple[list[ast.expr], list[ast.stmt], bool]:
    """A ``try``'s exception types (evaluated when one is raised) and every block."""
    blocks = [*stmt.body, *stmt.orelse, *stmt.finalbody]
    types: list[ast.expr] = []
    for handler in stmt.handlers:
        blocks.extend(handler.body)
        if handler.type is not None:
            types.append(handler.type)
    return types, blocks, True
