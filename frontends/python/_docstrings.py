"""A definition's docstring, cleaned as ``ast.get_docstring(node, clean=True)`` cleans it,
without importing :mod:`inspect` for the common docstring.

``ast.get_docstring`` imports ``inspect`` for ``inspect.cleandoc``: with ``dis`` and
``opcode`` behind it, a tenth of a cold ``svcc inspect FILE``. A docstring without tabs
whose lines start with spaces (or nothing) before their text is cleaned here, by the same
steps every supported Python's ``cleandoc`` takes for it; any other goes to ``inspect``
itself (the interpreters differ on other leading whitespace), so the text is always the
running interpreter's.
"""

import ast
import sys

DocumentedNode = ast.AsyncFunctionDef | ast.FunctionDef | ast.ClassDef | ast.Module


def get_docstring(node: DocumentedNode) -> str | None:
    """``ast.get_docstring(node, clean=True)``."""
    if not (node.body and isinstance(node.body[0], ast.Expr)):
        return None
    value = node.body[0].value
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None
    return cleandoc(value.value)


def cleandoc(doc: str) -> str:
    """``inspect.cleandoc(doc)``: the first line's leading whitespace and the common
    indentation of the others removed, leading and trailing blank lines dropped."""
    lines = doc.split("\n")
    if "\t" in doc or any(line.lstrip() != line.lstrip(" ") for line in lines):
        import inspect

        return inspect.cleandoc(doc)
    margin = sys.maxsize
    for line in lines[1:]:
        content = len(line.lstrip(" "))
        if content:
            margin = min(margin, len(line) - content)
    lines[0] = lines[0].lstrip(" ")
    if margin < sys.maxsize:
        for i in range(1, len(lines)):
            lines[i] = lines[i][margin:]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)
