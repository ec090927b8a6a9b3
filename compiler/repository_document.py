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

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from svcc.frontends.repository import PARALLEL_FROM
from svcc.ir.canonical import ENCODER

if TYPE_CHECKING:
    from svcc.compiler.analysis import Analysis

# The analysis a forked worker renders from (set in the parent just before the fork).
_SHARED: "list[Analysis]" = []


def _render(modules: Sequence[str]) -> list[bytes]:
    """In a worker (or in-process): each module's document as canonical JSON (UTF-8)."""
    analysis = _SHARED[-1]
    return [ENCODER.encode(analysis.module_document(m)).encode("utf-8") for m in modules]


def _rendered(analysis: "Analysis", modules: list[str], workers: int | None) -> list[bytes]:
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


def _object(entries: Mapping[str, bytes]) -> Iterator[bytes]:
    """A JSON object's pieces from its keys and its values' canonical UTF-8 texts, as
    ``ENCODER`` would write it (keys sorted)."""
    yield b"{"
    for i, (key, value) in enumerate(sorted(entries.items())):
        yield (b"," if i else b"") + ENCODER.encode(key).encode("utf-8") + b":"
        yield value
    yield b"}"


def encode_document(
    analysis: "Analysis",
    extra_files: Mapping[str, dict[str, Any]] | None = None,
    workers: int | None = None,
) -> bytes:
    """``canonical_json`` of ``analysis.document()`` with ``extra_files`` (path → document,
    such as the notebooks below the tree) added to its ``files``; ``workers``: processes
    rendering the modules' documents (``None``: one per CPU). The pieces stay bytes and are
    joined once: 70 MB copied once, not once per string step (1.4 s of the parent's time)."""
    repository = analysis.repository
    assert repository is not None  # a directory's analysis
    document = analysis.document(files=False)
    modules = sorted(analysis.reports)
    texts = _rendered(analysis, modules, workers)
    files = {repository.modules[m].file.path: t for m, t in zip(modules, texts, strict=True)}
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
