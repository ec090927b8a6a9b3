"""Nothing a command of svcc starts outlives it: the helpers it runs (pip) and the temporary
folders they work in, whether the command is stopped with SIGTERM, SIGINT or SIGKILL.

pip is held mid-run by an index that accepts the connection and never answers; every test
runs svcc with a private ``TMPDIR`` and expects it empty afterwards (pip's own folders
included), and every descendant seen while svcc ran gone.
"""

import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import ROOT, SVCC
from test_process_lifetime import (
    SIGNALS,
    cmdline,
    descendants,
    gone,
    running_below,
    stop,
    survivors,
)


@pytest.fixture
def silent_index() -> Iterator[str]:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        yield f"http://127.0.0.1:{silent.getsockname()[1]}/simple"


def stopped_mid_pip(
    argv: list[str],
    tmp: Path,
    signum: int,
    staging: Path | None = None,
    *,
    marker: bytes = b"-m\0pip\0",
) -> tuple[set[int], list[Path]]:
    """Run ``svcc argv`` until a process whose command line holds ``marker`` runs (pip),
    stop it with ``signum``; what survives of it: its processes (listed again just before
    the signal, so what pip started meanwhile counts), and what is left in its ``TMPDIR``
    and in ``staging``."""
    private = tmp / "tmp"
    private.mkdir()
    folders = [private] if staging is None else [private, staging]
    env = {**os.environ, "TMPDIR": str(private), "PIP_CONFIG_FILE": os.devnull,
           "PIP_TIMEOUT": "120", "PIP_RETRIES": "0"}  # fmt: skip
    proc = subprocess.Popen(
        [SVCC, *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    started: set[int] = set()
    try:
        started = running_below(proc, marker, 120)
        assert any(list(folder.iterdir()) for folder in folders)
    finally:
        started |= descendants(proc.pid)
        stop(proc, signum)
    return survivors(started), gone({path for folder in folders for path in folder.iterdir()})


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_lock_leaves_no_pip_and_no_folder(tmp_path: Path, silent_index: str, signum: int) -> None:
    """``svcc lock`` stopped while pip downloads: pip went on (reparented to init, still
    waiting on the index) and ``svcc-lock-*`` stayed in ``$TMPDIR`` with pip's own folders,
    after SIGTERM as after SIGKILL."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "m.py").write_text("def f(x: int) -> int:\n    return x\n")
    (repo / "pyproject.toml").write_text('[project]\nname = "m"\nversion = "0"\n'
                                         'dependencies = ["numpy"]\n')  # fmt: skip
    argv = ["lock", str(repo), "--platform", "linux/amd64", "--python", "3.12",
            "--wheelhouse", str(tmp_path / "wh"), "--output", str(tmp_path / "lock.txt"),
            "--index-url", silent_index]  # fmt: skip
    # pip runs as ``python -c <script> download ...`` (images/pip_download.py: under an audit
    # hook that refuses any new process, so it cannot build)
    assert stopped_mid_pip(argv, tmp_path, signum, marker=b"\0download\0") == (set(), [])


def _fetch_argv(tmp_path: Path, silent_index: str) -> list[str]:
    """``plugins fetch`` of a copy of the extension (a build killed in it must not touch
    the checkout's own ``build/``)."""
    import shutil

    source = tmp_path / "svc-oci"
    shutil.copytree(ROOT / "extensions" / "svc-oci", source,
                    ignore=shutil.ignore_patterns("build", "*.egg-info"))  # fmt: skip
    return ["plugins", "fetch", "svc-oci", "--source", str(source), "--wheelhouse",
            str(tmp_path / "wh"), "--output", str(tmp_path / "lock.txt"),
            "--index-url", silent_index]  # fmt: skip


def test_plugin_fetch_leaves_no_pip_and_no_folder(tmp_path: Path, silent_index: str) -> None:
    """``svcc plugins fetch`` killed while pip downloads the extension's dependencies: pip
    and the ``svcc-fetch-*`` folder (the built wheels, pip's own folders) stayed."""
    argv = _fetch_argv(tmp_path, silent_index)
    assert stopped_mid_pip(argv, tmp_path, signal.SIGKILL, marker=b"download\0") == (set(), [])


GRANDCHILD = "import time; time.sleep(120)"
STARTS_A_GRANDCHILD = f"""
import sys
from svcc.contracts.watch import run_watched
grandchild = [sys.executable, "-c", {GRANDCHILD!r}]
child = f"import subprocess; subprocess.run({{grandchild!r}})"
# a build backend's shape: the command (pip) runs the work in a child of its own
run_watched([sys.executable, "-c", child], timeout=300)
"""


def test_what_a_watched_command_starts_ends_with_svcc(tmp_path: Path) -> None:
    """pip runs setuptools in a child of its own: the parent-death signal set on pip does
    not reach it, and a killed ``plugins fetch`` left it writing in the source tree. A
    command under ``run_watched`` (every pip svcc runs) ends with svcc with all it started,
    SIGKILL included."""
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-c", STARTS_A_GRANDCHILD], stdout=subprocess.PIPE, text=True
    )
    started: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while not any(cmdline(p).endswith(f"{GRANDCHILD}\0".encode()) for p in started):
            assert time.monotonic() < deadline, "nothing started"
            assert proc.poll() is None, "nothing started"
            started = descendants(proc.pid)
            time.sleep(0.05)
    finally:
        started |= descendants(proc.pid)
        stop(proc, signal.SIGKILL)
    assert len(started) >= 3  # the watcher, the command (pip), its child (the backend)
    assert survivors(started, 5) == set()


FORKS_THEN_DIES = """
import os, signal, sys, time
from svcc.contracts.watch import private_directory
with private_directory("svcc-test-") as folder:
    if os.fork() == 0:  # a forked helper that outlives this process (no parent-death signal)
        time.sleep(120)
        os._exit(0)
    print(folder, flush=True)
    sys.stdin.read()
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_forked_child_does_not_hold_a_private_directory(tmp_path: Path) -> None:
    """The remover acts when the last write end of its pipe closes: a child forked inside
    the block must not keep one, or the folder stays as long as that child runs."""
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", FORKS_THEN_DIES],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    folder = Path(proc.stdout.readline().decode().strip())
    started = descendants(proc.pid)
    try:
        assert folder.is_dir()
        proc.stdin.close()
        proc.wait()
        assert gone({folder}, seconds=20) == []
    finally:
        for pid in started:  # the forked child, which sleeps on
            if b"forked helper" in cmdline(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    assert survivors(started) == set()
