"""The project an open document belongs to: what ``svcc inspect DIR`` would know of it.

A workspace folder holding a ``pyproject.toml`` is read as the repository front end reads
a directory (its source roots, ``[tool.svcc]`` data files, import names and allowed
effects, its declared dependencies), so a buffer is judged with the same declarations as
the command line judges the tree. Without one, a file is judged as ``svcc inspect FILE``
judges it (its source root found by climbing packages). Reading the tree is done once per
workspace and again when its ``pyproject.toml`` changes (:meth:`Projects.forget`).
"""

import os
import posixpath
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from attrs import frozen
from svcc.compiler.driver import Layout, layout_of
from svcc.contracts.errors import InputError

if TYPE_CHECKING:
    from svcc.compiler.data_files import DataFiles
    from svcc.contracts.requirements import DeclaredRequirements
    from svcc.frontends.repository import RepositoryTree

PYPROJECT: Final = "pyproject.toml"


@frozen(kw_only=True)
class FileContext:
    """How one file is analysed: the arguments of ``analyze_source`` that come from where
    it sits (its module name, the folders its local imports are read from) and from the
    project's declarations."""

    module: str
    layout: Layout | None
    requirements: "DeclaredRequirements | None" = None
    allow: frozenset[str] = frozenset()
    data_files: "DataFiles | None" = None
    # The project root (absolute) when a pyproject.toml declared the context.
    project_root: str | None = None
    # ``[tool.svcc] data-files`` as written (the code action that declares one adds to it).
    data_patterns: tuple[str, ...] = ()
    # Why the project's declarations could not be used (its pyproject.toml refused): the
    # file is then judged alone, and the user is told once.
    notice: str | None = None


@frozen(kw_only=True)
class Project:
    """A workspace folder with a ``pyproject.toml``, read (``tree``) or refused (``error``:
    the one-line reason, shown to the user; files are then judged alone)."""

    root: str
    tree: "RepositoryTree | None"
    error: str | None = None

    def context(self, path: str) -> FileContext | None:
        """The context of the file at ``path`` (absolute), when a source root holds it."""
        tree = self.tree
        if tree is None:
            return None
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        if rel.startswith("../"):
            return None
        found = _module_of(rel, tree.roots, tree.package)
        if found is None:
            return None
        source_root, module, is_package = found
        folder = os.path.normpath(os.path.join(self.root, source_root))
        layout = Layout(
            root=folder,
            mounts=((tree.package or "", folder),),
            module=module,
            is_package=is_package,
            cache={},
        )
        from svcc.compiler.data_files import DataFiles
        from svcc.frontends.repository import module_relative

        data = (
            DataFiles(relative=module_relative(tree.data, module, is_package), files=())
            if tree.data
            else None
        )
        return FileContext(
            module=module,
            layout=layout,
            requirements=_requirements(tree),
            allow=frozenset(tree.config.allow),
            data_files=data,
            project_root=self.root,
            data_patterns=tree.config.data_files,
        )


def _module_of(
    rel: str, roots: tuple[str, ...], package: str | None
) -> tuple[str, str, bool] | None:
    """``(source root, dotted name, is a package)`` of a tree path below the deepest root."""
    from svcc.frontends.module_names import derive_dotted
    from svcc.frontends.repository import module_name

    best = None
    for root in roots:
        if (root == "." or rel.startswith(root + "/")) and (
            best is None or best == "." or len(root) > len(best)
        ):
            best = root
    if best is None:
        return None
    inside = rel if best == "." else rel[len(best) + 1 :]
    stem, _ = posixpath.splitext(inside)
    named = module_name(stem + ".py")
    if named is None:
        dotted = derive_dotted(stem.replace("/", "."))
        if not dotted:
            return None
        named = (dotted, False)
    module, is_package = named
    return best, f"{package}.{module}" if package else module, is_package


def _requirements(tree: "RepositoryTree") -> "DeclaredRequirements | None":
    deps = tree.config.dependencies
    if not deps:
        return None
    from svcc.contracts.requirements import parse_requirements

    return parse_requirements(
        "\n".join(deps), "pyproject.toml dependencies", dict(tree.config.import_names)
    )


def read_project(root: str) -> Project | None:
    """The project at ``root``, when it has a ``pyproject.toml``."""
    if not os.path.isfile(os.path.join(root, PYPROJECT)):
        return None
    from pathlib import Path

    from svcc.compiler.driver import checked_tree

    try:
        tree = checked_tree(Path(root), None, strict=False)
    except InputError as exc:
        return Project(root=root, tree=None, error=str(exc))
    return Project(root=root, tree=tree)


class Projects:
    """The workspace folders' projects, read on first use."""

    def __init__(self, folders: list[str]) -> None:
        # deepest first: a folder nested in another belongs to the nested one
        self._folders = sorted({os.path.abspath(f) for f in folders}, key=len, reverse=True)
        self._read: dict[str, Project | None] = {}

    @property
    def folders(self) -> list[str]:
        return list(self._folders)

    def project_of(self, path: str) -> Project | None:
        for folder in self._folders:
            if path == folder or path.startswith(folder + os.sep):
                if folder not in self._read:
                    self._read[folder] = read_project(folder)
                return self._read[folder]
        return None

    def context(self, path: str) -> FileContext:
        """The file's context: its project's, else ``svcc inspect FILE``'s."""
        project = self.project_of(path)
        if project is not None:
            found = project.context(path)
            if found is not None:
                return found
        notice = project.error if project is not None else None
        try:
            layout = layout_of(path, None)
        except (InputError, ValueError):
            return FileContext(module=_stem_module(path), layout=None, notice=notice)
        return FileContext(module=layout.module, layout=layout, notice=notice)

    def forget(self, path: str) -> None:
        """A ``pyproject.toml`` changed: its folder is read again on next use."""
        self._read.pop(os.path.dirname(os.path.abspath(path)), None)

    def __iter__(self) -> Iterator[Project]:
        return iter(p for p in self._read.values() if p is not None)


def _stem_module(path: str) -> str:
    from svcc.frontends.module_names import derive_module_name

    stem = os.path.splitext(os.path.basename(path))[0]
    return derive_module_name(stem) or "module"
