"""Every standard-library input kind, eligible with no requirements: golden IR, OpenAPI and
MCP tool schemas."""

import datetime
import enum
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import NamedTuple, Optional, TypedDict


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mode(enum.StrEnum):
    FAST = enum.auto()
    SLOW = enum.auto()


@dataclass
class Point:
    x: float
    y: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    name: str
    points: list[Point] = field(default_factory=list)
    color: Optional[Color] = None
    tags: dict[str, str] = field(default_factory=dict)


@dataclass
class Labelled(Point):
    label: str = ""


@dataclass
class Tree:
    value: int
    children: "list[Tree]" = field(default_factory=list)


class Pair(NamedTuple):
    left: int
    right: int = 0


class Order(TypedDict):
    id: uuid.UUID
    amount: Decimal
    when: datetime.datetime
    shape: Shape


def when(day: datetime.date, at: datetime.time, moment: datetime.datetime) -> datetime.date:
    return day


def wait(span: datetime.timedelta) -> datetime.timedelta:
    return span


def ident(key: uuid.UUID) -> uuid.UUID:
    return key


def total(prices: list[Decimal]) -> Decimal:
    return sum(prices, Decimal("0"))


def upload(blob: bytes, name: str = "file") -> bytes:
    return blob


def paint(color: Color, level: Level = Level.LOW, mode: Mode = Mode.FAST) -> Color:
    return color


def area(shape: Shape, extra: Labelled | None = None) -> Shape:
    return shape


def depth(tree: Tree) -> int:
    return 1 + max((depth(c) for c in tree.children), default=0)


def swap(pair: Pair) -> Pair:
    return Pair(pair.right, pair.left)


def place(order: Order) -> Order:
    return order
