"""``svcc lsp`` end to end: the real command on stdio, driven by pytest-lsp's client.

A module-level ``print`` and an unannotated parameter give their codes at their ranges; the
code actions fix them and the diagnostics go; a notebook document's cells get their own
diagnostics; hover shows the class and the request schema; a project's ``pyproject.toml``
declares a data file (by the code action too)."""

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_lsp
from helpers import SVCC
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

SOURCE = """\
import math

print("loading")


def scale(x: float, factor=2):
    return x * factor
"""

DIAGNOSTICS = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[SVCC, "lsp", "--debounce-ms", "20"]),
)
async def client(workspace: Path, lsp_client: LanguageClient) -> AsyncIterator[None]:
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(
            notebook_document=types.NotebookDocumentClientCapabilities(
                synchronization=types.NotebookDocumentSyncClientCapabilities()
            )
        ),
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[SVCC, "lsp", "--debounce-ms", "400"]),
)
async def patient_client(workspace: Path, lsp_client: LanguageClient) -> AsyncIterator[None]:
    """A server that waits 400 ms after an edit: a burst of edits is analysed once."""
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=workspace.as_uri()
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def published(
    client: LanguageClient,
    uri: str,
    check: Callable[[list[types.Diagnostic]], bool],
    timeout: float = 60,
) -> list[types.Diagnostic]:
    """The diagnostics of ``uri`` once ``check`` holds for them."""

    async def wait() -> list[types.Diagnostic]:
        while uri not in client.diagnostics or not check(client.diagnostics[uri]):
            await client.wait_for_notification(DIAGNOSTICS)
        return client.diagnostics[uri]

    try:
        return await asyncio.wait_for(wait(), timeout)
    except TimeoutError:
        raise AssertionError(f"{uri}: still {client.diagnostics.get(uri)}") from None


def codes(diagnostics: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """The text edits applied as a client applies them (ranges of the original text)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(p: types.Position) -> int:
        return (offsets[p.line] if p.line < len(offsets) else len(text)) + p.character

    for e in sorted(edits, key=lambda e: at(e.range.start), reverse=True):
        text = text[: at(e.range.start)] + e.new_text + text[at(e.range.end) :]
    return text


def open_file(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text
            )
        )
    )


def change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def fix(
    client: LanguageClient, uri: str, diagnostic: types.Diagnostic
) -> tuple[types.CodeAction, list[types.TextEdit]]:
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    assert actions is not None
    mine = [a for a in actions if isinstance(a, types.CodeAction) and a.diagnostics]
    mine = [a for a in mine if a.diagnostics and a.diagnostics[0].code == diagnostic.code]
    assert len(mine) == 1, actions
    action = mine[0]
    assert action.edit is not None
    assert action.edit.changes is not None
    return action, action.edit.changes[uri]


@pytest.mark.asyncio
async def test_diagnostics_code_actions_and_hover(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "geometry.py").as_uri()
    open_file(client, uri, SOURCE)
    found = await published(client, uri, lambda ds: len(ds) == 2)
    assert codes(found) == ["SVC-R004", "SVC-R028"]
    printed = next(d for d in found if d.code == "SVC-R028")
    assert printed.range == types.Range(
        start=types.Position(line=2, character=0), end=types.Position(line=2, character=16)
    )
    assert printed.severity == types.DiagnosticSeverity.Warning  # conditional
    assert printed.source == "svcc"
    assert printed.code_description is not None
    assert printed.code_description.href.endswith("/diagnostics/#svc-r028")
    assert "\nhint: " in printed.message
    untyped = next(d for d in found if d.code == "SVC-R004")
    assert untyped.range == types.Range(
        start=types.Position(line=5, character=20), end=types.Position(line=5, character=26)
    )
    assert untyped.severity == types.DiagnosticSeverity.Information  # a warning

    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=5, character=5),
        )
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert "**scale**: `conditional`" in hover.contents.value
    schema = hover.contents.value.split("```json\n")[1].split("```")[0]
    assert json.loads(schema)["required"] == ["x"]

    action, edits = await fix(client, uri, untyped)
    assert action.title == "Annotate 'factor' as int (from its default)"
    text = apply(SOURCE, edits)
    assert "def scale(x: float, factor: int = 2):" in text
    change(client, uri, 2, text)
    found = await published(client, uri, lambda ds: codes(ds) == ["SVC-R028"])

    action, edits = await fix(client, uri, found[0])
    text = apply(text, edits)
    assert text.endswith('\n\nif __name__ == "__main__":\n    print("loading")\n')
    change(client, uri, 3, text)
    await published(client, uri, lambda ds: not ds)

    # an edit that brings the print back brings its diagnostic back; closing clears it
    change(client, uri, 4, SOURCE)
    await published(client, uri, lambda ds: "SVC-R028" in codes(ds))
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await published(client, uri, lambda ds: not ds)


def notebook_cell(uri: str, kind: types.NotebookCellKind) -> types.NotebookCell:
    return types.NotebookCell(kind=kind, document=uri)


@pytest.mark.asyncio
async def test_a_notebook_document(client: LanguageClient, workspace: Path) -> None:
    notebook = (workspace / "analysis.ipynb").as_uri()
    cells = [f"vscode-notebook-cell:{workspace / 'analysis.ipynb'}#c{i}" for i in range(3)]
    texts = [
        "import math\nprint('loading')\n",
        "# Scaling",
        "def scale(x: float, factor=2):\n    return math.pi * x * factor\n",
    ]
    kinds = [
        types.NotebookCellKind.Code,
        types.NotebookCellKind.Markup,
        types.NotebookCellKind.Code,
    ]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[notebook_cell(u, k) for u, k in zip(cells, kinds, strict=True)],
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=u,
                    language_id="python" if k == types.NotebookCellKind.Code else "markdown",
                    version=1,
                    text=t,
                )
                for u, t, k in zip(cells, texts, kinds, strict=True)
            ],
        )
    )
    last = await published(client, cells[2], lambda ds: len(ds) == 1)
    assert codes(last) == ["SVC-R004"]
    # lines count in the cell: the parameter is on the cell's first line
    assert last[0].range.start == types.Position(line=0, character=20)
    # the notebook's slice leaves the print out (a note, shown as a hint, on its line)
    first = await published(client, cells[0], lambda ds: "SVC-F012" in codes(ds))
    left_out = next(d for d in first if d.range.start.line == 1)
    assert left_out.severity == types.DiagnosticSeverity.Hint
    assert not client.diagnostics[cells[1]]

    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=cells[2]),
            position=types.Position(line=0, character=5),
        )
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert "**scale**" in hover.contents.value

    # the code action edits the cell's document
    _, edits = await fix(client, cells[2], last[0])
    fixed = apply(texts[2], edits)
    assert fixed.startswith("def scale(x: float, factor: int = 2):")
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=notebook, version=2),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=cells[2], version=2),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
                        )
                    ]
                )
            ),
        )
    )
    await published(client, cells[2], lambda ds: not ds)


PYPROJECT = """\
[project]
name = "shop"
version = "0.1"

[tool.svcc]
source-roots = ["src"]
"""

READS = """\
from pathlib import Path

HERE = Path(__file__).parent


def price(item: str) -> str:
    return (HERE / "prices.csv").read_text()
"""


@pytest.mark.asyncio
async def test_project_context_and_declaring_a_data_file(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "pyproject.toml").write_text(PYPROJECT)
    (workspace / "src" / "shop").mkdir(parents=True)
    (workspace / "src" / "shop" / "__init__.py").write_text("")
    (workspace / "src" / "shop" / "prices.csv").write_text("apple,1\n")
    path = workspace / "src" / "shop" / "catalog.py"
    path.write_text(READS)
    uri = path.as_uri()
    open_file(client, uri, READS)
    found = await published(client, uri, lambda ds: "SVC-R042" in codes(ds))
    read = next(d for d in found if d.code == "SVC-R042")
    assert read.data == {"capabilities": ["python:shop.catalog:price"]}  # named from src/

    pyproject = (workspace / "pyproject.toml").as_uri()
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=read.range,
            context=types.CodeActionContext(diagnostics=[read]),
        )
    )
    assert actions is not None
    (action,) = [a for a in actions if isinstance(a, types.CodeAction)]
    assert action.title == "Declare src/shop/prices.csv in [tool.svcc] data-files"
    assert action.edit is not None
    assert action.edit.changes is not None
    declared = apply(PYPROJECT, action.edit.changes[pyproject])
    assert 'data-files = ["src/shop/prices.csv"]' in declared
    # the client saves the edited pyproject.toml: the project is read again
    (workspace / "pyproject.toml").write_text(declared)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=pyproject))
    )
    await published(client, uri, lambda ds: not ds)


def test_the_data_file_declaration_edits() -> None:
    from svcc.lsp.actions import declare_data_file

    assert declare_data_file("", "a.csv") == (
        (0, 0),
        (0, 0),
        '[tool.svcc]\ndata-files = ["a.csv"]\n',
    )
    with_table = '[project]\nname = "x"\n\n[tool.svcc]\nallow = ["env"]\n'
    assert declare_data_file(with_table, "a.csv") == (
        (4, 0), (4, 0), 'data-files = ["a.csv"]\n',
    )  # fmt: skip
    with_key = '[tool.svcc]\ndata-files = ["b.csv"]\n'
    assert declare_data_file(with_key, "a.csv") == ((1, 14), (1, 14), '"a.csv", ')
    assert declare_data_file('[tool.svcc]\ndata-files = ["a.csv"]\n', "a.csv") is None


def test_annotations_suggested_from_defaults() -> None:
    from svcc.lsp.actions import default_type

    assert [default_type(t) for t in ("2", "-1.5", "'x'", "True", "[1, 2]", "(1.0,)")] == [
        "int", "float", "str", "bool", "list[int]", "tuple[float, ...]",
    ]  # fmt: skip
    assert [default_type(t) for t in ("None", "[]", "[1, 'a']", "f()", "-True")] == [None] * 5


def test_help_lists_the_command_and_inspect_stays_light() -> None:
    from helpers import modules_loaded_by, run_svcc

    proc = run_svcc("--help")
    assert "lsp" in proc.stdout
    assert modules_loaded_by("import svcc.cli.main", ("pygls", "lsprotocol")) == []


@pytest.mark.asyncio
async def test_a_burst_of_edits_is_analysed_once(
    patient_client: LanguageClient, workspace: Path
) -> None:
    client = patient_client
    uri = (workspace / "burst.py").as_uri()

    def version(n: int) -> str:  # n unannotated parameters
        return f"def f({', '.join(f'p{i}' for i in range(n))}):\n    return 1\n"

    open_file(client, uri, version(1))
    await published(client, uri, lambda ds: len(ds) == 1)
    for n in range(2, 7):  # faster than the debounce: each edit replaces the one before
        change(client, uri, n, version(n))
    notifications = 0
    while True:
        try:
            await asyncio.wait_for(client.wait_for_notification(DIAGNOSTICS), 3)
        except TimeoutError:
            break
        notifications += 1
    assert notifications == 1
    assert len(client.diagnostics[uri]) == 6  # the last text's


@pytest.mark.asyncio
async def test_columns_are_in_the_clients_encoding(client: LanguageClient, workspace: Path) -> None:
    """Spans count code points; LSP's default encoding counts UTF-16 units (an emoji is
    two), so the range of ``print("😀")`` ends at 11, not 10."""
    uri = (workspace / "smile.py").as_uri()
    open_file(client, uri, 'print("😀")\n\n\ndef f(x: int) -> int:\n    return x\n')
    (printed,) = await published(client, uri, lambda ds: len(ds) == 1)
    assert printed.range.end == types.Position(line=0, character=11)


@pytest.mark.asyncio
async def test_a_refused_pyproject_is_said_once(client: LanguageClient, workspace: Path) -> None:
    (workspace / "pyproject.toml").write_text('[tool.svcc]\nselekt = ["f"]\n')
    for name in ("one.py", "two.py"):
        uri = (workspace / name).as_uri()
        open_file(client, uri, SOURCE)  # still judged, alone
        await published(client, uri, lambda ds: len(ds) == 2)
    (message,) = client.messages
    assert message.type == types.MessageType.Warning
    assert "[tool.svcc] has no key 'selekt'" in message.message
