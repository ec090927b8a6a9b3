"""Files a capability reads on every call: refused unless the served bundle will find them.

``shop.py`` reads ``catalog.json`` and ``stock.csv`` beside it through paths built from
``__file__`` inside its functions (not at import), spelt in the call or held by a local name
bound once (``path = HERE / "catalog.json"`` then ``path.read_text()``). Without the files
declared each function is conditional (``SVC-R042``, with the hint to declare them); with
``--data`` all are served under uvicorn and answer with the files' content.
``cwd_shop.py`` reads ``"catalog.json"`` relative to the working directory: conditional
(``SVC-R043``) until the file is declared, then served (a direct server's working directory
is the bundle's ``source/``); a governed worker's is a scratch folder, so there it stays
refused with the hint to build the path from ``__file__``. Paths from parameters stay the
``paths`` security effect.
"""

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import run_svcc
from servers import generate, serving
from svcc.compiler.driver import analyze_file
from svcc.frontends.python import read_python
from svcc.frontends.python.data_reads import normalise, reads_file

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "shop_reads"


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "shop")
    return tmp_path / "shop"


def _inspect(source: Path, *args: str) -> dict[str, dict[str, Any]]:
    proc = run_svcc("inspect", str(source), "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return {a["name"]: a for a in json.loads(proc.stdout)["assessments"]}


def test_undeclared_per_call_reads_are_conditional_with_the_hint(tmp_path: Path) -> None:
    project = _copy(tmp_path)
    found = _inspect(project / "shop.py")
    for name, file in (
        ("price_of", "catalog.json"),
        ("stock_of", "stock.csv"),
        ("price_by_name", "catalog.json"),
        ("stock_by_name", "stock.csv"),
    ):
        assert found[name]["class"] == "conditional"
        (reason,) = found[name]["reasons"]
        assert reason["code"] == "SVC-R042"
        assert f"reads {file} beside the module on every call" in reason["message"]
        assert "--data PATH" in reason["hint"]


def test_declared_per_call_reads_are_served_over_rest(tmp_path: Path) -> None:
    project = _copy(tmp_path)
    declared = ("--data", str(project / "catalog.json"), "--data", str(project / "stock.csv"))
    assert {a["class"] for a in _inspect(project / "shop.py", *declared).values()} == {"eligible"}
    bundle = tmp_path / "rest"
    generate(project / "shop.py", bundle, *declared)
    with serving(bundle) as server, server.client() as client:
        price = client.post("/capabilities/price_of", json={"item": "pear"})
        assert price.status_code == 200, server.log_text()
        assert price.json() == 2.5
        stock = client.post("/capabilities/stock_of", json={"item": "apple"})
        assert stock.status_code == 200, server.log_text()
        assert stock.json() == "apple,12"
        for name, item, expected in (
            ("price_by_name", "pear", 2.5),
            ("stock_by_name", "apple", "apple,12"),
        ):
            through = client.post(f"/capabilities/{name}", json={"item": item})
            assert through.status_code == 200, server.log_text()
            assert through.json() == expected


def test_working_directory_read_is_served_when_declared(tmp_path: Path) -> None:
    project = _copy(tmp_path)
    (reason,) = _inspect(project / "cwd_shop.py")["price_of"]["reasons"]
    assert reason["code"] == "SVC-R043"
    assert "'catalog.json' relative to the working directory" in reason["message"]
    assert "--data PATH" in reason["hint"]
    declared = ("--data", str(project / "catalog.json"))
    assert _inspect(project / "cwd_shop.py", *declared)["price_of"]["class"] == "eligible"
    bundle = tmp_path / "rest"
    generate(project / "cwd_shop.py", bundle, *declared)
    with serving(bundle) as server, server.client() as client:  # started in the bundle's root
        price = client.post("/capabilities/price_of", json={"item": "pear"})
        assert price.status_code == 200, server.log_text()
        assert price.json() == 2.5


def test_working_directory_read_is_refused_for_governed_workers(tmp_path: Path) -> None:
    """A governed worker runs each call in a scratch folder: declared, the file is not there."""
    project = _copy(tmp_path)
    analysis = analyze_file(
        project / "cwd_shop.py", data=[str(project / "catalog.json")], governed=True
    )
    assert analysis.readiness is not None
    (assessment,) = analysis.readiness.assessments
    (reason,) = assessment.reasons
    assert reason.code == "SVC-R043"
    assert "scratch folder (the file is declared" in reason.message
    assert 'Path(__file__).parent / "catalog.json"' in (reason.hint or "")


def test_what_the_rule_leaves_alone(tmp_path: Path) -> None:
    """A parameter's path stays the paths effect; writes, absolute paths, the module's own
    source and reads at import (SVC-R026's) are not per-call data reads."""
    source = tmp_path / "misc.py"
    source.write_text(
        "import json\n"
        "from pathlib import Path\n\n\n"
        "def by_name(name: str) -> str:\n"
        "    return open(name).read()\n\n\n"
        "def save(text: str) -> None:\n"
        '    with open("out.txt", "w") as handle:\n'
        "        handle.write(text)\n\n\n"
        "def hosts() -> str:\n"
        '    return Path("/etc/hostname").read_text()\n\n\n'
        "def own() -> int:\n"
        "    return len(open(__file__).read())\n"
    )
    found = _inspect(source)
    assert [r["code"] for r in found["by_name"]["reasons"]] == ["SVC-R036"]
    assert found["save"]["class"] == found["hosts"]["class"] == found["own"]["class"] == "eligible"


def test_a_read_through_a_name_is_judged_only_when_the_name_is_bound_once(
    tmp_path: Path,
) -> None:
    """A local name bound once, before the read, by a statement of the body itself is followed
    (``__file__``-built: SVC-R042 undeclared; a literal: SVC-R043); a name rebound (here to a
    fallback that works in any bundle) may hold another value: not judged."""
    source = tmp_path / "named.py"
    source.write_text(
        "from pathlib import Path\n\n\n"
        "def beside() -> str:\n"
        '    path = Path(__file__).parent / "c.json"\n'
        "    with path.open() as handle:\n"
        "        return handle.read()\n\n\n"
        "def relative() -> str:\n"
        '    name = "c.json"\n'
        "    return open(name).read()\n\n\n"
        "def rebound() -> str:\n"
        '    path = Path(__file__).parent / "c.json"\n'
        "    if not path.exists():\n"
        "        path = Path(__file__)\n"
        "    return path.read_text()\n"
    )
    found = _inspect(source)
    assert [r["code"] for r in found["beside"]["reasons"]] == ["SVC-R042"]
    assert [r["code"] for r in found["relative"]["reasons"]] == ["SVC-R043"]
    assert found["rebound"]["class"] == "eligible"


def test_repository_data_files_declare_per_call_reads(tmp_path: Path) -> None:
    """In a repository, ``[tool.svcc] data-files`` declares them (module-folder relative)."""
    package = tmp_path / "repo" / "src" / "shop"
    package.mkdir(parents=True)
    (tmp_path / "repo" / "pyproject.toml").write_text(
        '[project]\nname = "shop"\nversion = "0.1"\n\n'
        '[tool.svcc]\ndata-files = ["src/shop/catalog.json"]\n'
    )
    (package / "__init__.py").write_text("")
    shutil.copy(FIXTURE / "catalog.json", package / "catalog.json")
    shutil.copy(FIXTURE / "shop.py", package / "prices.py")
    proc = run_svcc("inspect", str(tmp_path / "repo"), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    found: dict[str, list[str]] = {}

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "capability_id" in node:
                found[node["capability_id"]] = [r["code"] for r in node["reasons"]]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(proc.stdout))
    assert found == {
        "python:shop.prices:price_of": [],
        "python:shop.prices:stock_of": ["SVC-R042"],  # stock.csv is not declared
        "python:shop.prices:price_by_name": [],
        "python:shop.prices:stock_by_name": ["SVC-R042"],
    }


def test_a_url_is_not_a_working_directory_path(tmp_path: Path) -> None:
    """``pd.read_csv("https://...")`` fetches; ``pd.read_csv("data/train.csv")`` reads ./data."""
    source = tmp_path / "frames.py"
    source.write_text(
        "import pandas as pd\n\n\n"
        "def remote() -> int:\n"
        '    return len(pd.read_csv("https://example.org/train.csv"))\n\n\n'
        "def local() -> int:\n"
        '    return len(pd.read_csv("data/train.csv"))\n'
    )
    found = _inspect(source)
    assert [r["code"] for r in found["remote"]["reasons"]] == ["SVC-R008"]  # pandas undeclared
    assert [r["code"] for r in found["local"]["reasons"]] == ["SVC-R008", "SVC-R043"]


def _without(bundle: Path, relpath: str, copy: Path) -> Path:
    """``bundle`` as generated without the data file ``relpath`` declared: the file and its
    manifest entry gone (the manifest lists the files it verifies at startup)."""
    shutil.copytree(bundle, copy)
    (copy / relpath).unlink()
    manifest = json.loads((copy / "svc-rest.json").read_text())
    del manifest["files"][relpath]
    (copy / "svc-rest.json").write_text(json.dumps(manifest))
    return copy


def test_reads_through_the_modules_own_loaders_need_the_files_declared(tmp_path: Path) -> None:
    """A cached loader, a ``load`` class method reading with pandas and a helper given the
    path: each capability reaching one is conditional (SVC-R042 at the read, naming the call
    that reaches it) until the file is declared; declared, all are served. The same bundle
    without the files answers 500 on each: the verdict is what serving does."""
    project = _copy(tmp_path)
    (tmp_path / "requirements.txt").write_text("pandas\n")
    required = ("--requirements", str(tmp_path / "requirements.txt"))
    found = _inspect(project / "loaders.py", *required)
    for name, file, through in (
        ("price_of", "catalog.json", "in _catalog, reached through _catalog() on line 19"),
        ("stock_of", "stock.csv", "in Stock.load, reached through Stock.load() on line 30"),
        ("cheapest", "catalog.json", "in _read_json, reached through _read_json() on line 38"),
    ):
        (reason,) = found[name]["reasons"]
        assert reason["code"] == "SVC-R042", reason
        assert f"{through}, reads {file} beside the module" in reason["message"]
    declared = (*required, "--data", str(project / "catalog.json"))
    declared += ("--data", str(project / "stock.csv"))
    assert {a["class"] for a in _inspect(project / "loaders.py", *declared).values()} == {
        "eligible"
    }
    bundle = tmp_path / "rest"
    generate(project / "loaders.py", bundle, *declared)
    calls = (("price_of", {"item": "pear"}, 2.5), ("stock_of", {"item": "apple"}, 12))
    calls += (("cheapest", {}, "apple"),)
    with serving(bundle) as server, server.client() as client:
        for name, body, expected in calls:
            answer = client.post(f"/capabilities/{name}", json=body)
            assert answer.status_code == 200, server.log_text()
            assert answer.json() == expected
    bare = _without(bundle, "source/catalog.json", tmp_path / "bare")
    bare = _without(bare, "source/stock.csv", tmp_path / "barer")
    with serving(bare) as server, server.client() as client:
        for name, body, _ in calls:
            assert client.post(f"/capabilities/{name}", json=body).status_code == 500


def test_a_function_that_copes_with_a_missing_file_stays_eligible(tmp_path: Path) -> None:
    """A read after an existence test, inside ``try``/``except FileNotFoundError`` (in the
    capability or around the call that reaches it) works without the file: not judged (it was
    SVC-R042), and served without the file it answers with its fallback."""
    source = tmp_path / "careful.py"
    source.write_text(
        "import json\n"
        "from pathlib import Path\n\n"
        'CATALOG = Path(__file__).parent / "catalog.json"\n\n\n'
        "def tested(item: str) -> float:\n"
        "    if not CATALOG.exists():\n"
        "        return 0.0\n"
        "    return json.loads(CATALOG.read_text())[item]\n\n\n"
        "def tried(item: str) -> float:\n"
        "    try:\n"
        "        return json.loads(CATALOG.read_text())[item]\n"
        "    except FileNotFoundError:\n"
        "        return 0.0\n\n\n"
        "def _load() -> dict[str, float]:\n"
        "    return json.loads(CATALOG.read_text())\n\n\n"
        "def around(item: str) -> float:\n"
        "    try:\n"
        "        return _load()[item]\n"
        "    except OSError:\n"
        "        return 0.0\n"
    )
    found = _inspect(source)
    assert {name: a["class"] for name, a in found.items()} == dict.fromkeys(
        ("tested", "tried", "around"), "eligible"
    )
    bundle = tmp_path / "rest"
    generate(source, bundle)
    with serving(bundle) as server, server.client() as client:
        for name in ("tested", "tried", "around"):
            answer = client.post(f"/capabilities/{name}", json={"item": "pear"})
            assert answer.status_code == 200, server.log_text()
            assert answer.json() == 0.0


def test_a_name_every_branch_binds_is_judged_when_all_its_values_are(tmp_path: Path) -> None:
    """``if``/``else`` or a loop over literals binding a name: judged when every value is
    undeclared (SVC-R042 per file); when one is declared and one is not, the undeclared one
    may be a branch that never runs: not judged."""
    source = tmp_path / "branches.py"
    source.write_text(
        "from pathlib import Path\n\n"
        "HERE = Path(__file__).parent\n\n\n"
        "def greeting(french: bool) -> str:\n"
        "    if french:\n"
        '        path = HERE / "fr.txt"\n'
        "    else:\n"
        '        path = HERE / "en.txt"\n'
        "    return path.read_text()\n\n\n"
        "def both() -> str:\n"
        "    text = ''\n"
        '    for path in (HERE / "fr.txt", HERE / "en.txt"):\n'
        "        text += path.read_text()\n"
        "    return text\n"
    )
    (tmp_path / "fr.txt").write_text("bonjour")
    found = _inspect(source)
    for name in ("greeting", "both"):
        messages = [r["message"] for r in found[name]["reasons"]]
        assert [r["code"] for r in found[name]["reasons"]] == ["SVC-R042", "SVC-R042"], name
        assert any("reads fr.txt" in m for m in messages)
        assert any("reads en.txt" in m for m in messages)
    partly = _inspect(source, "--data", str(tmp_path / "fr.txt"))
    assert partly["greeting"]["class"] == partly["both"]["class"] == "eligible"


def test_a_passed_value_is_not_read_in_the_helpers_scope(tmp_path: Path) -> None:
    """A helper given the caller's local name: the value was pasted into the helper and the
    name looked up there, where it is another variable (here a cwd-relative literal, a false
    SVC-R043); a module-level path passed in is still followed."""
    source = tmp_path / "scopes.py"
    source.write_text(
        "from pathlib import Path\n\n"
        "HERE = Path(__file__).parent\n\n\n"
        "def _load(name):\n"
        '    p = "wrong.json"\n'
        "    return open(name).read()\n\n\n"
        "def local() -> str:\n"
        '    p = "/etc/hostname"\n'
        "    return _load(p)\n\n\n"
        "def module_level() -> str:\n"
        '    return _load(HERE / "c.json")\n'
    )
    found = _inspect(source)
    assert found["local"]["reasons"] == [], found["local"]["reasons"]
    assert [r["code"] for r in found["module_level"]["reasons"]] == ["SVC-R042"]


def test_reads_are_judged_for_what_the_code_reads(tmp_path: Path) -> None:
    """Four false verdicts of the second look: a helper's parameter named like a module-level
    path was read as that path (a false SVC-R042 naming a file never read); ``io.open(p)``
    was taken to read the module ``io`` (never judged, where ``open(p)`` is); a binding the
    same block replaces counted as a value (``'x.json'`` never read); a handler that
    re-raises was taken to cope with the missing file (eligible, and every call fails)."""
    source = tmp_path / "precise.py"
    source.write_text(
        "import io\n"
        "from pathlib import Path\n\n"
        "HERE = Path(__file__).parent\n"
        'path = HERE / "default.json"\n\n\n'
        "def _load(path):\n"
        "    return path.read_text()\n\n\n"
        "def helper() -> str:\n"
        '    return _load(HERE / "other.json")\n\n\n'
        "def via_io(french: bool) -> str:\n"
        "    if french:\n"
        '        p = HERE / "fr.txt"\n'
        "    else:\n"
        '        p = HERE / "en.txt"\n'
        "    return io.open(p).read()\n\n\n"
        "def rebound() -> str:\n"
        '    p = "x.json"\n'
        '    p = "y.json"\n'
        "    return open(p).read()\n\n\n"
        "def reraised() -> str:\n"
        "    try:\n"
        '        return open("d.json").read()\n'
        "    except OSError as exc:\n"
        '        raise RuntimeError("no data") from exc\n'
    )
    found = _inspect(source)

    def said(name: str) -> list[tuple[str, str]]:
        return [(r["code"], r["message"]) for r in found[name]["reasons"]]

    assert [code for code, _ in said("helper")] == ["SVC-R042"], said("helper")
    assert "other.json" in said("helper")[0][1]
    assert not any("default.json" in m for _, m in said("helper"))
    assert [code for code, _ in said("via_io")] == ["SVC-R042", "SVC-R042"], said("via_io")
    assert [code for code, _ in said("rebound")] == ["SVC-R043"], said("rebound")
    assert "y.json" in said("rebound")[0][1]
    assert [code for code, _ in said("reraised")] == ["SVC-R043"], said("reraised")


# -- paths above the module's folder, and absolute parts --------------------------------------

# ``src/pkg/mod.py`` reading ``src/data/x.json`` (the src layout's usual spellings), and
# loading it at import; ``far`` climbs above the source root to the project's own ``data/``.
ABOVE = (
    "import json\n"
    "import os\n"
    "from pathlib import Path\n\n"
    "HERE = Path(__file__).parent\n"
    'TABLE = json.loads((HERE.parent / "data" / "x.json").read_text())\n\n\n'
    "def through_here() -> str:\n"
    '    return (HERE.parent / "data" / "x.json").read_text()\n\n\n'
    "def through_file() -> str:\n"
    '    return (Path(__file__).parent.parent / "data" / "x.json").read_text()\n\n\n'
    "def through_parents() -> str:\n"
    '    return (Path(__file__).parents[1] / "data" / "x.json").read_text()\n\n\n'
    "def through_os_path() -> str:\n"
    '    with open(os.path.join(os.path.dirname(__file__), "..", "data", "x.json")) as f:\n'
    "        return f.read()\n\n\n"
    "def table() -> int:\n"
    '    return int(TABLE["rows"])\n'
)
FAR = (
    "from pathlib import Path\n\n\n"
    "def far() -> str:\n"
    '    return (Path(__file__).parent.parent.parent / "data" / "x.json").read_text()\n'
)
READERS = ("through_here", "through_file", "through_parents", "through_os_path")


def _src_layout(root: Path, data_files: str) -> Path:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "p"\nversion = "0"\n\n[tool.svcc]\ndata-files = {data_files}\n'
    )
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "src" / "pkg" / "mod.py").write_text(ABOVE)
    (root / "src" / "pkg" / "far.py").write_text(FAR)
    for data in (root / "src" / "data", root / "data"):
        data.mkdir()
        (data / "x.json").write_text('{"rows": 3}')
    return root


def _reasons_of(root: Path) -> dict[str, list[tuple[str, str]]]:
    proc = run_svcc("inspect", str(root), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return {
        a["name"]: [(r["code"], r["message"]) for r in a["reasons"]]
        for f in json.loads(proc.stdout)["files"].values()
        for a in f["assessments"]
    }


def test_reads_above_the_modules_folder_are_judged_like_reads_beside_it(tmp_path: Path) -> None:
    """Undeclared, each spelling of ``src/data/x.json`` read from ``src/pkg/mod.py`` is
    SVC-R042 (at import SVC-R026), as a read beside the module is; they were eligible, and
    every call failed. A read climbing above the source root (``data/x.json`` of the
    project) is SVC-R042 even though the tree holds the file: no bundle can."""
    found = _reasons_of(_src_layout(tmp_path / "undeclared", "[]"))
    for name in READERS:
        (code, message), *_ = [r for r in found[name] if r[0] == "SVC-R042"]
        assert "reads ../data/x.json above the module's folder on every call" in message
    (import_time,) = found["table"]
    assert import_time[0] == "SVC-R026"
    assert "it reads ../data/x.json, which is not a declared data file" in import_time[1]
    ((code, message),) = found["far"]
    assert code == "SVC-R042"
    assert "reads ../../data/x.json on every call, which climbs above" in message


def test_a_declared_file_above_the_modules_folder_is_served(tmp_path: Path) -> None:
    """Declared (``src/data/x.json``: ``source/data/x.json`` in the bundle), the same reads
    are eligible, and the served bundle reads the file on every call and at import; the read
    above the source root stays refused (declaring the project's ``data/x.json`` is refused
    itself: it is outside the source roots)."""
    root = _src_layout(tmp_path / "declared", '["src/data/x.json"]')
    found = _reasons_of(root)
    assert {name: found[name] for name in (*READERS, "table")} == {
        name: [] for name in (*READERS, "table")
    }
    assert [code for code, _ in found["far"]] == ["SVC-R042"]
    bundle = tmp_path / "rest"
    selected = ",".join(f"pkg.mod.{name}" for name in (*READERS, "table"))
    proc = run_svcc(
        "compile", str(root), "--target", "rest", "--output-dir", str(bundle),
        "--select", selected,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (bundle / "source" / "data" / "x.json").read_text() == '{"rows": 3}'
    with serving(bundle) as server, server.client() as client:
        for name in READERS:
            answer = client.post(f"/capabilities/pkg.mod.{name}", json={})
            assert answer.status_code == 200, server.log_text()
            assert answer.json() == '{"rows": 3}'
        rows = client.post("/capabilities/pkg.mod.table", json={})
        assert rows.status_code == 200, server.log_text()
        assert rows.json() == 3


def test_a_single_modules_read_above_its_folder_climbs_out_of_the_bundle(tmp_path: Path) -> None:
    """A lone module is its own source root: any read above its folder is refused, per call
    and at import, with the reason (not "undeclared": --data cannot declare it)."""
    (tmp_path / "x.json").write_text("{}")
    source = tmp_path / "app" / "lone.py"
    source.parent.mkdir()
    source.write_text(
        "from pathlib import Path\n\n"
        'UP = (Path(__file__).parent.parent / "x.json").read_text()\n\n\n'
        "def load() -> str:\n"
        '    return (Path(__file__).parent.parent / "x.json").read_text()\n'
    )
    reasons = _inspect(source)["load"]["reasons"]
    assert [r["code"] for r in reasons] == ["SVC-R026", "SVC-R042"]
    climbs = "it reads ../x.json, which climbs above the module's source root"
    assert climbs in reasons[0]["message"]
    assert "reads ../x.json on every call, which climbs above" in reasons[1]["message"]
    assert "move the file below the source root" in reasons[1]["hint"]


def _paths(source: str) -> dict[str, list[tuple[str | None, str | None]]]:
    """Each capability's recorded reads: (``Evaluation.path``, ``Evaluation.literal``)."""
    ir = read_python(
        source.encode(), path="pkg/mod.py", module="pkg.mod", python_version=(3, 11)
    ).ir
    assert ir is not None
    return {
        cap.name: [
            (e.path, e.literal)
            for e in cap.effects
            if reads_file(normalise(e.callee or "")) and (e.path or e.literal)
        ]
        for cap in ir.capabilities
    }


@pytest.mark.parametrize(
    ("spelt", "path"),
    [
        ('HERE / "x.json"', "x.json"),
        ('HERE.parent / "x.json"', "../x.json"),
        ('HERE / ".." / "x.json"', "../x.json"),
        ('HERE / "../data/../x.json"', "../x.json"),
        # pathlib's .parent and os.path.dirname drop the last part as spelt, ``..`` included
        ('(HERE / "sub" / "..").parent / "x.json"', "sub/x.json"),
        ('(HERE / "sub" / "..").resolve().parent / "x.json"', "../x.json"),
        ('Path(os.path.dirname(os.path.join(HERE, "sub", ".."))) / "x.json"', "sub/x.json"),
        ('Path(os.path.normpath(os.path.join(HERE, "sub", ".."))).parent / "x.json"', "../x.json"),
        ('Path(__file__).parents[0] / "x.json"', "x.json"),
        ('Path(__file__).parents[2] / "x.json"', "../../x.json"),
        ('Path(__file__).with_name("x.json")', "x.json"),
        ('HERE.with_name("x.json")', "../x.json"),
        ('HERE.joinpath("..", "x.json")', "../x.json"),
    ],
)
def test_a_path_is_followed_as_pathlib_builds_it(spelt: str, path: str) -> None:
    """Above the module's folder too, and lexically: ``..`` is collapsed only where the
    code collapses it (``resolve()``, ``os.path.normpath``)."""
    reads = _paths(
        "import os\nfrom pathlib import Path\n\nHERE = Path(__file__).parent\n\n\n"
        f"def f() -> str:\n    return ({spelt}).read_text()\n"
    )
    assert reads["f"] == [(path, None)]


def test_an_absolute_part_is_a_read_of_that_absolute_path(tmp_path: Path) -> None:
    """pathlib and os.path.join drop what an absolute part is joined to: ``HERE /
    "/etc/hostname"`` reads ``/etc/hostname``, as ``open("/etc/hostname")`` does, and is
    judged so (eligible, per call); it was read as ``etc/hostname`` beside the module
    (SVC-R042, or accepted when a file ``etc/hostname`` beside the module was declared)."""
    spellings = (
        'open("/etc/hostname").read()',
        '(Path(__file__).parent / "/etc/hostname").read_text()',
        '(HERE / "/etc/hostname").read_text()',
        'HERE.joinpath("/etc/hostname").read_text()',
        'open(os.path.join(os.path.dirname(__file__), "/etc/hostname")).read()',
    )
    source = "import os\nfrom pathlib import Path\n\nHERE = Path(__file__).parent\n"
    for n, spelt in enumerate(spellings):
        source += f"\n\ndef f{n}() -> str:\n    return {spelt}\n"
    assert set(map(tuple, _paths(source).values())) == {((None, "/etc/hostname"),)}
    module = tmp_path / "hosts.py"
    module.write_text(source)
    found = _inspect(module)
    assert {found[f"f{n}"]["class"] for n in range(len(spellings))} == {"eligible"}
    # at import: any read of the machine's file, never the declared one beside the module
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "hostname").write_text("not the machine's")
    module.write_text(source + '\nNAME = (HERE / "/etc/hostname").read_text()\n')
    reasons = _inspect(module, "--data", str(tmp_path / "etc" / "hostname"))["f0"]["reasons"]
    assert [r["code"] for r in reasons] == ["SVC-R026"]
    assert reasons[0]["message"].endswith("runs at import: file, network or process I/O")


def test_a_single_module_of_a_package_declares_a_file_above_its_folder(tmp_path: Path) -> None:
    """``svcc generate rest src/pkg/mod.py --data src/data/x.json``: the file is below the
    module's source root (``src``), so the bundle holds it at ``source/data/x.json`` where
    the module reads it; ``--data`` refused it ("not below the module's folder"), so the
    SVC-R042 hint to declare it led nowhere."""
    root = _src_layout(tmp_path / "p", "[]")
    module, data = root / "src" / "pkg" / "mod.py", root / "src" / "data" / "x.json"
    assert {a["class"] for a in _inspect(module).values()} == {"conditional"}
    assert {a["class"] for a in _inspect(module, "--data", str(data)).values()} == {"eligible"}
    bundle = tmp_path / "rest"
    generate(module, bundle, "--data", str(data))
    assert (bundle / "source" / "data" / "x.json").read_text() == '{"rows": 3}'
    with serving(bundle) as server, server.client() as client:
        answer = client.post("/capabilities/through_parents", json={})
        assert answer.status_code == 200, server.log_text()
        assert answer.json() == '{"rows": 3}'
        rows = client.post("/capabilities/table", json={})
        assert rows.json() == 3


def test_a_read_in_a_nested_function_never_called_does_not_run(tmp_path: Path) -> None:
    """A nested ``def`` (or a lambda bound to a name) that the function never names again
    never runs: its read, or its call of a module loader, was judged as the function's
    (SVC-R042, a working function refused). Called, handed on, decorated (a decorator may
    call it) or a class body (runs where it stands), the read is still judged."""
    source = tmp_path / "nested.py"
    source.write_text(
        "import functools\n"
        "from pathlib import Path\n\n"
        "HERE = Path(__file__).parent\n\n\n"
        "def _catalog() -> str:\n"
        '    return (HERE / "missing.json").read_text()\n\n\n'
        "def unused() -> int:\n"
        "    def _load() -> str:\n"
        '        return (HERE / "missing.json").read_text()\n\n'
        "    def _through() -> str:\n"
        "        return _catalog()\n\n"
        '    _lazy = lambda: (HERE / "missing.json").read_text()  # noqa: E731\n'
        "    return 1\n\n\n"
        "def called() -> str:\n"
        "    def _load() -> str:\n"
        '        return (HERE / "missing.json").read_text()\n\n'
        "    return _load()\n\n\n"
        "def handed_on() -> list[str]:\n"
        "    def _load(n: int) -> str:\n"
        '        return (HERE / "missing.json").read_text()\n\n'
        "    return list(map(_load, range(2)))\n\n\n"
        "def decorated() -> int:\n"
        "    @functools.cache\n"
        "    def _load() -> str:\n"
        '        return (HERE / "missing.json").read_text()\n\n'
        "    return 1\n\n\n"
        "def in_a_class() -> int:\n"
        "    class Table:\n"
        '        data = (HERE / "missing.json").read_text()\n\n'
        "    return len(Table.data)\n"
    )
    found = _inspect(source)
    assert found["unused"]["reasons"] == [], found["unused"]["reasons"]
    for name in ("called", "handed_on", "decorated", "in_a_class"):
        assert [r["code"] for r in found[name]["reasons"]] == ["SVC-R042"], name
