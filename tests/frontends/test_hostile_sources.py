"""Hostile and unusual sources (issues 10 and 17, front end): each case here failed before.

Readiness must hold when served: what ``inspect`` calls eligible starts under uvicorn, and
what would fail at import or on every call is refused with a precise reason.
"""

import json
import os
from pathlib import Path

import pytest
from helpers import run_svcc
from mcp_client import McpBundle
from servers import generate, serving


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def inspect_json(path: Path, *args: str) -> dict[str, object]:
    proc = run_svcc("inspect", str(path), "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    document: dict[str, object] = json.loads(proc.stdout)
    return document


def classes(document: dict[str, object]) -> dict[str, str]:
    return {a["name"]: a["class"] for a in document["assessments"]}  # type: ignore[attr-defined]


def codes(document: dict[str, object], name: str) -> set[str]:
    for a in document["assessments"]:  # type: ignore[attr-defined]
        if a["name"] == name:
            return {r["code"] for r in a["reasons"]}
    raise AssertionError(name)


# -- bundles that could not start ----------------------------------------------------------

LITERALS = """from typing import Literal


def pick(a: Literal["a", None], b: Literal[1, True], c: Literal["a", 1]) -> str:
    return repr((a, b, c))
"""


def test_literals_mixing_json_types_are_served(tmp_path: Path) -> None:
    source = write(tmp_path, "lits.py", LITERALS)
    bundle = tmp_path / "out"
    generate(source, bundle)
    with serving(bundle) as server, server.client() as http:
        ok = http.post("/capabilities/pick", json={"a": None, "b": True, "c": 1})
        assert ok.status_code == 200, ok.text
        assert "True" in ok.text
        assert http.post("/capabilities/pick", json={"a": "a", "b": 1, "c": "a"}).status_code == 200
        refused = http.post("/capabilities/pick", json={"a": "b", "b": 2, "c": True})
        assert refused.status_code == 422
        assert {e["loc"][-1] for e in refused.json()["detail"]} == {"a", "b", "c"}


def test_literals_mixing_json_types_are_served_over_mcp(tmp_path: Path) -> None:
    source = write(tmp_path, "lits.py", LITERALS)
    bundle = tmp_path / "mcp"
    generate(source, bundle, interface="mcp")
    client = McpBundle(bundle)
    try:
        result = client.call("pick", {"a": None, "b": True, "c": 1})
        assert not result.is_error, result.content
        assert "True" in str(result.structured_content)
        refused = client.call("pick", {"a": "b", "b": 1, "c": "a"})
        assert refused.is_error
    finally:
        client.close()


def test_names_undefined_at_import_are_seen(tmp_path: Path) -> None:
    source = write(
        tmp_path,
        "broken.py",
        "from typing import TypedDict\n\n\nclass Unused(TypedDict):\n    a: Nowhere\n\n\n"
        "Alias = Alias\n\n\ndef f(x: int) -> int:\n    return x\n",
    )
    document = inspect_json(source)
    assert classes(document) == {"f": "unsupported"}
    reasons = document["assessments"][0]["reasons"]  # type: ignore[index]
    assert {(r["code"], r["line"]) for r in reasons} == {("SVC-R023", 5), ("SVC-R023", 8)}
    # with PEP 563 the field annotation is never evaluated; the alias still fails
    future = write(
        tmp_path, "future.py", "from __future__ import annotations\n" + source.read_text()
    )
    lines = {r["line"] for r in inspect_json(future)["assessments"][0]["reasons"]}  # type: ignore[index]
    assert lines == {9}


def test_untyped_parameter_called_is_unsupported(tmp_path: Path) -> None:
    source = write(
        tmp_path,
        "toolz_like.py",
        "def valmap(func, d: dict[str, int]) -> dict[str, int]:\n"
        "    return {k: func(v) for k, v in d.items()}\n",
    )
    document = inspect_json(source)
    assert classes(document) == {"valmap": "unsupported"}
    assert "SVC-R020" in codes(document, "valmap")


def test_governed_return_never_json_is_refused(tmp_path: Path) -> None:
    source = write(
        tmp_path,
        "pairs.py",
        "def pair(x: int) -> tuple[int, int]:\n    return (x, x)\n\n\n"
        "def maybe(x: int) -> list[int] | None:\n    return None\n",
    )
    policy = write(tmp_path, "policy.json", "{}")
    direct = run_svcc("generate", "rest", str(source), "--output-dir", str(tmp_path / "d"))
    assert direct.returncode == 0, direct.stderr
    governed = run_svcc(
        "generate", "rest", str(source), "--output-dir", str(tmp_path / "g"),
        "--execution-policy", str(policy),
    )  # fmt: skip
    assert governed.returncode == 1
    assert "pair is unsupported (SVC-R022 line 1" in governed.stderr
    assert "can never be a JSON value" in governed.stderr
    assert "maybe is" not in governed.stderr  # not refused: the --select that serves it
    assert "--select maybe serves the eligible function" in governed.stderr
    assert not (tmp_path / "g").exists()


# -- crashes where a clear error is due ----------------------------------------------------


def test_lone_surrogates_cost_only_their_own_entry(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write(
        tree,
        "bad.py",
        '"""Doc \\ud800."""\nfrom typing import Literal, TypedDict\n\n'
        'M = TypedDict("M", {"\\udc80k": int})\n\n\n'
        'def f(x: Literal["\\ud800", "a"]) -> int:\n    """\\udfff"""\n    return 1\n\n\n'
        "def g(m: M) -> int:\n    return 1\n",
    )
    write(tree, "good.py", "def h(x: int) -> int:\n    return x\n")
    document = inspect_json(tree / "bad.py")
    assert classes(document) == {"f": "unsupported", "g": "unsupported"}
    whole = run_svcc("inspect", str(tree), "--format", "json")
    assert whole.returncode == 0, whole.stderr
    files = json.loads(whole.stdout)["files"]
    assert classes(files["good.py"]) == {"h": "eligible"}
    assert classes(files["bad.py"]) == {"f": "unsupported", "g": "unsupported"}


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("def g(x: int, x: int) -> int:\n    return x\n", 1),
        ("\n\ndef g(x: int, \uff58: int) -> int:\n    return x\n", 3),  # NFKC look-alike
        ("def f() -> int:\n    h = lambda a, a: a\n    return 1\n", 2),
    ],
)
def test_duplicate_parameters_exit_2_with_the_line(tmp_path: Path, text: str, line: int) -> None:
    proc = run_svcc("inspect", str(write(tmp_path, "dup.py", text)))
    assert proc.returncode == 2, proc.stderr
    assert f"dup.py:{line}:" in proc.stderr
    assert "duplicate argument 'x'" in proc.stderr or "duplicate argument 'a'" in proc.stderr


def test_undefined_codec_exits_2(tmp_path: Path) -> None:
    proc = run_svcc("inspect", str(write(tmp_path, "u.py", "# coding: undefined\nx = 1\n")))
    assert proc.returncode == 2, proc.stderr
    assert "undefined" in proc.stderr
    assert "internal error" not in proc.stderr


def test_devices_and_pipes_are_refused_without_waiting(tmp_path: Path) -> None:
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "pipe.py")
    for name, what in (("zero.py", "a device"), ("pipe.py", "a named pipe")):
        proc = run_svcc("inspect", str(tmp_path / name), timeout=20)
        assert proc.returncode == 2
        assert f"{name}: is {what}" in proc.stderr
    # in a directory (a repository), the pipe and the symlink are refused entries
    write(tmp_path, "ok.py", "def f(x: int) -> int:\n    return x\n")
    proc = run_svcc("inspect", str(tmp_path), "--format", "json", timeout=20)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert set(doc["files"]) == {"ok.py"}
    refused = {d["path"]: d for d in doc["diagnostics"]}
    assert set(refused) == {"pipe.py", "zero.py"}
    assert "special file" in refused["pipe.py"]["message"]
    assert refused["pipe.py"]["code"] == "SVC-F008"


def test_notebook_without_nbformat_is_refused(tmp_path: Path) -> None:
    cell = {"cell_type": "code", "source": "def f(x: int) -> int:\n    return x\n",
            "metadata": {}, "outputs": [], "execution_count": None}  # fmt: skip
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": [cell], "metadata": {}}))
    proc = run_svcc("inspect", str(path))
    assert proc.returncode == 2
    assert "nbformat" in proc.stderr


# -- module names, versions -----------------------------------------------------------------


def test_unusable_module_names_say_how_to_fix(tmp_path: Path) -> None:
    path = write(tmp_path, "__main__.py", "def f(x: int) -> int:\n    return x\n")
    proc = run_svcc("inspect", str(path))
    assert proc.returncode == 2
    assert "--module-name" in proc.stderr
    assert run_svcc("inspect", str(path), "--module-name", "tool").returncode == 0


@pytest.mark.parametrize(("name", "module"), [("my-tool.py", "my_tool"), ("class.py", "class_")])
def test_stems_that_are_not_identifiers_get_a_derived_name(
    tmp_path: Path, name: str, module: str
) -> None:
    """Issue 28: the name is derived and said (SVC-F013), ``--module-name`` still overrides."""
    path = write(tmp_path, name, "def f(x: int) -> int:\n    return x\n")
    proc = run_svcc("inspect", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["assessments"][0]["capability_id"] == f"python:{module}:f"
    assert "SVC-F013" in proc.stdout
    assert run_svcc("inspect", str(path), "--module-name", "tool").returncode == 0


def test_python_version_out_of_range_and_match_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "m.py",
        "def f(x: int) -> int:\n    match x:\n        case 1:\n"
        "            return 1\n    return 0\n",
    )
    proc = run_svcc("inspect", str(path), "--python-version", "3.99")
    assert proc.returncode == 2
    assert "supported 3.7 to 3.14" in proc.stderr
    proc = run_svcc("inspect", str(path), "--python-version", "3.8")
    assert proc.returncode == 2
    assert "m.py:2:" in proc.stderr


# -- local import closure -------------------------------------------------------------------


def test_local_closure_is_bundled_verified_and_served(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(
        project,
        "helper.py",
        "from util.scale import factor\n\n\ndef twice(x):\n    return x * factor\n",
    )
    write(project, "util/__init__.py", "")
    write(project, "util/scale.py", "factor = 2\n")
    write(project, "unused.py", "raise SystemExit('never imported')\n")
    main = write(
        project,
        "main.py",
        "import helper\n\n\ndef double(x: int) -> int:\n    return helper.twice(x)\n",
    )
    assert classes(inspect_json(main)) == {"double": "eligible"}
    bundle = tmp_path / "out"
    generate(main, bundle)
    manifest = json.loads((bundle / "svc-rest.json").read_text())
    assert {"source/helper.py", "source/util/__init__.py", "source/util/scale.py"} <= set(
        manifest["files"]
    )
    assert not (bundle / "source" / "unused.py").exists()
    with serving(bundle) as server, server.client() as http:
        assert http.post("/capabilities/double", json={"x": 4}).json() == 8
    # the server verifies the copied files too
    (bundle / "source" / "util" / "scale.py").write_text("factor = 3\n")
    from servers import failed_start

    code, output = failed_start(bundle)
    assert code != 0
    assert "source/util/scale.py does not match" in output


def test_local_modules_that_cannot_import_are_reasons(tmp_path: Path) -> None:
    write(tmp_path, "needs_numpy.py", "import numpy\n")
    write(tmp_path, "broken.py", "def (:\n")
    main = write(
        tmp_path,
        "main.py",
        "import needs_numpy\nfrom . import x\n\n\ndef f(v: int) -> int:\n    import broken\n"
        "    return v\n\n\ndef g(v: int) -> int:\n    return v\n",
    )
    document = inspect_json(main)
    assert classes(document) == {"f": "conditional", "g": "conditional"}
    reasons = {r["line"]: r for r in document["assessments"][0]["reasons"]}  # type: ignore[index]
    messages = {line: r["message"] for line, r in reasons.items()}
    # the same codes and words as `svcc inspect DIR` (one readiness walk over the graph)
    assert reasons[1]["code"] == "SVC-R024"
    assert (
        "importing needs_numpy runs code at import: needs_numpy.py:1:1: import 'numpy'"
        in (messages[1])
    )
    assert reasons[2]["code"] == "SVC-R021"
    assert "in a top-level module (no parent package)" in messages[2]
    assert "--module-name" in reasons[2]["hint"]
    assert reasons[6]["code"] == "SVC-R024"
    assert "importing broken runs code at import: broken.py:1:5:" in messages[6]


def test_inspect_dir_and_file_agree_under_a_source_root(tmp_path: Path) -> None:
    root = tmp_path / "name-1.2.3"
    write(root, "setup.py", "def setup_it(x: int) -> int:\n    return x\n")
    write(root, "src/pkg/__init__.py", "from .core import base\n")
    write(root, "src/pkg/core.py", "def base(x: int) -> int:\n    return x\n")
    write(root, "src/pkg/api.py", "from .core import base\nfrom .. import nothing\n\n\n"
          "def api(x: int) -> int:\n    return base(x)\n")  # fmt: skip
    write(root, "src/pkg/sub/__init__.py", "")
    write(root, "src/pkg/sub/leaf.py", "from ..core import base\n\n\n"
          "def leaf(x: int) -> int:\n    return base(x)\n")  # fmt: skip
    whole = run_svcc("inspect", str(root), "--format", "json")
    assert whole.returncode == 0, whole.stderr
    files = json.loads(whole.stdout)["files"]
    assert files["src/pkg/sub/leaf.py"]["module"] == "pkg.sub.leaf"
    for rel, document in files.items():
        alone = inspect_json(root / rel)
        assert classes(alone) == classes(document), rel
        assert alone["module"] == document["module"]
    assert classes(files["src/pkg/sub/leaf.py"]) == {"leaf": "eligible"}
    assert classes(files["src/pkg/api.py"]) == {"api": "conditional"}
    bundle = tmp_path / "leaf"
    generate(root / "src/pkg/sub/leaf.py", bundle)
    assert (bundle / "source/pkg/__init__.py").read_text() == "from .core import base\n"
    with serving(bundle) as server, server.client() as http:
        assert http.post("/capabilities/leaf", json={"x": 3}).json() == 3


def test_folder_of_notebooks_is_listed(tmp_path: Path) -> None:
    cell = {"cell_type": "code", "source": "def f(x: int) -> int:\n    return x\n",
            "metadata": {}, "outputs": [], "execution_count": None}  # fmt: skip
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "a.ipynb").write_text(json.dumps(nb))
    proc = run_svcc("inspect", str(tmp_path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert classes(json.loads(proc.stdout)["files"]["a.ipynb"]) == {"f": "eligible"}


def test_readiness_json_is_the_inspect_document(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "code", "source": "%matplotlib inline\nimport math\n", "metadata": {},
         "outputs": [], "execution_count": None},
        {"cell_type": "code", "source": "def f(x: int) -> float:\n    return math.sqrt(x)\n",
         "metadata": {}, "outputs": [], "execution_count": None},
    ]  # fmt: skip
    path = tmp_path / "nb.ipynb"
    path.write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    printed = run_svcc("inspect", str(path), "--format", "json").stdout.encode()
    generate(path, tmp_path / "out")
    stored = (tmp_path / "out" / "readiness.json").read_bytes()
    assert stored == printed
    assert b"SVC-F004" in stored
