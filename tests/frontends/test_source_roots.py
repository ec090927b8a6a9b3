"""Source roots found automatically (``frontends/repository/_roots``, ``SVC-R041``).

``svcc inspect DIR`` at the root of a repository that holds projects side by side, in
folders whose names are not Python names (``ml-serving/``, ``short-texts-clustering/src/``,
``projects/web-api/``), reads each as a source root of its own: its modules are named from
it, as when the folder is passed alone, and each root is reported with the names it gives.
A folder's ``src/`` is its root when it holds Python files (the rest of the folder is not
read). Configured ``[tool.svcc] source-roots`` are taken as given: a file below a
non-Python folder name is then skipped with the exact paths to pass (``SVC-F011``).
"""

import json
from pathlib import Path

import pytest
from helpers import run_svcc
from servers import serving

FUNCTION = "def double(x: int) -> int:\n    return 2 * x\n"


@pytest.fixture(scope="module")
def monorepo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mono")
    files = {
        "ml-serving/serve.py": FUNCTION,
        "short-texts-clustering/src/stc/__init__.py": "",
        "short-texts-clustering/src/stc/cluster.py": FUNCTION,
        "short-texts-clustering/scripts/run.py": "import sys\nprint(sys.argv)\n",
        "projects/web-api/api.py": FUNCTION,
        "projects/web-api/nested-tool/tool.py": FUNCTION,
        "lib/util.py": FUNCTION,
        "web-demo/serve.py": FUNCTION,  # the module name ml-serving/serve.py gives: skipped
        ".venv/lib/site-packages/x-y/z.py": FUNCTION,  # hidden: never a root
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_project_folders_are_roots_of_their_own_and_reported(monorepo: Path) -> None:
    doc = json.loads(run_svcc("inspect", str(monorepo), "--format", "json").stdout)
    roots = [".", "ml-serving", "projects/web-api", "projects/web-api/nested-tool",
             "short-texts-clustering/src", "web-demo"]  # fmt: skip
    assert doc["source_roots"] == roots
    assert doc["modules"] == {
        "api": "projects/web-api/api.py",
        "lib.util": "lib/util.py",
        "serve": "ml-serving/serve.py",
        "stc": "short-texts-clustering/src/stc/__init__.py",
        "stc.cluster": "short-texts-clustering/src/stc/cluster.py",
        "tool": "projects/web-api/nested-tool/tool.py",
    }
    notes = {d["path"]: d for d in doc["diagnostics"]}
    assert set(notes) == {*roots[1:], "web-demo", "web-demo/serve.py"}
    assert notes["web-demo/serve.py"]["message"] == (
        "web-demo/serve.py and ml-serving/serve.py both give module 'serve': web-demo/serve.py "
        "skipped (its source root web-demo was found automatically; inspect web-demo alone)"
    )
    assert all(d["code"] == "SVC-R041" and d["severity"] == "note" for d in notes.values())
    assert notes["short-texts-clustering/src"]["message"].startswith(
        "short-texts-clustering/src: read as a source root of its own"
    )
    assert (
        "its modules are named from it (stc, stc.cluster)"
        in (notes["short-texts-clustering/src"]["message"])
    )
    assert "inspect ml-serving alone" in notes["ml-serving"]["message"]
    classes = {
        a["capability_id"]: a["class"] for f in doc["files"].values() for a in f["assessments"]
    }
    modules = ("api", "lib.util", "serve", "stc.cluster", "tool")
    assert classes == {f"python:{m}:double": "eligible" for m in modules}
    alone = json.loads(run_svcc("inspect", str(monorepo / "ml-serving"), "--format", "json").stdout)
    assert alone["modules"] == {"serve": "serve.py"}  # the same name as from the root


def test_automatic_roots_are_served(monorepo: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "rest"
    proc = run_svcc(
        "compile", str(monorepo), "--target", "rest", "--output-dir", str(bundle),
        "--select", "serve.double,stc.cluster.double",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (bundle / "source" / "serve.py").is_file()
    with serving(bundle) as server, server.client() as client:
        for name in ("serve.double", "stc.cluster.double"):
            response = client.post(f"/capabilities/{name}", json={"x": 21})
            assert response.status_code == 200, server.log_text()
            assert response.json() == 42


def test_configured_roots_are_taken_as_given(tmp_path: Path) -> None:
    (tmp_path / "ml-serving").mkdir()
    (tmp_path / "ml-serving" / "app.py").write_text(FUNCTION)
    (tmp_path / "pyproject.toml").write_text('[tool.svcc]\nsource-roots = ["."]\n')
    doc = json.loads(run_svcc("inspect", str(tmp_path), "--format", "json").stdout)
    (note,) = doc["diagnostics"]
    assert note["code"] == "SVC-F011"
    assert "svcc inspect ml-serving" in note["message"]
    assert '"ml-serving" to [tool.svcc] source-roots' in note["message"]
    assert doc["modules"] == {}
