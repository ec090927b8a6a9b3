"""Data files of a repository: ``[tool.svcc] data-files`` in ``pyproject.toml``.

The fixture (``fixtures/repos/ml``) is an ML-style project: ``predict.py`` loads a linear
classifier's weights from ``models/iris.json`` at import, ``shop/inventory.py`` its stock
table from ``shop/stock.json``; both through paths built from ``__file__``. Declared, the
reads are harmless, the files travel byte for byte into the bundle at their place beside
the modules, the manifest lists their digests and the server verifies them at startup; the
bundles answer over REST (uvicorn) and MCP (the ``mcp`` client over stdio). A glob that
matches nothing, an escape, a symlink, a file outside the source roots and a bundle over
the limits are refused in one line, exit 2, nothing written.
"""

import json
import shutil
from pathlib import Path

import pytest
from helpers import run_svcc
from mcp_client import McpBundle
from servers import failed_start, serving
from svcc.frontends.repository import TreeLimits, TreeRefused, read_tree

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "ml"
# (features, class) of three flowers, and the setosa score of the first
FLOWERS = [
    ([5.1, 3.5, 1.4, 0.2], "setosa"),
    ([5.9, 3.0, 4.2, 1.5], "versicolor"),
    ([6.7, 3.0, 5.2, 2.3], "virginica"),
]


def compiled(out: Path, interface: str) -> Path:
    proc = run_svcc("compile", str(FIXTURE), "--target", interface, "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def rest_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compiled(tmp_path_factory.mktemp("ml") / "rest", "rest")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the fixture each refusal test edits (restored after each)."""
    root = tmp_path_factory.mktemp("ml-copy") / "ml"
    shutil.copytree(FIXTURE, root)
    return root


def readiness(root: Path) -> dict[str, list[tuple[str, str]]]:
    doc = json.loads(run_svcc("inspect", str(root), "--format", "json").stdout)
    return {
        a["capability_id"]: [(a["class"], r["code"]) for r in a["reasons"]] or [(a["class"], "")]
        for f in doc["files"].values()
        for a in f["assessments"]
    }


def test_declared_reads_are_harmless_and_undeclared_ones_say_how(tmp_path: Path) -> None:
    verdicts = readiness(FIXTURE)
    assert len(verdicts) == 3
    assert all(v == [("eligible", "")] for v in verdicts.values())
    copy = tmp_path / "ml"
    shutil.copytree(FIXTURE, copy)
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"shop/*.json"', ""))
    doc = json.loads(run_svcc("inspect", str(copy), "--format", "json").stdout)
    (assessment,) = doc["files"]["shop/inventory.py"]["assessments"]
    assert assessment["class"] == "conditional"
    (reason,) = assessment["reasons"]
    assert reason["code"] == "SVC-R026"
    assert "stock.json, which is not a declared data file" in reason["message"]
    assert "[tool.svcc] data-files" in reason["hint"]
    assert doc["files"]["predict.py"]["assessments"][0]["class"] == "eligible"


def test_rest_bundle_holds_verifies_and_serves_the_data(rest_bundle: Path, tmp_path: Path) -> None:
    for path in ("models/iris.json", "shop/stock.json"):
        assert (rest_bundle / "source" / path).read_bytes() == (FIXTURE / path).read_bytes()
    manifest = json.loads((rest_bundle / "svc-rest.json").read_text())
    assert manifest["repository"]["data_files"] == {
        "source/models/iris.json": "models/iris.json",
        "source/shop/stock.json": "shop/stock.json",
    }
    assert manifest["files"]["source/models/iris.json"].startswith("sha256:")
    with serving(rest_bundle) as server, server.client() as client:
        for features, label in FLOWERS:
            response = client.post("/capabilities/predict.predict", json={"features": features})
            assert response.status_code == 200, server.log_text()
            assert response.json() == label
        score = client.post(
            "/capabilities/predict.score",
            json={"features": FLOWERS[0][0], "label": "setosa"},
        )
        assert score.json() == 3.54
        stock = client.post("/capabilities/shop.inventory.in_stock", json={"item": "plum"})
        assert stock.json() == 12
    tampered = tmp_path / "tampered"
    shutil.copytree(rest_bundle, tampered)
    (tampered / "source" / "models" / "iris.json").write_text('{"bias": {}, "weights": {}}')
    code, output = failed_start(tampered)
    assert code != 0
    assert "source/models/iris.json does not match its digest" in output


def test_mcp_bundle_answers_with_the_model(tmp_path: Path) -> None:
    client = McpBundle(compiled(tmp_path / "mcp", "mcp"))
    try:
        for features, label in FLOWERS:
            result = client.call("predict.predict", {"features": features})
            assert not result.is_error, result.content
            assert label in str(result.structured_content)
    finally:
        client.close()


@pytest.mark.parametrize(
    ("globs", "setup", "expected"),
    [
        ('["models/*.joblib"]', None, "[tool.svcc] data-files: 'models/*.joblib' matches no file"),
        ('["../*.json"]', None, "'../*.json' escapes the project root"),
        ('["/etc/passwd"]', None, "'/etc/passwd' escapes the project root"),
        ('["models/*.json"]', "symlink", "models/link.json (from 'models/*.json') is a symlink"),
        ('["models/*.json"]', "fifo", "models/pipe.json (from 'models/*.json') is not a regular"),
        ('["notes/*.txt"]', "src", "notes/a.txt is outside the source roots (src)"),
        ('["*.py"]', None, "predict.py (from '*.py') is a module, not data"),
        ('"models/*.json"', None, "[tool.svcc] data-files must be a list of strings"),
    ],
)
def test_refusals_are_one_line_and_write_nothing(
    project: Path, tmp_path: Path, globs: str, setup: str | None, expected: str
) -> None:
    import os

    pyproject = project / "pyproject.toml"
    original = pyproject.read_text()
    made: list[Path] = []
    try:
        pyproject.write_text(original.replace('["models/*.json", "shop/*.json"]', globs))
        if setup == "symlink":
            made.append(project / "models" / "link.json")
            made[-1].symlink_to(project / "models" / "iris.json")
        elif setup == "fifo":
            made.append(project / "models" / "pipe.json")
            os.mkfifo(made[-1])
        elif setup == "src":
            made += [project / "src", project / "notes"]
            (project / "src" / "app").mkdir(parents=True)
            (project / "src" / "app" / "m.py").write_text("def f() -> int:\n    return 1\n")
            (project / "notes").mkdir()
            (project / "notes" / "a.txt").write_text("a")
        with pytest.raises(TreeRefused) as refused:
            read_tree(project)
        assert expected in str(refused.value)
        if setup == "symlink":  # the command line: exit 2, one line, nothing written
            out = tmp_path / "out"
            proc = run_svcc("compile", str(project), "--target", "rest", "--output-dir", str(out))
            assert proc.returncode == 2, proc.stderr
            assert proc.stderr.strip().splitlines() == [
                f"svcc: error: {project}: SVC-F008 {refused.value}"
            ]
            assert not out.exists()
    finally:
        pyproject.write_text(original)
        for path in made:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()


def test_data_counts_in_the_bundle_limits() -> None:
    size = sum(p.stat().st_size for p in FIXTURE.rglob("*.py"))
    read_tree(FIXTURE, TreeLimits(max_total_bytes=size + 500))  # the data fits
    with pytest.raises(TreeRefused) as refused:
        read_tree(FIXTURE, TreeLimits(max_total_bytes=size + 100))
    assert refused.value.diagnostic.code == "SVC-F010"
    assert "the modules and data files exceed" in str(refused.value)


def test_globs_declare_the_same_files_in_a_tree_and_in_a_commit(tmp_path: Path) -> None:
    """A local tree expands the globs by walking; a git commit (``compiler.git_fetch``)
    tests each listed path with :func:`matches`: both declare the same files (``**`` any
    depth, no hidden file or tool folder through a wildcard)."""
    from svcc.frontends.repository._data import matches

    paths = ["a/x.npy", "a/b/c/y.npy", "a/b/c.txt", "a/.h.npy", "a/.cache/z.npy",
             "a/venv/w.npy", "b/x.npy", "m.py"]  # fmt: skip
    for path in paths:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("1")
    glob = "a/**/*.npy"
    (tmp_path / "pyproject.toml").write_text(f'[tool.svcc]\ndata-files = ["{glob}"]\n')
    declared = [f.path for f in read_tree(tmp_path).data]
    assert declared == ["a/b/c/y.npy", "a/x.npy"]
    assert sorted(p for p in paths if matches(glob, p)) == declared
    # the commit's many-pattern form: a literal path looked up, a glob matched
    from svcc.frontends.repository import declared_by

    for patterns in ([glob], [glob, "a/b/c.txt"], ["a/b/c.txt", "a/.h.npy", "b/*.npy"]):
        by = declared_by(patterns)
        expected = [p for p in paths if any(matches(g, p) for g in patterns)]
        assert [p for p in paths if by(p)] == expected, patterns
