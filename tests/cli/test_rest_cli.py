"""``svcc generate rest`` / ``svcc compile --target rest``: exit codes, refusals, output."""

import json
from pathlib import Path

import pytest
from helpers import GOLDEN, run_svcc
from servers import FIXTURES

GOOD = '''\
"""A small module."""


def area(width: float, height: float = 1.0) -> float:
    """Area of a rectangle."""
    return width * height
'''

MIXED = (
    GOOD
    + """

def numbers(n: int) -> list[int]:
    yield from range(n)
"""
)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "geometry.py"
    path.write_text(GOOD)
    return path


def generate(*args: str) -> tuple[int, str, str]:
    proc = run_svcc("generate", "rest", *args)
    return proc.returncode, proc.stdout, proc.stderr


def test_success_reports_execution_mode_and_files(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = generate(str(source), "--output-dir", str(out))
    assert code == 0, stderr
    assert stderr == ""
    assert stdout.count("\n") == 1
    result = json.loads(stdout)
    assert result["execution"] == {"mode": "direct"}
    assert result["capabilities"] == ["python:geometry:area"]
    assert sorted(result["files"]) == sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()
    )
    for required in (
        "app.py",
        "source/geometry.py",
        "capability-ir.json",
        "readiness.json",
        "openapi.json",
        "svc-rest.json",
        "requirements.txt",
    ):
        assert (out / required).is_file(), required
    assert (out / "source/geometry.py").read_bytes() == source.read_bytes()


def test_compile_target_rest_is_the_same_code_path(source: Path, tmp_path: Path) -> None:
    assert generate(str(source), "--output-dir", str(tmp_path / "a"))[0] == 0
    proc = run_svcc("compile", str(source), "--target", "rest", "--output-dir", str(tmp_path / "b"))
    assert proc.returncode == 0, proc.stderr
    files_a = {
        p.relative_to(tmp_path / "a"): p.read_bytes()
        for p in (tmp_path / "a").rglob("*")
        if p.is_file()
    }
    files_b = {
        p.relative_to(tmp_path / "b"): p.read_bytes()
        for p in (tmp_path / "b").rglob("*")
        if p.is_file()
    }
    assert files_a == files_b


def test_text_format(source: Path, tmp_path: Path) -> None:
    code, stdout, _ = generate(str(source), "--output-dir", str(tmp_path / "o"), "--format", "text")
    assert code == 0
    assert stdout.startswith("wrote ")
    assert "python:geometry:area" in stdout


def test_non_empty_output_dir_is_refused_and_untouched(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    code, stdout, stderr = generate(str(source), "--output-dir", str(out))
    assert code == 2
    assert stdout == ""
    assert "not empty" in stderr
    assert stderr.count("\n") == 1
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_symlinked_output_dir_is_refused(source: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    code, _, stderr = generate(str(source), "--output-dir", str(link / "out"))
    assert code == 2
    assert "symlink" in stderr
    assert list(real.iterdir()) == []


def test_unknown_selection(source: Path, tmp_path: Path) -> None:
    code, _, stderr = generate(str(source), "--output-dir", str(tmp_path / "o"), "--select", "aera")
    assert code == 2
    assert "unknown selection 'aera'" in stderr
    assert "did you mean 'area'" in stderr
    assert not (tmp_path / "o").exists()


def test_ineligible_without_selection_exits_1_with_reason_codes(tmp_path: Path) -> None:
    path = tmp_path / "mixed.py"
    path.write_text(MIXED)
    code, _, stderr = generate(str(path), "--output-dir", str(tmp_path / "o"))
    assert code == 1
    reason = "numbers is unsupported (SVC-R016 line 9: numbers yields, but its return annotation"
    assert reason in stderr
    assert not (tmp_path / "o").exists()


def test_selection_excludes_an_unrelated_unsupported_function(tmp_path: Path) -> None:
    path = tmp_path / "mixed.py"
    path.write_text(MIXED)
    code, stdout, stderr = generate(
        str(path), "--output-dir", str(tmp_path / "o"), "--select", "python:mixed:area"
    )
    assert code == 0, stderr
    assert json.loads(stdout)["capabilities"] == ["python:mixed:area"]
    document = json.loads((tmp_path / "o" / "openapi.json").read_text())
    assert list(document["paths"]) == ["/capabilities/area", "/health"]


def test_selection_cannot_override_the_selected_functions_readiness(tmp_path: Path) -> None:
    path = tmp_path / "mixed.py"
    path.write_text(MIXED)
    code, _, stderr = generate(
        str(path), "--output-dir", str(tmp_path / "o"), "--select", "area,numbers"
    )
    assert code == 1
    assert "SVC-R016" in stderr


def test_undeclared_dependency_blocks_until_declared(tmp_path: Path) -> None:
    code, _, stderr = generate(str(FIXTURES / "rules.py"), "--output-dir", str(tmp_path / "a"))
    assert code == 1
    assert "SVC-R008" in stderr
    code, _, stderr = generate(
        str(FIXTURES / "rules.py"),
        "--output-dir",
        str(tmp_path / "b"),
        "--requirements",
        str(FIXTURES / "requirements.txt"),
        "--allow",
        "env",
    )
    assert code == 0, stderr
    assert (tmp_path / "b" / "application-requirements.txt").read_text() == "fastapi\n"
    manifest = json.loads((tmp_path / "b" / "svc-rest.json").read_text())
    assert "application-requirements.txt" in manifest["files"]


def test_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n    pass\n")
    code, _, stderr = generate(str(path), "--output-dir", str(tmp_path / "o"))
    assert code == 2
    assert "broken.py:1:" in stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", ["notes.txt", "module", "data.json"])
def test_unsupported_format(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("x = 1\n")
    code, _, stderr = generate(str(path), "--output-dir", str(tmp_path / "o"))
    assert code == 2
    assert "unsupported format" in stderr


def test_missing_input(tmp_path: Path) -> None:
    code, _, stderr = generate(str(tmp_path / "nope.py"), "--output-dir", str(tmp_path / "o"))
    assert code == 2
    assert "file not found" in stderr


@pytest.mark.parametrize("name", ["app", "json", "fastapi", "svc_runtime", "source.x", "1bad"])
def test_module_name_clash_or_invalid(source: Path, tmp_path: Path, name: str) -> None:
    code, _, stderr = generate(
        str(source), "--output-dir", str(tmp_path / "o"), "--module-name", name
    )
    assert code == 2
    assert name.split(".", 1)[0] in stderr
    assert not (tmp_path / "o").exists()


def test_module_named_app_by_its_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text(GOOD)
    code, _, stderr = generate(str(path), "--output-dir", str(tmp_path / "o"))
    assert code == 2
    assert "clashes" in stderr
    code, _, stderr = generate(
        str(path), "--output-dir", str(tmp_path / "o"), "--module-name", "my_app"
    )
    assert code == 0, stderr


def test_dotted_module_name_builds_packages(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    code, stdout, stderr = generate(
        str(source), "--output-dir", str(out), "--module-name", "acme.geo.shapes"
    )
    assert code == 0, stderr
    assert json.loads(stdout)["capabilities"] == ["python:acme.geo.shapes:area"]
    assert (out / "source/acme/__init__.py").read_bytes() == b""
    assert (out / "source/acme/geo/__init__.py").read_bytes() == b""
    assert (out / "source/acme/geo/shapes.py").read_bytes() == source.read_bytes()


def test_notebook_keeps_its_original_bytes(tmp_path: Path) -> None:
    notebook = GOLDEN / "notebook_magics" / "input.ipynb"
    out = tmp_path / "o"
    code, _, stderr = generate(str(notebook), "--output-dir", str(out), "--module-name", "cells")
    assert code == 0, stderr
    assert (out / "original" / "input.ipynb").read_bytes() == notebook.read_bytes()
    module = (out / "source" / "cells.py").read_text()
    assert module.startswith("# %% [cell")


def test_requirements_file_problems_exit_2(source: Path, tmp_path: Path) -> None:
    code, _, stderr = generate(
        str(source),
        "--output-dir",
        str(tmp_path / "o"),
        "--requirements",
        str(tmp_path / "missing.txt"),
    )
    assert code == 2
    assert "missing.txt" in stderr


# An unwritable output directory (exit 2): tests/compiler/test_writer.py, run as nobody under root.


def test_generate_mcp_shares_the_rules(source: Path, tmp_path: Path) -> None:
    proc = run_svcc("generate", "mcp", str(source), "--output-dir", str(tmp_path / "m"))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["execution"] == {"mode": "direct"}
    assert "server.py" in result["files"]
    assert "mcp-tools.json" in result["files"]
    assert "svc-mcp.json" in result["files"]
    path = tmp_path / "mixed.py"
    path.write_text(MIXED)
    proc = run_svcc("generate", "mcp", str(path), "--output-dir", str(tmp_path / "n"))
    assert proc.returncode == 1
    assert "SVC-R016" in proc.stderr


def test_mcp_tool_name_outside_the_limits_exits_1(tmp_path: Path) -> None:
    latin = GOLDEN / "encoding_latin1" / "input.py"
    proc = run_svcc("generate", "mcp", str(latin), "--output-dir", str(tmp_path / "m"))
    assert proc.returncode == 1
    assert "cannot be an MCP tool name" in proc.stderr
    assert not (tmp_path / "m").exists()
    proc = run_svcc("generate", "rest", str(latin), "--output-dir", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    ("policy", "code", "message"),
    [
        ("{}", 0, ""),
        ('{"limits": {"wall_time_ms": 100}, "environment": {"allow": ["HOME"]}}', 0, ""),
        ('{"network": "deny"}', 1, "network: 'deny' cannot be enforced"),
        ('{"subprocess": "deny"}', 1, "subprocess: 'deny' cannot be enforced"),
        ('{"limitz": {}}', 2, "extra fields found (limitz)"),
        ('{"limits": {"wall_time_ms": "5"}}', 2, "$.limits.wall_time_ms"),
        ('{"working_directory": "bundle"}', 2, "$.working_directory"),
        ("[]", 2, "JSON object"),
        ("{nope", 2, "not valid JSON"),
        ('{"limits": {"wall_time_ms": NaN}}', 2, "not valid JSON"),
    ],
)
def test_execution_policy(
    source: Path, tmp_path: Path, policy: str, code: int, message: str
) -> None:
    path = tmp_path / "policy.json"
    path.write_text(policy)
    out = tmp_path / "o"
    proc = run_svcc(
        "generate", "rest", str(source), "--output-dir", str(out), "--execution-policy", str(path)
    )
    assert proc.returncode == code, proc.stderr
    if code:
        assert message in proc.stderr
        assert proc.stderr.count("\n") == 1
        assert not out.exists()
    else:
        assert json.loads(proc.stdout)["execution"] == {
            "mode": "governed",
            "backend": "local-process",
        }
        written = json.loads((out / "execution" / "policy.json").read_text())
        assert written["schema"] == "svc.execution/v1"
        assert written["limits"]["max_output_bytes"] == 1024 * 1024


def test_execution_policy_needs_a_target_that_supports_it(source: Path, tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text("{}")
    proc = run_svcc(
        "compile",
        str(source),
        "--target",
        "ir",
        "--output-dir",
        str(tmp_path / "o"),
        "--execution-policy",
        str(path),
    )
    assert proc.returncode == 2
    assert "no governed execution mode" in proc.stderr
    proc = run_svcc(
        "generate",
        "rest",
        str(source),
        "--output-dir",
        str(tmp_path / "o"),
        "--execution-policy",
        str(tmp_path / "missing.json"),
    )
    assert proc.returncode == 2
    assert "missing.json: file not found" in proc.stderr
