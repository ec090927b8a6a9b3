"""Property tests: any text, any program, any mutation → diagnostics, never an exception."""

import string

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from svcc.compiler.driver import analyze_source
from svcc.ir.serde import ir_from_json

SEED_SOURCES = [
    "def f(a: int, /, b: list[str] = [], *, c: 'X' = None) -> dict[str, int]:\n    return {}\n",
    "from typing import TypedDict\nclass T(TypedDict, total=False):\n    x: 'T'\n",
    "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n\n@dec\nasync def g(*a, **k):\n"
    "    yield 1\n",
]

PROFILE = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def check(source: str | bytes, notebook: bool = False) -> None:
    analysis = analyze_source(
        source, path="fuzz.ipynb" if notebook else "fuzz.py", module="fuzz", python_version="3.11"
    )
    if analysis.ir_json is not None:
        assert ir_from_json(analysis.ir_json) == analysis.ir  # the IR round-trips
        assert analysis.document()["schema"] == "svc.readiness/v1"
    else:
        assert analysis.error is not None
        assert analysis.document()["error"]["code"].startswith("SVC-F")


@PROFILE
@given(st.text())
def test_arbitrary_text(text: str) -> None:
    check(text)


@PROFILE
@given(st.binary())
def test_arbitrary_bytes(data: bytes) -> None:
    check(data)
    check(data, notebook=True)


@PROFILE
@given(hypothesmith.from_grammar())
def test_grammatical_programs(source: str) -> None:
    check(source)


@settings(PROFILE, max_examples=20)  # libcst-generated programs are slow to draw
@given(hypothesmith.from_node())
def test_programs_from_syntax_trees(source: str) -> None:
    check(source)


@PROFILE
@given(st.sampled_from(SEED_SOURCES), st.data())
def test_mutated_source(seed: str, data: st.DataObject) -> None:
    chars = list(seed)
    for _ in range(data.draw(st.integers(1, 8))):
        op = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        pos = data.draw(st.integers(0, len(chars)))
        char = data.draw(st.sampled_from([*list(string.printable), "\x00", "\ufeff", "é"]))
        if op == "insert":
            chars.insert(pos, char)
        elif chars and pos < len(chars):
            if op == "delete":
                del chars[pos]
            else:
                chars[pos] = char
    check("".join(chars))


def test_pathological_inputs() -> None:
    check("x = " + "(" * 500 + ")" * 500)
    check("def f(a: " + "list[" * 300 + "int" + "]" * 300 + "): pass\n")
    check("def f(a: '" + "list[" * 60 + "int" + "]" * 60 + "'): pass\n")
    check("\0def f(): pass")
    check(b"\xff\xfe\x00")
    check(b"# -*- coding: nope -*-\nx = 1\n")
    check("if True:\n" + "".join(" " * i + "if x:\n" for i in range(1, 120)))
