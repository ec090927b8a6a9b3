import enum
from abc import ABCMeta
from dataclasses import dataclass, field


class Plain:
    """Plain classes are fine."""

    size: int = 3

    def method(self) -> int:
        return self.size


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Error(ValueError):
    pass


@dataclass
class Simple:
    x: int = 0


@dataclass
class WithFactory:
    items: list[int] = field(default_factory=list)


class Meta(metaclass=ABCMeta):  # expect: SVC-R010
    pass


def paint(color: str = "red") -> str:
    return color
