"""A class made by the module's own metaclass (jmespath's ``FunctionRegistry(type)``,
whose ``__init__`` fills a table from the class's ``@signature``-recorded methods): the
evaluator runs the metaclass's ``__init__`` on the class, through a generator of another
module of the repository; what it cannot run stays refused, the keyword underlined."""

import textwrap
from pathlib import Path

import pytest
from svcc.compiler.driver import analyze_file, analyze_repository, analyze_source

REGISTRY = """
import inspect


def signature(*arguments):
    def _record_signature(func):
        func.signature = arguments
        return func
    return _record_signature


def get_methods(cls):
    for name, method in inspect.getmembers(cls, predicate=inspect.isfunction):
        yield name, method


class FunctionRegistry(type):
    def __init__(cls, name, bases, attrs):
        cls._populate_function_table()
        super(FunctionRegistry, cls).__init__(name, bases, attrs)

    def _populate_function_table(cls):
        function_table = {}
        for name, method in get_methods(cls):
            if not name.startswith("_func_"):
                continue
            signature = getattr(method, "signature", None)
            if signature is not None:
                function_table[name[6:]] = {"function": method, "signature": signature}
        cls.FUNCTION_TABLE = function_table


class Functions(metaclass=FunctionRegistry):
    FUNCTION_TABLE = {}

    @signature({"types": ["number"]})
    def _func_abs(self, x):
        return abs(x)


def plain(x: int) -> int:
    return x
"""


def verdict(source: str) -> tuple[str, list[str]]:
    analysis = analyze_source(textwrap.dedent(source))
    assert analysis.readiness is not None, analysis.diagnostics
    found = {a.name: a for a in analysis.readiness.assessments}["plain"]
    return found.klass, [r.code for r in found.reasons]


def test_a_registry_metaclass_runs_nothing_else_at_import() -> None:
    assert verdict(REGISTRY) == ("eligible", [])


@pytest.mark.parametrize(
    "change",
    [
        # the metaclass prints, or calls what the evaluator does not know
        ("        cls._populate_function_table()\n", "        print(name)\n"),
        ("cls.FUNCTION_TABLE = function_table", "cls.FUNCTION_TABLE = open('t').read()"),
        # a hook Python calls behind the code's back
        (
            "    def _populate_function_table(cls):",
            "    def __call__(cls):\n        return 1\n\n    def _populate_function_table(cls):",
        ),
        # the class shadows the metaclass's method: the class's own would run
        (
            "    FUNCTION_TABLE = {}\n",
            "    FUNCTION_TABLE = {}\n    _populate_function_table = 1\n",
        ),
        # a class body member the evaluator does not make
        ("    FUNCTION_TABLE = {}\n", "    FUNCTION_TABLE = dict(open('t'))\n"),
        # a metaclass that is not a plain ``type``
        ("class FunctionRegistry(type):", "class FunctionRegistry(abc.ABCMeta):"),
        # getattr of a name ``type`` gives the class
        ('getattr(method, "signature", None)', 'getattr(cls, "mro", None)'),
        # type.__init__ with two arguments raises TypeError
        ("__init__(name, bases, attrs)", "__init__(name, bases)"),
        # a generator used as a value
        ("for name, method in get_methods(cls):", "for name, method in [next(get_methods(cls))]:"),
    ],
)
def test_what_the_evaluator_cannot_run_stays_refused(change: tuple[str, str]) -> None:
    source = REGISTRY.replace(*change)
    assert source != REGISTRY
    klass, codes = verdict("import abc\n" + source)
    assert klass != "eligible"
    assert codes  # the keyword, or what the class body runs


def test_a_subclass_of_a_class_made_by_the_metaclass_is_not_plain() -> None:
    source = REGISTRY + textwrap.dedent(
        """
        class More(Functions):
            run = print("x")
        """
    )
    assert verdict(source)[0] != "eligible"


def test_the_generator_of_another_module_is_run(tmp_path: Path) -> None:
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "compat.py").write_text(
        "import inspect\n\n\ndef get_methods(cls):\n"
        "    for name, method in inspect.getmembers(cls, predicate=inspect.isfunction):\n"
        "        yield name, method\n"
    )
    body = REGISTRY.replace(
        "def get_methods(cls):\n    for name, method in inspect.getmembers(cls, "
        "predicate=inspect.isfunction):\n        yield name, method\n",
        "",
    )
    (package / "functions.py").write_text("from pkg.compat import get_methods\n" + body)
    reports = analyze_repository(package.parent, python_version="3.11", strict=False).reports
    found = {a.name: a for a in reports["pkg.functions"].assessments}["plain"]
    assert found.klass == "eligible", [r.message for r in found.reasons]
    analysis = analyze_file(package / "functions.py")
    assert analysis.readiness is not None
    assert {a.name: a for a in analysis.readiness.assessments}["plain"].klass == "eligible"
