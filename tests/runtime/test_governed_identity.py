"""Governed local-process workers and the identity they run as: a ``worker_user`` that cannot
read the interpreter's directory still runs calls (what a call needs is imported before the
privilege drop), and is named at startup; a root server with no ``worker_user`` says in one
warning line that its workers run as root."""

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from servers import Server, generate, private_interpreter, serving

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "hostile"
AS_ROOT = os.geteuid() == 0
LIMITS = {"wall_time_ms": 4000, "max_input_bytes": 10_000, "max_output_bytes": 10_000}

pytestmark = pytest.mark.skipif(not AS_ROOT, reason="worker_user needs a root server")


def governed(policy: dict[str, object], *, unreadable_python: bool = False) -> Iterator[Server]:
    # Outside pytest's private temporary root: the worker user must reach the bundle.
    tmp = Path(tempfile.mkdtemp(prefix="svcc-identity-"))
    os.chmod(tmp, 0o755)
    private = Path(tempfile.mkdtemp(prefix="svcc-python-"))
    try:
        python = private_interpreter(private) if unreadable_python else sys.executable
        (tmp / "policy.json").write_text(json.dumps(policy))
        out = tmp / "rest"
        generate(FIXTURE / "json_values.py", out, "--execution-policy", str(tmp / "policy.json"))
        with serving(out, python=python) as server:
            yield server
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(private, ignore_errors=True)


@pytest.fixture(scope="module")
def as_nobody() -> Iterator[Server]:
    yield from governed({"limits": LIMITS, "worker_user": "nobody"}, unreadable_python=True)


@pytest.fixture(scope="module")
def as_root() -> Iterator[Server]:
    yield from governed({"limits": LIMITS})


def test_calls_run_as_nobody_under_an_unreadable_interpreter(as_nobody: Server) -> None:
    # The server runs on a private_interpreter (its standard library below a 0700 directory),
    # wherever the suite's own interpreter lives: never skipped on a root machine.
    answer = httpx.post(f"{as_nobody.url}/capabilities/kind", json={"value": [1]}, timeout=30)
    assert answer.status_code == 200, as_nobody.log_text()[-2000:]
    assert answer.json() == "list:[1]"
    assert "cannot read" in as_nobody.log_text()  # named at startup, one line


def test_root_without_worker_user_warns_once(as_root: Server) -> None:
    assert httpx.post(f"{as_root.url}/capabilities/kind", json={"value": 1}).status_code == 200
    lines = [line for line in as_root.log_text().splitlines() if "worker_user" in line]
    assert len(lines) == 1, lines
    assert "root" in lines[0]
