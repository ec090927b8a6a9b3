"""Which folders a walk of a repository tree skips: one rule for the module walk (``_tree``),
the data-file globs (``_data``) and the search for source roots (``_roots``).

Tool caches, virtual environments and build output never hold the project's modules or
data; hidden folders (a leading dot: ``.git``, ``.venv``, ``.tox``, ...) neither.
"""

import os
from pathlib import Path
from typing import Final

SKIPPED_DIRS: Final = frozenset(
    {"__pycache__", "node_modules", "build", "dist", "venv", "env", "site-packages", "htmlcov"}
)


def skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS or name.endswith(".egg-info")


def has_python(folder: Path) -> bool:
    """Whether a ``.py`` file lies below ``folder`` (skipped folders aside)."""
    for _current, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not skipped(d)]
        if any(f.endswith(".py") for f in files):
            return True
    return False
