"""Parameter descriptions from docstrings (Google, NumPy, reST) and from the code."""

from typing import Annotated

from pydantic import BaseModel, Field


def google_style(radius: float, scale: int = 1) -> float:
    """Area of a scaled circle.

    Args:
        radius: The circle's radius, in metres.
        scale (int): How many circles.

    Returns:
        The total area, in square metres.
    """
    return 3.14159 * radius * radius * scale


def numpy_style(values: list[float], window: int) -> list[float]:
    """Moving average.

    Parameters
    ----------
    values : list of float
        The series to smooth.
    window : int
        How many values each average covers.

    Returns
    -------
    list of float
        The averages, one per full window.
    """
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]


def rest_style(text: str, width: int = 70) -> str:
    """Wrap text.

    :param text: The text to wrap.
    :param width: The longest line.
    :returns: The wrapped text.
    """
    return text[:width]


def annotated(
    count: Annotated[int, Field(description="How many items to take.")],
    label: str = "x",
) -> str:
    """Label items.

    Args:
        count: Overridden by the annotation's description.
        label: The label to repeat.
    """
    return label * count


class Order(BaseModel):
    item: str = Field(description="The item's name.")
    quantity: int = Field(default=1, ge=1, description="How many to order.")


def place(order: Order) -> int:
    """Place an order.

    Args:
        order: The order to place.
    """
    return order.quantity


def stale(size: int) -> int:  # expect: SVC-R070
    """Keep a size.

    Args:
        size: The size.
        colour: A parameter that was removed.
    """
    return size
