"""Models imported from a sibling module get their JSON shape as if defined here."""

import shapes
from shapes import Box, Plain, Point, Size


def pick(size: Size) -> Size:
    return size


def grow(box: Box) -> Box:
    return Box(width=box.width * 2, size=box.size)


def move(points: list[Point]) -> shapes.Point:
    return {"x": points[0]["x"] + 1, "y": points[0]["y"]}


def plain(thing: Plain) -> int:  # expect: SVC-R011
    return 1
