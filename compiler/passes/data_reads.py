"""Files a capability reads when it is called: the one table of read callables and the rule.

A read at import is judged with the module's other import-time effects
(:mod:`svcc.compiler.passes.effects`, ``SVC-R026``); a read inside a capability's body runs
on every call, so it must find its file in the served bundle. The front end records each
call of a ``DATA_READERS`` callable (the one table, in
:mod:`svcc.frontends.python.data_reads`) whose path it can name (``Evaluation.path`` for a
path built from ``__file__``, ``Evaluation.literal`` for a literal relative path); this
module judges them:

- a path built from ``__file__`` that names a declared data file is fine (the bundle holds
  it beside the module, verified at startup); an undeclared one is ``SVC-R042``;
- a literal relative path (``open("catalog.json")``, ``pd.read_csv("data/train.csv")``) is
  resolved against the working directory, which in a served bundle is never reliably the
  module's folder: ``svcc serve`` starts the server in the bundle's root (the module lives
  under ``source/``), a governed worker in a scratch folder, an image in its ``WORKDIR``, and
  ``uvicorn`` wherever it is started. Such a read is ``SVC-R043`` even when the file is
  declared, with the hint to build the path from ``__file__``.

A path built from a parameter is the ``paths`` security effect instead (``SVC-R036``); a
path the source does not spell (a variable, a computed string) is not judged here.
"""

import posixpath
from collections.abc import Iterable, Iterator

from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics import codes as C
from svcc.frontends.python.data_reads import reads_file
from svcc.ir.model import Evaluation


def data_read_reasons(
    effects: Iterable[Evaluation], data_files: frozenset[str]
) -> Iterator[Diagnostic]:
    """The reasons a capability's file reads (``Capability.effects``) would fail when it is
    served: undeclared files beside the module, paths relative to the working directory."""
    for e in effects:
        if e.kind != "call" or not reads_file(e.callee or ""):
            continue
        if e.path is not None:
            if e.path == "__file__" or e.path in data_files:
                continue  # the bundle holds it where the module reads it
            yield diag(
                C.R042_UNDECLARED_DATA_READ,
                f"{e.text} reads {e.path} beside the module on every call, which is not a "
                "declared data file, so the served bundle would not hold it",
                e.span,
            )
        elif e.literal is not None and not posixpath.isabs(e.literal):
            declared = posixpath.normpath(e.literal) in data_files
            yield diag(
                C.R043_WORKING_DIRECTORY_READ,
                f"{e.text} reads {e.literal!r} relative to the working directory, which in a "
                "served bundle is not the module's folder"
                + (" (the file is declared, but not found from there)" if declared else ""),
                e.span,
                hint=(
                    f'build the path from __file__ (Path(__file__).parent / "{e.literal}")'
                    + (
                        ""
                        if declared
                        else " and declare the file (--data PATH; in a "
                        "repository, [tool.svcc] data-files)"
                    )
                ),
            )
