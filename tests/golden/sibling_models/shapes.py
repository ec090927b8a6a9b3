"""Models defined beside the module that serves them (see input.py)."""

import enum
from dataclasses import dataclass
from typing import TypedDict


class Size(enum.Enum):
    S = "s"
    M = "m"


@dataclass
class Box:
    width: int
    size: Size = Size.M


class Point(TypedDict):
    x: int
    y: int


class Plain:
    pass
