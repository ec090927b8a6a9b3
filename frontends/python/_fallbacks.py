"""Which statements of a ``try`` are alternative imports: the one reading of ``try: import
A`` / ``except ImportError: import B`` that the lowerer records (``Import.fallback``) and the
readiness pass judges as a group.

A handler catches an import's failure when it names ``ImportError`` or
``ModuleNotFoundError`` (alone or in a tuple), or ``Exception``/``BaseException``, or nothing
(a bare ``except:``). The ``try`` body is alternative 0; each such handler that imports is
one more. A handler that imports nothing and raises nothing substitutes the names (``X =
None``, ``pass``, ``def tool(f): return f``): the module then imports whatever is installed.
A ``try`` none of whose handlers catches the failure is one alternative with no
substitute: its imports are as required as unguarded ones.
"""

import ast
from collections.abc import Callable
from typing import Final

from svcc.frontends.python._walk import children

Qualify = Callable[[ast.expr], str | None]

CATCHING: Final = frozenset(
    {
        "builtins.ImportError",
        "builtins.ModuleNotFoundError",
        "builtins.Exception",
        "builtins.BaseException",
    }
)


def catches_import_error(handler: ast.ExceptHandler, qualify: Qualify) -> bool:
    if handler.type is None:
        return True
    parts = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(qualify(p) in CATCHING for p in parts)


def _imports(body: list[ast.stmt]) -> bool:
    return any(isinstance(s, ast.Import | ast.ImportFrom) for s in body)


def _raises(body: list[ast.stmt]) -> bool:
    """Whether the statements raise, outside the functions and classes they define."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        stack.extend(children(node))
    return False


def alternatives(
    stmt: ast.Try | ast.TryStar, qualify: Qualify
) -> tuple[list[list[ast.stmt]], bool] | None:
    """``(bodies, substitute)``: the statement lists whose imports are alternatives (the
    ``try`` body first), and whether a catching handler substitutes the names; ``None``
    when the ``try`` body imports nothing."""
    if not _imports(stmt.body):
        return None
    bodies = [stmt.body]
    substitute = False
    for handler in stmt.handlers:
        if not catches_import_error(handler, qualify):
            continue
        if _imports(handler.body):
            bodies.append(handler.body)
        elif not _raises(handler.body):
            substitute = True
    return bodies, substitute
