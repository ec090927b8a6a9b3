"""The ``cog`` module a bundle ships when its source imports ``cog`` (Cog predictors).

``svcc.runtime.cog`` is copied byte for byte to ``source/cog.py``, first on the served
module's ``sys.path`` (and declared to a repository bundle's finder), so the bundle never
needs the Cog package; bundles whose modules do not import ``cog`` are unchanged.
"""

from collections.abc import Iterable, Mapping
from typing import Final

from svcc.backends._common.runtime_copy import runtime_files
from svcc.backends._common.schema import LoweringError
from svcc.compiler.passes.cog_shim import SHIM_MODULE

SHIM_FILE: Final = f"source/{SHIM_MODULE}.py"


def shim_files(provided: Iterable[str], files: Mapping[str, bytes]) -> dict[str, bytes]:
    """``source/cog.py`` when the program ships the shim (``provided``), else nothing;
    refused when the bundle's own source (``files``) already holds a ``cog`` module."""
    if SHIM_MODULE not in provided:
        return {}
    if SHIM_FILE in files or f"source/{SHIM_MODULE}/__init__.py" in files:
        raise LoweringError(
            "the source has a module named `cog` and imports `cog`: the bundle's `cog` "
            "module (which serves Cog predictors) would replace it; rename the module"
        )
    return runtime_files((SHIM_MODULE,), into="source", with_init=False)
