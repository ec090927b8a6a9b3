"""Files read on every call through the module's own functions (a cached loader, a class
method, a helper given the path, three calls deep) and through a name every branch binds;
what copes with a missing file, or takes the path from a parameter, is left alone."""

import functools
import json
import os
from pathlib import Path

HERE = Path(__file__).parent


@functools.lru_cache(maxsize=None)
def _catalog() -> dict[str, float]:
    return json.loads((HERE / "catalog.json").read_text())  # expect: SVC-R042


def price_of(item: str) -> float:
    return _catalog()[item]


class Prices:
    @classmethod
    def load(cls) -> dict[str, float]:
        return json.loads((HERE / "prices.json").read_text())  # expect: SVC-R042


def listed(item: str) -> float:
    return Prices.load()[item]


def _rows(name: str = "stock.csv") -> list[str]:
    with open(os.path.join(os.path.dirname(__file__), name)) as handle:  # expect: SVC-R042
        return handle.read().splitlines()


def stock() -> int:
    return len(_rows())


def _read(path: Path) -> str:
    return path.read_text()  # expect: SVC-R042


def notes() -> str:
    return _read(HERE / "notes.txt")


def by_name(name: str) -> str:
    return _read(HERE / name)


def greeting(french: bool) -> str:
    if french:
        path = HERE / "fr.txt"
    else:
        path = HERE / "en.txt"
    return path.read_text()  # expect: SVC-R042


def relative() -> str:
    return _relative()


def _relative() -> str:
    return open("notes.txt").read()  # expect: SVC-R043


def outer() -> str:
    return _middle()


def _middle() -> str:
    return _inner()


def _inner() -> str:
    return _deep()


def _deep() -> str:
    return (HERE / "deep.txt").read_text()  # expect: SVC-R042


def guarded(item: str) -> float:
    path = HERE / "catalog.json"
    if not path.exists():
        return 0.0
    return json.loads(path.read_text())[item]


def tried(item: str) -> float:
    try:
        return _catalog()[item]
    except FileNotFoundError:
        return 0.0


def fallback() -> str:
    path = HERE / "custom.txt"
    if not path.is_file():
        path = Path(__file__)
    return path.read_text()


def recursive(n: int) -> int:
    return _down(n)


def _down(n: int) -> int:
    return 0 if n <= 0 else recursive(n - 1)
