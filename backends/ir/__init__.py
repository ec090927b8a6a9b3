"""The ``ir`` target: the analysis artifacts alone (``capability-ir.json``, ``readiness.json``).

The smallest real target, and the one ``docs/adding-a-target.md`` walks through: a frozen
attrs class with a ``name``, a ``description`` and ``emit``, registered under the
``svcc.targets`` entry-point group. It does no I/O; the writer writes the tree.
"""

from typing import ClassVar

from attrs import frozen
from svcc.contracts.target import BundleSpec, EmitContext, FileTree
from svcc.ir.canonical import canonical_json
from svcc.ir.model import ModuleIR
from svcc.ir.serde import ir_to_json


@frozen
class IrTarget:
    name: ClassVar[str] = "ir"
    description: ClassVar[str] = "the capability IR and readiness report of the selection"
    supports_execution_policy: ClassVar[bool] = False
    bundle: ClassVar[BundleSpec | None] = None  # artifacts, not a service

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        return FileTree.of(
            {
                "capability-ir.json": ir_to_json(ir),
                "readiness.json": canonical_json(ctx.readiness.to_json()),
            }
        )
