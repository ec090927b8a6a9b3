"""``svcc compile FILE --target k8s`` wall time with target discovery read once per process
(``compiler.registry.discover``'s cache) against reading it on every call (the baseline),
measured in the same run.

Each run is a fresh ``svcc`` process, as a user starts one; the baseline process is the same
command with the cache bypassed (``registry._discover`` replaced by the function it wraps),
so the only difference is how often every installed distribution's metadata is read. Runs
alternate (baseline, cached) ``--repeat`` times; each side reports its best, and the ratio
is baseline / cached. Usage: ``python bench/bench_discovery.py [--repeat 5]``. Never
asserts a time.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "shapes.py"
IMAGE = "registry.test:5443/team/shapes@sha256:" + "a" * 64
INPUTS = "b" * 64
RUN = (
    "import sys\n"
    "import svcc.compiler.registry as registry\n"
    "if sys.argv[1] == 'baseline':\n"
    "    registry._discover = registry._discover.__wrapped__\n"
    "from svcc.cli.main import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


def once(mode: str, out: Path) -> float:
    args = ("compile", str(EXAMPLE), "--target", "k8s", "--output-dir", str(out),
            "--image", IMAGE, "--inputs-sha256", INPUTS)  # fmt: skip
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", RUN, mode, *args], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    best = {"baseline": float("inf"), "cached": float("inf")}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):
            for mode in ("baseline", "cached"):
                best[mode] = min(best[mode], once(mode, Path(tmp) / f"{mode}-{i}"))
    print(f"svcc compile {EXAMPLE.name} --target k8s (best of {repeat}, fresh process each)")
    print(f"  discovery on every call: {best['baseline']:.3f} s")
    print(f"  discovery once:          {best['cached']:.3f} s")
    print(f"  ratio baseline/cached:   {best['baseline'] / best['cached']:.2f}x")


if __name__ == "__main__":
    main()
