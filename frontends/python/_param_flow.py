"""What a function's body does with its parameters and with the values taken from them.

An unannotated parameter receives whatever JSON value a caller sends: a ``dict``, a
``list``, a ``str``, an ``int``, a ``float``, a ``bool`` or ``None``. Everything the body
takes out of such a value by subscripting (``data[i]``, ``row["x"]``), iterating
(``for row in rows``, comprehensions, ``enumerate``/``zip``/``sorted``, ``d.items()``),
unpacking (``a, b = pair``) or aliasing (``a = x``) is again one of these. So the body can
only work when every attribute it reads on any of them is one some JSON value has, and
when it never hands one to a callable that needs an object no JSON value is.

This module follows those values through the body: a local name is *derived* from a
parameter where every binding of it so far in source order is one of the forms above
applied to a derived value (``x = x[1:]`` keeps ``x`` derived; from ``x = np.asarray(x)`` on
it is an object of unknown type, never judged; a binding inside a loop counts from the
loop's start, a use inside a nested function or lambda as the last). A use inside a ``try``
that catches ``AttributeError``/``TypeError``/``Exception`` or under a type test
(``hasattr``, ``isinstance``) is the function's own fallback, not judged. It reports the
uses that no JSON value survives:

- ``attribute``/``method``/``attribute-subscript``: an attribute that ``dict``, ``list``,
  ``str``, ``int``, ``float``, ``bool`` and ``None`` all lack (``data[i].reshape(...)``,
  ``row.name``, ``x['a'].sum()``);
- ``tuple-subscript``: an index tuple holding a slice or ``...`` (``X[:, 0]``), which only
  arrays and frames take (a list refuses a tuple index; a slice is not a dict key);
- ``argument``: a derived value passed where :data:`NEEDS_OBJECT` says a callable needs an
  object no JSON value is (``pd.concat([df, ...])``), a reviewed table.

Calls into libraries that take "array-like" input (almost all of numpy, scikit-learn's
``fit``/``predict``, ``pd.DataFrame(...)``) accept lists and numbers, so passing a parameter
to them is not a use judged here: refusing those would refuse code that works.
"""

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from svcc.frontends.python._effects import JSON_VALUE_ATTRIBUTES
from svcc.frontends.python._walk import children, walk
from svcc.ir.model import ParamUseKind

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen

Qualify = Callable[[ast.expr], str | None]

# Callables that need an argument to be an object no JSON value is: qualified name ->
# positions of such arguments (an argument that is a list or tuple display counts through
# its items: ``pd.concat([a, b])``). Each entry is checked by ``tests/frontends/test_param_flow.py``
# on every kind of JSON value.
NEEDS_OBJECT: Final[dict[str, tuple[int, ...]]] = {
    "pandas.concat": (0,),  # "cannot concatenate object of type <class 'list'>"
    "pandas.merge": (0, 1),  # "Can only merge Series or DataFrame objects"
    "pandas.merge_asof": (0, 1),
    "pandas.merge_ordered": (0, 1),
    "numpy.copyto": (0,),  # "argument 1 must be numpy.ndarray"
    "numpy.put": (0,),
    "numpy.place": (0,),
    "numpy.put_along_axis": (0,),
    "numpy.fill_diagonal": (0,),
    "sklearn.base.clone": (0,),  # "does not seem to be a scikit-learn estimator"
    "sklearn.model_selection.cross_val_score": (0,),  # the estimator
    "sklearn.model_selection.cross_validate": (0,),
    "sklearn.model_selection.cross_val_predict": (0,),
    "sklearn.model_selection.learning_curve": (0,),
    "sklearn.model_selection.validation_curve": (0,),
}

# Builtins whose result iterates over the same elements as their argument.
_SAME_ELEMENTS: Final = frozenset(
    {"builtins.sorted", "builtins.reversed", "builtins.list", "builtins.tuple", "builtins.set"}
    | {"builtins.frozenset", "builtins.iter"}
)
# Builtins whose result is a list or tuple of their argument's elements (a JSON value again).
_SAME_LIST: Final = frozenset({"builtins.sorted", "builtins.list", "builtins.tuple"})
_ELEMENT_METHODS: Final = frozenset({"items", "keys", "values"})
_SCOPES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@frozen
class FlowUse:
    """A use of ``param`` (or of a value taken from it) no JSON value survives.
    ``receiver`` is the source text of the value used when it is not the parameter itself
    (``data[i]``, ``row``); ``attribute`` names the attribute, or the callee of an
    ``argument`` use."""

    param: str
    kind: ParamUseKind
    node: ast.AST
    attribute: str | None
    receiver: str | None


# A binding's source: ("value", expr) binds the value of expr; ("element", expr) binds an
# element of what expr iterates over; ("opaque", None) anything else.
_Source = tuple[str, ast.expr | None]
_OPAQUE: Final[_Source] = ("opaque", None)
_Position = tuple[int, int]
_NEVER: Final[_Position] = (1 << 62, 0)
_LATE: Final[_Position] = (1 << 61, 0)  # after every statement, before _NEVER

# Handlers that catch what a use on the wrong kind of value raises: a use inside such a
# ``try`` is the function's own fallback, not judged.
_CATCHING: Final = frozenset(
    {"AttributeError", "TypeError", "IndexError", "KeyError", "Exception", "BaseException"}
)
# Tests that make a branch depend on what a value is: a use inside such an ``if`` is not
# judged.
_TYPE_TESTS: Final = frozenset({"hasattr", "isinstance", "callable", "type", "getattr"})


@frozen
class _Binding:
    source: _Source
    at: _Position  # where the value starts to hold: the loop's start when inside one


# A place where the body may need an object: (kind, node judged, the value used, the
# attribute or callee, the node's position).
_Candidate = tuple[ParamUseKind, ast.AST, ast.expr, str | None, _Position]


def object_uses(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    params: set[str],
    qualify: Qualify,
    segment: Callable[[ast.AST], str],
    *,
    dropped: str | None = None,
) -> list[FlowUse]:
    """The uses of ``fn``'s parameters ``params`` and of the values derived from them that
    no JSON value survives, in source order (the first of each kind per parameter is what
    the IR keeps).

    Rebinding is followed in source order: a use judged sits before every binding of its
    name to something not derived (``df['a'].unique()`` before ``df = pd.concat(...)``);
    a binding inside a loop counts from the loop's start (the next pass may see it).

    ``dropped``: a parameter whose uses the caller has no use for (a method's instance),
    left out of the answer. It still takes part in the scan (it is a parameter: what is
    bound from it is not another's), but a body where nothing else may need an object
    (``self.x`` only) is not scanned: a use needs a base that is another parameter or a
    name the body binds."""
    kept = params - {dropped} if dropped is not None else params
    if not kept or not _worth_scanning(fn, kept):
        return []
    scan = _Scan(qualify)
    scan.run(fn.body)
    if not scan.candidates:
        return []
    roots, cutoff = _derived(params, scan.bindings, qualify)
    uses: list[FlowUse] = []
    for kind, node, value, attribute, at in sorted(scan.candidates, key=lambda c: _at(c[1])):
        base = _base_name(value)
        if base is None or base not in roots or at >= cutoff[base]:
            continue
        param = roots[base]
        if param == dropped:
            continue
        receiver = None if type(value) is ast.Name and value.id == param else segment(value)
        uses.append(FlowUse(param, kind, node, attribute, receiver))
    return uses


def _worth_scanning(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: set[str]) -> bool:
    """Whether some place that may need an object uses a parameter or a name the body
    binds: one cheap walk that spares most bodies the full scan."""
    stored: set[str] = set()
    bases: set[str] = set()
    for stmt in fn.body:
        for node in walk(stmt):
            kind = type(node)
            if kind is ast.Name:
                if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                    stored.add(node.id)  # type: ignore[attr-defined]
                continue
            value = None
            if kind is ast.Attribute:
                if node.attr not in JSON_VALUE_ATTRIBUTES:  # type: ignore[attr-defined]
                    value = node.value  # type: ignore[attr-defined]
            elif kind is ast.Subscript:
                if _slicing_tuple(node.slice):  # type: ignore[attr-defined]
                    value = node.value  # type: ignore[attr-defined]
            elif kind is ast.Call and _object_arguments(node, _no_qualify, leaves_only=True):  # type: ignore[arg-type]
                return True
            if value is not None:
                base = _base_name(value)
                if base is not None:
                    bases.add(base)
    return not bases.isdisjoint(params | stored)


def _no_qualify(_node: ast.expr) -> str | None:
    return None


class _Scan:
    """One walk of a body: every binding with its source (nested scopes included: a name
    bound there is judged the same, conservatively), and every place that may need an
    object, unless it sits inside a ``try`` that catches a wrong-kind error or a branch on
    what a value is (``hasattr``, ``isinstance``, ...): the function's own fallback."""

    def __init__(self, qualify: Qualify) -> None:
        self.qualify = qualify
        self.bindings: dict[str, list[_Binding]] = {}
        self.candidates: list[_Candidate] = []
        self._loop: ast.AST | None = None
        self._nested = False

    def run(self, body: list[ast.stmt]) -> None:
        # (node, outermost loop around it, guarded, inside a nested scope); parents first
        stack: list[tuple[ast.AST, ast.AST | None, bool, bool]] = [
            (s, None, False, False) for s in reversed(body)
        ]
        role: dict[int, ParamUseKind] = {}
        leaves = _LEAVES
        while stack:
            node, loop, guarded, nested = stack.pop()
            kind = type(node)
            if kind in _LEAVES:
                continue
            if kind in _BINDING_KINDS:
                self._loop = loop
                self._bindings_of(node, kind)
            if not guarded and kind in _CANDIDATE_KINDS:
                self._nested = nested
                self._candidates_of(node, kind, role)
            inner = node if loop is None and kind in _LOOPS else loop
            deeper = nested or kind in _SCOPES
            if kind is ast.Try or kind is ast.TryStar:
                caught = any(_catches(h.type) for h in node.handlers)  # type: ignore[attr-defined]
                parts = [(c, inner, guarded or caught, deeper) for c in node.body]  # type: ignore[attr-defined]
                rest = [c for c in children(node) if c not in node.body]  # type: ignore[attr-defined]
                parts += [(c, inner, guarded, deeper) for c in rest]
                stack.extend(reversed(parts))
                continue
            below = guarded or (kind in _GUARD_KINDS and _guarding(node, kind))
            # a name or a constant is not pushed at all: nothing is done with it (some 40% of
            # the nodes the scan meets)
            stack.extend(
                [
                    (c, inner, below, deeper)
                    for c in reversed(children(node))
                    if type(c) not in leaves
                ]
            )

    def _where(self, node: ast.AST) -> _Position:
        """Where a use happens: a nested function or lambda may run after anything the
        body does, so its uses count as the last (judged only if nothing rebinds)."""
        return _LATE if self._nested else _at(node)

    def _add(self, name: str, source: _Source, node: ast.AST) -> None:
        start = self._loop if self._loop is not None else node
        self.bindings.setdefault(name, []).append(_Binding(source, _at(start)))

    def _bind(self, target: ast.expr, source: _Source) -> None:
        kind = type(target)
        if kind is ast.Name:
            self._add(target.id, source, target)  # type: ignore[attr-defined]
        elif kind is ast.Starred:
            self._bind(target.value, source)  # type: ignore[attr-defined]
        elif kind is ast.Tuple or kind is ast.List:
            elts: list[ast.expr] = target.elts  # type: ignore[attr-defined]
            for elt, part in zip(elts, _parts(source, len(elts), elts, self.qualify), strict=True):
                self._bind(elt, part)
        elif kind is not ast.Attribute and kind is not ast.Subscript:
            for name in _stored_names(target):
                self._add(name, _OPAQUE, target)

    def _bindings_of(self, node: ast.AST, kind: type) -> None:
        if kind in _VALUE_BINDERS:
            self._value_bindings(node, kind)
        else:
            self._declarations(node, kind)

    def _value_bindings(self, node: ast.AST, kind: type) -> None:
        """Names bound to a value (an assignment, a loop's target, a ``with``'s ``as``), or
        unbound (``del``)."""
        if kind is ast.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                self._bind(target, ("value", node.value))  # type: ignore[attr-defined]
        elif kind is ast.NamedExpr:
            self._bind(node.target, ("value", node.value))  # type: ignore[attr-defined]
        elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
            self._bind(node.target, ("element", node.iter))  # type: ignore[attr-defined]
        elif kind is ast.AugAssign or kind is ast.AnnAssign:
            self._bind(node.target, _OPAQUE)  # type: ignore[attr-defined]
        elif kind is ast.withitem and node.optional_vars is not None:  # type: ignore[attr-defined]
            self._bind(node.optional_vars, _OPAQUE)  # type: ignore[attr-defined]
        elif kind is ast.Delete:
            for target in node.targets:  # type: ignore[attr-defined]
                self._bind(target, _OPAQUE)

    def _declarations(self, node: ast.AST, kind: type) -> None:
        """Names a definition, a declaration, a handler, a pattern or an import binds."""
        if kind in _SCOPES:
            args: ast.arguments = node.args  # type: ignore[attr-defined]
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    self._add(arg.arg, _OPAQUE, node)
            if kind is not ast.Lambda:
                self._add(node.name, _OPAQUE, node)  # type: ignore[attr-defined]
        elif kind is ast.ClassDef:
            self._add(node.name, _OPAQUE, node)  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            for name in node.names:  # type: ignore[attr-defined]
                self.bindings.setdefault(name, []).append(_Binding(_OPAQUE, (0, 0)))
        elif kind is ast.ExceptHandler or kind is ast.MatchAs or kind is ast.MatchStar:
            if node.name:  # type: ignore[attr-defined]
                self._add(node.name, _OPAQUE, node)  # type: ignore[attr-defined]
        elif kind is ast.MatchMapping:
            if node.rest:  # type: ignore[attr-defined]
                self._add(node.rest, _OPAQUE, node)  # type: ignore[attr-defined]
        elif kind is ast.Import or kind is ast.ImportFrom:
            for alias in node.names:  # type: ignore[attr-defined]
                self._add(alias.asname or alias.name.split(".", 1)[0], _OPAQUE, node)

    def _candidates_of(self, node: ast.AST, kind: type, role: dict[int, ParamUseKind]) -> None:
        if kind is ast.Call:
            call: ast.Call = node  # type: ignore[assignment]
            role[id(call.func)] = "method"
            for item, callee in _object_arguments(call, self.qualify):
                self.candidates.append(("argument", item, item, callee, self._where(item)))
        elif kind is ast.Subscript:
            sub: ast.Subscript = node  # type: ignore[assignment]
            role[id(sub.value)] = "attribute-subscript"
            if _slicing_tuple(sub.slice):
                self.candidates.append(("tuple-subscript", sub, sub.value, None, self._where(sub)))
        elif kind is ast.Attribute:
            attr: ast.Attribute = node  # type: ignore[assignment]
            if attr.attr not in JSON_VALUE_ATTRIBUTES:
                use = role.get(id(attr), "attribute")
                self.candidates.append((use, attr, attr.value, attr.attr, self._where(attr)))


def _stored_names(target: ast.AST) -> list[str]:
    return [n.id for n in walk(target) if type(n) is ast.Name]


def _guarding(node: ast.AST, kind: type) -> bool:
    """A branch on what a value is: what it guards is the function's own fallback."""
    if kind is ast.If or kind is ast.IfExp or kind is ast.While:
        return _type_test(node.test)  # type: ignore[attr-defined]
    if kind is ast.BoolOp:
        return any(_type_test(v) for v in node.values)  # type: ignore[attr-defined]
    return False


def _at(node: ast.AST) -> _Position:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _object_arguments(
    call: ast.Call, qualify: Qualify, *, leaves_only: bool = False
) -> list[tuple[ast.expr, str]]:
    """The arguments of ``call`` that :data:`NEEDS_OBJECT` says must be objects (with
    ``leaves_only``: a non-empty list when the callee's last name may be one)."""
    func = call.func
    if type(func) is not ast.Name and type(func) is not ast.Attribute:
        return []
    if (func.id if type(func) is ast.Name else func.attr) not in _NEEDS_OBJECT_LEAVES:  # type: ignore[union-attr]
        return []
    if leaves_only:
        return [(func, "")]
    callee = qualify(func)
    places = NEEDS_OBJECT.get(callee or "")
    if not places or callee is None:
        return []
    out: list[tuple[ast.expr, str]] = []
    for index in places:
        if index < len(call.args):
            arg = call.args[index]
            items = arg.elts if type(arg) is ast.List or type(arg) is ast.Tuple else [arg]
            out += [(item, callee) for item in items]
    return out


_NEEDS_OBJECT_LEAVES: Final = frozenset(name.rsplit(".", 1)[1] for name in NEEDS_OBJECT)


def _slicing_tuple(index: ast.expr) -> bool:
    """``X[:, 0]``, ``X[..., 1]``: an index only arrays and frames take."""
    return type(index) is ast.Tuple and any(
        type(e) is ast.Slice or (type(e) is ast.Constant and e.value is Ellipsis)
        for e in index.elts
    )


def _base_name(node: ast.expr) -> str | None:
    """The name a plain value expression is taken from: a name, or a subscript (not by a
    tuple) of one."""
    while type(node) is ast.Subscript:
        if type(node.slice) is ast.Tuple:
            return None
        node = node.value
    return node.id if type(node) is ast.Name else None


def _catches(kind: ast.expr | None) -> bool:
    if kind is None:
        return True
    names = kind.elts if type(kind) is ast.Tuple else [kind]
    return any(
        (type(n) is ast.Name and n.id in _CATCHING)
        or (type(n) is ast.Attribute and n.attr in _CATCHING)
        for n in names
    )


def _type_test(test: ast.expr) -> bool:
    return any(
        type(n) is ast.Call and type(n.func) is ast.Name and n.func.id in _TYPE_TESTS
        for n in walk(test)
    )


_LOOPS: Final = frozenset({ast.For, ast.AsyncFor, ast.While})
# Nodes the scan has nothing to do with, nor below them.
_LEAVES: Final = frozenset({ast.Name, ast.Constant})
_BINDING_KINDS: Final = frozenset(
    {ast.Assign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension, ast.AugAssign}
    | {ast.AnnAssign, ast.withitem, ast.Delete, ast.FunctionDef, ast.AsyncFunctionDef}
    | {ast.Lambda, ast.ClassDef, ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.MatchAs}
    | {ast.MatchStar, ast.MatchMapping, ast.Import, ast.ImportFrom}
)
# The binding kinds that bind a value (``_value_bindings``); the others declare a name.
_VALUE_BINDERS: Final = frozenset(
    {ast.Assign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension, ast.AugAssign}
    | {ast.AnnAssign, ast.withitem, ast.Delete}
)
_CANDIDATE_KINDS: Final = frozenset({ast.Call, ast.Subscript, ast.Attribute})
_GUARD_KINDS: Final = frozenset({ast.If, ast.IfExp, ast.While, ast.BoolOp})


def _parts(source: _Source, count: int, elts: list[ast.expr], qualify: Qualify) -> list[_Source]:
    """The sources of the names a tuple target of ``count`` items unpacks ``source`` into."""
    starred = any(type(e) is ast.Starred for e in elts)
    how, expr = source
    if how == "value" and (type(expr) is ast.Tuple or type(expr) is ast.List) and not starred:
        values: list[ast.expr] = expr.elts
        if len(values) == count and not any(type(v) is ast.Starred for v in values):
            return [("value", v) for v in values]
    if how == "element" and type(expr) is ast.Call and not starred:
        callee = qualify(expr.func) if type(expr.func) is ast.Name else None
        args = expr.args
        if callee == "builtins.zip" and len(args) == count and not expr.keywords:
            return [("element", a) for a in args]
        if callee == "builtins.enumerate" and count == 2 and args:
            return [_OPAQUE, ("element", args[0])]
    if how == "opaque" or expr is None:
        return [_OPAQUE] * count
    # unpacking a JSON value (or an element of one) gives its elements
    return [("element", expr)] * count


def _derived(
    params: set[str], bindings: dict[str, list[_Binding]], qualify: Qualify
) -> tuple[dict[str, str], dict[str, _Position]]:
    """Local names derived from a parameter -> that parameter, and for each the position
    from which a binding to something else may hold (uses from there on are not judged).

    A worklist: a name whose cutoff moves earlier has the bindings taken from it judged
    again, and each name's parameter is found by following first bindings once (so a chain
    of aliases costs its length, not its square)."""
    names = set(params) | set(bindings)
    cutoff = dict.fromkeys(names, _NEVER)
    bases: dict[str, list[str | None]] = {
        n: [_base(b.source, qualify) for b in bs] for n, bs in bindings.items()
    }
    taken_from: dict[str, list[tuple[str, _Position]]] = {}  # base -> (name, binding's at)
    for name, found in bindings.items():
        for binding, base in zip(found, bases[name], strict=True):
            if base is None or base not in cutoff:
                cutoff[name] = min(cutoff[name], binding.at)
            else:
                taken_from.setdefault(base, []).append((name, binding.at))
    work = [n for n in names if cutoff[n] < _NEVER]
    while work:  # cutoffs only move earlier
        base = work.pop()
        for name, at in taken_from.get(base, ()):
            if cutoff[base] <= at < cutoff[name]:
                cutoff[name] = at
                work.append(name)
    roots: dict[str, str] = {p: p for p in params if cutoff[p] > (0, 0)}
    dropped: set[str] = set()  # a name whose bindings lead to no parameter (a cycle)
    for name in sorted(names):
        chain: dict[str, None] = {}  # in order, and a set (a cycle comes back into it)
        current: str | None = name
        while current is not None and current not in roots and current not in dropped:
            first = bindings.get(current)
            if not first or first[0].at >= cutoff[current] or current in chain:
                current = None
                break
            chain[current] = None
            current = bases[current][0]
        root = roots.get(current) if current is not None else None
        for link in chain:
            if root is None:
                dropped.add(link)
            else:
                roots[link] = root
    return roots, cutoff


def _base(source: _Source, qualify: Qualify) -> str | None:
    """The name a binding's source takes its value from, or None."""
    how, expr = source
    if expr is None:
        return None
    if how == "element" and type(expr) is ast.Call:
        func = expr.func
        if type(func) is ast.Name and qualify(func) in _SAME_ELEMENTS and len(expr.args) == 1:
            expr = expr.args[0]
        elif type(func) is ast.Attribute and func.attr in _ELEMENT_METHODS and not expr.args:
            expr = func.value
    elif how == "value" and type(expr) is ast.Call:
        func = expr.func
        if type(func) is ast.Name and qualify(func) in _SAME_LIST and len(expr.args) == 1:
            expr = expr.args[0]
    return _base_name(expr)
