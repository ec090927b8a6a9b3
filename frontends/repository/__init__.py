"""The repository front end: a tree → one IR per module plus the module graph.

Reads the tree (``_tree``: source roots, declared files, refusals, limits), runs the Python
front end on every declared module, and resolves every import (``_graph``). Like the other
front ends it never imports or executes anything; problems are diagnostics, and only what
stops the reading of the whole tree raises :class:`TreeRefused`.
"""

from pathlib import Path

import attrs
from attrs import frozen
from svcc.contracts.diagnostics import Diagnostic
from svcc.frontends.python import FrontendResult, collection_paused, read_python
from svcc.frontends.repository._data import (
    DataFile,
    DataRefused,
    check_pattern,
    matches,
    module_relative,
)
from svcc.frontends.repository._folders import notebook_paths
from svcc.frontends.repository._graph import Edge, ModuleGraph, Resolution, parents
from svcc.frontends.repository._tree import (
    ProjectConfig,
    RepositoryTree,
    SourceFile,
    TreeLimits,
    TreeRefused,
    module_name,
    read_tree,
)
from svcc.ir.model import ModuleIR
from svcc.ir.serde import ir_to_json


@frozen(kw_only=True)
class ModuleSource:
    """One declared module: its file, and what the Python front end made of it."""

    file: SourceFile
    result: FrontendResult

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


def lower_file(
    file: SourceFile, python_version: tuple[int, int], encoding: str | None = None
) -> FrontendResult:
    return read_python(
        file.data,
        path=file.path,
        module=file.module,
        python_version=python_version,
        encoding=encoding,
    )


def build_repository(tree: RepositoryTree, results: dict[str, FrontendResult]) -> Repository:
    modules = {f.module: ModuleSource(file=f, result=results[f.module]) for f in tree.files}
    irs = {name: m.ir for name, m in modules.items() if m.ir is not None}
    graph = ModuleGraph({f.module: f.is_package for f in tree.files}, tree.namespaces, irs)
    return Repository(tree=tree, modules=modules, graph=graph)


PARALLEL_FROM = 64


def _lower_chunk(
    args: tuple[list[SourceFile], tuple[int, int], str | None],
) -> list[FrontendResult]:
    """In a worker: the files lowered, each IR also encoded as JSON (what the parent's
    readiness pass needs; bytes cost next to nothing to send back)."""
    files, version, encoding = args
    with collection_paused():
        return [_encoded(lower_file(f, version, encoding)) for f in files]


def _encoded(result: FrontendResult) -> FrontendResult:
    if result.ir is None:
        return result
    return attrs.evolve(result, ir_json=ir_to_json(result.ir))


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
    one per CPU) and a large tree, the modules are lowered in forked worker processes.
    ``folder_name``: see :func:`read_tree`."""
    import os

    tree = read_tree(root, limits, folder_name=folder_name)
    count = workers if workers is not None else (os.cpu_count() or 1)
    if count <= 1 or len(tree.files) < PARALLEL_FROM:
        with collection_paused():
            results = {f.module: lower_file(f, python_version, encoding) for f in tree.files}
            return build_repository(tree, results)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from svcc.runtime.lifetime import die_with_parent

    files = list(tree.files)
    size = max(1, len(files) // (count * 4))
    chunks = [(files[i : i + size], python_version, encoding) for i in range(0, len(files), size)]
    # unpickling the results builds as many objects as lowering them did
    context = multiprocessing.get_context("fork")
    # a worker ends with this process (a SIGKILL of ``svcc`` left them waiting forever)
    pool = ProcessPoolExecutor(
        count, mp_context=context, initializer=die_with_parent, initargs=(os.getpid(),)
    )
    with pool, collection_paused():
        lowered = [r for chunk in pool.map(_lower_chunk, chunks) for r in chunk]
        return build_repository(tree, {f.module: r for f, r in zip(files, lowered, strict=True)})


__all__ = [
    "DataFile",
    "DataRefused",
    "Edge",
    "ModuleGraph",
    "ModuleSource",
    "ProjectConfig",
    "Repository",
    "RepositoryTree",
    "Resolution",
    "SourceFile",
    "TreeLimits",
    "TreeRefused",
    "build_repository",
    "check_pattern",
    "collection_paused",
    "lower_file",
    "matches",
    "module_name",
    "notebook_paths",
    "parents",
    "read_repository",
    "read_tree",
]
