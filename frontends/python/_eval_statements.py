"""Statements of the bodies the import-time evaluator runs (see ``_evaluator``): a
module-level statement evaluated whole, and the body of a module's own function called on
known arguments: assignments (into names and known containers), ``for`` loops over known
finite iterables, ``if``, filling methods on known containers, ``return``.
"""

import ast
from typing import Final

from svcc.frontends.python import _fold_table as table
from svcc.frontends.python._eval_calls import Calls
from svcc.frontends.python._eval_state import (
    METADATA,
    OPERATOR_ERRORS,
    Break,
    Closure,
    Continue,
    Qualify,
    Return,
    Scope,
    defaults_run_code,
    has_defaults,
    is_local,
    lookup,
)
from svcc.frontends.python._statements import bound_names
from svcc.frontends.python._values import (
    MAX_STRING,
    MUTABLE,
    ClassObject,
    FunctionRef,
    Generated,
    Instance,
    Opaque,
    Unknown,
    check_size,
    weight,
)

# isinstance's classes as tuples made once (``A | B`` makes a union at each test, and a
# union is tested slower): ``_exec`` asks them of every statement it runs
_ASSIGNMENTS: Final = (ast.Assign, ast.AnnAssign, ast.AugAssign)
_JUMPS: Final = (ast.Pass, ast.Break, ast.Continue)
_IMPORTS: Final = (ast.Import, ast.ImportFrom)


class Statements(Calls):
    """A statement run in a scope (``None``: the module's own), or ``Unknown``."""

    def _exec_block(self, body: list[ast.stmt], scope: Scope | None) -> None:
        for stmt in body:
            self._exec(stmt, scope)

    def _exec(self, stmt: ast.stmt, scope: Scope | None) -> None:
        self._step(stmt)
        if isinstance(stmt, _ASSIGNMENTS):
            self._exec_assignment(stmt, scope)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield) and self.yields:
            value = None if stmt.value.value is None else self._eval(stmt.value.value, scope)
            self.yields[-1].append(value)  # a generator's values, made eagerly (bounded)
            check_size(self.yields[-1], stmt)
        elif isinstance(stmt, ast.Expr):
            if not isinstance(stmt.value, ast.Constant):
                self._fill(stmt.value, scope)
        elif isinstance(stmt, ast.For):
            self._for(stmt, scope)
        elif isinstance(stmt, ast.If):
            self._exec_block(stmt.body if self._truth(stmt.test, scope) else stmt.orelse, scope)
        elif isinstance(stmt, _JUMPS):
            _jump(stmt)
        elif isinstance(stmt, ast.Global) and scope is not None:
            pass  # read by ``_local_call``: the frame's ``globals``
        elif isinstance(stmt, ast.Try) and scope is not None:
            self._try(stmt, scope)  # at module level: its imports are judged as alternatives
        elif isinstance(stmt, ast.Return) and scope is not None:
            raise Return(None if stmt.value is None else self._eval(stmt.value, scope))
        elif isinstance(stmt, _IMPORTS) and scope is None:
            self._import(stmt)
        elif isinstance(stmt, ast.FunctionDef) and scope is not None and self._nested(stmt, scope):
            scope.names[stmt.name] = Closure(stmt, scope)  # a helper's own helper
        else:
            raise Unknown(stmt, "a statement the evaluator does not know")

    def _exec_assignment(
        self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: Scope | None
    ) -> None:
        if isinstance(stmt, ast.Assign):
            value = self._eval(stmt.value, scope)
            for target in stmt.targets:
                self._assign(target, value, scope, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self._assign(stmt.target, self._eval(stmt.value, scope), scope, stmt.value)
        else:
            load = as_load(stmt.target)
            value = self._binary(
                stmt.op, self._eval(load, scope), self._eval(stmt.value, scope), stmt
            )
            if isinstance(stmt.target, ast.Name) and isinstance(value, MUTABLE):
                self._changeable(self._eval(load, scope), stmt)
                self.mutated = True  # ``TABLE += [...]`` extends the list in place
            self._assign(stmt.target, value, scope, None)

    def _try(self, stmt: ast.Try, scope: Scope) -> None:
        """A ``try`` in a helper whose body the evaluator runs to its end: no handler runs
        (the evaluator follows no exception: an operation that would raise is unknown)."""
        try:
            self._exec_block(stmt.body, scope)
            self._exec_block(stmt.orelse, scope)
        except (Return, Break, Continue):
            if stmt.finalbody:
                raise Unknown(stmt.finalbody[0], "a `finally` after a jump") from None
            raise
        self._exec_block(stmt.finalbody, scope)

    def _import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        """A module-level import: the names it binds are the imported ones from then on."""
        for name in bound_names(stmt):
            self._unbind(name)
        if not isinstance(stmt, ast.ImportFrom):
            return
        source = stmt.module if stmt.level == 0 else None
        if stmt.level and self.siblings is not None:  # ``from .misc import X``
            source = self.siblings.absolute(self.module, stmt.level, stmt.module or "")
        if source:
            for alias in stmt.names:
                self.imported[alias.asname or alias.name] = f"{source}.{alias.name}"

    def _for(self, stmt: ast.For, scope: Scope | None) -> None:
        protect: frozenset[int] = frozenset()
        if isinstance(stmt.iter, ast.Call):  # a generator called here is made eagerly
            self.consumed.add(id(stmt.iter))
            try:
                value = self._eval(stmt.iter, scope)
            finally:
                self.consumed.discard(id(stmt.iter))
            if isinstance(value, Generated):
                items, protect = list(value.values), value.reach - self.foreign
            else:
                items = self._sequence(value, stmt.iter)
        else:
            items = self._iterate(stmt.iter, scope)
        self.foreign |= protect  # what the generator reads may not change under it
        try:
            for item in items:
                self._assign(stmt.target, item, scope, None)
                try:
                    self._exec_block(stmt.body, scope)
                except Break:
                    return
                except Continue:
                    continue
            self._exec_block(stmt.orelse, scope)
        finally:
            self.foreign -= protect

    def _fill(self, node: ast.expr, scope: Scope | None) -> None:
        """An expression statement: only a call of a filling method on a known container
        (``TABLE.update(...)``, ``__all__.append("x")``) or of a pure function."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            self._call(node, scope)  # the module's own function, or a pure builtin
            return
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            raise Unknown(node, "a call whose effect is not known")
        instance = self._named_instance(node.func.value, scope)
        if instance is not None:  # ``p.setup()``: the method's body, on the instance
            self._instance_method(instance, node, node.func, scope)
            return
        if self._unregisters_own_function(node, scope):
            return
        made = lookup(node.func.value.id, scope) if isinstance(node.func.value, ast.Name) else None
        if isinstance(made, ClassObject) and is_local(node.func.value, scope):  # type: ignore[arg-type]
            self._metaclass_method(made, node, node.func, scope)  # ``cls._populate()``
            return
        if node.func.attr == "__init__" and self._metaclass_super(node.func.value, scope):
            self._method(node, node.func, scope)  # ``super(M, cls).__init__(...)``
            return
        method = node.func.attr
        if method not in table.FILLING_METHODS:
            raise Unknown(node, "a call whose effect is not known")
        receiver = self._eval(node.func.value, scope)
        if not isinstance(receiver, MUTABLE):
            raise Unknown(node.func.value, "a call on a value that is not a known container")
        self._changeable(receiver, node)
        args = [self._eval(a, scope) for a in node.args]
        if node.keywords:
            raise Unknown(node, "keyword arguments")
        if sum(weight(a) for a in args) + len(receiver) > MAX_STRING:
            raise Unknown(node, "a container past the evaluator's size limit")
        self.mutated = True
        try:
            getattr(receiver, method)(*args)
        except OPERATOR_ERRORS as exc:
            raise Unknown(node, f"the call raises {type(exc).__name__}") from None
        check_size(receiver, node)

    def _unregisters_own_function(self, node: ast.Call, scope: Scope | None) -> bool:
        """``atexit.unregister(f)`` of a function this module defined: a function made by
        this import was registered only by this module's code (judged on its own), so
        unregistering it changes nothing a server relies on."""
        if self.qualify(node.func) != "atexit.unregister" or node.keywords:
            return False
        head = node.func.value if isinstance(node.func, ast.Attribute) else None
        if not isinstance(head, ast.Name) or is_local(head, scope):
            return False  # ``atexit`` a helper's own name
        if len(node.args) != 1 or not isinstance(node.args[0], ast.Name):
            return False
        function = self._eval(node.args[0], scope)
        return isinstance(function, FunctionRef) and function.own

    def _nested(self, fn: ast.FunctionDef, scope: Scope) -> bool:
        """A function defined in a helper's body that defining runs nothing of: no
        defaults, annotations that are type expressions, no decorator but
        ``@functools.wraps(f)`` of a function (it copies ``f``'s name and docstring)."""
        if has_defaults(fn) or defaults_run_code(fn) or len(fn.decorator_list) > 1:
            return False
        for decorator in fn.decorator_list:
            wrapped = _wraps_argument(decorator, self.qualify)
            if wrapped is None:
                return False
            if not isinstance(self._eval(wrapped, scope), FunctionRef | Closure):
                return False
        return True

    def _named_instance(self, node: ast.expr, scope: Scope | None) -> Instance | None:
        """The instance a name holds (``self``, ``p``), else ``None``."""
        if not isinstance(node, ast.Name):
            return None
        value = lookup(node.id, scope) if is_local(node, scope) else self.values.get(node.id)
        return value if isinstance(value, Instance) else None

    def _assign(
        self, target: ast.expr, value: object, scope: Scope | None, source: ast.expr | None
    ) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, _TRACKED) and isinstance(source, ast.Name):
                self.shared = True
            if scope is not None and target.id in scope.globals and self.global_writes is not None:
                self.global_writes.add(target.id)  # ``global X`` in a helper: the module's
                scope = None
            if scope is not None:
                scope.names[target.id] = value
                return
            self._unbind(target.id)
            self.values[target.id] = value
            if isinstance(value, _TRACKED):
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
            self._changeable(container, target)
            self.mutated = True
            try:
                container[key] = value  # type: ignore[call-overload]
            except OPERATOR_ERRORS as exc:
                raise Unknown(target, f"the assignment raises {type(exc).__name__}") from None
            check_size(container, target)
            return
        instance = (
            self._named_instance(target.value, scope) if isinstance(target, ast.Attribute) else None
        )
        if instance is not None and isinstance(target, ast.Attribute):
            self._set_attribute(instance, target, value)
            return
        if (
            scope is not None
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and is_local(target.value, scope)
            and isinstance(lookup(target.value.id, scope), FunctionRef | ClassObject)
            and not target.attr.startswith("__")
        ):
            self._set_recorded(lookup(target.value.id, scope), target, value)
            return
        if (
            scope is None
            and isinstance(target, ast.Attribute)
            and target.attr in METADATA
            and isinstance(target.value, ast.Name)
            and target.value.id in self.bound
            and isinstance(self.values.get(target.value.id, _UNSET), FunctionRef | _Unset)
            and (isinstance(value, str | Opaque) or value is None)
        ):
            return  # ``f.__doc__ = g.__doc__``, ``Error.__module__ = __name__``: metadata only
        raise Unknown(target, "an assignment to an attribute")

    def _set_recorded(self, owner: object, target: ast.Attribute, value: object) -> None:
        """``func.signature = arguments`` in a decorator (a plain function's ``__dict__``),
        ``cls.TABLE = table`` in a metaclass (not a name its methods bind: no descriptor)."""
        if isinstance(owner, FunctionRef):
            self._changeable(owner.attributes, target)
            owner.attributes[target.attr] = value
        elif isinstance(owner, ClassObject) and target.attr not in owner.meta:
            self._changeable(owner.members, target)
            owner.members[target.attr] = value
        else:
            raise Unknown(target, f"an assignment to `{target.attr}`, a method of the metaclass")
        self.mutated = True


class _Unset:
    """A name bound by code the evaluator does not follow (no value in ``values``)."""


_UNSET: Final = _Unset()

# Values changed in place: a name holding one is forgotten with the statements reaching it.
_TRACKED: Final = (*MUTABLE, Instance)


def as_load(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Name):
        return ast.copy_location(ast.Name(id=target.id, ctx=ast.Load()), target)
    if isinstance(target, ast.Subscript):
        load = ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
        return ast.copy_location(load, target)
    raise Unknown(target, "an augmented assignment to an attribute")


def _jump(stmt: ast.Pass | ast.Break | ast.Continue) -> None:
    if isinstance(stmt, ast.Break):
        raise Break
    if isinstance(stmt, ast.Continue):
        raise Continue


def _wraps_argument(decorator: ast.expr, qualify: Qualify) -> ast.expr | None:
    """``x`` of ``@functools.wraps(x)``, else ``None``."""
    if (
        isinstance(decorator, ast.Call)
        and qualify(decorator.func) == "functools.wraps"
        and len(decorator.args) == 1
        and not decorator.keywords
    ):
        return decorator.args[0]
    return None
