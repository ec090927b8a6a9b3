"""Repository analysis of the standard library's packages vs a bare ``ast.parse`` loop.

Both sides read the same declared files (the repository front end's walk of the standard
library, ``site-packages`` skipped); the baseline parses each file with ``ast.parse`` in one
process, the measured side is ``analyze_repository`` (the repository front end, lowering to
IR in worker processes, the module graph built, every import resolved, then readiness over
the graph, judged in the workers that hold the IRs). Prints both times and the ratio
(target: at most 1.3). Each side is timed ``--repeat`` times
(default 3), the runs interleaved, and the best run of each is kept (as ``timeit`` does): on a
shared machine a single run measures the neighbours' load as much as the code.

It also measures what users run (issue 27: the figure to quote): ``svcc inspect STDLIB
--format json`` (output to ``/dev/null``, all cores) against the same bare loop run as a
fresh ``python`` process, both timed from process start to exit, in the same run (target:
at most 1.0 on 2 cores);
``--no-cli`` skips it. The load average is printed: on a shared machine wall time is the
neighbours' as much as svcc's.

Last, the IRs' canonical JSON (what a directory's readiness digests and ``inspect --ir``
and ``compile`` write): written as text straight from the records (``ir_to_json``) against
the plain values built and encoded (``canonical_json(unstructure(ir))``, the same bytes),
over the standard library's IRs lowered once, best of ``--repeat`` each.
Run: ``python bench/bench_repository.py [--repeat N] [--no-cli]``.
"""

import ast
import contextlib
import gc
import os
import subprocess
import sys
import sysconfig
import time
import warnings
from pathlib import Path

from svcc.compiler.driver import analyze_repository
from svcc.frontends.repository import TreeLimits, read_tree

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
    analysis = analyze_repository(
        root, python_version=VERSION, limits=LIMITS, strict=False, workers=workers
    )
    repo = analysis.repository
    assert repo is not None
    edges = sum(len(e) for e in repo.graph.edges.values())
    return time.perf_counter() - start, len(repo.modules), edges


# The baseline as a process of its own: the same walk and the same ``ast.parse`` loop.
BARE = (
    "import ast, contextlib, sys, warnings\n"
    "from pathlib import Path\n"
    "from svcc.frontends.repository import TreeLimits, read_tree\n"
    "tree = read_tree(Path(sys.argv[1]), TreeLimits(max_files=100_000, max_total_bytes=1 << 31,"
    " max_file_bytes=1 << 26))\n"
    "warnings.simplefilter('ignore')\n"
    "for f in tree.files:\n"
    "    with contextlib.suppress(SyntaxError, ValueError):\n"
    "        ast.parse(f.data)\n"
)


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def through_cli(root: Path, repeat: int) -> tuple[float, float]:
    """(bare loop process, ``svcc inspect ROOT --format json``): best of ``repeat`` each."""
    svcc = str(Path(sys.executable).with_name("svcc"))
    bare = cli = float("inf")
    for _ in range(repeat):
        bare = min(bare, timed([sys.executable, "-c", BARE, str(root)]))
        cli = min(cli, timed([svcc, "inspect", str(root), "--format", "json"]))
    return bare, cli


def ir_writing(root: Path, repeat: int) -> tuple[float, float, int]:
    """(text writer, plain values encoded, modules): seconds to write every IR's JSON."""
    from svcc.frontends.repository import lower_file
    from svcc.ir.canonical import canonical_json
    from svcc.ir.serde import _encode_ir, unstructure

    irs = [r.ir for f in read_tree(root, LIMITS).files if (r := lower_file(f, VERSION)).ir]
    text = plain = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for ir in irs:
            b"".join(_encode_ir(ir))  # ``ir_to_json`` without its per-IR cache
        text = min(text, time.perf_counter() - start)
        start = time.perf_counter()
        for ir in irs:
            canonical_json(unstructure(ir))
        plain = min(plain, time.perf_counter() - start)
    return text, plain, len(irs)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side (best kept)")
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI measurement")
    options = parser.parse_args()
    repeat = max(1, options.repeat)
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
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"bare ast.parse loop:             {base:7.2f} s")
    print(f"repository analysis, 1 process:  {serial:7.2f} s  ratio {serial / base:.2f}")
    print(f"repository analysis, all CPUs:   {parallel:7.2f} s  ratio {parallel / base:.2f}")
    if not options.no_cli:
        bare, cli = through_cli(root, repeat)
        print(f"CLI ({os.cpu_count()} CPUs): bare loop process {bare:7.2f} s, "
              f"svcc inspect DIR {cli:7.2f} s  ratio {cli / bare:.2f}")  # fmt: skip
    text, plain, count = ir_writing(root, repeat)
    print(f"IR JSON of {count} modules: written as text {text:.2f} s, "
          f"plain values encoded {plain:.2f} s  ratio {text / plain:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
