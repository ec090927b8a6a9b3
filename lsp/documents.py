"""An editor's document analysed: a ``.py`` buffer or a notebook's cells, as the user
has them now (unsaved), judged by the library's own analysis.

A notebook arrives as LSP 3.17 notebook documents do: one text document per cell. Its cells
are put back into an ``.ipynb`` document (code and markdown cells with their metadata, so
tags such as ``skip-execution`` and nbdev directives count) and read by the notebook front
end; a reason's span counts in cells, and is placed on that cell's document.
"""

import json
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from attrs import frozen
from svcc.compiler.driver import Analysis, analyze_source
from svcc.contracts.errors import InputError

if TYPE_CHECKING:
    from svcc.compiler.passes.readiness import Assessment
    from svcc.contracts.diagnostics import Diagnostic
    from svcc.ir.model import Span
    from svcc.lsp.project import FileContext


@frozen
class Cell:
    """One notebook cell as the editor holds it (``uri``: its text document)."""

    uri: str
    code: bool
    text: str
    metadata: dict[str, Any]


@frozen
class Found:
    """One diagnostic where the editor shows it: the document (a cell's, for a notebook),
    and the capabilities it is a reason of (module-wide reasons name every function)."""

    uri: str
    diagnostic: "Diagnostic"
    capabilities: tuple[str, ...]


@frozen
class Result:
    """A document's analysis: the library's :class:`Analysis` (``None`` when the input was
    refused before any analysis: ``problem`` says why), and what to show where."""

    uri: str
    analysis: Analysis | None
    found: tuple[Found, ...]
    # Every document the result speaks for (a notebook's cells): each is published, empty
    # ones too, so a fixed cell's diagnostics go away.
    documents: tuple[str, ...]
    problem: str | None = None
    # Something the user should know that did not stop the analysis (see FileContext).
    notice: str | None = None


def analyse_text(uri: str, path: str, text: str, context: "FileContext") -> Result:
    """A ``.py`` buffer at ``path`` (absolute; read from the buffer, not from disk)."""
    return _result(
        uri,
        (uri,),
        lambda: _analyse(text.encode("utf-8"), path, context, "python"),
        notice=context.notice,
    )


def notebook_json(cells: Sequence[Cell], metadata: dict[str, Any] | None = None) -> bytes:
    """The cells as an nbformat 4 document (outputs are not the editor's to send)."""
    out: list[dict[str, Any]] = []
    for cell in cells:
        if cell.code:
            out.append(
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "metadata": cell.metadata,
                    "outputs": [],
                    "source": cell.text,
                }
            )
        else:
            out.append({"cell_type": "markdown", "metadata": cell.metadata, "source": cell.text})
    document = {"cells": out, "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 4}
    return json.dumps(document).encode("utf-8")


def analyse_notebook(
    uri: str,
    path: str,
    cells: Sequence[Cell],
    context: "FileContext",
    metadata: dict[str, Any] | None = None,
) -> Result:
    """A notebook document: its cells, in order."""
    data = notebook_json(cells, metadata)
    cell_uris = tuple(c.uri for c in cells)
    return _result(
        uri,
        cell_uris,
        lambda: _analyse(data, path, context, "notebook"),
        cell_uris=cell_uris,
        notice=context.notice,
    )


def _analyse(data: bytes, path: str, context: "FileContext", fmt: str) -> Analysis:
    return analyze_source(
        data,
        path=os.path.basename(path),
        module=context.module,
        source_format="notebook" if fmt == "notebook" else "python",
        requirements=context.requirements,
        layout=context.layout,
        check_name=False,
        serialize=False,  # no digest: nothing shows it
        allow=context.allow,
        data_files=context.data_files,
    )


def _result(
    uri: str,
    documents: tuple[str, ...],
    run: Callable[[], Analysis],
    *,
    cell_uris: tuple[str, ...] | None = None,
    notice: str | None = None,
) -> Result:
    try:
        analysis: Analysis = run()
    except InputError as exc:
        return Result(uri, None, (), documents, problem=str(exc), notice=notice)
    found = tuple(located(analysis, uri, cell_uris))
    return Result(uri, analysis, found, documents, notice=notice)


def located(analysis: Analysis, uri: str, cell_uris: tuple[str, ...] | None) -> list[Found]:
    """Every diagnostic once, front end's first, with the capabilities it concerns."""
    owners: dict[Diagnostic, list[Assessment]] = {d: [] for d in analysis.diagnostics}
    if analysis.readiness is not None:
        for a in analysis.readiness.assessments:
            for r in a.reasons:
                owners.setdefault(r, []).append(a)
    out = []
    for d, assessments in owners.items():
        target = _document_of(d.span, uri, cell_uris)
        if target is not None:
            out.append(Found(target, d, tuple(a.capability_id for a in assessments)))
    return out


def _document_of(span: "Span | None", uri: str, cell_uris: tuple[str, ...] | None) -> str | None:
    if cell_uris is None:
        return uri
    if span is None or span.cell is None:
        return cell_uris[0] if cell_uris else None
    index = span.cell - 1
    return cell_uris[index] if 0 <= index < len(cell_uris) else None
