"""Which module-level classes are service classes, read from the class body alone.

A class is how Python says "this state is set up once and then serves calls": Cog's
``BasePredictor.setup()``/``predict()``, Truss's ``Model.load()``/``predict()``, or a plain
class whose ``__init__`` loads a model. A candidate is a public class with plain bases
(none, ``object``, or a framework base below) and at least one public method; whether it
can be built and served is the readiness pass's judgement (``service_readiness``), from the
facts recorded here. A class whose constructor needs arguments is a value type, no service,
unless it says it is one (a setup method or a framework base). Nothing is imported or run.
"""

import ast
from collections.abc import Callable, Iterator
from typing import Final

from svcc.frontends.python._reach import MUTATING
from svcc.frontends.python._walk import shared_memo, walk

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

# Bases a service class may name: the plain one, and the frameworks whose shape svcc serves
# (Cog's predictor; the bundle carries a shim of ``cog`` so it never needs the package).
SERVICE_BASES: Final = frozenset(
    {"builtins.object", "cog.BasePredictor", "cog.predictor.BasePredictor", "abc.ABC"}
)
FRAMEWORK_BASES: Final = SERVICE_BASES - {"builtins.object", "abc.ABC"}
# The methods run once right after construction, first found wins: Cog's, then Truss's.
SETUP_METHODS: Final = ("setup", "load")
# Decorators that make a method no capability (an attribute, or a function of the class).
_NOT_METHODS: Final = frozenset(
    {
        "builtins.property",
        "builtins.classmethod",
        "builtins.staticmethod",
        "functools.cached_property",
        "abc.abstractmethod",
    }
)


def class_methods(cls: ast.ClassDef) -> dict[str, FunctionNode]:
    """The methods the class body defines directly (the last definition of a name wins)."""
    return {
        item.name: item
        for item in cls.body
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def setup_method(cls: ast.ClassDef) -> str | None:
    """The method called once after construction, or ``None``."""
    methods = class_methods(cls)
    return next((name for name in SETUP_METHODS if name in methods), None)


def _instance_method(fn: FunctionNode, qualify: Callable[[ast.expr], str | None]) -> bool:
    """A plain instance method: no decorator that makes it an attribute or a function of the
    class, and a first positional parameter (the instance)."""
    if any(qualify(d) in _NOT_METHODS for d in fn.decorator_list):
        return False
    if any(
        isinstance(d, ast.Attribute) and d.attr in ("setter", "getter", "deleter")
        for d in fn.decorator_list
    ):
        return False
    return bool(fn.args.posonlyargs or fn.args.args)


def service_methods(
    cls: ast.ClassDef, qualify: Callable[[ast.expr], str | None]
) -> list[FunctionNode]:
    """The class's public instance methods, each a capability (the setup method is not)."""
    setup = setup_method(cls)
    return [
        fn
        for name, fn in class_methods(cls).items()
        if not name.startswith("_") and name != setup and _instance_method(fn, qualify)
    ]


def is_candidate(
    cls: ast.ClassDef, bases: tuple[str, ...], qualify: Callable[[ast.expr], str | None]
) -> bool:
    """A public class with plain or framework bases and a public instance method."""
    if cls.name.startswith("_"):
        return False
    if any(base not in SERVICE_BASES for base in bases):
        return False
    return bool(service_methods(cls, qualify))


def meant_as_service(cls: ast.ClassDef, bases: tuple[str, ...]) -> bool:
    """The class says it is a service (a setup method, or a framework base): one whose
    constructor needs arguments is then refused (SVC-R085), not silently left out as the
    value types a module defines (``Point(x, y)``) are."""
    return setup_method(cls) is not None or any(b in FRAMEWORK_BASES for b in bases)


def required_parameters(cls: ast.ClassDef) -> tuple[str, ...]:
    """The constructor's parameters (after the instance) that have no default."""
    init = class_methods(cls).get("__init__")
    if init is None:
        return ()
    args = init.args
    positional = [*args.posonlyargs, *args.args][1:]
    first_default = len(positional) - len(args.defaults)
    required = [a.arg for a in positional[: max(first_default, 0)]]
    required += [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None]
    return tuple(required)


def construction_bodies(cls: ast.ClassDef) -> list[FunctionNode]:
    """The bodies building an instance runs: ``__init__``, then the setup method."""
    methods = class_methods(cls)
    setup = setup_method(cls)
    return [methods[name] for name in ("__init__", setup) if name is not None and name in methods]


def state_writes(fn: FunctionNode) -> Iterator[tuple[str, ast.AST]]:
    """``(attribute, node)`` for each assignment to an attribute of the instance (the first
    parameter) in the method's body, nested functions left out; in no set order (the
    caller sorts them by position)."""
    first = [*fn.args.posonlyargs, *fn.args.args]
    if not first:
        return
    me = first[0].arg
    for node in _own_nodes(fn):
        kind = type(node)  # exact types: the parser makes no subclasses
        if kind is ast.Assign:
            targets: list[ast.expr] = node.targets  # type: ignore[attr-defined]
        elif kind is ast.AugAssign or kind is ast.AnnAssign:
            targets = [node.target]  # type: ignore[attr-defined]
        else:
            continue
        for target in targets:
            for item in target.elts if isinstance(target, ast.Tuple | ast.List) else [target]:
                if (
                    isinstance(item, ast.Attribute)
                    and isinstance(item.value, ast.Name)
                    and item.value.id == me
                ):
                    yield item.attr, item


def changes_instance(fn: FunctionNode) -> bool:
    """Whether the method changes its instance: an assignment or ``del`` whose target is the
    instance or reaches into it (``self.n += 1``, ``self.seen[k] = v``), or a mutating
    method of a value it holds (``self.history.append(x)``). Such a call changes what the
    next call sees: its tool is neither read-only nor idempotent (nested functions left
    out, as in :func:`state_writes`)."""
    first = [*fn.args.posonlyargs, *fn.args.args]
    if not first:
        return False
    me = first[0].arg

    def rooted(node: ast.expr) -> bool:
        while isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        return isinstance(node, ast.Name) and node.id == me

    for node in _own_nodes(fn):
        kind = type(node)  # exact types: the parser makes no subclasses
        targets: list[ast.expr] = []
        if kind is ast.Assign or kind is ast.Delete:
            targets = node.targets  # type: ignore[attr-defined]
        elif kind is ast.AugAssign or kind is ast.AnnAssign:
            targets = [node.target]  # type: ignore[attr-defined]
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if (
                type(func) is ast.Attribute
                and func.attr in MUTATING
                and isinstance(func.value, ast.Attribute | ast.Subscript)
                and rooted(func.value)
            ):
                return True
        for target in targets:
            items = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
            if any(isinstance(i, ast.Attribute | ast.Subscript) and rooted(i) for i in items):
                return True
    return False


def _own_nodes(fn: FunctionNode) -> list[ast.AST]:
    """The nodes of ``fn``'s body outside its nested scopes (a nested function's decorators
    and defaults left out with it), in no set order: from the body's walks, which the other
    readers of the body share (``shared_walks``), so neither reader above walks it again;
    the same list for both within one lowering."""
    memo = shared_memo("own_nodes")
    if memo is not None:
        found = memo.get(fn)
        if found is not None:
            return found  # type: ignore[no-any-return]
    nodes: list[ast.AST] = []
    for stmt in fn.body:
        nodes += walk(stmt)
    scopes = [node for node in nodes if type(node) in _SCOPES]
    if scopes:  # rare: a method defining a function, a lambda or a class
        inner = {id(node) for scope in scopes for node in walk(scope)}
        nodes = [node for node in nodes if id(node) not in inner]
    if memo is not None:
        memo[fn] = nodes
    return nodes


# What a method's body holds but does not run on a call: another scope.
_SCOPES: Final = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef})
