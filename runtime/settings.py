"""Numbers a server reads from its environment at startup (limits, deadlines): one rule for
all of them, so every setting is refused the same way. An unset or blank variable takes its
default; anything but a finite positive number refuses startup with one line naming it.
"""

import os
from collections.abc import Callable
from typing import TypeVar

from .integrity import StartupError

N = TypeVar("N", int, float)


def optional_positive(name: str, parse: Callable[[str], N]) -> N | None:
    """``name``'s value parsed by ``parse`` (``int`` or ``float``); ``None`` when unset."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value: N | None = parse(text)
    except ValueError:
        value = None
    if value is None or not 0 < value < float("inf"):  # NaN compares false
        raise StartupError(f"{name}: expected a positive number, got {text!r}")
    return value


def positive(name: str, default: N, parse: Callable[[str], N]) -> N:
    """``name``'s value parsed by ``parse``, or ``default`` when unset."""
    value = optional_positive(name, parse)
    return default if value is None else value
