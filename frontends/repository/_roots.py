"""Source roots found automatically: project folders whose names are not Python names.

A repository often holds several projects side by side (``ml-serving/``,
``short-texts-clustering/src/``, ``projects/web-api/``). Such a folder cannot be a package,
so its files are not modules of the tree's root; they are modules of their own root, as when
the user passes the folder itself (``svcc inspect ml-serving``). When ``pyproject.toml``
names no ``[tool.svcc] source-roots``, every folder below an automatic root whose name is
not a Python name and that holds Python files becomes a source root: its ``src/`` when that
holds Python files (then the rest of the folder is not read, as for the tree itself), else
the folder. The search goes on inside it, so nested projects are roots too. Each automatic
root is reported (``SVC-R041``, a note) with the modules' names it gives and how to choose
the roots instead; a file of an automatic root whose module name is taken is skipped with a
note, never a refusal of the tree. Configured roots are taken as given.
"""

import keyword
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from attrs import frozen
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import F009_DUPLICATE_MODULE, R041_AUTOMATIC_SOURCE_ROOT
from svcc.contracts.names import escaped, is_utf8
from svcc.frontends.repository._folders import has_python, skipped


@frozen(kw_only=True)
class AutomaticRoots:
    """``roots``: the source roots found (tree-relative, in path order); ``skipped``: the
    project folders whose ``src/`` is the root (the rest of them is not read)."""

    roots: tuple[str, ...]
    skipped: frozenset[str]

    def owner(self, path: str) -> str | None:
        """The deepest automatic root holding the tree file ``path``, if any."""
        return max((r for r in self.roots if path.startswith(f"{r}/")), key=len, default=None)

    def soften(self, problems: list[tuple[str, Diagnostic]]) -> list[tuple[str, Diagnostic]]:
        """A file of an automatic root whose module name another file already gives is
        skipped with a note instead of refusing the tree (``SVC-F009``): the roots were
        guessed, and guessing must not break a tree that served before."""
        out = []
        for path, problem in problems:
            root = self.owner(path)
            if problem.code != F009_DUPLICATE_MODULE.code or root is None:
                out.append((path, problem))
                continue
            shown_path, shown_root = escaped(path), escaped(root)
            message = (
                f"{problem.message}: {shown_path} skipped (its source root {shown_root} was "
                f"found automatically; inspect {shown_root} alone)"
            )
            out.append((path, diag(R041_AUTOMATIC_SOURCE_ROOT, message, None)))
        return out

    def notes(self, files: Sequence[tuple[str, str]]) -> list[tuple[str, Diagnostic]]:
        """One note per root, naming a few of the modules it gives (``files``: the tree's
        modules as ``(path, module)``)."""
        modules: dict[str, list[str]] = {}
        for path, module in files:
            owner = self.owner(path)
            if owner is not None:
                modules.setdefault(owner, []).append(module)
        out = []
        for root in self.roots:
            found = sorted(modules.get(root, []))
            shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
            gives = f"its modules are named from it ({shown})" if found else "it gives no module"
            named = escaped(root)
            message = (
                f"{named}: read as a source root of its own (its folder name is not a Python "
                f"name); {gives}; to choose the roots yourself, set [tool.svcc] source-roots "
                f"or inspect {named} alone"
            )
            out.append((root, diag(R041_AUTOMATIC_SOURCE_ROOT, message, None)))
        return out


def _python_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def _subdirs(folder: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if (
            not skipped(entry.name)
            and is_utf8(entry.name)  # refused by the tree's walk, never a root
            and entry.is_dir(follow_symlinks=False)
        ):
            yield entry


def find_roots(tree: Path, roots: tuple[str, ...]) -> AutomaticRoots:
    """The automatic roots below ``roots`` (the roots chosen for ``tree`` by its layout)."""
    found: list[str] = []
    skipped: set[str] = set()
    pending = list(roots)
    while pending:
        start = pending.pop(0)
        stack = [(tree if start == "." else tree / start, "" if start == "." else start)]
        while stack:
            folder, rel = stack.pop()
            for entry in _subdirs(folder):
                path = f"{rel}/{entry.name}" if rel else entry.name
                if _python_name(entry.name):
                    stack.append((Path(entry.path), path))
                    continue
                if not has_python(Path(entry.path)):
                    continue
                src = Path(entry.path) / "src"
                if not src.is_symlink() and src.is_dir() and has_python(src):
                    skipped.add(path)
                    path = f"{path}/src"
                found.append(path)
                pending.append(path)
    return AutomaticRoots(roots=tuple(sorted(found)), skipped=frozenset(skipped))
