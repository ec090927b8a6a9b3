import signal
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

_TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(_TESTS))
# The tests mirror the source tree (tests/frontends/, tests/runtime/, ...); a test module that
# reuses another's fixtures or helpers imports it by its plain name, wherever it lives.
# Not tests/plugins/: it also holds the sample plug-in project, whose folder would shadow the
# installed package of the same name (and nothing imports the plug-in tests).
sys.path.extend(
    sorted(str(d) for d in _TESTS.iterdir() if d.name != "plugins" and any(d.glob("test_*.py")))
)

# A runner started in the background of a non-interactive shell (`cmd &`, some CI harnesses)
# inherits SIGINT ignored, and so would every process the tests start: Ctrl-C tests would then
# test nothing. The suite runs with the interactive default, whatever launched it (children
# get SIG_DFL across exec, and Python turns that into KeyboardInterrupt).
signal.signal(signal.SIGINT, signal.default_int_handler)


def _wheelenv() -> Any:
    """``tools/wheelenv.py``, importable from the first test that needs it on."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import wheelenv

    return wheelenv


class WheelVenv:
    """svcc's wheel and the venv it is installed into, made in a thread of their own from
    the session's first test on: a wheel build, a venv and a pip install are about a
    minute in CI, mostly subprocesses waiting on pip, and nothing needs them before the
    packaging tests. Only their own files are written (absolute paths, output captured)."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.tools = _wheelenv()
        self.wheel: Future[Path] = Future()
        wheel_dir, venv_dir = factory.mktemp("svcc-wheel"), factory.mktemp("wheel-venv")
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.venv = self.pool.submit(self._make, wheel_dir, venv_dir)

    def _make(self, wheel_dir: Path, venv_dir: Path) -> Path:
        try:
            wheel: Path = self.tools.build_svcc_wheel(wheel_dir)
        except BaseException as exc:
            self.wheel.set_exception(exc)
            raise
        self.wheel.set_result(wheel)
        venv: Path = self.tools.install_wheel_venv(venv_dir, wheel)
        return venv


@pytest.fixture(scope="session", autouse=True)
def wheel_venv_started(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[WheelVenv | None]:
    """Started when a test of the session uses ``wheel_venv``; waited for at the end."""
    if not any("wheel_venv" in item.fixturenames for item in request.session.items):
        yield None
        return
    started = WheelVenv(tmp_path_factory)
    try:
        yield started
    finally:
        started.pool.shutdown(wait=True)


@pytest.fixture(scope="session")
def svcc_wheel(
    tmp_path_factory: pytest.TempPathFactory, wheel_venv_started: WheelVenv | None
) -> Path:
    """svcc's wheel built from the checkout once for the session (a few seconds each time):
    installed by ``wheel_venv`` and put in the plugin wheelhouse by ``install_plugin``.
    Read only: nobody writes into it."""
    if wheel_venv_started is not None:
        return wheel_venv_started.wheel.result()
    wheel: Path = _wheelenv().build_svcc_wheel(tmp_path_factory.mktemp("svcc-wheel"))
    return wheel


@pytest.fixture(scope="session")
def wheel_venv(wheel_venv_started: WheelVenv | None) -> Path:
    """svcc's wheel installed into a fresh venv once for the session (a venv and a pip
    install each time cost about a minute in CI): the packaging test reads what landed in it
    and the plugin-fetch test runs its ``svcc`` (nothing writes into svcc's own files; the
    fetch test adds setuptools, which the packaging test does not look at)."""
    assert wheel_venv_started is not None  # a test using this fixture started it
    return wheel_venv_started.venv.result()
