"""``svcc inspect DIR --format json``: the repository document's bytes, its modules'
documents rendered where they were judged for a large tree.

Each module's document depends only on its report and its front end's diagnostics, which
the lowering workers hold for the modules they judged (``LoweringPool``); rendering them
there, each to canonical JSON text, spreads the rendering of a large tree over the cores
that judged it, without a second set of workers (a fork of the parent's whole heap) and
without reading the reports twice. The parent joins the texts in key order. The bytes are those of
``canonical_json(analysis.document())`` whatever the worker count: a canonical document is
its keys and values' canonical texts joined with ``,`` and ``:`` in sorted key order, so
the joining is exact (``tests/compiler/test_scaling.py`` checks it).
"""

from collections.abc import Iterator, Mapping, Sequence
from json.encoder import encode_basestring as _string  # what ENCODER writes a str with
from typing import TYPE_CHECKING, Any

from svcc.ir.canonical import ENCODER, json_utf8

if TYPE_CHECKING:
    from svcc.compiler.driver import Analysis
    from svcc.compiler.passes.readiness import ReadinessReport
    from svcc.contracts.diagnostics import Diagnostic
    from svcc.frontends.repository import Held, LoweringPool, Spilled


def module_document(
    path: str, diagnostics: "Sequence[Diagnostic]", report: "ReadinessReport | None"
) -> dict[str, Any]:
    """A directory's module document: its report (``None``: it did not lower) and its
    front end's diagnostics. A function of what a lowering worker holds, so the worker that
    judged a module renders it."""
    if report is None:
        error = next(d for d in diagnostics if d.severity == "error")
        return {"error": {"path": path, **error.to_json()}}
    doc = report.to_json()
    doc["diagnostics"] = [d.to_json() for d in diagnostics]
    return doc


class DocumentWriter:
    """Module documents as canonical JSON text, each diagnostic encoded once.

    A directory's reasons repeat: a module's import-time risks are every one of its
    capabilities' reasons, and those of every module importing it (the standard library:
    114,295 reasons, 19,129 diagnostics), so each diagnostic is encoded once and the texts
    are joined. The texts are keyed by the diagnostic object's id (the object kept while
    it is a key), so a writer lives no longer than the reports it writes (one render)."""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}
        self._kept: list[Diagnostic] = []

    def _diagnostics(self, diagnostics: "Sequence[Diagnostic]") -> str:
        texts = self._texts
        try:  # nearly always: a capability's reasons are mostly its module's and imports'
            return "[" + ",".join([texts[id(d)] for d in diagnostics]) + "]"
        except KeyError:
            for d in diagnostics:
                if id(d) not in texts:
                    texts[id(d)] = d.json_text()
                    self._kept.append(d)  # while its id is a key
            return "[" + ",".join([texts[id(d)] for d in diagnostics]) + "]"

    def document(
        self, path: str, diagnostics: "Sequence[Diagnostic]", report: "ReadinessReport | None"
    ) -> bytes:
        """``canonical_json`` of :func:`module_document` (without its newline)."""
        if report is None:
            return json_utf8(ENCODER.encode(module_document(path, diagnostics, None)))
        entries = {key: _text(value) for key, value in report.head_json().items()}
        entries["diagnostics"] = self._diagnostics(diagnostics)
        entries["assessments"] = (
            "["
            + ",".join(
                _object_text(
                    {key: _text(value) for key, value in a.head_json().items()}
                    | {"reasons": self._diagnostics(a.reasons)}
                )
                for a in report.assessments
            )
            + "]"
        )
        return json_utf8(_object_text(entries))


def _text(value: Any) -> str:
    """``ENCODER.encode(value)``, a string or a flag (most of a head's values) written
    directly."""
    if type(value) is str:
        return _string(value)
    if type(value) is bool:
        return "true" if value else "false"
    return ENCODER.encode(value)


_KEYS: dict[str, str] = {}  # a key's canonical text and the colon after it


def _object_text(entries: Mapping[str, str]) -> str:
    """A JSON object's canonical text from its keys and its values' canonical texts."""
    parts = []
    for key, value in sorted(entries.items()):
        head = _KEYS.get(key)
        if head is None:
            head = _KEYS[key] = ENCODER.encode(key) + ":"
        parts.append(head + value)
    return "{" + ",".join(parts) + "}"


def _render_held(held: "Held", _: None) -> "dict[str, Spilled]":
    """In a lowering worker: the documents of the modules it judged (``_reports`` kept
    their reports), as canonical JSON (UTF-8), put in the worker's spill file."""
    reports = held.scratch["reports"]
    paths = {f.module: f.path for f in held.tree.files}
    writer = DocumentWriter()
    return {
        module: held.spill.put(writer.document(paths[module], result.diagnostics, reports[module]))
        for module, result in held.results.items()
    }


def render_in_workers(pool: "LoweringPool") -> dict[str, memoryview]:
    """Every module's document, rendered by the worker that judged it (read in place from
    its spill file): the workers' last call (they exit as they answer)."""
    rendered: dict[str, memoryview] = {}
    for part in pool.each(_render_held, None, last=True):
        rendered |= {module: pool.spilled(at) for module, at in part.items()}
    return rendered


def _object(entries: Mapping[str, bytes | memoryview]) -> Iterator[bytes | memoryview]:
    """A JSON object's pieces from its keys and its values' canonical UTF-8 texts, as
    ``ENCODER`` would write it (keys sorted)."""
    yield b"{"
    for i, (key, value) in enumerate(sorted(entries.items())):
        yield (b"," if i else b"") + json_utf8(ENCODER.encode(key)) + b":"
        yield value
    yield b"}"


def encode_document(
    analysis: "Analysis", extra_files: Mapping[str, dict[str, Any]] | None = None
) -> bytes:
    """``canonical_json`` of ``analysis.document()`` with ``extra_files`` (path → document,
    such as the notebooks below the tree) added to its ``files``: :func:`document_pieces`
    joined."""
    return b"".join(document_pieces(analysis, extra_files))


def document_pieces(
    analysis: "Analysis", extra_files: Mapping[str, dict[str, Any]] | None = None
) -> list[bytes | memoryview]:
    """:func:`encode_document`'s bytes in pieces, in order: each module's document is the
    text the workers rendered (:attr:`Analysis.rendered`, read in place), or rendered here.
    Written piece by piece, a large document is copied once, to its file (the standard
    library's is 50 MB: joined first, it was copied twice)."""
    repository = analysis.repository
    assert repository is not None  # a directory's analysis
    document = analysis.document(files=False)
    rendered = analysis.rendered
    writer = DocumentWriter()
    files: dict[str, bytes | memoryview] = {}
    for module in analysis.reports:  # a report is read only where none was rendered
        source = repository.modules[module]
        files[source.file.path] = rendered.get(module) or writer.document(
            source.file.path, source.result.diagnostics, analysis.reports[module]
        )
    files |= {p: json_utf8(ENCODER.encode(doc)) for p, doc in (extra_files or {}).items()}
    pieces: list[bytes | memoryview] = [b"{"]
    for i, key in enumerate(sorted(document)):
        pieces.append((b"," if i else b"") + json_utf8(ENCODER.encode(key)) + b":")
        if key == "files":
            pieces.extend(_object(files))
        else:
            pieces.append(json_utf8(ENCODER.encode(document[key])))
    pieces.append(b"}\n")
    return pieces
