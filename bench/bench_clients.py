"""Client export benchmark: ``export_collection`` against what it cannot avoid.

Measured in one run, alternating, medians reported (never asserted):

1. Exporting a REST bundle of N capabilities (TypedDict, Literal, tuple and defaulted
   parameters) in each format, against the baseline of what an export cannot avoid: verify
   the bundle (re-hash every file the manifest lists, parse ``openapi.json``) and build the
   bundle's own validator for every capability (what the server does at startup) and run
   it once. Target: export <= 2x the baseline (the rest is deriving, rendering, writing).
2. Growth: the export time of 4N capabilities over that of N. Target: <= 5 (linear, with
   the per-capability validator build dominating).

Usage: python bench/bench_clients.py [--capabilities 100] [--rounds 5]
"""

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from svcc.clients import FORMATS, ExportOptions, export_collection
from svcc.clients._bundle import RestBundle, load_rest_bundle
from svcc.clients._validator import Rejected, bundle_validators
from svcc.compiler.bundles import build_bundle
from svcc.compiler.driver import analyze_source
from svcc.compiler.registry import get_target
from svcc.compiler.writer import write_tree

HEADER = """from typing import Literal, NotRequired, TypedDict


class Item(TypedDict):
    sku: str
    quantity: int
    tags: NotRequired[list[str]]
"""
FUNCTION = """

def op{i}(item: Item, mode: Literal["a", "b"] = "b", point: tuple[int, float] = (1, 2.0),
          limit: int | None = None) -> int:
    return {i}
"""


def make_bundle(root: Path, count: int) -> Path:
    source = (HEADER + "".join(FUNCTION.format(i=i) for i in range(count))).encode()
    analysis = analyze_source(source, path="ops.py", module="ops", python_version="3.11")
    return write_tree(build_bundle(analysis, get_target("rest"))[1], root / f"bundle-{count}")


def unavoidable(path: Path) -> None:
    """Verify the bundle, then validate ``{}`` with each capability's own validator."""
    bundle: RestBundle = load_rest_bundle(path)
    with bundle_validators(bundle) as validators:
        for cap in bundle.capabilities:
            with contextlib.suppress(Rejected):  # a refusal is the expected answer
                validators.check(cap.schema, b"{}")


def median_seconds(action: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capabilities", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="svcc-bench-clients-") as tmp:
        root = Path(tmp)
        small = make_bundle(root, args.capabilities)
        large = make_bundle(root, 4 * args.capabilities)
        counter = iter(range(1_000_000))

        def export(bundle: Path, fmt: str) -> Callable[[], object]:
            return lambda: export_collection(
                bundle, root / f"out-{next(counter)}", ExportOptions(format=fmt)
            )

        verify = median_seconds(lambda: unavoidable(small), args.rounds)
        print(
            f"baseline: verify + the bundle's validators ({args.capabilities} capabilities): "
            f"{verify * 1000:.1f} ms"
        )
        for fmt in FORMATS:
            took = median_seconds(export(small, fmt), args.rounds)
            print(f"export {fmt:<9} {took * 1000:8.1f} ms   ratio to baseline {took / verify:5.2f}"
                  "  (target <= 2)")  # fmt: skip
        base = median_seconds(export(small, "postman"), args.rounds)
        grown = median_seconds(export(large, "postman"), args.rounds)
        print(f"growth 4x capabilities: {grown / base:.2f}x time (target <= 5)")


if __name__ == "__main__":
    main()
