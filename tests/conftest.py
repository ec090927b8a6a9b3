import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# A runner started in the background of a non-interactive shell (`cmd &`, some CI harnesses)
# inherits SIGINT ignored, and so would every process the tests start: Ctrl-C tests would then
# test nothing. The suite runs with the interactive default, whatever launched it (children
# get SIG_DFL across exec, and Python turns that into KeyboardInterrupt).
signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def svcc_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """svcc's wheel built from the checkout once for the session (a few seconds each time):
    installed by ``wheel_venv`` and put in the plugin wheelhouse by ``install_plugin``.
    Read only: nobody writes into it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    from wheelenv import build_svcc_wheel

    return build_svcc_wheel(tmp_path_factory.mktemp("svcc-wheel"))


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory, svcc_wheel: Path) -> Path:
    """svcc's wheel installed into a fresh venv once for the session (a venv and a pip
    install each time cost about a minute in CI): the packaging test reads what landed in it
    and the plugin-fetch test runs its ``svcc`` (nothing writes into svcc's own files; the
    fetch test adds setuptools, which the packaging test does not look at)."""
    from wheelenv import install_wheel_venv

    return install_wheel_venv(tmp_path_factory.mktemp("wheel-venv"), svcc_wheel)
