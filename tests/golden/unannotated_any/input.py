from typing import Any


def echo(value):  # expect: SVC-R004
    return value


def explicit(value: Any, other: object, items: list[Any]) -> Any:  # expect: SVC-R005
    return value


def mixed(
    a: int,
    b,  # expect: SVC-R004
    c: "Any" = None,  # expect: SVC-R005
) -> int:
    return a
