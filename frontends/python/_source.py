"""Source text handling shared by the Python and notebook front ends: decoding, source
segments and spans (the ``3.N`` rule is ``svcc.ir.python_version``).

``ast`` reports columns as UTF-8 byte offsets; spans are stored in characters, and
notebook spans are mapped back to (cell, line) through a line map.
"""

import ast
import bisect
import io
import tokenize
from collections.abc import Sequence

from svcc.ir.model import Span


class SourceDecodeError(ValueError):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def decode_source(data: bytes, encoding: str | None = None) -> tuple[str, str]:
    """Decode Python source bytes: an explicit ``encoding`` wins, else PEP 263 (cookie, BOM,
    UTF-8 default). Newlines are normalised to ``\\n``. Returns ``(text, encoding)``."""
    if encoding is None:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            raise SourceDecodeError(str(exc), None) from None
    try:
        text = data.decode(encoding)
    except LookupError:
        raise SourceDecodeError(f"unknown encoding {encoding!r}", None) from None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SourceDecodeError(
            f"not valid {encoding} at byte {exc.start} (line {line})", line
        ) from None
    except Exception as exc:  # a codec that refuses all input (`undefined`) or misbehaves
        raise SourceDecodeError(
            f"encoding {encoding!r} cannot decode source: {type(exc).__name__}: {exc}", None
        ) from None
    if not isinstance(text, str):
        raise SourceDecodeError(f"encoding {encoding!r} is not a text encoding", None)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, encoding


class SourceText:
    """The module's lines, with segment and span extraction for AST nodes.

    ``line_map`` (notebooks) maps a 1-based module line to ``(cell, line in cell)``.
    """

    __slots__ = ("_text", "_word_lines", "line_map", "lines")

    def __init__(self, text: str, line_map: Sequence[tuple[int, int]] | None = None) -> None:
        self._text = text
        self.lines = text.split("\n")
        self.line_map = line_map
        self._word_lines: dict[str, list[int]] = {}

    def mentions(self, node: ast.AST, word: str) -> bool:
        """Whether a line of ``node`` holds ``word`` (anywhere: in a string or a comment
        too). A statement with a keyword in it (``import``, ``global``) has the word on one
        of its lines, so a node without it needs no walk looking for one; the lines holding
        each word are found once per module."""
        found = self._word_lines.get(word)
        if found is None:
            found = self._word_lines[word] = self._lines_holding(word)
        start: int = node.lineno  # type: ignore[attr-defined]
        end: int = node.end_lineno or start  # type: ignore[attr-defined]
        index = bisect.bisect_left(found, start)
        return index < len(found) and found[index] <= end

    def _char_col(self, lineno: int, byte_col: int) -> int:
        if not 0 < lineno <= len(self.lines):
            return byte_col
        line = self.lines[lineno - 1]
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> Span:
        try:  # statements and expressions have all four (read directly: spans are many)
            lineno: int = node.lineno  # type: ignore[attr-defined]
            end_lineno: int = node.end_lineno or lineno  # type: ignore[attr-defined]
            col: int = node.col_offset  # type: ignore[attr-defined]
            end_col: int = node.end_col_offset or 0  # type: ignore[attr-defined]
        except AttributeError:
            lineno = getattr(node, "lineno", 1)
            end_lineno = getattr(node, "end_lineno", None) or lineno
            col = getattr(node, "col_offset", 0)
            end_col = getattr(node, "end_col_offset", None) or 0
        lines = self.lines
        # ``_char_col`` inlined for ASCII lines (most): a byte offset is a character offset
        if end_lineno == lineno:
            end_lineno = lineno  # one int object for both (a long module holds millions)
            if not (0 < lineno <= len(lines) and lines[lineno - 1].isascii()):  # one line
                col = self._char_col(lineno, col)  # judged once for both ends
                end_col = self._char_col(end_lineno, end_col)
        else:
            if not (0 < lineno <= len(lines) and lines[lineno - 1].isascii()):
                col = self._char_col(lineno, col)
            if not (0 < end_lineno <= len(lines) and lines[end_lineno - 1].isascii()):
                end_col = self._char_col(end_lineno, end_col)
        if self.line_map is None:
            return Span(line=lineno, column=col, end_line=end_lineno, end_column=end_col)
        return self.make_span(lineno, col, end_lineno, end_col)

    def _lines_holding(self, word: str) -> list[int]:
        """The numbers of the lines holding ``word``, in order: the text searched, its
        newlines counted between matches (a loop over the lines was a twentieth of
        lowering)."""
        text = self._text
        found: list[int] = []
        line, counted = 1, 0
        position = text.find(word)
        while position >= 0:
            line += text.count("\n", counted, position)
            counted = position
            if not found or found[-1] != line:
                found.append(line)
            position = text.find(word, position + len(word))
        return found

    def make_span(self, line: int, col: int, end_line: int, end_col: int) -> Span:
        if self.line_map is None:
            return Span(line=line, column=col, end_line=end_line, end_column=end_col)
        cell, cell_line = self.line_map[min(line, len(self.line_map)) - 1]
        end_cell, end_cell_line = self.line_map[min(end_line, len(self.line_map)) - 1]
        if end_cell != cell:  # a construct never crosses cells; clamp defensively
            end_cell_line, end_col = cell_line, col
        return Span(
            line=cell_line, column=col, end_line=end_cell_line, end_column=end_col, cell=cell
        )

    def segment(self, node: ast.AST) -> str:
        """The exact source text of ``node`` (what ``ast.get_source_segment`` returns, without
        re-splitting the whole source on every call)."""
        lineno: int = node.lineno  # type: ignore[attr-defined]
        end_lineno: int = node.end_lineno  # type: ignore[attr-defined]
        col: int = node.col_offset  # type: ignore[attr-defined]
        end_col: int = node.end_col_offset  # type: ignore[attr-defined]
        if lineno == end_lineno:
            line = self.lines[lineno - 1]
            if line.isascii():
                return line[col:end_col]
            return line.encode("utf-8")[col:end_col].decode("utf-8", "replace")
        first = self.lines[lineno - 1].encode("utf-8")[col:].decode("utf-8", "replace")
        last = self.lines[end_lineno - 1].encode("utf-8")[:end_col].decode("utf-8", "replace")
        return "\n".join([first, *self.lines[lineno : end_lineno - 1], last])


def short(text: str, limit: int = 60) -> str:
    """One line of at most ``limit`` characters, for messages."""
    first = " ".join(text.split())
    return first if len(first) <= limit else first[: limit - 1] + "…"
