"""The import-time evaluator (issue 37): each rule on a module that was refused before, its
bounds, reachability and import fallbacks on the 3.11 and 3.13 grammars, and the reviewed
table checked against the running interpreter."""

import ast
import importlib
import sys
import textwrap
import time

import pytest
from svcc.compiler.driver import analyze_source
from svcc.compiler.passes.tool_effects import tool_effects
from svcc.frontends.python import _fold_table as table
from svcc.frontends.python._evaluator import ModuleValues
from svcc.frontends.python._types import Symbols
from svcc.frontends.python._values import Opaque

FUNCTION = "\n\ndef area(x: int) -> int:\n    return x\n"


def reasons(source: str, version: str = "3.11", name: str = "area") -> list[tuple[str, int]]:
    analysis = analyze_source(textwrap.dedent(source), python_version=version)
    assert analysis.readiness is not None, analysis.diagnostics
    found = [a for a in analysis.readiness.assessments if a.name == name]
    assert found, [a.name for a in analysis.readiness.assessments]
    return [(r.code, r.span.line if r.span else 0) for r in found[0].reasons]


def values(source: str, version: tuple[int, int] = (3, 11)) -> ModuleValues:
    """The evaluator run over ``source``'s statements as the lowerer runs it."""
    symbols = Symbols()
    module = ModuleValues(symbols.qualify, version)
    for stmt in ast.parse(textwrap.dedent(source)).body:
        module.run(stmt)
        for node in ast.walk(stmt):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    symbols.imports[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    symbols.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return module


@pytest.mark.parametrize(
    ("source", "name", "value"),
    [
        ("A = 'x' + 'y' * 2", "A", "xyy"),
        ("A = ', '.join(['a', 'b'])", "A", "a, b"),
        ("A = '{}-{}'.format('a', 1)", "A", "a-1"),
        (r"A = '^\\d*[.]{x}$'.format(x='+')", "A", r"^\d*[.]+$"),
        ("B = 'n'\nA = f'{B}:{3:>3}'", "A", "n:  3"),
        ("A = '%s=%d' % ('k', 2)", "A", "k=2"),
        ("A = 'abcdef'[1:4].upper()", "A", "BCD"),
        ("A = dict(zip(['a', 'b'], [1, 2]))", "A", {"a": 1, "b": 2}),
        ("A = [x * x for x in range(4) if x]", "A", [1, 4, 9]),
        ("A = {k: v for k, v in enumerate('ab')}", "A", {0: "a", 1: "b"}),
        ("A = sorted({3, 1, 2})", "A", [1, 2, 3]),
        ("A = frozenset({'a', 'b'})", "A", frozenset({"a", "b"})),
        ("A = tuple(list(set([1, 1, 2])))", "A", (1, 2)),
        ("T = {}\nfor i in range(3):\n    T[i] = i * i\n", "T", {0: 0, 1: 1, 2: 4}),
        ("L = []\nfor c in 'ab':\n    L.append(c.upper())\n", "L", ["A", "B"]),
        ("__all__ = ['a']\n__all__ += ['b']", "__all__", ["a", "b"]),
        ("import string\nA = string.ascii_lowercase[:3]", "A", "abc"),
        ("import re\nA = re.escape('a.b')", "A", "a\\.b"),
        ("import sys\nA = sys.version_info >= (3, 8)", "A", True),
        ("import sys\nA = sys.platform.startswith('win')", "A", False),
        ("import os\nA = os.sep.join(['a', 'b'])", "A", "a/b"),
        ("A = str.maketrans('ab', 'cd')", "A", {97: 99, 98: 100}),
        ("def _f(n):\n    return [i for i in range(n)]\nA = _f(3)", "A", [0, 1, 2]),
        ("def _g(p, q='!'):\n    out = p + q\n    return out\nA = _g('a')", "A", "a!"),
    ],
)
def test_known_values(source: str, name: str, value: object) -> None:
    assert values(source).values[name] == value


def test_enum_members_and_literal_class_attributes() -> None:
    module = values(
        """
        import enum
        class Size(enum.Enum):
            S = "s"
            M = "m"
        A = Size.M.value
        B = Size.M == Size.M
        class Conf:
            PREFIX = "x"
        C = Conf.PREFIX + "y"
        """
    )
    assert (module.values["A"], module.values["B"], module.values["C"]) == ("m", True, "xy")


@pytest.mark.parametrize(
    "source",
    [
        "import os\nA = os.environ['HOME']",
        "A = open('x').read()",
        "import time\nA = time.time()",
        "L = []\nL.append(print('x'))",
        "A = '{0.__class__}'.format(1)",
        "A = '{0[0]}'.format('ab')",
        "A = '{:{w}}'.format('x', w=10 ** 9)",
        "A = '%9999999d' % 1",
        "A = f'{1:9999999}'",
        "A = 'ab'.center(10**9)",
        "A = 2 ** 10**9",
        "A = 'x' * 10**9",
        "A = [0] * 10**8",
        "A = list(range(10**9))",
        "A = list(range(10**30))",
        "for i in range(10**30):\n    A = i",
        "S = {'a', 'b'}\nA = list(S)",
        "T = {}\nwhile True:\n    T[1] = 1\n",
        "def f():\n    global X\n    X = 1\nclass C:\n    A = f()\nA = C.A",
    ],
)
def test_unknown_stays_unknown(source: str) -> None:
    module = values(source)
    assert "A" not in module.values
    assert "T" not in module.values


def test_a_name_rebound_by_unknown_code_is_forgotten() -> None:
    module = values("A = 1\nA = input()\nL = [1]\nregister(L)\n")
    assert "A" not in module.values
    assert "L" not in module.values


def test_a_mutable_value_reached_through_an_alias_is_forgotten() -> None:
    module = values("L = [1]\nM = L\nregister(M)\nN = L + [2]\n")
    assert "L" not in module.values
    assert "N" not in module.values


def test_bounds_answer_unknown_quickly() -> None:
    """100,000 statements, a million-iteration loop, 60 doublings: unknown where the bound
    is hit, and never a hang."""
    started = time.perf_counter()
    many = values("x = 1\n" + "x = x + 1\n" * 100_000)
    assert many.values["x"] in (100_001, None) or "x" not in many.values
    loop = values("T = {}\nfor i in range(1_000_000):\n    T[i] = i\n")
    assert "T" not in loop.values
    loop2 = values(
        "T = []\nfor i in range(9_000):\n    for j in range(9_000):\n        T.append(1)\n"
    )
    assert "T" not in loop2.values
    doubling = values("s = 'a'\n" + "s = s + s\n" * 60)
    assert "s" not in doubling.values
    assert time.perf_counter() - started < 60


@pytest.mark.parametrize("version", ["3.11", "3.13"])
def test_reachability_decides_version_platform_and_flags(version: str) -> None:
    source = """
    import sys
    PY3 = sys.version_info[0] == 3
    if sys.version_info >= (3, 11):
        def area(x: int) -> int:
            return x
    else:
        def area(x: int) -> int:
            return open("/etc/passwd").read()
    if sys.platform == "win32":
        import winreg
        def other(x: int) -> int:
            return x
    if PY3:
        def third(x: int) -> int:
            return x
    """
    assert reasons(textwrap.dedent(source), version) == []
    assert reasons(textwrap.dedent(source), version, "third") == []


def test_an_undecided_test_keeps_its_guard() -> None:
    source = """
    import sys
    if sys.version_info >= (3, 11, 4):
        def area(x: int) -> int:
            return x
    """
    assert [code for code, _ in reasons(source)] == ["SVC-R006"]


def test_the_dead_branch_is_not_judged() -> None:
    source = (
        textwrap.dedent("""
    import sys
    if sys.version_info < (3, 0):
        print("python 2")
    """)
        + FUNCTION
    )
    assert reasons(source) == []


@pytest.mark.parametrize("version", ["3.11", "3.13"])
@pytest.mark.parametrize("error", ["ImportError", "ModuleNotFoundError", "(ImportError, OSError)"])
def test_an_import_fallback_resolves_to_the_standard_library(version: str, error: str) -> None:
    source = (
        textwrap.dedent(f"""
    try:
        from functools import lru_cache
    except {error}:
        from backports.functools_lru_cache import lru_cache

    @lru_cache(maxsize=1000)
    def _helper(x: int) -> int:
        return x
    """)
        + FUNCTION
    )
    assert reasons(source, version) == []


def test_a_third_party_fallback_stays_guarded() -> None:
    source = """
    try:
        from simplejson import loads
    except ImportError:
        def area(x: int) -> int:
            return x
    """
    assert [code for code, _ in reasons(source)] == ["SVC-R006"]


def test_an_identity_decorator_keeps_the_function() -> None:
    source = """
    def tool(f):
        '''The framework's decorator when it is absent.'''
        return f

    @tool
    def area(x: int) -> int:
        return x
    """
    assert reasons(source) == []


def test_a_decorator_that_is_not_identity_is_still_refused() -> None:
    source = """
    def tool(f):
        print("registering")
        return f

    @tool
    def area(x: int) -> int:
        return x
    """
    assert "SVC-R001" in [code for code, _ in reasons(source)]


def test_a_folded_pattern_is_checked_as_a_literal_one() -> None:
    good = (
        textwrap.dedent("""
    import re
    _WORD = r"\\w+"
    _PAT = re.compile(_WORD + r"\\s+" + _WORD)
    """)
        + FUNCTION
    )
    bad = (
        textwrap.dedent("""
    import re
    _OPEN = "("
    _PAT = re.compile(_OPEN + "a")
    """)
        + FUNCTION
    )
    assert reasons(good) == []
    assert [code for code, _ in reasons(bad)] == ["SVC-R031"]


def test_a_loop_filling_a_table_is_evaluated() -> None:
    source = (
        textwrap.dedent("""
    TABLE = {}
    for i in range(10):
        TABLE[i] = i * i
    NAMES = []
    for name in ("a", "b"):
        NAMES.append(name.upper())
    """)
        + FUNCTION
    )
    assert reasons(source) == []


def test_a_loop_with_an_effect_is_still_refused() -> None:
    source = (
        textwrap.dedent("""
    TABLE = {}
    for i in range(3):
        TABLE[i] = i
        print(i)
    """)
        + FUNCTION
    )
    assert [code for code, _ in reasons(source)] == ["SVC-R007"]


def test_a_local_helper_building_a_table_is_evaluated() -> None:
    source = (
        textwrap.dedent("""
    def _build(n):
        out = {}
        for i in range(n):
            out[str(i)] = i
        return out

    TABLE = _build(5)
    """)
        + FUNCTION
    )
    assert reasons(source) == []


@pytest.mark.parametrize("name", sorted(table.CONSTANTS))
def test_table_constants_are_the_interpreters(name: str) -> None:
    if name in table.TARGET_CONSTANTS and not sys.platform.startswith("linux"):
        pytest.skip("the target's value (Linux)")
    module, _, attr = name.rpartition(".")
    actual = getattr(importlib.import_module(module), attr)
    expected = table.CONSTANTS[name]
    assert (tuple(actual) if isinstance(actual, list) else actual) == expected


@pytest.mark.parametrize("name", sorted(table.FUNCTIONS))
def test_table_functions_are_the_interpreters(name: str) -> None:
    module, _, attr = name.rpartition(".")
    owner = {"str": str, "bytes": bytes}.get(module) or importlib.import_module(module)
    assert getattr(owner, attr) is table.FUNCTIONS[name]


def test_a_refusal_underlines_the_sub_expression_that_could_not_be_evaluated() -> None:
    source = """
    TABLE = {}
    for i in range(3):
        TABLE[i] = i
        print(i)
    """
    analysis = analyze_source(textwrap.dedent(source) + FUNCTION, python_version="3.11")
    assert analysis.readiness is not None
    (reason,) = analysis.readiness.assessments[0].reasons
    assert reason.code == "SVC-R007"
    assert reason.span is not None
    assert (reason.span.line, reason.span.column, reason.span.end_column) == (5, 4, 9)
    assert "`print`: a call of `print`, which the evaluator does not know" in reason.message


PREDICTOR = """
class Predictor:
    def __init__(self) -> None:
        self.ready = False

    def setup(self) -> None:
        {body}


p = Predictor()
p.setup()
"""


def test_a_method_called_on_an_instance_is_judged_by_its_body() -> None:
    """``p = Predictor()`` then ``p.setup()``: ``setup`` reading ``/etc/passwd`` and printing
    was judged by the constructor alone (eligible, and the bundle refused to start)."""
    effect = PREDICTOR.format(body='print(open("/etc/passwd").read())')
    assert [code for code, _ in reasons(effect + FUNCTION)] == ["SVC-R007"]
    harmless = PREDICTOR.format(body="return None")
    assert reasons(harmless + FUNCTION) == []


def test_a_call_of_an_attribute_that_is_not_a_method_is_unknown() -> None:
    source = """
    class Box:
        def __init__(self) -> None:
            self.items = []

    b = Box()
    b.items.append(1)
    b.load()
    """
    assert {code for code, _ in reasons(textwrap.dedent(source) + FUNCTION)} == {"SVC-R007"}


def test_an_enum_member_as_a_dataclass_default_is_harmless() -> None:
    source = """
    import enum
    from dataclasses import dataclass

    class Size(enum.Enum):
        S = "s"
        M = "m"

    @dataclass
    class Box:
        width: int
        size: Size = Size.M

    def area(box: Box) -> int:
        return box.width
    """
    assert reasons(source) == []


def test_a_helper_filling_module_tables_called_as_a_statement_is_evaluated() -> None:
    """inflection's ``_irregular('person', 'people')``: a helper with a nested function that
    inserts rules into module-level lists."""
    source = """
    PLURALS = [("s$", "s")]

    def _irregular(singular: str, plural: str) -> None:
        def caseless(text: str) -> str:
            return "".join("[" + c + c.upper() + "]" for c in text)

        PLURALS.insert(0, (r"(?i)({}){}$".format(singular[0], caseless(singular[1:])), plural))

    _irregular("person", "people")
    _irregular("child", "children")
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == []
    module = values(source)
    assert module.values["PLURALS"][0] == ("(?i)(c)[hH][iI][lL][dD]$", "children")


def test_getattr_of_a_standard_library_module_is_harmless_and_unknown() -> None:
    source = """
    import math
    _sumprod = getattr(math, "sumprod", lambda x, y: sum(a * b for a, b in zip(x, y)))
    HAS = hasattr(math, "sumprod")
    if HAS:
        def area(x: int) -> int:
            return x
    """
    assert [code for code, _ in reasons(source)] == ["SVC-R006"]  # the value is the version's
    assert isinstance(values(source).values["HAS"], Opaque)


def test_a_property_setter_and_a_tzinfo_subclass_are_harmless() -> None:
    source = """
    import datetime

    class Version:
        @property
        def major(self) -> int:
            return 1

        @major.setter
        def major(self, value: int) -> None:
            raise AttributeError("read-only")

    class Utc(datetime.tzinfo):
        pass
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == []


def test_pydantic_v1_idioms_are_refused_with_reasons() -> None:
    """``class Config``, ``@validator`` and ``Field(..., regex=)`` (pydantic 1's spellings,
    which pydantic 2 refuses or warns about): reasons on their lines, never an error."""
    source = """
    from pydantic import BaseModel, Field, validator

    class Item(BaseModel):
        name: str = Field(..., regex=r"^[a-z]+$")

        class Config:
            extra = "forbid"

        @validator("name")
        def check(cls, v: str) -> str:
            return v

    def area(item: Item) -> str:
        return item.name
    """
    found = reasons(source)
    assert {"SVC-R051", "SVC-R010"} <= {code for code, _ in found}
    assert ("SVC-R051", 5) in found
    assert ("SVC-R010", 7) in found


def test_a_lambda_body_is_not_read_at_import() -> None:
    source = """
    import math
    _dot = getattr(math, "sumprod", lambda x, y: later(x, y))

    def later(x: int, y: int) -> int:
        return x * y
    """
    assert reasons(source, name="later") == []


@pytest.mark.parametrize(
    "statement",
    [
        '_RE = re.compile(b"\\r|\\n|\\r\\n")',
        'FORMATS = {"%a": "(?:Sun|Mon)", "%d": "[0-9]{1,2}"}\n_RE = re.compile("|".join(FORMATS))',
        "from html.entities import name2codepoint\n"
        "_RE = re.compile(r'&(%s);' % '|'.join(name2codepoint))",
    ],
)
def test_patterns_of_tables_and_bytes_are_checked_as_literals(statement: str) -> None:
    assert reasons(f"import re\n{statement}\n" + FUNCTION) == []


def test_metadata_of_the_modules_own_functions_and_reversed_tables() -> None:
    source = """
    try:
        from itertools import pairwise as _stdlib_pairwise
    except ImportError:
        pass
    else:
        def _pairwise(iterable):
            '''Pairs.'''
            return _stdlib_pairwise(iterable)

        def pairs(iterable):
            return _pairwise(iterable)

        pairs.__doc__ = _pairwise.__doc__

    def _reversedict(table: dict) -> dict:
        return {value: key for key, value in table.items()}

    NAMES = _reversedict({"a": "#000", "b": "#fff"})
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == []
    assert values(source).values["NAMES"] == {"#000": "a", "#fff": "b"}


def test_an_unknown_augmented_assignment_is_no_internal_error() -> None:
    source = """
    import os
    counter = 0
    counter += os.getpid()
    TABLE = {}
    TABLE["k"] += 1
    """
    assert [code for code, _ in reasons(textwrap.dedent(source) + FUNCTION)]


def test_a_helper_building_patterns_is_evaluated() -> None:
    """``_REGEXES = _build_regexes()``: a local function compiling patterns from a table;
    each pattern compiled by the evaluator as the readiness pass compiles a literal one."""
    good = """
    import re

    _WORDS = {"num": r"\\d+", "word": r"[a-z]+"}

    def _build_regexes():
        return {name: re.compile(pattern, re.I) for name, pattern in _WORDS.items()}

    _REGEXES = _build_regexes()
    """
    assert reasons(textwrap.dedent(good) + FUNCTION) == []
    bad = good.replace(r"[a-z]+", "[a-z")
    assert [code for code, _ in reasons(textwrap.dedent(bad) + FUNCTION)] == ["SVC-R007"]


SLUGIFY = """
try:
    import unidecode
except ImportError:
    import text_unidecode as unidecode
"""


def test_alternative_imports_none_of_which_is_provided_are_refused() -> None:
    """Neither alternative standard library nor declared: the module cannot import (the
    bundle of python-slugify's module did not start)."""
    found = reasons(SLUGIFY + FUNCTION)
    assert found == [("SVC-R008", 3)]
    analysis = analyze_source(textwrap.dedent(SLUGIFY) + FUNCTION, python_version="3.11")
    assert analysis.readiness is not None
    (reason,) = analysis.readiness.assessments[0].reasons
    assert "`import unidecode` / `import text_unidecode`" in reason.message


def test_alternative_imports_one_of_which_is_declared_are_fine() -> None:
    from svcc.contracts.requirements import DeclaredRequirements

    declared = DeclaredRequirements(
        lines=("text-unidecode",),
        distributions=("text-unidecode",),
        import_names=frozenset({"text_unidecode"}),
    )
    analysis = analyze_source(
        textwrap.dedent(SLUGIFY) + FUNCTION, python_version="3.11", requirements=declared
    )
    assert analysis.readiness is not None
    assert analysis.readiness.assessments[0].reasons == ()


@pytest.mark.parametrize("version", ["3.11", "3.13"])
def test_a_substituted_optional_import_refuses_only_what_calls_into_it(version: str) -> None:
    source = """
    try:
        import yaml
    except (ImportError, OSError):
        yaml = None


    def load(text: str) -> str:
        return str(yaml.safe_load(text))


    def area(x: int) -> int:
        return x
    """
    assert reasons(source, version) == []
    assert reasons(source, version, name="load") == [("SVC-R009", 3)]


def test_a_try_that_does_not_catch_the_import_error_requires_the_import() -> None:
    source = """
    try:
        import yaml
    except AttributeError:
        yaml = None
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == [("SVC-R008", 3)]


@pytest.mark.parametrize(("version", "batched"), [("3.11", False), ("3.13", True)])
def test_sys_hexversion_is_decided_for_the_target(version: str, batched: bool) -> None:
    """more-itertools' ``if hexversion >= 0x30D00A2:``: every 3.11 release is below it; on
    3.13 it depends on the pre-release, so the test stays undecided (the attribute write
    under it is judged)."""
    source = """
    from sys import hexversion

    def _batched(iterable, n):
        '''Batches.'''
        return iterable

    if hexversion >= 0x30D00A2:
        batched = _batched
    else:
        batched = _batched

        batched.__doc__ = _batched.__doc__

    if hexversion < 0x3080000:
        raise ImportError('old')
    """
    found = reasons(textwrap.dedent(source) + FUNCTION, version)
    assert found == ([("SVC-R007", 13)] if batched else [])


def test_a_class_body_value_the_evaluator_computes_is_not_code() -> None:
    """more-itertools' ``numeric_range``: ``_EMPTY_HASH = hash(range(0, 0))``; a value that
    reads a name the class body bound, or a salted hash, is still judged."""
    source = """
    WIDTH = 3

    class numeric_range:
        _EMPTY_HASH = hash(range(0, 0))
        _PAIR = (WIDTH * 2, hash((1, None)))
        NAME = 'x'
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == []
    assert values(source).is_folded(ast.parse(textwrap.dedent(source)).body[1].body[0])  # type: ignore[attr-defined]
    salted = """
    class numeric_range:
        _EMPTY_HASH = hash('x')
    """
    assert [code for code, _ in reasons(textwrap.dedent(salted) + FUNCTION)] == ["SVC-R010"]
    shadowed = """
    class numeric_range:
        hash = open
        _EMPTY = hash(range(0, 0))
    """
    assert "SVC-R010" in [code for code, _ in reasons(textwrap.dedent(shadowed) + FUNCTION)]


def test_a_wrapping_decorator_runs_nothing_at_import() -> None:
    """semver's ``@_comparator`` on methods: applying it only makes a closure, so the class
    is not import-time code; a capability it decorates is still another function."""
    source = """
    from functools import wraps

    def _comparator(operator):
        '''Type-check the other operand.'''

        @wraps(operator)
        def wrapper(self, other: "Version") -> bool:
            return operator(self, other)

        return wrapper

    class Version:
        @_comparator
        def __eq__(self, other):
            return True

    @_comparator
    def compare(a: int, b: int) -> bool:
        return a == b
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == []
    assert [code for code, _ in reasons(textwrap.dedent(source), name="compare")] == ["SVC-R001"]
    effect = source.replace("return wrapper", "print('x')\n        return wrapper")
    assert "SVC-R010" in [code for code, _ in reasons(textwrap.dedent(effect) + FUNCTION)]


AGENT = """
try:
    from strands import tool
except ImportError:

    def tool(f):
        return f


@tool
def area(x: int) -> int:
    return x


@tool
def _private(x: int) -> int:
    return x
"""


@pytest.mark.parametrize("version", ["3.11", "3.13"])
def test_a_framework_decorator_with_an_identity_fallback_keeps_the_function(
    version: str,
) -> None:
    """Undeclared, the framework is absent where the bundle runs and its ImportError
    handler's identity decorates ``area``; the private function's decorator is still
    judged as import-time code."""
    found = reasons(AGENT.replace("\n\n@tool\ndef _private", "\n\ndef _private"), version)
    assert found == []
    assert [code for code, _ in reasons(AGENT, version)] == ["SVC-R007"]


def test_a_declared_framework_decorator_is_the_frameworks() -> None:
    from svcc.contracts.requirements import DeclaredRequirements

    declared = DeclaredRequirements(
        lines=("strands",), distributions=("strands",), import_names=frozenset({"strands"})
    )
    source = AGENT.replace("\n\n@tool\ndef _private", "\n\ndef _private")
    analysis = analyze_source(source, python_version="3.11", requirements=declared)
    assert analysis.readiness is not None
    (area,) = [a for a in analysis.readiness.assessments if a.name == "area"]
    assert sorted(r.code for r in area.reasons) == ["SVC-R001", "SVC-R007"]


def test_a_group_under_an_undecided_test_or_another_try_stays_guarded() -> None:
    """Its import may never run, or the outer handler catches its failure: judged as a
    plain import there is (not at all)."""
    source = """
    import os

    if os.environ.get("FAST"):
        try:
            import unidecode
        except ImportError:
            import text_unidecode as unidecode
    try:
        try:
            import yaml
        except AttributeError:
            pass
    except ImportError:
        yaml = None
    """
    assert "SVC-R008" not in [code for code, _ in reasons(textwrap.dedent(source) + FUNCTION)]


def test_a_sentinel_and_an_instance_of_a_plain_class_are_harmless() -> None:
    """cachetools' ``Cache``: ``__marker = object()`` and ``__size = _DefaultSize()`` in the
    class body; a class with an ``__init__`` runs it, and stays judged."""
    source = """
    class _DefaultSize:
        __slots__ = ()

        def __getitem__(self, _):
            return 1

    class Cache:
        __marker = object()
        __size = _DefaultSize()

    _MISSING = object()
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == []
    running = source.replace("__slots__ = ()", "def __init__(self):\n            print('x')")
    assert "SVC-R010" in [code for code, _ in reasons(textwrap.dedent(running) + FUNCTION)]


def test_a_nested_class_runs_what_its_definition_runs() -> None:
    """cachetools' ``_TimedCache._Timer``: a class of methods inside a class body."""
    source = """
    class _TimedCache:
        class _Timer:
            def __init__(self, timer):
                self.timer = timer
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == []
    running = source.replace("class _Timer:", "class _Timer:\n            X = open('x')")
    assert reasons(textwrap.dedent(running) + FUNCTION) != []


def test_a_class_body_value_reading_the_class_s_own_names_is_evaluated() -> None:
    """semver's ``Version``: ``_REGEX = re.compile(_REGEX_TEMPLATE.format(...))`` reads a
    name its class body bound before; it is evaluated in the class's namespace. A
    comprehension there does not see the class's names (Python's scoping), and a name the
    body bound by code the evaluator does not know is still unknown."""
    source = """
    import re

    class Version:
        __slots__ = ("_major", "_minor")
        NAMES = tuple([item[1:] for item in __slots__])
        _TEMPLATE: str = r"^(?P<major>\\d+){opt}$"
        _REGEX = re.compile(_TEMPLATE.format(opt=""), re.VERBOSE)
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == []
    invalid = source.replace(r'opt=""', r'opt="("')
    assert "SVC-R010" in {code for code, _ in reasons(textwrap.dedent(invalid) + FUNCTION)}
    hidden = """
    import re
    P = "("

    class Version:
        P = "a"
        NAMES = [re.compile(P) for _ in range(1)]
    """
    assert "SVC-R031" in {code for code, _ in reasons(textwrap.dedent(hidden) + FUNCTION)}
    unknown = """
    import re

    class Version:
        _TEMPLATE = open("x").read()
        _REGEX = re.compile(_TEMPLATE)
    """
    assert "SVC-R026" in {code for code, _ in reasons(textwrap.dedent(unknown) + FUNCTION)}
    regex = ast.parse(textwrap.dedent(unknown)).body[1].body[1]  # type: ignore[attr-defined]
    assert not values(unknown).is_folded(regex)


SHORTUUID = """
class ShortUUID(object):
    def __init__(self, alphabet=None):
        if alphabet is None:
            alphabet = "23456789ABCDEF" "abcdef"
        self.set_alphabet(alphabet)

    def encode(self, number: int) -> str:
        return self._alphabet[number % self._alpha_len]

    def set_alphabet(self, alphabet: str) -> None:
        new_alphabet = list(sorted(set(alphabet)))
        if len(new_alphabet) > 1:
            self._alphabet = new_alphabet
            self._alpha_len = len(self._alphabet)
        else:
            raise ValueError("Alphabet with more than one unique symbols required.")
{extra}

_global_instance = ShortUUID({argument})
encode = _global_instance.encode
"""


def test_an_instance_of_the_module_s_class_is_made_by_running_its_constructor() -> None:
    """shortuuid: ``_global_instance = ShortUUID()`` (``__init__`` calls a method that
    sets attributes) and ``encode = _global_instance.encode``: evaluated, so not import-time
    code; the constructor's body decides, three calls deep."""
    source = SHORTUUID.format(extra="", argument="")
    assert reasons(source + FUNCTION) == []
    raising = SHORTUUID.format(extra="", argument="'a'")  # raises ValueError at import
    assert "SVC-R007" in {code for code, _ in reasons(raising + FUNCTION)}
    effect = SHORTUUID.format(extra="", argument="open('/etc/passwd').read()")
    assert "SVC-R026" in {code for code, _ in reasons(effect + FUNCTION)}


@pytest.mark.parametrize(
    "extra",
    [
        # Python calls these behind the evaluator's back
        "    def __getattr__(self, name):\n        return open(name)",
        "    def __setattr__(self, name, value):\n        print(name)",
        "    def __del__(self):\n        print('gone')",
        # a property: setting ``_alphabet`` runs its setter
        "    @property\n    def _alphabet(self):\n        return []\n"
        "    @_alphabet.setter\n    def _alphabet(self, value):\n        print(value)",
        "    __slots__ = ('_alphabet', '_alpha_len')",
    ],
)
def test_an_instance_whose_class_runs_hidden_code_is_not_made(extra: str) -> None:
    source = SHORTUUID.format(extra=extra, argument="")
    assert reasons(source + FUNCTION) != []


def test_a_method_shadowed_or_decorated_is_not_followed() -> None:
    source = """
    import functools

    class Box:
        def __init__(self) -> None:
            self.items = []

        @functools.lru_cache
        def load(self) -> None:
            return None

    b = Box()
    b.items.append(1)
    b.load()
    """
    found = {code for code, _ in reasons(textwrap.dedent(source) + FUNCTION)}
    assert "SVC-R007" in found
    assert "b" not in values(source).values  # forgotten: the call is not known
    filled = values(source.replace("    b.load()\n", ""))
    assert filled.values["b"].attributes == {"items": [1]}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("fields", "plain"),
    [
        ("FIELDS", True),
        ('"scheme authority, path"', True),
        ("FIELDS, defaults=(None,)", True),
        ('["_private"], rename=True', True),
        ('["class"]', False),  # a keyword: namedtuple raises at import
        ('["a", "a"]', False),
        ('["_private"]', False),
        ("FIELDS, defaults=(1, 2, 3, 4)", False),
        ("FIELDS, verbose=True", False),
        ('open("fields").read().split()', False),
    ],
)
def test_a_namedtuple_base_of_known_valid_fields_runs_nothing(fields: str, plain: bool) -> None:
    """rfc3986's ``class ParseResult(namedtuple("ParseResult", PARSED_COMPONENTS))``: the
    base is evaluated, its fields checked as ``namedtuple`` checks them."""
    source = f"""
    from collections import namedtuple

    FIELDS = ("scheme", "path")

    class Reference(namedtuple("Reference", {fields})):
        pass
    """
    found = {code for code, _ in reasons(textwrap.dedent(source) + FUNCTION)}
    assert (found == set()) is plain, found


def test_a_class_decorator_that_is_the_module_s_identity_runs_nothing() -> None:
    """jmespath's ``@with_str_method`` (``def with_str_method(cls): return cls``)."""
    source = """
    def with_str_method(cls):
        return cls

    def with_name(cls):
        cls.name = "x"
        return cls

    @with_str_method
    class ParseError(Exception):
        pass
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == []
    other = source.replace("@with_str_method", "@with_name")
    assert "SVC-R010" in {code for code, _ in reasons(textwrap.dedent(other) + FUNCTION)}


DEPRECATED = """
import warnings
from functools import partial, wraps


def deprecated(func=None, *, version=None, category=DeprecationWarning):
    if func is None:
        return partial(deprecated, version=version, category=category)

    @wraps(func)
    def wrapper(*args, **kwargs):
        warnings.warn("deprecated since " + version, category=category)
        return func(*args, **kwargs)

    return wrapper{extra}


@deprecated(version="2.10.0")
def bump(version: str) -> str:
    return version


def _old(text: str) -> str:
    return text


old = deprecated(_old, version="3.0.0")
"""


SEMVER_DEPRECATED = """
import inspect
import warnings
from functools import partial, wraps
from types import FrameType
from typing import cast


def deprecated(func=None, *, replace=None, version=None, remove=None,
               category=DeprecationWarning):
    if func is None:
        return partial(deprecated, replace=replace, version=version, remove=remove,
                       category=category)

    @wraps(func)
    def wrapper(*args, **kwargs):
        msg_list = ["Function 'semver.{f}' is deprecated."]
        if version:
            msg_list.append("Deprecated since version {v}. ")
        if not remove:
            msg_list.append("This function will be removed in semver 3.")
        else:
            msg_list.append(str(remove))
        f = cast(str, func).__qualname__
        r = replace or f
        frame = cast(FrameType, cast(FrameType, inspect.currentframe()).f_back)
        msg = " ".join(msg_list)
        warnings.warn_explicit(
            msg.format(f=f, r=r, v=version),
            category=category,
            filename=inspect.getfile(frame.f_code),
            lineno=frame.f_lineno,
        )
        del frame
        return func(*args, **kwargs)

    return wrapper


@deprecated(version="3.0.0", remove="see #258.", category=PendingDeprecationWarning)
def compare(ver1: str, ver2: str) -> int:
    return (ver1 > ver2) - (ver1 < ver2)


@deprecated(replace="max", version="2.10.0")
def bump(version: str) -> str:
    return version
"""


def test_a_decorator_factory_returning_a_partial_of_itself_runs_nothing_at_import() -> None:
    """semver's ``@deprecated(version=...)``: the call returns ``partial(deprecated, ...)``,
    applying it defines a ``functools.wraps`` closure; ``old = deprecated(_old, ...)``
    likewise. Nothing runs at import; the wrapper only warns and calls through, so ``bump``
    keeps its signature and is served as the wrapper."""
    source = DEPRECATED.format(extra="")
    assert reasons(source + FUNCTION) == []
    assert reasons(source, name="bump") == []
    tree = ast.parse(source)
    module = values(source)
    assert module.is_folded(tree.body[-1])  # old = deprecated(_old, ...)
    assert module.is_identity(tree.body[-3].decorator_list[0])  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("return func(*args, **kwargs)", "return func(*args, **kwargs, extra=1)"),
        ("return func(*args, **kwargs)", "kwargs.clear()\n        return func(*args, **kwargs)"),
        ("return func(*args, **kwargs)", "func()\n        return func(*args, **kwargs)"),
        ("return func(*args, **kwargs)", "open('x')\n        return func(*args, **kwargs)"),
        ("category=category)", "category=Custom)"),
        ("category=DeprecationWarning)", "category=Custom)"),
        (
            "return partial(deprecated, version=version, category=category)",
            "return partial(deprecated, version=version, category=Custom)",
        ),
        ("@wraps(func)\n    ", ""),
        ("return func(*args, **kwargs)", "print(version)\n        return func(*args, **kwargs)"),
        ('warnings.warn("deprecated since " + version, ', 'warnings.warn("x", Custom, '),
        ("return func(*args, **kwargs)", "str(Custom)\n        return func(*args, **kwargs)"),
        (
            "return func(*args, **kwargs)",
            "x = [version]\n        x.append(args)\n        return func(*args, **kwargs)",
        ),
    ],
)
def test_a_wrapper_that_does_more_than_warn_and_call_through_keeps_its_decorator(
    old: str, new: str
) -> None:
    """A wrapper changing the arguments, calling early, acting on the world, warning with a
    class of the module's (its ``__init__`` would run) or not made by ``wraps``: SVC-R001."""
    source = "class Custom(Warning):\n    pass\n" + DEPRECATED.format(extra="").replace(old, new)
    assert "SVC-R001" in [code for code, _ in reasons(source, name="bump")]


def test_semvers_deprecated_wrapper_calls_through() -> None:
    """The message built from the decorator's arguments, the caller's frame read for the
    warning's location, ``warn_explicit`` of a built-in category: still a call through."""
    source = SEMVER_DEPRECATED
    assert reasons(source, name="bump") == []
    assert reasons(source, name="compare") == []
    analysis = analyze_source(source)
    assert analysis.ir is not None
    bump = next(c for c in analysis.ir.capabilities if c.name == "bump")
    facts = dict(tool_effects(bump).facts)  # the wrapper's warning, shown; hints unchanged
    assert "warnings.warn_explicit" in facts["output"]
    assert dict(tool_effects(bump).hints)["readOnlyHint"] is True


@pytest.mark.parametrize(
    "extra",
    [
        "\n\n\ndeprecated = open",  # bound again: not the module's function any more
        "\n\n\nprint(deprecated)",
    ],
)
def test_a_decorator_factory_the_evaluator_cannot_follow_stays_refused(extra: str) -> None:
    source = DEPRECATED.format(extra=extra)
    assert reasons(source + FUNCTION) != []


def test_a_wraps_closure_whose_annotation_runs_code_is_not_made() -> None:
    source = DEPRECATED.format(extra="").replace(
        "def wrapper(*args, **kwargs):", "def wrapper(*args, **kwargs) -> open('x'):"
    )
    assert reasons(source + FUNCTION) != []


REGEX_FALLBACK = """
try:
    import regex
except ImportError:
    import re as regex
    REGEX_AVAILABLE = False
else:
    REGEX_AVAILABLE = True
{between}
if {test}:
    CAPFIRST = regex.compile(r"^([\\p{{Letter}}])")
else:
    CAPFIRST = regex.compile(r"^([\\w])")
"""


def test_an_if_of_an_import_fallbacks_flag_runs_the_fallbacks_branch() -> None:
    """titlecase: ``regex`` is not declared, so ``re`` is imported as ``regex`` and
    ``REGEX_AVAILABLE`` is False: the ``regex``-only pattern's branch is dead."""
    source = REGEX_FALLBACK.format(between="", test="REGEX_AVAILABLE") + FUNCTION
    assert reasons(source) == []


def test_the_live_branch_of_an_import_fallbacks_flag_is_still_judged() -> None:
    """``if not REGEX_AVAILABLE:`` puts the ``\\p`` pattern in the branch ``re`` runs."""
    source = REGEX_FALLBACK.format(between="", test="not REGEX_AVAILABLE") + FUNCTION
    assert [code for code, _ in reasons(source)] == ["SVC-R031"]


@pytest.mark.parametrize(
    "between",
    ["REGEX_AVAILABLE = bool(len(__name__))", "def REGEX_AVAILABLE():\n    pass"],
)
def test_a_flag_bound_again_is_not_the_import_fallbacks(between: str) -> None:
    source = REGEX_FALLBACK.format(between=between, test="REGEX_AVAILABLE") + FUNCTION
    assert "SVC-R031" in [code for code, _ in reasons(source)]
