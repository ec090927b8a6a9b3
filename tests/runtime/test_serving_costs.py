"""What the request path was made cheaper with keeps its meaning: the worker threads of sync
capabilities (``threads``), the metrics counted as plain numbers (``metrics``) and the
request ids made without a system call (``network``)."""

import asyncio
import contextvars
import io
import os
import re
import threading
import time

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from svcc.runtime import metrics, network, threads

# -- worker threads ---------------------------------------------------------------------------

where: contextvars.ContextVar[str] = contextvars.ContextVar("where", default="unset")


def test_a_sync_call_runs_in_a_worker_thread_with_the_callers_context() -> None:
    def probe(a: int, *, b: int) -> tuple[int, str, bool]:
        return a + b, where.get(), threading.current_thread() is threading.main_thread()

    async def main() -> tuple[int, str, bool]:
        where.set("caller")
        return await threads.run_sync(probe, 1, b=2)

    assert asyncio.run(main()) == (3, "caller", False)


def test_what_the_function_raises_reaches_the_caller() -> None:
    def fail() -> None:
        raise SystemExit("from the function")

    async def main() -> None:
        await threads.run_sync(fail)

    with pytest.raises(SystemExit, match="from the function"):
        asyncio.run(main())


def test_a_cancelled_call_is_answered_once_the_function_has_returned() -> None:
    """A thread cannot be interrupted: the cancellation waits for the function, as anyio's
    did (the direct-mode limits count a call as running until it really ends)."""
    ended: list[float] = []

    def slow() -> None:
        time.sleep(0.3)
        ended.append(time.monotonic())

    async def main() -> float:
        task = asyncio.ensure_future(threads.run_sync(slow))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic()

    answered = asyncio.run(main())
    assert ended
    assert ended[0] <= answered


def test_a_call_cancelled_before_a_thread_took_it_never_runs() -> None:
    ran: list[int] = []
    release = threading.Event()

    async def main() -> None:
        busy = [
            asyncio.ensure_future(threads.run_sync(release.wait))
            for _ in range(threads.MAX_THREADS)
        ]
        await asyncio.sleep(0.1)  # every thread taken
        waiting = asyncio.ensure_future(threads.run_sync(ran.append, 1))
        await asyncio.sleep(0.05)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        release.set()
        await asyncio.gather(*busy)

    asyncio.run(main())
    time.sleep(0.1)
    assert ran == []


@pytest.mark.parametrize("limit", [1, 2])
def test_the_pool_runs_at_most_its_limit_at_once_in_order_of_arrival(
    monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    pool = threads.Pool(limit)
    monkeypatch.setattr(threads, "_pool", [pool])
    lock = threading.Lock()
    running: list[int] = []
    started: list[int] = []
    most = [0]

    def call(n: int) -> int:
        with lock:
            started.append(n)
            running.append(n)
            most[0] = max(most[0], len(running))
        time.sleep(0.02)
        with lock:
            running.remove(n)
        return n * n

    async def main() -> list[int]:
        return list(await asyncio.gather(*(threads.run_sync(call, n) for n in range(8))))

    try:
        assert asyncio.run(main()) == [n * n for n in range(8)]
    finally:
        pool.close()
    assert most[0] == limit
    assert len(pool._threads) == limit
    if limit == 1:  # one thread: the calls start exactly in the order they arrived
        assert started == list(range(8))


def test_work_started_and_taken_back_before_a_thread_took_it_never_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``threads.start`` (a stream's generator): taken back while it waits for a thread, it
    never runs; taken by a thread, it can no longer be taken back."""
    pool = threads.Pool(1)
    monkeypatch.setattr(threads, "_pool", [pool])
    release = threading.Event()
    ran: list[str] = []
    busy = threads.start(lambda: ran.append("busy") or release.wait(5) or None)
    waiting = threads.start(lambda: ran.append("waiting"))
    try:
        deadline = time.monotonic() + 5
        while not ran and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not busy.cancel()  # a thread has it
        assert waiting.cancel()
        release.set()
        last = threads.start(lambda: ran.append("last"))
        while len(ran) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not last.cancel()
    finally:
        release.set()
        pool.close()
    assert ran == ["busy", "last"]


def test_a_failing_job_does_not_end_its_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = threads.Pool(1)
    monkeypatch.setattr(threads, "_pool", [pool])
    reported: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: reported.append(args.exc_value))

    def fail() -> None:
        raise RuntimeError("from the job")

    threads.start(fail)

    async def main() -> int:
        return await threads.run_sync(lambda: 42)

    try:
        assert asyncio.run(main()) == 42  # the one thread still serves
    finally:
        pool.close()
    assert [str(e) for e in reported] == ["from the job"]
    assert len(pool._threads) == 1


def test_what_a_cancelled_call_raises_later_is_dropped_quietly(
    recwarn: pytest.WarningsRecorder,
) -> None:
    """The caller was answered with its cancellation; what the function raises once it
    returns has nobody to reach, and no future is left holding it unretrieved."""
    errors: list[object] = []

    def slow_failure() -> None:
        time.sleep(0.1)
        raise ValueError("late")

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: errors.append(ctx))
        task = asyncio.ensure_future(threads.run_sync(slow_failure))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.05)

    asyncio.run(main())
    assert errors == []
    assert not recwarn.list


# -- metrics ----------------------------------------------------------------------------------


def _normalised(text: bytes) -> list[str]:
    """The exposition's lines, creation times blanked (they differ by construction)."""
    lines = re.sub(rb"_created(\{[^}]*\})? \S+", rb"_created\1 T", text).decode().splitlines()
    return sorted(lines)


def test_the_plain_counts_expose_what_the_librarys_own_metrics_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One process counts in plain numbers; the exposition is line for line the one of
    ``prometheus-client``'s ``Counter`` and ``Histogram`` (what multiprocess mode uses)."""
    monkeypatch.delenv(metrics.MULTIPROCESS_ENV, raising=False)
    plain = metrics.Metrics()
    registry = CollectorRegistry(auto_describe=False)
    shared = metrics._Shared(registry)
    calls = [("add", "200", 0.001), ("add", "200", 0.3), ("add", "422", 0.0),
             ("peak", "200", 12.0), ("add", "200", 0.005), ("peak", "504", 10.0)]  # fmt: skip
    for capability, status, seconds in calls:
        plain.observe(capability, status, seconds)
        shared.observe(capability, status, seconds)
    plain.enter()
    plain.enter()
    plain.leave()
    shared.in_flight.inc()
    assert _normalised(generate_latest(plain.registry)) == _normalised(generate_latest(registry))
    assert b"svc_requests_in_flight 1.0" in generate_latest(plain.registry)


def test_created_series_follow_the_librarys_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(metrics.MULTIPROCESS_ENV, raising=False)
    monkeypatch.setenv("PROMETHEUS_DISABLE_CREATED_SERIES", "true")
    plain = metrics.Metrics()
    plain.observe("add", "200", 0.01)
    text = generate_latest(plain.registry)
    assert b"svc_requests_total" in text
    assert b"_created" not in text


# -- request ids ------------------------------------------------------------------------------


def test_request_ids_are_24_hex_digits_and_unique() -> None:
    ids = network.RequestIds()
    made = [ids.new() for _ in range(1000)]
    assert all(re.fullmatch(rb"[0-9a-f]{24}", i) for i in made)
    assert len(set(made)) == len(made)
    assert network.RequestIds().new()[:12] != made[0][:12]  # another process's prefix


def test_a_forked_child_draws_its_own_prefix() -> None:
    ids = network.RequestIds()
    mine = ids.new()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its id, then out at once
        os.write(write, ids.new())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64)
    os.close(read)
    os.waitpid(pid, 0)
    assert re.fullmatch(rb"[0-9a-f]{24}", child)
    assert child[:12] != mine[:12]


# -- the access line --------------------------------------------------------------------------


class _Writes(io.StringIO):
    """A stream that counts its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


def test_the_lines_of_one_loop_turn_are_written_together_at_its_end() -> None:
    stream = _Writes()
    handler = network.AccessLines(stream)

    async def main() -> None:
        for n in range(3):
            handler.write_line(f"line {n}")
        assert stream.getvalue() == ""
        await asyncio.sleep(0)
        assert stream.getvalue() == "line 0\nline 1\nline 2\n"
        assert stream.writes == 1
        handler.write_line("last")  # pending when the program ends: flush writes it

    asyncio.run(main())
    handler.flush()
    assert stream.getvalue().endswith("line 2\nlast\n")


def test_without_a_loop_a_line_is_written_at_once() -> None:
    stream = _Writes()
    network.AccessLines(stream).write_line("alone")
    assert stream.getvalue() == "alone\n"
