"""``svcc inspect DIR --format json``: the repository document's bytes, its modules'
documents rendered where they were judged for a large tree.

Each module's document depends only on its report and its front end's diagnostics, which
the lowering workers hold for the modules they judged (``LoweringPool``); rendering them
there, each to canonical JSON text, keeps the parent from rendering 70 MB (the standard
library) alone while the cores stay idle, and from forking a second set of workers for it
(what this did before: a fork of the parent's whole heap, and the reports read twice). The
parent joins the texts in key order. The bytes are those of
``canonical_json(analysis.document())`` whatever the worker count: a canonical document is
its keys and values' canonical texts joined with ``,`` and ``:`` in sorted key order, so
the joining is exact (``tests/test_scaling.py`` checks it).
"""

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from svcc.ir.canonical import ENCODER

if TYPE_CHECKING:
    from svcc.compiler.analysis import Analysis
    from svcc.compiler.passes.readiness import ReadinessReport
    from svcc.contracts.diagnostics import Diagnostic
    from svcc.frontends.repository import Held, LoweringPool


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


def _render_held(held: "Held", _: None) -> dict[str, bytes]:
    """In a lowering worker: the documents of the modules it judged (``_reports`` kept
    their reports), as canonical JSON (UTF-8)."""
    reports = held.scratch["reports"]
    paths = {f.module: f.path for f in held.tree.files}
    return {
        module: ENCODER.encode(
            module_document(paths[module], result.diagnostics, reports[module])
        ).encode("utf-8")
        for module, result in held.results.items()
    }


def render_in_workers(pool: "LoweringPool") -> dict[str, bytes]:
    """Every module's document, rendered by the worker that judged it."""
    rendered: dict[str, bytes] = {}
    for part in pool.each(_render_held, None):
        rendered |= part
    return rendered


def _object(entries: Mapping[str, bytes]) -> Iterator[bytes]:
    """A JSON object's pieces from its keys and its values' canonical UTF-8 texts, as
    ``ENCODER`` would write it (keys sorted)."""
    yield b"{"
    for i, (key, value) in enumerate(sorted(entries.items())):
        yield (b"," if i else b"") + ENCODER.encode(key).encode("utf-8") + b":"
        yield value
    yield b"}"


def encode_document(
    analysis: "Analysis", extra_files: Mapping[str, dict[str, Any]] | None = None
) -> bytes:
    """``canonical_json`` of ``analysis.document()`` with ``extra_files`` (path → document,
    such as the notebooks below the tree) added to its ``files``; each module's document
    is the text the workers rendered (:attr:`Analysis.rendered`), or rendered here. The
    pieces stay bytes and are joined once: 70 MB copied once, not once per string step
    (1.4 s of the parent's time)."""
    repository = analysis.repository
    assert repository is not None  # a directory's analysis
    document = analysis.document(files=False)
    rendered = analysis.rendered
    files = {
        repository.modules[m].file.path: rendered.get(m)
        or ENCODER.encode(analysis.module_document(m)).encode("utf-8")
        for m in analysis.reports
    }
    files |= {p: ENCODER.encode(doc).encode("utf-8") for p, doc in (extra_files or {}).items()}
    pieces: list[bytes] = [b"{"]
    for i, key in enumerate(sorted(document)):
        pieces.append((b"," if i else b"") + ENCODER.encode(key).encode("utf-8") + b":")
        if key == "files":
            pieces.extend(_object(files))
        else:
            pieces.append(ENCODER.encode(document[key]).encode("utf-8"))
    pieces.append(b"}\n")
    return b"".join(pieces)
