"""``svcc plugins fetch svc-oci`` from an svcc installed as a user installs it (from its wheel,
not a checkout): svcc's own wheel is repacked from the installed files, the extension's is
built from ``--source``, and what it prints installs offline and runs.

The dependencies come from the OCI stack's plugin wheelhouse (skipped, with the command,
without it), so nothing is downloaded; pip's configuration on this machine is switched off.
"""

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT
from oci_support import state_dir

pytestmark = pytest.mark.slow


def test_fetch_from_a_wheel_install_gives_what_install_takes(
    tmp_path: Path, wheel_venv: Path
) -> None:
    plugin_wheels = state_dir() / "wheelhouse" / "plugin"
    if not plugin_wheels.is_dir():
        pytest.skip(
            f"no plugin wheelhouse in {state_dir()}: run `.ci/oci/wheelhouse.sh {state_dir()}`"
        )
    venv = wheel_venv
    svcc = str(venv / "bin" / "svcc")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    # setuptools for building the extension's wheel, as a user building from source has it
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index",
         "--find-links", str(plugin_wheels), "--upgrade", "setuptools>=77"],
        check=True, capture_output=True, env=env,
    )  # fmt: skip
    fetched = subprocess.run(
        [svcc, "plugins", "fetch", "svc-oci", "--source", str(ROOT / "extensions" / "svc-oci"),
         "--wheelhouse", str(tmp_path / "wheels"), "--output", str(tmp_path / "plugin.lock"),
         "--no-index", "--find-links", str(plugin_wheels)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr
    info = json.loads(fetched.stdout)
    lock = (tmp_path / "plugin.lock").read_text()
    assert "svcc==0.1.0 --hash=sha256:" in lock
    assert "svc-oci" not in lock  # the extension itself is installed by --sha256
    (own,) = (tmp_path / "wheels").glob("svcc-*.whl")
    with zipfile.ZipFile(own) as archive:
        names = archive.namelist()
    assert "svcc/cli/main.py" in names
    assert "svcc-0.1.0.dist-info/entry_points.txt" in names
    assert not [n for n in names if n.endswith((".pyc", "direct_url.json", "INSTALLER"))]
    assert info["install"].startswith(f"svcc plugins install {info['wheel']} --sha256 ")
    installed = subprocess.run(
        [svcc, "plugins", "install", info["wheel"], "--sha256", info["sha256"],
         "--requirements", info["requirements"], "--wheelhouse", info["wheelhouse"],
         "--plugins-dir", str(tmp_path / "plugins")],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert json.loads(installed.stdout)["name"] == "svc-oci"
    # the extension's environment imports the repacked svcc
    python = next((tmp_path / "plugins" / "svc-oci").glob("*/venv/bin/python"))
    probe = subprocess.run(
        [str(python), "-I", "-c", "import svc_oci.build, svcc.images.lockfile"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    # the same installation fetched again: the same svcc wheel (repacking is deterministic)
    again = subprocess.run(
        [svcc, "plugins", "fetch", "svc-oci", "--source", str(ROOT / "extensions" / "svc-oci"),
         "--wheelhouse", str(tmp_path / "wheels2"), "--output", str(tmp_path / "again.lock"),
         "--no-index", "--find-links", str(plugin_wheels)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    lines = lock.splitlines()
    assert [x for x in lines if x.startswith("svcc==")] == [
        x for x in (tmp_path / "again.lock").read_text().splitlines() if x.startswith("svcc==")
    ]
