"""The pre-commit hook (``.pre-commit-hooks.yaml``): its entry command, run as pre-commit
runs it (in the repository's root, no file names), passes while the functions of
``[tool.svcc] select`` are eligible and fails once one is not."""

import shlex
import subprocess
from pathlib import Path

import yaml
from helpers import BIN, ROOT

HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())

PYPROJECT = """\
[project]
name = "shop"
version = "0.1"

[tool.svcc]
source-roots = ["src"]
select = ["shop.pricing.total"]
"""

PRICING = """\
def total(quantity: int, price: float) -> float:
    return quantity * price
"""


def run_hook(repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    (hook,) = HOOKS
    program, *args = shlex.split(hook["entry"])
    return subprocess.run(
        [str(BIN / program), *args, *extra],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def project(tmp_path: Path) -> Path:
    repo = tmp_path / "shop"
    (repo / "src" / "shop").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "src" / "shop" / "__init__.py").write_text("")
    (repo / "src" / "shop" / "pricing.py").write_text(PRICING)
    (repo / "src" / "shop" / "report.py").write_text('print("a script beside it")\n')
    return repo


def test_the_hook_is_declared_for_pre_commit() -> None:
    (hook,) = HOOKS
    assert hook["id"] == "svcc-check"
    assert hook["entry"] == "svcc check"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False  # the whole project is judged, not the files


def test_passes_while_the_selection_is_eligible(tmp_path: Path) -> None:
    repo = project(tmp_path)
    proc = run_hook(repo)
    assert proc.returncode == 0, proc.stderr
    assert "1 selected, all eligible: python:shop.pricing:total" in proc.stdout


def test_fails_when_a_selected_function_is_no_longer_eligible(tmp_path: Path) -> None:
    repo = project(tmp_path)
    (repo / "src" / "shop" / "pricing.py").write_text('print("loaded")\n' + PRICING)
    proc = run_hook(repo)
    assert proc.returncode == 1
    assert "shop.pricing.total is conditional" in proc.stderr
    assert "SVC-R028" in proc.stderr


def test_an_unknown_or_missing_selection_is_an_input_error(tmp_path: Path) -> None:
    repo = project(tmp_path)
    (repo / "pyproject.toml").write_text(
        PYPROJECT.replace("shop.pricing.total", "shop.pricing.sum")
    )
    proc = run_hook(repo)
    assert proc.returncode == 2
    assert "unknown selection 'shop.pricing.sum'" in proc.stderr
    (repo / "pyproject.toml").write_text(PYPROJECT.replace('select = ["shop.pricing.total"]\n', ""))
    proc = run_hook(repo)
    assert proc.returncode == 2
    assert "nothing selected: set [tool.svcc] select" in proc.stderr
    # --select names them when the project does not
    assert run_hook(repo, "--select", "shop.pricing.total").returncode == 0
