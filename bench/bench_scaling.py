"""Growth benchmark: does each pass cost time and memory in proportion to its input?

For each growth case of issue 17 (Literal members, module-level functions, a TypedDict
inheritance chain, positional-only parameters with defaults, a module of ``x = 1`` lines),
a source is generated at 1x, 4x and 16x of a base size and run as a user runs it, one fresh
process per measurement: ``svcc inspect FILE --format json`` and ``svcc generate rest FILE``.
Each measurement reports wall time, the process's peak resident memory (``ru_maxrss`` from
``wait4``, that child only) and the size of what it wrote; each 4x step reports the ratio
against the previous size, measured in the same run (the 1x point is the baseline).

Targets (printed, never asserted): every 4x step <= 5x in time and memory (linear with
noise) and no process over 1 GB at 16x. Each child runs under an address-space limit
(``--limit-mb``, default 3072) so a regression fails the measurement instead of the machine.

Usage: python bench/bench_scaling.py [--cases literal,functions,...] [--scale 1.0]
       [--repeat 1] [--svcc PATH]

``--scale`` multiplies every base size; ``--cases module --scale 10`` reaches the issue's
15 MB module at 16x.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

STEPS = (1, 4, 16)
STEP_TARGET = 5.0
MEMORY_TARGET_MB = 1024.0


def literal_members(n: int) -> str:
    members = ", ".join(f'"m{i}"' for i in range(n))
    return (
        f"from typing import Literal\n\n\ndef pick(x: Literal[{members}]) -> str:\n    return x\n"
    )


def functions(n: int) -> str:
    return "".join(f"def f{i}(a: int, b: str = 'x') -> int:\n    return a\n\n\n" for i in range(n))


def typeddict_chain(n: int) -> str:
    out = ["from typing import TypedDict\n\n\nclass T0(TypedDict):\n    f0: int\n"]
    out += [f"\nclass T{i}(T{i - 1}):\n    f{i}: int\n" for i in range(1, n)]
    out.append(f"\n\ndef take(x: T{n - 1}) -> int:\n    return 1\n")
    return "".join(out)


def positional_defaults(n: int) -> str:
    params = ", ".join(f"p{i}: int = {i}" for i in range(n))
    return f"def take({params}, /) -> int:\n    return 1\n"


def module_lines(n: int) -> str:
    return "x = 1\n" * n + "\n\ndef f(a: int) -> int:\n    return a\n"


# name -> (generator, base size at 1x, what the size counts)
CASES: dict[str, tuple[Callable[[int], str], int, str]] = {
    "literal": (literal_members, 1250, "Literal members"),
    "functions": (functions, 1250, "functions"),
    "typeddict": (typeddict_chain, 125, "inheritance levels"),
    "posonly": (positional_defaults, 125, "positional-only defaults"),
    "module": (module_lines, 15625, "`x = 1` lines"),
}


def default_svcc() -> str:
    found = Path(sys.executable).with_name("svcc")
    return str(found) if found.exists() else shutil.which("svcc") or "svcc"


def tree_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# The child sets its own address-space limit, then becomes the command (no preexec_fn).
LIMITED = "import os, resource, sys; n = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_AS, (n, n)); os.execvp(sys.argv[2], sys.argv[2:])"  # noqa: E501


def measure(cmd: list[str], output: Path, limit_mb: int) -> tuple[float, float, int, int]:
    """(wall seconds, peak RSS in MB of that child, bytes written, exit code)."""
    limited = [sys.executable, "-c", LIMITED, str(limit_mb * 1024 * 1024), *cmd]
    with open(output if output.suffix == ".json" else os.devnull, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(limited, stdout=sink, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        error = proc.stderr.read().decode(errors="replace").strip().splitlines()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    written = tree_bytes(output) if output.exists() else 0
    if code != 0 and error:
        print(f"  ({' '.join(cmd[1:3])} exit {code}: {error[-1][:200]})")
    return wall, usage.ru_maxrss / 1024, written, code


def ratio(now: float, before: float) -> str:
    return f"{now / before:5.2f}x" if before > 0 else "    -"


def run_case(name: str, args: argparse.Namespace, work: Path) -> list[str]:
    generate, base, unit = CASES[name]
    svcc, scale, repeat, limit_mb = args.svcc, args.scale, args.repeat, args.limit_mb
    problems: list[str] = []
    print(f"\n== {name}: {unit} (base {max(1, int(base * scale))}) ==")
    print(f"{'command':9} {'size':>9} {'source':>9} {'time s':>8} {'step':>7} "
          f"{'peak MB':>8} {'step':>7} {'output':>10} {'step':>7}")  # fmt: skip
    for command in ("inspect", "generate"):
        previous: tuple[float, float, int] | None = None
        for step in STEPS:
            size = max(1, int(base * scale)) * step
            # one folder per size: the module (and so every capability id) is named alike at
            # every size, so the manifest grows with the functions alone
            source = work / f"{name}_{size}" / f"{name}.py"
            if not source.exists():
                source.parent.mkdir()
                source.write_text(generate(size))
            best: tuple[float, float, int, int] | None = None
            for _ in range(repeat):
                name_out = f"{name}_{size}.json" if command == "inspect" else f"{name}_{size}_out"
                out = work / name_out
                if out.is_dir():
                    shutil.rmtree(out)
                cmd = (
                    [svcc, "inspect", str(source), "--format", "json"]
                    if command == "inspect"
                    else [svcc, "generate", "rest", str(source), "--output-dir", str(out)]
                )
                result = measure(cmd, out, limit_mb)
                if best is None or result[0] < best[0]:
                    best = result
                if out.is_dir():
                    shutil.rmtree(out)
                elif out.exists():
                    out.unlink()
            assert best is not None
            wall, peak, written, code = best
            steps = (
                (ratio(wall, previous[0]), ratio(peak, previous[1]), ratio(written, previous[2]))
                if previous
                else ("    -",) * 3
            )
            flag = "" if code == 0 else f"  exit {code}"
            print(f"{command:9} {size:>9} {source.stat().st_size:>9} {wall:8.2f} {steps[0]:>7} "
                  f"{peak:8.1f} {steps[1]:>7} {written:>10} {steps[2]:>7}{flag}")  # fmt: skip
            if code != 0:
                problems.append(f"{name} {command} {size}: exit {code}")
            if previous:
                pairs = (("time", wall, previous[0]), ("memory", peak, previous[1]))
                for label, now, before in pairs:
                    if before > 0 and now / before > STEP_TARGET:
                        problems.append(
                            f"{name} {command} {size}: {label} step "
                            f"{now / before:.2f}x > {STEP_TARGET}x"
                        )
            if step == STEPS[-1] and peak > MEMORY_TARGET_MB:
                problems.append(f"{name} {command} {size}: {peak:.0f} MB > 1 GB")
            previous = (wall, peak, written)
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every base size")
    parser.add_argument("--repeat", type=int, default=1, help="runs per point (best is kept)")
    parser.add_argument("--limit-mb", type=int, default=3072, help="address-space limit per run")
    parser.add_argument("--svcc", default=default_svcc(), help="the svcc executable")
    args = parser.parse_args()
    names = [n.strip() for n in args.cases.split(",") if n.strip()]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown case {unknown[0]!r}; choose from {', '.join(CASES)}")
    print(f"svcc: {args.svcc}; steps {STEPS}; target: each 4x step <= {STEP_TARGET}x, "
          f"<= {MEMORY_TARGET_MB:.0f} MB at 16x")  # fmt: skip
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="svcc-bench-scaling-") as tmp:
        for name in names:
            problems += run_case(name, args, Path(tmp))
    print("\n" + ("all steps within target" if not problems else "over target:"))
    for problem in problems:
        print(f"  {problem}")


if __name__ == "__main__":
    main()
