from __future__ import annotations

from typing import TypedDict


def area(shape: Shape, scale: "float" = 1.0) -> float:
    return shape["w"] * shape["h"] * scale


class Shape(TypedDict):
    w: float
    h: float
    children: list[Shape]
