"""Which folders a walk of a repository tree skips: one rule for the module walk (``_tree``),
the data-file globs (``_data``) and the search for source roots (``_roots``).

Tool caches, virtual environments and build output never hold the project's modules or
data; hidden folders (a leading dot: ``.git``, ``.venv``, ``.tox``, ...) neither. The
notebooks ``inspect DIR`` lists are found by the same rule.
"""

import os
from pathlib import Path
from typing import Final

from svcc.contracts.names import is_utf8

SKIPPED_DIRS: Final = frozenset(
    {"__pycache__", "node_modules", "build", "dist", "venv", "env", "site-packages", "htmlcov"}
)


# Test code and packaging/tool scripts: not the service (``inspect DIR`` leaves them out
# unless ``--include-tests`` or ``[tool.svcc] include-tests = true``).
TEST_DIRS: Final = frozenset({"tests", "test"})
TOOL_FILES: Final = frozenset(
    {"conftest.py", "setup.py", "noxfile.py", "fabfile.py", "ez_setup.py", "versioneer.py"}
)
DOCS_DIRS: Final = frozenset({"docs", "doc"})


def test_or_tool(relpath: str, is_dir: bool) -> bool:
    """Whether the tree entry ``relpath`` (POSIX, from the tree's root) is test code or a
    packaging or tool script: a ``tests/`` or ``test/`` folder, ``test_*.py``,
    ``*_test.py``, ``conftest.py``, ``setup.py``, ``noxfile.py``, ``fabfile.py``,
    ``ez_setup.py``, ``versioneer.py``, or a
    Sphinx ``docs/conf.py``."""
    parent, _, name = relpath.rpartition("/")
    if is_dir:
        return name in TEST_DIRS
    if name in TOOL_FILES or (name.startswith("test_") and name.endswith(".py")):
        return True
    if name.endswith("_test.py"):
        return True
    return name == "conf.py" and parent.rpartition("/")[2] in DOCS_DIRS


def skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS or name.endswith(".egg-info")


def has_python(folder: Path) -> bool:
    """Whether a ``.py`` file lies below ``folder`` (skipped folders aside)."""
    for _current, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not skipped(d)]
        if any(f.endswith(".py") for f in files):
            return True
    return False


def notebook_paths(root: Path, *, modules: bool = False, include_tests: bool = False) -> list[str]:
    """Tree paths (POSIX, sorted) of the ``.ipynb`` regular files below ``root``, skipped
    folders aside: the notebooks ``inspect DIR`` lists beside the modules; with ``modules``,
    the ``.py`` files as well (the analysis service's ``/analyse_directory/`` answers for
    both, and must skip what ``inspect DIR`` skips). The whole tree is searched, not only
    the source roots (a ``src/`` layout keeps its notebooks beside ``src``); a symlink is not
    followed (it could lead outside the tree). With the skip rule the search of the standard
    library takes 20 ms; without it, it entered ``site-packages`` (1-2 s). Test code and
    tool scripts are left out as the module walk leaves them out, unless
    ``include_tests``."""
    suffixes = (".ipynb", ".py") if modules else (".ipynb",)
    out: list[str] = []
    for current, dirs, files in os.walk(root):
        here = os.path.relpath(current, root).replace(os.sep, "/")
        prefix = "" if here == "." else f"{here}/"
        dirs[:] = [
            d
            for d in dirs
            if not skipped(d)
            and is_utf8(d)
            and (include_tests or not test_or_tool(f"{prefix}{d}", True))
        ]
        for name in files:
            if not is_utf8(name):
                continue  # a module is refused by the tree's walk; a notebook is not listed
            if not include_tests and test_or_tool(f"{prefix}{name}", False):
                continue
            lower = name.lower()
            # a bare ".ipynb" or ".py" has no suffix (as pathlib reads it)
            if lower.endswith(suffixes) and lower not in suffixes:
                full = os.path.join(current, name)
                if not os.path.islink(full):
                    out.append(os.path.relpath(full, root).replace(os.sep, "/"))
    out.sort()
    return out
