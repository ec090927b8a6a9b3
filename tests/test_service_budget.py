"""``svcc.service.budget.run_within``: real forks, real rlimits, real signals."""

import os
import time
from pathlib import Path

import pytest
from svcc.compiler.errors import InputError
from svcc.service.budget import Budget, OverBudget, run_within

MIB = 1024 * 1024


def test_result_and_exceptions_cross_back() -> None:
    budget = Budget(memory_bytes=256 * MIB, seconds=10)
    assert run_within(budget, lambda: {"pid": os.getpid()})["pid"] != os.getpid()

    def fails() -> None:
        raise InputError("x.py:1:1: bad")

    with pytest.raises(InputError, match="bad"):
        run_within(budget, fails)


def test_memory_budget() -> None:
    def hog() -> int:
        return len(bytearray(512 * MIB))

    with pytest.raises(OverBudget, match="128 MiB of memory"):
        run_within(Budget(memory_bytes=128 * MIB, seconds=20), hog)
    assert run_within(Budget(memory_bytes=1024 * MIB, seconds=20), hog) == 512 * MIB


def test_cpu_budget() -> None:
    def spin() -> None:
        while True:
            pass

    started = time.monotonic()
    with pytest.raises(OverBudget, match="1 seconds"):
        run_within(Budget(seconds=1), spin)
    assert time.monotonic() - started < 30  # ended by the budget, not by the test's timeout


def test_wall_clock_budget_kills_the_whole_group(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"

    def sleeper() -> None:
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        marker.write_text(str(pid))
        time.sleep(60)

    with pytest.raises(OverBudget, match="took longer than 1 seconds"):
        run_within(Budget(seconds=1), sleeper)
    grandchild = int(marker.read_text())
    for _ in range(100):  # reaped by init once killed; gone from the process table
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{grandchild}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail("the grandchild outlived the budget")
