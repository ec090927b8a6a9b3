"""The ``svcc`` command as users run it: real processes, exit codes, stdout/stderr."""

import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import BIN, GOLDEN, ROOT, run_svcc

import svcc

EXAMPLE = ROOT / "examples" / "shapes.py"


def test_both_console_scripts_are_the_same_entry_point() -> None:
    for name in ("svcc", "svc"):
        proc = subprocess.run(
            [str(BIN / name), "--version"], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0
        assert proc.stdout == f"svcc {svcc.__version__}\n"
    module = subprocess.run(
        [sys.executable, "-m", "svcc", "--version"], capture_output=True, text=True, check=False
    )
    assert module.stdout == f"svcc {svcc.__version__}\n"


def test_inspect_text_table() -> None:
    proc = run_svcc("inspect", str(EXAMPLE), "--format", "text")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("shapes.py (module shapes): 4 capabilities")
    assert "NAME" in lines[1]
    assert "CLASS" in lines[1]
    assert "REASONS" in lines[1]
    assert any(
        ln.split()[:2] == ["describe", "eligible"] and "SVC-R004" in ln and "line 29" in ln
        for ln in lines
    )
    assert "\033[" not in proc.stdout  # no colour when stdout is not a terminal


def test_inspect_json_is_the_readiness_document() -> None:
    proc = run_svcc("inspect", str(EXAMPLE), "--format", "json")
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "svc.readiness/v1"
    assert doc["ir_digest"].startswith("sha256:")
    assert len(doc["ir_digest"]) == 71
    assert [a["name"] for a in doc["assessments"]] == [
        "circle_area",
        "rectangle_area",
        "scale",
        "describe",
    ]
    assert all(a["can_generate_interface"] for a in doc["assessments"])


def test_inspect_ir_and_its_digest() -> None:
    ir = run_svcc("inspect", str(EXAMPLE), "--ir")
    doc = json.loads(run_svcc("inspect", str(EXAMPLE), "--format", "json").stdout)
    import hashlib

    assert ir.stdout.endswith("\n")
    assert "\n" not in ir.stdout[:-1]
    assert doc["ir_digest"] == "sha256:" + hashlib.sha256(ir.stdout.encode()).hexdigest()
    assert json.loads(ir.stdout)["schema"] == "svc.capability-ir/v1"


def test_module_name_option_sets_ids(tmp_path: Path) -> None:
    proc = run_svcc("inspect", str(EXAMPLE), "--format", "json", "--module-name", "geo.shapes")
    assert json.loads(proc.stdout)["assessments"][0]["capability_id"] == (
        "python:geo.shapes:circle_area"
    )


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("1abc", "not a Python identifier"),
        ("a..b", "not a Python identifier"),
        ("class", "not a Python identifier"),
    ],
)
def test_module_name_refusals(name: str, fragment: str) -> None:
    proc = run_svcc("inspect", str(EXAMPLE), "--module-name", name)
    assert proc.returncode == 2
    assert fragment in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert not proc.stdout


def test_input_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def f(:\n    pass\n")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "corrupt.ipynb").write_text("{not json")
    # nbformat joins a split `source` itself: "sequence item 1: expected str instance, int found"
    split = {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = 1\n", 1]}
    (tmp_path / "split.ipynb").write_text(
        json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [split]})
    )
    unreadable = tmp_path / "locked.py"
    unreadable.write_text("x = 1\n")
    for args, fragment in [
        (["inspect", str(tmp_path / "bad.py")], "bad.py:1:"),
        (["inspect", str(tmp_path / "missing.py")], "file not found"),
        (["inspect", str(tmp_path / "notes.txt")], "unsupported format '.txt'"),
        (["inspect", str(tmp_path / "corrupt.ipynb")], "not a readable notebook"),
        (
            ["inspect", str(tmp_path / "split.ipynb")],
            "notebook does not follow nbformat: cell 1: `source` item 2 is a number, not a string",
        ),
        (["inspect", str(EXAMPLE), "--python-version", "2.7"], "unsupported --python-version"),
        (["inspect", str(EXAMPLE), "--requirements", str(tmp_path / "nope.txt")], "not found"),
        (["inspect", str(tmp_path), "--module-name", "x"], "cannot apply to a directory"),
        # ignored by inspect DIR, a file that does not exist included (compile refused it)
        (["inspect", str(tmp_path), "--data", "x.csv"], "declares them in [tool.svcc] data-files"),
    ]:
        proc = run_svcc(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert fragment in proc.stderr, (args, proc.stderr)
        assert proc.stderr.startswith("svcc: error: ")
        assert proc.stderr.count("\n") == 1
        assert "Traceback" not in proc.stderr
        assert not proc.stdout


def test_errors_name_the_program_the_user_typed(tmp_path: Path) -> None:
    """``svc clients export`` said ``svcc clients export: error:`` (the parser's name was
    fixed), and so did every error line of ``svc``."""
    for name in ("svc", "svcc"):
        for args, prefix in [
            (["clients", "export", "--format", "postman"], f"{name} clients export: error: "),
            (["inspect", str(tmp_path / "missing.py")], f"{name}: error: "),
        ]:
            proc = subprocess.run(
                [str(BIN / name), *args], capture_output=True, text=True, check=False
            )
            assert proc.returncode == 2
            assert proc.stderr.startswith(prefix), proc.stderr
            assert proc.stderr.count("\n") == 1


def test_inspect_directory_honours_encoding(tmp_path: Path) -> None:
    """``--encoding`` was ignored by ``inspect DIR``: a Latin-1 tree could not be read."""
    (tmp_path / "m.py").write_bytes(b'def f(x: str = "\xe9") -> str:\n    return x\n')
    assert run_svcc("inspect", str(tmp_path), "--format", "json").returncode == 2
    proc = run_svcc("inspect", str(tmp_path), "--format", "json", "--encoding", "latin-1")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"]["m.py"]["summary"]["eligible"] == 1


def test_grammar_follows_python_version(tmp_path: Path) -> None:
    src = tmp_path / "walrus.py"
    src.write_text("def f(x: int) -> int:\n    if (y := x):\n        return y\n    return 0\n")
    assert run_svcc("inspect", str(src), "--python-version", "3.8").returncode == 0
    old = run_svcc("inspect", str(src), "--python-version", "3.7")
    assert old.returncode == 2
    assert "walrus.py:2:" in old.stderr


def test_requirements_declare_imports(tmp_path: Path) -> None:
    src = tmp_path / "model.py"
    src.write_text("import sklearn\nimport yaml\n\ndef fit(x: int) -> int:\n    return x\n")
    reqs = tmp_path / "requirements.txt"
    reqs.write_text(
        "# app deps\nscikit-learn>=1.3  # ML\npyyaml==6.0.1 \\\n    --hash=sha256:abc\n"
    )
    plain = json.loads(run_svcc("inspect", str(src), "--format", "json").stdout)
    assert {r["code"] for r in plain["assessments"][0]["reasons"]} == {"SVC-R008"}
    declared = json.loads(
        run_svcc("inspect", str(src), "--format", "json", "--requirements", str(reqs)).stdout
    )
    assert declared["assessments"][0]["class"] == "eligible"
    assert declared["requirements"] == ["pyyaml", "scikit-learn"]
    reqs.write_text("-r other.txt\n")
    bad = run_svcc("inspect", str(src), "--requirements", str(reqs))
    assert bad.returncode == 2
    assert "requirements.txt:1" in bad.stderr


def test_sibling_modules_resolve(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("X = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    src = tmp_path / "main.py"
    src.write_text("import helpers\nfrom pkg import thing\n\ndef f(x: int) -> int:\n    return x\n")
    doc = json.loads(run_svcc("inspect", str(src), "--format", "json").stdout)
    assert doc["assessments"][0]["class"] == "eligible"


def test_inspect_directory_json(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "good.py").write_text("def f(x: int) -> int:\n    return x\n")
    (tmp_path / "broken.py").write_text("def g(:\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "skip.py").write_text("x = 1\n")
    (tmp_path / "my-script.py").write_text("def h() -> int:\n    return 1\n")
    # notebooks are searched with the repository's skip rules: build output and virtual
    # environments are not the project's (the search entered site-packages: 2 s on stdlib)
    for skipped_folder in ("build", "venv/lib/site-packages/dep"):
        (tmp_path / skipped_folder).mkdir(parents=True)
        (tmp_path / skipped_folder / "out.ipynb").write_text("{not json")
    proc = run_svcc("inspect", str(tmp_path), "--format", "json")
    assert proc.returncode == 2  # broken.py could not be analysed; every entry is printed
    # named by its path, as its entry is (the module's name was said, beside the paths of
    # refused entries and notebooks)
    assert "1 file(s) could not be analysed (first: broken.py)" in proc.stderr
    doc = json.loads(proc.stdout)
    files = doc["files"]
    assert list(files) == ["broken.py", "pkg/__init__.py", "pkg/good.py"]
    assert doc["modules"] == {
        "broken": "broken.py",
        "pkg": "pkg/__init__.py",
        "pkg.good": "pkg/good.py",
    }
    assert files["broken.py"]["error"]["code"] == "SVC-F001"
    assert files["broken.py"]["error"]["line"] == 1
    (skipped,) = doc["diagnostics"]  # a repository: my-script.py is not an importable module
    assert skipped["code"] == "SVC-F011"
    assert skipped["path"] == "my-script.py"
    assert skipped["message"].startswith("my-script.py: not an importable module name")
    assert files["pkg/good.py"]["assessments"][0]["capability_id"] == "python:pkg.good:f"


def verdicts(doc: dict[str, object]) -> list[tuple[object, ...]]:
    return [
        (a["capability_id"], a["class"], sorted(r["code"] for r in a["reasons"]))
        for a in doc["assessments"]  # type: ignore[attr-defined]
    ]


def test_inspect_directory_matches_single_files(tmp_path: Path) -> None:
    for case in sorted(GOLDEN.iterdir()):
        if (case / "input.py").exists():
            shutil.copy(case / "input.py", tmp_path / f"{case.name}.py")
    assert len(list(tmp_path.glob("*.py"))) > 16  # above the serial threshold
    proc = run_svcc("inspect", str(tmp_path), "--format", "json")
    assert proc.returncode == 2  # the syntax-error and undecodable cases
    files = json.loads(proc.stdout)["files"]
    # each file alone: independent read-only commands, so as many at once as there are cores
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        alone_runs = pool.map(
            lambda name: run_svcc("inspect", str(tmp_path / name), "--format", "json"), files
        )
        singles = dict(zip(files, alone_runs, strict=True))
    for name, doc in files.items():
        single = singles[name]
        if single.returncode == 0:
            # the directory is a repository: imports resolve over its module graph, so
            # messages may differ; the verdicts and their codes may not
            alone = json.loads(single.stdout)
            assert verdicts(alone) == verdicts(doc), name
        else:
            assert "error" in doc


def test_inspect_directory_text(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f(x) -> int:\n    return 1\n")
    (tmp_path / "b.py").write_text("def g(:\n")
    proc = run_svcc("inspect", str(tmp_path), "--format", "text")
    assert proc.returncode == 2
    assert "a.py (module a): 1 capabilities" in proc.stdout
    assert "b.py:1:" in proc.stdout
    assert "error" in proc.stdout


def test_notebook_inspect_reports_cells() -> None:
    proc = run_svcc("inspect", str(GOLDEN / "notebook_cells" / "input.ipynb"), "--format", "text")
    assert proc.returncode == 0
    assert "cell 3, line 2" in proc.stdout  # SVC-R007 on the module-level call in cell 3


def test_targets_lists_builtin_ir() -> None:
    proc = run_svcc("targets", "--format", "json")
    names = [t["name"] for t in json.loads(proc.stdout)["targets"]]
    assert "ir" in names
    assert run_svcc("targets").stdout.startswith(names[0])


def test_compile_with_ir_target(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    proc = run_svcc("compile", str(EXAMPLE), "--target", "ir", "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["execution"] == {"mode": "direct"}
    assert result["files"] == ["capability-ir.json", "readiness.json"]
    assert sorted(p.name for p in out.iterdir()) == result["files"]
    ir = json.loads((out / "capability-ir.json").read_text())
    assert [c["name"] for c in ir["capabilities"]] == [
        "circle_area",
        "rectangle_area",
        "scale",
        "describe",
    ]


def test_compile_select_restricts_and_refusals_leave_nothing(tmp_path: Path) -> None:
    src = GOLDEN / "decorators" / "input.py"
    ok = tmp_path / "sel"
    # every capability of that module is conditional: selection cannot override it
    proc = run_svcc(
        "compile", str(src), "--target", "ir", "--output-dir", str(ok), "--select", "plain"
    )
    assert proc.returncode == 1
    assert "plain is conditional (SVC-R008 line 3: " in proc.stderr
    assert "; SVC-R007 line 5: module-level " in proc.stderr
    assert not ok.exists()
    mixed = GOLDEN / "varargs" / "input.py"
    for args, code, fragment in [
        ([], 1, "gather is unsupported (SVC-R014 line 1: "),
        (["--select", "nope"], 2, "unknown selection 'nope'"),
        (["--select", "gathr"], 2, "did you mean 'gather'"),
        (["--select", "gather,"], 2, "expected comma-separated"),
    ]:
        out = tmp_path / f"o{len(args)}{code}"
        proc = run_svcc("compile", str(mixed), "--target", "ir", "--output-dir", str(out), *args)
        assert proc.returncode == code, proc.stderr
        assert fragment in proc.stderr
        assert not out.exists()


def test_compile_select_by_full_id(tmp_path: Path) -> None:
    src = GOLDEN / "param_kinds" / "input.py"
    out = tmp_path / "o"
    proc = run_svcc(
        "compile",
        str(src),
        "--target",
        "ir",
        "--output-dir",
        str(out),
        "--select",
        "python:input:kwonly,no_params",
        "--format",
        "text",
    )
    assert proc.returncode == 0, proc.stderr
    assert "python:input:kwonly" in proc.stdout
    assert "python:input:no_params" in proc.stdout


def test_compile_output_refusals(tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    for out, fragment in [
        (full, "not empty"),
        (tmp_path / "link", "symlink"),
        (tmp_path / "link" / "sub", "symlink"),
        (full / "keep.txt", "symlink or a file"),
    ]:
        proc = run_svcc("compile", str(EXAMPLE), "--target", "ir", "--output-dir", str(out))
        assert proc.returncode == 2, proc.stderr
        assert fragment in proc.stderr
    assert (full / "keep.txt").read_text() == "mine"
    assert list(real.iterdir()) == []


def test_compile_unknown_target_and_syntax_error(tmp_path: Path) -> None:
    proc = run_svcc("compile", str(EXAMPLE), "--target", "irr", "--output-dir", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert "did you mean" in proc.stderr
    bad = tmp_path / "bad.py"
    bad.write_text("x = (\n")
    proc = run_svcc("compile", str(bad), "--target", "ir", "--output-dir", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert "bad.py:" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_usage_errors_exit_2() -> None:
    assert run_svcc().returncode == 2
    assert run_svcc("frobnicate").returncode == 2
    assert run_svcc("compile", str(EXAMPLE)).returncode == 2
