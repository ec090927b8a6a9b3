"""The repository front end: a tree → one IR per module plus the module graph.

Reads the tree (``_tree``: source roots, declared files, refusals, limits), runs the Python
front end on every declared module, and resolves every import (``_graph``). Like the other
front ends it never imports or executes anything; problems are diagnostics, and only what
stops the reading of the whole tree raises :class:`TreeRefused`.
"""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from attrs import frozen
from svcc.contracts.diagnostics import Diagnostic
from svcc.frontends.python import FrontendResult, collection_paused
from svcc.frontends.repository._data import (
    DataFile,
    DataRefused,
    check_pattern,
    declared_by,
    matches,
    module_relative,
)
from svcc.frontends.repository._folders import notebook_paths
from svcc.frontends.repository._graph import Edge, ModuleGraph, Resolution, parents
from svcc.frontends.repository._spill import Spilled
from svcc.frontends.repository._tree import (
    ProjectConfig,
    RepositoryTree,
    SourceFile,
    TreeLimits,
    TreeRefused,
    module_name,
    read_tree,
)
from svcc.frontends.repository._workers import EncodedResult, Held, LoweringPool, lower_file
from svcc.frontends.sibling_models import sources_of
from svcc.ir.model import Import, ModuleIR


@frozen(kw_only=True)
class ModuleSource:
    """One declared module: its file, and what the Python front end made of it (lowered in a
    worker process, its IR is decoded on first use: :class:`EncodedResult`)."""

    file: SourceFile
    result: FrontendResult | EncodedResult

    @property
    def ir(self) -> ModuleIR | None:
        return self.result.ir


@frozen(kw_only=True)
class Repository:
    tree: RepositoryTree
    modules: dict[str, ModuleSource]
    graph: ModuleGraph

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self.tree.diagnostics

    def data_files_of(self, module: str) -> frozenset[str]:
        """The declared data files as ``module`` reads them (relative to its folder)."""
        if not self.tree.data:
            return frozenset()
        file = self.modules[module].file
        return module_relative(self.tree.data, file.module, file.is_package)


def build_repository(
    tree: RepositoryTree, results: Mapping[str, FrontendResult | EncodedResult]
) -> Repository:
    modules = {f.module: ModuleSource(file=f, result=results[f.module]) for f in tree.files}
    imports = {name: _imports(m.result) for name, m in modules.items()}
    graph = ModuleGraph(
        {f.module: f.is_package for f in tree.files},
        tree.namespaces,
        {name: statements for name, statements in imports.items() if statements is not None},
    )
    return Repository(tree=tree, modules=modules, graph=graph)


def _imports(result: FrontendResult | EncodedResult) -> tuple[Import, ...] | None:
    """A lowered module's import statements (``None``: it did not lower), without decoding
    an encoded IR."""
    if isinstance(result, EncodedResult):
        return result.imports if result.lowered else None
    return result.ir.imports if result.ir is not None else None


PARALLEL_FROM = 64


def workers_for(tree: RepositoryTree, workers: int | None) -> int:
    """The worker processes lowering ``tree``: ``workers`` (``None``: one per CPU), and none
    (``1``: in this process) below ``PARALLEL_FROM`` files, where forking costs more than
    it saves."""
    import os

    count = workers if workers is not None else (os.cpu_count() or 1)
    return 1 if len(tree.files) < PARALLEL_FROM else max(1, count)


@contextmanager
def lowered_tree(
    tree: RepositoryTree,
    *,
    python_version: tuple[int, int],
    workers: int | None = 1,
    encoding: str | None = None,
) -> Iterator[tuple[Repository, LoweringPool | None]]:
    """Every module of ``tree`` lowered: the repository, and the worker processes that
    lowered it and still hold the IRs (``None``: lowered here; see :func:`workers_for`),
    alive until the block ends."""
    from svcc.frontends.python.sibling_values import reading

    count = workers_for(tree, workers)
    modules = {f.module: (f.data, f.is_package) for f in tree.files}
    with reading(modules.get, python_version, shared=count > 1):  # workers inherit it
        if count <= 1:
            with collection_paused():
                siblings = sources_of(tree.files)
                results = {
                    f.module: lower_file(f, python_version, encoding, siblings) for f in tree.files
                }
                repository = build_repository(tree, results)
            yield repository, None
            return
        with LoweringPool(tree, count, python_version, encoding) as pool:
            with collection_paused():
                repository = build_repository(tree, pool.encoded)
            yield repository, pool


def read_repository(
    root: Path,
    *,
    python_version: tuple[int, int],
    limits: TreeLimits | None = None,
    workers: int | None = 1,
    encoding: str | None = None,
    folder_name: str | None = None,
) -> Repository:
    """Read and lower every module of the tree at ``root``; with ``workers`` > 1 (``None``:
    one per CPU) and a large tree, the modules are lowered in forked worker processes (see
    :func:`lowered_tree`). ``folder_name``: see :func:`read_tree`."""
    tree = read_tree(root, limits, folder_name=folder_name)
    version = python_version
    with lowered_tree(tree, python_version=version, workers=workers, encoding=encoding) as done:
        return done[0]


__all__ = [
    "DataFile",
    "DataRefused",
    "Edge",
    "EncodedResult",
    "Held",
    "LoweringPool",
    "ModuleGraph",
    "ModuleSource",
    "ProjectConfig",
    "Repository",
    "RepositoryTree",
    "Resolution",
    "SourceFile",
    "Spilled",
    "TreeLimits",
    "TreeRefused",
    "build_repository",
    "check_pattern",
    "declared_by",
    "collection_paused",
    "lower_file",
    "lowered_tree",
    "matches",
    "module_name",
    "module_relative",
    "notebook_paths",
    "parents",
    "read_repository",
    "read_tree",
    "workers_for",
]
