"""Shared pieces of the client-collection tests: fixtures' sources, the npm tools."""

import shutil
from pathlib import Path

import pytest
from helpers import ROOT

CLIENT_FIXTURES = ROOT / "tests" / "fixtures" / "clients"
SHAPES = ROOT / "examples" / "shapes.py"
CATALOG = CLIENT_FIXTURES / "catalog.py"
NPM_DIR = ROOT / "tools" / "clients-npm"
FORMATS = ("postman", "bruno", "insomnia", "http")


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
