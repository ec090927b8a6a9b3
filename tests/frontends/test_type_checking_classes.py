"""Classes defined under ``if TYPE_CHECKING:`` used in an annotation get a verdict, never an
internal "invalid IR" error (exit 3). A TypedDict is a plain ``dict`` at run time, its schema
in the IR: served when the annotation is not evaluated at import (quoted, or ``from
__future__ import annotations``) and refused with ``SVC-R023`` when it is (a ``NameError``).
A dataclass, enum or other class is built by the server from its class, which does not
exist at run time: ``SVC-R011``.
"""

from pathlib import Path

import pytest
from helpers import run_svcc
from servers import generate, serving
from svcc.compiler.driver import analyze_source

TYPED_DICT = (
    "from typing import TYPE_CHECKING, TypedDict\n\n"
    "if TYPE_CHECKING:\n"
    "    class Point(TypedDict):\n"
    "        x: int\n"
    "        y: int\n\n\n"
    'def norm(p: "Point") -> int:\n'
    '    return p["x"] + p["y"]\n'
)

CASES = {
    "typed_dict_quoted": (TYPED_DICT, "eligible", ()),
    "typed_dict_future": (
        "from __future__ import annotations\n" + TYPED_DICT.replace('"Point"', "Point"),
        "eligible",
        (),
    ),
    "typed_dict_evaluated": (
        TYPED_DICT.replace('"Point"', "Point"),
        "unsupported",
        ("SVC-R023",),
    ),
    "typed_dict_else_alias": (
        TYPED_DICT.replace('"Point"', "Point").replace(
            "        y: int\n", "        y: int\nelse:\n    Point = dict\n"
        ),
        "eligible",
        (),
    ),
    "dataclass": (
        "from __future__ import annotations\n"
        "from dataclasses import dataclass\nfrom typing import TYPE_CHECKING\n\n"
        "if TYPE_CHECKING:\n    @dataclass\n    class P:\n        x: int\n\n\n"
        "def f(p: P) -> int:\n    return p.x\n",
        "unsupported",
        ("SVC-R011",),
    ),
    "enum": (
        "from __future__ import annotations\nfrom enum import Enum\n"
        "from typing import TYPE_CHECKING\n\n"
        'if TYPE_CHECKING:\n    class Color(Enum):\n        RED = "red"\n\n\n'
        "def f(c: Color) -> str:\n    return c.value\n",
        "unsupported",
        ("SVC-R011",),
    ),
    "plain_class": (
        "from __future__ import annotations\nfrom typing import TYPE_CHECKING\n\n"
        "if TYPE_CHECKING:\n    class Thing:\n        pass\n\n\n"
        "def f(t: Thing) -> int:\n    return 1\n",
        "unsupported",
        ("SVC-R011",),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_class_under_type_checking_gets_a_verdict(case: str) -> None:
    source, klass, codes = CASES[case]
    analysis = analyze_source(source, path="m.py", python_version="3.11")
    assert analysis.readiness is not None, analysis.diagnostics
    (assessment,) = analysis.readiness.assessments
    assert assessment.klass == klass
    assert tuple(sorted({r.code for r in assessment.blocking()})) == codes


def test_inspect_says_it_with_exit_0(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(CASES["dataclass"][0])
    done = run_svcc("inspect", str(source), "--format", "text")
    assert done.returncode == 0, done.stderr
    assert "defined only under `if TYPE_CHECKING:`" in done.stdout


def test_a_typed_dict_of_the_type_checker_is_served(tmp_path: Path) -> None:
    """The verdict is a promise: the bundle starts and the call answers."""
    source = tmp_path / "points.py"
    source.write_text(TYPED_DICT)
    generate(source, tmp_path / "bundle")
    with serving(tmp_path / "bundle") as server, server.client() as client:
        answer = client.post("/capabilities/norm", json={"p": {"x": 2, "y": 3}})
        assert answer.status_code == 200, answer.text
        assert answer.json() == 5
        assert client.post("/capabilities/norm", json={"p": {"x": "2", "y": 3}}).status_code == 422
