"""Readiness of the types and results svcc serves: a return type no encoder can write, a
model field that cannot be read statically, a parameter left out of the interface, numpy
and pandas types without the library declared, a class that is none of the kinds."""

import enum
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np  # expect: SVC-R008
import pandas as pd  # expect: SVC-R008
from pydantic import BaseModel, Field  # expect: SVC-R008

LIMIT = 10


class Plain:
    size: int = 3


class Counted(enum.Enum):
    ONE = enum.auto()
    TWO = enum.auto()


class Item(BaseModel):
    name: str = Field(min_length=1, max_length=LIMIT)  # expect: SVC-R051
    price: float = Field(gt=0)


@dataclass
class Box:
    items: list[Item]


def make_plain(n: int) -> Plain:  # expect: SVC-R050
    return Plain()


def callback_result(n: int) -> Callable[[], int]:  # expect: SVC-R050
    return lambda: n


def with_callback(n: int, on_done: Callable[[int], None] | None = None) -> int:  # expect: SVC-R052
    return n


def take_plain(p: Plain) -> int:  # expect: SVC-R011
    return p.size


def pack(box: Box) -> int:
    return len(box.items)


def matrix(values: np.ndarray) -> pd.DataFrame:  # expect: SVC-R053
    return pd.DataFrame(values)


def series(values: list[float]) -> pd.Series:  # expect: SVC-R053
    return pd.Series(values)


def count(c: Counted) -> int:  # expect: SVC-R011
    return 1
