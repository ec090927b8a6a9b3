"""Files a capability reads when it is called: the one table of read callables and the rule.

A read at import is judged with the module's other import-time effects
(:mod:`svcc.compiler.passes.effects`, ``SVC-R026``); a read inside a capability's body runs
on every call, so it must find its file in the served bundle. The front end records each
call of a ``DATA_READERS`` callable (the one table, in
:mod:`svcc.frontends.python.data_reads`) whose path it can name (``Evaluation.path`` for a
path built from ``__file__``, ``Evaluation.literal`` for a literal relative path); this
module judges them:

- a path built from ``__file__`` that names a declared data file is fine (the bundle holds
  it beside the module, or above it below ``source/``, verified at startup); an undeclared
  one is ``SVC-R042``, and so is one that climbs above the module's source root
  (``Path(__file__).parent.parent`` of a top-level module): the bundle holds the sources
  under ``source/``, so nothing is there to declare;
- a literal relative path (``open("catalog.json")``, ``pd.read_csv("data/train.csv")``) is
  resolved against the working directory, as in a notebook or a script run from its folder.
  A direct server makes ``source/`` (the module's source root) its working directory before
  it imports the served code (``svc_runtime.calls.enter_source``), so a path that, read from
  there, names a declared data file is fine (:func:`served_relative`); an undeclared one is
  ``SVC-R043``, and so is any under governed execution, whose workers run in a scratch
  folder (the hint: build the path from ``__file__``).

The reads a capability makes through the module's own functions it calls, or through a
name bound more than once, come as ``Capability.file_reads`` (the read once per value its
path may have) and are judged alike, all together or not at all. A path built from a
parameter is the ``paths`` security effect instead (``SVC-R036``); a path the source does
not spell (a computed string) is not judged here, nor is an absolute one
(``open("/etc/hostname")``, ``HERE / "/etc/hostname"``): a file of the machine, not the
bundle's.
"""

import posixpath
from collections.abc import Iterable, Iterator

from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics import codes as C
from svcc.frontends.python.data_reads import reads_file
from svcc.ir.model import Evaluation, FileRead, ModuleIR


def source_depth(ir: ModuleIR) -> int:
    """How many folders the module's own folder is below the source root (the bundle's
    ``source/``): 0 for ``mod.py``, 1 for ``pkg/mod.py`` and ``pkg/__init__.py``."""
    parts = ir.module.count(".") + 1
    return parts if posixpath.basename(ir.source.path) == "__init__.py" else parts - 1


def climbs(path: str) -> int:
    """How many folders above the module's folder the recorded ``path`` starts."""
    count = 0
    for part in path.split("/"):
        if part != "..":
            break
        count += 1
    return count


def served_relative(literal: str, data_files: frozenset[str], depth: int) -> bool:
    """Whether ``literal``, a path read relative to the working directory, names a declared
    data file where a served bundle finds it: a direct server's working directory is
    ``source/``, the module's source root (``svc_runtime.calls.enter_source``), so the
    path is resolved from there, while ``data_files`` are named from the module's folder,
    ``depth`` folders below (:func:`source_depth`)."""
    if posixpath.isabs(literal):
        return False
    return posixpath.normpath(posixpath.join(*([".."] * depth), literal)) in data_files


def data_read_reasons(
    effects: Iterable[Evaluation],
    data_files: frozenset[str],
    file_reads: Iterable[FileRead] = (),
    depth: int = 0,
    governed: bool = False,
) -> Iterator[Diagnostic]:
    """The reasons a capability's file reads would fail when it is served: its own body's
    (``Capability.effects``), then those through a name bound more than once or through the
    module's functions it calls (``Capability.file_reads``). A read whose path may have
    several values is judged only when every value is judged alike (all undeclared, or all
    relative to the working directory): otherwise one of them may be the fallback that
    works. ``depth``: the module's folder below its source root (:func:`source_depth`);
    ``governed``: a governed worker runs each call in a scratch folder, so a path relative to
    the working directory finds nothing there, declared or not."""
    for e in effects:
        yield from _reasons(e, data_files, "", depth, governed)
    for read in file_reads:
        where = _where(read)
        found = [list(_reasons(e, data_files, where, depth, governed)) for e in read.reads]
        if all(found) and len({d.code for group in found for d in group}) == 1:
            seen: set[str] = set()
            for group in found:
                for reason in group:
                    if reason.message not in seen:
                        seen.add(reason.message)
                        yield reason


def _where(read: FileRead) -> str:
    """`` in _load, reached through _catalog() -> _load() on line 12`` for a read in a
    function the capability calls; empty for its own."""
    if not read.through:
        return ""
    chain = " -> ".join(f"{name}()" for name in read.through)
    line = f" on line {read.call.line}" if read.call is not None else ""
    return f" in {read.through[-1]}, reached through {chain}{line},"


def _reasons(
    e: Evaluation, data_files: frozenset[str], where: str, depth: int, governed: bool
) -> Iterator[Diagnostic]:
    """The reason the read ``e`` (``where`` it is reached) would fail when served."""
    if e.kind != "call" or not reads_file(e.callee or ""):
        return
    if e.path is not None:
        if e.path == "__file__" or e.path in data_files:
            return  # the bundle holds it where the module reads it
        up = climbs(e.path)
        if up > depth:
            yield diag(
                C.R042_UNDECLARED_DATA_READ,
                f"{e.text}{where} reads {e.path} on every call, which climbs above the "
                "module's source root: the served bundle holds only what is below that root, "
                "so it cannot hold this file",
                e.span,
                hint="move the file below the source root (the folder holding the module's "
                "top-level package), declare it, and build its path from __file__",
            )
            return
        place = "above the module's folder" if up else "beside the module"
        yield diag(
            C.R042_UNDECLARED_DATA_READ,
            f"{e.text}{where} reads {e.path} {place} on every call, which is not a "
            "declared data file, so the served bundle would not hold it",
            e.span,
        )
    elif e.literal is not None and not posixpath.isabs(e.literal):
        declared = served_relative(e.literal, data_files, depth)
        if declared and not governed:
            return  # the server's working directory is source/, where the bundle holds it
        yield diag(
            C.R043_WORKING_DIRECTORY_READ,
            f"{e.text}{where} reads {e.literal!r} relative to the working directory, which "
            + (
                "for a governed worker is a scratch folder (the file is declared, but not "
                "found from there)"
                if declared
                else "holds only the declared data files in a served bundle"
            ),
            e.span,
            hint=(
                f'build the path from __file__ (Path(__file__).parent / "{e.literal}")'
                if declared
                else "declare the file (--data PATH; in a repository, [tool.svcc] "
                "data-files): a direct server's working directory is the bundle's source/, "
                "which holds it there"
            ),
        )
