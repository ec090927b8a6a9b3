"""The ``cog`` a bundle ships in place of the Cog package (``svcc.runtime.cog``).

A module that imports ``cog`` gets the shim as ``source/cog.py`` (the back ends ship it, see
``backends/_common/bundle``), so ``cog`` needs no declaration; but the shim is one module
holding the names Cog predictors import: ``from cog import BasePredictor, Input`` resolves,
``from cog.server import ...`` or a name the shim lacks would fail at startup and is refused
here, by the readiness pass, with the import's line.
"""

from collections.abc import Iterable
from typing import Final

from svcc.ir.model import Import

SHIM_MODULE: Final = "cog"


def shim_names() -> frozenset[str]:
    """What the shim defines (its ``__all__``), imported only for a module that imports
    ``cog``: the shim imports ``pathlib``, which ``inspect FILE`` otherwise never needs."""
    from svcc.runtime.cog import __all__ as names

    return frozenset(names)


def imports_cog(imports: Iterable[Import]) -> bool:
    """Some import of the module is of ``cog`` (the bundle then ships the shim)."""
    return any(i.level == 0 and i.module.split(".", 1)[0] == SHIM_MODULE for i in imports)


def shim_problem(imp: Import) -> str | None:
    """Why ``imp`` (an import of ``cog`` or a submodule) fails against the shim, or ``None``."""
    names = shim_names()
    if imp.module != SHIM_MODULE:
        return (
            f"import {imp.module!r}: svcc serves Cog predictors with its own `cog` module, which "
            f"has no submodules; import from `cog` ({', '.join(sorted(names))})"
        )
    missing = sorted(set(imp.names) - names - {"*"})
    if missing:
        return (
            f"`from cog import {', '.join(missing)}`: svcc's `cog` module has "
            f"{', '.join(sorted(names))} only"
        )
    return None
