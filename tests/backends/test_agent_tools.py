"""Tools agents can trust: hints derived from the effect analysis, in every document.

The golden case ``agent_hints`` holds one function per outcome (pure, a declared data file
read, a write under ``--allow paths``, a process under ``--allow process``, the network, an
unknown call); its ``mcp-tools.json`` and ``openapi.json`` are pinned by the bundle goldens,
and the outcomes are spelt here. The safety rule (nothing that may write, start a process or
reach the network is ever read-only) is checked against an independent, cruder reading of
the source over every golden case and the test corpora.
"""

import ast
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers import GOLDEN, ROOT, case_input, case_options, cases, run_svcc
from mcp_client import McpBundle
from servers import generate
from svcc.compiler.driver import Analysis, analyze_file
from svcc.compiler.passes.tool_effects import kind_of, title_of, tool_effects

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
# (readOnly, destructive, idempotent, openWorld) per outcome
PURE = (True, False, True, False)
READS = (True, False, True, False)
WRITES = (False, True, False, False)
PROCESS = (False, True, False, True)
NETWORK = (False, True, False, True)
UNKNOWN = (False, True, False, True)


def hints_of(tool_or_effects: dict[str, Any]) -> tuple[bool, ...]:
    return tuple(tool_or_effects[h] for h in HINTS)


def analyse_text(tmp_path: Path, source: str, *allow: str) -> Analysis:
    path = tmp_path / "tools.py"
    path.write_text(textwrap.dedent(source))
    return analyze_file(path, python_version="3.11", allow=frozenset(allow))


def effects(tmp_path: Path, source: str, *allow: str) -> dict[str, dict[str, Any]]:
    analysis = analyse_text(tmp_path, source, *allow)
    assert analysis.ir is not None
    return {c.name: tool_effects(c).to_json() for c in analysis.ir.capabilities}


def test_each_outcome_in_the_golden_documents() -> None:
    tools = json.loads((GOLDEN / "agent_hints/mcp/mcp-tools.json").read_text())["tools"]
    openapi = json.loads((GOLDEN / "agent_hints/rest/openapi.json").read_text())
    expected = {
        "circle_area": (PURE, {}),
        "price_of": (READS, {"reads"}),
        "save_note": (WRITES, {"writes"}),
        "disk_usage": (PROCESS, {"processes"}),
        "status_of": (NETWORK, {"network"}),
        "platform_name": (UNKNOWN, {"unknown"}),
    }
    assert {t["name"] for t in tools} == set(expected)
    for tool in tools:
        hints, kinds = expected[tool["name"]]
        annotations = tool["annotations"]
        assert set(annotations) == {"title", *HINTS}, "every hint is written out"
        assert hints_of(annotations) == hints, tool["name"]
        assert annotations["title"] == tool["title"]
        operation = openapi["paths"][f"/capabilities/{tool['name']}"]["post"]
        extension = operation["x-svc-effects"]
        assert hints_of(extension["hints"]) == hints
        assert set(extension["facts"]) == set(kinds)
        assert set(extension["reasons"]) == set(HINTS)
    readiness = json.loads((GOLDEN / "agent_hints/analysis/readiness.json").read_text())
    for assessment in readiness["assessments"]:
        operation = openapi["paths"][f"/capabilities/{assessment['name']}"]["post"]
        assert assessment["effects"] == operation["x-svc-effects"], "one object, two documents"


def test_titles() -> None:
    assert title_of("circle_area", None) == "Circle area"
    assert title_of("circle_area", "Area of a circle.\n\nMore text.") == "Area of a circle"
    assert title_of("pkg.mod.to_upper", "") == "To upper"
    assert title_of("wait", "Wait...") == "Wait..."


def test_idioms_that_hide_an_effect(tmp_path: Path) -> None:
    found = effects(
        tmp_path,
        """
        import os
        import shutil
        from functools import lru_cache
        from pathlib import Path

        HISTORY = []

        def _store(name, text):
            Path(name).write_text(text)

        def through_a_helper(name: str) -> None:
            _store(name, "x")

        def as_a_value(names: list[str]) -> None:
            list(map(os.remove, names))

        def through_a_local(name: str) -> None:
            target = Path("/tmp") / "notes"
            target.unlink()

        def imported_inside(url: str) -> int:
            import urllib.request as web
            return web.urlopen(url).status

        def mode_not_spelt(mode: str) -> None:
            open("/tmp/x", mode)

        def remembered(x: int) -> int:
            HISTORY.append(x)
            return len(HISTORY)

        @lru_cache
        def _square(x):
            return x * x

        def cached(x: int) -> int:
            return _square(x)

        def nested(xs: list[int]) -> list[int]:
            def twice(v):
                return v * 2
            key = lambda v: -v
            return sorted(map(twice, xs), key=key)

        def copies(a: str, b: str) -> None:
            shutil.copy(a, b)
        """,
        "paths",
    )
    kinds = {name: set(doc["facts"]) for name, doc in found.items()}
    assert kinds["through_a_helper"] == {"writes"}
    assert kinds["as_a_value"] == {"writes"}
    assert kinds["through_a_local"] == {"writes"}
    assert kinds["imported_inside"] == {"network"}
    assert kinds["mode_not_spelt"] == {"writes"}
    assert kinds["remembered"] == {"state"}
    assert kinds["cached"] == {"cache"}
    assert kinds["nested"] == set()
    assert kinds["copies"] == {"writes"}
    for name in ("through_a_helper", "as_a_value", "through_a_local", "copies", "remembered"):
        assert not found[name]["hints"]["readOnlyHint"], name
        assert found[name]["hints"]["destructiveHint"], name
    assert found["cached"]["hints"]["readOnlyHint"]
    assert not found["cached"]["hints"]["idempotentHint"], "a cache is not idempotent"
    assert hints_of(found["nested"]["hints"]) == PURE


def test_unknown_gives_every_hint_its_unsafe_value(tmp_path: Path) -> None:
    found = effects(
        tmp_path,
        """
        import sysconfig

        def calls_a_parameter_method(frame: dict) -> object:
            return frame.to_records()

        def unknown_library() -> str:
            return sysconfig.get_platform()

        def too_deep(x: int) -> int:
            return _a(x)

        def _a(x): return _b(x)
        def _b(x): return _c(x)
        def _c(x): return _d(x)
        def _d(x): return _e(x)
        def _e(x): return x
        """,
    )
    for name in ("calls_a_parameter_method", "unknown_library", "too_deep"):
        assert hints_of(found[name]["hints"]) == UNKNOWN, name
        assert "unknown" in found[name]["facts"], name
        assert found[name]["reasons"]["readOnlyHint"].startswith("false: it calls what")


def test_kind_table() -> None:
    assert kind_of("builtins.open[r]") == "reads"
    assert kind_of("builtins.open[w]") == "writes"
    assert kind_of("builtins.open[?]") == "writes"
    assert kind_of("pathlib.Path().parent.open[r]") == "reads"
    assert kind_of("pickle.loads") == "evaluates"
    assert kind_of("time.sleep") is None
    assert kind_of("time.time") == "nondeterministic"
    assert kind_of("?.strip().split") is None
    assert kind_of("?.to_csv") == "unknown"
    assert kind_of("?object.strip") == "unknown"
    assert kind_of("&re.IGNORECASE") is None
    assert kind_of("&os.remove") == "writes"
    assert kind_of("&numpy.pi") == "unknown"
    assert kind_of("requests.Session().get") == "network"


# -- the safety rule over every corpus ---------------------------------------------------------
# Names whose presence in a function (or a module function it names, at any depth) means it
# may write, start a process or reach the network: a crude reading, never narrower than the
# analysis (``replace`` is left out: ``str.replace`` is everywhere).
_EFFECT_WORDS = frozenset(
    {
        "write", "writelines", "write_text", "write_bytes", "unlink", "remove", "rmdir",
        "removedirs", "rmtree", "rename", "renames", "mkdir", "makedirs", "touch", "truncate",
        "chmod", "chown", "symlink", "symlink_to", "copy", "copyfile", "copytree", "move",
        "subprocess", "Popen", "system", "popen", "fork", "execv", "spawnv", "socket",
        "urlopen", "urllib", "requests", "httpx", "aiohttp", "http", "connect", "sendall",
        "shutil", "tempfile", "sqlite3", "save", "savetxt", "to_csv", "to_json", "dump",
    }
)  # fmt: skip


def _may_change_the_world(tree: ast.Module, name: str) -> bool:
    functions = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    pending, seen, words = [name], set(), set()
    while pending:
        current = pending.pop()
        if current in seen or current not in functions:
            continue
        seen.add(current)
        for node in ast.walk(functions[current]):
            if isinstance(node, ast.Name):
                words.add(node.id)
                pending.append(node.id)
            elif isinstance(node, ast.Attribute):
                words.add(node.attr)
            elif isinstance(node, ast.alias):
                words.update(node.name.split("."))
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "open":
                mode = node.args[1] if len(node.args) > 1 else None
                for keyword in node.keywords:
                    mode = keyword.value if keyword.arg == "mode" else mode
                if mode is not None and not (
                    isinstance(mode, ast.Constant) and not set(str(mode.value)) & set("wax+")
                ):
                    words.add("write")
    return bool(words & _EFFECT_WORDS)


def _corpus() -> list[Path]:
    files = [case_input(c) for c in cases() if case_input(c).suffix == ".py"]
    files += sorted((ROOT / "tests/fixtures").rglob("*.py"))
    files += sorted((ROOT / "examples").rglob("*.py"))
    return files


def test_nothing_that_may_change_the_world_is_read_only() -> None:
    checked = flagged = 0
    for path in _corpus():
        try:
            analysis = analyze_file(path, python_version="3.11")
        except Exception:  # an input the file front end refuses (a repository's part)
            continue
        if analysis.ir is None:
            continue
        tree = ast.parse(path.read_bytes())
        for cap in analysis.ir.capabilities:
            found = tool_effects(cap).to_json()
            checked += 1
            risky = {"writes", "processes", "network"} & set(found["facts"])
            crude = _may_change_the_world(tree, cap.name)
            if risky or crude:
                flagged += 1
                assert not found["hints"]["readOnlyHint"], f"{path}: {cap.name}"
                assert found["hints"]["destructiveHint"] or not risky, f"{path}: {cap.name}"
            if found["hints"]["readOnlyHint"]:
                assert set(found["facts"]) <= {"reads", "cache", "nondeterministic", "output"}
    assert checked > 150
    assert flagged > 10


@pytest.mark.parametrize("case", [c for c in cases() if "targets" in case_options(c)])
def test_golden_tools_are_never_read_only_with_effects(case: str) -> None:
    document = GOLDEN / case / "mcp" / "mcp-tools.json"
    openapi = GOLDEN / case / "rest" / "openapi.json"
    if document.exists():
        for tool in json.loads(document.read_text())["tools"]:
            assert set(tool["annotations"]) == {"title", *HINTS}
    if openapi.exists():
        for item in json.loads(openapi.read_text())["paths"].values():
            extension = item.get("post", {}).get("x-svc-effects")
            if extension is None:
                continue
            risky = {"writes", "processes", "network", "unknown"} & set(extension["facts"])
            assert not (risky and extension["hints"]["readOnlyHint"])


# -- what users see ----------------------------------------------------------------------------
def test_inspect_shows_the_hints() -> None:
    source = str(case_input("agent_hints"))
    data = str(GOLDEN / "agent_hints" / "prices.json")
    allow = "paths,process"
    text = run_svcc("inspect", source, "--format", "text", "--data", data, "--allow", allow)
    assert text.returncode == 0, text.stderr
    assert "TOOL HINTS" in text.stdout
    assert "circle_area" in text.stdout
    hints = text.stdout.split("TOOL HINTS", 1)[1].splitlines()
    line = next(x for x in hints if x.strip().startswith("save_note"))
    assert "not read-only, destructive" in line
    assert "(writes)" in line
    doc = run_svcc("inspect", source, "--format", "json", "--data", data, "--allow", allow)
    assessments = {a["name"]: a for a in json.loads(doc.stdout)["assessments"]}
    assert hints_of(assessments["status_of"]["effects"]["hints"]) == NETWORK


def test_the_official_client_lists_titles_and_annotations(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    source = case_input("agent_hints")
    generate(
        source,
        out,
        "--data",
        str(source.parent / "prices.json"),
        "--allow",
        "paths,process",
        interface="mcp",
    )
    client = McpBundle(out)
    try:
        tools = {t.name: t for t in client.list_tools().tools}
        assert tools["circle_area"].title == "Circle area"
        annotations = tools["circle_area"].annotations
        assert annotations is not None
        assert annotations.title == "Circle area"
        assert (
            annotations.read_only_hint,
            annotations.destructive_hint,
            annotations.idempotent_hint,
            annotations.open_world_hint,
        ) == PURE
        net = tools["status_of"].annotations
        assert net is not None
        assert net.open_world_hint
        assert not net.read_only_hint
    finally:
        client.close()
