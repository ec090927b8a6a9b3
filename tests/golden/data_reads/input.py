"""Files read on every call: beside the module (undeclared) or relative to the working
directory; a path from a parameter stays the paths effect."""

import json
from pathlib import Path

HERE = Path(__file__).parent


def price_of(item: str) -> float:
    return float(json.loads((HERE / "catalog.json").read_text())[item])  # expect: SVC-R042


def cwd_price(item: str) -> float:
    with open("catalog.json") as handle:  # expect: SVC-R043
        return float(json.load(handle)[item])


def by_name(name: str) -> str:
    return open(name).read()  # expect: SVC-R036


def own_size() -> int:
    return len(Path(__file__).read_text())
