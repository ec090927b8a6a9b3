"""The front end's docstrings are ``ast.get_docstring(node, clean=True)``'s, read without
importing ``inspect`` for the common docstring (``svcc.frontends.python._docstrings``)."""

import ast
import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st
from svcc.frontends.python._docstrings import cleandoc, get_docstring

DOCS = [
    "",
    "One line.",
    "   Leading spaces.",
    "Trailing spaces.   ",
    "\n\n  Blank lines first.\n\n",
    "Summary.\n\n    Indented body.\n      Deeper.\n    Back.\n    ",
    "Summary.\n  two\n    four\n\n  two again",
    "\tA tab first.\n\tand after",
    "Summary.\n\t\tTabbed body.\n    mixed",
    "Summary.\n   \x0cform feed\n   next",
    "Summary.\n\u3000ideographic space\n body",
    "  \n   \n",
    "Summary.\r\n    carriage return\r\n",
    "Ünïcödé.\n    — dash",
]


@pytest.mark.parametrize("doc", DOCS)
def test_cleaned_as_inspect_cleans(doc: str) -> None:
    assert cleandoc(doc) == inspect.cleandoc(doc)


@pytest.mark.parametrize(
    "source",
    [
        'def f():\n    """Doc.\n\n    Body.\n    """\n',
        "class C:\n    'single'\n",
        'async def f():\n    """\n    Starts on the next line.\n    """\n',
        "def f():\n    return 1\n",
        "def f():\n    b'bytes are not a docstring'\n",
        "def f():\n    1\n",
        '"""A module."""\nx = 1\n',
        "",
    ],
)
def test_the_docstring_of_a_definition(source: str) -> None:
    module = ast.parse(source)
    nodes = [
        module,
        *(
            n
            for n in module.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        ),
    ]
    for node in nodes:
        assert get_docstring(node) == ast.get_docstring(node, clean=True)


@given(st.text(alphabet=" \t\n\x0c\r\u3000ab", max_size=40))
def test_any_docstring_cleaned_as_inspect_cleans(doc: str) -> None:
    assert cleandoc(doc) == inspect.cleandoc(doc)
