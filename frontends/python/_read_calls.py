"""Files a capability reads through the module's own functions it calls: a loader behind
``functools.cache``, a ``load`` class method, a helper given the path.

A call is followed into a module-level function called by its name (``_catalog()``), or a
static or class method called on its class's name (``Catalog.load()``), when that name is
not one the caller binds itself and the function is undecorated or only cached
(``functools.cache``, ``functools.lru_cache``): the module's last binding of the name is the
function. Followed ``HELPER_DEPTH`` calls deep (as the import-time helpers are), each
function once per capability (recursion ends there); a read found on the way is judged as
the capability's (``FileRead.through``), on whichever branch it is: a read some calls make
fails those calls. A read of a path built from the function's parameters is read with what
each call passes (``_load("catalog.json")``, ``_read(HERE / "catalog.json")``, or the
defaults) when that is spelt at the call.

Not followed: methods of an instance (``self.m()``, ``Catalog().m()``, ``cls.m()``),
construction (``__init__``), inherited methods, functions passed as values or imported from
other modules, calls where the caller copes with a missing file (inside a ``try`` that
catches it, or in a function that tests for a file), and calls in a nested function never
called (``data_reads.never_run``).
"""

import ast
from collections.abc import Callable, Iterable, Mapping

from svcc.frontends.python._walk import walk
from svcc.frontends.python.data_reads import Body, with_arguments
from svcc.ir.model import Evaluation, FileRead, Span

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

_CACHES = frozenset({"functools.cache", "functools.lru_cache"})
_BINDERS = frozenset({"builtins.staticmethod", "builtins.classmethod"})


class _Facts:
    """A followed function's reads, the reads of its parameters' paths, and its followed
    calls (site, target)."""

    __slots__ = ("body", "calls", "parametric", "reads")

    def __init__(self, body: Body) -> None:
        self.body = body
        self.reads: list[list[Evaluation]] = []
        self.parametric: list[ast.Call] = []
        self.calls: list[tuple[ast.Call, str]] = []


class CalledReads:
    """The reads each capability reaches through calls (one instance per module, built once
    the module's functions and names are all known; each function's facts found once)."""

    def __init__(
        self,
        functions: Mapping[str, FunctionNode],
        classes: Mapping[str, ast.ClassDef],
        origins: Mapping[str, str],
        *,
        qualify: Callable[[ast.expr], str | None],
        make_body: Callable[[FunctionNode], Body],
        span: Callable[[ast.AST], Span],
        depth: int,
    ) -> None:
        self.functions, self.classes, self.origins = functions, classes, origins
        self.qualify, self.make_body, self.span, self.depth = qualify, make_body, span, depth
        self._targets: dict[str, tuple[FunctionNode, bool]] = {}  # key -> (fn, takes cls)
        self._facts: dict[str, _Facts] = {}

    def of(self, name: str, body: Body, calls: Iterable[ast.Call]) -> tuple[FileRead, ...]:
        """The reads capability ``name`` (its ``body``, the ``calls`` its body makes)
        reaches, in the order found (breadth first), each once."""
        found: dict[tuple[int, int, str | None, str | None], FileRead] = {}
        seen = {name}
        # (the calls to follow, the body making them, the functions gone through, the
        # capability's own call that starts the chain)
        Step = tuple[list[tuple[ast.Call, str]], Body, tuple[str, ...], Span | None]
        frontier: list[Step] = [(self._followed(body, calls), body, (), None)]
        for _ in range(self.depth):
            following: list[Step] = []
            for followed, caller, chain, first in frontier:
                for site, key in followed:
                    fn, takes_cls = self._targets[key]
                    facts = self._facts_of(key, fn)
                    through, call = (*chain, key), first or self.span(site)
                    reads = [
                        [read]
                        for template in facts.parametric
                        if (
                            read := self._read(
                                with_arguments(template, facts.body, site, takes_cls, caller),
                                facts.body,
                            )
                        )
                    ]
                    if key not in seen:
                        seen.add(key)
                        reads += facts.reads
                        following.append((facts.calls, facts.body, through, call))
                    for variants in reads:
                        first_read = variants[0]
                        found.setdefault(
                            (
                                first_read.span.line,
                                first_read.span.column,
                                first_read.path,
                                first_read.literal,
                            ),
                            FileRead(reads=tuple(variants), through=through, call=call),
                        )
            frontier = following
        return tuple(found.values())

    @staticmethod
    def _read(call: ast.Call | None, body: Body) -> Evaluation | None:
        if call is None:
            return None
        reads = body.reads(call)
        return reads[0] if reads and len(reads) == 1 else None

    def _facts_of(self, key: str, fn: FunctionNode) -> _Facts:
        facts = self._facts.get(key)
        if facts is None:
            body = self.make_body(fn)
            facts = self._facts[key] = _Facts(body=body)
            calls: list[ast.Call] = []
            for stmt in fn.body:
                for node in _calls(stmt):
                    reads = body.reads(node)
                    if reads is not None:
                        facts.reads.append(reads)
                    elif (template := body.parametric(node)) is not None:
                        facts.parametric.append(template)
                    calls.append(node)
            facts.calls = self._followed(body, calls)
        return facts

    def _followed(self, body: Body, calls: Iterable[ast.Call]) -> list[tuple[ast.Call, str]]:
        """The ``calls`` of ``body`` that are followed, with their targets' keys."""
        out = []
        for call in calls:
            key = self._target(call, body)
            if key is not None and not body.handles_missing(call) and body.runs(call):
                out.append((call, key))
        return out

    def _target(self, call: ast.Call, body: Body) -> str | None:
        """The followed function ``call`` calls (``name`` or ``Class.method``), or ``None``."""
        func = call.func
        if isinstance(func, ast.Name):
            owner, attr = func.id, None
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner, attr = func.value.id, func.attr
        else:
            return None
        if owner not in (self.classes if attr else self.functions):
            return None
        if self.origins.get(owner) != f"local.{owner}" or owner in body.params:
            return None
        if body.counts().get(owner):
            return None  # the caller's own name
        key = owner if attr is None else f"{owner}.{attr}"
        if key in self._targets:
            return key
        if attr is None:
            fn: FunctionNode | None = self.functions[owner]
            takes_cls = False
        else:
            fn = next(
                (
                    item
                    for item in reversed(self.classes[owner].body)
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                    and item.name == attr
                ),
                None,
            )
            if fn is None:
                return None
            kinds = {self.qualify(d) for d in fn.decorator_list} & _BINDERS
            if not kinds:
                return None  # an instance method called on the class: not followed
            takes_cls = kinds == {"builtins.classmethod"}
        assert fn is not None
        for decorator in fn.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.qualify(target) not in _CACHES | _BINDERS:
                return None  # a decorator may replace the function
        self._targets[key] = (fn, takes_cls)
        return key


def _calls(stmt: ast.stmt) -> list[ast.Call]:
    return [node for node in walk(stmt) if type(node) is ast.Call]
