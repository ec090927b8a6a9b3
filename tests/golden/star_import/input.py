from os.path import *  # noqa: F403


def join_all(parts: list[str], sep: Separator = "/") -> str:  # expect: SVC-R013
    return sep.join(parts)


def fine(x: int) -> int:
    return x
