def compute(x: int) -> int:
    return x


def _swap() -> None:
    global compute  # expect: SVC-R019
    compute = lambda x: -x  # noqa: E731


def other(counter: int = 0) -> int:
    global _state
    return counter
