"""Which argument of a file-opening callable is the path, and whether a parameter reaches it.

A served function that opens, lists, copies or removes a path its caller chose lets every
caller reach the server's files (the ``paths`` security effect, ``SVC-R036``). The front end
judges the *path argument* of every reviewed callable in :data:`PATH_ARGUMENTS` (the
argument's position and its name in the real library's signature: ``tests/
test_hostile_third_front.py`` checks each against the installed library), on every call in
the body, with the path followed through local names derived from a parameter (``full =
os.path.join(BASE, name)``) and through the module's own functions that pass their
parameter on to such a call (``def _read(p): return json.load(open(p))``, a bounded number
of calls deep). Public: the readiness pass's ``PATH_CALLS`` table includes these keys.
"""

import ast
from collections.abc import Callable, Iterator, Mapping
from typing import Final

from svcc.frontends.python._walk import walk
from svcc.ir.model import Capability, Evaluation, Span
from svcc.ir.records import evolve

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

# Callable (its origin, as ``_effects.origin`` names it) -> the path arguments: (position,
# name in its signature); a name starting with ``*`` takes every positional argument from
# that position on (``Path(*parts)``).
PATH_ARGUMENTS: Final[dict[str, tuple[tuple[int, str], ...]]] = {
    "builtins.open": ((0, "file"),),
    "io.open": ((0, "file"),),
    "os.open": ((0, "path"),),
    "gzip.open": ((0, "filename"),),
    "bz2.open": ((0, "filename"),),
    "lzma.open": ((0, "filename"),),
    "tarfile.open": ((0, "name"),),
    "zipfile.ZipFile": ((0, "file"),),
    "glob.glob": ((0, "pathname"), (1, "root_dir")),
    "glob.iglob": ((0, "pathname"), (1, "root_dir")),
    "pathlib.Path": ((0, "*args"),),
    "pathlib.Path().glob": ((0, "pattern"),),
    "pathlib.Path().rglob": ((0, "pattern"),),
    "os.listdir": ((0, "path"),),
    "os.scandir": ((0, "path"),),
    "os.walk": ((0, "top"),),
    "os.stat": ((0, "path"),),
    "os.remove": ((0, "path"),),
    "os.unlink": ((0, "path"),),
    "os.rmdir": ((0, "path"),),
    "os.makedirs": ((0, "name"),),
    "os.rename": ((0, "src"), (1, "dst")),
    "os.replace": ((0, "src"), (1, "dst")),
    "shutil.copy": ((0, "src"), (1, "dst")),
    "shutil.copy2": ((0, "src"), (1, "dst")),
    "shutil.copyfile": ((0, "src"), (1, "dst")),
    "shutil.copytree": ((0, "src"), (1, "dst")),
    "shutil.move": ((0, "src"), (1, "dst")),
    "shutil.rmtree": ((0, "path"),),
    "pandas.read_csv": ((0, "filepath_or_buffer"),),
    "pandas.read_table": ((0, "filepath_or_buffer"),),
    "pandas.read_fwf": ((0, "filepath_or_buffer"),),
    "pandas.read_json": ((0, "path_or_buf"),),
    "pandas.read_parquet": ((0, "path"),),
    "pandas.read_feather": ((0, "path"),),
    "pandas.read_excel": ((0, "io"),),
    "pandas.read_pickle": ((0, "filepath_or_buffer"),),
    "pandas.read_hdf": ((0, "path_or_buf"),),
    "pandas.read_xml": ((0, "path_or_buffer"),),
    "pandas.read_html": ((0, "io"),),
    "pandas.read_stata": ((0, "filepath_or_buffer"),),
    "pandas.read_sas": ((0, "filepath_or_buffer"),),
    "pandas.read_orc": ((0, "path"),),
    "numpy.load": ((0, "file"),),
    "numpy.loadtxt": ((0, "fname"),),
    "numpy.genfromtxt": ((0, "fname"),),
    "numpy.fromfile": ((0, "file"),),
    "numpy.save": ((0, "file"),),
    "numpy.savetxt": ((0, "fname"),),
}
_DEPTH: Final = 3  # the module's functions followed, calls deep
# The last part of every opener's name: a call spelled otherwise is not resolved at all.
_LAST_PARTS: Final = frozenset(name.rsplit(".", 1)[-1] for name in PATH_ARGUMENTS)


def path_arguments(call: ast.Call, spec: tuple[tuple[int, str], ...]) -> list[ast.expr]:
    """The expressions ``call`` passes as the path arguments ``spec`` names."""
    out: list[ast.expr] = []
    for position, name in spec:
        rest = name.startswith("*")
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):  # where it lands is unknown: it may be the path
                out.append(arg.value)
            elif index == position or (rest and index > position):
                out.append(arg)
        out.extend(k.value for k in call.keywords if k.arg == name.lstrip("*") or k.arg is None)
    return out


def _names(nodes: list[ast.expr]) -> set[str]:
    return {n.id for node in nodes for n in walk(node) if type(n) is ast.Name}


def _assignments(nodes: list[ast.AST]) -> Iterator[tuple[list[ast.expr], ast.expr]]:
    """(targets, value) of the body's bindings that carry a value on (``nodes``: a walk)."""
    binders = _BINDERS
    for node in nodes:
        if type(node) not in binders:  # most nodes: one test (exact types, as the parser's)
            continue
        if isinstance(node, ast.Assign):
            yield node.targets, node.value
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
            if node.value is not None:
                yield [node.target], node.value
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            yield [node.target], node.iter
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    yield [item.optional_vars], item.context_expr


# The nodes ``_assignments`` reads.
_BINDERS: Final = frozenset(
    {
        ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor,
        ast.comprehension, ast.With, ast.AsyncWith,
    }
)  # fmt: skip


def derived(nodes: list[ast.AST], params: set[str]) -> dict[str, set[str]]:
    """Each local name derived from a parameter -> the parameters it is derived from
    (``full = os.path.join(BASE, name)``: ``full`` -> ``{"name"}``), to a fixed point."""
    out: dict[str, set[str]] = {p: {p} for p in params}
    pairs = [(_names(targets), _names([value])) for targets, value in _assignments(nodes)]
    grown = True
    while grown:
        grown = False
        for targets, reads in pairs:
            sources = set().union(*(out[r] for r in reads if r in out))
            for target in targets:
                if not sources <= out.get(target, set()):
                    out.setdefault(target, set()).update(sources)
                    grown = True
    return out


def _local(func: ast.expr, callee: str, functions: Mapping[str, FunctionNode]) -> bool:
    return callee.startswith("local.") or (isinstance(func, ast.Name) and func.id in functions)


class PathFlow:
    """The path-argument facts of the module's functions (memoised; a cycle is none)."""

    def __init__(
        self,
        functions: Mapping[str, FunctionNode],
        resolve: Callable[[ast.expr], str],
        nodes: Callable[[ast.AST], list[ast.AST]] = walk,
    ) -> None:
        self.functions = functions
        self.resolve = resolve
        self.nodes = nodes  # ``walk``, possibly memoised by the caller
        self._memo: dict[str, dict[int, str]] = {}

    def opened(
        self,
        fn: FunctionNode,
        params: set[str],
        depth: int = 0,
        calls: list[ast.Call] | None = None,
    ) -> Iterator[tuple[ast.Call, str, set[str], str]]:
        """(call, the opener's origin, the parameters reaching its path, the local
        function it goes through or ``""``) for each call of ``fn``'s body whose path
        argument a parameter reaches; ``calls``: the body's calls when already found."""
        found: list[tuple[ast.Call, str, tuple[tuple[int, str], ...] | None, str]] = []
        if calls is None:
            calls = [n for n in self.nodes(fn) if type(n) is ast.Call]
        for node in calls:
            func = node.func
            last = func.id if type(func) is ast.Name else getattr(func, "attr", None)
            if last not in _LAST_PARTS and last not in self.functions:
                continue  # no opener and no function of the module: not resolved
            callee = self.resolve(func)
            if _local(func, callee, self.functions) and isinstance(func, ast.Name):
                callee = f"local.{func.id}"
            spec = PATH_ARGUMENTS.get(callee)
            if spec is not None:
                found.append((node, callee, spec, ""))
            elif _local(func, callee, self.functions) and depth < _DEPTH:
                name = callee[len("local.") :] if callee.startswith("local.") else callee
                if self._passes_on(name, depth):
                    found.append((node, callee, None, name))
        if not found:
            return
        flows = derived(self.nodes(fn), params)
        for node, callee, spec, name in found:
            if spec is not None:
                reached = set().union(
                    *(flows[n] for n in _names(path_arguments(node, spec)) if n in flows)
                )
                if reached:
                    yield node, callee, reached, ""
            else:
                for position, opener in self._passes_on(name, depth).items():
                    args = [a for i, a in enumerate(node.args) if i == position]
                    target = self._param_name(name, position)
                    args += [k.value for k in node.keywords if k.arg == target]
                    reached = set().union(*(flows[n] for n in _names(args) if n in flows))
                    if reached:
                        yield node, opener, reached, name

    def _param_name(self, name: str, position: int) -> str | None:
        fn = self.functions.get(name)
        if fn is None:
            return None
        positional = [*fn.args.posonlyargs, *fn.args.args]
        return positional[position].arg if position < len(positional) else None

    def _passes_on(self, name: str, depth: int) -> dict[int, str]:
        """Position of each parameter of the module's function ``name`` that reaches a path
        argument -> the opener's origin."""
        if name in self._memo:
            return self._memo[name]
        self._memo[name] = {}  # a cycle passes nothing on
        fn = self.functions.get(name)
        if fn is None:
            return {}
        positional = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        found: dict[int, str] = {}
        for _, opener, reached, _ in self.opened(fn, set(positional), depth + 1):
            # in the parameters' order, not the set's: the first position a caller passes
            # names the effect, and a set's order changes with the hash seed
            for param in sorted(reached, key=positional.index):
                found.setdefault(positional.index(param), opener)
        self._memo[name] = found
        return found


def with_path_reads(
    capabilities: dict[str, Capability],
    nodes: Mapping[str, FunctionNode],
    flow: PathFlow,
    span: Callable[[ast.AST], Span],
    calls: Mapping[str, list[ast.Call]] | None = None,
) -> dict[str, Capability]:
    """The capabilities, each with a ``call`` effect per opener whose path argument one of
    its parameters reaches (first per opener and function gone through)."""
    out: dict[str, Capability] = {}
    for key, cap in capabilities.items():
        fn = nodes.get(key)
        params = {p.name for p in cap.params}
        added: dict[tuple[str, str], Evaluation] = {}
        # the calls the body's own facts record already with a parameter they read
        known = {(e.callee, e.span) for e in cap.effects if params & set(e.names)}
        found = flow.opened(fn, params, calls=(calls or {}).get(key)) if fn else ()
        for call, opener, reached, through in found:
            if not through and (opener, span(call)) in known:
                continue
            text = (
                f"call to {through}(), which passes its argument to {opener}()"
                if through
                else f"call to {opener}()"
            )
            added.setdefault(
                (opener, through),
                Evaluation(
                    kind="call",
                    text=text,
                    callee=opener,
                    names=tuple(sorted(reached)),
                    span=span(call),
                ),
            )
        if not added:
            out[key] = cap
            continue
        effects = sorted(
            [*cap.effects, *added.values()], key=lambda e: (e.span.line, e.span.column)
        )
        out[key] = evolve(cap, effects=tuple(effects))
    return out


__all__ = ["PATH_ARGUMENTS", "PathFlow", "derived", "path_arguments", "with_path_reads"]
