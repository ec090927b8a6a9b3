"""What a readiness rule reads: the :class:`Subject` of one capability (its module, the
module's index, the capability, the :class:`Environment` it is judged in).

A rule about one capability is a :data:`CapabilityRule`, a function of a subject yielding
reasons; the rule tables (``readiness.CAPABILITY_RULES``, ``type_readiness.TYPE_RULES``)
map each rule's first code to it. Its own module so that a table in any pass module can
name the subject without importing the readiness pass.
"""

import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal

from svcc.contracts.diagnostics import Diagnostic
from svcc.ir.index import ModuleIndex
from svcc.ir.model import Capability, Import, ModuleIR

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen

ImportProblem = Literal["local", "missing", "external"]


@frozen(kw_only=True)
class Environment:
    """What the source can import besides the standard library.

    ``resolve_import`` judges an import over the module graph of the module's repository (a
    directory, or a file with the modules beside it that it imports: see
    :mod:`svcc.compiler.passes.repository_readiness`); without one the module stands alone
    and only the standard library and the declared requirements resolve.
    """

    declared_imports: frozenset[str] = frozenset()
    declared_requirements: tuple[str, ...] = ()
    # Governed execution: results must be exactly JSON (generation with a policy).
    governed: bool = False
    # Security effect kinds the user opted into (``--allow``, ``[tool.svcc] allow``).
    allow: frozenset[str] = frozenset()
    # Declared distributions with no known import name: an import nothing else provides is
    # attributed to them (a warning), see ``svcc.contracts.requirements``.
    unmapped: tuple[str, ...] = ()
    # Declared data files, relative to the module's folder (``--data``).
    data_files: frozenset[str] = frozenset()
    # Resolves an import over the module graph: ``None``, or ``(kind, why not)`` where kind
    # is ``"local"`` (a local module the bundle cannot hold: SVC-R021), ``"missing"`` (no
    # such module of the repository) or ``"external"`` (neither standard library nor
    # declared).
    resolve_import: "Callable[[Import], tuple[ImportProblem, str] | None] | None" = None
    # A directory (its dependencies are declared in pyproject.toml) or a file (with
    # --requirements FILE): how an undeclared import is said.
    repository: bool = False


@frozen(kw_only=True)
class Subject:
    """What a capability rule reads: the module, its index, the capability, the environment."""

    ir: ModuleIR
    index: ModuleIndex
    cap: Capability
    env: Environment


CapabilityRule = Callable[[Subject], Iterable[Diagnostic]]


def available(root: str, env: Environment) -> bool:
    """Whether an import of the top-level name ``root`` resolves without the module graph:
    the standard library or a declared requirement (``cog`` is judged against the shim the
    bundle ships: ``readiness``)."""
    return root == "__future__" or root in sys.stdlib_module_names or root in env.declared_imports
