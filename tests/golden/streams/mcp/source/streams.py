"""Streams: generators served item by item."""

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TypedDict

CLOSED = {"count": 0}


class Token(TypedDict):
    index: int
    text: str


@dataclass
class Point:
    x: int
    y: int


def words(text: str) -> Iterator[str]:
    """Each word of ``text``."""
    for word in text.split():
        yield word


async def ticks(n: int) -> AsyncIterator[int]:
    """The numbers below ``n``, one per loop turn."""
    for i in range(n):
        await asyncio.sleep(0)
        yield i


def tokens(text: str) -> Iterator[Token]:
    for index, word in enumerate(text.split()):
        yield {"index": index, "text": word}


def points(n: int) -> Iterator[Point]:
    for i in range(n):
        yield Point(x=i, y=i * i)


def two_then_fail() -> Iterator[int]:
    yield 1
    yield 2
    raise ValueError("the third item is missing")


def forever(delay: float = 0.0) -> Iterator[int]:
    """Counts until the client leaves; ``closed()`` tells how many streams ended so."""
    i = 0
    try:
        while True:
            if delay:
                time.sleep(delay)
            yield i
            i += 1
    finally:
        CLOSED["count"] += 1


def closed() -> int:
    return CLOSED["count"]


async def on_the_loop() -> bool:
    """Whether an async function is awaited on the server's event loop (its main thread)."""
    asyncio.get_running_loop()
    return threading.current_thread() is threading.main_thread()


def item_thread() -> Iterator[bool]:
    """Whether a sync generator's items are made on the main thread (never: a pool's)."""
    yield threading.current_thread() is threading.main_thread()
