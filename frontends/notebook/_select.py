"""Which code cells form the module, by the conventions notebook authors already use.

- Cell metadata tags (Jupyter Book, nbclient, papermill): ``skip-execution``, ``remove-cell``,
  ``svcc:skip``, or ``remove-input`` together with ``remove-output``, leave a cell out (a
  cell whose input alone is hidden still runs, so it stays).
- Quarto/nbdev cell options: ``#| eval: false`` leaves a cell out.
- nbdev export directives (``#| export``, ``#| exports``, ``#| exporti``, and nbdev 1's
  ``#export``): when a notebook uses them, only the exported cells form the module, as
  ``nbdev_export`` would write it. A notebook with ``#| default_exp`` and no exported cell
  exports nothing.

Each cell left out is an ``SVC-F012`` note naming it and why. The saved execution counts of
the cells kept are checked too: counts that do not increase top to bottom mean the notebook
ran in another order than the module will (``SVC-F014``).
"""

import re
from typing import Final

from attrs import frozen
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import F012_LEFT_OUT, F014_EXECUTION_ORDER
from svcc.frontends.notebook._cells import Cell
from svcc.ir.model import Span

SKIP_TAGS: Final = ("skip-execution", "remove-cell", "svcc:skip")
HIDDEN_TAGS: Final = frozenset({"remove-input", "remove-output"})
EXPORT_DIRECTIVES: Final = frozenset({"export", "exports", "exporti"})
# ``#| name`` or ``#| name: value`` (nbdev 2, Quarto); ``#export`` (nbdev 1, name only).
_DIRECTIVE: Final = re.compile(r"#\s*\|\s*([\w-]+)\s*:?\s*(.*?)\s*$")
_NBDEV1: Final = re.compile(r"#\s*(export|exports|exporti|default_exp)(?:\s+[\w.]+)?\s*$")
_TRAILING_COMMENT: Final = re.compile(r"\s+#.*$")
_SHOWN_ORDER: Final = 5  # out-of-order pairs named in the warning


@frozen
class Selection:
    cells: tuple[Cell, ...]
    diagnostics: tuple[Diagnostic, ...]


def directives(source: str) -> dict[str, str]:
    """The cell's leading directive comments: name -> value (``""`` for a bare one)."""
    found: dict[str, str] = {}
    for line in source.split("\n"):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        match = _DIRECTIVE.match(stripped)
        if match:
            value = _TRAILING_COMMENT.sub("", match.group(2))
            found.setdefault(match.group(1).lower(), value)
            continue
        old = _NBDEV1.match(stripped)
        if old:
            found.setdefault(old.group(1), "")
    return found


def _note(cell: Cell, why: str) -> Diagnostic:
    first = cell.source.split("\n", 1)[0]
    span = Span(line=1, column=0, end_line=1, end_column=len(first), cell=cell.index)
    return diag(F012_LEFT_OUT, f"cell {cell.index} left out: {why}", span)


def _skip_reason(cell: Cell, found: dict[str, str]) -> str | None:
    tag = next((t for t in SKIP_TAGS if t in cell.tags), None)
    if tag is not None:
        return f"tagged {tag!r}"
    if set(cell.tags) >= HIDDEN_TAGS:
        return "tagged 'remove-input' and 'remove-output'"
    if found.get("eval", "").strip().lower() == "false":
        return "marked '#| eval: false'"
    return None


def select_cells(cells: list[Cell]) -> Selection:
    """The cells that form the module, with a note for each one left out and the
    execution-order warning for those kept."""
    found = [directives(c.source) for c in cells]
    nbdev = any(EXPORT_DIRECTIVES & d.keys() or "default_exp" in d for d in found)
    kept: list[Cell] = []
    notes: list[Diagnostic] = []
    for cell, names in zip(cells, found, strict=True):
        reason = _skip_reason(cell, names)
        if reason is None and nbdev and not EXPORT_DIRECTIVES & names.keys():
            reason = "not exported (the notebook uses nbdev '#| export' directives)"
        if reason is None:
            kept.append(cell)
        else:
            notes.append(_note(cell, reason))
    order = execution_order(kept)
    return Selection(cells=tuple(kept), diagnostics=(*notes, *order))


def execution_order(cells: list[Cell]) -> list[Diagnostic]:
    """One ``SVC-F014`` warning naming each cell whose saved count is lower than that of a
    cell above it (cells never run, with no count, are not compared)."""
    pairs: list[tuple[Cell, Cell]] = []
    highest: Cell | None = None
    for cell in cells:
        count = cell.execution_count
        if count is None:
            continue
        above = highest.execution_count if highest is not None else None
        if highest is not None and above is not None and count < above:
            pairs.append((highest, cell))
            continue
        highest = cell
    if not pairs:
        return []
    said = ", ".join(
        f"cell {later.index} (In [{later.execution_count}]) is below cell {above.index} "
        f"(In [{above.execution_count}])"
        for above, later in pairs[:_SHOWN_ORDER]
    )
    more = f" and {len(pairs) - _SHOWN_ORDER} more" if len(pairs) > _SHOWN_ORDER else ""
    first = pairs[0][1]
    width = len(first.source.split("\n", 1)[0])
    span = Span(line=1, column=0, end_line=1, end_column=width, cell=first.index)
    return [
        diag(
            F014_EXECUTION_ORDER,
            f"cells ran out of order: {said}{more}; the served module runs them top to "
            "bottom (restart the kernel and run all to check)",
            span,
        )
    ]


__all__ = ["Selection", "directives", "execution_order", "select_cells"]
