"""Geometry capabilities, served by svcc from the repository."""

import math
from typing import Literal, NotRequired, TypedDict

from shapes.units import to_unit


class Rectangle(TypedDict):
    width: float
    height: float
    label: NotRequired[str]


def circle_area(radius: float, /, *, unit: Literal["m", "cm"] = "m") -> float:
    """Area of a circle of the given radius, in square metres or square centimetres."""
    return to_unit(math.pi * radius**2, unit)


def rectangle_area(rect: Rectangle) -> float:
    """Area of a rectangle."""
    return rect["width"] * rect["height"]


def scale(points: list[tuple[float, float]], factor: float = 2.0) -> list[list[float]]:
    """Scale every point by a factor."""
    return [[x * factor, y * factor] for x, y in points]


def describe(shape, precision: int | None = None) -> str:
    """Describe anything; `shape` has no annotation, so it accepts any JSON value."""
    text = repr(shape)
    return text if precision is None else text[:precision]
