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
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """svcc's wheel built and installed into a fresh venv once for the session (a wheel build,
    a venv and a pip install each time cost about a minute in CI): the packaging test reads
    what landed in it and the plugin-fetch test runs its ``svcc`` (nothing writes into svcc's
    own files; the fetch test adds setuptools, which the packaging test does not look at)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    from wheelenv import install_wheel_venv

    return install_wheel_venv(tmp_path_factory.mktemp("wheel-venv"))
