"""A ``try`` decided for the target platform (Linux): its body reads a name that only
Windows has (``import msvcrt``, ``windll = LibraryLoader(ctypes.WinDLL)``) before doing
anything else, so on the target the read raises and a handler runs.

Decided only when everything the body does before that read is known to succeed and run
nothing of the library's: imports of standard-library modules, and reads of names and of
attributes of standard-library modules (a call, or any other expression, stops it). The
handler is the first whose exception types (builtins only) catch what the read raises, and
when the body imported modules before the read, it must catch ``ImportError`` too: a
standard-library import that failed on some build would reach the same handler.
"""

import ast
import builtins
from collections.abc import Iterator
from typing import Final

from svcc.frontends.python import _fold_table as table
from svcc.frontends.python._eval_state import Qualify, stdlib_module

# What each failure is caught by (``except`` naming one of these builtins).
_CAUGHT_BY: Final = {
    "ModuleNotFoundError": frozenset(
        {"ModuleNotFoundError", "ImportError", "Exception", "BaseException"}
    ),
    "ImportError": frozenset({"ImportError", "Exception", "BaseException"}),
    "AttributeError": frozenset({"AttributeError", "Exception", "BaseException"}),
}
_STOP: Final = object()


def platform_failure(stmt: ast.Try, qualify: Qualify, bound: set[str]) -> tuple[int, int] | None:
    """``(handler index + 1, statements of the body run before the failing one)``, or
    ``None`` when the body is not decided to fail on the target."""
    imported: dict[str, str] = {}  # names the body's imports bound so far -> dotted name
    for index, item in enumerate(stmt.body):
        failure = _statement(item, imported, qualify, bound)
        if failure is _STOP:
            return None
        if isinstance(failure, str):
            handler = _handler(stmt, failure, qualify, imports_before=bool(imported))
            return None if handler is None else (handler + 1, index)
    return None


def _statement(
    item: ast.stmt, imported: dict[str, str], qualify: Qualify, bound: set[str]
) -> object:
    """The failure ``item`` raises on the target, ``None`` when it runs harmlessly (its
    imports recorded), else ``_STOP``."""
    if isinstance(item, ast.Import):
        return _import(item, imported)
    if isinstance(item, ast.ImportFrom):
        return _import_from(item, imported)
    if isinstance(item, ast.Assign | ast.Expr) or (
        isinstance(item, ast.AnnAssign) and item.value is not None
    ):
        assert item.value is not None
        return _expression(item.value, imported, qualify, bound)
    return _STOP


def _import(item: ast.Import, imported: dict[str, str]) -> object:
    if item.names[0].name.split(".", 1)[0] in table.WINDOWS_MODULES:
        return "ModuleNotFoundError"
    if not all(stdlib_module(a.name) for a in item.names):
        return _STOP
    for alias in item.names:
        head = alias.name.split(".", 1)[0]
        imported[alias.asname or head] = alias.name if alias.asname else head
    return None


def _import_from(item: ast.ImportFrom, imported: dict[str, str]) -> object:
    if item.level or not item.module:
        return _STOP
    if item.module.split(".", 1)[0] in table.WINDOWS_MODULES:
        return "ModuleNotFoundError"
    if not stdlib_module(item.module) or any(a.name == "*" for a in item.names):
        return _STOP
    names = [f"{item.module}.{a.name}" for a in item.names]
    if names[0] in table.WINDOWS_ATTRIBUTES:
        return "ImportError"
    if any(n in table.WINDOWS_ATTRIBUTES for n in names):
        return _STOP  # the names before it are bound: not followed
    for alias, name in zip(item.names, names, strict=True):
        imported[alias.asname or alias.name] = name
    return None


def _expression(
    value: ast.expr, imported: dict[str, str], qualify: Qualify, bound: set[str]
) -> object:
    for event in _evaluation_order(value):
        if event is None:
            return _STOP
        if isinstance(event, ast.Name):
            if not (event.id in imported or event.id in bound or hasattr(builtins, event.id)):
                return _STOP
            continue
        dotted = _dotted(event, imported, qualify)
        if dotted in table.WINDOWS_ATTRIBUTES:
            return "AttributeError"
        if dotted is None or not stdlib_module(dotted):
            return _STOP  # an attribute of a value: a property may run
    return _STOP  # the statement completes: what it binds is not followed


def _evaluation_order(node: ast.expr) -> Iterator[ast.Name | ast.Attribute | None]:
    """The reads ``node`` makes, in the order Python makes them, up to its first call
    (``None``: a call, or an expression not followed)."""
    if isinstance(node, ast.Constant):
        return
    if isinstance(node, ast.Name):
        yield node
    elif isinstance(node, ast.Attribute):
        yield from _evaluation_order(node.value)
        yield node
    elif isinstance(node, ast.Call):
        yield from _evaluation_order(node.func)
        for arg in node.args:
            yield from _evaluation_order(arg)
        for keyword in node.keywords:
            yield from _evaluation_order(keyword.value)
        yield None  # the call itself runs
    elif isinstance(node, ast.Tuple | ast.List):
        for element in node.elts:
            yield from _evaluation_order(element)
    else:
        yield None


def _dotted(node: ast.Attribute, imported: dict[str, str], qualify: Qualify) -> str | None:
    parts: list[str] = []
    head: ast.expr = node
    while isinstance(head, ast.Attribute):
        parts.append(head.attr)
        head = head.value
    if not isinstance(head, ast.Name):
        return None
    base = imported.get(head.id) or qualify(head)
    if base is None or base.startswith(("local.", "builtins.")):
        return None
    return ".".join([base, *reversed(parts)])


def _handler(stmt: ast.Try, failure: str, qualify: Qualify, imports_before: bool) -> int | None:
    """The index of the first handler catching ``failure`` (and ``ImportError`` when
    imports ran before it), or ``None`` when one before it may catch it or none does."""
    for index, handler in enumerate(stmt.handlers):
        if handler.type is None:
            return index
        parts = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names: set[str] = set()
        for part in parts:
            name = qualify(part)
            if name is None or not name.startswith("builtins."):
                return None  # an exception type the rule does not know
            names.add(name.removeprefix("builtins."))
        if names & _CAUGHT_BY[failure]:
            if imports_before and not names & _CAUGHT_BY["ImportError"]:
                return None
            return index
    return None
