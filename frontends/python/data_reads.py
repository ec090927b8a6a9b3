"""Facts about the files a capability's body reads: the call, and the path when the source
spells it (see :mod:`svcc.compiler.passes.data_read_rules`, which judges them).

Only calls of the shared read table are recorded, with a path built from ``__file__`` (what
the module-level facts record as ``Evaluation.path``) or a literal path
(``Evaluation.literal``): ``"catalog.json"``, ``Path("data") / "train.csv"``,
``os.path.join("data", "train.csv")``, and an absolute one however it is built (``HERE /
"/etc/hostname"`` reads ``/etc/hostname``: an absolute part restarts the path); spelt in
the call or held by a local name the body binds (:func:`bound_values`,
:func:`through_names`: every value a name may hold). A :class:`Body` holds one function's
reads; a read whose path comes from a parameter is kept as a template that
:func:`with_arguments` fills with what a call passes (followed from a capability into the
module's own functions by :mod:`svcc.frontends.python._read_calls`).
"""

import ast
import posixpath
import re
from collections.abc import Callable
from typing import Final

from svcc.frontends.python._effects import argument_names
from svcc.frontends.python._walk import shared_memo, walk
from svcc.ir.model import Evaluation, Span

# Callables that read a file whose path is their first argument (or, for a method, their
# receiver). Reviewed one by one; the one table of both rules (reads at import:
# ``compiler/passes/effects.py``; reads on every call: ``compiler/passes/data_read_rules.py``).
# An entry ending in ``_`` covers what starts with it.
DATA_READERS: Final = (
    "builtins.open", "io.open", "pathlib.Path().read_text", "pathlib.Path().read_bytes",
    "pathlib.Path().open", "joblib.load", "numpy.load", "numpy.loadtxt", "numpy.genfromtxt",
    "pandas.read_", "polars.read_", "torch.load",
)  # fmt: skip

_PATHS: Final = frozenset(
    {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.PurePosixPath"}
)

# ``pathlib.Path()`` followed by steps that keep a path a path (arithmetic, not reads);
# ``.parents[]`` before ``.parent``, which would match its start and end the steps.
_PATH_STEPS = re.compile(
    r"^pathlib\.(?:Pure(?:Posix|Windows)?)?(?:Posix)?Path\(\)"
    r"(?:\.parents\[\]|\.parent|\.resolve\(\)|\.absolute\(\)|\.joinpath\(\)|\.with_name\(\)"
    r"|\.with_suffix\(\)|\.with_stem\(\)|\.name|\.stem|\.suffix)*"
)


def normalise(callee: str) -> str:
    """``pathlib.Path().parent.parent.read_text`` → ``pathlib.Path().read_text``: path steps
    are collapsed (os.path arithmetic and ``/`` already keep the path's origin)."""
    if callee.startswith("pathlib."):
        match = _PATH_STEPS.match(callee)
        if match and match.end() > 0:
            return "pathlib.Path()" + callee[match.end() :]
    return callee


def reads_file(callee: str) -> bool:
    """Whether ``callee`` (normalised) is a :data:`DATA_READERS` callable."""
    return callee.startswith(DATA_READERS)


def data_read(
    call: ast.Call,
    resolve: Callable[[ast.expr], str],
    qualify: Callable[[ast.expr], str | None],
    read_path: Callable[[ast.Call], str | None],
    span: Callable[[ast.AST], Span],
) -> Evaluation | None:
    """The read ``call`` makes of a file whose path the source spells, or ``None``."""
    callee = normalise(resolve(call.func))
    if not reads_file(callee) or not _reading(call, callee):
        return None
    path = read_path(call)
    literal = None
    if path is not None and posixpath.isabs(path):
        path, literal = None, path  # ``HERE / "/etc/x"``: pathlib drops ``HERE``
    elif path is None:
        target = path_operand(call, callee)
        literal = _literal_path(target, qualify) if target is not None else None
        if literal is None:
            return None
    return Evaluation(
        kind="call",
        text=f"call to {callee}()",
        callee=callee,
        literal_arguments=False,
        literal=literal,
        names=argument_names(call, qualify),
        path=path,
        span=span(call),
    )


def literal_read(
    call: ast.Call, callee: str, qualify: Callable[[ast.expr], str | None]
) -> str | None:
    """The literal path a read of the table reads (``pd.read_csv("prices.csv")``), else
    ``None``: what a module-level read records as ``Evaluation.literal`` (a path relative to
    the working directory is judged against the declared data files)."""
    callee = normalise(callee)
    if not reads_file(callee) or not _reading(call, callee):
        return None
    target = path_operand(call, callee)
    return _literal_path(target, qualify) if target is not None else None


def _reading(call: ast.Call, callee: str) -> bool:
    """``open``/``Path.open`` in a read mode (``r``, ``rb``, ``rt``; the default)."""
    if callee not in ("builtins.open", "io.open", "pathlib.Path().open"):
        return True
    position = 1 if callee != "pathlib.Path().open" else 0
    mode = call.args[position] if len(call.args) > position else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    if mode is None:
        return True
    return (
        isinstance(mode, ast.Constant)
        and isinstance(mode.value, str)
        and set(mode.value) <= set("rbt")
    )


def _literal_path(node: ast.expr, qualify: Callable[[ast.expr], str | None]) -> str | None:
    """``node`` as a literal relative (or absolute) path, when the source spells it (a URL,
    which ``pd.read_csv`` and friends fetch, is not a path)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value and "://" not in node.value else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _literal_path(node.left, qualify), _literal_path(node.right, qualify)
        return posixpath.join(left, right) if left and right else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
        qual = qualify(node.func)
        parts = [_literal_path(a, qualify) for a in node.args]
        if qual in _PATHS | {"os.path.join"} and parts and all(parts) and not node.keywords:
            return posixpath.join(*parts)  # type: ignore[arg-type]
    return None


# A name and every value it may hold: (value, where its binding ends).
Bound = dict[str, list[tuple[ast.expr, tuple[int, int]]]]


def binding_counts(body: list[ast.stmt]) -> dict[str, int]:
    """How many times each name is bound (or unbound, or declared another scope's) anywhere
    in ``body``, nested scopes included."""
    memo = shared_memo("binding_counts")
    if memo is not None:  # the same function body is counted by several readers
        found = memo.get(id(body))
        if found is not None:
            return found[1]  # type: ignore[no-any-return]
    counts: dict[str, int] = {}
    binders = _BINDERS
    for stmt in body:
        for node in walk(stmt):
            kind = type(node)
            if kind is ast.Name:
                if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                    name = node.id  # type: ignore[attr-defined]
                    counts[name] = counts.get(name, 0) + 1
            elif kind in binders:
                for name in _bound_names(node):
                    counts[name] = counts.get(name, 0) + 1
    if memo is not None:
        memo[id(body)] = (body, counts)  # the body kept: its identity is not reused
    return counts


# The nodes other than names that bind (see ``_bound_names``): the rest are skipped fast.
_BINDERS: Final = frozenset(
    {
        ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.arg, ast.Import,
        ast.ImportFrom, ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.MatchAs,
        ast.MatchStar, ast.MatchMapping,
    }
)  # fmt: skip


def _bindings_of(statements: list[ast.stmt], sites: Bound, plain: dict[str, int]) -> None:
    """``bound_values``' walk of one block: into ``sites`` and ``plain``. At module level,
    not a closure: a recursive closure is a reference cycle, which kept the syntax it
    visited until the cyclic collector ran (see ``_collection``)."""
    before = {name: len(values) for name, values in sites.items()}  # the block's start
    for stmt in statements:
        target: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, values = stmt.targets[0], [stmt.value]
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, values = stmt.target, [stmt.value]
        elif isinstance(stmt, ast.For | ast.AsyncFor) and isinstance(
            stmt.iter, ast.Tuple | ast.List
        ):
            target, values = stmt.target, list(stmt.iter.elts)
            if any(isinstance(v, ast.Starred) for v in values):
                target = None
        if isinstance(target, ast.Name):
            end = (target.end_lineno or 0, target.end_col_offset or 0)
            held = sites.setdefault(target.id, [])
            if not isinstance(stmt, ast.For | ast.AsyncFor):
                end = (stmt.end_lineno or 0, stmt.end_col_offset or 0)
                del held[before.get(target.id, 0) :]
            held.extend((v, end) for v in values)
            plain[target.id] = plain.get(target.id, 0) + 1
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue  # another scope
        for field in ("body", "orelse", "finalbody"):
            _bindings_of(getattr(stmt, field, None) or [], sites, plain)
        for handler in getattr(stmt, "handlers", None) or []:
            _bindings_of(handler.body, sites, plain)
        for case in getattr(stmt, "cases", None) or []:
            _bindings_of(case.body, sites, plain)


def bound_values(body: list[ast.stmt], params: set[str], counts: dict[str, int]) -> Bound:
    """Local names a read may be followed through, with every value each may hold: every
    binding of the name is a statement ``name = value`` of the function's own scope (under
    ``if``/``for``/``try``/``with`` too) or ``for name in (a, b, ...)`` over a literal tuple
    or list, and the name is neither a parameter nor declared ``global``/``nonlocal``. Any
    other binding anywhere in the body (``counts``, a nested scope's included) disqualifies
    it: a name that may hold a value not listed is never judged. A plain binding replaces
    what the same block bound before it (``p = "a"; p = "b"`` holds only ``"b"``); values
    bound in other blocks (branches, a loop's body) add up."""
    sites: Bound = {}
    plain: dict[str, int] = {}
    _bindings_of(body, sites, plain)
    return {
        name: values
        for name, values in sites.items()
        if counts.get(name) == plain[name] and name not in params
    }


def _bound_names(node: ast.AST) -> list[str]:
    """The names ``node`` binds (or unbinds, or declares as another scope's)."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, ast.Global | ast.Nonlocal):
        return [*node.names, *node.names]  # never once
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


_PATH_READS: Final = frozenset({"read_text", "read_bytes", "open"})


def path_operand(call: ast.Call, callee: str) -> ast.expr | None:
    """The path expression ``call`` (of ``callee``, normalised) reads: a path's receiver
    (``Path(...).read_text()``, or ``p.read_text()`` on a name not resolved yet), else the
    first argument (``open(p)``, ``io.open(p)``, ``pd.read_csv(p)``; ``open(file=p)``). The
    one rule for it."""
    func = call.func
    if isinstance(func, ast.Attribute) and (
        callee.startswith("pathlib.Path().")
        or (not reads_file(callee) and func.attr in _PATH_READS)
    ):
        return func.value
    if call.args:
        return call.args[0]
    if callee in ("builtins.open", "io.open"):  # open(file=p)
        return next((k.value for k in call.keywords if k.arg == "file"), None)
    return None


def _used_name(call: ast.Call, callee: str) -> ast.Name | None:
    """The name ``call`` reads a file through (:func:`path_operand`), if a bare name."""
    used = path_operand(call, callee)
    return used if isinstance(used, ast.Name) else None


def through_names(call: ast.Call, callee: str, bound: Callable[[], Bound]) -> list[ast.Call] | None:
    """``call`` once per value of the name it reads through (see :func:`_used_name`), the
    name replaced by the value, when the name is :func:`bound_values`' (``bound``, asked
    only for a read) and every binding comes before the call; else ``None``."""
    used = _used_name(call, callee)
    if used is None:
        return None
    values = bound().get(used.id)
    if not values or any((call.lineno, call.col_offset) < end for _, end in values):
        return None  # not followed, or used before a binding
    return [_replace(call, {used.id: value}) for value, _ in values]


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.expr:
        value = self.values.get(node.id)
        return node if value is None or not isinstance(node.ctx, ast.Load) else value


def _replace(call: ast.Call, values: dict[str, ast.expr]) -> ast.Call:
    """A copy of ``call`` with the names in ``values`` replaced (located where ``call``
    is: the read's span stays the read's)."""
    import copy  # on first use: with ``weakref``, a hundredth of a cold ``inspect FILE``

    copied = _Substitute(values).visit(copy.deepcopy(call))
    return ast.copy_location(copied, call)  # type: ignore[no-any-return]


# Exceptions a missing file raises (or that catch it), and the tests for a file.
_MISSING: Final = frozenset(
    f"builtins.{n}"
    for n in ("FileNotFoundError", "OSError", "IOError", "EnvironmentError", "Exception")
) | {"builtins.BaseException"}
_EXISTENCE_CALLS: Final = frozenset(
    {"os.path.exists", "os.path.isfile", "os.path.lexists", "os.access"}
)
_EXISTENCE_METHODS: Final = frozenset({"exists", "is_file"})


def absence_handled(
    body: list[ast.stmt], qualify: Callable[[ast.expr], str | None]
) -> tuple[bool, set[int]]:
    """How the function copes with a missing file: whether it tests for one anywhere
    (``path.exists()``, ``os.path.isfile(...)``: it is taken to handle a missing file, so
    none of its reads is judged), and the nodes inside a ``try`` whose handler catches a
    missing file (``FileNotFoundError``, ``OSError``, ``Exception``, a bare ``except``), and
    inside such a handler (a fallback read there runs only when a read of the ``try`` failed:
    ``except FileNotFoundError: return (HERE / "fallback.json").read_text()`` was a false
    SVC-R042 on a function whose declared primary file is always there)."""
    tests = False
    guarded: set[int] = set()
    for stmt in body:
        for node in walk(stmt):
            kind = type(node)  # exact types (the parser makes no subclasses): every node
            if kind is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                if isinstance(func, ast.Attribute) and func.attr in _EXISTENCE_METHODS:
                    tests = True
                elif isinstance(func, ast.Name | ast.Attribute):
                    tests = tests or qualify(func) in _EXISTENCE_CALLS
            elif kind is ast.Try or kind is ast.TryStar:
                block: ast.Try | ast.TryStar = node  # type: ignore[assignment]
                coping = [h for h in block.handlers if _catches_missing(h, qualify)]
                if coping:  # the fallback a coping handler reads runs only when a read failed
                    guarded.update(id(n) for s in block.body for n in walk(s))
                    guarded.update(id(n) for h in coping for s in h.body for n in walk(s))
    return tests, guarded


def _catches_missing(handler: ast.ExceptHandler, qualify: Callable[[ast.expr], str | None]) -> bool:
    """Whether ``handler`` catches a missing file and copes: one that ends by raising
    (``raise RuntimeError(...) from exc``) still fails the call."""
    if handler.body and isinstance(handler.body[-1], ast.Raise):
        return False
    caught = handler.type
    if caught is None:
        return True
    kinds = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(isinstance(k, ast.Name | ast.Attribute) and qualify(k) in _MISSING for k in kinds)


def never_run(body: list[ast.stmt]) -> set[int]:
    """The nodes of the bodies of functions ``body`` defines and never names again: an
    undecorated nested ``def``, or a lambda bound to a name, whose name is never read in the
    function is never called (nor handed to anything that may call it), so its reads never
    run. A decorator may call the function, and a class's methods are called through
    attributes: neither is taken as unused."""
    defined: list[tuple[str, list[ast.AST]]] = []
    _nested_functions(body, defined)
    if not defined:
        return set()
    read = {
        node.id
        for stmt in body
        for node in walk(stmt)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    return {
        id(node)
        for name, roots in defined
        if name not in read
        for root in roots
        for node in walk(root)
    }


def _nested_functions(statements: list[ast.stmt], found: list[tuple[str, list[ast.AST]]]) -> None:
    """``never_run``'s candidates in ``statements`` (blocks followed, classes not):
    (name, what runs only when it is called)."""
    for stmt in statements:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if not stmt.decorator_list:
                found.append((stmt.name, list(stmt.body)))
            _nested_functions(stmt.body, found)
            continue
        if isinstance(stmt, ast.ClassDef):
            continue
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Lambda)
        ):
            found.append((stmt.targets[0].id, [stmt.value.body]))
        for field in ("body", "orelse", "finalbody"):
            _nested_functions(getattr(stmt, field, None) or [], found)
        for handler in getattr(stmt, "handlers", None) or []:
            _nested_functions(handler.body, found)
        for case in getattr(stmt, "cases", None) or []:
            _nested_functions(case.body, found)


def parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    """Every parameter of ``fn``, in order."""
    args = fn.args
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


class Body:
    """One function's reads of files, as its own: a path spelt in the call or followed
    through a local name (:func:`through_names`), and where the function copes with a
    missing file (:func:`absence_handled`) no read at all. What needs the body's names or
    guards is computed once, at the first read."""

    def __init__(
        self,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        resolve: Callable[[ast.expr], str],
        qualify: Callable[[ast.expr], str | None],
        read_path: Callable[[ast.Call], str | None],
        span: Callable[[ast.AST], Span],
    ) -> None:
        self.fn = fn
        self.params = {a.arg for a in parameters(fn)}
        self.resolve, self.qualify, self.read_path, self.span = resolve, qualify, read_path, span
        self._counts: dict[str, int] | None = None
        self._bound: Bound | None = None
        self._handled: tuple[bool, set[int]] | None = None
        self._never_run: set[int] | None = None
        # ``variants`` of each call asked about (the call kept: its identity is not reused):
        # a followed function's calls are asked for a read, then for a parametric one
        self._variants: dict[int, tuple[ast.Call, list[ast.Call] | None]] = {}

    def counts(self) -> dict[str, int]:
        if self._counts is None:
            self._counts = binding_counts(self.fn.body)
        return self._counts

    def local_names(self) -> set[str]:
        """The names the function binds itself (its parameters included)."""
        return self.params | set(self.counts())

    def bound(self) -> Bound:
        if self._bound is None:
            self._bound = bound_values(self.fn.body, self.params, self.counts())
        return self._bound

    def handles_missing(self, node: ast.AST) -> bool:
        """Whether the function copes with a missing file where ``node`` runs."""
        if self._handled is None:
            self._handled = absence_handled(self.fn.body, self.qualify)
        tests, guarded = self._handled
        return tests or id(node) in guarded

    def runs(self, node: ast.AST) -> bool:
        """Whether ``node`` may run when the function is called (see :func:`never_run`)."""
        if self._never_run is None:
            self._never_run = never_run(self.fn.body)
        return id(node) not in self._never_run

    def variants(self, call: ast.Call) -> list[ast.Call] | None:
        """``call`` once per value of the path it reads through a name, or ``[call]``;
        ``None`` for a call that reads no file."""
        known = self._variants.get(id(call))
        if known is not None and known[0] is call:
            return known[1]
        found = self._variants_of(call)
        self._variants[id(call)] = (call, found)
        return found

    def _variants_of(self, call: ast.Call) -> list[ast.Call] | None:
        callee = normalise(self.resolve(call.func))
        if not reads_file(callee) and not (
            isinstance(call.func, ast.Attribute) and call.func.attr in _PATH_READS
        ):
            return None
        return through_names(call, callee, self.bound) or [call]

    def reads(self, call: ast.Call) -> list[Evaluation] | None:
        """The read ``call`` makes once per value its path may have, or ``None``: no read
        of a file the source spells, or the function copes with a missing one there."""
        variants = self.variants(call)
        if variants is None:
            return None
        found = [
            data_read(v, self.resolve, self.qualify, self.read_path, self.span) for v in variants
        ]
        reads = [r for r in found if r is not None]
        if not reads or len(reads) != len(found) or self.handles_missing(call):
            return None
        if not self.runs(call):
            return None  # in a nested function never called
        local = self.local_names()
        for variant in variants:  # a name the function binds is not the module's of that name
            target = path_operand(variant, normalise(self.resolve(variant.func)))
            if target is not None and any(
                isinstance(n, ast.Name) and n.id in local for n in walk(target)
            ):
                return None  # a parameter's is read with each call's arguments (parametric)
        return reads

    def parametric(self, call: ast.Call) -> ast.Call | None:
        """``call`` (a name it reads through replaced by its one value) when its path is
        built from parameters the body never rebinds: read with a call's arguments
        (:func:`with_arguments`)."""
        variants = self.variants(call)
        if variants is None or len(variants) != 1 or self.handles_missing(call):
            return None
        if not self.runs(call):
            return None
        read = variants[0]
        target = path_operand(read, normalise(self.resolve(read.func)))
        if target is None:
            return None
        used = {n.id for n in walk(target) if isinstance(n, ast.Name)} & self.params
        counts = self.counts()
        return read if used and not any(counts.get(p) for p in used) else None


def with_arguments(
    read: ast.Call, callee: Body, site: ast.Call, bound_first: bool, caller: Body
) -> ast.Call | None:
    """``read`` (a :meth:`Body.parametric` read of ``callee``) with its parameters replaced
    by what the call ``site`` in ``caller`` passes (or their defaults); ``bound_first``
    skips ``cls``. ``None`` when the call unpacks arguments, leaves a parameter the read
    uses unknown, or passes a value reading a name either function binds itself: the read
    is judged in the callee's scope, where such a name is another variable or none."""
    fn = callee.fn
    if any(isinstance(a, ast.Starred) for a in site.args) or any(
        k.arg is None for k in site.keywords
    ):
        return None
    args = fn.args
    positional = [*args.posonlyargs, *args.args][1 if bound_first else 0 :]
    values: dict[str, ast.expr] = {}
    defaults = args.defaults[-len(positional) :] if positional and args.defaults else []
    for arg, default in zip(positional[len(positional) - len(defaults) :], defaults, strict=True):
        values[arg.arg] = default
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if kw_default is not None:
            values[arg.arg] = kw_default
    if len(site.args) > len(positional):
        return None
    for arg, value in zip(positional, site.args, strict=False):
        values[arg.arg] = value
    for keyword in site.keywords:
        values[keyword.arg] = keyword.value  # type: ignore[index]
    used = {n.id for n in walk(read) if isinstance(n, ast.Name)} & callee.params
    if not used <= set(values):
        return None
    passed = {n.id for p in used for n in walk(values[p]) if isinstance(n, ast.Name)}
    if passed & (caller.local_names() | callee.local_names()):
        return None
    return _replace(read, {p: values[p] for p in used})
