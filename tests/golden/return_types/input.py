from collections.abc import Callable


def returns_callable(n: int) -> Callable[[], int]:  # expect: SVC-R050
    return lambda: n


def returns_json(n: int) -> dict[str, list[int]]:
    return {"n": [n]}


def returns_nothing() -> None:
    return None
