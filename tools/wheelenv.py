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


def build_svcc_wheel(out: Path, root: Path = ROOT) -> Path:
    """svcc's wheel built from the checkout (or another source tree) into ``out`` (offline,
    no build isolation)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(root),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("svcc-*.whl")
    return wheel


def source_at(ref: str, target: Path) -> Path:
    """The checkout's tree at git ``ref`` (a commit, a branch), written to ``target``: what a
    benchmark builds its baseline from."""
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def install_ref_venv(workdir: Path, ref: str) -> Path:
    """Like :func:`install_wheel_venv`, with svcc built from git ``ref`` (in ``workdir``)."""
    source = source_at(ref, workdir / "src")
    return install_wheel_venv(workdir, build_svcc_wheel(workdir / "dist", source))


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
