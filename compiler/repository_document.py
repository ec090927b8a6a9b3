"""``svcc inspect DIR --format json``: the repository document's bytes, its modules'
documents rendered and encoded in worker processes for a large tree.

Once readiness is judged over the graph, the parent used to build every module's document
and encode the whole document alone while the cores it had lowered the modules on stayed
idle: about a fifth of the command's time on the standard library (70 MB of JSON). Each
module's document depends only on the finished analysis, so workers forked from the parent
(the analysis is inherited, nothing is pickled to them) each render a share of the modules
to canonical JSON text and send the text back; the parent joins the texts in key order.
The bytes are those of ``canonical_json(analysis.document())`` whatever the worker count:
a canonical document is its keys and values' canonical texts joined with ``,`` and ``:``
in sorted key order, so the joining is exact (``tests/test_scaling.py`` checks it).
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from svcc.frontends.repository import PARALLEL_FROM
from svcc.ir.canonical import ENCODER

if TYPE_CHECKING:
    from svcc.compiler.analysis import Analysis

# The analysis a forked worker renders from (set in the parent just before the fork).
_SHARED: "list[Analysis]" = []


def _render(modules: Sequence[str]) -> list[str]:
    """In a worker (or in-process): each module's document as canonical JSON text."""
    analysis = _SHARED[-1]
    return [ENCODER.encode(analysis.module_document(m)) for m in modules]


def _rendered(analysis: "Analysis", modules: list[str], workers: int | None) -> list[str]:
    import os

    count = workers if workers is not None else (os.cpu_count() or 1)
    _SHARED.append(analysis)
    try:
        if count <= 1 or len(modules) < PARALLEL_FROM:
            return _render(modules)
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        size = max(1, len(modules) // (count * 8))
        chunks = [modules[i : i + size] for i in range(0, len(modules), size)]
        from svcc.runtime.lifetime import die_with_parent

        context = multiprocessing.get_context("fork")
        pool = ProcessPoolExecutor(  # each worker ends with this process (see there)
            count, mp_context=context, initializer=die_with_parent, initargs=(os.getpid(),)
        )
        with pool:
            return [text for texts in pool.map(_render, chunks) for text in texts]
    finally:
        _SHARED.pop()


def _joined(entries: Mapping[str, str]) -> str:
    """A JSON object from its keys and its values' canonical texts, as ``ENCODER`` would."""
    return "{" + ",".join(f"{ENCODER.encode(k)}:{v}" for k, v in sorted(entries.items())) + "}"


def encode_document(
    analysis: "Analysis",
    extra_files: Mapping[str, dict[str, Any]] | None = None,
    workers: int | None = None,
) -> bytes:
    """``canonical_json`` of ``analysis.document()`` with ``extra_files`` (path → document,
    such as the notebooks below the tree) added to its ``files``; ``workers``: processes
    rendering the modules' documents (``None``: one per CPU)."""
    repository = analysis.repository
    assert repository is not None  # a directory's analysis
    document = analysis.document(files=False)
    modules = sorted(analysis.reports)
    texts = _rendered(analysis, modules, workers)
    files = {repository.modules[m].file.path: t for m, t in zip(modules, texts, strict=True)}
    files |= {path: ENCODER.encode(doc) for path, doc in (extra_files or {}).items()}
    document["files"] = None  # its text is joined below
    top = {k: _joined(files) if k == "files" else ENCODER.encode(v) for k, v in document.items()}
    return (_joined(top) + "\n").encode("utf-8")
