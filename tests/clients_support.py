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

# ``bru run`` as the tests call it (add ``--reporter-json FILE``, ``--env-var ...``).
# ``--sandbox developer``: bru 4.1.0's default "safe" sandbox evaluates each ``assert`` line
# with a QuickJS WebAssembly module that it starts loading at start-up and never awaits
# (``@usebruno/js/src/sandbox/quickjs/index.js``: ``executeQuickJsVm`` reads a module-level
# variable the load sets later). A response that arrives before the load has finished, as
# the first one on a loaded machine does, has ``res.status`` read as undefined: the
# assertion fails with "Error executing the script! TypeError: Cannot read properties of
# undefined (reading 'newContext')" on stderr while the server answered 200. The developer
# sandbox evaluates the same ``assert`` lines with Node's ``vm``, loaded synchronously. The
# exported collections hold no scripts, only ``assert`` lines, so the sandbox changes
# nothing they prove. ``BRU_LATE_QUICKJS`` keeps the tests on the race's losing side.
BRU_RUN = ("run", "-r", "--env", "local", "--sandbox", "developer")
# ``NODE_OPTIONS`` for bru that delays the QuickJS module's load (see BRU_RUN): with the
# safe sandbox every assertion then fails, so a test run with it cannot pass by luck.
BRU_LATE_QUICKJS = {"NODE_OPTIONS": f"--require {CLIENT_FIXTURES / 'late_quickjs.cjs'}"}


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
