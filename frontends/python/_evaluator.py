"""The abstract evaluator of a module's import-time code: constant propagation and partial
evaluation over the syntax tree, never running the source.

``ModuleValues.run`` is handed the module's top-level statements in order (the lowerer's
first pass) and keeps what each name holds when it is known (see ``_values``): literals,
operators, string formatting, comprehensions and loops over known finite iterables that
fill module-level containers, the reviewed standard-library table (``_fold_table``), Enum
members, ``sys.version_info`` of the target, and calls of the module's own functions whose
bodies it can evaluate on known arguments. What it learns, the lowerer records as facts:

- a statement it evaluated whole, with no effect, is a folded constant;
- an ``if`` whose test it decided, and a ``try`` of imports whose outcome it decided
  (``live``): only the branch that runs is judged and defines names;
- the folded first argument of a ``re.`` call (``pattern``), checked as a literal one;
- a decorator that is a module-level function returning its argument (``identity``).

Everything is bounded (``_values``): past a bound a value is unknown, never a hang.
"""

import _string
import ast
import re
import sys
from collections.abc import Callable
from typing import Final

from svcc.frontends.python import _fold_table as table
from svcc.frontends.python._fallbacks import alternatives, catches_import_error
from svcc.frontends.python._statements import nested_bindings
from svcc.frontends.python._values import (
    MAX_CALL_DEPTH,
    MAX_ITERATIONS,
    MAX_MODULE_STEPS,
    MAX_STEPS,
    MAX_STRING,
    MUTABLE,
    OPAQUE,
    ClassValue,
    EnumMember,
    Opaque,
    TargetHexversion,
    TargetVersion,
    Unknown,
    check_size,
    is_plain,
    range_length,
    unordered,
    weight,
)

Position = tuple[int, int]
Qualify = Callable[[ast.expr], str | None]

_ENUM_BASES: Final = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag"})
_IMPORT_ERRORS: Final = frozenset({"builtins.ImportError", "builtins.ModuleNotFoundError"})
_TYPE_CHECKING: Final = frozenset({"typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"})

_BINARY: Final[dict[type, Callable[[object, object], object]]] = {
    ast.Add: lambda a, b: a + b,  # type: ignore[operator]
    ast.Sub: lambda a, b: a - b,  # type: ignore[operator]
    ast.Mult: lambda a, b: a * b,  # type: ignore[operator]
    ast.Div: lambda a, b: a / b,  # type: ignore[operator]
    ast.FloorDiv: lambda a, b: a // b,  # type: ignore[operator]
    ast.Mod: lambda a, b: a % b,  # type: ignore[operator]
    ast.Pow: lambda a, b: a**b,  # type: ignore[operator]
    ast.LShift: lambda a, b: a << b,  # type: ignore[operator]
    ast.RShift: lambda a, b: a >> b,  # type: ignore[operator]
    ast.BitOr: lambda a, b: a | b,  # type: ignore[operator]
    ast.BitAnd: lambda a, b: a & b,  # type: ignore[operator]
    ast.BitXor: lambda a, b: a ^ b,  # type: ignore[operator]
}
_COMPARE: Final[dict[type, Callable[[object, object], bool]]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,  # type: ignore[operator]
    ast.LtE: lambda a, b: a <= b,  # type: ignore[operator]
    ast.Gt: lambda a, b: a > b,  # type: ignore[operator]
    ast.GtE: lambda a, b: a >= b,  # type: ignore[operator]
    ast.In: lambda a, b: a in b,  # type: ignore[operator]
    ast.NotIn: lambda a, b: a not in b,  # type: ignore[operator]
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}
# Attributes of a function or class that describe it and run nothing when read or set.
_METADATA: Final = frozenset({"__doc__", "__name__", "__qualname__", "__module__"})

# Functions whose result does not depend on the order of a set's elements.
_ORDER_FREE: Final = frozenset(
    {sorted, len, min, max, sum, any, all, set, frozenset, bool}
    | {table.BUILTINS[n] for n in ("sorted", "len", "min", "max", "any", "all", "set", "frozenset")}
)
_OPERATOR_ERRORS: Final = (
    TypeError, ValueError, ArithmeticError, IndexError, KeyError, AttributeError, LookupError,
    RecursionError, MemoryError,
)  # fmt: skip


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value


def _compare_hexversion(op: ast.cmpop, left: object, right: object, node: ast.AST) -> bool:
    """``sys.hexversion`` against an integer: decided when every release of the target's
    ``major.minor`` compares the same way."""
    flipped = isinstance(right, TargetHexversion)
    target, other = (right, left) if flipped else (left, right)
    assert isinstance(target, TargetHexversion)
    if type(other) is not int or not isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE):
        raise Unknown(node, "a comparison of the Python version")
    if target.low <= other < target.high:
        raise Unknown(node, "the comparison depends on the target's micro version")
    above = other < target.low  # the version is above ``other``
    if flipped:  # other OP version
        return above == isinstance(op, ast.Lt | ast.LtE)
    return above == isinstance(op, ast.Gt | ast.GtE)


def position(node: ast.AST) -> Position:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _call_key(node: ast.AST) -> tuple[int, int, int, int]:
    return (
        getattr(node, "lineno", 0),
        getattr(node, "col_offset", 0),
        getattr(node, "end_lineno", 0) or 0,
        getattr(node, "end_col_offset", 0) or 0,
    )


def stdlib_module(name: str) -> bool:
    """Whether the target's standard library provides the module ``name``."""
    return name.split(".", 1)[0] in sys.stdlib_module_names


class _Scope:
    """A function's, comprehension's or class body's own names over the module's."""

    def __init__(
        self, names: dict[str, object], parent: "_Scope | None" = None, *, is_class: bool = False
    ) -> None:
        self.names = names
        self.parent = parent
        self.is_class = is_class  # a class body: the scopes nested in it do not see its names


def _enclosing(scope: _Scope | None) -> _Scope | None:
    """The scope a comprehension made in ``scope`` sees: a class body's names are not."""
    while scope is not None and scope.is_class:
        scope = scope.parent
    return scope


_NOT_KNOWN: Final = object()


def _single_target(item: ast.stmt) -> str | None:
    """The one name an ``x = ...`` / ``x: T = ...`` binds, else ``None``."""
    if isinstance(item, ast.Assign) and len(item.targets) == 1:
        target = item.targets[0]
    elif isinstance(item, ast.AnnAssign) and item.value is not None:
        target = item.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


class ModuleValues:
    def __init__(self, qualify: Qualify, python_version: tuple[int, int]) -> None:
        self.qualify = qualify
        self.version = TargetVersion(python_version[0], python_version[1])
        self.values: dict[str, object] = {}
        self.bound: set[str] = set()  # every module-level name bound so far
        self.functions: dict[str, ast.FunctionDef] = {}
        self.identities: set[str] = set()
        self.wrappers: set[str] = set()  # functions returning a wrapper (``_is_wrapper``)
        self.imported: dict[str, str] = {}  # ``from M import N`` names still bound so
        self.mutable: set[str] = set()  # names holding a list, dict or set
        self.shared = False  # a mutable value is reachable through more than one name
        self.module_steps = 0
        self.steps = 0
        self.depth = 0
        self.mutated = False
        # What the lowerer records (keyed by position: a long module is parsed twice).
        self.folded: set[Position] = set()
        self.decided: dict[Position, int] = {}  # an if: 0 body, 1 orelse; a try: see live
        self.patterns: dict[tuple[int, int, int, int], str] = {}
        self.identity_decorators: set[Position] = set()
        self.wrapping_decorators: set[Position] = set()
        # ``try: from fw import tool`` / ``except ImportError: def tool(f): return f``: the
        # name, and each decorator naming it, to the ``try`` (identity when ``fw`` is missing).
        self.fallback_identities: dict[str, Position] = {}
        self.fallback_decorators: dict[Position, Position] = {}
        # Per statement not evaluated: the sub-expression that stopped it and why (its
        # position only: a node would keep the first reading's syntax tree alive).
        self.unknown_at: dict[Position, tuple[ast.expr, str]] = {}

    # -- the lowerer's questions ----------------------------------------------------------
    def live(self, stmt: ast.stmt) -> list[ast.stmt] | None:
        """The statements of the branch of a decided ``if``/``try`` that runs, or ``None``."""
        choice = self.decided.get(position(stmt))
        if choice is None:
            return None
        if isinstance(stmt, ast.If):
            return list(stmt.body if choice == 0 else stmt.orelse)
        if isinstance(stmt, ast.Try | ast.TryStar):
            if choice == 0:
                return [*stmt.body, *stmt.orelse, *stmt.finalbody]
            return [*stmt.handlers[choice - 1].body, *stmt.finalbody]
        return None

    def is_folded(self, stmt: ast.stmt) -> bool:
        return position(stmt) in self.folded

    def pattern(self, call: ast.Call) -> str | None:
        return self.patterns.get(_call_key(call))

    def unknown(self, stmt: ast.stmt) -> tuple[ast.expr, str] | None:
        """Where (a position-only node) and why a top-level statement could not be
        evaluated, when a sub-expression stopped it."""
        return self.unknown_at.get(position(stmt))

    def is_identity(self, decorator: ast.expr) -> bool:
        return position(decorator) in self.identity_decorators

    def fallback_identity(self, decorator: ast.expr) -> Position | None:
        """The ``try`` whose handler defines ``decorator`` as an identity, when the name is
        the import's or that identity (whichever ran), else ``None``."""
        return self.fallback_decorators.get(position(decorator))

    def is_wrapping(self, decorator: ast.expr) -> bool:
        """A decorator whose application at definition only makes a closure."""
        return position(decorator) in self.wrapping_decorators

    # -- statements -------------------------------------------------------------------------
    def run(self, stmt: ast.stmt) -> None:
        """Evaluate one top-level statement, in order, recording what the lowerer asks."""
        self.steps = 0
        self.mutated = False
        try:
            if self._definition(stmt):
                return
            if isinstance(stmt, ast.If | ast.Try | ast.TryStar) and self._branch(stmt):
                return
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                return
            self._exec(stmt, None)
            if not isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass):
                self.folded.add(position(stmt))
        except (Unknown, _Break, _Continue, _Return, RecursionError, *_OPERATOR_ERRORS) as exc:
            if (
                isinstance(exc, Unknown)
                and isinstance(exc.node, ast.expr)
                and hasattr(exc.node, "end_col_offset")
            ):
                where = ast.Constant(
                    value=None,
                    lineno=exc.node.lineno,
                    col_offset=exc.node.col_offset,
                    end_lineno=exc.node.end_lineno,
                    end_col_offset=exc.node.end_col_offset,
                )
                self.unknown_at[position(stmt)] = (where, exc.why)
            self._patterns(stmt)  # its arguments are read before anything it calls runs
            self._forget(stmt)
        if isinstance(stmt, ast.Try | ast.TryStar) and position(stmt) not in self.decided:
            for name in _fallback_identities(stmt, self.qualify):
                self.fallback_identities[name] = position(stmt)

    def _definition(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            self._decorators(stmt)
            self._unbind(stmt.name)
            self._define(stmt)
            return True
        if isinstance(stmt, ast.ClassDef):
            self._unbind(stmt.name)
            self._class_body(stmt)
            value = self._class(stmt)
            if value is not None:
                self.values[stmt.name] = value
            self._patterns(stmt)
            return True
        return False

    def _define(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if isinstance(fn, ast.AsyncFunctionDef) or fn.decorator_list:
            return
        self.functions[fn.name] = fn
        if _is_identity(fn):
            self.identities.add(fn.name)
        elif self._is_wrapper(fn):
            self.wrappers.add(fn.name)

    def _is_wrapper(self, fn: ast.FunctionDef) -> bool:
        """``def deco(f):`` whose body only defines functions (undecorated, or decorated
        ``@functools.wraps(f)``) and returns one of them: applying it at definition makes a
        closure and runs nothing else. The function it returns is another one (its
        capability keeps the decorator, SVC-R001); only the import is harmless."""
        spec = fn.args
        params = [a.arg for a in [*spec.posonlyargs, *spec.args]]
        if len(params) != 1 or spec.vararg or spec.kwarg or spec.kwonlyargs:
            return False
        body = [
            s
            for s in fn.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        if len(body) < 2 or not isinstance(body[-1], ast.Return):
            return False
        defined: set[str] = set()
        for item in body[:-1]:
            if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                return False
            for dec in item.decorator_list:
                if not (
                    isinstance(dec, ast.Call)
                    and self.qualify(dec.func) == "functools.wraps"
                    and len(dec.args) == 1
                    and not dec.keywords
                    and isinstance(dec.args[0], ast.Name)
                    and dec.args[0].id == params[0]
                ):
                    return False
            if _defaults_run_code(item):
                return False
            defined.add(item.name)
        returned = body[-1].value
        return isinstance(returned, ast.Name) and returned.id in defined

    def _decorators(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """Record ``fn``'s decorators that are the module's identities or wrappers."""
        for dec in fn.decorator_list:
            if isinstance(dec, ast.Name) and dec.id in self.identities:
                self.identity_decorators.add(position(dec))
            elif isinstance(dec, ast.Name) and dec.id in self.wrappers:
                self.wrapping_decorators.add(position(dec))
            elif isinstance(dec, ast.Name) and dec.id in self.fallback_identities:
                self.fallback_decorators[position(dec)] = self.fallback_identities[dec.id]

    def _class_body(self, stmt: ast.ClassDef) -> None:
        """Fold the class body's assignments whose value the evaluator computes from the
        module's names (``_EMPTY_HASH = hash(range(0, 0))``): the lowerer then does not
        judge them as code. A value reading a name the body bound before is not folded (it
        would be read in the module's scope, not the class's)."""
        own: set[str] = set()
        namespace = _Scope({}, None, is_class=True)
        for item in stmt.body:
            value = item.value if isinstance(item, ast.Assign | ast.AnnAssign) else None
            reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} if value else set()
            known: object = _NOT_KNOWN
            if value is not None and not (reads & (own - namespace.names.keys())):
                try:
                    self.steps = 0
                    known = self._eval(value, namespace)
                    self.folded.add(position(item))
                except (Unknown, RecursionError, *_OPERATOR_ERRORS):
                    pass
            for name in nested_bindings(item):
                namespace.names.pop(name, None)
            target = _single_target(item)
            if target is not None and known is not _NOT_KNOWN:
                namespace.names[target] = known
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and not (
                own & {d.id for d in item.decorator_list if isinstance(d, ast.Name)}
            ):
                self._decorators(item)
            own.update(nested_bindings(item))

    def _class(self, stmt: ast.ClassDef) -> ClassValue | None:
        """An Enum's members, or a plain class's literal attributes (no decorator, no
        base other than ``object``)."""
        if stmt.decorator_list or stmt.keywords:
            return None
        bases = [self.qualify(b) for b in stmt.bases]
        enum = any(b in _ENUM_BASES for b in bases)
        if not enum and any(b not in ("builtins.object",) for b in bases):
            return None
        attributes: dict[str, object] = {}
        for item in stmt.body:
            if (
                isinstance(item, ast.Assign)
                and len(item.targets) == 1
                and isinstance(item.targets[0], ast.Name)
            ):
                name = item.targets[0].id
                try:
                    value = self._eval(item.value, None)
                except Unknown:
                    continue
                if enum and not name.startswith("_"):
                    value = EnumMember(stmt.name, name, value)
                attributes[name] = value
        binds = {name for item in stmt.body for name in nested_bindings(item)}
        plain = not enum and not binds & {"__init__", "__new__"}
        return ClassValue(stmt.name, attributes, constructible=plain)

    def _branch(self, stmt: ast.If | ast.Try | ast.TryStar) -> bool:
        """Decide an ``if`` test or a ``try`` of imports; run the live branch. ``False``
        when undecided (the statement is then evaluated as a whole, or forgotten)."""
        if isinstance(stmt, ast.If):
            try:
                truth = self._truth(stmt.test, None)
            except Unknown:
                return False
            self.decided[position(stmt)] = 0 if truth else 1
        else:
            choice = self._import_fallback(stmt)
            if choice is None:
                return False
            self.decided[position(stmt)] = choice
        for sub in self.live(stmt) or []:
            self.run(sub)
        return True

    def _import_fallback(self, stmt: ast.Try | ast.TryStar) -> int | None:
        """``try: import X`` / ``except ImportError: ...``: the ``try`` body (0) runs when
        the target's standard library provides every module it imports."""
        if not stmt.body or not all(isinstance(s, ast.Import | ast.ImportFrom) for s in stmt.body):
            return None
        if not any(self._catches_import_error(h.type) for h in stmt.handlers):
            return None
        modules: list[str] = []
        for s in stmt.body:
            if isinstance(s, ast.Import):
                modules.extend(a.name for a in s.names)
            elif isinstance(s, ast.ImportFrom) and s.level == 0 and s.module:
                modules.append(s.module)
            else:
                return None
        # A third-party module may or may not be installed where the bundle runs (the
        # environment's business, not the module's): only the standard library decides.
        return 0 if all(stdlib_module(m) for m in modules) else None

    def _catches_import_error(self, node: ast.expr | None) -> bool:
        if node is None:
            return False
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        return any(self.qualify(p) in _IMPORT_ERRORS for p in parts)

    def _forget(self, stmt: ast.stmt) -> None:
        """After a statement not evaluated whole: what it binds, and every mutable value it
        may have reached, is unknown."""
        for name in nested_bindings(stmt):
            self._unbind(name)
        mentioned = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        if self.mutated or (self.shared and mentioned & self.mutable):
            for name in list(self.mutable):
                self._unbind(name)
            self.shared = False
        else:
            for name in mentioned & self.mutable:
                self._unbind(name)

    def _unbind(self, name: str) -> None:
        self.bound.add(name)
        self.values.pop(name, None)
        self.mutable.discard(name)
        self.imported.pop(name, None)
        self.functions.pop(name, None)
        self.identities.discard(name)
        self.wrappers.discard(name)
        self.fallback_identities.pop(name, None)

    def _patterns(self, node: ast.AST) -> None:
        """Fold the first argument of every ``re.`` call the statement makes, for the
        pattern check the readiness pass makes of a literal."""
        for call in _import_time_nodes(node):
            if not (isinstance(call, ast.Call) and call.args):
                continue
            callee = self.qualify(call.func) if isinstance(call.func, ast.Attribute) else None
            if callee is None or not callee.startswith("re."):
                continue
            first = call.args[0]
            if isinstance(first, ast.Constant) and not isinstance(first.value, bytes):
                continue
            try:
                self.steps = 0
                value = self._eval(call.args[0], None)
            except (Unknown, RecursionError, *_OPERATOR_ERRORS):
                continue
            if isinstance(value, bytes):
                value = _bytes_pattern(value)
            if isinstance(value, str):
                self.patterns[_call_key(call)] = value

    def _exec_block(self, body: list[ast.stmt], scope: _Scope | None) -> None:
        for stmt in body:
            self._exec(stmt, scope)

    def _exec(self, stmt: ast.stmt, scope: _Scope | None) -> None:
        self._step(stmt)
        if isinstance(stmt, ast.Assign):
            value = self._eval(stmt.value, scope)
            for target in stmt.targets:
                self._assign(target, value, scope, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self._assign(stmt.target, self._eval(stmt.value, scope), scope, stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            load = _as_load(stmt.target)
            value = self._binary(
                stmt.op, self._eval(load, scope), self._eval(stmt.value, scope), stmt
            )
            if isinstance(stmt.target, ast.Name) and isinstance(value, MUTABLE):
                self.mutated = True  # ``TABLE += [...]`` extends the list in place
            self._assign(stmt.target, value, scope, None)
        elif isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):
                return
            self._fill(stmt.value, scope)
        elif isinstance(stmt, ast.For):
            self._for(stmt, scope)
        elif isinstance(stmt, ast.If):
            self._exec_block(stmt.body if self._truth(stmt.test, scope) else stmt.orelse, scope)
        elif isinstance(stmt, ast.Pass):
            return
        elif isinstance(stmt, ast.Break):
            raise _Break
        elif isinstance(stmt, ast.Continue):
            raise _Continue
        elif isinstance(stmt, ast.Return) and scope is not None:
            raise _Return(None if stmt.value is None else self._eval(stmt.value, scope))
        elif isinstance(stmt, ast.Import | ast.ImportFrom) and scope is None:
            for name in nested_bindings(stmt):
                self._unbind(name)
            if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
                for alias in stmt.names:
                    self.imported[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
        else:
            if (
                isinstance(stmt, ast.FunctionDef)
                and scope is not None
                and not stmt.decorator_list
                and not _defaults(stmt)
            ):
                scope.names[stmt.name] = _Closure(stmt, scope)  # a helper's own helper
                return
            raise Unknown(stmt, "a statement the evaluator does not know")

    def _for(self, stmt: ast.For, scope: _Scope | None) -> None:
        items = self._iterate(stmt.iter, scope)
        for item in items:
            self._assign(stmt.target, item, scope, None)
            try:
                self._exec_block(stmt.body, scope)
            except _Break:
                return
            except _Continue:
                continue
        self._exec_block(stmt.orelse, scope)

    def _fill(self, node: ast.expr, scope: _Scope | None) -> None:
        """An expression statement: only a call of a filling method on a known container
        (``TABLE.update(...)``, ``__all__.append("x")``) or of a pure function."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            self._call(node, scope)  # the module's own function, or a pure builtin
            return
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            raise Unknown(node, "a call whose effect is not known")
        method = node.func.attr
        if method not in table.FILLING_METHODS:
            raise Unknown(node, "a call whose effect is not known")
        receiver = self._eval(node.func.value, scope)
        if not isinstance(receiver, MUTABLE):
            raise Unknown(node.func.value, "a call on a value that is not a known container")
        args = [self._eval(a, scope) for a in node.args]
        if node.keywords:
            raise Unknown(node, "keyword arguments")
        if sum(weight(a) for a in args) + len(receiver) > MAX_STRING:
            raise Unknown(node, "a container past the evaluator's size limit")
        self.mutated = True
        try:
            getattr(receiver, method)(*args)
        except _OPERATOR_ERRORS as exc:
            raise Unknown(node, f"the call raises {type(exc).__name__}") from None
        check_size(receiver, node)

    def _assign(
        self, target: ast.expr, value: object, scope: _Scope | None, source: ast.expr | None
    ) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, MUTABLE) and isinstance(source, ast.Name):
                self.shared = True
            if scope is not None:
                scope.names[target.id] = value
                return
            self._unbind(target.id)
            self.values[target.id] = value
            if isinstance(value, MUTABLE):
                self.mutable.add(target.id)
            return
        if isinstance(target, ast.Tuple | ast.List):
            items = self._sequence(value, target)
            if len(items) != len(target.elts) or any(
                isinstance(e, ast.Starred) for e in target.elts
            ):
                raise Unknown(target, "an unpacking the evaluator does not know")
            for sub, item in zip(target.elts, items, strict=True):
                self._assign(sub, item, scope, None)
            return
        if isinstance(target, ast.Subscript):
            container = self._eval(target.value, scope)
            key = self._eval(target.slice, scope)
            if not isinstance(container, list | dict) or isinstance(target.slice, ast.Slice):
                raise Unknown(target, "an item assignment on a value that is not known")
            self.mutated = True
            try:
                container[key] = value  # type: ignore[call-overload]
            except _OPERATOR_ERRORS as exc:
                raise Unknown(target, f"the assignment raises {type(exc).__name__}") from None
            check_size(container, target)
            return
        if (
            scope is None
            and isinstance(target, ast.Attribute)
            and target.attr in _METADATA
            and isinstance(target.value, ast.Name)
            and target.value.id in self.bound
            and target.value.id not in self.values
            and (isinstance(value, str | Opaque) or value is None)
        ):
            return  # ``f.__doc__ = g.__doc__``, ``Error.__module__ = __name__``: metadata only
        raise Unknown(target, "an assignment to an attribute")

    # -- expressions ------------------------------------------------------------------------
    def _step(self, node: ast.AST) -> None:
        self.steps += 1
        self.module_steps += 1
        if self.steps > MAX_STEPS or self.module_steps > MAX_MODULE_STEPS:
            raise Unknown(node, "past the evaluator's step limit")

    def decide(self, test: ast.expr) -> bool | None:
        try:
            self.steps = 0
            return self._truth(test, None)
        except (Unknown, RecursionError, *_OPERATOR_ERRORS):
            return None

    def _truth(self, test: ast.expr, scope: _Scope | None) -> bool:
        return self._plain_truth(self._eval(test, scope), test)

    def _eval(self, node: ast.expr, scope: _Scope | None) -> object:
        self._step(node)
        kind = type(node)
        if kind is ast.Constant:
            return check_size(node.value, node)  # type: ignore[attr-defined]
        if kind is ast.Name:
            return self._name(node, scope)  # type: ignore[arg-type]
        if kind is ast.Attribute:
            return self._attribute(node, scope)  # type: ignore[arg-type]
        if kind in (ast.Tuple, ast.List, ast.Set):
            items = self._elements(node.elts, scope)  # type: ignore[attr-defined]
            made = {ast.Tuple: tuple, ast.List: list, ast.Set: set}[kind]
            return check_size(self._apply(made, [items], node), node)
        if kind is ast.Dict:
            return self._dict(node, scope)  # type: ignore[arg-type]
        if kind is ast.BinOp:
            left = self._eval(node.left, scope)  # type: ignore[attr-defined]
            right = self._eval(node.right, scope)  # type: ignore[attr-defined]
            return self._binary(node.op, left, right, node)  # type: ignore[attr-defined]
        if kind is ast.UnaryOp:
            operand = self._eval(node.operand, scope)  # type: ignore[attr-defined]
            return self._unary(node, operand)  # type: ignore[arg-type]
        if kind is ast.BoolOp:
            return self._boolean(node, scope)  # type: ignore[arg-type]
        if kind is ast.Compare:
            return self._compare(node, scope)  # type: ignore[arg-type]
        if kind is ast.IfExp:
            chosen = node.body if self._truth(node.test, scope) else node.orelse  # type: ignore[attr-defined]
            return self._eval(chosen, scope)
        if kind is ast.JoinedStr:
            return self._fstring(node, scope)  # type: ignore[arg-type]
        if kind is ast.Subscript:
            return self._subscript(node, scope)  # type: ignore[arg-type]
        if kind is ast.Call:
            return self._call(node, scope)  # type: ignore[arg-type]
        if kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            return self._comprehension(node, scope)
        if kind is ast.Lambda:
            return OPAQUE  # a function made, its body not run
        raise Unknown(node, "an expression the evaluator does not know")

    def _name(self, node: ast.Name, scope: _Scope | None) -> object:
        current = scope
        while current is not None:
            if node.id in current.names:
                return current.names[node.id]
            current = current.parent
        if node.id in self.values:
            return self.values[node.id]
        if node.id in self.imported:
            return self._dotted(self.imported[node.id], node)
        if node.id in self.bound:
            raise Unknown(node, f"`{node.id}` is not a known value")
        if node.id == "TYPE_CHECKING":
            raise Unknown(node, "`TYPE_CHECKING` is not bound")
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        if node.id == "__name__":
            return OPAQUE  # the module's name: bound, not known (a test of it is undecided)
        raise Unknown(node, f"`{node.id}` is not a known value")

    def _attribute(self, node: ast.Attribute, scope: _Scope | None) -> object:
        head: ast.expr = node
        while isinstance(head, ast.Attribute):
            head = head.value
        if isinstance(head, ast.Name) and head.id not in self.values and not _local(head, scope):
            name = self.qualify(node)
            if name is not None:
                return self._dotted(name, node)
        own = isinstance(node.value, ast.Name) and (
            node.value.id in self.functions
            or isinstance(self.values.get(node.value.id), ClassValue)
        )
        if own and node.attr in _METADATA:
            return OPAQUE  # a local function's or class's docstring or name
        value = self._eval(node.value, scope)
        if isinstance(value, ClassValue) and node.attr in value.attributes:
            return value.attributes[node.attr]
        if isinstance(value, EnumMember) and node.attr in ("name", "value"):
            return value.name if node.attr == "name" else value.value
        if isinstance(value, TargetVersion) and node.attr in ("major", "minor"):
            return value.major if node.attr == "major" else value.minor
        raise Unknown(node, f"the attribute `{node.attr}` is not known")

    def _dotted(self, name: str, node: ast.expr) -> object:
        if name in table.CONSTANTS:
            value = table.CONSTANTS[name]
            return value.copy() if isinstance(value, MUTABLE) else value  # never the table's
        if name == "sys.version_info":
            return self.version
        if name == "sys.hexversion":
            low = (self.version.major << 24) | (self.version.minor << 16)
            return TargetHexversion(low, low + (1 << 16))
        if name in _TYPE_CHECKING:
            return False
        if name.startswith("sys.version_info."):
            return self._attribute_of_version(name.rsplit(".", 1)[1], node)
        raise Unknown(node, f"`{name}` is not a value the evaluator knows")

    def _attribute_of_version(self, attr: str, node: ast.expr) -> object:
        if attr == "major":
            return self.version.major
        if attr == "minor":
            return self.version.minor
        raise Unknown(node, "the target's micro version is not known")

    def _elements(self, elts: list[ast.expr], scope: _Scope | None) -> list[object]:
        out: list[object] = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                out.extend(self._iterate(elt.value, scope))
            else:
                out.append(self._eval(elt, scope))
            check_size(out, elt)
        return out

    def _dict(self, node: ast.Dict, scope: _Scope | None) -> object:
        out: dict[object, object] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                merged = self._eval(value, scope)
                if not isinstance(merged, dict):
                    raise Unknown(value, "a `**` of a value that is not a known dict")
                out.update(merged)
            else:
                k = self._eval(key, scope)
                self._hashable(k, key)
                out[k] = self._eval(value, scope)
            check_size(out, node)
        return out

    def _hashable(self, value: object, node: ast.expr) -> None:
        try:
            hash(value)
        except TypeError:
            raise Unknown(node, "an unhashable key") from None

    def _binary(self, op: ast.operator, left: object, right: object, node: ast.AST) -> object:
        if not (is_plain(left) and is_plain(right)):
            raise Unknown(node, "an operator on a value that is not plain data")
        operator = _BINARY.get(type(op))
        if operator is None:
            raise Unknown(node, "an operator the evaluator does not know")
        self._bound_binary(op, left, right, node)
        return check_size(self._apply(operator, [left, right], node), node)

    def _bound_binary(self, op: ast.operator, left: object, right: object, node: ast.AST) -> None:
        """Refuse, before computing, an operation whose result would pass the bounds."""
        if isinstance(op, ast.Mult):
            if isinstance(left, int) and isinstance(right, int):
                if abs(left).bit_length() + abs(right).bit_length() > 2 * 4096:
                    raise Unknown(node, "an integer past the evaluator's size limit")
            elif weight(left) * weight(right) > MAX_STRING * 10:
                raise Unknown(node, "a value past the evaluator's size limit")
        elif isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int):
            if right > 0 and abs(left).bit_length() * right > 4096:
                raise Unknown(node, "an integer past the evaluator's size limit")
        elif isinstance(op, ast.LShift) and isinstance(right, int):
            if right > 4096:
                raise Unknown(node, "an integer past the evaluator's size limit")
        elif isinstance(op, ast.Add) and weight(left) + weight(right) > MAX_STRING * 10:
            raise Unknown(node, "a value past the evaluator's size limit")
        elif isinstance(op, ast.Mod) and isinstance(left, str | bytes):
            _bounded_format(left, node)
            if unordered(right):
                raise Unknown(node, "the order of a set of strings changes between runs")
            if weight(left) + weight(right) > MAX_STRING:
                raise Unknown(node, "a value past the evaluator's size limit")

    def _apply(self, fn: Callable[..., object], args: list[object], node: ast.AST) -> object:
        try:
            return fn(*args)
        except _OPERATOR_ERRORS as exc:
            raise Unknown(node, f"evaluating it raises {type(exc).__name__}") from None

    def _unary(self, node: ast.UnaryOp, operand: object) -> object:
        if isinstance(node.op, ast.Not):
            return not self._plain_truth(operand)
        if not is_plain(operand):
            raise Unknown(node, "an operator on a value that is not plain data")
        ops: dict[type, Callable[[object], object]] = {
            ast.USub: lambda v: -v,  # type: ignore[operator]
            ast.UAdd: lambda v: +v,  # type: ignore[operator]
            ast.Invert: lambda v: ~v,  # type: ignore[operator]
        }
        return self._apply(ops[type(node.op)], [operand], node)

    def _plain_truth(self, value: object, node: ast.AST | None = None) -> bool:
        if isinstance(value, Opaque):
            raise Unknown(node, "a value the evaluator does not know")
        if isinstance(value, TargetVersion | ClassValue | EnumMember):
            return True
        return bool(value)

    def _boolean(self, node: ast.BoolOp, scope: _Scope | None) -> object:
        value: object = None
        for operand in node.values:
            value = self._eval(operand, scope)
            truth = self._plain_truth(value)
            if isinstance(node.op, ast.And) and not truth:
                return value
            if isinstance(node.op, ast.Or) and truth:
                return value
        return value

    def _compare(self, node: ast.Compare, scope: _Scope | None) -> bool:
        left = self._eval(node.left, scope)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self._eval(comparator, scope)
            if not self._compare_one(op, left, right, node):
                return False
            left = right
        return True

    def _compare_one(self, op: ast.cmpop, left: object, right: object, node: ast.AST) -> bool:
        if isinstance(left, Opaque) or isinstance(right, Opaque):
            raise Unknown(node, "a comparison with a value the evaluator does not know")
        if isinstance(left, TargetVersion) or isinstance(right, TargetVersion):
            return self._compare_version(op, left, right, node)
        if isinstance(left, TargetHexversion) or isinstance(right, TargetHexversion):
            return _compare_hexversion(op, left, right, node)
        if isinstance(op, ast.Is | ast.IsNot):
            if not (left is None or right is None or isinstance(left, bool | EnumMember)):
                raise Unknown(node, "an identity test of values the evaluator builds")
        elif not (is_plain(left) and is_plain(right)) and not (
            isinstance(op, ast.Eq | ast.NotEq)
            and isinstance(left, EnumMember)
            and isinstance(right, EnumMember)
        ):
            raise Unknown(node, "a comparison of values that are not plain data")
        if (
            isinstance(op, ast.In | ast.NotIn)
            and isinstance(right, str | bytes)
            and weight(left) * weight(right) > MAX_STRING * 100
        ):
            raise Unknown(node, "a value past the evaluator's size limit")
        return bool(self._apply(_COMPARE[type(op)], [left, right], node))

    def _compare_version(self, op: ast.cmpop, left: object, right: object, node: ast.AST) -> bool:
        """``sys.version_info`` against a tuple of ints: decided by ``major.minor``; a
        comparison that the micro version would decide is unknown."""
        flipped = isinstance(right, TargetVersion)
        other = left if flipped else right
        if not (isinstance(other, tuple) and other and all(type(i) is int for i in other)):
            raise Unknown(node, "a comparison of the Python version with a non-tuple")
        if not isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE | ast.Eq | ast.NotEq):
            raise Unknown(node, "a comparison of the Python version")
        mine = (self.version.major, self.version.minor)
        head = tuple(other[:2])
        if head == mine[: len(head)] and len(other) > 2 and any(other[2:]):
            raise Unknown(node, "the comparison depends on the target's micro version")
        if head == mine[: len(head)]:
            # (3, 11) and (3, 11, 0) equal the version's prefix; the version is longer.
            ordering = 0 if len(head) == 2 else 1
            if len(head) == 2 and len(other) == 2:
                ordering = 1  # sys.version_info (3, 11, x, ...) > (3, 11)
        else:
            ordering = 1 if mine > head else -1
        if flipped:
            ordering = -ordering
        results = {
            ast.Lt: ordering < 0,
            ast.LtE: ordering <= 0,
            ast.Gt: ordering > 0,
            ast.GtE: ordering >= 0,
            ast.Eq: ordering == 0,
            ast.NotEq: ordering != 0,
        }
        return results[type(op)]

    def _fstring(self, node: ast.JoinedStr, scope: _Scope | None) -> str:
        out: list[str] = []
        size = 0
        for part in node.values:
            if isinstance(part, ast.Constant):
                text = str(part.value)
            elif isinstance(part, ast.FormattedValue):
                value = self._eval(part.value, scope)
                if not isinstance(value, str | int | float | type(None)):
                    raise Unknown(part.value, "a formatted value that is not plain data")
                spec = ""
                if part.format_spec is not None:
                    spec = self._fstring(part.format_spec, scope)  # type: ignore[arg-type]
                    _bounded_format(spec, node)
                conversion = {-1: None, 115: str, 114: repr, 97: ascii}[part.conversion]
                if conversion is not None:
                    value = self._apply(conversion, [value], part)
                text = str(self._apply(format, [value, spec], part))
            else:
                raise Unknown(part, "an f-string part the evaluator does not know")
            size += len(text)
            if size > MAX_STRING:
                raise Unknown(node, "a string past the evaluator's size limit")
            out.append(text)
        return "".join(out)

    def _subscript(self, node: ast.Subscript, scope: _Scope | None) -> object:
        value = self._eval(node.value, scope)
        if isinstance(node.slice, ast.Slice):
            parts = [
                None if p is None else self._eval(p, scope)
                for p in (node.slice.lower, node.slice.upper, node.slice.step)
            ]
            if not all(p is None or type(p) is int for p in parts):
                raise Unknown(node.slice, "a slice of values that are not integers")
            key: object = slice(*parts)
        else:
            key = self._eval(node.slice, scope)
        if isinstance(value, TargetVersion):
            full = (value.major, value.minor)
            if isinstance(key, int) and key in (0, 1):
                return full[key]
            if (
                isinstance(key, slice)
                and key.start in (None, 0)
                and key.stop in (1, 2)
                and key.step is None
            ):
                return full[key]
            raise Unknown(node, "the target's micro version is not known")
        if not is_plain(value) and not isinstance(value, tuple | list | dict):
            raise Unknown(node, "an item of a value that is not plain data")
        return check_size(self._apply(lambda v, k: v[k], [value, key], node), node)

    def _iterate(self, node: ast.expr, scope: _Scope | None) -> list[object]:
        value = self._eval(node, scope)
        return self._sequence(value, node)

    def _sequence(self, value: object, node: ast.AST) -> list[object]:
        if isinstance(value, range):
            if range_length(value) > MAX_ITERATIONS:
                raise Unknown(node, "a loop past the evaluator's iteration limit")
            return list(value)
        if isinstance(value, dict):
            return list(value)
        if isinstance(value, str | bytes | tuple | list | set | frozenset):
            if len(value) > MAX_ITERATIONS:
                raise Unknown(node, "a loop past the evaluator's iteration limit")
            if isinstance(value, set | frozenset) and not all(
                isinstance(v, int | bool | type(None)) for v in value
            ):
                raise Unknown(node, "the order of a set of strings changes between runs")
            return list(value)
        raise Unknown(node, "iteration over a value that is not a known finite collection")

    def _comprehension(self, node: ast.expr, scope: _Scope | None) -> object:
        made = _Made([], {}, _Scope({}, _enclosing(scope)), scope)
        try:
            self._produce(node, 0, made)
        finally:
            made.local.names.clear()  # no cycle through a nested function's frame
        if isinstance(node, ast.DictComp):
            return check_size(made.pairs, node)
        if isinstance(node, ast.SetComp):
            return check_size(self._apply(set, [made.results], node), node)
        return check_size(made.results, node)

    def _produce(self, node: ast.expr, index: int, made: "_Made") -> None:
        """The comprehension's ``index``-th generator and those after it (a method, not a
        closure: a recursive closure is a reference cycle, and lowering pauses the cyclic
        collector)."""
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        local = made.local
        if index == len(generators):
            made.count += 1
            if made.count > MAX_ITERATIONS:
                raise Unknown(node, "a comprehension past the evaluator's iteration limit")
            if isinstance(node, ast.DictComp):
                key = self._eval(node.key, local)
                self._hashable(key, node.key)
                made.pairs[key] = self._eval(node.value, local)
            else:
                made.results.append(self._eval(node.elt, local))  # type: ignore[attr-defined]
            return
        gen = generators[index]
        if gen.is_async:
            raise Unknown(node, "an async comprehension")
        for item in self._iterate(gen.iter, local if index else made.outer):
            self._assign(gen.target, item, local, None)
            if all(self._truth(cond, local) for cond in gen.ifs):
                self._produce(node, index + 1, made)

    # -- calls ------------------------------------------------------------------------------
    def _call(self, node: ast.Call, scope: _Scope | None) -> object:
        func = node.func
        function = self._function_name(func, scope) if isinstance(func, ast.Attribute) else None
        if isinstance(func, ast.Attribute) and function is None:
            return self._method(node, func, scope)
        if (
            isinstance(func, ast.Name)
            and func.id in ("getattr", "hasattr")
            and func.id not in self.bound
            and not node.keywords
            and self._stdlib_module(node.args, scope)
        ):
            self._elements(node.args[2:], scope)
            return OPAQUE  # the module's attribute, or the default: which is the version's
        args = self._elements(node.args, scope)
        kwargs: dict[str, object] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise Unknown(keyword.value, "a `**` argument")
            kwargs[keyword.arg] = self._eval(keyword.value, scope)
        if function == "re.compile":
            return self._compile(args, kwargs, node)
        if function is not None:
            return self._pure(table.FUNCTIONS[function], args, kwargs, node)
        if not isinstance(func, ast.Name):
            raise Unknown(func, "a call of a computed value")
        if _local(func, scope):
            closure = _lookup(func.id, scope)
            if isinstance(closure, _Closure):
                return self._local_call(closure.node, args, kwargs, node, closure.scope)
            raise Unknown(func, "a call of a local value")
        if func.id in self.functions:
            return self._local_call(self.functions[func.id], args, kwargs, node)
        own = self.values.get(func.id)
        if isinstance(own, ClassValue) and own.constructible and not args and not kwargs:
            return OPAQUE  # an instance made by ``object``'s own __new__ and __init__
        if func.id == "object" and func.id not in self.bound and not args and not kwargs:
            return OPAQUE  # a sentinel
        if func.id in self.bound:
            raise Unknown(func, f"a call of `{func.id}`, whose value is not known")
        builtin = table.BUILTINS.get(func.id)
        if builtin is None:
            raise Unknown(func, f"a call of `{func.id}`, which the evaluator does not know")
        return self._pure(builtin, args, kwargs, node)

    def _stdlib_module(self, args: list[ast.expr], scope: _Scope | None) -> bool:
        """``getattr(math, "sumprod", ...)``: the first argument a standard-library module
        imported by name, the second a literal string."""
        if len(args) < 2 or not isinstance(args[0], ast.Name) or _local(args[0], scope):
            return False
        if args[0].id in self.values:
            return False
        module = self.qualify(args[0])
        literal = isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)
        return literal and module is not None and module in sys.stdlib_module_names

    def _function_name(self, func: ast.Attribute, scope: _Scope | None) -> str | None:
        """The reviewed function ``func`` names (``re.escape``, ``str.maketrans``), or
        ``None`` for a method of a value."""
        head: ast.expr = func
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name) or head.id in self.values or _local(head, scope):
            return None
        name = self.qualify(func)
        if name is None and head.id in ("str", "bytes") and head.id not in self.bound:
            name = f"{head.id}.{func.attr}" if func.value is head else None
        return name if name in table.FUNCTIONS or name == "re.compile" else None

    def _compile(self, args: list[object], kwargs: dict[str, object], node: ast.AST) -> object:
        """``re.compile`` of a known pattern and flags: compiled here, as the readiness pass
        compiles a literal one; a pattern that does not compile is unknown (the pass then
        reports it on the statement, SVC-R031)."""
        flags = kwargs.pop("flags", args[1] if len(args) > 1 else 0)
        if kwargs or not args or len(args) > 2 or not isinstance(args[0], str | bytes):
            raise Unknown(node, "a pattern that is not known")
        if type(flags) is not int and not isinstance(flags, re.RegexFlag):
            raise Unknown(node, "flags that are not known")
        try:
            re.compile(args[0], flags)
        except (re.error, ValueError, OverflowError, TypeError, RecursionError):
            raise Unknown(node, "a pattern that does not compile") from None
        return OPAQUE  # a compiled pattern: made, not used by the evaluator

    def _pure(
        self,
        fn: Callable[..., object],
        args: list[object],
        kwargs: dict[str, object],
        node: ast.AST,
    ) -> object:
        every = [*args, *kwargs.values()]
        if not all(is_plain(a) for a in every):
            raise Unknown(node, "a call with a value that is not plain data")
        if fn not in _ORDER_FREE and any(unordered(a) for a in every):
            raise Unknown(node, "the order of a set of strings changes between runs")
        if sum(weight(a) for a in every) > MAX_STRING * 10:
            raise Unknown(node, "arguments past the evaluator's size limit")
        result = self._apply(lambda: fn(*args, **kwargs), [], node)
        if isinstance(result, range) and range_length(result) <= MAX_ITERATIONS:
            return result
        if not is_plain(result):
            raise Unknown(node, "a call that returns something other than plain data")
        return check_size(result, node)

    def _method(self, node: ast.Call, func: ast.Attribute, scope: _Scope | None) -> object:
        receiver = self._eval(func.value, scope)
        if func.attr not in table.PURE_METHODS or not is_plain(receiver):
            raise Unknown(func, f"the method `{func.attr}` of a value the evaluator does not know")
        if isinstance(receiver, range | int | float | bool | complex | type(None)):
            raise Unknown(func, f"the method `{func.attr}`")
        args = self._elements(node.args, scope)
        kwargs = {k.arg: self._eval(k.value, scope) for k in node.keywords if k.arg is not None}
        if len(kwargs) != len(node.keywords):
            raise Unknown(node, "a `**` argument")
        if func.attr == "format" and isinstance(receiver, str):
            _format_fields(receiver, node)
        bound = (weight(receiver) + 1) * (1 + sum(weight(a) for a in [*args, *kwargs.values()]))
        if bound > MAX_STRING * 10:
            raise Unknown(node, "a value past the evaluator's size limit")
        if isinstance(receiver, dict) and func.attr in ("keys", "values", "items") and not args:
            return list(getattr(receiver, func.attr)())
        method = getattr(receiver, func.attr, None)
        if method is None:
            raise Unknown(func, f"the method `{func.attr}`")
        result = self._pure(method, args, kwargs, node)
        if isinstance(receiver, dict) and func.attr in ("keys", "values", "items"):
            return list(result)  # type: ignore[call-overload]
        return result

    def _local_call(
        self,
        fn: ast.FunctionDef,
        args: list[object],
        kwargs: dict[str, object],
        node: ast.AST,
        closure: _Scope | None = None,
    ) -> object:
        """A call of the module's own function: its body evaluated on the known arguments
        (``MAX_CALL_DEPTH`` calls deep), only if it binds locals, fills containers and
        returns known values."""
        if self.depth >= MAX_CALL_DEPTH:
            raise Unknown(node, "calls nested past the evaluator's depth")
        names = self._bind_arguments(fn, args, kwargs, node)
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Global | ast.Nonlocal | ast.Yield | ast.YieldFrom):
                raise Unknown(node, f"a call of {fn.name}(), which is not a plain function")
        self.depth += 1
        frame = _Scope(names, closure)
        try:
            self._exec_block(fn.body, frame)
        except _Return as result:
            return result.value
        except (_Break, _Continue):
            raise Unknown(node, f"a call of {fn.name}()") from None
        finally:
            self.depth -= 1
            # a nested function holds its frame: cleared, reference counting frees both
            # (lowering pauses the cyclic collector; see ``_collection``)
            frame.names.clear()
        return None

    def _bind_arguments(
        self, fn: ast.FunctionDef, args: list[object], kwargs: dict[str, object], node: ast.AST
    ) -> dict[str, object]:
        spec = fn.args
        if spec.vararg or spec.kwarg or spec.posonlyargs:
            raise Unknown(node, f"a call of {fn.name}() with variable arguments")
        params = [a.arg for a in spec.args]
        if len(args) > len(params):
            raise Unknown(node, f"a call of {fn.name}() with too many arguments")
        names: dict[str, object] = dict(zip(params, args, strict=False))
        defaults = dict(zip(params[len(params) - len(spec.defaults) :], spec.defaults, strict=True))
        for kw, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
            if default is not None:
                defaults[kw.arg] = default
        for key, value in kwargs.items():
            if key in names or key not in [*params, *(k.arg for k in spec.kwonlyargs)]:
                raise Unknown(node, f"a call of {fn.name}() with an unexpected argument")
            names[key] = value
        for param in [*params, *(k.arg for k in spec.kwonlyargs)]:
            if param not in names:
                if param not in defaults:
                    raise Unknown(node, f"a call of {fn.name}() missing an argument")
                names[param] = self._eval(defaults[param], None)
        return names


class _Made:
    """What a comprehension has made so far, and its own scope."""

    def __init__(
        self,
        results: list[object],
        pairs: dict[object, object],
        local: _Scope,
        outer: _Scope | None,
    ) -> None:
        self.results = results
        self.pairs = pairs
        self.local = local
        self.outer = outer
        self.count = 0


class _Closure:
    """A function defined inside a helper the evaluator runs (called in its scope)."""

    def __init__(self, node: ast.FunctionDef, scope: _Scope) -> None:
        self.node = node
        self.scope = scope


def _defaults(fn: ast.FunctionDef) -> bool:
    return bool(fn.args.defaults) or any(d is not None for d in fn.args.kw_defaults)


def _lookup(name: str, scope: _Scope | None) -> object | None:
    current = scope
    while current is not None:
        if name in current.names:
            return current.names[name]
        current = current.parent
    return None


def _local(node: ast.Name, scope: _Scope | None) -> bool:
    current = scope
    while current is not None:
        if node.id in current.names:
            return True
        current = current.parent
    return False


def _as_load(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Name):
        return ast.copy_location(ast.Name(id=target.id, ctx=ast.Load()), target)
    if isinstance(target, ast.Subscript):
        load = ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
        return ast.copy_location(load, target)
    raise Unknown(target, "an augmented assignment to an attribute")


def _import_time_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of ``node`` that run when it runs: not the bodies of the functions and
    lambdas it defines (a class's methods run when called)."""
    out: list[ast.AST] = []
    stack = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
            stack.extend(current.decorator_list)
            continue
        if isinstance(current, ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(current))
    return out


def _bytes_pattern(pattern: bytes) -> str | None:
    """A bytes pattern as the text the readiness pass compiles to check a literal one: its
    Latin-1 reading, when the bytes pattern itself compiles (checked here, on bytes)."""
    try:
        re.compile(pattern)
    except (re.error, ValueError, OverflowError, RecursionError):
        return None
    return pattern.decode("latin-1")


def _format_fields(text: str, node: ast.AST) -> None:
    """``str.format``'s fields: each a plain name or index (no ``.attr`` or ``[key]``, which
    would read into the argument), a literal width or precision within the size limit (a
    nested field would take it from the arguments)."""
    try:
        fields = list(_string.formatter_parser(text))  # type: ignore[attr-defined]
    except ValueError:
        raise Unknown(node, "a format string that does not parse") from None
    for _, name, spec, _ in fields:
        if name is None:
            continue
        if not re.fullmatch(r"\w*", name):
            raise Unknown(node, "a format field the evaluator does not follow")
        if spec and "{" in spec:
            raise Unknown(node, "a format width taken from the arguments")
        if spec:
            _bounded_format(spec, node)


def _bounded_format(text: str | bytes, node: ast.AST) -> None:
    """A format with a width or precision past the size limit would allocate it."""
    digits = 0
    for char in text if isinstance(text, str) else text.decode("latin-1"):
        digits = digits + 1 if char.isdigit() else 0
        if digits > 4 or char == "*":
            raise Unknown(node, "a format width past the evaluator's size limit")


_TYPE_PARTS: Final = (ast.Name, ast.Attribute, ast.Constant, ast.Subscript, ast.Tuple, ast.BinOp)


def _defaults_run_code(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether defining ``fn`` evaluates more than literal defaults and annotations made of
    names, constants, subscripts and ``|`` (a type expression: looked up, not called)."""
    spec = fn.args
    if any(not isinstance(d, ast.Constant) for d in [*spec.defaults, *spec.kw_defaults] if d):
        return True
    every = [*spec.posonlyargs, *spec.args, *spec.kwonlyargs, spec.vararg, spec.kwarg]
    annotations = [fn.returns, *(a.annotation for a in every if a is not None)]
    return any(
        not isinstance(node, (*_TYPE_PARTS, ast.expr_context, ast.BitOr))
        for a in annotations
        if a is not None
        for node in ast.walk(a)
    )


def _fallback_identities(stmt: ast.Try | ast.TryStar, qualify: Qualify) -> list[str]:
    """The names the ``try`` body imports that a catching handler (importing nothing,
    raising nothing) defines as an identity: ``tool`` is then the import's when it is
    provided, else the identity."""
    found = alternatives(stmt, qualify)
    if found is None or not found[1]:
        return []
    imported = {
        alias.asname or alias.name.split(".", 1)[0]
        for s in stmt.body
        if isinstance(s, ast.Import | ast.ImportFrom)
        for alias in s.names
    }
    out: list[str] = []
    for handler in stmt.handlers:
        if not catches_import_error(handler, qualify):
            continue
        for item in handler.body:
            if (
                isinstance(item, ast.FunctionDef)
                and not item.decorator_list
                and item.name in imported
                and _is_identity(item)
            ):
                out.append(item.name)
    return out


def _is_identity(fn: ast.FunctionDef) -> bool:
    """``def tool(f): return f``, also with a docstring, and ``def tool(*a, **k)`` that
    returns its first argument when called bare; a ``functools.wraps`` wrapper that only
    calls through is not followed (its signature is the wrapper's)."""
    spec = fn.args
    params = [a.arg for a in [*spec.posonlyargs, *spec.args]]
    body = [
        s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(params) != 1 or spec.vararg or spec.kwarg or spec.kwonlyargs:
        return False
    return (
        len(body) == 1
        and isinstance(body[0], ast.Return)
        and isinstance(body[0].value, ast.Name)
        and body[0].value.id == params[0]
    )
