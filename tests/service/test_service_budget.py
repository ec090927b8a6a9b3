"""``svcc.service.budget.Sandbox``: real forks, real rlimits, real signals."""

import os
import time
from pathlib import Path

import pytest
from svcc.contracts.errors import InputError
from svcc.service.budget import Budget, OverBudget, Sandbox

MIB = 1024 * 1024


def pid() -> int:
    return os.getpid()


def fails() -> None:
    raise InputError("x.py:1:1: bad")


def hog(mib: int) -> int:
    return len(bytearray(mib * MIB))


def burn(seconds: float) -> float:
    started = time.process_time()
    while time.process_time() - started < seconds:
        pass
    return time.process_time() - started


def spin() -> None:
    while True:
        pass


def sleeper(marker: Path) -> None:
    child = os.fork()
    if child == 0:
        time.sleep(60)
        os._exit(0)
    marker.write_text(str(child))
    time.sleep(60)


def test_one_child_serves_calls_and_exceptions_cross_back() -> None:
    sandbox = Sandbox(Budget(memory_bytes=256 * MIB, seconds=10))
    try:
        first = sandbox.run(pid)
        assert first != os.getpid()
        assert sandbox.run(pid) == first  # forked once, not per call
        with pytest.raises(InputError, match="bad"):
            sandbox.run(fails)
        assert sandbox.run(pid) == first  # an ordinary exception does not cost the child
    finally:
        sandbox.stop()


def test_memory_budget_and_a_fresh_child_after_it() -> None:
    sandbox = Sandbox(Budget(memory_bytes=128 * MIB, seconds=20))
    try:
        before = sandbox.run(pid)
        with pytest.raises(OverBudget, match="128 MiB of memory"):
            sandbox.run(hog, 512)
        assert sandbox.run(pid) != before  # replaced: the next call has the whole budget
        assert sandbox.run(hog, 64) == 64 * MIB
    finally:
        sandbox.stop()


def test_cpu_budget_is_per_call() -> None:
    sandbox = Sandbox(Budget(seconds=1, wall_seconds=60))
    try:
        first = sandbox.run(pid)
        for _ in range(3):  # 3 x 0.8 s of CPU in one child: each call has its own second
            assert sandbox.run(burn, 0.8) >= 0.8
        assert sandbox.run(pid) == first
        started = time.monotonic()
        with pytest.raises(OverBudget, match="more than 1 seconds of CPU"):
            sandbox.run(spin)
        assert time.monotonic() - started < 30  # ended by the budget, not the test's timeout
    finally:
        sandbox.stop()


def test_wall_clock_budget_kills_the_whole_group(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"
    sandbox = Sandbox(Budget(seconds=10, wall_seconds=1))
    with pytest.raises(OverBudget, match="took longer than 1 seconds"):
        sandbox.run(sleeper, marker)
    grandchild = int(marker.read_text())
    for _ in range(100):  # killed with the group, then reaped by init
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{grandchild}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail("the grandchild outlived the budget")
