"""Unit conversion, imported by the served module (so the image needs the closure)."""

SQUARE_CM_PER_SQUARE_M = 10_000


def to_unit(area: float, unit: str) -> float:
    return area if unit == "m" else area * SQUARE_CM_PER_SQUARE_M
