"""Build svcc's wheel and install it into a fresh venv: svcc as a user installs it.

Shared by the packaging test (what lands in site-packages) and the benchmarks (startup of
a real install, without the editable-install import hook).
"""

import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def install_wheel_venv(workdir: Path) -> Path:
    """Return the new venv's directory (``bin/python``, ``bin/svcc``, ``bin/svc``)."""
    dist = workdir / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(dist),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("svcc-*.whl")
    env_dir = workdir / "venv"
    venv.create(env_dir, with_pip=True)
    subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    return env_dir
