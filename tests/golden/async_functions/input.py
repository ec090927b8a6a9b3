import asyncio
from collections.abc import AsyncIterator


async def fetch(delay: float = 0.0) -> str:
    await asyncio.sleep(delay)
    return "done"


async def stream(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


async def accumulate(start: int) -> AsyncIterator[int]:
    total = start
    while True:
        total += yield total  # expect: SVC-R017
