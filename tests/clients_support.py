"""Shared pieces of the client-collection tests: fixtures' sources, the npm tools."""

import shutil
from pathlib import Path

import pytest
from helpers import ROOT, run_svcc

CLIENT_FIXTURES = ROOT / "tests" / "fixtures" / "clients"
SHAPES = ROOT / "examples" / "shapes.py"
CATALOG = CLIENT_FIXTURES / "catalog.py"
SHOP_REPO = CLIENT_FIXTURES / "shop_repo"  # a repository: routes named shop.pricing.total
NPM_DIR = ROOT / "tools" / "clients-npm"
FORMATS = ("postman", "bruno", "insomnia", "http")


def build_rest_bundle(source: Path, out: Path, *args: str) -> Path:
    """A REST bundle from a file (``generate rest``) or a repository (``compile DIR``)."""
    command = (
        ["compile", str(source), "--target", "rest"]
        if source.is_dir()
        else ["generate", "rest", str(source)]
    )
    proc = run_svcc(*command, "--output-dir", str(out), "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return out


def npm_tool(name: str) -> Path:
    """``tools/clients-npm/node_modules/.bin/<name>``, or skip with the reason and the fix."""
    if shutil.which("node") is None:
        pytest.skip(f"{name}: Node.js is not installed (apt-get install nodejs npm)")
    path = NPM_DIR / "node_modules" / ".bin" / name
    if not path.exists():
        pytest.skip(
            f"{name} is not installed: run `npm ci` inside tools/clients-npm (.ci/run does)"
        )
    return path
