"""Front-end details that the golden corpus does not show on its own."""

import ast
from typing import Any

import pytest
from svcc.cli.render import readiness_table
from svcc.compiler.driver import analyze_source
from svcc.contracts.errors import InputError
from svcc.frontends.notebook._cells import Cell, convert
from svcc.frontends.python import parse
from svcc.ir.types import FloatType, IntType, ListType, NoneType, UnionType


def _parses(text: str) -> bool:
    try:
        parse(text, (3, 11), "cell")
    except SyntaxError:
        return False
    return True


def test_percent_continuation_lines_are_python() -> None:
    source = "y = (10\n     % 3)\n"
    converted = convert([Cell(1, source)], _parses)
    assert converted.text == "# %% [cell 1]\n" + source + "\n"
    assert converted.diagnostics == ()


def test_magic_inside_indented_block_becomes_pass() -> None:
    converted = convert([Cell(2, "for i in range(3):\n    %time f(i)\n")], _parses)
    assert "    pass" in converted.text
    assert [d.code for d in converted.diagnostics] == ["SVC-F004"]
    assert converted.diagnostics[0].span is not None
    assert (converted.diagnostics[0].span.cell, converted.diagnostics[0].span.line) == (2, 2)


def test_magic_lines_inside_strings_are_kept() -> None:
    source = 'x = """\n%not a magic\n"""\n%time x\n'
    converted = convert([Cell(1, source)], _parses)
    assert "%not a magic" in converted.text
    assert [d.span.line for d in converted.diagnostics if d.span] == [4]


def test_defaults_are_source_text_never_evaluated() -> None:
    analysis = analyze_source(
        "def f(a: int = 1 + 2, b: float = 1e3, c: str = 'x' * 3, /) -> None:\n    pass\n",
        path="m.py",
        python_version="3.11",
    )
    assert analysis.ir is not None
    params = analysis.ir.capabilities[0].params
    assert [p.default.text for p in params if p.default] == ["1 + 2", "1e3", "'x' * 3"]
    assert [p.kind for p in params] == ["positional_only"] * 3


def test_types_and_spans_with_unicode() -> None:
    analysis = analyze_source(
        "def f(é: int | None, ü: list[float]) -> None:\n    pass\n",
        path="m.py",
        python_version="3.11",
    )
    assert analysis.ir is not None
    first, second = analysis.ir.capabilities[0].params
    assert first.type == UnionType(options=(IntType(), NoneType()))
    assert second.type == ListType(item=FloatType())
    assert (second.span.column, second.span.end_column) == (21, 35)  # characters, not bytes


def test_colour_only_when_asked() -> None:
    analysis = analyze_source("def f(x) -> int:\n    return 1\n", path="m.py")
    assert "\033[" in readiness_table(analysis, colour=True)
    assert "\033[" not in readiness_table(analysis, colour=False)


WALRUS = "def f(x: int) -> int:\n    return (y := x)\n"
MATCH = "def f(x: int) -> int:\n    match x:\n        case _:\n            return x\n"


@pytest.mark.parametrize(
    ("version", "walrus", "match"),
    [("3.7", False, False), ("3.8", True, False), ("3.11", True, True), ("3.13", True, True)],
)
def test_python_versions_accepted(version: str, walrus: bool, match: bool) -> None:
    """The version chosen is the grammar used (and recorded), not merely accepted."""
    analysis = analyze_source(WALRUS, path="m.py", python_version=version)
    assert (analysis.ir is not None) == walrus
    if analysis.ir is not None:
        assert analysis.ir.source.python_version == version
    assert (analyze_source(MATCH, path="m.py", python_version=version).ir is not None) == match


@pytest.mark.parametrize("version", ["3.6", "3.15", "3.99", "4.0", "3", "three"])
def test_python_versions_refused(version: str) -> None:
    with pytest.raises(InputError, match=r"supported 3\.7 to 3\.14"):
        analyze_source("x = 1\n", path="m.py", python_version=version)


def test_the_front_ends_walk_is_ast_walk_without_context_and_operator_nodes() -> None:
    """``_walk`` replaces ``ast.walk`` on the hot paths: same nodes, same order (every
    "first node found" depends on it), minus the nodes no judgement reads."""
    import ast
    import inspect

    from svcc.frontends.python import _lower, _walk

    skipped = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
    every_kind = (
        "import a.b as c\nfrom .x import (y as z, w)\nglobal g\n"
        "@d(1)\nasync def f(a, /, b: int = -1, *c, d=not x, **e) -> list[T]:\n"
        "    async with m() as (p, *q):\n        async for i in r: await s\n"
        "    nonlocal n\n    del t[0], u.v\n    x += 1; y: int = 2 if a else b\n"
        "    return [k async for k in l if k] or {k: v for k, v in z} and {*a}\n"
        "class C(B, metaclass=M):\n    x = lambda a, *, b=1: (yield a)\n"
        "match p:\n    case {'k': [1, *rest], **kw} | C(a, b=c) as d if d > 0: pass\n"
        "    case _: pass\n"
        "try:\n    raise E from F\nexcept* G as h:\n    assert h, f'{h!r:>{w}}'\n"
        "while (n := n - 1) > 0 < 9 is not None:\n    x = a[1:2:3, ...] @ b ** ~c\n"
    )
    for source in (inspect.getsource(_lower), every_kind):
        tree = ast.parse(source)
        assert _walk.walk(tree) == [n for n in ast.walk(tree) if not isinstance(n, skipped)]
        for node in ast.walk(tree):
            expected = [n for n in ast.iter_child_nodes(node) if not isinstance(n, skipped)]
            assert _walk.children(node) == expected


@pytest.mark.parametrize(
    "source",
    [
        "f = lambda x=d[1:2], x=1: 0\n",  # the default's colon ended the text's parameters
        "f = lambda a=lambda: 0, a=1: 1\n",
        "f = lambda a={1: 2}, a=1: 1\n",
        "f = lambda a='x:y', a=1: 1\n",
    ],
)
def test_repeated_lambda_parameters_behind_a_colon_are_found(source: str) -> None:
    from svcc.frontends import python as front

    error = front.duplicate_parameter(ast.parse(source), source)
    assert error is not None
    assert "duplicate argument" in error.msg


@pytest.mark.parametrize(
    "text",
    [
        "f = lambda x, x: 0\n",
        "xlambda a: lambda b, b: 1",
        "_lambda a, a: (lambda: 0)",
        "é lambda: 0 # lambda",
        "lambdas = [lambda y=lambda: 1, y: y]",
        "no colon lambda a, a",
    ],
)
def test_lambda_parameter_lists_are_found_as_the_pattern_finds_them(text: str) -> None:
    from svcc.frontends import python as front

    def found(matches: Any) -> list[tuple[int, int, str]]:
        return [(m.start(), m.end(), m.group(1)) for m in matches]

    assert found(front._lambda_matches(text)) == found(front._LAMBDA_PARAMS.finditer(text))


def test_imports_and_globals_are_found_through_the_words_on_their_lines() -> None:
    """A function or class is walked for imports and ``global`` only when its lines hold
    the word (``SourceText.mentions``): every spelling of the statements is still found,
    and a function without them records nothing."""
    from svcc.frontends.python import read_python

    source = (
        "def split():\n"
        "    from os \\\n"
        "        import path\n"
        "    return path\n"
        "\n"
        "\n"
        "def cached():\n"
        "    global CACHE\n"
        "    CACHE = 1\n"
        "\n"
        "\n"
        "class Box:\n"
        "    def open(self):\n"
        "        import json\n"
        "        return json\n"
        "\n"
        "\n"
        "def plain(x: int) -> int:\n"
        "    return x  # no statement here, though a comment says import\n"
    )
    ir = read_python(source.encode(), path="m.py", module="m", python_version=(3, 11)).ir
    assert ir is not None
    assert [(i.module, i.scope) for i in ir.imports] == [("os", "split"), ("json", "Box.open")]
    assert [(g.name, g.function) for g in ir.globals] == [("CACHE", "cached")]
