"""Notebook code cells → one Python module, with IPython syntax removed.

A cell that parses as Python is kept byte for byte (``%`` can legally start a
continuation line). A cell that does not is cleaned line by line: a cell magic (``%%``)
drops the whole cell; line magics, help queries and shell escapes (``!``, ``x = !ls``)
are removed, each with a diagnostic naming the cell and line.
"""

import re
from collections.abc import Callable

from attrs import frozen
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import F004_LINE_MAGIC, F005_CELL_MAGIC, F006_SHELL_ESCAPE
from svcc.frontends.python import short
from svcc.ir.model import Span

_ASSIGN_MAGIC = re.compile(r"^\s*[\w.,\s\[\]]+=\s*([!%])")
_TRIPLE = re.compile(r"'''|\"\"\"")


@frozen
class Cell:
    index: int  # 1-based position among all cells
    source: str
    tags: tuple[str, ...] = ()  # the cell's metadata ``tags``
    execution_count: int | None = None


@frozen
class Converted:
    text: str
    line_map: tuple[tuple[int, int], ...]
    diagnostics: tuple[Diagnostic, ...]
    # Each kept cell's index and its lines with IPython syntax removed (what ``text`` joins).
    cells: tuple[tuple[int, tuple[str, ...]], ...] = ()


def _span(cell: int, line: int, width: int) -> Span:
    return Span(line=line, column=0, end_line=line, end_column=width, cell=cell)


def _clean_cell(cell: Cell, diagnostics: list[Diagnostic]) -> list[str] | None:
    """The cell's lines with IPython syntax blanked, or ``None`` when the cell is dropped."""
    lines = cell.source.split("\n")
    first = next((ln for ln in lines if ln.strip()), "")
    if first.lstrip().startswith("%%"):
        number = lines.index(first) + 1
        diagnostics.append(
            diag(
                F005_CELL_MAGIC,
                f"cell magic {first.strip().split()[0]} dropped the whole cell",
                _span(cell.index, number, len(first)),
            )
        )
        return None
    out: list[str] = []
    in_string: str | None = None
    continuing = False
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if in_string is None and (continuing or _is_ipython(stripped, line)):
            indent = line[: len(line) - len(line.lstrip())]
            if not continuing:
                code, what = (
                    (F006_SHELL_ESCAPE, "shell escape")
                    if _is_shell(stripped, line)
                    else (F004_LINE_MAGIC, "line magic")
                )
                diagnostics.append(
                    diag(
                        code,
                        f"{what} {short(stripped, 50)!r} removed",
                        _span(cell.index, number, len(line)),
                    )
                )
            continuing = stripped.endswith("\\")
            out.append(f"{indent}pass" if indent else "")
            continue
        for match in _TRIPLE.finditer(line):
            quote = match.group(0)
            if in_string is None:
                in_string = quote
            elif in_string == quote:
                in_string = None
        out.append(line)
    return out


def _is_shell(stripped: str, line: str) -> bool:
    match = _ASSIGN_MAGIC.match(line)
    return stripped.startswith("!") or bool(match and match.group(1) == "!")


def _is_ipython(stripped: str, line: str) -> bool:
    if not stripped or stripped.startswith("#"):
        return False
    code = stripped.split("#", 1)[0].rstrip()
    return stripped[0] in "%!?" or code.endswith("?") or bool(_ASSIGN_MAGIC.match(line))


def convert(cells: list[Cell], parses: Callable[[str], bool]) -> Converted:
    """Join code cells into one module; ``parses(text)`` says whether a cell is plain Python.

    Each cell is preceded by a ``# %% [cell N]`` marker (the percent format editors read),
    and the line map sends every module line back to ``(cell, line in cell)``.
    """
    diagnostics: list[Diagnostic] = []
    kept: list[tuple[int, tuple[str, ...]]] = []
    for cell in cells:
        cell_lines: list[str] | None
        cell_lines = (
            cell.source.split("\n") if parses(cell.source) else _clean_cell(cell, diagnostics)
        )
        if cell_lines is None:
            continue
        kept.append((cell.index, tuple(cell_lines)))
    text, line_map = join(kept)
    return Converted(
        text=text, line_map=line_map, diagnostics=tuple(diagnostics), cells=tuple(kept)
    )


def marker(index: int) -> str:
    """The line that opens a cell in the module (the percent format editors read)."""
    return f"# %% [cell {index}]"


def join(cells: "list[tuple[int, tuple[str, ...]]]") -> tuple[str, tuple[tuple[int, int], ...]]:
    """Cells (index, lines) -> the module text and the map of every module line back to
    ``(cell, line in cell)``."""
    return join_numbered([(i, list(enumerate(ls, start=1))) for i, ls in cells])


def join_numbered(
    cells: "list[tuple[int, list[tuple[int, str]]]]",
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """As :func:`join`, with each line's number in its cell given (a slice keeps some)."""
    lines: list[str] = []
    line_map: list[tuple[int, int]] = []
    for index, numbered in cells:
        lines.append(marker(index))
        line_map.append((index, 1))
        for number, line in numbered:
            lines.append(line)
            line_map.append((index, number))
    text = "\n".join(lines) + "\n" if lines else ""
    line_map.append(line_map[-1] if line_map else (1, 1))  # the final empty line
    return text, tuple(line_map)
