"""A module's top-level statements, parsed a slice of lines at a time.

``ast`` builds Python objects for every node of the whole module: about 2.5 KB per
``x = 1`` line, so a 15 MB module held 6 GB of syntax tree at once. The front end only ever
needs one top-level statement at a time (the IR records facts, never the tree), so a long
module is cut at lines that can start a top-level statement and each slice is parsed on its
own; the previous slice's tree is garbage by the time the next one is built.

Why a cut is safe: a slice is cut only before a line that starts in column 0 with something
other than a clause keyword (``else``, ``elif``, ``except``, ``finally``). If the cut falls
inside a string, brackets or a backslash continuation, the slice before it ends inside that
token and does not parse; the slice is then grown (doubling, so retries cost O(n) in all)
until it parses. A slice that parses therefore ends where the whole module's tokenizer is
between statements, and its statements are the whole module's statements. Anything else
(a real syntax error, or a slice that cannot be made to parse) falls back to parsing the
whole text, so errors are reported exactly as before.
"""

import ast
from collections.abc import Callable, Iterator, Sequence

# Modules up to this many lines are parsed in one piece (every ordinary module).
SLICE_LINES = 20_000
_CLAUSES = ("else", "elif", "except", "finally")


def _can_start_statement(line: str) -> bool:
    if not line or line[0].isspace() or line[0] in "#)]}":
        return False
    if line.startswith(_CLAUSES):
        word = line.split(None, 1)[0].split(":", 1)[0].split("(", 1)[0]
        return word not in _CLAUSES
    return True


def _cut(lines: Sequence[str], at: int) -> int:
    """The first line index >= ``at`` that may start a top-level statement (or the end)."""
    while at < len(lines) and not _can_start_statement(lines[at]):
        at += 1
    return at


def top_level_statements(
    text: str,
    lines: Sequence[str],
    parse: Callable[[str], ast.Module],
    slice_lines: int = SLICE_LINES,
) -> Iterator[ast.stmt]:
    """The module's top-level statements with their real line numbers, one slice's tree
    alive at a time. ``lines`` is ``text.split("\\n")``; ``parse`` raises as ``ast.parse``
    does. Raises the whole text's parse error when the text does not parse."""
    if len(lines) <= slice_lines:
        yield from parse(text).body
        return
    start = 0
    while start < len(lines):
        size = slice_lines
        while True:
            end = _cut(lines, start + size)
            try:
                # the slice after ``start`` empty lines: its nodes get their real line
                # numbers from the parser (blank lines cost the tokenizer next to nothing;
                # ``ast.increment_lineno`` walked every node in Python)
                tree = parse("\n" * start + "\n".join(lines[start:end]))
                break
            except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
                if end >= len(lines):
                    # The whole text: its own error, or (a cut the rules above did not
                    # foresee) its statements from this slice on.
                    for stmt in parse(text).body:
                        if stmt.lineno > start:
                            yield stmt
                    return
                size *= 2
        yield from tree.body
        del tree
        start = end
