"""A module whose import raises for certain is refused (issue 37 item 4): a known call or
operator on plain data at module level that raises (``X = int("abc")``, ``1 / 0``) used to be
judged a harmless pure call, so the function was eligible and its bundle failed to start.
What may catch the error (a ``try``, a ``with``, a helper's own ``try``) or what the evaluator
only models (an opaque value) is never taken for a raise."""

import textwrap

import pytest
from svcc.compiler.driver import analyze_source

from tests.frontends.test_evaluator import FUNCTION, reasons


@pytest.mark.parametrize(
    ("statement", "why"),
    [
        ('X = int("abc")', "ValueError: invalid literal for int() with base 10: 'abc'"),
        ("RATIO = 1 / 0", "ZeroDivisionError: division by zero"),
        ('TABLE = dict([("a", 1), ("b",)])', "ValueError"),
        ("BIG = max([])", "ValueError: max() arg is an empty sequence"),
    ],
)
def test_a_statement_that_raises_for_certain_is_refused(statement: str, why: str) -> None:
    assert reasons(statement + "\n" + FUNCTION) == [("SVC-R007", 1)]
    analysis = analyze_source(statement + "\n" + FUNCTION)
    assert analysis.readiness is not None
    (message,) = [r.message for a in analysis.readiness.assessments for r in a.reasons]
    assert why in message
    assert "so importing the module fails" in message


@pytest.mark.parametrize(
    "source",
    [
        'X = int("12")',
        """
        try:
            X = int("abc")
        except ValueError:
            X = 0
        """,
        """
        def _parse(text):
            try:
                return int(text)
            except ValueError:
                return 0

        X = _parse("abc")
        """,
        """
        import sys

        if sys.version_info < (3, 0):
            X = 1 / 0
        else:
            X = 1
        """,
    ],
)
def test_what_may_not_raise_is_not_taken_for_a_raise(source: str) -> None:
    for code, _ in reasons(textwrap.dedent(source) + FUNCTION):
        assert code != "SVC-R007"
