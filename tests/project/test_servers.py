"""The servers the tests start end with the test session, however it ends: a session killed
with SIGKILL runs no teardown, and a uvicorn or gunicorn left behind holds its port and its
memory on a shared machine (one was found alive long after a killed run)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import ROOT
from servers import generate

TESTS = Path(__file__).resolve().parents[1]

# A stand-in for a test session: starts a bundle under uvicorn and the analysis service under
# gunicorn through the helpers every test uses, prints their pids, and waits to be killed.
SESSION = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from servers import running_service, serving
with serving(Path(sys.argv[2])) as server, running_service(Path(sys.argv[3])) as (_, master):
    print(server.proc.pid, master, flush=True)
    time.sleep(600)
"""


def gone(pid: int) -> bool:
    """Ended: no such process, or a zombie (reaped by whichever process adopted it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def test_servers_end_when_the_session_is_killed(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    generate(ROOT / "examples" / "shapes.py", bundle)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = subprocess.Popen(
        [sys.executable, "-c", SESSION, str(TESTS), str(bundle), str(workspace)],
        stdout=subprocess.PIPE,
        text=True,
    )
    servers: list[int] = []
    try:
        assert session.stdout is not None
        servers = [int(pid) for pid in session.stdout.readline().split()]
        assert len(servers) == 2, "the session did not start its servers"
        workers = children(servers[1])  # gunicorn's
        assert workers
        assert not any(gone(pid) for pid in servers + workers)
    finally:
        session.kill()  # no teardown, no finally in the session
        session.wait()
    deadline = time.monotonic() + 30
    while not all(gone(pid) for pid in servers + workers):
        if time.monotonic() > deadline:
            for pid in servers:
                os.kill(pid, signal.SIGKILL)
            pytest.fail("a server outlived the killed session")
        time.sleep(0.05)
