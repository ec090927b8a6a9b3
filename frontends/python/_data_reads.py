"""Facts about the files a capability's body reads: the call, and the path when the source
spells it (see :mod:`svcc.compiler.passes.data_reads`, which judges them).

Only calls of the shared read table are recorded, with a path built from ``__file__`` (what
the module-level facts record as ``Evaluation.path``) or a literal relative path
(``Evaluation.literal``): ``"catalog.json"``, ``Path("data") / "train.csv"``,
``os.path.join("data", "train.csv")``.
"""

import ast
import posixpath
from collections.abc import Callable

from svcc.compiler.passes.data_reads import reads_file
from svcc.compiler.passes.effects import normalise
from svcc.frontends.python._effects import argument_names
from svcc.ir.model import Evaluation, Span

_PATHS = frozenset({"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.PurePosixPath"})


def data_read(
    call: ast.Call,
    resolve: Callable[[ast.expr], str],
    qualify: Callable[[ast.expr], str | None],
    read_path: Callable[[ast.Call], str | None],
    span: Span,
) -> Evaluation | None:
    """The read ``call`` makes of a file whose path the source spells, or ``None``."""
    callee = normalise(resolve(call.func))
    if not reads_file(callee) or not _reading(call, callee):
        return None
    path = read_path(call)
    literal = None
    if path is None:
        target = call.func.value if isinstance(call.func, ast.Attribute) and callee.startswith(
            "pathlib.Path()."
        ) else (call.args[0] if call.args else None)
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
        span=span,
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
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) <= set("rbt")


def _literal_path(node: ast.expr, qualify: Callable[[ast.expr], str | None]) -> str | None:
    """``node`` as a literal relative (or absolute) path, when the source spells it."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value or None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _literal_path(node.left, qualify), _literal_path(node.right, qualify)
        return posixpath.join(left, right) if left and right else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
        qual = qualify(node.func)
        parts = [_literal_path(a, qualify) for a in node.args]
        if qual in _PATHS | {"os.path.join"} and parts and all(parts) and not node.keywords:
            return posixpath.join(*parts)  # type: ignore[arg-type]
    return None
