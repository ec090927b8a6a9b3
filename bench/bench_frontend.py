"""Front-end benchmark: svcc's whole-directory analysis against a bare ``ast.parse``.

Measured in one run, alternating, medians reported (never asserted):

1. ``svcc inspect DIR --format json`` (as a user runs it: a fresh process, output to a file)
   over the interpreter's standard library (excluding ``test/``, ``idlelib/`` and
   ``site-packages/``), against reading and ``ast.parse``-ing the same files in one process.
   Target: time ratio <= 1.2.
2. Peak resident memory of the largest process of each. Target: <= 1.5x.
3. ``svcc inspect small.py`` wall time against ``python -c pass``. Target: <= 3x.

By default svcc is built as a wheel and installed into a temporary venv (a user's install, not
the editable development one, whose import hook costs ~20 ms at startup); ``--svcc PATH`` uses
an existing ``svcc`` executable instead.

Usage: python bench/bench_frontend.py [--rounds 5] [--small-runs 30] [--svcc PATH]
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
from wheelenv import install_wheel_venv  # noqa: E402 -- tools/ is not a package

# What svcc cannot start faster than: the parser and CLI modules, and the mandated IR stack.
FLOORS = {
    "import ast, json, argparse": "import ast, json, argparse",
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
) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (KiB) of the largest process in the tree, and stdout."""
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
    return elapsed, usage.ru_maxrss, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--small-runs", type=int, default=30)
    parser.add_argument("--svcc", help="an svcc executable (default: build and install one)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="svcc-bench-") as tmp:
        work = Path(tmp)
        stdlib = work / "stdlib"
        count = copy_stdlib(stdlib)
        svcc = Path(args.svcc) if args.svcc else install_svcc(work)
        python = svcc.parent / "python"
        if not python.exists():
            python = Path(sys.executable)
        out_file = work / "out.json"

        svcc_times, svcc_rss, bare_times, bare_rss = [], [], [], []
        for _ in range(args.rounds):
            with out_file.open("wb") as fh:
                elapsed, rss, _ = run_measured(
                    [str(svcc), "inspect", str(stdlib), "--format", "json"], stdout=fh
                )
            svcc_times.append(elapsed)
            svcc_rss.append(rss)
            _, rss, out = run_measured([str(python), "-c", BARE, str(stdlib)], stdout=None)
            bare_times.append(float(out))
            bare_rss.append(rss)

        small = ROOT / "examples" / "shapes.py"
        pass_times, small_times = [], []
        floors: dict[str, list[float]] = {name: [] for name in FLOORS}
        for _ in range(args.small_runs):
            pass_times.append(run_measured([str(python), "-c", "pass"])[0])
            small_times.append(run_measured([str(svcc), "inspect", str(small)])[0])
            for name, code in FLOORS.items():
                floors[name].append(run_measured([str(python), "-c", code])[0])

    t_svcc, t_bare = statistics.median(svcc_times), statistics.median(bare_times)
    m_svcc, m_bare = max(svcc_rss), max(bare_rss)
    t_small, t_pass = statistics.median(small_times), statistics.median(pass_times)
    print(
        f"files analysed: {count} (stdlib of Python {sys.version.split()[0]}, "
        f"without {', '.join(EXCLUDED)}), {os.cpu_count()} cores, {args.rounds} rounds"
    )
    print(
        f"directory analysis: svcc inspect {t_svcc:.3f} s vs bare ast.parse {t_bare:.3f} s"
        f" -> ratio {t_svcc / t_bare:.2f} (target <= 1.2)"
    )
    print(
        f"peak RSS: svcc {m_svcc / 1024:.1f} MiB vs bare {m_bare / 1024:.1f} MiB"
        f" -> ratio {m_svcc / m_bare:.2f} (target <= 1.5)"
    )
    print(
        f"small file: svcc inspect {t_small * 1000:.1f} ms vs python -c pass "
        f"{t_pass * 1000:.1f} ms -> ratio {t_small / t_pass:.2f} (target <= 3)"
    )
    for name, times in floors.items():
        floor = statistics.median(times)
        print(f"  floor, {name}: {floor * 1000:.1f} ms ({floor / t_pass:.2f}x python -c pass)")


if __name__ == "__main__":
    main()
