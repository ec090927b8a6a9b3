"""A module-level call of another module's function (issue 37, item 3a): its body is run by
that module's evaluator, on that module's values, when everything it does is known; it may
not change that module's containers (every importer shares them), nor hand one back."""

from pathlib import Path

import pytest
from svcc.compiler.driver import analyze_repository

API = (
    "from .helpers import build\n\nSQUARES = build(4)\n\n\n"
    "def area(x: int) -> int:\n    return SQUARES.get(x, 0)\n"
)


def _verdict(root: Path, helpers: str, api: str = API) -> tuple[str, list[str]]:
    package = root / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(helpers)
    (package / "api.py").write_text(api)
    reports = analyze_repository(package.parent, python_version="3.11", strict=False).reports
    found = {a.name: a for a in reports["pkg.api"].assessments}["area"]
    return found.klass, [r.code for r in found.reasons]


def test_a_table_built_by_another_modules_function_is_known(tmp_path: Path) -> None:
    helpers = "def build(n):\n    return {i: i * i for i in range(n)}\n"
    assert _verdict(tmp_path, helpers) == ("eligible", [])


@pytest.mark.parametrize(
    "helpers",
    [
        # it changes its own module's list
        "SEEN = []\n\n\ndef build(n):\n    SEEN.append(n)\n    return {}\n",
        # it hands its own module's dict back (the reader could change it)
        "TABLE = {}\n\n\ndef build(n):\n    return TABLE\n",
        # it prints
        "def build(n):\n    print(n)\n    return {}\n",
    ],
)
def test_what_another_modules_function_may_not_do_stays_refused(
    tmp_path: Path, helpers: str
) -> None:
    klass, codes = _verdict(tmp_path, helpers)
    assert klass != "eligible", codes


def test_an_instance_of_another_modules_class_does_not_cross(tmp_path: Path) -> None:
    # ``get`` calls helpers.helper (which prints), not api.helper: the evaluator does not
    # run another module's method in the reader's namespace
    helpers = (
        "def helper():\n    print('x')\n    return 1\n\n\n"
        "class Box:\n    def get(self):\n        return helper()\n\n\n"
        "def build(n):\n    return Box()\n"
    )
    api = API.replace(
        "SQUARES = build(4)", "def helper():\n    return 1\n\n\nV = build(4).get()\nSQUARES = {}"
    )
    klass, codes = _verdict(tmp_path, helpers, api)
    assert klass != "eligible", codes
