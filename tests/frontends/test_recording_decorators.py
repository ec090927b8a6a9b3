"""A decorator factory of the module that records its arguments on the function and returns
it (jmespath's ``@signature({...})``): applied by the evaluator at module level and on
methods, so neither the module nor the class is import-time code for it."""

import textwrap

from svcc.compiler.driver import analyze_source

FACTORY = """
def signature(*arguments, **options):
    def _record_signature(func):
        func.signature = arguments
        func.options = options
        return func
    return _record_signature
"""


def classes(source: str) -> dict[str, tuple[str, list[str]]]:
    analysis = analyze_source(textwrap.dedent(source))
    assert analysis.readiness is not None, analysis.diagnostics
    return {
        a.name: (str(a.klass), [r.code for r in a.reasons]) for a in analysis.readiness.assessments
    }


def test_a_recording_factory_on_a_function_keeps_it() -> None:
    found = classes(
        FACTORY
        + """
@signature({"types": ["number"]}, variadic=True)
def absolute(x: int) -> int:
    return abs(x)
"""
    )
    assert found["absolute"] == ("eligible", [])


def test_a_recording_factory_on_a_method_runs_nothing_at_import() -> None:
    found = classes(
        FACTORY
        + """
class Functions:
    @signature({"types": ["number"]})
    def _func_abs(self, x: int) -> int:
        return abs(x)


def plain(x: int) -> int:
    return x
"""
    )
    assert found["plain"] == ("eligible", [])


def test_a_factory_whose_closure_does_more_stays_refused() -> None:
    found = classes(
        """
def signature(*arguments):
    def _record_signature(func):
        print(arguments)
        return func
    return _record_signature


@signature(1)
def absolute(x: int) -> int:
    return abs(x)
"""
    )
    assert "SVC-R001" in found["absolute"][1]


def test_a_dunder_attribute_set_by_the_closure_stays_refused() -> None:
    found = classes(
        """
def named(*arguments):
    def _record(func):
        func.__code__ = None
        return func
    return _record


class Functions:
    @named(1)
    def run(self, x: int) -> int:
        return x


def plain(x: int) -> int:
    return x
"""
    )
    assert found["plain"][0] != "eligible"


def test_a_method_decorator_naming_a_class_attribute_is_not_the_modules() -> None:
    found = classes(
        FACTORY
        + """
class Functions:
    signature = staticmethod(print)

    @signature(1)
    def run(self, x: int) -> int:
        return x


def plain(x: int) -> int:
    return x
"""
    )
    assert found["plain"][0] != "eligible"
