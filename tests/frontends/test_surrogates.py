"""Lone surrogates (legal in Python strings, not in UTF-8) in sources, string constants,
docstrings, defaults, enum values and patterns: carried through as JSON escapes and shown
escaped in text, never an internal error (issue 37 item 5)."""

import json
from pathlib import Path

import hypothesmith
from helpers import run_svcc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from svcc.compiler.driver import analyze_source
from svcc.ir.serde import ir_from_json
from svcc.service.analysis import analyse_upload

SOURCE = '''"""Module \\ud800 doc."""
import enum
import re
from typing import Literal
X = "\\ud800"
P = re.compile("\\ud800+")
class Color(enum.Enum):
    RED = "\\udcff"
    BLUE = "b"
def f(s: str = "\\udcff", c: Color = Color.BLUE, k: Literal["\\ud801", "b"] = "b") -> str:
    """doc \\ud800"""
    return s + X
'''


def test_inspect_file_and_dir_in_json_and_text(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    for target in (tmp_path / "m.py", tmp_path):
        proc = run_svcc("inspect", str(target), "--format", "json")
        assert proc.returncode in (0, 1), proc.stderr
        json.loads(proc.stdout)
        text = run_svcc("inspect", str(target), "--format", "text")
        assert text.returncode in (0, 1), text.stderr
        assert "internal error" not in text.stderr


def test_the_analysis_service_answers() -> None:
    answer = analyse_upload(
        SOURCE.encode(), "m.py", python_version="3.11", encoding=None, only=None, ignore=[]
    )
    assert json.loads(answer)["functions"]


def test_a_bundle_is_built(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    out = tmp_path / "out"
    proc = run_svcc("compile", str(tmp_path / "m.py"), "--target", "rest", "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "\\udcff" in (out / "openapi.json").read_text()


SURROGATES = st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hypothesmith.from_grammar(), SURROGATES)
def test_programs_holding_surrogates(source: str, text: str) -> None:
    program = (
        f'"""{text!r}"""\n{source}\nX_ = {text!r}\n\n\n'
        f"def g_(s: str = {text!r}) -> str:\n    {text!r}\n    return s + X_\n"
    )
    analysis = analyze_source(program, path="fuzz.py", module="fuzz", python_version="3.11")
    if analysis.ir_json is not None:
        assert ir_from_json(analysis.ir_json) == analysis.ir
        json.dumps(analysis.document())
