"""The language server: pygls over stdio, the pure modules of this package behind it.

Every change schedules the document's analysis after a short quiet time (the debounce: a
burst of keystrokes is analysed once); a newer change cancels what was scheduled or running
for the document, and a result is published only while it is still the document's latest.
The analysis runs on one worker thread, off the event loop, so hovers and code actions are
answered while a large module is being judged.
"""

import asyncio
import logging
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument
from svcc import __version__
from svcc.contracts.diagnostics.reporting import Level, code_url, level_of
from svcc.lsp.actions import Fix, fixes
from svcc.lsp.documents import Cell, Found, Result, analyse_notebook, analyse_text
from svcc.lsp.hover import capability_at, hover_markdown
from svcc.lsp.project import PYPROJECT, Projects

DEBOUNCE_SECONDS: Final = 0.1
SOURCE: Final = "svcc"

_SEVERITY: Final[dict[Level, types.DiagnosticSeverity]] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "note": types.DiagnosticSeverity.Information,
    "none": types.DiagnosticSeverity.Hint,
}

log = logging.getLogger(__name__)


class ReadinessServer(LanguageServer):
    """The server's state: open documents' latest results and their scheduled analyses."""

    def __init__(self, debounce: float = DEBOUNCE_SECONDS) -> None:
        super().__init__(
            "svcc",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(
                        notebook="jupyter-notebook",
                        cells=[types.NotebookCellLanguage(language="python")],
                    )
                ],
            ),
        )
        self.debounce = debounce
        self.analyser = ThreadPoolExecutor(max_workers=1, thread_name_prefix="svcc-analysis")
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.results: dict[str, Result] = {}
        self._projects: Projects | None = None
        self._told: set[str] = set()  # notices shown once

    # -- the project -------------------------------------------------------------------------

    @property
    def projects(self) -> Projects:
        if self._projects is None:
            folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
            root = self.workspace.root_path
            self._projects = Projects([f for f in [*folders, root] if f])
        return self._projects

    # -- scheduling ---------------------------------------------------------------------------

    def schedule(self, key: str) -> None:
        """Analyse ``key`` (a ``.py`` document's or a notebook's URI) after the debounce,
        replacing what was scheduled or running for it."""
        stale = self.pending.pop(key, None)
        if stale is not None:
            stale.cancel()
        task = asyncio.get_running_loop().create_task(self._analyse_later(key))
        self.pending[key] = task
        task.add_done_callback(lambda t: self._done(key, t))

    def _done(self, key: str, task: "asyncio.Task[None]") -> None:
        if self.pending.get(key) is task:
            del self.pending[key]
        if not task.cancelled() and task.exception() is not None:
            log.error("analysis of %s failed", key, exc_info=task.exception())

    async def _analyse_later(self, key: str) -> None:
        await asyncio.sleep(self.debounce)
        job = self._job(key)
        if job is None:
            return
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(self.analyser, job)
        # a newer change cancelled this task before it got here; this is the latest
        self.publish(key, result)

    def _job(self, key: str) -> Callable[[], Result] | None:
        """The analysis of ``key`` as it is now, to run on the worker (a snapshot: the
        worker never reads the workspace, which the event loop keeps changing)."""
        notebook = self.workspace.get_notebook_document(notebook_uri=key)
        if notebook is not None:
            cells = [
                Cell(
                    c.document,
                    c.kind == types.NotebookCellKind.Code,
                    self.workspace.get_text_document(c.document).source,
                    _object(c.metadata),
                )
                for c in notebook.cells
            ]
            metadata = _object(notebook.metadata)
            path = _path(key, "notebook.ipynb")
            projects = self.projects  # read on the worker: the first read walks the tree
            return lambda: analyse_notebook(key, path, cells, projects.context(path), metadata)
        document = self.open_document(key)
        if document is None:
            return None
        text = document.source
        path = _path(key, "module.py")
        projects = self.projects
        return lambda: analyse_text(key, path, text, projects.context(path))

    def publish(self, key: str, result: Result) -> None:
        self.results[key] = result
        if result.problem is not None:
            self.window_log_message(
                types.LogMessageParams(type=types.MessageType.Warning, message=result.problem)
            )
        if result.notice is not None and result.notice not in self._told:
            self._told.add(result.notice)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"svcc: {result.notice} (files are judged alone until it is fixed)",
                )
            )
        by_document: dict[str, list[types.Diagnostic]] = {uri: [] for uri in result.documents}
        lines = _Lines(self)
        for found in result.found:
            by_document.setdefault(found.uri, []).append(self.to_lsp(found, lines))
        for uri, diagnostics in by_document.items():
            document = self.open_document(uri)
            version = document.version if document is not None else None
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
            )

    def forget(self, key: str) -> None:
        """A document closed: nothing more is published for it, and what was is cleared."""
        task = self.pending.pop(key, None)
        if task is not None:
            task.cancel()
        result = self.results.pop(key, None)
        for uri in result.documents if result is not None else (key,):
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    # -- conversions ------------------------------------------------------------------------

    def to_lsp(self, found: Found, lines: "_Lines") -> types.Diagnostic:
        d = found.diagnostic
        hint = d.hint if d.hint is not None else d.entry.hint
        return types.Diagnostic(
            range=self.client_range(lines[found.uri], *_range(found)),
            message=d.message + (f"\nhint: {hint}" if hint else ""),
            severity=_SEVERITY[level_of(d.code)],
            code=d.code,
            code_description=types.CodeDescription(href=code_url(d.code)),
            source=SOURCE,
            data={"capabilities": list(found.capabilities)},
        )

    def client_range(
        self, lines: Sequence[str] | None, start: tuple[int, int], end: tuple[int, int]
    ) -> types.Range:
        """Code-point columns (the spans') in the client's position encoding (UTF-16 by
        default: a character outside the BMP counts twice there); ``lines``: the document's
        (``None`` when every column is the same in both, as in an ASCII document)."""
        plain = types.Range(
            start=types.Position(line=start[0], character=start[1]),
            end=types.Position(line=end[0], character=end[1]),
        )
        if lines is None:
            return plain
        return self.workspace.position_codec.range_to_client_units(lines, plain)

    def open_document(self, uri: str) -> TextDocument | None:
        """The editor's buffer of ``uri`` (never the file on disk)."""
        found: TextDocument | None = self.workspace.text_documents.get(unquote(uri))
        return found

    def result_of(self, uri: str) -> tuple[Result, int | None] | None:
        """The latest result speaking for ``uri`` and, for a notebook cell, its 1-based
        position."""
        result = self.results.get(uri)
        if result is not None:
            return result, None
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is None or notebook.uri not in self.results:
            return None
        cells = [c.document for c in notebook.cells]
        return self.results[notebook.uri], cells.index(uri) + 1 if uri in cells else None

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        held = self.result_of(uri)
        if held is None:
            return []
        result, _ = held
        if result.analysis is None:
            return []
        wanted = params.range
        document = self.open_document(uri)
        if document is None:
            return []
        text = document.source
        path = _path(result.uri, "module.py")
        context = self.projects.context(path) if path else None
        out = []
        lines = _Lines(self)
        for found in result.found:
            if found.uri != uri:
                continue
            lsp = self.to_lsp(found, lines)
            if not _overlaps(lsp.range, wanted):
                continue
            for fix in fixes(
                found.diagnostic,
                uri=uri,
                text=text,
                ir=result.analysis.ir,
                path=path,
                context=context,
            ):
                out.append(self._action(fix, lsp, lines))
        return out

    def _action(self, fix: Fix, diagnostic: types.Diagnostic, lines: "_Lines") -> types.CodeAction:
        changes: dict[str, list[types.TextEdit]] = {}
        for e in fix.edits:
            changes.setdefault(e.uri, []).append(
                types.TextEdit(
                    range=self.client_range(lines[e.uri], e.start, e.end), new_text=e.text
                )
            )
        return types.CodeAction(
            title=fix.title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            is_preferred=True,
            edit=types.WorkspaceEdit(changes=changes),
        )

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        held = self.result_of(params.text_document.uri)
        if held is None:
            return None
        result, cell = held
        if result.analysis is None:
            return None
        cap = capability_at(result.analysis, params.position.line + 1, cell)
        if cap is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown, value=hover_markdown(result.analysis, cap)
            )
        )

    def forget_projects(self) -> None:
        """The workspace folders changed: projects are found again, documents judged again."""
        self._projects = None
        self.forget_notices()
        self.reanalyse_all()

    def forget_notices(self) -> None:
        """A project changed: what was said about it may need saying again."""
        self._told.clear()

    def reanalyse_all(self) -> None:
        for key in list(self.results):
            self.schedule(key)


class _Lines:
    """Open documents' lines, split once per answer (pygls splits the text anew on every
    read of ``lines``: 201 diagnostics of a 2,000-line module were 201 splits); ``None``
    for an ASCII document or one the editor does not hold, whose columns need no change."""

    def __init__(self, server: ReadinessServer) -> None:
        self._server = server
        self._held: dict[str, Sequence[str] | None] = {}

    def __getitem__(self, uri: str) -> Sequence[str] | None:
        if uri not in self._held:
            document = self._server.open_document(uri)
            source = document.source if document is not None else ""
            self._held[uri] = None if source.isascii() else source.splitlines(True)
        return self._held[uri]


def _path(uri: str, fallback: str) -> str:
    """The file a URI names (absolute), or a name for an unsaved buffer."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return os.path.abspath(path) if path else os.path.join(os.getcwd(), fallback)


def _object(value: object) -> dict[str, Any]:
    """A notebook's or cell's metadata as a JSON object (absent or not an object: empty)."""
    return dict(value) if isinstance(value, dict) else {}


def _range(found: Found) -> tuple[tuple[int, int], tuple[int, int]]:
    span = found.diagnostic.span
    if span is None:
        return (0, 0), (0, 0)
    return (span.line - 1, span.column), (max(span.end_line, span.line) - 1, span.end_column)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _is_python(uri: str) -> bool:
    return uri.lower().endswith(".py")


def build(debounce: float = DEBOUNCE_SECONDS) -> ReadinessServer:
    """The server with its features registered (``svcc lsp`` starts it on stdio)."""
    server = ReadinessServer(debounce)
    _document_features(server)
    _notebook_features(server)
    _request_features(server)
    return server


def _document_features(server: ReadinessServer) -> None:
    """Text documents and the workspace: what is open is judged, what a save or a watched
    file changes in the project is judged again."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ReadinessServer, params: types.DidOpenTextDocumentParams) -> None:
        if _is_python(params.text_document.uri) or params.text_document.language_id == "python":
            ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ReadinessServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.results or uri in ls.pending or _is_python(uri):
            ls.schedule(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ReadinessServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: ReadinessServer, params: types.DidSaveTextDocumentParams) -> None:
        _project_changed(ls, [params.text_document.uri])

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: ReadinessServer, params: types.DidChangeWatchedFilesParams) -> None:
        _project_changed(ls, [c.uri for c in params.changes])

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders(ls: ReadinessServer, _: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.forget_projects()


def _notebook_features(server: ReadinessServer) -> None:
    """Notebook documents, judged as a whole notebook on each change."""

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: ReadinessServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: ReadinessServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: ReadinessServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.forget(params.notebook_document.uri)


def _request_features(server: ReadinessServer) -> None:
    """Requests the client waits on (hover, code actions) and shutdown."""

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: ReadinessServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: ReadinessServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.code_actions(params)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: ReadinessServer, *_: Any) -> None:
        for task in ls.pending.values():
            task.cancel()
        ls.analyser.shutdown(wait=False, cancel_futures=True)


def _project_changed(ls: ReadinessServer, uris: Sequence[str]) -> None:
    """A saved or changed ``pyproject.toml`` is read again, and every open document judged
    again with what it now declares."""
    changed = [u for u in uris if u.endswith("/" + PYPROJECT)]
    for uri in changed:
        path = to_fs_path(uri)
        if path:
            ls.projects.forget(path)
    if changed:
        ls.forget_notices()
        ls.reanalyse_all()


def serve(debounce: float = DEBOUNCE_SECONDS) -> None:
    """Serve on stdin/stdout until the client says exit."""
    build(debounce).start_io()
