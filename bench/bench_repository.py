"""Repository analysis of the standard library's packages vs a bare ``ast.parse`` loop.

Both sides read the same declared files (the repository front end's walk of the standard
library, ``site-packages`` skipped); the baseline parses each file with ``ast.parse`` in one
process, the measured side runs the whole repository front end (lowering to IR in worker
processes, the module graph built, every import resolved) and readiness over the graph.
Prints both times and the ratio (target: at most 1.3). Each side is timed ``--repeat`` times
(default 3), the runs interleaved, and the best run of each is kept (as ``timeit`` does): on a
shared machine a single run measures the neighbours' load as much as the code.
Run: ``python bench/bench_repository.py [--repeat N]``.
"""

import ast
import contextlib
import gc
import sysconfig
import time
import warnings
from pathlib import Path

from svcc.compiler.passes.repository_readiness import RepositoryReadiness
from svcc.frontends.repository import TreeLimits, read_repository, read_tree

LIMITS = TreeLimits(max_files=100_000, max_total_bytes=1 << 31, max_file_bytes=1 << 26)
VERSION = (3, 11)


def baseline(root: Path) -> tuple[float, int]:
    start = time.perf_counter()
    tree = read_tree(root, LIMITS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in tree.files:
            with contextlib.suppress(SyntaxError, ValueError):
                ast.parse(f.data)
    return time.perf_counter() - start, len(tree.files)


def measured(root: Path, workers: int | None) -> tuple[float, int, int]:
    start = time.perf_counter()
    repo = read_repository(root, python_version=VERSION, limits=LIMITS, workers=workers)
    RepositoryReadiness(repo, frozenset(), ()).run()
    edges = sum(len(e) for e in repo.graph.edges.values())
    return time.perf_counter() - start, len(repo.modules), edges


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side (best kept)")
    repeat = max(1, parser.parse_args().repeat)
    root = Path(sysconfig.get_paths()["stdlib"])
    base = serial = parallel = float("inf")
    for _ in range(repeat):
        gc.collect()
        seconds, files = baseline(root)
        base = min(base, seconds)
        gc.collect()
        seconds, modules, edges = measured(root, workers=1)
        serial = min(serial, seconds)
        gc.collect()
        parallel = min(parallel, measured(root, workers=None)[0])
    print(f"standard library: {files} files, {modules} modules, {edges} resolved edges")
    print(f"bare ast.parse loop:             {base:7.2f} s")
    print(f"repository analysis, 1 process:  {serial:7.2f} s  ratio {serial / base:.2f}")
    print(f"repository analysis, all CPUs:   {parallel:7.2f} s  ratio {parallel / base:.2f}")


if __name__ == "__main__":
    main()
