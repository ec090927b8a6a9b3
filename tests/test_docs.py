"""The manual (``docs/``, ``mkdocs.yml``): built strictly, its generated pages equal to what
they are generated from, and what it says about the runtime equal to what the runtime reads."""

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import BIN, ROOT

DOCS = ROOT / "docs"


def _mkdocs() -> str | None:
    """The ``mkdocs`` of this venv (the ``docs`` extra), else one on PATH."""
    local = BIN / "mkdocs"
    return str(local) if local.exists() else shutil.which("mkdocs")


def test_the_manual_builds_strictly(tmp_path: Path) -> None:
    """No broken link or anchor, no page left out of the nav (mkdocs.yml's validation)."""
    mkdocs = _mkdocs()
    if mkdocs is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs and mkdocs-material are not installed: pip install -e '.[docs]'")
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": str(BIN), "NO_MKDOCS_2_WARNING": "1", "HOME": str(tmp_path)},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def _generated_cli_reference() -> str:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_cli_reference.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def test_the_cli_reference_is_the_parser() -> None:
    """A flag added or a help text changed without the page: regenerate it."""
    assert (DOCS / "reference" / "cli.md").read_text() == _generated_cli_reference(), (
        "regenerate: python tools/gen_cli_reference.py > docs/reference/cli.md"
    )


# Read by the runtime but internal to it (the server tells its own helper its pid).
INTERNAL_VARIABLES = {"SVC_PREVALIDATE_PARENT"}


def test_every_server_variable_is_documented() -> None:
    read = set()
    for path in (ROOT / "runtime").rglob("*.py"):
        read |= set(re.findall(r"[\"']((?:SVC|PROMETHEUS)_[A-Z_]+)[\"']", path.read_text()))
    page = (DOCS / "reference" / "environment.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z_]+)`", page, flags=re.M))
    assert read - INTERNAL_VARIABLES <= documented
