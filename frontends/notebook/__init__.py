"""The notebook front end: ``.ipynb`` bytes → one Python module → the Python front end.

nbformat reads and validates the notebook (a corrupt one is an ``SVC-F003`` error);
spans in the IR point back at (cell, line).
"""

import json
import warnings

from svcc.compiler.diagnostics import diag
from svcc.compiler.diagnostics.codes import F003_NOTEBOOK
from svcc.frontends.notebook._cells import Cell, convert
from svcc.frontends.python import FrontendResult, lower_text, parse
from svcc.ir.canonical import digest_bytes


def notebook_cells(data: bytes) -> list[Cell]:
    """Validated code cells. Raises ``ValueError`` with a one-line reason."""
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
    return [
        Cell(index=i, source=str(cell.source))
        for i, cell in enumerate(nb.cells, start=1)
        if cell.cell_type == "code"
    ]


def read_notebook(
    data: bytes, *, path: str, module: str, python_version: tuple[int, int]
) -> FrontendResult:
    try:
        cells = notebook_cells(data)
    except ValueError as exc:
        return FrontendResult(
            ir=None, diagnostics=(diag(F003_NOTEBOOK, str(exc), None),), module_text=None
        )

    def parses(text: str) -> bool:
        try:
            parse(text, python_version, path)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False
        return True

    converted = convert(cells, parses)
    result = lower_text(
        converted.text,
        module=module,
        path=path,
        source_sha256=digest_bytes(data),
        encoding="utf-8",
        python_version=python_version,
        source_format="notebook",
        line_map=converted.line_map,
    )
    return FrontendResult(
        ir=result.ir,
        diagnostics=converted.diagnostics + result.diagnostics,
        module_text=result.module_text,
    )


__all__ = ["read_notebook"]
