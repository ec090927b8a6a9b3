import asyncio
from collections.abc import AsyncIterator


async def fetch(delay: float = 0.0) -> str:
    await asyncio.sleep(delay)
    return "done"


async def stream(n: int) -> AsyncIterator[int]:  # expect: SVC-R017 SVC-R018
    for i in range(n):
        yield i
