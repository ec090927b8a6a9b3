"""Facts about the files a capability's body reads: the call, and the path when the source
spells it (see :mod:`svcc.compiler.passes.data_reads`, which judges them).

Only calls of the shared read table are recorded, with a path built from ``__file__`` (what
the module-level facts record as ``Evaluation.path``) or a literal relative path
(``Evaluation.literal``): ``"catalog.json"``, ``Path("data") / "train.csv"``,
``os.path.join("data", "train.csv")``; spelt in the call or held by a local name the body
binds once (:func:`bound_once`, :func:`through_name`).
"""

import ast
import posixpath
import re
from collections.abc import Callable
from typing import Final

from svcc.frontends.python._effects import argument_names
from svcc.ir.model import Evaluation, Span

# Callables that read a file whose path is their first argument (or, for a method, their
# receiver). Reviewed one by one; the one table of both rules (reads at import:
# ``compiler/passes/effects.py``; reads on every call: ``compiler/passes/data_reads.py``).
# An entry ending in ``_`` covers what starts with it.
DATA_READERS: Final = (
    "builtins.open", "io.open", "pathlib.Path().read_text", "pathlib.Path().read_bytes",
    "pathlib.Path().open", "joblib.load", "numpy.load", "numpy.loadtxt", "numpy.genfromtxt",
    "pandas.read_", "polars.read_", "torch.load",
)  # fmt: skip

_PATHS: Final = frozenset(
    {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.PurePosixPath"}
)

# ``pathlib.Path()`` followed by steps that keep a path a path (arithmetic, not reads).
_PATH_STEPS = re.compile(
    r"^pathlib\.(?:Pure(?:Posix|Windows)?)?(?:Posix)?Path\(\)"
    r"(?:\.parent|\.parents\[\]|\.resolve\(\)|\.absolute\(\)|\.joinpath\(\)|\.with_name\(\)"
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
    if path is None:
        target = (
            call.func.value
            if isinstance(call.func, ast.Attribute) and callee.startswith("pathlib.Path().")
            else (call.args[0] if call.args else None)
        )
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


def bound_once(body: list[ast.stmt], params: set[str]) -> dict[str, ast.stmt]:
    """Local names a read may be followed through: bound exactly once in ``body``, by one of
    its own statements ``name = value`` (not under ``if``/``for``/``try``: a conditional
    binding may not be the one the read sees), and neither a parameter nor declared
    ``global``/``nonlocal``. Any other binding of the name anywhere in the body (a nested
    scope's included) disqualifies it: a name that may hold another value is never judged."""
    counts: dict[str, int] = {}
    for stmt in body:
        for node in ast.walk(stmt):
            for name in _bound_names(node):
                counts[name] = counts.get(name, 0) + 1
    found: dict[str, ast.stmt] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target = stmt.target
        else:
            continue
        if isinstance(target, ast.Name) and counts.get(target.id) == 1 and target.id not in params:
            found[target.id] = stmt
    return found


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


def through_name(
    call: ast.Call,
    resolve: Callable[[ast.expr], str],
    bound: Callable[[], dict[str, ast.stmt]],
) -> ast.Call | None:
    """``call`` with the name it reads through (the receiver of ``.read_text()`` and the
    like, or a read callable's first argument) replaced by the value the name was bound to,
    when that binding is :func:`bound_once`'s (``bound``, asked only for a read) and comes
    before the call; else ``None``."""
    func = call.func
    receiver = (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.attr in _PATH_READS
    )
    if receiver:
        used = func.value  # type: ignore[attr-defined]
    elif call.args and isinstance(call.args[0], ast.Name) and reads_file(normalise(resolve(func))):
        used = call.args[0]
    else:
        return None
    stmt = bound().get(used.id)
    if stmt is None or not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
        return None
    if (call.lineno, call.col_offset) < (stmt.end_lineno or 0, stmt.end_col_offset or 0):
        return None  # used before it is bound
    if receiver:
        attribute = ast.copy_location(
            ast.Attribute(value=stmt.value, attr=func.attr, ctx=ast.Load()),  # type: ignore[attr-defined]
            func,
        )
        replaced = ast.Call(func=attribute, args=call.args, keywords=call.keywords)
    else:
        replaced = ast.Call(func=func, args=[stmt.value, *call.args[1:]], keywords=call.keywords)
    return ast.copy_location(replaced, call)
