"""Harmless import-time idioms from real libraries: every function stays eligible."""

import collections
import datetime
import decimal
import enum
import functools
import logging
import re
import string
import struct
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar, Union

F = TypeVar("F")
Wrapped = Union[Callable[..., F], functools.partial]
WORD = re.compile(r"\w+", re.IGNORECASE)
VERBOSE = re.compile(r"a  # letter a", re.VERBOSE)
Point = collections.namedtuple("Point", "x y")
ORIGIN = Point(0, 0)
logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())
HERE = Path(__file__).parent
DATA = HERE / "data"
HEADER = struct.Struct("<I")
GREETING = string.Template("hello $name")
PRICE = decimal.Decimal("1.10")
EPOCH = datetime.datetime(1970, 1, 1)
SENTINEL = object()
STOP_WORDS = frozenset(["a", "the"])
LENGTHS = {w: len(w) for w in ["a", "bb"]}
parse_hex = functools.partial(int, base=16)
__all__ = ["shout"]
__all__ += ["wrap"]


class Color(enum.Enum):
    RED = 1


class Wrapper(textwrap.TextWrapper):
    pass


@dataclass
class Box:
    items: list[int] = field(default_factory=list)


def _square(n: int) -> int:
    return n * n


SQUARES = [_square(i) for i in range(4)]
EMPTY = Box()


def shout(text: str) -> str:
    return text.upper()


def wrap(text: str, width: int = 20) -> list[str]:
    return Wrapper(width=width).wrap(text)
