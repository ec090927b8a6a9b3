"""Calls in the import-time evaluator (see ``_evaluator``): ``re.compile`` of a known
pattern (compiled to check it), the reviewed standard-library table (``_fold_table``) and
``str``/``bytes`` methods on plain data, and the module's own functions, whose bodies run on
the known arguments ``MAX_CALL_DEPTH`` calls deep.
"""

import ast
import re
import sys
from collections.abc import Callable
from typing import Final

from svcc.frontends.python import _fold_table as table
from svcc.frontends.python._eval_expressions import Expressions, bounded_format, instance_attribute
from svcc.frontends.python._eval_state import (
    Break,
    Closure,
    Continue,
    Return,
    Scope,
    is_local,
    lookup,
)
from svcc.frontends.python._values import (
    MAX_CALL_DEPTH,
    MAX_ITERATIONS,
    MAX_STRING,
    MUTABLE,
    OPAQUE,
    ClassValue,
    FunctionRef,
    Instance,
    Partial,
    Unknown,
    check_size,
    is_plain,
    range_length,
    unordered,
    weight,
)

_INSTANCE_BUILTINS: Final = frozenset({"dir", "getattr", "setattr"})
# ``dir()`` lists of an instance of a plain class besides its classes' own names, on 3.11
# and 3.12 (``object``'s names, and what a class body adds to its namespace); 3.13 adds two.
_OBJECT_NAMES: Final = frozenset(
    {"__class__", "__delattr__", "__dir__", "__doc__", "__eq__", "__format__", "__ge__",
     "__getattribute__", "__getstate__", "__gt__", "__hash__", "__init__",
     "__init_subclass__", "__le__", "__lt__", "__ne__", "__new__", "__reduce__",
     "__reduce_ex__", "__repr__", "__setattr__", "__sizeof__", "__str__",
     "__subclasshook__", "__dict__", "__weakref__", "__module__"}
)  # fmt: skip
_CLASS_NAMES_313: Final = frozenset({"__firstlineno__", "__static_attributes__"})

# Functions whose result does not depend on the order of a set's elements.
# Methods of a set whose result (a set, or a truth) does not depend on iteration order.
_SET_ALGEBRA: Final = frozenset(
    {"union", "intersection", "difference", "symmetric_difference", "issubset",
     "issuperset", "isdisjoint", "copy"}
)  # fmt: skip
_ORDER_FREE: Final = frozenset(
    {sorted, len, min, max, sum, any, all, set, frozenset, bool}
    | {table.BUILTINS[n] for n in ("sorted", "len", "min", "max", "any", "all", "set", "frozenset")}
)


def format_fields(text: str, node: ast.AST) -> None:
    """``str.format``'s fields: each a plain name or index (no ``.attr`` or ``[key]``, which
    would read into the argument), a literal width or precision within the size limit (a
    nested field would take it from the arguments)."""
    import string  # only for a format string met at import (a slow import)

    try:
        fields = list(string.Formatter().parse(text))
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
            bounded_format(spec, node)


class Calls(Expressions):
    """The value a call returns, when the evaluator knows the callee and its arguments."""

    def _call(self, node: ast.Call, scope: Scope | None) -> object:
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
        kwargs = self._keywords(node.keywords, scope)
        if function == "re.compile":
            return self._compile(args, kwargs, node)
        if function is not None:
            return self._pure(table.FUNCTIONS[function], args, kwargs, node)
        if not isinstance(func, ast.Name):
            raise Unknown(func, "a call of a computed value")
        return self._call_name(func, args, kwargs, node, scope)

    def _call_name(
        self,
        func: ast.Name,
        args: list[object],
        kwargs: dict[str, object],
        node: ast.Call,
        scope: Scope | None,
    ) -> object:
        """``name(...)``: a function value, the module's function or class, a builtin."""
        if self._is_partial(func, scope):
            if not (args and isinstance(args[0], FunctionRef) and args[0].own):
                raise Unknown(node, "a partial of a function the evaluator does not follow")
            return Partial(args[0], args[1:], kwargs)
        if is_local(func, scope):
            value = lookup(func.id, scope)
            if isinstance(value, Partial | FunctionRef | Closure):
                return self.apply(value, args, kwargs, node)
            raise Unknown(func, "a call of a local value")
        own = self.values.get(func.id)
        if isinstance(own, Partial | FunctionRef):
            return self.apply(own, args, kwargs, node)
        if func.id in self.functions:
            return self._local_call(self.functions[func.id], args, kwargs, node)
        if isinstance(own, ClassValue) and own.instantiable:
            return self._instantiate(own, args, kwargs, node)
        if isinstance(own, ClassValue) and own.constructible and not args and not kwargs:
            return OPAQUE  # an instance made by ``object``'s own __new__ and __init__
        if func.id == "object" and func.id not in self.bound and not args and not kwargs:
            return OPAQUE  # a sentinel
        if func.id in self.bound:
            raise Unknown(func, f"a call of `{func.id}`, whose value is not known")
        if func.id in _INSTANCE_BUILTINS and args and isinstance(args[0], Instance):
            return self._instance_builtin(func.id, args[0], args[1:], kwargs, node)
        builtin = table.BUILTINS.get(func.id)
        if builtin is None:
            raise Unknown(func, f"a call of `{func.id}`, which the evaluator does not know")
        return self._pure(builtin, args, kwargs, node)

    def _instance_builtin(
        self,
        name: str,
        instance: Instance,
        rest: list[object],
        kwargs: dict[str, object],
        node: ast.Call,
    ) -> object:
        """``dir``, ``getattr`` and ``setattr`` on an instance the evaluator made: what
        Python answers for a plain class (no ``__dir__``, ``__getattr__``, ``__setattr__``
        or metaclass: see ``ClassValue.instantiable``), as ``.name`` reads and sets."""
        if kwargs or (rest and not isinstance(rest[0], str)):
            raise Unknown(node, f"a call of `{name}` the evaluator does not know")
        if name == "dir" and not rest and instance.cls.listable and 11 <= self.version.minor <= 13:
            names = instance.cls.names - {"__qualname__", "__classcell__"}
            if self.version.minor >= 13:
                names |= _CLASS_NAMES_313
            return sorted(_OBJECT_NAMES | names | instance.attributes.keys())
        target = node.args[0] if node.args else node
        attr = str(rest[0]) if rest else ""
        if name == "getattr" and len(rest) == 1:
            attribute = ast.copy_location(
                ast.Attribute(value=target, attr=attr, ctx=ast.Load()), node
            )
            return instance_attribute(instance, attribute)
        if name == "setattr" and len(rest) == 2:
            attribute = ast.copy_location(
                ast.Attribute(value=target, attr=attr, ctx=ast.Store()), node
            )
            self._set_attribute(instance, attribute, rest[1])
            return None
        raise Unknown(node, f"a call of `{name}` the evaluator does not know")

    def _set_attribute(self, instance: Instance, target: ast.Attribute, value: object) -> None:
        """``self.x = value`` on an instance the evaluator made: ``x`` is not a name its
        class binds otherwise (a property's setter would run)."""
        cls = instance.cls
        name = target.attr
        if name in cls.names and name not in cls.methods and name not in cls.attributes:
            raise Unknown(target, f"an assignment to `{name}`, which {cls.name} binds")
        instance.attributes[name] = value
        self.mutated = True
        if isinstance(value, (*MUTABLE, Instance)):
            self.shared = True  # reachable through the instance and its source

    def _is_partial(self, func: ast.Name, scope: Scope | None) -> bool:
        own = is_local(func, scope) or func.id in self.values or func.id in self.functions
        return not own and self.qualify(func) == "functools.partial"

    def apply(
        self, value: object, args: list[object], kwargs: dict[str, object], node: ast.AST
    ) -> object:
        """Call a function value: the module's own function, a closure a helper made, or a
        partial of the module's own function."""
        if isinstance(value, Partial):
            merged = {**value.kwargs, **kwargs}
            return self.apply(value.function, [*value.args, *args], merged, node)
        if isinstance(value, FunctionRef) and value.own:
            assert isinstance(value.node, ast.FunctionDef)
            return self._local_call(value.node, args, kwargs, node)
        if isinstance(value, Closure):
            return self._local_call(value.node, args, kwargs, node, value.scope)
        raise Unknown(node, "a call of a value the evaluator does not follow")

    def _stdlib_module(self, args: list[ast.expr], scope: Scope | None) -> bool:
        """``getattr(math, "sumprod", ...)``: the first argument a standard-library module
        imported by name, the second a literal string."""
        if len(args) < 2 or not isinstance(args[0], ast.Name) or is_local(args[0], scope):
            return False
        if args[0].id in self.values:
            return False
        module = self.qualify(args[0])
        literal = isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)
        return literal and module is not None and module in sys.stdlib_module_names

    def _function_name(self, func: ast.Attribute, scope: Scope | None) -> str | None:
        """The reviewed function ``func`` names (``re.escape``, ``str.maketrans``), or
        ``None`` for a method of a value."""
        head: ast.expr = func
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name) or head.id in self.values or is_local(head, scope):
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

    def _keywords(self, keywords: list[ast.keyword], scope: Scope | None) -> dict[str, object]:
        """A call's keyword arguments; ``**`` of a known dict whose keys are strings."""
        out: dict[str, object] = {}
        for keyword in keywords:
            value = self._eval(keyword.value, scope)
            if keyword.arg is not None:
                items = [(keyword.arg, value)]
            elif isinstance(value, dict) and all(isinstance(k, str) for k in value):
                items = list(value.items())
            else:
                raise Unknown(keyword.value, "a `**` of a value that is not a known dict")
            for key, item in items:
                if key in out:
                    raise Unknown(keyword.value, f"the argument `{key}` given twice")
                out[key] = item
        return out

    def _pure(
        self,
        fn: Callable[..., object],
        args: list[object],
        kwargs: dict[str, object],
        node: ast.AST,
        order_free: bool = False,
    ) -> object:
        every = [*args, *kwargs.values()]
        if not all(is_plain(a) for a in every):
            raise Unknown(node, "a call with a value that is not plain data")
        if not order_free and fn not in _ORDER_FREE and any(unordered(a) for a in every):
            raise Unknown(node, "the order of a set of strings changes between runs")
        if sum(weight(a) for a in every) > MAX_STRING * 10:
            raise Unknown(node, "arguments past the evaluator's size limit")
        result = self._apply(lambda: fn(*args, **kwargs), [], node)
        if isinstance(result, range) and range_length(result) <= MAX_ITERATIONS:
            return result
        if not is_plain(result):
            raise Unknown(node, "a call that returns something other than plain data")
        return check_size(result, node)

    def _instantiate(
        self, cls: ClassValue, args: list[object], kwargs: dict[str, object], node: ast.AST
    ) -> Instance:
        """``C(...)`` of the module's instantiable class: ``object``'s ``__new__``, then
        ``__init__``'s body on the new instance and the known arguments."""
        instance = Instance(cls)
        init = cls.methods.get("__init__")
        if init is None:
            if args or kwargs:
                raise Unknown(node, f"arguments to {cls.name}(), which has no __init__")
            return instance
        assert isinstance(init, ast.FunctionDef)
        if self._local_call(init, [instance, *args], kwargs, node) is not None:
            raise Unknown(node, f"{cls.name}.__init__ returns a value")
        return instance

    def _instance_method(
        self, receiver: Instance, node: ast.Call, func: ast.Attribute, scope: Scope | None
    ) -> object:
        """``instance.m(...)``: the class's undecorated method ``m`` (not shadowed by an
        attribute of the instance) run on the instance and the known arguments."""
        method = receiver.cls.methods.get(func.attr)
        if method is None or func.attr in receiver.attributes:
            raise Unknown(func, f"`{func.attr}` is not a method of {receiver.cls.name}")
        assert isinstance(method, ast.FunctionDef)
        args = self._elements(node.args, scope)
        kwargs = self._keywords(node.keywords, scope)
        return self._local_call(method, [receiver, *args], kwargs, node)

    def _method(self, node: ast.Call, func: ast.Attribute, scope: Scope | None) -> object:
        receiver = self._eval(func.value, scope)
        if isinstance(receiver, Instance):
            return self._instance_method(receiver, node, func, scope)
        if func.attr not in table.PURE_METHODS or not is_plain(receiver):
            raise Unknown(func, f"the method `{func.attr}` of a value the evaluator does not know")
        if isinstance(receiver, range | int | float | bool | complex | type(None)):
            raise Unknown(func, f"the method `{func.attr}`")
        args = self._elements(node.args, scope)
        kwargs = self._keywords(node.keywords, scope)
        if func.attr == "format" and isinstance(receiver, str):
            format_fields(receiver, node)
        bound = (weight(receiver) + 1) * (1 + sum(weight(a) for a in [*args, *kwargs.values()]))
        if bound > MAX_STRING * 10:
            raise Unknown(node, "a value past the evaluator's size limit")
        if isinstance(receiver, dict) and func.attr in ("keys", "values", "items") and not args:
            return list(getattr(receiver, func.attr)())
        method = getattr(receiver, func.attr, None)
        if method is None:
            raise Unknown(func, f"the method `{func.attr}`")
        free = isinstance(receiver, set | frozenset) and func.attr in _SET_ALGEBRA
        result = self._pure(method, args, kwargs, node, order_free=free)
        if isinstance(receiver, dict) and func.attr in ("keys", "values", "items"):
            return list(result)  # type: ignore[call-overload]
        return result

    def _local_call(
        self,
        fn: ast.FunctionDef,
        args: list[object],
        kwargs: dict[str, object],
        node: ast.AST,
        closure: Scope | None = None,
    ) -> object:
        """A call of the module's own function: its body evaluated on the known arguments
        (``MAX_CALL_DEPTH`` calls deep), only if it binds locals, fills containers and
        returns known values."""
        if self.depth >= MAX_CALL_DEPTH:
            raise Unknown(node, "calls nested past the evaluator's depth")
        names = self._bind_arguments(fn, args, kwargs, node)
        declared = {n for s in fn.body if isinstance(s, ast.Global) for n in s.names}
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Nonlocal | ast.Yield | ast.YieldFrom) or (
                isinstance(sub, ast.Global) and sub not in fn.body
            ):
                raise Unknown(node, f"a call of {fn.name}(), which is not a plain function")
        if declared and (self.global_writes is None or declared & names.keys()):
            raise Unknown(node, f"a call of {fn.name}(), which binds module names")
        self.depth += 1
        frame = Scope(names, closure)
        frame.globals = frozenset(declared)
        try:
            self._exec_block(fn.body, frame)
        except Return as result:
            if isinstance(result.value, Closure) and result.value.scope is frame:
                # the frame is cleared below: the closure returned keeps a copy of its names
                return Closure(result.value.node, Scope(dict(frame.names), closure))
            return result.value
        except (Break, Continue):
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
