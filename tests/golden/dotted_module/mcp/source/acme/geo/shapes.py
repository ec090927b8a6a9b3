"""Shapes, served under the dotted module name ``acme.geo.shapes``."""

from typing import TypedDict


class Size(TypedDict):
    width: float
    height: float


def area(size: Size) -> float:
    """Area of a rectangle."""
    return size["width"] * size["height"]
