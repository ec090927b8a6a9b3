"""The fixes that are mechanical, as text edits: what an editor offers as code actions.

- ``SVC-R004`` on a parameter with a literal default: annotate it with the default's type
  (``factor=2`` → ``factor: int = 2``);
- ``SVC-R028`` on a module-level statement (a ``print``, a logging call): move it under
  ``if __name__ == "__main__":`` at the end of the module, where a script still runs it
  and an import never does;
- ``SVC-R042`` (and ``SVC-R026``) on a read of a file built from ``__file__`` in a project
  with a ``pyproject.toml``: declare the file in ``[tool.svcc] data-files``.

Each fix is offered only when it is certain to be the one the reason asks for; anything
else (a default that is not a literal, a statement spanning part of a line) gets none.
Positions are 0-based lines and code-point columns, as the spans count them.
"""

import ast
import os
import posixpath
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from attrs import frozen

if TYPE_CHECKING:
    from svcc.contracts.diagnostics import Diagnostic
    from svcc.ir.model import ModuleIR, Span
    from svcc.lsp.project import FileContext

MAIN_GUARD = 'if __name__ == "__main__":'


@frozen
class Edit:
    """Replace ``start``..``end`` (``(line, column)``, 0-based) of ``uri`` with ``text``."""

    uri: str
    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@frozen
class Fix:
    title: str
    diagnostic: "Diagnostic"
    edits: tuple[Edit, ...]


def fixes(
    diagnostic: "Diagnostic",
    *,
    uri: str,
    text: str,
    ir: "ModuleIR | None",
    path: str,
    context: "FileContext | None",
) -> list[Fix]:
    """The fixes for one diagnostic of the ``.py`` document ``uri`` holding ``text``."""
    code = diagnostic.code
    if code == "SVC-R004" and ir is not None:
        return list(_annotate(diagnostic, uri, ir))
    if code == "SVC-R028":
        return list(_guard(diagnostic, uri, text))
    if code in ("SVC-R042", "SVC-R026") and ir is not None and context is not None:
        return list(_declare(diagnostic, ir, path, context))
    return []


# -- annotate a parameter from its default -------------------------------------------------------


def default_type(text: str) -> str | None:
    """The annotation a literal default suggests (``2`` → ``int``), else ``None``."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
        if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
            return None
    if isinstance(node, ast.Constant):
        value = node.value
        for kind in (bool, int, float, str):
            if type(value) is kind:
                return kind.__name__
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        inner = {default_type(ast.unparse(e)) for e in node.elts}
        if len(inner) == 1 and None not in inner:
            (item,) = inner
            return f"list[{item}]" if isinstance(node, ast.List) else f"tuple[{item}, ...]"
    return None


def _annotate(d: "Diagnostic", uri: str, ir: "ModuleIR") -> Iterator[Fix]:
    for cap in ir.capabilities:
        for param in cap.params:
            if param.span != d.span or param.default is None or param.annotation is not None:
                continue
            kind = default_type(param.default.text)
            if kind is None:
                return
            start = _start(param.span)
            end = (param.default.span.end_line - 1, param.default.span.end_column)
            yield Fix(
                f"Annotate {param.name!r} as {kind} (from its default)",
                d,
                (Edit(uri, start, end, f"{param.name}: {kind} = {param.default.text}"),),
            )
            return


# -- move an import-time statement under the main guard -------------------------------------------


def _guard(d: "Diagnostic", uri: str, text: str) -> Iterator[Fix]:
    span = d.span
    if span is None or span.cell is not None:
        return
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    statement = next((s for s in tree.body if s.lineno == span.line and s.col_offset == 0), None)
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return
    lines = text.splitlines(keepends=True)
    first, last = statement.lineno, statement.end_lineno or statement.lineno
    after = lines[last - 1][len(lines[last - 1].rstrip("\r\n")) :] or "\n"
    body = "".join(lines[first - 1 : last]).rstrip("\r\n")
    if lines[last - 1].rstrip("\r\n")[statement.end_col_offset or 0 :].strip():
        return  # something else shares the last line (``print(x); y = 1``)
    moved = "".join(f"    {line}" if line.strip() else line for line in body.splitlines(True))
    end = _end_of(lines)
    tail = "" if not lines or lines[-1].endswith(("\n", "\r")) else "\n"
    blank = "" if not lines or not lines[-1].strip() else "\n"
    yield Fix(
        f"Move the statement under `{MAIN_GUARD}`",
        d,
        (
            Edit(uri, (first - 1, 0), (last, 0), ""),
            Edit(uri, end, end, f"{tail}{blank}\n{MAIN_GUARD}\n{moved}{after}"),
        ),
    )


def _end_of(lines: list[str]) -> tuple[int, int]:
    if not lines:
        return (0, 0)
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return (len(lines), 0)
    return (len(lines) - 1, len(last))


# -- declare a data file ----------------------------------------------------------------------


def _declare(d: "Diagnostic", ir: "ModuleIR", path: str, context: "FileContext") -> Iterator[Fix]:
    root = context.project_root
    if root is None:
        return
    read = next((e for e in _evaluations(ir) if e.span == d.span and e.path), None)
    if read is None or read.path is None or read.path == "__file__":
        return
    target = os.path.normpath(os.path.join(os.path.dirname(path), read.path))
    rel = os.path.relpath(target, root).replace(os.sep, "/")
    if rel.startswith("../") or posixpath.isabs(rel):
        return
    pyproject = os.path.join(root, "pyproject.toml")
    try:
        with open(pyproject, encoding="utf-8") as handle:
            current = handle.read()
    except OSError:
        return
    from pathlib import Path

    edit = declare_data_file(current, rel)
    if edit is None:
        return
    start, end, new = edit
    yield Fix(
        f"Declare {rel} in [tool.svcc] data-files",
        d,
        (Edit(Path(pyproject).as_uri(), start, end, new),),
    )


def _evaluations(value: Any) -> Iterator[Any]:
    """Every ``Evaluation`` in the IR (capabilities' effects and reads, module statements)."""
    from svcc.ir.model import Evaluation

    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Evaluation):
            yield item
        elif isinstance(item, tuple | list):
            stack.extend(item)
        elif hasattr(item, "__attrs_attrs__"):
            stack.extend(getattr(item, a.name) for a in item.__attrs_attrs__)


_TABLE = re.compile(r"^\s*\[tool\.svcc\]\s*(#.*)?$")
_KEY = re.compile(r"^\s*data-files\s*=\s*\[")
_ANY_TABLE = re.compile(r"^\s*\[")


def declare_data_file(
    pyproject: str, rel: str
) -> tuple[tuple[int, int], tuple[int, int], str] | None:
    """The edit adding ``rel`` to ``[tool.svcc] data-files`` of the ``pyproject`` text:
    into the array when it exists, as a new key of the table, or as a new table at the end.
    ``None`` when it is declared already."""
    entry = '"' + rel.replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = pyproject.splitlines()
    in_table = False
    for number, line in enumerate(lines):
        if _TABLE.match(line):
            in_table = True
            continue
        if in_table and _ANY_TABLE.match(line):
            break
        if in_table and _KEY.match(line):
            if entry in line:
                return None
            column = line.index("[") + 1
            closing = line[column:].lstrip().startswith("]")
            return (number, column), (number, column), entry + ("" if closing else ", ")
    for number, line in enumerate(lines):
        if _TABLE.match(line):
            return (number + 1, 0), (number + 1, 0), f"data-files = [{entry}]\n"
    end = len(lines)
    lead = "\n" if lines and lines[-1].strip() else ""
    if pyproject and not pyproject.endswith("\n"):
        return (
            (end - 1, len(lines[-1])),
            (end - 1, len(lines[-1])),
            (f"\n{lead}[tool.svcc]\ndata-files = [{entry}]\n"),
        )
    return (end, 0), (end, 0), f"{lead}[tool.svcc]\ndata-files = [{entry}]\n"


def _start(span: "Span") -> tuple[int, int]:
    return (span.line - 1, span.column)
