"""Pickled models (SVC-R088): a declared data file read by an unpickler.

Unpickling a model imports the modules of the library it was saved with (a scikit-learn
model imports ``sklearn``), which nothing in the source names: a bundle whose requirements
lack that library starts, then fails while loading the model. The reason says so when the
file is read, naming the libraries the module imports that no requirement declares (the
usual culprits); what the pickle itself needs cannot be read without running it.
"""

import sys
from collections.abc import Iterator
from typing import Final

from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics import codes as C
from svcc.ir.model import Capability, Evaluation, ModuleIR

UNPICKLERS: Final = frozenset(
    {"joblib.load", "pickle.load", "torch.load", "dill.load", "cloudpickle.load"}
)


def _loads(ir: ModuleIR, cap: Capability) -> Iterator[Evaluation]:
    """What the capability's module, its service class's construction and its own body
    read: every evaluation that may unpickle a file."""
    service = ir.service(cap.qualname)
    yield from service.construction if service is not None else ()
    for stmt in ir.statements:
        yield from stmt.evaluations
    yield from cap.effects


def pickled_model_reasons(
    ir: ModuleIR, cap: Capability, data_files: frozenset[str], declared: frozenset[str]
) -> Iterator[Diagnostic]:
    """One warning per declared file an unpickler reads; ``declared`` are the import names
    the requirements provide."""
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
