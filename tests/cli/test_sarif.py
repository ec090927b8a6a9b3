"""``svcc inspect --format sarif``: a SARIF 2.1.0 log valid against the official schema
(vendored in ``tests/schemas/``, the OASIS errata01 file), one rule per code, results where
the reasons are."""

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers import ROOT, TESTS, case_input, cases, run_svcc
from svcc.cli.sarif import file_sources, region, sarif_log, uri_of
from svcc.contracts.diagnostics.codes import REGISTRY
from svcc.contracts.diagnostics.reporting import code_url, level_of
from svcc.ir.model import Span
from test_golden import analyse

SCHEMA = json.loads((TESTS / "schemas" / "sarif-schema-2.1.0.json").read_text())
VALIDATOR = jsonschema.Draft4Validator(SCHEMA)


def valid(log: dict[str, Any]) -> dict[str, Any]:
    errors = sorted(VALIDATOR.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    return log


def results(log: dict[str, Any]) -> list[dict[str, Any]]:
    return list(log["runs"][0]["results"])


def test_the_vendored_schema_is_the_official_one() -> None:
    assert SCHEMA["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert SCHEMA["id"].endswith("/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    # and it refuses what it should: the check can fail
    assert list(VALIDATOR.iter_errors({"version": "2.1.0", "runs": [{"tool": {}}]}))


@pytest.mark.parametrize("case", cases())
def test_every_golden_case_validates(case: str) -> None:
    analysis = analyse(case)
    log = valid(sarif_log(file_sources(case_input(case).name, analysis)))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    reasons = {
        r for a in (analysis.readiness.assessments if analysis.readiness else ()) for r in a.reasons
    }
    expected = {d.code for d in (*analysis.diagnostics, *reasons)}
    found = results(log)
    assert {r["ruleId"] for r in found} == expected
    for r in found:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] == level_of(r["ruleId"])
    # one result per reason, whatever the number of functions it is a reason of
    assert len(found) == len({*analysis.diagnostics, *reasons})


def test_one_rule_per_code() -> None:
    log = valid(sarif_log([]))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(REGISTRY)
    r007 = next(r for r in rules if r["id"] == "SVC-R007")
    assert r007["name"] == "ModuleLevelStatementWithImportTimeEffects"
    assert r007["shortDescription"]["text"] == REGISTRY["SVC-R007"].title
    assert r007["fullDescription"]["text"] == REGISTRY["SVC-R007"].explanation
    assert r007["help"]["text"] == REGISTRY["SVC-R007"].hint
    assert r007["helpUri"] == code_url("SVC-R007")
    assert r007["helpUri"].endswith("/diagnostics/#svc-r007")
    assert r007["defaultConfiguration"] == {"level": "warning"}  # conditional
    assert next(r for r in rules if r["id"] == "SVC-R014")["defaultConfiguration"] == {
        "level": "error"  # unsupported
    }
    assert next(r for r in rules if r["id"] == "SVC-R004")["defaultConfiguration"] == {
        "level": "note"  # a warning: still served
    }


def test_levels_follow_the_class() -> None:
    assert level_of("SVC-R011") == "error"  # unsupported
    assert level_of("SVC-R002") == "error"  # ambiguous
    assert level_of("SVC-R028") == "warning"  # conditional
    assert level_of("SVC-R004") == "note"  # warning
    assert level_of("SVC-F012") == "none"  # a note: what svcc did
    assert level_of("SVC-F001") == "error"  # the front end stopped


def test_regions_are_one_based_with_an_exclusive_end() -> None:
    assert region(Span(line=3, column=0, end_line=3, end_column=5)) == {
        "startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 6,
    }  # fmt: skip
    assert region(Span(line=2, column=4, end_line=4, end_column=0))["endColumn"] == 1
    assert uri_of("./src/a b.py") == "src/a%20b.py"
    assert uri_of("/abs/x.py") == "file:///abs/x.py"


PRINTS = """\
import math

print("loading")


def area(r: float) -> float:
    return math.pi * r * r


def scale(x, factor=2):
    return x * factor
"""


def test_inspect_file(tmp_path: Path) -> None:
    source = tmp_path / "geometry.py"
    source.write_text(PRINTS)
    proc = run_svcc("inspect", "geometry.py", "--format", "sarif", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    log = valid(json.loads(proc.stdout))
    by_code = {r["ruleId"]: r for r in results(log)}
    assert set(by_code) == {"SVC-R028", "SVC-R004"}
    printed = by_code["SVC-R028"]
    assert printed["level"] == "warning"
    location = printed["locations"][0]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": "geometry.py"}
    assert location["physicalLocation"]["region"]["startLine"] == 3
    assert location["physicalLocation"]["region"]["startColumn"] == 1
    # the module-wide reason is said once, naming every function it blocks
    assert printed["properties"]["capabilities"] == {
        "python:geometry:area": "conditional",
        "python:geometry:scale": "conditional",
    }
    assert [x["name"] for x in location["logicalLocations"]] == ["area", "scale"]
    untyped = by_code["SVC-R004"]
    assert untyped["level"] == "note"
    assert untyped["locations"][0]["physicalLocation"]["region"]["startLine"] == 10
    assert "hint: annotate the parameter" in untyped["message"]["text"]
    # same input, same bytes
    again = run_svcc("inspect", "geometry.py", "--format", "sarif", cwd=tmp_path)
    assert again.stdout == proc.stdout


def test_inspect_a_file_that_does_not_parse(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    proc = run_svcc("inspect", "broken.py", "--format", "sarif", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("svcc: error: broken.py:1:")
    log = valid(json.loads(proc.stdout))
    assert [r["ruleId"] for r in results(log)] == ["SVC-F001"]
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": False}]


def test_inspect_a_notebook() -> None:
    notebook = case_input("notebook_magics")
    proc = run_svcc("inspect", str(notebook), "--format", "sarif")
    assert proc.returncode == 0, proc.stderr
    log = valid(json.loads(proc.stdout))
    found = results(log)
    assert found
    for r in found:
        physical = r["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == uri_of(str(notebook))
        assert "region" not in physical  # a cell is not a region of the JSON file
        if "properties" in r and "cell" in r["properties"]:
            cell, line = r["properties"]["cell"], r["properties"]["line"]
            assert r["message"]["text"].startswith(f"cell {cell}, line {line}: ")


def test_inspect_a_directory(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "geometry.py").write_text(PRINTS)
    (repo / "pkg" / "fine.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    (repo / "pkg" / "broken.py").write_text("def f(:\n")
    proc = run_svcc("inspect", "proj", "--format", "sarif", cwd=tmp_path)
    assert proc.returncode == 2  # a module did not analyse, as for the other formats
    log = valid(json.loads(proc.stdout))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results(log)}
    assert uris == {"proj/pkg/geometry.py", "proj/pkg/broken.py"}
    codes = sorted(r["ruleId"] for r in results(log))
    assert codes == ["SVC-F001", "SVC-R004", "SVC-R004", "SVC-R028"]  # x and factor
    printed = next(r for r in results(log) if r["ruleId"] == "SVC-R028")
    assert set(printed["properties"]["capabilities"]) == {
        "python:pkg.geometry:area",
        "python:pkg.geometry:scale",
    }


def test_inspect_the_examples_directory() -> None:
    proc = run_svcc("inspect", str(ROOT / "examples"), "--format", "sarif")
    assert proc.returncode == 0, proc.stderr
    valid(json.loads(proc.stdout))


def test_the_manual_can_be_hosted_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVCC_MANUAL_URL", "https://docs.example.test/svcc")
    assert code_url("SVC-R004") == "https://docs.example.test/svcc/diagnostics/#svc-r004"
    log = valid(sarif_log([]))
    assert log["runs"][0]["tool"]["driver"]["informationUri"] == "https://docs.example.test/svcc/"
