"""A ``functools.wraps`` wrapper that only calls through (``semver``'s ``@deprecated``).

The function served is the wrapper, so the decorator keeps the capability's signature only
when the wrapper returns ``func(*args, **kwargs)`` with the arguments it was given, after
statements that can neither change them, nor call ``func`` twice, nor act on the world. What
such a body may do besides is a warning (``warnings.warn``/``warn_explicit`` of a built-in
warning category: a line on stderr at most, under the default filters) and building its
message from the decorator's plain arguments. Anything else keeps the decorator (SVC-R001).
"""

import ast
import builtins
from collections.abc import Callable, Iterable
from typing import Final

from svcc.frontends.python._values import FunctionRef, Opaque, is_plain

# Calls the body may make: a warning, and reading the frame/name it reports.
_HARMLESS: Final = frozenset(
    {
        "warnings.warn",
        "warnings.warn_explicit",
        "inspect.currentframe",
        "inspect.getfile",
        "typing.cast",
        "builtins.str",
        "builtins.repr",
    }
)
# Methods of the message being built (a ``str`` or ``list`` of the body's own).
_MESSAGE_METHODS: Final = frozenset({"append", "extend", "format", "join"})
_EXPRESSIONS: Final = (
    ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.BoolOp, ast.Compare, ast.UnaryOp,
    ast.IfExp, ast.BinOp, ast.Add, ast.Mod, ast.List, ast.Tuple, ast.JoinedStr,
    ast.FormattedValue, ast.keyword,
    ast.Load, ast.Store, ast.Del, ast.boolop, ast.cmpop, ast.unaryop,
)  # fmt: skip
_WARNINGS: Final = frozenset(
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), Warning)
)


def calls_through(
    node: ast.FunctionDef,
    names: dict[str, object],
    function: FunctionRef,
    *,
    qualify: Callable[[ast.expr], str | None],
    module_bound: Iterable[str],
    argument_is_warning: Callable[[str], bool],
) -> tuple[str, ...] | None:
    """The reviewed functions the closure ``node`` (its enclosing names ``names``) calls,
    when it only warns and returns ``function(*args, **kwargs)``; else ``None``."""
    spec = node.args
    if spec.posonlyargs or spec.args or spec.kwonlyargs or not spec.vararg or not spec.kwarg:
        return None
    wrapped = {k for k, v in names.items() if v is function}
    if not wrapped or not _wraps(node, wrapped, qualify):
        return None
    body = [
        s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if not body or not _is_call_through(body[-1], wrapped, spec.vararg.arg, spec.kwarg.arg):
        return None
    own = {spec.vararg.arg, spec.kwarg.arg}
    local = {
        t.id
        for s in ast.walk(node)
        if isinstance(s, ast.Assign | ast.Delete)
        for t in s.targets
        if isinstance(t, ast.Name)
    }
    if local & (wrapped | own | set(names)):
        return None  # an enclosing name (or the arguments) bound again
    shadowed = set(module_bound)
    checker = _Checker(
        names=names,
        wrapped=wrapped,
        own=own,
        local=local,
        qualify=qualify,
        shadowed=shadowed,
        argument_is_warning=argument_is_warning,
    )
    if not all(checker.statement(s) for s in body[:-1]):
        return None
    return tuple(sorted(checker.called))


def _wraps(
    node: ast.FunctionDef, wrapped: set[str], qualify: Callable[[ast.expr], str | None]
) -> bool:
    if len(node.decorator_list) != 1:
        return False
    dec = node.decorator_list[0]
    return (
        isinstance(dec, ast.Call)
        and qualify(dec.func) == "functools.wraps"
        and len(dec.args) == 1
        and not dec.keywords
        and isinstance(dec.args[0], ast.Name)
        and dec.args[0].id in wrapped
    )


def _is_call_through(stmt: ast.stmt, wrapped: set[str], args: str, kwargs: str) -> bool:
    """``return func(*args, **kwargs)``, exactly."""
    if not isinstance(stmt, ast.Return) or not isinstance(stmt.value, ast.Call):
        return False
    call = stmt.value
    return (
        isinstance(call.func, ast.Name)
        and call.func.id in wrapped
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and isinstance(call.args[0].value, ast.Name)
        and call.args[0].value.id == args
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == kwargs
    )


class _Checker:
    def __init__(
        self,
        *,
        names: dict[str, object],
        wrapped: set[str],
        own: set[str],
        local: set[str],
        qualify: Callable[[ast.expr], str | None],
        shadowed: set[str],
        argument_is_warning: Callable[[str], bool],
    ) -> None:
        self.argument_is_warning = argument_is_warning
        self.categories: set[int] = set()  # a warning's category: checked by ``_category``
        self.reviewed: set[int] = set()  # the module's names a reviewed call reads
        self.called: set[str] = set()  # the warnings it makes (the capability's reach)
        self.names = names
        self.wrapped = wrapped
        self.own = own
        self.local = local
        self.qualify = qualify
        self.shadowed = shadowed

    def statement(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, ast.Assign):
            plain = all(isinstance(t, ast.Name) for t in stmt.targets)
            return plain and self.expression(stmt.value)
        if isinstance(stmt, ast.Delete):
            return all(isinstance(t, ast.Name) for t in stmt.targets)
        if isinstance(stmt, ast.Expr):
            return self.expression(stmt.value)
        if isinstance(stmt, ast.If):
            return (
                self.expression(stmt.test)
                and all(self.statement(s) for s in stmt.body)
                and all(self.statement(s) for s in stmt.orelse)
            )
        return False

    def expression(self, expr: ast.expr) -> bool:
        for sub in ast.walk(expr):
            if not isinstance(sub, _EXPRESSIONS):
                return False
            if isinstance(sub, ast.Name) and not self._name(sub):
                return False
            if isinstance(sub, ast.Call) and not self._call(sub):
                return False
        return True

    def _name(self, node: ast.Name) -> bool:
        """The arguments are the caller's (only passed through); an enclosing name holds a
        plain value, the wrapped function, or (read as a warning's category) a class; a
        module name is read only as a reviewed function or a ``cast``'s type (another
        object's ``__str__`` or ``__bool__`` would run the module's code)."""
        if node.id in self.own:
            return False
        if node.id in self.local or node.id in self.wrapped:
            return True
        if node.id not in self.names:  # the module's: a reviewed function, or a cast's type
            return id(node) in self.reviewed
        value = self.names[node.id]
        return is_plain(value) or (isinstance(value, Opaque) and id(node) in self.categories)

    def _call(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _MESSAGE_METHODS:
            receiver = func.value
            return (isinstance(receiver, ast.Constant) and isinstance(receiver.value, str)) or (
                isinstance(receiver, ast.Name) and receiver.id in self.local
            )
        if isinstance(func, ast.Name) and (func.id in self.local or func.id in self.names):
            return False  # calls the wrapped function early, or a value of the body's
        name = self.qualify(func)
        if name not in _HARMLESS:
            return False
        if name.startswith("warnings."):  # the rest read the frame: reviewed here
            self.called.add(name)
        read = [func, call.args[0]] if name == "typing.cast" and call.args else [func]
        self.reviewed.update(id(n) for e in read for n in ast.walk(e) if isinstance(n, ast.Name))
        if name.startswith("warnings."):
            given = [k.value for k in call.keywords if k.arg == "category"] + call.args[1:2]
            self.categories.update(id(e) for e in given)
            return all(self._category(e) for e in given)
        return True

    def _category(self, expr: ast.expr) -> bool:
        """A built-in warning class: the warning made runs no code of the module's."""
        if not isinstance(expr, ast.Name):
            return False
        if expr.id in self.names:
            return self.argument_is_warning(expr.id)  # the decorator's argument
        return is_warning(expr, self.shadowed) and expr.id not in self.local


def is_warning(expr: ast.expr | None, shadowed: Iterable[str]) -> bool:
    """A built-in warning class named as such (the module does not bind the name)."""
    return isinstance(expr, ast.Name) and expr.id in _WARNINGS and expr.id not in shadowed
