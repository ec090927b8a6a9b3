"""Costs stay linear across every threshold the front end has: doubling steps, ratio per step.

``bench_scaling.py`` grows inputs 4x and 16x below the thresholds; this one doubles each
input across them: a module past ``SLICE_LINES`` (20,000 lines: parsed a slice at a time),
a directory past ``PARALLEL_FROM`` (64 files: lowered in worker processes, each IR encoded
there), the IR's JSON past ``_BATCH`` (4,096 records encoded per write), an annotation
past ``MAX_DEPTH`` (48 levels: deeper is refused, not resolved), a file's local import
closure past ``MAX_CLOSURE_FILES`` (500 modules: the closure is cut there), and the growth
cases with no threshold of their own (``Literal`` members, ``TypedDict`` inheritance depth,
a notebook cell's kept lines and statements on one line, a parameter's aliases, data files
declared one by one), and two for ``generate rest`` as a whole (front end and back end):
functions over chains of nested TypedDicts, each reaching the ones below its own, and
functions each taking a dataclass of its own.
Each point is the front end as the CLI runs it (``analyze_source`` for a file,
``analyze_repository`` with one worker per CPU for a directory), in this process, best of
``--repeat``. Each doubling step prints the ratio of wall time (what a user waits for) to the
previous point, measured in the same run, and the ratio of CPU seconds (this process and the
worker processes it waited for: what a loaded machine cannot inflate); the target is at most
2.5x for 2x input. Past ``PARALLEL_FROM`` the CPU ratio shows the price of the workers
(forked, fed the graph; no IR is sent back), which the cores repay in wall time.

Usage: python bench/bench_thresholds.py
       [--cases functions,lines,files,statements,nesting,closure,literal,typeddict,
                notebook,notebook-line,aliases,chain,data-files,rest-typeddicts,rest-models]
       [--repeat 1] [--workers N]

``--workers 1`` lowers and judges the directory cases (files, chain, data-files) in this
process: against the default (one worker per CPU) it shows what the workers cost in CPU.
"""

import argparse
import gc
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

STEP_TARGET = 2.5


def functions(n: int) -> str:
    return "".join(f"def f{i}(a: int, b: str = 'x') -> int:\n    return a\n\n\n" for i in range(n))


def lines(n: int) -> str:
    return "x = 1\n" * n + "\n\ndef f(a: int) -> int:\n    return a\n"


def literal(n: int) -> str:
    members = ", ".join(f'"m{i}"' for i in range(n))
    head = "from typing import Literal\n\n\n"
    return f"{head}def pick(x: Literal[{members}]) -> str:\n    return x\n"


def typeddict(n: int) -> str:
    out = ["from typing import TypedDict\n\n\nclass T0(TypedDict):\n    f0: int\n"]
    out += [f"\nclass T{i}(T{i - 1}):\n    f{i}: int\n" for i in range(1, n)]
    out.append(f"\n\ndef take(x: T{n - 1}) -> int:\n    return 1\n")
    return "".join(out)


def nesting(n: int) -> str:
    """200 functions, each taking a ``list`` nested ``n`` deep."""
    annotation = "list[" * n + "int" + "]" * n
    return "".join(f"def f{i}(x: {annotation}) -> int:\n    return 1\n\n\n" for i in range(200))


def notebook(*cells: str) -> bytes:
    def cell(i: int, source: str) -> dict[str, object]:
        empty: list[object] = []
        meta: dict[str, object] = {}
        return {"cell_type": "code", "id": f"c{i}", "metadata": meta, "outputs": empty,
                "execution_count": None, "source": source}  # fmt: skip

    cells_json = [cell(i, source) for i, source in enumerate(cells)]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells_json})


def notebook_lines(n: int) -> bytes:
    """One cell of ``n`` bindings a function reads: the slice keeps every line."""
    reads = ", ".join(f"c{i}" for i in range(n))
    bindings = "".join(f"c{i} = {i}\n" for i in range(n))
    return notebook(f"{bindings}def f(a: int) -> int:\n    return a + sum([{reads}])\n")


def notebook_line(n: int) -> bytes:
    """``n`` statements on one line: one statement of the slice."""
    line = "; ".join(f"c{i} = {i}" for i in range(n))
    return notebook(f"{line}\ndef f(a: int) -> int:\n    return a + c0\n")


def aliases(n: int) -> str:
    """An unannotated parameter rebound, then aliased ``n`` times (names sorted against the
    chain): the value flow follows every alias."""
    names = [f"n{n - i:06d}" for i in range(n)]
    bases = ["x", *names[:-1]]
    chain = "".join(f"    {name} = {base}\n" for name, base in zip(names, bases, strict=True))
    return f"def f(x):\n    x = len\n{chain}    return {names[-1]}.shape\n"


def nested_typeddicts(n: int) -> str:
    """``n`` TypedDicts in chains of 100, each holding the one before it in its chain (100
    levels are the most served: SVC-R011); the i-th function takes the i-th."""
    out = ["from typing import TypedDict\n"]
    out += [
        f"\nclass T{i}(TypedDict):\n    inner: T{i - 1}\n"
        if i % 100
        else f"\nclass T{i}(TypedDict):\n    v: int\n"
        for i in range(n)
    ]
    out += [f"\n\ndef f{i}(x: T{i}) -> T{i}:\n    return x\n" for i in range(n)]
    return "".join(out)


def dataclass_params(n: int) -> str:
    """``n`` dataclasses, each the parameter of one function."""
    out = ["from dataclasses import dataclass\n"]
    for i in range(n):
        out.append(f"\n\n@dataclass\nclass D{i}:\n    a: int\n    b: str\n")
        out.append(f"\n\ndef f{i}(x: D{i}) -> int:\n    return 1\n")
    return "".join(out)


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def file_point(
    make: Callable[[int], str | bytes], path: str = "m.py"
) -> Callable[[int], tuple[float, float]]:
    def run(n: int) -> tuple[float, float]:
        from svcc.compiler.driver import analyze_source

        made = make(n)
        data = made.encode() if isinstance(made, str) else made
        gc.collect()
        cpu, wall = cpu_seconds(), time.perf_counter()
        analysis = analyze_source(data, path=path, module="m", check_name=False)
        assert analysis.error is None, analysis.error_message()
        return cpu_seconds() - cpu, time.perf_counter() - wall

    return run


def rest_point(make: Callable[[int], str]) -> Callable[[int], tuple[float, float]]:
    """``generate rest`` of one file in this process: front end, then the bundle in memory."""

    def run(n: int) -> tuple[float, float]:
        from svcc.compiler.bundles import build_bundle
        from svcc.compiler.driver import analyze_source
        from svcc.compiler.registry import get_target

        data = make(n).encode()
        target = get_target("rest")
        gc.collect()
        cpu, wall = cpu_seconds(), time.perf_counter()
        analysis = analyze_source(data, path="m.py", module="m", check_name=False)
        assert analysis.error is None, analysis.error_message()
        build_bundle(analysis, target)
        return cpu_seconds() - cpu, time.perf_counter() - wall

    return run


# the directory cases' worker count (``None``: one per CPU, as the CLI runs them)
WORKERS: list[int | None] = [None]


def files_point(n: int) -> tuple[float, float]:
    from svcc.compiler.driver import analyze_repository

    with tempfile.TemporaryDirectory(prefix="bench-thresholds-") as tmp:
        root = Path(tmp) / "pkg"
        root.mkdir()
        for i in range(n):
            (root / f"m{i}.py").write_text(functions(40))
        gc.collect()
        cpu, wall = cpu_seconds(), time.perf_counter()
        analyze_repository(root, python_version="3.11", strict=False, workers=WORKERS[0])
        return cpu_seconds() - cpu, time.perf_counter() - wall


def closure_point(n: int) -> tuple[float, float]:
    """``inspect FILE`` of a file whose local imports chain through ``n`` modules beside it."""
    from svcc.compiler.driver import analyze_file

    with tempfile.TemporaryDirectory(prefix="bench-thresholds-") as tmp:
        root = Path(tmp)
        for i in range(n):
            (root / f"m{i}.py").write_text(f"import m{i + 1}\n\n\n{functions(5)}")
        (root / f"m{n}.py").write_text(functions(5))
        (root / "main.py").write_text(f"import m0\n\n\n{functions(5)}")
        gc.collect()
        cpu, wall = cpu_seconds(), time.perf_counter()
        analyze_file(root / "main.py")
        return cpu_seconds() - cpu, time.perf_counter() - wall


def data_files_point(n: int) -> tuple[float, float]:
    """``inspect DIR`` of a project declaring ``n`` data files one pattern each."""
    from svcc.compiler.driver import analyze_repository

    with tempfile.TemporaryDirectory(prefix="bench-thresholds-") as tmp:
        root = Path(tmp) / "proj"
        (root / "data").mkdir(parents=True)
        for i in range(n):
            (root / "data" / f"d{i}.json").write_text("{}")
        globs = ", ".join(f'"data/d{i}.json"' for i in range(n))
        project = (
            f'[project]\nname = "proj"\nversion = "1"\n\n[tool.svcc]\ndata-files = [{globs}]\n'
        )
        (root / "pyproject.toml").write_text(project)
        (root / "m.py").write_text(functions(1))
        gc.collect()
        cpu, wall = cpu_seconds(), time.perf_counter()
        analyze_repository(root, python_version="3.11", strict=False, workers=WORKERS[0])
        return cpu_seconds() - cpu, time.perf_counter() - wall


def chain_point(n: int) -> tuple[float, float]:
    """``inspect DIR`` of a package whose ``n`` modules each import the next, the last one
    with an import-time effect that every module inherits (``SVC-R024``)."""
    from svcc.compiler.driver import analyze_repository

    with tempfile.TemporaryDirectory(prefix="bench-thresholds-") as tmp:
        root = Path(tmp) / "pkg"
        root.mkdir()
        (root / "__init__.py").write_text("")
        for i in range(n):
            head = f"from pkg import m{i + 1}\n" if i + 1 < n else "print('loaded')\n"
            (root / f"m{i}.py").write_text(f"{head}\n\n{functions(1)}")
        gc.collect()
        cpu, wall = cpu_seconds(), time.perf_counter()
        analyze_repository(root.parent, python_version="3.11", strict=False, workers=WORKERS[0])
        return cpu_seconds() - cpu, time.perf_counter() - wall


# name -> (point, sizes doubling across the threshold, what the size counts, the threshold)
CASES: dict[str, tuple[Callable[[int], tuple[float, float]], tuple[int, ...], str, str]] = {
    "functions": (
        file_point(functions),
        (1500, 3000, 6000, 12000),
        "functions (4 lines each)",
        "SLICE_LINES 20,000 between 3,000 and 6,000",
    ),
    "lines": (
        file_point(lines),
        (10_000, 20_000, 40_000, 80_000),
        "`x = 1` lines",
        "SLICE_LINES 20,000: the 2nd point (20,005 lines) is sliced",
    ),
    "files": (
        files_point,
        (16, 32, 64, 128, 256),
        "files of 40 functions",
        "PARALLEL_FROM 64 files at the 3rd point",
    ),
    "statements": (
        file_point(lines),
        (1024, 2048, 4096, 8192, 16384),
        "`x = 1` lines (one IR statement each)",
        "_BATCH 4,096 records per write of the IR's JSON at the 3rd point",
    ),
    "nesting": (
        file_point(nesting),
        (12, 24, 48, 96),
        "levels of `list[...]` (200 functions)",
        "MAX_DEPTH 48: the 4th point is refused past the 48th level",
    ),
    "closure": (
        closure_point,
        (125, 250, 500, 1000),
        "local modules a file's imports chain through",
        "MAX_CLOSURE_FILES 500: the 4th point's closure is cut at 500",
    ),
    # sizes past the clock's 10 ms tick (the first figures were 0.01 to 0.2 s)
    "literal": (file_point(literal), (16000, 32000, 64000, 128000), "Literal members", "none"),
    "typeddict": (file_point(typeddict), (400, 800, 1600, 3200), "inheritance levels", "none"),
    "notebook": (
        file_point(notebook_lines, "m.ipynb"),
        (2000, 4000, 8000, 16000),
        "lines of one notebook cell, each kept by the slice",
        "none",
    ),
    "notebook-line": (
        file_point(notebook_line, "m.ipynb"),
        (2000, 4000, 8000, 16000),
        "statements on one line of a notebook cell",
        "none",
    ),
    "aliases": (file_point(aliases), (2000, 4000, 8000, 16000), "aliases of a parameter", "none"),
    "chain": (
        chain_point,
        (250, 500, 1000, 2000),
        "modules of a package, each importing the next",
        "none (each module inherits the last one's effect)",
    ),
    "data-files": (
        data_files_point,
        (500, 1000, 2000, 4000),
        "data files declared one pattern each",
        "none (a bundle holds 4,096 files at most)",
    ),
    "rest-typeddicts": (
        rest_point(nested_typeddicts),
        (200, 400, 800, 1600),
        "functions over as many nested TypedDicts (`generate rest`)",
        "none",
    ),
    "rest-models": (
        rest_point(dataclass_params),
        (2000, 4000, 8000, 16000),
        "functions each taking a dataclass of its own (`generate rest`)",
        "none",
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None, help="directory cases' workers")
    options = parser.parse_args()
    WORKERS[0] = options.workers
    worst = 0.0
    for name in options.cases.split(","):
        point, sizes, unit, threshold = CASES[name]
        print(f"\n== {name}: {unit}; threshold: {threshold} ==")
        print(f"{'size':>8} {'wall s':>8} {'step':>7} {'cpu s':>8} {'step':>7}")
        previous: tuple[float, float] | None = None
        for size in sizes:
            runs = [point(size) for _ in range(max(1, options.repeat))]
            cpu, wall = min(r[0] for r in runs), min(r[1] for r in runs)
            steps = ("      -", "      -")
            if previous:
                worst = max(worst, wall / previous[1])
                steps = (f"{wall / previous[1]:6.2f}x", f"{cpu / max(previous[0], 0.01):6.2f}x")
            print(f"{size:>8} {wall:8.2f} {steps[0]:>7} {cpu:8.2f} {steps[1]:>7}")
            previous = (cpu, wall)
    verdict = "ok" if worst <= STEP_TARGET else "OVER TARGET"
    print(f"\nworst wall step: {worst:.2f}x for 2x input (target <= {STEP_TARGET}x): {verdict}")


if __name__ == "__main__":
    main()
