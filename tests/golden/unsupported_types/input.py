from collections.abc import Callable
from datetime import datetime


class Thing:
    name: str = "thing"


def call(fn: Callable[[int], int]) -> int:  # expect: SVC-R011
    return fn(1)


def raw(data: bytes, tags: set[str]) -> int:  # expect: SVC-R011
    return len(data)


def when(moment: datetime) -> str:
    return moment.isoformat()


def thing(t: Thing, keys: dict[int, str]) -> str:  # expect: SVC-R011
    return t.name


def union_part(value: int | bytes) -> int:
    return 0
