from typing import Any


def valmap(func, d: dict[str, int]) -> dict[str, int]:  # expect: SVC-R004
    return {k: func(v) for k, v in d.items()}  # expect: SVC-R020


def check(value: int, kind: Any) -> bool:  # expect: SVC-R005
    return isinstance(value, kind)  # expect: SVC-R020


def wrap(deco, x: int) -> int:  # expect: SVC-R004
    @deco  # expect: SVC-R020
    def inner() -> int:
        return x

    return inner()


def plain(data, n: int) -> int:  # expect: SVC-R004
    return len(data) + n
