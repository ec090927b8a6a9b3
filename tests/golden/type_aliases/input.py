from typing import NewType, TypeVar

Vector = list[float]
Number = int | float
UserId = NewType("UserId", int)
T = TypeVar("T")


def length(v: Vector) -> float:
    return sum(x * x for x in v) ** 0.5


def double(n: Number, user: UserId) -> Number:
    return n * 2


def identity(value: T) -> T:  # expect: SVC-R011 SVC-R018
    return value
