"""Build svcc's wheel and install it into a fresh venv: svcc as a user installs it.

Shared by the tests (one wheel a session: what lands in site-packages, the plugin tests'
wheelhouse) and the benchmarks (startup of a real install, without the editable-install
import hook).
"""

import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_svcc_wheel(out: Path) -> Path:
    """svcc's wheel built from the checkout into ``out`` (offline, no build isolation)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("svcc-*.whl")
    return wheel


def install_wheel_venv(workdir: Path, wheel: Path | None = None) -> Path:
    """Return the new venv's directory (``bin/python``, ``bin/svcc``, ``bin/svc``), with
    ``wheel`` installed (built into ``workdir/dist`` when not given)."""
    if wheel is None:
        wheel = build_svcc_wheel(workdir / "dist")
    env_dir = workdir / "venv"
    venv.create(env_dir, with_pip=True)
    subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    return env_dir
