"""Front-end benchmark: svcc's whole-directory analysis against a bare ``ast.parse``.

Measured in one run, alternating, medians reported (never asserted):

1. ``svcc inspect DIR --format json`` (as a user runs it: a fresh process, output to a file)
   over the interpreter's standard library (excluding ``test/``, ``idlelib/`` and
   ``site-packages/``), against reading and ``ast.parse``-ing the same files in one process.
   Target: time ratio <= 1.2.
2. Peak resident memory of the largest process of each. Target: <= 1.5x.
3. Cold ``svcc inspect small.py`` (text, what a terminal gets; and JSON) against the
   interpreter's own floor, ``python -S -c pass``, in wall time and in CPU time (user +
   system of the child: steadier than wall time on a shared machine). Target: <= 4.5x.
   With ``--baseline REF``, the same two commands of svcc built from git ``REF`` (e.g. the
   ``main`` a change starts from) run in the same alternation, and the ratio of this tree to
   it is printed: what a change to the import graph of ``inspect FILE`` bought.

With ``--baseline REF`` (and without ``--small-only``), ``inspect DIR`` of svcc built from
``REF`` also runs in each round of item 1, between this tree's and the bare loop, and the
ratio of this tree to it is printed, in wall and in CPU time (the child's user + system).

By default svcc is built as a wheel and installed into a temporary venv (a user's install, not
the editable development one, whose import hook costs ~20 ms at startup); ``--svcc PATH`` uses
an existing ``svcc`` executable instead.

Usage: python bench/bench_frontend.py [--rounds 5] [--small-runs 30] [--svcc PATH] [--small-only]
[--baseline REF]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from wheelenv import install_ref_venv, install_wheel_venv  # noqa: E402 -- tools/ is not a package

# What svcc cannot start faster than: the parser and CLI modules. The IR stack is shown for
# scale: neither inspect report imports attrs (the records' methods are generated ahead of
# time, svcc.ir.records) nor cattrs (it only reads an IR back).
FLOORS = {
    "import ast, json, argparse": "import ast, json, argparse",
    "+ attrs": "import ast, json, argparse, attrs",
    "+ attrs, cattrs": "import ast, json, argparse, attrs, cattrs",
}
EXCLUDED = ("test", "idlelib", "site-packages")

BARE = """
import ast, sys, time, resource
from pathlib import Path
files = sorted(Path(sys.argv[1]).rglob("*.py"))
start = time.perf_counter()
for f in files:
    try:
        ast.parse(f.read_bytes())
    except (SyntaxError, ValueError):
        pass
print(time.perf_counter() - start)
"""


def copy_stdlib(target: Path) -> int:
    source = Path(sysconfig.get_paths()["stdlib"])
    count = 0
    for path in sorted(source.rglob("*.py")):
        rel = path.relative_to(source)
        if rel.parts[0] in EXCLUDED or "__pycache__" in rel.parts:
            continue
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / rel)
        count += 1
    return count


def install_svcc(workdir: Path) -> Path:
    return install_wheel_venv(workdir) / "bin" / "svcc"


def run_measured(
    cmd: list[str], stdout: int | object = subprocess.DEVNULL
) -> tuple[float, int, bytes, float]:
    """Wall seconds, peak RSS (KiB) of the largest process in the tree, stdout, and the
    child's CPU seconds (user + system)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.DEVNULL,
        cwd=tempfile.gettempdir(),  # the checkout's svcc/ folder would shadow the install
    )
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed with exit {proc.returncode}")
    return elapsed, usage.ru_maxrss, out, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--small-runs", type=int, default=30)
    parser.add_argument("--svcc", help="an svcc executable (default: build and install one)")
    parser.add_argument(
        "--small-only", action="store_true", help="only the cold small-file measurement"
    )
    parser.add_argument(
        "--baseline", metavar="REF", help="also time inspect of svcc built from git REF"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="svcc-bench-") as tmp:
        work = Path(tmp)
        stdlib = work / "stdlib"
        count = 0 if args.small_only else copy_stdlib(stdlib)
        svcc = Path(args.svcc) if args.svcc else install_svcc(work)
        python = svcc.parent / "python"
        if not python.exists():
            python = Path(sys.executable)
        out_file = work / "out.json"

        base = None
        if args.baseline:
            base = install_ref_venv(work / "baseline", args.baseline) / "bin" / "svcc"
        svcc_times, svcc_rss, bare_times, bare_rss = [], [], [], []
        svcc_cpu: list[float] = []
        base_times: list[float] = []
        base_cpu: list[float] = []
        for _ in range(0 if args.small_only else args.rounds):
            with out_file.open("wb") as fh:
                elapsed, rss, _, used = run_measured(
                    [str(svcc), "inspect", str(stdlib), "--format", "json"], stdout=fh
                )
            svcc_times.append(elapsed)
            svcc_rss.append(rss)
            svcc_cpu.append(used)
            if base is not None:
                with out_file.open("wb") as fh:
                    elapsed, _, _, used = run_measured(
                        [str(base), "inspect", str(stdlib), "--format", "json"], stdout=fh
                    )
                base_times.append(elapsed)
                base_cpu.append(used)
            _, rss, out, _ = run_measured([str(python), "-c", BARE, str(stdlib)], stdout=None)
            bare_times.append(float(out))
            bare_rss.append(rss)

        small = ROOT / "examples" / "shapes.py"
        runs: dict[str, list[str]] = {
            "python -S -c pass": [str(python), "-S", "-c", "pass"],
            "inspect (text)": [str(svcc), "inspect", str(small), "--format", "text"],
            "inspect (json)": [str(svcc), "inspect", str(small), "--format", "json"],
        }
        runs |= {f"floor, {name}": [str(python), "-c", code] for name, code in FLOORS.items()}
        if base is not None:
            for fmt in ("text", "json"):
                runs[f"baseline inspect ({fmt})"] = [
                    str(base),
                    "inspect",
                    str(small),
                    "--format",
                    fmt,
                ]
        for command in runs.values():  # bytecode caches written: measure them cold, not new
            run_measured(command)
        wall: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.small_runs):  # alternating, so load changes hit all alike
            for name, command in runs.items():
                elapsed, _, _, used = run_measured(command)
                wall[name].append(elapsed)
                cpu[name].append(used)

    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    if not args.small_only:
        t_svcc, t_bare = statistics.median(svcc_times), statistics.median(bare_times)
        m_svcc, m_bare = max(svcc_rss), max(bare_rss)
        print(
            f"files analysed: {count} (stdlib of Python {sys.version.split()[0]}, "
            f"without {', '.join(EXCLUDED)}), {args.rounds} rounds"
        )
        print(
            f"directory analysis: svcc inspect {t_svcc:.3f} s vs bare ast.parse {t_bare:.3f} s"
            f" -> ratio {t_svcc / t_bare:.2f} (target <= 1.2)"
        )
        print(
            f"peak RSS: svcc {m_svcc / 1024:.1f} MiB vs bare {m_bare / 1024:.1f} MiB"
            f" -> ratio {m_svcc / m_bare:.2f} (target <= 1.5)"
        )
        if base_times:
            t_base, c_base = statistics.median(base_times), statistics.median(base_cpu)
            c_svcc = statistics.median(svcc_cpu)
            print(
                f"directory analysis against {args.baseline}: wall {t_svcc:.3f} s vs "
                f"{t_base:.3f} s ({t_svcc / t_base:.3f}x), CPU {c_svcc:.3f} s vs {c_base:.3f} s "
                f"({c_svcc / c_base:.3f}x)"
            )
    floor_wall = statistics.median(wall["python -S -c pass"])
    floor_cpu = statistics.median(cpu["python -S -c pass"])
    print(
        f"small file ({args.small_runs} runs, medians; ratio to python -S -c pass, "
        "target <= 4.5 for inspect):"
    )
    for name in runs:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(
            f"  {name}: wall {w * 1000:.1f} ms ({w / floor_wall:.2f}x), "
            f"CPU {c * 1000:.1f} ms ({c / floor_cpu:.2f}x)"
        )
    if args.baseline:
        print(f"this tree against {args.baseline} (same runs, medians):")
        for fmt in ("text", "json"):
            ours, theirs = f"inspect ({fmt})", f"baseline inspect ({fmt})"
            w = statistics.median(wall[ours]) / statistics.median(wall[theirs])
            c = statistics.median(cpu[ours]) / statistics.median(cpu[theirs])
            print(f"  inspect ({fmt}): wall {w:.3f}x, CPU {c:.3f}x")


if __name__ == "__main__":
    main()
