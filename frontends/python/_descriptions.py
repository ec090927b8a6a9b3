"""Descriptions the source spells for a parameter or a model field, read without running it.

``Annotated[int, Field(description="...")]`` (pydantic's ``Field``, a dataclass ``field``'s
``metadata`` aside), ``Annotated[int, Doc("...")]`` (``typing_extensions.Doc``), a
default ``Field(description="...")`` or ``cog.Input(description="...")``: the description
when it is a string literal. Docstrings are parsed later, by the compiler (one library for
three styles); these are the descriptions the code itself attaches.
"""

import ast
from collections.abc import Callable

from svcc.frontends.python._types import ANNOTATED

# Calls whose ``description=`` keyword (or, for ``Doc``, first argument) describes a value.
DESCRIBERS = frozenset(
    {"pydantic.Field", "pydantic.fields.Field", "cog.Input", "cog.predictor.Input"}
)
DOCS = frozenset({"typing_extensions.Doc", "typing.Doc", "annotated_doc.Doc"})

Qualify = Callable[[ast.expr], str | None]


def described(node: ast.expr | None, qualify: Qualify) -> str | None:
    """The literal description ``node`` (a ``Field(...)``, ``Input(...)`` or ``Doc(...)``
    call) gives, or ``None``."""
    if not isinstance(node, ast.Call):
        return None
    callee = qualify(node.func)
    if callee in DOCS and node.args:
        return _text(node.args[0])
    if callee in DESCRIBERS:
        for keyword in node.keywords:
            if keyword.arg == "description":
                return _text(keyword.value)
    return None


def annotation_description(annotation: ast.expr | None, qualify: Qualify) -> str | None:
    """The description in ``Annotated[T, ...]``'s metadata (the first one), or ``None``."""
    if not isinstance(annotation, ast.Subscript) or qualify(annotation.value) not in ANNOTATED:
        return None
    items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
    for meta in items[1:]:
        found = described(meta, qualify)
        if found is not None:
            return found
    return None


def _text(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.strip() or None
    return None
