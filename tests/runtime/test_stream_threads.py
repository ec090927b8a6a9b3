"""A sync generator's stream in this process (``streaming.ThreadedItems``, issue 40): one
thread for its whole life, a bounded buffer ahead of a slow reader, the thread pool the calls
run on, and ``close`` running the generator's ``finally`` in its own thread.

No server here: the served behaviour (JSON Lines, SSE, a client that leaves) is in
``test_streaming.py``; these pin what a network test cannot see.
"""

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
from svcc.runtime import threads
from svcc.runtime.streaming import BUFFER_ITEMS, StreamError, ThreadedItems, item_encoder

ENCODE = item_encoder(walk=False)


def test_the_generator_runs_in_one_thread_for_its_whole_life() -> None:
    """What only its own thread may use (a ``sqlite3`` cursor) stays usable: every item,
    the first one included, and the ``finally`` run on the same thread, not the loop's."""
    seen: set[int] = set()

    def rows() -> Iterator[int]:
        try:
            for i in range(3 * BUFFER_ITEMS):
                seen.add(threading.get_ident())
                yield i
        finally:
            seen.add(threading.get_ident())

    async def read() -> list[bytes]:
        source = ThreadedItems(rows(), ENCODE)
        items: list[bytes] = []
        try:
            while (batch := await source.batch(5.0)) is not None:
                items += batch
        finally:
            await source.close()
        return items

    items = asyncio.run(read())
    assert items == [str(i).encode() for i in range(3 * BUFFER_ITEMS)]
    assert len(seen) == 1
    assert threading.get_ident() not in seen


def test_a_slow_reader_holds_the_generator_back() -> None:
    """Backpressure: the generator runs at most a buffer ahead of its reader."""
    produced = [0]
    closed = threading.Event()

    def endless() -> Iterator[int]:
        try:
            while True:
                produced[0] += 1
                yield produced[0]
        finally:
            closed.set()

    async def read_then_stall() -> int:
        source = ThreadedItems(endless(), ENCODE)
        try:
            first = await source.batch(5.0)
            assert first is not None
            second = await source.batch(5.0)  # the producer runs on after the first item
            assert second
            await asyncio.sleep(0.3)  # a reader that does not read
            return produced[0]
        finally:
            await source.close()

    ahead = asyncio.run(read_then_stall())
    assert ahead <= 1 + 2 * BUFFER_ITEMS + 2
    assert closed.is_set()  # close() ran the generator's finally


def test_streams_and_calls_share_the_calls_threads_and_wait_for_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stream takes a thread of the pool sync calls run on (one limit for both); over it,
    a stream waits (its generator does not start) as a call does, and closing it then
    leaves nothing running."""
    started: list[str] = []
    release = threading.Event()
    pool = threads.Pool(1)
    monkeypatch.setattr(threads, "_pool", [pool])

    def blocking(name: str) -> Iterator[str]:
        started.append(name)
        release.wait(10)
        yield name

    async def main() -> tuple[list[str], str]:
        first = ThreadedItems(blocking("first"), ENCODE)
        await asyncio.sleep(0.1)
        call = asyncio.ensure_future(threads.run_sync(lambda: "call"))
        second = ThreadedItems(blocking("second"), ENCODE)
        with pytest.raises(StreamError) as waited:  # no thread within the idle limit
            await second.batch(0.2)
        assert waited.value.status == 504
        await second.close()
        assert not call.done()  # the call waits for the stream's thread too
        release.set()
        assert await first.batch(5.0) == [b'"first"']
        assert await first.batch(5.0) is None
        await first.close()
        return list(started), await call

    try:
        names, called = asyncio.run(main())
    finally:
        pool.close()
    assert names == ["first"]  # the second generator never ran
    assert called == "call"


def test_the_first_item_past_the_idle_limit_is_the_idle_record() -> None:
    def late() -> Iterator[int]:
        time.sleep(0.5)
        yield 1

    async def main() -> StreamError:
        source = ThreadedItems(late(), ENCODE)
        try:
            await source.batch(0.1)
        except StreamError as exc:
            return exc
        finally:
            await source.close()  # waits for the item in progress, then closes
        raise AssertionError("no idle record")

    error = asyncio.run(main())
    assert error.status == 504
    assert "SVC_STREAM_IDLE_SECONDS" in str(error.detail)
