"""The analysis result of one file, as the service returns it (DESIGN §5).

Legacy keys for existing integrations: ``version`` (the grammar used), ``imports``
(``import x``), ``imports_from`` (``from m import a``), and ``functions``: every public
module-level function with ``args`` (``{name, annotation: {type, of}}``), ``returns`` and
``selected`` (whether ``functions_to_analyze`` / ``ignore`` keep it). Modern keys:
``capabilities`` (the IR's records) and ``readiness`` (the readiness document), both
restricted to the selected functions. Everything comes from the compiler's own passes.
"""

import contextlib
import json
import logging
import os
import time
from collections.abc import Collection, Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Final

from attrs import frozen
from svcc.compiler.driver import Analysis, analyze, version_tuple
from svcc.compiler.options import AnalyzeOptions
from svcc.contracts.diagnostics import Diagnostic
from svcc.ir.canonical import json_utf8
from svcc.ir.serde import unstructure
from svcc.ir.types import (
    AnyType,
    BoolType,
    DataFrameType,
    DictType,
    EnumType,
    FloatType,
    IntType,
    ListType,
    LiteralType,
    ModelType,
    NdarrayType,
    NoneType,
    SeriesType,
    StrType,
    TupleType,
    TypedDictType,
    TypeNode,
    UnionType,
    UnresolvedType,
    UnsupportedType,
    ValueType,
)
from svcc.service.budget import OverBudget, mark_memory, memory_exhausted

if TYPE_CHECKING:
    from svcc.frontends.python import FrontendResult
    from svcc.frontends.repository import SourceFile

log = logging.getLogger("svcc.service")


def annotation(node: TypeNode) -> dict[str, Any]:
    """``{"type": kind, "of": [inner annotations or literal values]}``."""
    match node:
        case ListType(item=item):
            return {"type": "list", "of": [annotation(item)]}
        case DictType(value=value):
            return {"type": "dict", "of": [{"type": "str", "of": []}, annotation(value)]}
        case TupleType(items=items, variadic=variadic):
            inner = [annotation(i) for i in items]
            if variadic is not None:
                inner = [annotation(variadic), {"type": "...", "of": []}]
            return {"type": "tuple", "of": inner}
        case UnionType(options=options):
            return {"type": "union", "of": [annotation(o) for o in options]}
        case LiteralType(values=values):
            return {"type": "literal", "of": list(values)}
        case TypedDictType(name=name):
            return {"type": name, "of": []}
        case UnsupportedType(text=text) | UnresolvedType(text=text):
            return {"type": text, "of": []}
        case AnyType() | IntType() | FloatType() | StrType() | BoolType() | NoneType():
            return {"type": node.KIND, "of": []}
        case ValueType(name=name):  # date, datetime, time, timedelta, UUID, Decimal, bytes
            return {"type": name.rsplit(".", 1)[-1], "of": []}
        case EnumType(name=name, values=values):
            return {"type": name, "of": list(values)}
        case ModelType(name=name):
            return {"type": name, "of": []}
        case NdarrayType() | DataFrameType() | SeriesType():
            return {"type": node.KIND, "of": []}


def result_document(analysis: Analysis) -> dict[str, Any]:
    """Everything about one file, every function selected (filters come later)."""
    if analysis.ir is None or analysis.readiness is None:
        error = analysis.error
        assert error is not None
        return {"error": {"path": analysis.path, **error.to_json()}}
    ir = analysis.ir
    imports = sorted({i.module for i in ir.imports if i.scope == "" and not i.names})
    imports_from = [
        {"module": "." * i.level + i.module, "names": list(i.names)}
        for i in ir.imports
        if i.scope == "" and i.names
    ]
    functions = [
        {
            "name": cap.name,
            "args": [
                {"name": p.name, "kind": p.kind, "annotation": annotation(p.type)}
                for p in cap.params
            ],
            "returns": annotation(cap.returns.type),
            "async": cap.execution == "async",
            "docstring": cap.docstring,
            "selected": True,
            # a generator is served as a stream of its items (DESIGN §14)
            **({"stream": {"items": annotation(cap.stream.item)}} if cap.stream else {}),
        }
        for cap in ir.capabilities
    ]
    return {
        "version": ir.source.python_version,
        "module": ir.module,
        "imports": imports,
        "imports_from": imports_from,
        "functions": functions,
        "capabilities": [unstructure(c) for c in ir.capabilities],
        "readiness": bounded_diagnostics(analysis.document()),
    }


# An answer lists at most this many diagnostics of one code (a notebook of 800,000 magics
# made one warning each: a 138 MB answer); the rest are counted in ``diagnostics_omitted``.
MAX_DIAGNOSTICS_PER_CODE: Final = 100


def bounded_diagnostics(readiness: dict[str, Any]) -> dict[str, Any]:
    """``readiness`` with at most :data:`MAX_DIAGNOSTICS_PER_CODE` diagnostics per code, in
    their order, and ``diagnostics_omitted``: how many more of each code there were."""
    kept: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for item in readiness.get("diagnostics", ()):
        code = item["code"]
        seen[code] = seen.get(code, 0) + 1
        if seen[code] <= MAX_DIAGNOSTICS_PER_CODE:
            kept.append(item)
    omitted = {
        code: count - MAX_DIAGNOSTICS_PER_CODE
        for code, count in sorted(seen.items())
        if count > MAX_DIAGNOSTICS_PER_CODE
    }
    if omitted:
        readiness = {**readiness, "diagnostics": kept, "diagnostics_omitted": omitted}
    return readiness


def apply_selection(
    document: dict[str, Any], only: Collection[str] | None, ignore: Collection[str]
) -> dict[str, Any]:
    """Mark and restrict to the selected functions (``functions`` keeps every one)."""
    if "error" in document:
        return document

    def keep(name: str) -> bool:
        return (only is None or name in only) and name not in ignore

    for function in document["functions"]:
        function["selected"] = keep(function["name"])
    document["capabilities"] = [c for c in document["capabilities"] if keep(c["name"])]
    readiness = document["readiness"]
    readiness["assessments"] = [a for a in readiness["assessments"] if keep(a["name"])]
    return document


# -- the work a request hands to its bounded child (svcc.service.budget) ----------------------


class Unanalysable(Exception):
    """The source did not analyse (syntax, encoding, format); the message says where."""


class Refused(Exception):
    """A request the child found unacceptable (an unknown function name, too many files)."""


def module_for(filename: str) -> str:
    """A module name for an uploaded file: its stem with non-identifier characters replaced."""
    from svcc.frontends.module_names import derive_module_name

    name = derive_module_name(PurePosixPath(filename).stem) or "module"
    return "".join(c if c.isascii() else "_" for c in name)  # ids travel in URLs: ASCII


def encode(document: Any) -> bytes:
    """The JSON bytes of an answer (done in the child: its cost is within the budget)."""
    return json_utf8(json.dumps(document, ensure_ascii=False))


def analyse_upload(
    data: bytes,
    filename: str,
    *,
    python_version: str,
    encoding: str | None,
    only: list[str] | None,
    ignore: list[str],
) -> bytes:
    """The result document (JSON) of one uploaded file, restricted to the selection; a
    notebook goes through the notebook front end (its suffix decides, as on the command
    line). An unknown name in ``only`` is :class:`Refused`."""
    name = PurePosixPath(filename).name or "upload.py"
    notebook = PurePosixPath(name).suffix.lower() == ".ipynb"
    try:
        analysis = analyze(
            name,
            AnalyzeOptions(
                source=data,
                module_name=module_for(name),
                python_version=python_version,
                encoding=encoding,
                source_format="notebook" if notebook else "python",
                check_name=False,
            ),
        )
    except UnicodeEncodeError as exc:  # a lone surrogate escape reaching the IR's JSON
        raise Unanalysable(
            f"{name}: the source holds text that is not valid Unicode ({exc.reason})"
        ) from None
    if analysis.error is not None:
        if memory_exhausted():
            raise MemoryError
        raise Unanalysable(analysis.error_message())
    document = apply_selection(result_document(analysis), only, ignore)
    refuse_unknown(only, {f["name"] for f in document["functions"]})
    try:
        return encode(document)
    except UnicodeEncodeError as exc:
        raise Unanalysable(
            f"{name}: the source holds text that is not valid Unicode ({exc.reason})"
        ) from None


def process_upload(data: bytes, name: str, notebook: bool) -> str:
    """The processed module text (header + module), or :class:`Unanalysable`."""
    analysis = analyze(
        name,
        AnalyzeOptions(
            source=data,
            module_name=module_for(name),
            source_format="notebook" if notebook else "python",
            check_name=False,
        ),
    )
    if analysis.module_text is None:
        if memory_exhausted():
            raise MemoryError
        raise Unanalysable(analysis.error_message() if analysis.error else "not processable")
    removed = sum(1 for d in analysis.diagnostics if d.code in ("SVC-F004", "SVC-F005", "SVC-F006"))
    header = f"# Processed by svcc from {name}"
    if notebook:
        left_out = sum(1 for d in analysis.diagnostics if d.code == "SVC-F012")
        header += (
            f" (notebook; {removed} magic or shell lines removed; "
            f"{left_out} cells or statements left out, as the CLI serves it)"
        )
    return f"{header}\n{analysis.module_text}"


class _FileOverBudget(Exception):
    pass


def _error_entry(relpath: str, message: str) -> bytes:
    from svcc.contracts.diagnostics import diag
    from svcc.contracts.diagnostics.codes import F007_NOT_ANALYSABLE

    error = diag(F007_NOT_ANALYSABLE, message, None).to_json()
    return encode({"error": {"path": relpath, **error}})


@frozen(kw_only=True)
class TreeJob:
    """What every file of one directory analysis shares (sent to pool workers once)."""

    root: Path
    python_version: str
    encoding: str | None
    file_seconds: float
    total_seconds: float
    deadline: float  # time.monotonic(): one clock for every process on the machine
    only: tuple[str, ...] | None
    ignore: tuple[str, ...]
    token: str  # one directory analysis: the local-import facts cache lives no longer


_FACTS: dict[str, dict[Any, Any]] = {}
SERIAL_BELOW = 16


def _over(_signum: int, _frame: object) -> None:
    raise _FileOverBudget


def _facts(job: TreeJob) -> dict[Any, Any]:
    """The local-import facts cache of the current directory analysis (see
    ``analyze(facts_cache=...)``); a new analysis drops the previous one's."""
    if job.token not in _FACTS:
        _FACTS.clear()
        _FACTS[job.token] = {}
    return _FACTS[job.token]


def fenced_entry(job: TreeJob, relpath: str) -> bytes:
    """The JSON entry of one file; whatever goes wrong costs this entry only. Expects
    ``SIGPROF`` to raise :class:`_FileOverBudget` (``analyse_tree`` installs it)."""
    import signal
    import stat

    from svcc.contracts.errors import InputError

    if time.monotonic() > job.deadline:
        return _error_entry(
            relpath, f"not analysed: the request's {job.total_seconds:g}-second budget ran out"
        )
    full = job.root / relpath
    try:
        info = os.stat(full, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{relpath}: not a regular file")
        signal.setitimer(signal.ITIMER_PROF, job.file_seconds)
        mark_memory()
        try:
            # exactly as `svcc inspect` analyses the file: module name from the nearest
            # source root, local import closure judged
            analysis = analyze(
                full,
                AnalyzeOptions(
                    display_path=relpath,
                    python_version=job.python_version,
                    encoding=job.encoding,
                    facts_cache=_facts(job),
                ),
            )
            if analysis.error is not None and memory_exhausted():
                raise MemoryError
            document = apply_selection(result_document(analysis), job.only, job.ignore)
            return encode(document)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
    except UnicodeEncodeError as exc:
        message = f"the source holds text that is not valid Unicode ({exc.reason})"
    except _FileOverBudget:
        message = f"not analysed: over the {job.file_seconds:g}-second budget per file"
    except MemoryError:
        message = "not analysed: over the memory budget"
    except InputError as exc:
        message = str(exc).replace(f"{job.root}/", "")
    except OSError as exc:
        message = f"cannot read: {exc.strerror or exc}"
    except Exception as exc:  # a front-end bug must not cost the other files
        log.exception("analysing %s", relpath)
        message = f"internal error: {type(exc).__name__} (logged)"
    return _error_entry(relpath, message)


def _install_fence() -> None:
    """In each pool process: the CPU fence, and the end of the process with the analysis
    child that forked it (killed over its budget, or with its worker and master, SIGKILL
    included): the pool's processes would otherwise wait on its queue forever."""
    import signal

    from svcc.runtime.lifetime import die_with_parent

    die_with_parent(os.getppid())
    signal.signal(signal.SIGPROF, _over)


def fenced_lowering(job: TreeJob, file: "SourceFile") -> "FrontendResult":
    """One declared module through the Python front end, fenced like :func:`fenced_entry`:
    whatever goes wrong (CPU, memory, a front-end bug) is an error diagnostic of this
    module only, which the repository readiness then treats as a module that did not
    analyse (its importers say so)."""
    import signal

    from svcc.contracts.diagnostics import diag
    from svcc.contracts.diagnostics.codes import F007_NOT_ANALYSABLE
    from svcc.frontends.python import FrontendResult
    from svcc.frontends.repository import lower_file

    if time.monotonic() > job.deadline:
        message = f"not analysed: the request's {job.total_seconds:g}-second budget ran out"
    else:
        try:
            signal.setitimer(signal.ITIMER_PROF, job.file_seconds)
            mark_memory()
            try:
                result = lower_file(file, version_tuple(job.python_version), job.encoding)
                if result.ir is None and memory_exhausted():
                    raise MemoryError
                return result
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
        except _FileOverBudget:
            message = f"not analysed: over the {job.file_seconds:g}-second budget per file"
        except MemoryError:
            message = "not analysed: over the memory budget"
        except Exception as exc:  # a front-end bug must not cost the other files
            log.exception("analysing %s", file.path)
            message = f"internal error: {type(exc).__name__} (logged)"
    return FrontendResult(
        ir=None, diagnostics=(diag(F007_NOT_ANALYSABLE, message, None),), module_text=None
    )


def _task(job: TreeJob, task: "tuple[str, SourceFile | str]") -> "FrontendResult | bytes":
    """A pool task: a declared module to lower, or a file outside the repository's modules
    (a notebook, a file outside the source roots) analysed alone."""
    kind, item = task
    if kind == "module":
        assert not isinstance(item, str)
        return fenced_lowering(job, item)
    assert isinstance(item, str)
    return fenced_entry(job, item)


def _run_tasks(
    job: TreeJob, tasks: "list[tuple[str, SourceFile | str]]", workers: int | None
) -> "list[FrontendResult | bytes]":
    """Every task, in order; in forked processes (one per core) from :data:`SERIAL_BELOW`."""
    from functools import partial

    count = workers or os.cpu_count() or 1
    if count <= 1 or len(tasks) < SERIAL_BELOW:
        return [_task(job, t) for t in tasks]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    chunk = max(1, min(16, len(tasks) // (count * 8)))
    try:
        with ProcessPoolExecutor(
            max_workers=count,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_install_fence,
        ) as pool:
            return list(pool.map(partial(_task, job), tasks, chunksize=chunk))
    except BrokenProcessPool:
        raise OverBudget(
            "a process analysing this directory was ended (over the CPU or memory budget)"
        ) from None


def _problem_entry(relpath: str, diagnostic: "Diagnostic") -> bytes:
    return encode({"error": {"path": relpath, **diagnostic.to_json()}})


def _module_entry(job: TreeJob, analysis: Analysis, module: str) -> bytes:
    document = apply_selection(
        result_document(analysis.file_analysis(module)), job.only, job.ignore
    )
    try:
        return encode(document)
    except UnicodeEncodeError as exc:
        assert analysis.repository is not None  # a directory's analysis
        path = analysis.repository.modules[module].file.path
        return _error_entry(path, f"the source holds text that is not valid Unicode ({exc.reason})")


def analyse_tree(
    root: Path,
    files: list[str],
    *,
    python_version: str,
    encoding: str | None,
    file_seconds: float,
    total_seconds: float,
    only: list[str] | None = None,
    ignore: Collection[str] = (),
    workers: int | None = None,
) -> Iterator[tuple[str, bytes]]:
    """``(relative path, result document as JSON)`` for each of ``files`` below ``root``,
    in order.

    The Python files of the repository's source roots go through the repository front end,
    exactly as ``svcc inspect DIR`` reads them (source roots, module names, imports between
    the files resolved, import-time risks inherited through the module graph); entries the
    tree refuses (a special file, a duplicate module, a file over the per-file bound) are
    their own error entries. Notebooks and files outside the source roots are analysed one
    by one, as ``svcc inspect FILE`` would.

    Each file is fenced off (:func:`fenced_lowering`, :func:`fenced_entry`): a file that
    fails to read, raises inside the front end, runs out of memory or uses more than
    ``file_seconds`` of CPU costs its own entry (``{"error": ...}``) and nothing else. Files
    not reached within ``total_seconds`` get an entry saying so. From :data:`SERIAL_BELOW`
    files the work is spread over forked processes (one per core)."""
    import secrets
    import signal

    from svcc.compiler.driver import assess_repository
    from svcc.frontends.repository import TreeLimits, TreeRefused, build_repository, read_tree

    job = TreeJob(
        root=root,
        python_version=python_version,
        encoding=encoding,
        file_seconds=file_seconds,
        total_seconds=total_seconds,
        deadline=time.monotonic() + total_seconds,
        only=tuple(only) if only is not None else None,
        ignore=tuple(ignore),
        token=secrets.token_hex(8),
    )
    previous = signal.signal(signal.SIGPROF, _over)
    try:
        try:
            tree = read_tree(root, TreeLimits(max_files=max(1, len(files))), oversize_entries=True)
        except TreeRefused as exc:
            raise Refused(f"{exc.diagnostic.code} {exc}") from None
        declared = {f.path: f for f in tree.files}
        problems: dict[str, Diagnostic] = {}
        for path, diagnostic in tree.problems:
            problems.setdefault(path, diagnostic)
        alone = [rel for rel in files if rel not in declared and rel not in problems]
        tasks: list[tuple[str, SourceFile | str]] = [("module", f) for f in tree.files]
        tasks += [("file", rel) for rel in alone]
        done = _run_tasks(job, tasks, workers)
        lowered = {
            f.module: r
            for f, r in zip(tree.files, done[: len(tree.files)], strict=True)
            if not isinstance(r, bytes)
        }
        singles = dict(zip(alone, done[len(tree.files) :], strict=True))
        analysis = assess_repository(build_repository(tree, lowered))
        for relpath in files:
            if relpath in declared:
                yield relpath, _module_entry(job, analysis, declared[relpath].module)
            elif relpath in problems:
                yield relpath, _problem_entry(relpath, problems[relpath])
            else:
                entry = singles[relpath]
                assert isinstance(entry, bytes)
                yield relpath, entry
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def directory_answer(prefix: str, entries: Iterator[tuple[str, bytes]]) -> bytes:
    """``{workspace path: result}`` as JSON, assembled from entries already encoded."""
    parts = []
    for rel, entry in entries:
        key = rel if prefix == "." else f"{prefix}/{rel}"
        parts.append(json_utf8(json.dumps(key, ensure_ascii=False)) + b": " + entry)
    return b"{" + b", ".join(parts) + b"}"


def warm_up() -> None:
    """Import and exercise everything an analysis uses, once, in the process that forks the
    analysis children (gunicorn's master builds the application before forking its
    workers): a child then starts warm instead of importing the compiler on every request,
    and ``gc.freeze`` keeps the collector from touching (and so copying) what it inherited."""
    import gc

    source = (
        b'"""m."""\n\ndef f(x: int, y: list[str] | None = None) -> dict[str, int]:\n    return {}\n'
    )
    notebook = json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {
                    "cell_type": "code",
                    "id": "c1",
                    "metadata": {},
                    "execution_count": None,
                    "outputs": [],
                    "source": "def g(x: int) -> int:\n    return x\n",
                }
            ],
        }
    ).encode()
    for name, data in (("warm.py", source), ("warm.ipynb", notebook)):
        with contextlib.suppress(Unanalysable):
            analyse_upload(data, name, python_version="3.11", encoding=None, only=None, ignore=[])
    gc.collect()
    gc.freeze()


def analyse_directory_answer(
    directory: Path,
    prefix: str,
    *,
    limit: int,
    python_version: str,
    encoding: str | None,
    only: list[str] | None,
    ignore: list[str],
    file_seconds: float,
    total_seconds: float,
) -> bytes:
    """The JSON answer of ``/analyse_directory/``; the walk too is within the budget."""
    from svcc.frontends.repository import notebook_paths

    files = notebook_paths(directory, modules=True)  # skipping what ``inspect DIR`` skips
    if len(files) > limit:
        raise Refused(f"{len(files)} Python files is over the {limit}-file limit")
    entries = list(
        analyse_tree(
            directory,
            files,
            python_version=python_version,
            encoding=encoding,
            file_seconds=file_seconds,
            total_seconds=total_seconds,
            only=only,
            ignore=ignore,
        )
    )
    if only:  # a name no file defines is a 400, as for one file (it answered 200, all unselected)
        known = {
            function["name"]
            for _, entry in entries
            for function in json.loads(entry).get("functions", ())
        }
        refuse_unknown(only, known, ": no file analysed below defines it")
    return directory_answer(prefix, iter(entries))


def refuse_unknown(only: Collection[str] | None, known: set[str], where: str = "") -> None:
    """A selected name that no analysed function has is a 400 (the one rule for a file and
    for a directory)."""
    unknown = [name for name in only or () if name not in known]
    if unknown:
        raise Refused(f"unknown function {unknown[0]!r}{where}")


def bundle_files(
    source: Path,
    shown: str,
    *,
    requirements: Path | None = None,
    select: str | None = None,
) -> dict[str, bytes]:
    """The REST bundle of ``source`` (``shown`` is the path as the client gave it), with the
    declared ``requirements`` file and the ``select`` expression as on the command line.
    An ineligible selection raises :class:`~svcc.contracts.errors.IneligibleError`."""
    from svcc.backends.rest import RestTarget
    from svcc.compiler.bundles import build_bundle
    from svcc.compiler.driver import refuse_directory
    from svcc.contracts.errors import InputError
    from svcc.contracts.requirements import load_requirements

    refuse_directory(source)  # the container runs one file's bundle
    declared = load_requirements(requirements) if requirements is not None else None
    analysis = analyze(
        source, AnalyzeOptions(module_name=module_for(source.name), requirements=declared)
    )
    if analysis.error is not None:
        if memory_exhausted():
            raise MemoryError
        raise InputError(analysis.error_message(shown))
    # the service's containers run the REST bundle under gunicorn (its specification)
    target = RestTarget()
    assert target.bundle is not None
    taken = target.bundle.module_name_problem(analysis.module)
    if taken:  # the service has no module-name field (the compiler's hint names the option)
        raise InputError(f"{shown}: {taken}; rename the file")
    _, tree = build_bundle(analysis, target, select=select)
    return dict(tree)
