"""Golden IR and readiness documents for the fixture corpus, and exact reason placement.

Each case is ``tests/golden/<case>/input.{py,ipynb}`` (+ ``options.toml``). The emitted
``capability-ir.json`` / ``readiness.json`` (or ``error.json``) sit in ``analysis/`` beside
the input;
``# expect: SVC-R###`` markers pin every reason to its line; ``data = [...]`` in
``options.toml`` declares data files beside the input as ``--data`` does, ``allow = [...]``
opts into security effects as ``--allow`` does.
"""

import json
from typing import Any

import pytest
from golden_ext import GoldenJSON
from helpers import case_input, case_options, case_requirements, cases, expected_markers
from svcc.compiler.driver import Analysis, analyze_file

CASES = cases()


def analyse(case: str) -> Analysis:
    options = case_options(case)
    source = case_input(case)
    return analyze_file(
        source,
        module_name=options.get("module_name", case),
        python_version=options.get("python_version", "3.11"),
        data=[str(source.parent / p) for p in options.get("data", [])],  # declared (--data)
        allow=frozenset(options.get("allow", [])),
        requirements=case_requirements(case),  # opted-in security effects (--allow)
    )


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, snapshot: Any) -> None:
    analysis = analyse(case)
    golden = snapshot.use_extension(GoldenJSON)
    if analysis.ir_json is None:
        assert analysis.document() == golden(name="error")
        return
    assert json.loads(analysis.ir_json) == golden(name="capability-ir")
    assert analysis.document() == golden(name="readiness")


@pytest.mark.parametrize("case", CASES)
def test_reasons_sit_on_marked_lines(case: str) -> None:
    analysis = analyse(case)
    found: set[tuple[str, int | None, int]] = set()
    lineless: set[str] = set()
    reasons = (
        [r for a in analysis.readiness.assessments for r in a.reasons]
        if (analysis.readiness)
        else []
    )
    for diagnostic in [*analysis.diagnostics, *reasons]:
        if diagnostic.span is None:
            lineless.add(diagnostic.code)
        else:
            found.add((diagnostic.code, diagnostic.span.cell, diagnostic.span.line))
    assert found == expected_markers(case_input(case))
    assert lineless == set(case_options(case).get("expect", []))


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 30
    assert any(case_input(c).suffix == ".ipynb" for c in CASES)


@pytest.mark.parametrize("case", CASES)
def test_no_stray_golden_files(case: str) -> None:
    """Unused snapshots fail: a case holds exactly the documents its analysis produces."""
    expected = (
        {"error.json"}
        if analyse(case).ir_json is None
        else {"capability-ir.json", "readiness.json"}
    )
    present = {p.name for p in (case_input(case).parent / "analysis").glob("*.json")}
    assert present == expected
