"""Calls in the import-time evaluator (see ``_evaluator``): ``re.compile`` of a known
pattern (compiled to check it), the reviewed standard-library table (``_fold_table``) and
``str``/``bytes`` methods on plain data, and the module's own functions, whose bodies run on
the known arguments ``MAX_CALL_DEPTH`` calls deep.
"""

import ast
import re
import sys
from collections.abc import Callable, Iterable
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
    ClassObject,
    ClassValue,
    FunctionRef,
    Generated,
    Instance,
    Partial,
    Unknown,
    check_size,
    is_plain,
    range_length,
    unordered,
    weight,
)
from svcc.frontends.python._walk import walk

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
        if function == "inspect.getmembers":
            return self._getmembers(node, scope)
        args = self._elements(node.args, scope)
        kwargs = self._keywords(node.keywords, scope)
        if (
            isinstance(func, ast.Name)
            and func.id in ("getattr", "hasattr")
            and func.id not in self.bound
            and not is_local(func, scope)
            and args
            and isinstance(args[0], FunctionRef | ClassObject)
        ):
            return _recorded(func.id, args, kwargs, node)
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
        if func.id in self.imported and func.id not in self.values:
            imported = self._name(func, scope)  # another module's function (or unknown)
            if isinstance(imported, FunctionRef):
                return self.apply(imported, args, kwargs, node)
            raise Unknown(func, f"a call of `{func.id}`, whose value is not known")
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
        self._changeable(instance.attributes, target)
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
        owner = value.owner if isinstance(value, FunctionRef) else None
        if isinstance(value, FunctionRef) and isinstance(owner, Calls) and owner is not self:
            return owner._foreign_call(value, args, kwargs, node, self)  # in its namespace
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
        known = name in table.FUNCTIONS or name in ("re.compile", "inspect.getmembers")
        return name if known else None

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
        if func.attr == "__init__" and self._metaclass_super(func.value, scope):
            self._elements(node.args, scope)
            if node.keywords or len(node.args) not in (1, 3):
                raise Unknown(node, "type.__init__ takes 1 or 3 arguments (TypeError)")
            return None  # ``type.__init__``: it checks its arguments' count, nothing else
        receiver = self._eval(func.value, scope)
        if isinstance(receiver, Instance):
            return self._instance_method(receiver, node, func, scope)
        if isinstance(receiver, ClassObject):
            return self._metaclass_method(receiver, node, func, scope)
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

    def finish(self) -> None:
        """The module has finished running: what its values hold is fixed from now on."""
        self.finished = frozenset(_containers(self.values.values()))

    def _read_values(self, fn: ast.FunctionDef) -> list[object]:
        """The module's values ``fn`` reads by name; all of them when it calls anything
        but a builtin by name (a function or method it calls may read any)."""
        loads: set[str] = set()
        for node in walk(fn):
            if isinstance(node, ast.Name):
                loads.add(node.id)
            elif isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Name)
                and node.func.id in table.BUILTINS
                and node.func.id not in self.bound
            ):
                return list(self.values.values())
        return [self.values[n] for n in loads if n in self.values]

    def _metaclass_super(self, node: ast.expr, scope: Scope | None) -> bool:
        """``super(M, cls)`` or ``super()`` in a metaclass method run on a class it makes
        (the metaclass's base is ``type``, checked where the run starts)."""
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "super"
            and node.func.id not in self.bound
            and not node.keywords
            and scope is not None
        ):
            return False
        made = [v for v in scope.names.values() if isinstance(v, ClassObject)]
        if not made or not self.running:
            return False
        if not any(self.running[-1] is m for m in made[0].meta.values()):
            return False  # only in a method of the metaclass (``super()`` finds it there)
        if not node.args:
            return True
        first, second = [*node.args, node.func, node.func][:2]
        return (
            len(node.args) == 2
            and isinstance(first, ast.Name)
            and first.id == made[0].meta_name
            and not is_local(first, scope)
            and first.id not in self.values
            and isinstance(second, ast.Name)
            and lookup(second.id, scope) is made[0]
        )

    def _metaclass_method(
        self, receiver: ClassObject, node: ast.Call, func: ast.Attribute, scope: Scope | None
    ) -> object:
        """``cls.m(...)`` in a metaclass: the metaclass's own method ``m``, when the class
        being made has no member of that name (it would be found first)."""
        method = receiver.meta.get(func.attr)
        if receiver.owner is not self:
            raise Unknown(func, "a method of another module's metaclass")
        if method is None or func.attr in receiver.members:
            raise Unknown(func, f"`{func.attr}` is not a method of the metaclass")
        assert isinstance(method, ast.FunctionDef)
        args = self._elements(node.args, scope)
        kwargs = self._keywords(node.keywords, scope)
        return self._local_call(method, [receiver, *args], kwargs, node)

    def _getmembers(self, node: ast.Call, scope: Scope | None) -> object:
        """``inspect.getmembers(cls, predicate=inspect.isfunction)`` of a class its
        metaclass is making: its functions, sorted by name (the class's other members are
        literals, and what it inherits from ``object`` is no Python function)."""
        predicate = [k for k in node.keywords if k.arg == "predicate"]
        if (
            len(node.args) != 1
            or len(node.keywords) != 1
            or len(predicate) != 1
            or self.qualify(predicate[0].value) != "inspect.isfunction"
        ):
            raise Unknown(node, "a call of inspect.getmembers the evaluator does not follow")
        made = self._eval(node.args[0], scope)
        if not isinstance(made, ClassObject):
            raise Unknown(
                node.args[0], "inspect.getmembers of a value that is not a class made here"
            )
        return [(k, v) for k, v in sorted(made.members.items()) if isinstance(v, FunctionRef)]

    def _foreign_call(
        self,
        function: FunctionRef,
        args: list[object],
        kwargs: dict[str, object],
        node: ast.AST,
        caller: "Calls",
    ) -> object:
        """A call of this module's function from another module: run here, on this module's
        values as they are when it has finished running; its own containers may not be
        changed, nor returned to be changed."""
        assert isinstance(function.node, ast.FunctionDef)
        _crossing([*args, *kwargs.values()], node)
        owned = self.finished
        if owned is None:
            owned = frozenset(_containers(self.values.values()))
        handed = _containers([*args, *kwargs.values()])  # the caller's copies stay read-only
        added = (owned | (caller.foreign & handed)) - self.foreign
        self.foreign |= added
        consumed = caller.consumed - self.consumed  # the caller's ``for`` over this call
        self.consumed |= consumed
        saved = (self.depth, self.steps, self.module_steps, self.mutated, self.shared)
        self.depth, self.steps = caller.depth, caller.steps  # one bound for the whole call
        self.mutated = self.shared = False
        try:
            result = self._local_call(function.node, args, kwargs, node)
        finally:
            self.foreign -= added
            self.consumed -= consumed
            caller.module_steps += self.module_steps - saved[2]
            caller.steps = self.steps
            caller.mutated |= self.mutated  # the caller's containers it was handed
            caller.shared |= self.shared
            self.depth, self.steps, self.module_steps, self.mutated, self.shared = saved
        if _containers([result]) & owned:
            raise Unknown(node, "a call returning another module's container")
        _crossing([result], node)
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
        generator = _generator(fn)
        if generator is None:
            raise Unknown(node, f"a call of {fn.name}(), which is not a plain function")
        if declared and (generator or self.global_writes is None or declared & names.keys()):
            raise Unknown(node, f"a call of {fn.name}(), which binds module names")
        if generator and id(node) not in self.consumed:
            raise Unknown(node, f"a generator {fn.name}() not iterated by a `for` at once")
        reach: frozenset[int] = frozenset()
        if generator:  # what it may read while the loop runs
            seen = [*args, *kwargs.values(), *self._read_values(fn)]
            current = closure
            while current is not None:
                seen.extend(current.names.values())
                current = current.parent
            reach = frozenset(_containers(seen))
        self.depth += 1
        self.running.append(fn)
        frame = Scope(names, closure)
        frame.globals = frozenset(declared)
        returned: object = None
        if generator:
            self.yields.append([])
        try:
            self._exec_block(fn.body, frame)
        except Return as result:
            if generator and result.value is not None:
                raise Unknown(
                    node, f"a call of {fn.name}(), a generator returning a value"
                ) from None
            returned = result.value
        except (Break, Continue):
            raise Unknown(node, f"a call of {fn.name}()") from None
        finally:
            self.depth -= 1
            self.running.pop()
            made = self.yields.pop() if generator else None
            _release(frame, returned)
        return Generated(tuple(made), reach) if made is not None else returned

    def _bind_arguments(
        self, fn: ast.FunctionDef, args: list[object], kwargs: dict[str, object], node: ast.AST
    ) -> dict[str, object]:
        spec = fn.args
        positional = [a.arg for a in [*spec.posonlyargs, *spec.args]]
        keywords = [a.arg for a in [*spec.args, *spec.kwonlyargs]]  # passable by keyword
        if len(args) > len(positional) and spec.vararg is None:
            raise Unknown(node, f"a call of {fn.name}() with too many arguments")
        names: dict[str, object] = dict(zip(positional, args, strict=False))
        if spec.vararg is not None:  # ``*arguments``: the extra positional arguments
            names[spec.vararg.arg] = tuple(args[len(positional) :])
        extra: dict[str, object] = {}
        for key, value in kwargs.items():
            if key in keywords and key not in names:
                names[key] = value
            elif spec.kwarg is not None and key not in names:
                extra[key] = value  # ``**options`` (a position-only name too, as Python does)
            else:
                raise Unknown(node, f"a call of {fn.name}() with an unexpected argument")
        if spec.kwarg is not None:
            names[spec.kwarg.arg] = extra
        defaults = dict(
            zip(positional[len(positional) - len(spec.defaults) :], spec.defaults, strict=True)
        )
        for kw, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
            if default is not None:
                defaults[kw.arg] = default
        for param in [*positional, *(k.arg for k in spec.kwonlyargs)]:
            if param not in names:
                if param not in defaults:
                    raise Unknown(node, f"a call of {fn.name}() missing an argument")
                names[param] = self._eval(defaults[param], None)
        return names


def _release(frame: Scope, returned: object) -> None:
    """A nested function holds its frame: the frame is cleared, so reference counting frees
    both (lowering pauses the cyclic collector; see ``_collection``). A closure the call
    returns (a decorator factory's ``_record(func)``) keeps its frame, less the frame's
    own closures (the cycle: each is opaque there, so using one from it is unknown)."""
    if isinstance(returned, Closure) and returned.scope is frame:
        for name, value in frame.names.items():
            if isinstance(value, Closure):
                frame.names[name] = OPAQUE
        return
    frame.names.clear()


def _generator(fn: ast.FunctionDef) -> bool | None:
    """Whether ``fn`` is a generator whose every ``yield`` is a statement of its own body
    (its values can be made eagerly: the caller only iterates them), ``False`` for a plain
    function, ``None`` for one the evaluator does not run (``global`` in a nested scope,
    ``yield from``, a
    ``yield`` used as a value or inside a nested scope)."""
    statements = {
        id(stmt.value)
        for stmt in walk(fn)
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield)
    }
    nested = {
        id(sub)
        for inner in walk(fn)
        if inner is not fn
        and isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for sub in walk(inner)
    }
    found = False
    for sub in walk(fn):
        if isinstance(sub, ast.Nonlocal | ast.YieldFrom | ast.Await) or (
            isinstance(sub, ast.Global) and sub not in fn.body  # a nested scope's
        ):
            return None
        if isinstance(sub, ast.Yield):
            if id(sub) not in statements or id(sub) in nested:
                return None
            found = True
    return found


def _containers(values: Iterable[object]) -> set[int]:
    """The ids of the lists, dicts and sets reachable from ``values`` (bounded by the sizes
    the evaluator allows)."""
    found: set[int] = set()
    seen: set[int] = set()
    stack = list(values)
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue  # a value reached twice, or a cycle
        seen.add(id(item))
        if isinstance(item, list | dict | set):
            found.add(id(item))
        if isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, ClassValue):
            stack.extend(item.attributes.values())
        elif isinstance(item, Instance | ClassObject | FunctionRef):
            # what ``x.name = ...`` changes: its attributes (``_set_attribute``)
            attributes = item.members if isinstance(item, ClassObject) else item.attributes
            found.add(id(attributes))
            stack.extend(attributes.values())
    return found


def _recorded(name: str, args: list[object], kwargs: dict[str, object], node: ast.AST) -> object:
    """``getattr(f, "signature", None)`` / ``hasattr(f, "x")`` of a function (what a
    decorator recorded) or of a class its metaclass is making (its members)."""
    if kwargs or not 2 <= len(args) <= (3 if name == "getattr" else 2):
        raise Unknown(node, f"a call of {name} the evaluator does not follow")
    owner, attribute = args[0], args[1]
    if not isinstance(attribute, str) or attribute.startswith("__"):
        raise Unknown(node, f"{name} of a name the evaluator does not know")
    if isinstance(owner, FunctionRef) and owner.tracked:
        found = owner.attributes
    elif isinstance(owner, ClassObject):
        if attribute in owner.meta or hasattr(type, attribute):
            raise Unknown(node, f"{name} of an attribute the metaclass gives")
        found = owner.members
    else:
        raise Unknown(node, f"{name} of a value the evaluator does not know")
    if name == "hasattr":
        return attribute in found
    if attribute in found:
        return found[attribute]
    if len(args) == 3:
        return args[2]
    raise Unknown(node, "getattr of a name the value does not have (AttributeError)")


def _crossing(values: list[object], node: ast.AST) -> None:
    """What may pass between two modules' evaluators: data, functions and classes being
    made (each runs in its own module's namespace: ``owner``), not an instance, closure or
    partial, whose code the receiving evaluator would run in the wrong namespace."""
    stack = list(values)
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, FunctionRef):
            if item.owner is None:
                raise Unknown(node, "a function passed between modules")
            stack.extend(item.attributes.values())
        elif isinstance(item, ClassObject):
            stack.extend(item.members.values())
        elif isinstance(item, Generated):
            stack.extend(item.values)
        elif isinstance(item, Instance | Closure | Partial | ClassValue):
            raise Unknown(node, "a value passed between modules the evaluator does not follow")
