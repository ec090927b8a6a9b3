"""ruff (lint and format) and mypy --strict are part of the suite, not a suggestion."""

import subprocess
import sys

import pytest
from helpers import ROOT


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_check() -> None:
    proc = run(sys.executable, "-m", "ruff", "check", ".")
    assert proc.returncode == 0, proc.stdout


def test_ruff_format() -> None:
    proc = run(sys.executable, "-m", "ruff", "format", "--check", ".")
    assert proc.returncode == 0, proc.stdout


@pytest.mark.slow
def test_mypy_strict() -> None:
    proc = run(sys.executable, "tools/typecheck.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
