"""The import-time evaluator's state and scopes (see ``_evaluator``): the names a module,
a function or a comprehension holds, the control-flow signals of the bodies it runs, and the
step counts that bound it. The evaluator is one class in layers, one module each:
``_eval_expressions`` (values of expressions), ``_eval_calls`` (calls: the reviewed table,
methods of values, the module's own functions), ``_eval_statements`` (the statements of a
body) and ``_evaluator`` (the module's top-level statements and what the lowerer asks).
"""

import ast
import sys
from collections.abc import Callable, Mapping
from typing import Final

from svcc.frontends.python import _fold_table as table
from svcc.frontends.python._sibling_context import current as current_siblings
from svcc.frontends.python._values import (
    MAX_MODULE_STEPS,
    MAX_STEPS,
    FunctionRef,
    Raises,
    TargetVersion,
    Unknown,
    plain_data,
)

Position = tuple[int, int]
Qualify = Callable[[ast.expr], str | None]

# Attributes of a function or class that describe it and run nothing when read or set.
METADATA: Final = frozenset({"__doc__", "__name__", "__qualname__", "__module__"})


OPERATOR_ERRORS: Final = (
    TypeError, ValueError, ArithmeticError, IndexError, KeyError, AttributeError, LookupError,
    RecursionError, MemoryError,
)  # fmt: skip


class Break(Exception):
    pass


class Continue(Exception):
    pass


class Return(Exception):
    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value


def position(node: ast.AST) -> Position:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def call_key(node: ast.AST) -> tuple[int, int, int, int]:
    return (
        getattr(node, "lineno", 0),
        getattr(node, "col_offset", 0),
        getattr(node, "end_lineno", 0) or 0,
        getattr(node, "end_col_offset", 0) or 0,
    )


def stdlib_module(name: str) -> bool:
    """Whether the target's standard library provides the module ``name`` (on Linux: not
    the Windows-only modules ``sys.stdlib_module_names`` lists for every platform)."""
    head = name.split(".", 1)[0]
    return head in sys.stdlib_module_names and head not in table.WINDOWS_MODULES


class Scope:
    """A function's, comprehension's or class body's own names over the module's."""

    def __init__(
        self, names: dict[str, object], parent: "Scope | None" = None, *, is_class: bool = False
    ) -> None:
        self.names = names
        self.parent = parent
        self.is_class = is_class  # a class body: the scopes nested in it do not see its names
        # Names a function declares ``global``: its assignments to them bind the module's.
        self.globals: frozenset[str] = frozenset()


def enclosing(scope: Scope | None) -> Scope | None:
    """The scope a comprehension made in ``scope`` sees: a class body's names are not."""
    while scope is not None and scope.is_class:
        scope = scope.parent
    return scope


class Made:
    """What a comprehension has made so far, and its own scope."""

    def __init__(
        self,
        results: list[object],
        pairs: dict[object, object],
        local: Scope,
        outer: Scope | None,
    ) -> None:
        self.results = results
        self.pairs = pairs
        self.local = local
        self.outer = outer
        self.count = 0


class Closure:
    """A function defined inside a helper the evaluator runs (called in its scope)."""

    def __init__(self, node: ast.FunctionDef, scope: Scope) -> None:
        self.node = node
        self.scope = scope


def has_defaults(fn: ast.FunctionDef) -> bool:
    return bool(fn.args.defaults) or any(d is not None for d in fn.args.kw_defaults)


def lookup(name: str, scope: Scope | None) -> object | None:
    current = scope
    while current is not None:
        if name in current.names:
            return current.names[name]
        current = current.parent
    return None


def is_local(node: ast.Name, scope: Scope | None) -> bool:
    current = scope
    while current is not None:
        if node.id in current.names:
            return True
        current = current.parent
    return False


TYPE_PARTS: Final = (ast.Name, ast.Attribute, ast.Constant, ast.Subscript, ast.Tuple, ast.BinOp)


def defaults_run_code(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether defining ``fn`` evaluates more than literal defaults and annotations made of
    names, constants, subscripts and ``|`` (a type expression: looked up, not called)."""
    spec = fn.args
    if any(not isinstance(d, ast.Constant) for d in [*spec.defaults, *spec.kw_defaults] if d):
        return True
    every = [*spec.posonlyargs, *spec.args, *spec.kwonlyargs, spec.vararg, spec.kwarg]
    annotations = [fn.returns, *(a.annotation for a in every if a is not None)]
    return any(
        not isinstance(node, (*TYPE_PARTS, ast.expr_context, ast.BitOr))
        for a in annotations
        if a is not None
        for node in ast.walk(a)
    )


class EvaluatorState:
    """What the evaluator knows of the module so far, and the step counts that bound it.
    The layers above call one another through the three methods declared here."""

    def __init__(
        self,
        qualify: Qualify,
        python_version: tuple[int, int],
        module: str = "",
        imports: "Mapping[str, str] | None" = None,
    ) -> None:
        self.qualify = qualify
        # What ``qualify`` resolves imported names by (the module's imports so far), when
        # the caller has it: a module that imports nothing of ``re`` calls no ``re.`` function.
        self.imports = imports
        self.version = TargetVersion(python_version[0], python_version[1])
        # The module's dotted name, and the repository's other modules (see
        # ``_sibling_context``): their values, read at import, copied in.
        self.module = module
        self.siblings = current_siblings() if module else None
        self.foreign: set[int] = set()  # containers copied from another module: never changed
        self._foreign_kept: list[object] = []  # (kept alive: their ids stay theirs)
        self.class_nodes: dict[str, ast.ClassDef] = {}  # classes bound once, still bound
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
        # Module names a function called by the statement being run bound through
        # ``global`` (allowed only there: forgotten when the statement is not evaluated).
        self.global_writes: set[str] | None = None
        self.mutated = False
        self.yields: list[list[object]] = []  # the values of the generators being run
        self.metaclass_runs: set[Position] = set()  # ``metaclass=M`` keywords evaluated
        # an identity decorator (by position) to the function it returned, with what it
        # recorded on it (``func.signature = ...``): the class its metaclass makes reads it
        self.applied: dict[Position, FunctionRef] = {}
        self.running: list[ast.FunctionDef] = []  # the functions being run, innermost last
        self.consumed: set[int] = set()  # generator calls a ``for`` statement iterates
        # the ids of the containers the module's values hold, once it has finished running
        # (then fixed: a call of its functions changes none of them, nor rebinds a name)
        self.finished: frozenset[int] | None = None
        # What the lowerer records (keyed by position: a long module is parsed twice).
        self.folded: set[Position] = set()
        self.decided: dict[Position, int] = {}  # an if: 0 body, 1 orelse; a try: see live
        # A ``try`` decided to a handler: how many statements of its body ran before the
        # one that fails on the target (``_target_platform``).
        self.ran_before: dict[Position, int] = {}
        self.patterns: dict[tuple[int, int, int, int], str] = {}
        self.identity_decorators: set[Position] = set()
        self.wrapping_decorators: set[Position] = set()
        self.wrapper_calls: dict[Position, tuple[str, ...]] = {}
        self.plain_bases: set[Position] = set()
        # ``try: from fw import tool`` / ``except ImportError: def tool(f): return f``: the
        # name, and each decorator naming it, to the ``try`` (identity when ``fw`` is missing).
        self.fallback_identities: dict[str, Position] = {}
        # ``REGEX_AVAILABLE``: a name an undecided ``try`` of imports binds to one constant
        # where its body imported and another in its handler (its position, the body's value)
        self.fallback_flags: dict[str, tuple[Position, bool]] = {}
        # an undecided ``if FLAG:`` of such a name: the ``try``, the branch run when it imported
        self.imported_branch: dict[Position, tuple[Position, int]] = {}
        self.fallback_decorators: dict[Position, Position] = {}
        # Per statement not evaluated: the sub-expression that stopped it and why (its
        # position only: a node would keep the first reading's syntax tree alive).
        self.unknown_at: dict[Position, tuple[ast.expr, str]] = {}
        # top-level statements that raise for certain at import (see ``Raises``)
        self.raises_at: dict[Position, tuple[ast.expr, str]] = {}

    def _unbind(self, name: str) -> None:
        self.bound.add(name)
        self.values.pop(name, None)
        self.mutable.discard(name)
        self.imported.pop(name, None)
        self.functions.pop(name, None)
        self.identities.discard(name)
        self.wrappers.discard(name)
        self.fallback_identities.pop(name, None)
        self.fallback_flags.pop(name, None)
        self.class_nodes.pop(name, None)

    def _foreign_value(self, value: object) -> object:
        """A value of another module, as this one reads it: a copy whose containers this
        module may not change (changing them would change the other module's, which every
        importer shares; the evaluator does not follow that)."""
        if isinstance(value, FunctionRef):
            return value  # another module's function: passed on, never called here
        import copy  # on first use: with ``weakref``, a hundredth of a cold ``inspect FILE``

        copied = copy.deepcopy(value)
        stack = [copied]
        while stack:
            item = stack.pop()
            if isinstance(item, list | dict | set):
                self.foreign.add(id(item))
            if isinstance(item, list | tuple | set | frozenset):
                stack.extend(item)
            elif isinstance(item, dict):
                stack.extend(item.values())
        self._foreign_kept.append(copied)
        return copied

    def _changeable(self, container: object, node: ast.AST) -> None:
        if id(container) in self.foreign:
            raise Unknown(node, "a change to another module's value")

    def _step(self, node: ast.AST) -> None:
        self.steps += 1
        self.module_steps += 1
        if self.steps > MAX_STEPS or self.module_steps > MAX_MODULE_STEPS:
            raise Unknown(node, "past the evaluator's step limit")

    def _apply(self, fn: Callable[..., object], args: list[object], node: ast.AST) -> object:
        try:
            return fn(*args)
        except OPERATOR_ERRORS as exc:
            if all(plain_data(a) for a in args):
                first = str(exc).splitlines()[0][:120] if str(exc) else ""
                why = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
                raise Raises(node, f"it raises {why}", definite=self.depth == 0) from None
            raise Unknown(node, f"evaluating it raises {type(exc).__name__}") from None

    # -- defined by the layers above (``_eval_calls``, ``_eval_statements``) ------------------
    def _call(self, node: ast.Call, scope: Scope | None) -> object:
        raise NotImplementedError

    def _assign(
        self, target: ast.expr, value: object, scope: Scope | None, source: ast.expr | None
    ) -> None:
        raise NotImplementedError

    def _exec_block(self, body: list[ast.stmt], scope: Scope | None) -> None:
        raise NotImplementedError
