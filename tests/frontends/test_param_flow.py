"""Unannotated parameters and the values taken from them (SVC-R037, ``_param_flow``).

Every entry of the reviewed table ``NEEDS_OBJECT`` is checked against the real library: at
the listed position, every kind of JSON value is refused. Helpers whose bodies use the
values in ways some JSON value supports stay eligible, and their bundle answers 200.
"""

import importlib
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from servers import generate, serving
from svcc.compiler.driver import analyze_source
from svcc.contracts.requirements import parse_requirements
from svcc.frontends.python._param_flow import NEEDS_OBJECT

JSON_VALUES: list[Any] = [{"a": 1}, [[1.0, 2.0], [3.0, 4.0]], [1, 2], "text", 2, 1.5, True, None]


def _frame() -> Any:
    import pandas as pd

    return pd.DataFrame({"k": [1, 2], "v": [3.0, 4.0]})


def _xy() -> tuple[list[list[float]], list[int]]:
    return [[0.0], [1.0], [0.0], [1.0], [0.0], [1.0]], [0, 1, 0, 1, 0, 1]


# How each entry is called with ``v`` at the listed position (the other arguments valid).
CALLS: dict[str, Callable[[Callable[..., Any], Any, int], Any]] = {
    "pandas.concat": lambda f, v, _: f([v]) if not isinstance(v, list) else f(v),
    "pandas.merge": lambda f, v, i: f(v, _frame()) if i == 0 else f(_frame(), v),
    "pandas.merge_asof": lambda f, v, i: (
        f(v, _frame(), on="k") if i == 0 else f(_frame(), v, on="k")
    ),
    "pandas.merge_ordered": lambda f, v, i: f(v, _frame()) if i == 0 else f(_frame(), v),
    "numpy.copyto": lambda f, v, _: f(v, 1),
    "numpy.put": lambda f, v, _: f(v, [0], [1]),
    "numpy.place": lambda f, v, _: f(v, [True], [1]),
    "numpy.put_along_axis": lambda f, v, _: f(v, __import__("numpy").array([0]), 1, axis=0),
    "numpy.fill_diagonal": lambda f, v, _: f(v, 0),
    "sklearn.base.clone": lambda f, v, _: f(v),
    "sklearn.model_selection.cross_val_score": lambda f, v, _: f(v, *_xy(), cv=2),
    "sklearn.model_selection.cross_validate": lambda f, v, _: f(v, *_xy(), cv=2),
    "sklearn.model_selection.cross_val_predict": lambda f, v, _: f(v, *_xy(), cv=2),
    "sklearn.model_selection.learning_curve": lambda f, v, _: f(v, *_xy(), cv=2),
    "sklearn.model_selection.validation_curve": lambda f, v, _: f(
        v, *_xy(), param_name="C", param_range=[1.0], cv=2
    ),
}


def test_every_table_entry_has_a_check() -> None:
    assert set(CALLS) == set(NEEDS_OBJECT)


@pytest.mark.parametrize(
    ("callee", "index"), [(c, i) for c, places in NEEDS_OBJECT.items() for i in places]
)
def test_table_entry_refuses_every_json_value(callee: str, index: int) -> None:
    module, name = callee.rsplit(".", 1)
    function = getattr(importlib.import_module(module), name)
    for value in JSON_VALUES:
        with pytest.raises((TypeError, ValueError, AttributeError, KeyError)):
            CALLS[callee](function, value, index)


REQUIREMENTS = parse_requirements("numpy\npandas\n", "<test>")

HELPERS = textwrap.dedent(
    """\
    import numpy as np


    def to_lower(doc):
        return doc.lower()


    def next_of_first(x):
        return x[0] + 1


    def dot(x, w):
        return float(np.dot(x, w))


    def shout_all(words):
        words = words[1:]
        return [w.upper() for i, w in enumerate(words)]


    def keys_of(table):
        return sorted(k.lower() for k, v in table.items())


    def digit(data, i):
        return data[i].reshape(2, 2)


    def first_column(X):
        return X[:, 0]


    def named(rows):
        return [row.name for row in rows]
    """
)


def _verdicts(text: str) -> dict[str, tuple[str, list[str]]]:
    analysis = analyze_source(
        text.encode(), path="m.py", module="m", python_version="3.11", requirements=REQUIREMENTS
    )
    assert analysis.readiness is not None
    return {
        a.name: (a.klass, [r.code for r in a.reasons if r.severity == "error"])
        for a in analysis.readiness.assessments
    }


def test_values_taken_from_a_parameter_are_judged_as_json_values() -> None:
    verdicts = _verdicts(HELPERS)
    for name in ("to_lower", "next_of_first", "dot", "shout_all", "keys_of"):
        assert verdicts[name] == ("eligible", []), name
    for name in ("digit", "first_column", "named"):
        assert verdicts[name] == ("conditional", ["SVC-R037"]), name


REBOUND_AND_GUARDED = textwrap.dedent(
    """\
    import numpy as np
    import pandas as pd


    def used_before_rebinding(df):
        sexes = np.sort(df["Sex"].unique())
        df = pd.concat([df, pd.get_dummies(df["Embarked"])], axis=1)
        return df.shape


    def rebound_first(x):
        x = np.asarray(x)
        return x.shape


    def rebound_in_the_loop(rows):
        for row in rows:
            row = np.asarray(row)
            print(row.shape)


    def rebound_later_in_a_loop(x):
        for _ in range(3):
            print(x.shape)
            x = np.asarray(x)


    def caught(x):
        try:
            return x.shape[0]
        except AttributeError:
            return len(x)


    def branched(x):
        if hasattr(x, "shape"):
            return x.shape[0]
        return len(x)


    def closed_over(x):
        size = lambda: x.shape
        x = np.asarray(x)
        return size()
    """
)


def test_rebinding_is_followed_in_source_order_and_guards_are_respected() -> None:
    verdicts = _verdicts(REBOUND_AND_GUARDED)
    assert verdicts.pop("used_before_rebinding") == ("conditional", ["SVC-R037"])
    for name, (klass, errors) in verdicts.items():
        assert (klass, errors) == ("eligible", []), name


def test_eligible_helpers_answer_with_json_values(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(HELPERS)
    (tmp_path / "requirements.txt").write_text("numpy\npandas\n")
    generate(
        source,
        tmp_path / "b",
        "--requirements",
        str(tmp_path / "requirements.txt"),
        "--select",
        "to_lower,next_of_first,dot,shout_all,keys_of",
    )
    calls = {
        "to_lower": ({"doc": "ABC"}, "abc"),
        "next_of_first": ({"x": [41]}, 42),
        "dot": ({"x": [1, 2], "w": [3, 4]}, 11.0),
        "shout_all": ({"words": ["a", "b", "c"]}, ["B", "C"]),
        "keys_of": ({"table": {"B": 1, "A": 2}}, ["a", "b"]),
    }
    with serving(tmp_path / "b") as server, server.client() as client:
        for name, (body, expected) in calls.items():
            response = client.post(f"/capabilities/{name}", json=body)
            assert response.status_code == 200, server.log_text()
            assert response.json() == expected
