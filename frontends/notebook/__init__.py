"""The notebook front end: ``.ipynb`` bytes → one Python module → the Python front end.

nbformat reads and validates the notebook (a corrupt one is an ``SVC-F003`` error); the
cells that form the module are selected by their tags and nbdev directives (``_select``),
IPython syntax is removed (``_cells``), and the module is sliced to what its functions need
(``_slice``): the served module is the sliced one, and every cell or statement left out is
an ``SVC-F012`` note. Spans in the IR point back at (cell, line).

Slicing is the default for notebooks: a notebook's top-level code is exploration (plots,
prints, training) that a served module would run at every start, and the slice keeps
everything the functions read, so they behave as after running the notebook top to bottom.
A notebook opts out with ``{"svcc": {"slice": false}}`` in its metadata (the whole
notebook then runs at import, as before).
"""

import ast
import json
import warnings
from collections.abc import Sequence
from typing import Any

from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import F003_NOTEBOOK
from svcc.frontends.notebook._cells import Cell, convert
from svcc.frontends.notebook._removed_lines import mark_removed_lines
from svcc.frontends.notebook._select import select_cells
from svcc.frontends.notebook._slice import selected_names, slice_cells
from svcc.frontends.python import FrontendResult, lower_text, parse
from svcc.ir.canonical import digest_bytes


def notebook_cells(data: bytes) -> list[Cell]:
    """Validated code cells. Raises ``ValueError`` with a one-line reason."""
    return read_cells(data)[0]


def read_cells(data: bytes) -> tuple[list[Cell], bool]:
    """Validated code cells and whether the notebook is sliced (its metadata may say
    ``{"svcc": {"slice": false}}``). Raises ``ValueError`` with a one-line reason."""
    import nbformat

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 JSON (byte {exc.start})") from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not a readable notebook: {exc}") from None
    except RecursionError:  # e.g. metadata nesting 100,000 arrays: an input error, not a bug
        raise ValueError("not a readable notebook: JSON nested too deeply") from None
    version = document.get("nbformat") if isinstance(document, dict) else None
    if type(version) is not int:
        # nbformat reads such a file as an empty notebook: every cell would be dropped.
        raise ValueError("not a notebook: no integer `nbformat` version at the top level")
    split = _split_text_problem(document)
    if split is not None:  # nbformat joins these lines itself, and says only "sequence item"
        raise ValueError(f"notebook does not follow nbformat: {split}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            nb = nbformat.reads(text, as_version=4)  # type: ignore[no-untyped-call]
            nbformat.validate(nb)
        except nbformat.ValidationError as exc:
            raise ValueError(f"notebook does not follow nbformat: {exc.message}") from None
        except Exception as exc:  # nbformat raises many types for corrupt JSON
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(f"not a readable notebook: {reason}") from None
    language = str(nb.metadata.get("kernelspec", {}).get("language", "python")).lower()
    if language not in ("python", "python3", ""):
        raise ValueError(f"notebook kernel language is {language!r}, not Python")
    options = nb.metadata.get("svcc", {})
    sliced = not (isinstance(options, dict) and options.get("slice") is False)
    cells = [
        Cell(
            index=i,
            source=str(cell.source),
            tags=_tags(cell.get("metadata", {})),
            execution_count=_count(cell.get("execution_count")),
        )
        for i, cell in enumerate(nb.cells, start=1)
        if cell.cell_type == "code"
    ]
    return cells, sliced


# What a JSON value is, in JSON's words.
_JSON_KINDS = {
    dict: "an object",
    list: "an array",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}


def _split_text_problem(document: dict[str, Any]) -> str | None:
    """Where a text field split into lines (a cell's ``source``, a stream output's
    ``text``) holds an item that is not a string (``cell 2: `source` item 3 is a number, not a
    string``). Cells are counted as ``Cell.index`` counts them (from 1, all cell types)."""
    cells: list[Any] = []
    if isinstance(document.get("cells"), list):  # nbformat 4
        cells = document["cells"]
    elif isinstance(document.get("worksheets"), list):  # nbformat 3
        for sheet in document["worksheets"]:
            if isinstance(sheet, dict) and isinstance(sheet.get("cells"), list):
                cells += sheet["cells"]
    for index, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            continue
        fields = [(f"`{key}`", cell.get(key)) for key in ("source", "input")]
        outputs = cell.get("outputs")
        for number, output in enumerate(outputs if isinstance(outputs, list) else (), 1):
            if isinstance(output, dict):
                fields.append((f"output {number} `text`", output.get("text")))
        for field, value in fields:
            if not isinstance(value, list):
                continue
            for item, line in enumerate(value, start=1):
                if not isinstance(line, str):
                    kind = _JSON_KINDS.get(type(line), type(line).__name__)
                    return (
                        f"cell {index}: {field} item {item} is {kind}, not a string "
                        "(a list there holds the lines of one text)"
                    )
    return None


def _tags(metadata: object) -> tuple[str, ...]:
    tags = metadata.get("tags", ()) if isinstance(metadata, dict) else ()
    return tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ()


def _count(value: object) -> int | None:
    return value if type(value) is int else None


def read_notebook(
    data: bytes,
    *,
    path: str,
    module: str,
    python_version: tuple[int, int],
    select: Sequence[str] | None = None,
) -> FrontendResult:
    """The notebook's module, sliced; ``select`` (``--select``: names, ``module.name`` or
    ids) keeps only the definitions the selected functions need (see ``_slice``)."""
    try:
        cells, sliced = read_cells(data)
    except ValueError as exc:
        return FrontendResult(
            ir=None, diagnostics=(diag(F003_NOTEBOOK, str(exc), None),), module_text=None
        )

    trees: dict[str, ast.Module] = {}  # each plain cell is parsed once, for both uses

    def parses(text: str) -> bool:
        try:
            trees[text] = parse(text, python_version, path)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False
        return True

    def tree(text: str) -> ast.Module:
        found = trees.pop(text, None)
        return found if found is not None else parse(text, python_version, path)

    selection = select_cells(cells)
    converted = convert(list(selection.cells), parses)
    if not sliced:
        trees.clear()
    text, line_map = converted.text, converted.line_map
    notes: tuple[Diagnostic, ...] = ()
    if sliced:
        cut = slice_cells(converted.cells, tree, selected_names(select))
        if cut is not None:
            text, line_map, notes = cut.text, cut.line_map, cut.diagnostics
    result = lower_text(
        text,
        module=module,
        path=path,
        source_sha256=digest_bytes(data),
        encoding="utf-8",
        python_version=python_version,
        source_format="notebook",
        line_map=line_map,
    )
    front = sorted((*selection.diagnostics, *converted.diagnostics, *notes), key=_place)
    ir = result.ir and mark_removed_lines(result.ir, converted.diagnostics)
    return FrontendResult(
        ir=ir,
        diagnostics=(*front, *result.diagnostics),
        module_text=result.module_text,
    )


def _place(d: Diagnostic) -> tuple[int, int]:
    span = d.span
    return (span.cell or 0, span.line) if span is not None else (0, 0)


__all__ = ["read_notebook"]
