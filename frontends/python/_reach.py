"""What a capability calls when it runs: every callee's origin, through the module's own
functions, for the effect summary that tool annotations rest on (``Capability.reach``).

The readiness pass turns these facts into hints (``compiler/passes/tool_effects.py``); this
module only reads the source. One entry per distinct callee origin (see ``_effects``:
``re.compile``, ``pathlib.Path().write_text``, ``local.helper``), sorted, so the fact is
the same whatever order the body spells its calls in:

- a parameter is ``?`` when its declared type is plain JSON (the value came from a request
  body), ``?object`` otherwise (an array, a data frame, a model: their methods are not JSON
  methods); a local name bound exactly once by ``name = value`` (or ``with value as name``)
  takes the value's origin;
  any other local name (a loop target, a name bound twice) is ``?``; a name imported inside
  the function is the imported module;
- ``open`` calls (and ``Path.open``) carry their mode (``builtins.open[r]``, ``[w]``, ``[?]``
  for a mode the source does not spell);
- a call of the module's own function (undecorated, or cached with ``functools``) is
  followed ``depth`` calls deep and replaced by what that function calls; one that is not
  followed stays ``local.NAME`` (unknown to the judge);
- a function given to a call, which may call it, is ``&origin`` (``map(os.remove, paths)``
  gives ``&os.remove``); the module's own function so given is followed as a call;
- a function defined in the body (or a lambda bound once to a name) is ``<nested>``: its
  calls are the capability's own;
- markers: ``<global>`` (a ``global``/``nonlocal`` statement), ``<state>`` (an assignment
  into, or a mutating method of, a module-level value), ``<cache>`` (a followed function
  cached with ``functools``), ``<depth>`` (a call of the module's own function past the
  depth).
"""

import ast
from collections import ChainMap
from collections.abc import Callable, Mapping
from typing import Final, cast

from svcc.frontends.python._effects import origin
from svcc.frontends.python._walk import walk
from svcc.frontends.python.data_reads import binding_counts

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
Qualify = Callable[[ast.expr], str | None]

# The origin of a function defined in the capability's body (or a lambda bound to a name):
# its body is part of the capability's, so calling it adds nothing.
NESTED = "<nested>"
_CACHES = frozenset({"functools.cache", "functools.lru_cache", "functools.lru_cache()"})
_OPENERS = frozenset({"builtins.open", "io.open"})
# Methods that change a builtin container in place: on a module-level value, server state.
MUTATING = frozenset(
    {
        "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update",
        "setdefault", "add", "discard", "sort", "reverse", "appendleft", "extendleft",
        "popleft", "rotate", "difference_update", "intersection_update",
        "symmetric_difference_update", "__setitem__", "__delitem__",
    }
)  # fmt: skip


class Reach:
    """The reach of each capability of one module (each followed function read once)."""

    def __init__(
        self,
        functions: Mapping[str, FunctionNode],
        origins: Mapping[str, str],
        qualify: Qualify,
        depth: int,
    ) -> None:
        self.functions, self.origins, self.qualify, self.depth = (
            functions,
            origins,
            qualify,
            depth,
        )
        self._own: dict[str, tuple[set[str], set[str]]] = {}

    def of(self, fn: FunctionNode, object_params: frozenset[str]) -> tuple[str, ...]:
        """``fn``'s reach; ``object_params`` are its parameters whose type is not plain JSON."""
        found, local = self._facts(fn, object_params)
        seen: set[str] = {fn.name}
        frontier = sorted(local)
        for _ in range(self.depth):
            following: set[str] = set()
            for name in frontier:
                if name in seen:
                    continue
                seen.add(name)
                target = self.functions[name]
                if self._cached(target):
                    found.add("<cache>")
                more, calls = self._facts(target, frozenset())
                found |= more
                following |= calls
            frontier = sorted(following - seen)
        if frontier:
            found.add("<depth>")
        return tuple(sorted(found))

    def _followable(self, name: str) -> bool:
        fn = self.functions.get(name)
        if fn is None or self.origins.get(name) != f"local.{name}":
            return False
        return all(self._decorator(d) in _CACHES for d in fn.decorator_list)

    def _cached(self, fn: FunctionNode) -> bool:
        return any(self._decorator(d) in _CACHES for d in fn.decorator_list)

    def _decorator(self, node: ast.expr) -> str:
        if isinstance(node, ast.Call):
            return f"{self.qualify(node.func) or '?'}()"
        return self.qualify(node) or "?"

    def _facts(self, fn: FunctionNode, object_params: frozenset[str]) -> tuple[set[str], set[str]]:
        """The origins ``fn``'s own body calls (markers included) and the module functions
        it calls that are followed."""
        key = f"{fn.name}@{fn.lineno}"
        if key in self._own and not object_params:
            known, followed = self._own[key]
            return set(known), set(followed)
        # One pass over the body's nodes sorts out the few either step reads (the binders,
        # then what is judged), each list in the walk's order.
        binders: list[ast.AST] = []
        judged: list[ast.AST] = []
        binder_kinds, judged_kinds = _BINDERS, _JUDGED
        for stmt in fn.body:
            for node in walk(stmt):
                kind = type(node)
                if kind in judged_kinds:
                    judged.append(node)
                if kind in binder_kinds:  # an assignment is both
                    binders.append(node)
        names = self._local_origins(fn, object_params, binders)
        locals_ = set(names)
        view = {**self.origins, **names}  # once per body, not once per call
        found: set[str] = set()
        calls: set[str] = set()
        for node in judged:
            kind = type(node)
            if kind is ast.Call:
                self._call(node, view, locals_, found, calls)  # type: ignore[arg-type]
                # what a call is given: a function there may be called (each argument
                # is the walk's too, read here rather than in a second pass: only sets
                # are filled, so the order is free)
                for given in _arguments(node):  # type: ignore[arg-type]
                    if type(given) is ast.Name or type(given) is ast.Attribute:
                        self._reference(given, locals_, found, calls)
            elif kind is ast.Global or kind is ast.Nonlocal:
                found.add("<global>")
            elif kind is ast.Assign or kind is ast.AugAssign or kind is ast.Delete:
                targets = (
                    node.targets  # type: ignore[attr-defined]
                    if kind is not ast.AugAssign
                    else [node.target]  # type: ignore[attr-defined]
                )
                if any(self._module_value(t, locals_, nested=True) for t in targets):
                    found.add("<state>")
        if not object_params:
            self._own[key] = (set(found), set(calls))
        return found, calls

    def _reference(
        self, node: ast.Name | ast.Attribute, locals_: set[str], found: set[str], calls: set[str]
    ) -> None:
        """A name given to a call (``map(os.remove, paths)``, ``key=_score``): a function
        there may be called by what it is given to. Recorded as ``&origin``; the module's own
        function followed like a call."""
        if not isinstance(node.ctx, ast.Load):
            return
        if isinstance(node, ast.Name):
            if node.id in locals_:
                return
            own = self.origins.get(node.id, "")
            if own == f"local.{node.id}" and node.id in self.functions:
                if self._followable(node.id):
                    calls.add(node.id)
                else:
                    found.add(f"&{own}")
                return
        qualified = self.qualify(node)
        if qualified is not None and not qualified.startswith(("local.", "typeddict.", "alias.")):
            found.add(f"&{qualified}")

    def _call(
        self,
        call: ast.Call,
        names: Mapping[str, str],
        locals_: set[str],
        found: set[str],
        calls: set[str],
    ) -> None:
        func = call.func
        if isinstance(func, ast.Name) and func.id not in locals_ and self._followable(func.id):
            calls.add(func.id)
            return
        callee = origin(func, self.qualify, names)
        if callee in _OPENERS:
            callee = f"{callee}[{_mode(call, 1)}]"
        elif callee.startswith("pathlib.") and callee.endswith(".open"):
            callee = f"{callee}[{_mode(call, 0)}]"
        found.add(callee)
        if (
            isinstance(func, ast.Attribute)
            and func.attr in MUTATING
            and self._module_value(func.value, locals_, nested=False)
        ):
            found.add("<state>")

    def _module_value(self, node: ast.expr, locals_: set[str], *, nested: bool) -> bool:
        """Whether ``node`` is (``nested``: is inside) a value bound at module level: not a
        local name, not an imported module."""
        if nested and isinstance(node, ast.Name):
            return False  # rebinding a local name
        while isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        if not isinstance(node, ast.Name) or node.id in locals_:
            return False
        return node.id in self.origins and not self.origins[node.id].startswith("local.")

    def _local_origins(
        self, fn: FunctionNode, object_params: frozenset[str], binders: list[ast.AST]
    ) -> dict[str, str]:
        """Each local name's origin; ``binders``: the body's nodes of the kinds in
        ``_BINDERS``, in the walk's order."""
        counts = binding_counts(fn.body)
        names = _parameter_origins(fn, object_params)
        for name in counts:
            names.setdefault(name, "?")
        # ``names`` first, as it grows (read only: the module's origins are never written)
        view = ChainMap(names, cast("dict[str, str]", self.origins))
        for node in binders:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".", 1)[0]
                    names[bound] = alias.name if alias.asname else bound
            elif isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                for alias in node.names:
                    joined = f"{base}.{alias.name}" if node.module else base + alias.name
                    names[alias.asname or alias.name] = joined
            elif (
                isinstance(node, ast.withitem)
                and isinstance(node.optional_vars, ast.Name)
                and counts.get(node.optional_vars.id) == 1
            ):  # what entering returns, taken as the manager itself (``open``'s file)
                names[node.optional_vars.id] = origin(node.context_expr, self.qualify, view)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                if not isinstance(node, ast.Lambda) and counts.get(node.name) == 1:
                    names[node.name] = NESTED  # its body is walked with the capability's
            elif (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Lambda)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and counts.get(node.targets[0].id) == 1
            ):
                names[node.targets[0].id] = NESTED
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and counts.get(node.targets[0].id) == 1
                and node.targets[0].id not in object_params
            ):
                names[node.targets[0].id] = origin(node.value, self.qualify, view)
        return names


# The nodes ``_facts`` judges (exact types: the parser makes no subclasses).
_JUDGED = frozenset(
    {ast.Call, ast.Global, ast.Nonlocal, ast.Assign, ast.AugAssign, ast.Delete}
)  # fmt: skip
# The nodes ``_local_origins`` reads a name's origin from (exact types, as above).
_BINDERS = frozenset(
    {
        ast.Import, ast.ImportFrom, ast.withitem, ast.FunctionDef, ast.AsyncFunctionDef,
        ast.Lambda, ast.Assign,
    }
)  # fmt: skip


def _parameter_origins(fn: FunctionNode, object_params: frozenset[str]) -> dict[str, str]:
    """Each parameter's origin: ``?object`` for one whose type is not plain JSON, else ``?``."""
    args = fn.args
    names: dict[str, str] = {}
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            names[arg.arg] = "?object" if arg.arg in object_params else "?"
    return names


def _arguments(call: ast.Call) -> list[ast.expr]:
    """What ``call`` is given: its arguments, keyword values and the items of a literal
    list, tuple or set among them (``map(f, xs)``, ``sorted(xs, key=f)``, ``run([f])``)."""
    out: list[ast.expr] = []
    givens = call.args
    if call.keywords:
        givens = [*givens, *(k.value for k in call.keywords)]
    for given in givens:  # exact types: the parser makes no subclasses
        value = given.value if type(given) is ast.Starred else given
        out.append(value)
        if type(value) in _DISPLAYS:
            out.extend(value.elts)  # type: ignore[attr-defined]
    return out


_DISPLAYS: Final = frozenset({ast.List, ast.Tuple, ast.Set})


def _mode(call: ast.Call, index: int) -> str:
    """``r`` for a literal read mode (or none), ``w`` for one that writes, ``?`` otherwise;
    ``index``: the mode's position among the positional arguments."""
    mode: ast.expr | None = call.args[index] if len(call.args) > index else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
        elif keyword.arg is None:
            return "?"
    if mode is None:
        return "r"
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return "w" if set(mode.value) & set("wax+") else "r"
    return "?"
