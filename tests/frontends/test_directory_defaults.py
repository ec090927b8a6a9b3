"""What a directory is (issue 37 item 6): test code and packaging or tool scripts are left
out of ``inspect DIR`` and ``compile DIR`` by default, listed once, and read when asked."""

import json
from pathlib import Path

import pytest
from helpers import run_svcc
from svcc.frontends.repository import read_tree

FILES = {
    "lib/__init__.py": "",
    "lib/core.py": "def area(x: int) -> int:\n    return x\n",
    "lib/core_test.py": "def test_area() -> None:\n    assert True\n",
    "tests/__init__.py": "",
    "tests/test_core.py": "def test_one() -> None:\n    assert True\n",
    "test/helpers.py": "def make() -> int:\n    return 1\n",
    "test_top.py": "def test_top() -> None:\n    pass\n",
    "conftest.py": "import pytest\n",
    "setup.py": "from setuptools import setup\nsetup(name='lib')\n",
    "noxfile.py": "import nox\n",
    "docs/conf.py": "project = 'lib'\n",
}


def project(root: Path, pyproject: str = "") -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if pyproject:
        (root / "pyproject.toml").write_text(pyproject)
    return root


def test_test_code_is_left_out_and_listed_once(tmp_path: Path) -> None:
    tree = read_tree(project(tmp_path))
    assert sorted(f.path for f in tree.files) == ["lib/__init__.py", "lib/core.py"]
    notes = [d for d in tree.diagnostics if d.code == "SVC-F037"]
    assert len(notes) == 1
    for shown in ("tests/", "test/", "test_top.py", "conftest.py", "setup.py", "noxfile.py",
                  "docs/conf.py", "lib/core_test.py"):  # fmt: skip
        assert shown in notes[0].message
    proc = run_svcc("inspect", str(tmp_path), "--format", "json")
    document = json.loads(proc.stdout)
    assert sorted(document["files"]) == ["lib/__init__.py", "lib/core.py"]
    assert [d["code"] for d in document["diagnostics"]] == ["SVC-F037"]
    text = run_svcc("inspect", str(tmp_path), "--format", "text")
    assert text.stdout.count("SVC-F037") == 1


@pytest.mark.parametrize("how", ["flag", "pyproject"])
def test_test_code_is_read_when_asked(tmp_path: Path, how: str) -> None:
    pyproject = "[tool.svcc]\ninclude-tests = true\n" if how == "pyproject" else ""
    project(tmp_path, pyproject)
    flags = ["--include-tests"] if how == "flag" else []
    document = json.loads(run_svcc("inspect", str(tmp_path), "--format", "json", *flags).stdout)
    assert "tests/test_core.py" in document["files"]
    assert "setup.py" in document["files"]
    assert not [d for d in document["diagnostics"] if d["code"] == "SVC-F037"]


def test_compile_dir_serves_the_library_only(tmp_path: Path) -> None:
    project(tmp_path)
    out = tmp_path / "out"
    proc = run_svcc("compile", str(tmp_path), "--target", "rest", "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    operations = json.loads((out / "openapi.json").read_text())["paths"]
    served = [p for p in operations if p.startswith("/capabilities/")]
    assert len(served) == 1
    assert "area" in served[0]


def test_a_bad_include_tests_value_is_one_line(tmp_path: Path) -> None:
    project(tmp_path, '[tool.svcc]\ninclude-tests = "yes"\n')
    proc = run_svcc("inspect", str(tmp_path), "--format", "json")
    assert proc.returncode == 2
    assert "include-tests must be true or false" in proc.stderr
