"""A module's top-level statements, parsed a slice of lines at a time.

``ast`` builds Python objects for every node of the whole module: about 2.5 KB per
``x = 1`` line, so a 15 MB module held 6 GB of syntax tree at once. The front end only ever
needs one top-level statement at a time (the IR records facts, never the tree), so a long
module is cut at lines that can start a top-level statement and each slice is parsed on its
own; the previous slice's tree is garbage by the time the next one is built (but the
first one, which the lowerer's second pass reuses: see :class:`SlicedModule`).

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
PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


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


class SliceParseError(Exception):
    """The module does not parse: ``error`` is what parsing the whole text raised (kept
    apart from what the lowerer itself may raise while it reads the statements)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def slices(
    text: str,
    lines: Sequence[str],
    parse: Callable[[str], ast.Module],
    slice_lines: int,
    start: int = 0,
) -> Iterator[tuple[int, ast.Module]]:
    """``(end, tree)`` for each slice from line index ``start`` (a place where a slice
    begins): ``tree`` holds the statements of ``lines[start:end]`` with their real line
    numbers. Raises :class:`SliceParseError` with the whole text's error when the text does
    not parse."""
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
            except PARSE_ERRORS:
                if end >= len(lines):
                    # The whole text: its own error, or (a cut the rules above did not
                    # foresee) its statements from this slice on.
                    try:
                        whole = parse(text)
                    except PARSE_ERRORS as exc:
                        raise SliceParseError(exc) from None
                    rest = [stmt for stmt in whole.body if stmt.lineno > start]
                    yield len(lines), ast.Module(body=rest, type_ignores=[])
                    return
                size *= 2
        yield end, tree
        del tree
        start = end


class SlicedModule:
    """A long module's top-level statements, read once per pass of the lowerer (its first
    pass collects the names the second needs).

    The first read parses every slice, shows each slice's tree to ``check`` (which may
    raise) and keeps the first slice's tree; a later read reuses that tree and parses the
    other slices again (parsing every slice twice would double the cost past
    ``SLICE_LINES``); keeping every tree would bring back the memory slicing saves, so at
    most two slices' trees are alive at once (the first one and the one being read)."""

    def __init__(
        self,
        text: str,
        lines: Sequence[str],
        parse: Callable[[str], ast.Module],
        check: Callable[[ast.Module], None],
        slice_lines: int = SLICE_LINES,
    ) -> None:
        self.text, self.lines, self.parse, self.check = text, lines, parse, check
        self.slice_lines = slice_lines
        self._first: tuple[int, ast.Module] | None = None  # (end, tree) once read whole

    def __call__(self) -> Iterator[ast.stmt]:
        if self._first is not None:
            end, tree = self._first
            yield from tree.body
            for _, later in slices(self.text, self.lines, self.parse, self.slice_lines, end):
                yield from later.body
            return
        first: tuple[int, ast.Module] | None = None
        for end, tree in slices(self.text, self.lines, self.parse, self.slice_lines):
            self.check(tree)
            first = first or (end, tree)
            yield from tree.body
        self._first = first or (len(self.lines), ast.Module(body=[], type_ignores=[]))
