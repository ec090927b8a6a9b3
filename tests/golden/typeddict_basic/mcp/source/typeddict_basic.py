from typing import TypedDict


class Point(TypedDict):
    """A point in the plane."""

    x: float
    y: float


def norm(p: Point) -> float:
    return (p["x"] ** 2 + p["y"] ** 2) ** 0.5


def points(ps: list[Point]) -> int:
    return len(ps)
