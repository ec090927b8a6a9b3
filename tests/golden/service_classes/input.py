"""Service classes: served method by method, and the ones the server cannot build."""

import json
import os
import urllib.request
from abc import ABCMeta
from pathlib import Path

import joblib

HERE = Path(__file__).parent


class Model:
    """Loads its table once; a declared data file is no effect."""

    def __init__(self) -> None:
        self.table = json.loads((HERE / "table.json").read_text())
        self.calls = 0

    def lookup(self, key: str) -> int:
        """The table's value for ``key``."""
        return int(self.table.get(key, 0))

    def count(self) -> int:
        self.calls += 1  # expect: SVC-R086
        return self.calls

    def spread(self, *values: int) -> int:  # expect: SVC-R014
        return sum(values)

    def _private(self) -> None:
        pass

    @property
    def size(self) -> int:
        return len(self.table)


class Pickled:
    def __init__(self) -> None:
        self.model = joblib.load(HERE / "model.joblib")  # expect: SVC-R088

    def predict(self, x: float) -> float:
        return float(self.model.predict([[x]])[0])


class Needs:  # expect: SVC-R085
    def __init__(self, path: str) -> None:
        self.path = path

    def setup(self) -> None:
        self.text = self.path.upper()

    def read(self) -> str:
        return self.path


class FromEnvironment:
    def setup(self) -> None:
        self.token = os.environ["TOKEN"]  # expect: SVC-R027

    def token_length(self) -> int:
        return len(self.token)


class Downloads:
    def load(self) -> None:
        self.page = urllib.request.urlopen("https://example.com").read()  # expect: SVC-R026

    def size(self) -> int:
        return len(self.page)


class Opaque:
    def __init__(self) -> None:
        self.n = 0
        while self.n < 3:  # expect: SVC-R087
            self.n += 1

    def count(self) -> int:
        return self.n


class WithFile:
    def __init__(self) -> None:
        with open(HERE / "table.json") as f:
            self.text = f.read()

    def text_length(self) -> int:
        return len(self.text)


class Point:
    """A value type built with arguments: no service, nothing reported."""

    def __init__(self, x: float, y: float) -> None:
        self.x, self.y = x, y

    def norm(self) -> float:
        return float((self.x**2 + self.y**2) ** 0.5)


class Abstract(metaclass=ABCMeta):  # expect: SVC-R010
    def run(self) -> int:
        return 1


def _registered(cls: type) -> type:
    return type(cls.__name__, (cls,), {})


@_registered  # expect: SVC-R010
class Registered:
    def run(self) -> int:
        return 2
