"""Slicing a notebook to what its functions need: the exploration is left behind.

A notebook is exploration around a few helpers: cells that load a CSV, plot, print, train.
Served as one module, every one of them would run at each server start (and block every
function's readiness). The slice keeps, statically:

- every function and class definition (the capabilities and what they use), ``from
  __future__`` imports and ``__all__``;
- every statement that changes shared process state without binding a name (``np.random.seed``,
  ``pd.set_option``, ``sys.path.append``, ``os.chdir``, ``warnings.filterwarnings``,
  ``matplotlib.use``, an assignment into a module such as ``pd.options.x = 1``): never dropped,
  it is kept and the readiness rules judge it;
- transitively, every statement binding a name a kept statement reads: at import for
  module-level reads (the bindings above the reader), at call time for reads inside a
  function or method body (every binding in the notebook, since a call sees the last one);
- every statement that may change an object a kept statement reads (``model.fit(X, y)``,
  ``df["x"] = ...``, ``words.append(w)``, ``helper(df)``): a method call on it other than a
  known read-only one, an assignment into it, passing it (or an object reached from it:
  ``STOP["en"]``, ``SEEN.append``) to a function that is not a known display function,
  calling a notebook function or method whose body changes it (``_mutations``);
- when kept code reads the namespace by string (``globals()``, ``vars()``, ``eval``), every
  statement binding a name.

With ``--select``, only the selected functions' definitions are roots: the other
definitions are kept when kept code reads them.

Everything else (a plot, ``df.head()``, a ``print``, a loop, an assignment only a left-out
statement reads) is left out, with an ``SVC-F012`` note naming its cell and line. Scopes are
read from the tree (``scopes``; nothing runs). A change through another name for the object
(``a = X; a.append(1)``, ``for row in rows: row["x"] = 1``) counts for it (``_aliases``).
"""

import ast
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from typing import Final

from attrs import field, frozen
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import F012_LEFT_OUT
from svcc.frontends.notebook._aliases import alias_groups
from svcc.frontends.notebook._cells import join_numbered
from svcc.frontends.notebook._mutations import function_writers
from svcc.frontends.python import short
from svcc.frontends.python.scopes import statement_names
from svcc.ir.model import Span

# Methods that only read the object they are called on (pandas, numpy, str, dict, list
# lookups): calling one at module level changes nothing a served function sees. A call with
# ``inplace=True`` changes its object whatever the method.
READ_ONLY_METHODS: Final = frozenset({
    "head", "tail", "describe", "info", "sample", "plot", "hist", "boxplot", "scatter", "bar",
    "barh", "pie", "kde", "area", "line", "value_counts", "nunique", "unique", "isnull", "isna",
    "notnull", "notna", "count", "sum", "mean", "median", "mode", "std", "var", "min", "max",
    "idxmin", "idxmax", "corr", "cov", "quantile", "round", "abs", "cumsum", "cumprod", "prod",
    "all", "any", "nlargest", "nsmallest", "to_string", "to_numpy", "to_list", "tolist", "to_dict",
    "to_frame", "to_markdown", "to_html", "copy", "items", "keys", "values", "get", "groupby",
    "agg", "aggregate", "apply", "map", "applymap", "transform", "filter", "query",
    "select_dtypes", "drop", "dropna", "fillna", "replace", "rename", "reset_index", "set_index",
    "sort_values", "sort_index", "merge", "join", "concat", "astype", "reshape", "flatten",
    "ravel", "transpose", "dot", "format", "lower", "upper", "strip",
    "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith", "find", "index",
    "memory_usage", "duplicated", "explode", "pivot", "pivot_table", "melt", "stack", "unstack",
    "resample", "rolling", "expanding", "shift", "diff", "pct_change", "clip", "between", "isin",
    "where", "mask", "describe_option", "predict", "predict_proba", "predict_log_proba",
    "decision_function", "score", "get_params", "inverse_transform", "kneighbors",
    "summary", "evaluate", "get_feature_names_out", "get_support", "show", "savefig",
    # compiled patterns and their matches
    "match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "group", "groups",
    "groupdict", "span", "start", "end",
})  # fmt: skip
# Callables that only display or inspect their arguments.
DISPLAY_FUNCTIONS: Final = frozenset({
    "print", "display", "repr", "str", "len", "type", "isinstance", "issubclass", "id", "hash",
    "sorted", "sum", "min", "max", "any", "all", "enumerate", "zip", "range", "list", "tuple",
    "set", "dict", "frozenset", "round", "abs", "format", "int", "float", "bool", "vars", "dir",
    "help", "iter", "reversed", "pprint.pprint", "IPython.display.display", "IPython.display.HTML",
    "IPython.display.Markdown",
})  # fmt: skip
# Library functions that change an argument in place (any other function reached through an
# import is read as leaving its arguments alone, except through ``out=``); a function of the
# notebook itself, or an object's method, may change whatever it is given.
IN_PLACE_FUNCTIONS: Final = frozenset({
    "random.shuffle", "numpy.random.shuffle", "numpy.copyto", "numpy.put", "numpy.place",
    "numpy.putmask", "numpy.fill_diagonal", "numpy.put_along_axis", "heapq.heappush",
    "heapq.heappop", "heapq.heapify", "heapq.heappushpop", "heapq.heapreplace", "bisect.insort",
    "bisect.insort_left", "bisect.insort_right", "numpy.add.at", "numpy.subtract.at",
    "numpy.multiply.at", "copy.copyto",
})  # fmt: skip
# Libraries whose calls draw: the data passed to them is not changed.
DISPLAY_MODULES: Final = ("matplotlib", "seaborn", "plotly", "IPython.display", "pprint")
_DISPLAY_PREFIXES: Final = tuple(f"{m}." for m in DISPLAY_MODULES)
# Libraries whose settings only change how things are drawn or printed, and such settings of
# other libraries: a statement changing only those is kept when the served code uses that
# library (a plot style matters to a plotting helper, not to a text helper).
DISPLAY_LIBRARIES: Final = frozenset({"matplotlib", "seaborn", "plotly", "IPython"})
DISPLAY_SETTINGS: Final = frozenset(
    {"pandas.set_option", "pandas.reset_option", "numpy.set_printoptions"}
)
# Module-level callables that change process state shared with every function.
SHARED_STATE_CALLS: Final = frozenset({
    "numpy.random.seed", "random.seed", "torch.manual_seed", "torch.cuda.manual_seed",
    "torch.cuda.manual_seed_all", "tensorflow.random.set_seed", "tensorflow.set_random_seed",
    "tensorflow.compat.v1.set_random_seed", "transformers.set_seed", "pandas.set_option",
    "pandas.reset_option", "numpy.set_printoptions", "numpy.seterr", "os.chdir", "os.putenv",
    "sys.setrecursionlimit", "warnings.filterwarnings", "warnings.simplefilter", "matplotlib.use",
    "matplotlib.rc", "matplotlib.style.use", "matplotlib.pyplot.style.use", "matplotlib.pyplot.rc",
    "seaborn.set", "seaborn.set_theme", "seaborn.set_style", "seaborn.set_context",
    "seaborn.set_palette", "logging.basicConfig", "logging.disable", "torch.set_default_dtype",
    "torch.set_grad_enabled", "torch.set_num_threads", "nltk.download", "locale.setlocale",
    "socket.setdefaulttimeout", "sklearn.set_config", "tqdm.pandas", "tqdm.tqdm.pandas",
    "tqdm.auto.tqdm.pandas",
})  # fmt: skip
_SHARED_NAME: Final = re.compile(r"(set_\w+|seed|manual_seed|enable_\w+|disable_\w+)$")
# Builtins that read the module's names by string (``globals()[name]``, ``eval(text)``): a
# kept statement reading one keeps every statement binding a name.
NAMESPACE_READERS: Final = frozenset({"globals", "vars", "eval", "exec", "locals"})
# Builtins whose call at module level may bind any module name (``exec("C = 1")``,
# ``globals()["C"] = 1``): such a statement is never dropped, as shared state is not.
NAMESPACE_WRITERS: Final = frozenset({"exec", "globals", "vars"})
MUTATING_METHODS: Final = frozenset({
    "append", "extend", "insert", "update", "setdefault", "pop", "popitem", "remove", "clear",
    "add", "discard",
})  # fmt: skip


@frozen(kw_only=True)
class Unit:
    """One top-level statement (statements sharing a line are one unit) of one cell."""

    cell: int
    first: int  # first and last line in the cell (decorators included)
    last: int
    nodes: tuple[ast.stmt, ...]
    binds: frozenset[str]
    now_reads: frozenset[str]  # read when the statement runs at import
    later_reads: frozenset[str]  # read when a function or method it defines is called
    global_writes: frozenset[str]  # module names its functions rebind (``global``)
    is_import: bool
    root: bool  # a definition, ``__all__`` or ``from __future__``: always kept
    index: int = field(default=0)


@frozen
class SliceResult:
    text: str
    line_map: tuple[tuple[int, int], ...]
    diagnostics: tuple[Diagnostic, ...]
    kept_cells: tuple[int, ...]


# -- facts -------------------------------------------------------------------------------------


def _is_root(node: ast.stmt) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(node, ast.ImportFrom) and node.module == "__future__":
        return True
    if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
        return True  # may bind anything a function reads
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def units_of(cells: list[tuple[int, ast.Module]]) -> list[Unit]:
    """One unit per top-level statement, statements sharing a line joined (``a = 1; b = 2``):
    each group is gathered first and its unit built once (joining unit by unit copied the
    names so far for every statement: quadratic in a long line of them)."""
    groups: list[tuple[int, int, int, list[ast.stmt]]] = []  # cell, first, last, nodes
    for cell, module in cells:
        for node in module.body:
            first = min([node.lineno, *(d.lineno for d in _decorators(node))])
            last = node.end_lineno or node.lineno
            if groups and groups[-1][0] == cell and first <= groups[-1][2]:
                previous = groups[-1]
                groups[-1] = (cell, previous[1], max(last, previous[2]), previous[3])
                previous[3].append(node)
            else:
                groups.append((cell, first, last, [node]))
    return [_unit(index, *group) for index, group in enumerate(groups)]


def _unit(index: int, cell: int, first: int, last: int, nodes: list[ast.stmt]) -> Unit:
    binds: set[str] = set()
    now: set[str] = set()
    later: set[str] = set()
    writes: set[str] = set()
    for node in nodes:
        names = statement_names(node)
        binds |= names.binds
        now |= names.now
        later |= names.later
        writes |= names.global_writes
    return Unit(
        cell=cell,
        first=first,
        last=last,
        nodes=tuple(nodes),
        binds=frozenset(binds),
        now_reads=frozenset(now),
        later_reads=frozenset(later),
        global_writes=frozenset(writes),
        is_import=all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes),
        root=any(_is_root(n) for n in nodes),
        index=index,
    )


def _decorators(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.decorator_list
    return []


def import_aliases(units: list[Unit]) -> dict[str, str]:
    """Name -> dotted path for every name a top-level import binds (``np`` -> ``numpy``)."""
    aliases: dict[str, str] = {}
    for unit in units:
        for node in unit.nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    if alias.name != "*":
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


# -- what a statement does to shared objects ----------------------------------------------------


def _root_name(node: ast.expr) -> str | None:
    """The name an attribute/subscript/call chain starts from (``df`` of ``df.a[0].b()``)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """``np.random.seed`` -> ``numpy.random.seed`` when the chain starts at an import."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    base = aliases.get(node.id, node.id)
    return ".".join([base, *reversed(parts)])


def _top_level_nodes(unit: Unit) -> Iterator[ast.AST]:
    """The nodes that run at import: function, lambda and class bodies are not entered."""
    stack: list[ast.AST] = list(unit.nodes)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)) and (
        isinstance(node, ast.AugAssign) or node.value is not None
    ):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    if isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
        items = [node.target] if isinstance(node, (ast.For, ast.AsyncFor)) else []
        if isinstance(node, (ast.With, ast.AsyncWith)):
            items = [i.optional_vars for i in node.items if i.optional_vars is not None]
        return items
    return []


def _changed_through(target: ast.expr) -> Iterator[ast.expr]:
    """The attribute/subscript targets inside an assignment target (tuples unpacked)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _changed_through(element)
    elif isinstance(target, ast.Starred):
        yield from _changed_through(target.value)
    elif isinstance(target, (ast.Attribute, ast.Subscript)):
        yield target


def _assigned_through(node: ast.AST) -> Iterator[ast.expr]:
    """The attribute/subscript targets ``node`` assigns into (or deletes)."""
    for target in _targets(node):
        yield from _changed_through(target)


def _is_display_call(callee: str | None) -> bool:
    if callee is None:
        return False
    return callee in DISPLAY_FUNCTIONS or callee.startswith(_DISPLAY_PREFIXES)


@frozen
class Effects:
    """What a statement does besides binding names."""

    shared_state: bool  # changes process state every function shares
    changed: frozenset[str]  # names whose objects it may change without rebinding them
    # The library whose display settings are all the shared state it changes (a plot style,
    # pandas display options): that state matters only to code using that library.
    display: str | None = None


def effects(unit: Unit, aliases: dict[str, str], writers: dict[str, frozenset[str]]) -> Effects:
    """One walk over what the statement runs at import (see the module docstring).

    Shared state: a call of a known setter through an import, a mutating method on a
    module's attribute (``sys.path.append``), an assignment into a module
    (``pd.options.x = 1``). A changed object: an assignment into it, a method on it that is
    not read-only, ``inplace=``, passing it to a call that does not only display, calling a
    local function that rebinds a global."""
    touched: list[str] = []  # the dotted names of the shared state it changes
    changed: set[str] = set()
    for node in _top_level_nodes(unit):
        for target in _targets(node):
            for through in _changed_through(target):
                root = _root_name(through)
                if root is not None:
                    changed.add(root)
                    if root in aliases:
                        touched.append(_dotted_target(through, aliases))
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in NAMESPACE_WRITERS:
                touched.append(f"builtins.{func.id}")  # may bind any module name
            if _shared_call(node, aliases):
                touched.append(_dotted(node.func, aliases) or "")
            changed |= _changed_by_call(node, aliases, writers)
    libraries = {_display_library(name) for name in touched}
    display = libraries.pop() if len(libraries) == 1 else None
    return Effects(shared_state=bool(touched), changed=frozenset(changed), display=display)


def _dotted_target(node: ast.expr, aliases: dict[str, str]) -> str:
    """``pd.options.display.max_rows`` / ``plt.rcParams["x"]`` as a dotted name."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return _dotted(node, aliases) or ""


def _display_library(dotted: str) -> str | None:
    top = dotted.split(".", 1)[0]
    if top in DISPLAY_LIBRARIES or dotted in DISPLAY_SETTINGS:
        return top
    if dotted.startswith("pandas.options."):
        return "pandas"
    return None


def _shared_call(node: ast.Call, aliases: dict[str, str]) -> bool:
    callee = _dotted(node.func, aliases)
    if callee is None or _root_name(node.func) not in aliases:
        return False
    last = callee.rsplit(".", 1)[-1]
    return (
        callee in SHARED_STATE_CALLS
        or (callee.count(".") >= 2 and last in MUTATING_METHODS)
        or (bool(_SHARED_NAME.match(last)) and not callee.startswith(_DISPLAY_PREFIXES))
    )


def _changed_by_call(
    node: ast.Call, aliases: dict[str, str], writers: dict[str, frozenset[str]]
) -> set[str]:
    changed: set[str] = set()
    func = node.func
    inplace = any(
        k.arg == "inplace" and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in node.keywords
    )
    if inplace or (isinstance(func, ast.Attribute) and func.attr not in READ_ONLY_METHODS):
        root = _root_name(func.value if isinstance(func, ast.Attribute) else func)
        if root is not None:
            changed.add(root)
    if isinstance(func, ast.Name) and func.id in writers:
        changed |= writers[func.id]
    if isinstance(func, ast.Attribute) and f".{func.attr}" in writers:  # a notebook method
        changed |= writers[f".{func.attr}"]
    callee = _dotted(func, aliases)
    library = _root_name(func) in aliases and callee not in IN_PLACE_FUNCTIONS
    for keyword in node.keywords:
        if keyword.arg == "out":
            root = _root_name(keyword.value)
            if root is not None:
                changed.add(root)
    if not library and not _is_display_call(callee):
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            value = arg.value if isinstance(arg, ast.Starred) else arg
            # the object itself, or one reached from it (``STOP["en"]``, ``SEEN.append``)
            if isinstance(value, ast.Name | ast.Attribute | ast.Subscript):
                root = _root_name(value)
                if root is not None:
                    changed.add(root)
    return changed


# -- the slice ---------------------------------------------------------------------------------


def selected_names(select: "Sequence[str] | None") -> frozenset[str] | None:
    """The function names a ``--select`` names (``f``, ``module.f``, ``python:module:f``)."""
    if not select:
        return None
    return frozenset(item.rsplit(":", 1)[-1].rsplit(".", 1)[-1] for item in select)


def slice_cells(
    cells: tuple[tuple[int, tuple[str, ...]], ...],
    parse_cell: Callable[[str], ast.Module],
    selected: frozenset[str] | None = None,
) -> SliceResult | None:
    """The sliced module, or ``None`` when a cell does not parse (the front end then
    reports the syntax error on the whole module). ``selected``: the functions
    ``--select`` names; when the notebook defines each of them at top level, the other
    definitions are kept only when something kept reads them (so one helper reading the
    notebook's DataFrame does not keep its loading for the others)."""
    parsed: list[tuple[int, ast.Module]] = []
    for index, lines in cells:
        try:
            parsed.append((index, parse_cell("\n".join(lines))))
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return None
    units = units_of(parsed)
    aliases = import_aliases(units)
    kept, display = keep(units, aliases, _narrowed(units, selected))
    return _render(cells, units, kept, display)


def _narrowed(units: list[Unit], selected: frozenset[str] | None) -> frozenset[str] | None:
    """``selected`` when every name in it is a top-level definition of the notebook, else
    ``None`` (an unknown name is reported by the selection, with every function listed)."""
    if not selected:
        return None
    defined = {
        node.name
        for unit in units
        for node in unit.nodes
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    return selected if selected <= defined else None


def keep(
    units: list[Unit], aliases: dict[str, str], selected: frozenset[str] | None = None
) -> tuple[set[int], dict[int, str]]:
    """Indexes of the units the slice keeps (see the module docstring), and for each
    display-settings statement left out, the library whose settings it changes.

    One worklist, each fact scheduled once: a name's binders are scheduled as a prefix of
    their (sorted) list, and a name first read schedules the statements that change its
    object and, for an import, the display settings of its library (rescanning every
    binder per reader, or every change per round, would be quadratic)."""
    binders: dict[str, list[int]] = {}
    for unit in units:
        for name in unit.binds:
            binders.setdefault(name, []).append(unit.index)
    found, display, groups, changers = _changes(units, aliases)
    objects_read: set[str] = set()
    settings: dict[str, list[int]] = {}
    for index, library in display.items():
        settings.setdefault(library, []).append(index)
    work = [
        u.index
        for u in units
        if (u.root and _is_selected(u, selected))
        or (not u.root and found[u.index].shared_state and u.index not in display)
    ]
    scheduled: dict[str, int] = {}  # name -> how many of its binders are in the work already

    def bound_before(name: str, index: int) -> None:
        indexes = binders.get(name, [])
        start, end = scheduled.get(name, 0), bisect_left(indexes, index)
        if end > start:
            work.extend(indexes[start:end])
            scheduled[name] = end

    kept: set[int] = set()
    read: set[str] = set()
    while work:
        index = work.pop()
        if index in kept:
            continue
        kept.add(index)
        unit = units[index]
        for name in unit.now_reads:
            bound_before(name, index)
        for name in unit.later_reads:
            bound_before(name, len(units))
        for name in (unit.now_reads | unit.later_reads) - read:
            read.add(name)
            key = groups.get(name, name)
            if key not in objects_read:
                objects_read.add(key)
                work.extend(changers.get(key, ()))
            if name in aliases:
                work.extend(settings.get(aliases[name].split(".", 1)[0], ()))
            if name in NAMESPACE_READERS and name not in binders:
                work.extend(u.index for u in units if u.binds)
    return kept, {i: library for i, library in display.items() if i not in kept}


def _changes(
    units: list[Unit], aliases: dict[str, str]
) -> tuple[dict[int, Effects], dict[int, str], dict[str, str], dict[str, list[int]]]:
    """What each non-root unit does (its effects), the display-settings statements among
    them (by the library they set), the alias groups of the notebook's objects, and the
    units that change each object, filed under its group (a name for it), each once."""
    writers = function_writers(
        [u.nodes for u in units],
        lambda call, known: _changed_by_call(call, aliases, known),
        _assigned_through,
    )
    found = {u.index: effects(u, aliases, writers) for u in units if not u.root}
    display = {i: e.display for i, e in found.items() if e.shared_state and e.display}
    # names bound by statements or only through ``global`` in a function (``_S().go(3)``)
    object_names = {n for u in units if not u.is_import for n in (*u.binds, *u.global_writes)}
    groups = alias_groups(
        (n for u in units if not u.root for n in _top_level_nodes(u)), object_names
    )
    changers: dict[str, list[int]] = {}
    for index, effect in found.items():
        for key in {groups.get(name, name) for name in effect.changed & object_names}:
            changers.setdefault(key, []).append(index)
    return found, display, groups, changers


def _is_selected(unit: Unit, selected: frozenset[str] | None) -> bool:
    """A root unit stays one unless ``--select`` narrows the slice and it only defines
    functions or classes the selection does not name."""
    if selected is None:
        return True
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return any(not isinstance(n, definitions) or n.name in selected for n in unit.nodes)


def _render(
    cells: tuple[tuple[int, tuple[str, ...]], ...],
    units: list[Unit],
    kept: set[int],
    display: dict[int, str],
) -> SliceResult:
    by_cell: dict[int, list[Unit]] = {}
    for unit in units:
        by_cell.setdefault(unit.cell, []).append(unit)
    # Jupyter compiles each cell alone, so `from __future__` may open any cell; a module
    # takes it only at its top: those imports go first (their spans keep their cells).
    future = {u.index for u in units if u.root and all(_is_future(n) for n in u.nodes)}
    numbered: list[tuple[int, list[tuple[int, str]]]] = []
    for index, lines in cells:
        hoisted = [
            (number, lines[number - 1])
            for u in by_cell.get(index, [])
            if u.index in future
            for number in range(u.first, min(u.last, len(lines)) + 1)
        ]
        if hoisted:
            numbered.append((index, hoisted))
    notes: list[Diagnostic] = []
    served = kept - future  # once, not per line (quadratic in a long cell)
    for index, lines in cells:
        cell_units = by_cell.get(index, [])
        owner = _owners(cell_units, len(lines))
        chosen = [
            (number, line)
            for number, line in enumerate(lines, start=1)
            if owner[number] is not None and owner[number] in served
        ]
        if any(u.index in served for u in cell_units):
            numbered.append((index, chosen))
        for unit in cell_units:
            if unit.index not in kept:
                notes.append(_left_out(unit, lines, display.get(unit.index)))
    text, line_map = join_numbered(numbered)
    if notes:  # what `inspect` says the served module holds, in one line
        cells_kept = sorted({i for i, _ in numbered})
        shown = ", ".join(map(str, cells_kept)) if cells_kept else "none"
        notes.insert(
            0,
            diag(
                F012_LEFT_OUT,
                f"the slice keeps {len(kept)} of {len(units)} top-level statements "
                f"(cells {shown}); each statement left out is noted below",
                None,
            ),
        )
    return SliceResult(
        text=text,
        line_map=line_map,
        diagnostics=tuple(notes),
        kept_cells=tuple(sorted({i for i, _ in numbered})),
    )


def _is_future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _owners(cell_units: list[Unit], count: int) -> list[int | None]:
    """For each line of a cell (1-based; index 0 unused), the unit it goes with: its own
    statement's, and for a blank or comment line the next statement's (a comment above a
    definition stays with it), else the last one's."""
    owner: list[int | None] = [None] * (count + 1)
    for unit in cell_units:
        for number in range(unit.first, min(unit.last, count) + 1):
            owner[number] = unit.index
    following = cell_units[-1].index if cell_units else None
    for number in range(count, 0, -1):
        if owner[number] is None:
            owner[number] = following
        else:
            following = owner[number]
    return owner


def _left_out(unit: Unit, lines: tuple[str, ...], display: str | None) -> Diagnostic:
    first_line = lines[unit.first - 1] if unit.first <= len(lines) else ""
    last_line = lines[unit.last - 1] if unit.last <= len(lines) else ""
    bound = sorted(n for n in unit.binds if not n.startswith("__"))
    names = ", ".join(bound[:4]) + ("..." if len(bound) > 4 else "")
    if display:
        why = f"changes {display} display settings, and nothing served uses {display}"
    elif bound:
        why = f"binds {names}, which nothing served reads"
    else:
        why = "nothing served reads what it does"
    span = Span(
        line=unit.first,
        column=0,
        end_line=unit.last,
        end_column=len(last_line),
        cell=unit.cell,
    )
    return diag(
        F012_LEFT_OUT,
        f"left out by the slice: {short(first_line.strip(), 50)!r} ({why})",
        span,
    )


__all__ = ["Effects", "SliceResult", "effects", "keep", "slice_cells", "units_of"]
