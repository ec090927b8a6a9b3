"""Pickled models (SVC-R088): a declared data file read by an unpickler.

Unpickling a model imports the modules of the library it was saved with (a scikit-learn
model imports ``sklearn``), which nothing in the source names: a bundle whose requirements
lack that library starts, then fails while loading the model. The reason says so when the
file is read, naming the libraries the module imports that no requirement declares (the
usual culprits); what the pickle itself needs cannot be read without running it.
"""

import sys
from collections.abc import Iterable, Iterator
from typing import Final

from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics import codes as C
from svcc.ir.model import Capability, Evaluation, ModuleIR

UNPICKLERS: Final = frozenset(
    {"joblib.load", "pickle.load", "torch.load", "dill.load", "cloudpickle.load"}
)


# The module's own unpickler calls, found once per module rather than once per capability
# (a module of n capabilities would scan its statements n times): the last module asked.
_module_loads: list[tuple[ModuleIR, tuple[Evaluation, ...]]] = []


def _unpickling(evaluations: Iterable[Evaluation]) -> Iterator[Evaluation]:
    return (e for e in evaluations if e.kind == "call" and e.callee in UNPICKLERS)


def _of_module(ir: ModuleIR) -> tuple[Evaluation, ...]:
    entry = _module_loads[0] if _module_loads else None  # one read: threads may share this
    if entry is None or entry[0] is not ir:
        entry = (ir, tuple(_unpickling(e for stmt in ir.statements for e in stmt.evaluations)))
        _module_loads[:] = [entry]
    return entry[1]


def _loads(ir: ModuleIR, cap: Capability) -> Iterator[Evaluation]:
    """What the capability's module, its service class's construction and its own body
    read: every evaluation that may unpickle a file."""
    service = ir.service(cap.qualname)
    yield from _unpickling(service.construction if service is not None else ())
    yield from _of_module(ir)
    yield from _unpickling(cap.effects)


def pickled_model_reasons(
    ir: ModuleIR, cap: Capability, data_files: frozenset[str], declared: frozenset[str]
) -> Iterator[Diagnostic]:
    """One warning per declared file an unpickler reads; ``declared`` are the import names
    the requirements provide."""
    if not data_files:  # no declared file to read (most modules): no reason, nothing to scan
        return
    seen: set[str] = set()
    for load in _loads(ir, cap):
        path = load.path
        if load.kind != "call" or load.callee not in UNPICKLERS or path not in data_files:
            continue
        if path in seen:
            continue
        seen.add(path)
        roots = sorted(
            {
                i.module.split(".")[0]
                for i in ir.imports
                if i.level == 0 and not i.type_checking and i.module
            }
            - declared
            - set(sys.stdlib_module_names)
        )
        tail = f"; imported here and not declared: {', '.join(roots)}" if roots else ""
        yield diag(
            C.R088_PICKLED_MODEL,
            f"unpickling {path} imports the libraries the model was saved with (a "
            f"scikit-learn model imports sklearn): each must be declared{tail}",
            load.span,
        )
