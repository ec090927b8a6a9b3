"""Diagnostics as data: a stable code, a severity, a dimension, a message and a span.

Front ends and passes return diagnostics; they raise only for bugs and usage errors. This
package is a leaf (it imports only ``svcc.ir``) so front ends can use it too.
"""

from collections.abc import Sequence
from json.encoder import encode_basestring as _string  # what ENCODER writes a str with
from typing import TYPE_CHECKING, Any

from svcc.contracts.diagnostics.codes import REGISTRY, Code, Dimension, Severity
from svcc.ir.model import Span

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen


@frozen(kw_only=True)
class Diagnostic:
    code: str
    message: str
    span: Span | None
    # How to fix it; ``None`` means the code's own hint.
    hint: str | None = None

    @property
    def entry(self) -> Code:
        return REGISTRY[self.code]

    @property
    def severity(self) -> Severity:
        return self.entry.severity

    @property
    def dimension(self) -> Dimension:
        return self.entry.dimension

    def to_json(self) -> dict[str, Any]:
        span = self.span
        return {
            "code": self.code,
            "severity": self.severity,
            "dimension": self.dimension,
            "message": self.message,
            "hint": self.hint if self.hint is not None else self.entry.hint,
            "line": span.line if span else None,
            "end_line": span.end_line if span else None,
            "column": span.column if span else None,
            "cell": span.cell if span else None,
        }

    def json_text(self) -> str:
        """``to_json()`` as canonical JSON text (``svcc.ir.canonical.ENCODER``: keys sorted,
        no spaces, non-ASCII kept), written directly: a directory's document writes tens of
        thousands, and the general encoder cost four times as much for each. The same text
        (a test compares them)."""
        span = self.span
        hint = self.hint if self.hint is not None else self.entry.hint
        entry = self.entry
        if span is None:
            where = '"cell":null,'
            lines = ('"end_line":null,', '"line":null,')
            column = '"column":null,'
        else:
            cell = "null" if span.cell is None else int.__repr__(span.cell)
            where = f'"cell":{cell},'
            lines = (
                f'"end_line":{int.__repr__(span.end_line)},',
                f'"line":{int.__repr__(span.line)},',
            )
            column = f'"column":{int.__repr__(span.column)},'
        return (
            f'{{{where}"code":{_string(self.code)},{column}'
            f'"dimension":{_string(entry.dimension)},{lines[0]}'
            f'"hint":{_string(hint)},{lines[1]}'
            f'"message":{_string(self.message)},"severity":{_string(entry.severity)}}}'
        )

    def location(self, path: str) -> str:
        """``path:line:col`` or ``path: cell N, line L`` for notebooks."""
        span = self.span
        if span is None:
            return path
        if span.cell is not None:
            return f"{path}: {where(span)}"
        return f"{path}:{span.line}:{span.column + 1}"


def where(span: Span) -> str:
    """A span for people, one way everywhere: ``line L`` or ``cell N, line L``."""
    if span.cell is not None:
        return f"cell {span.cell}, line {span.line}"
    return f"line {span.line}"


def diag(code: Code, message: str, span: Span | None, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code=code.code, message=message, span=span, hint=hint)


def excerpt(span: Span | None, lines: Sequence[str] | None) -> list[str]:
    """The spanned line and a caret underline, or nothing when the line is not at hand.

    ``lines`` are the lines the span counts in: the module's, or for a notebook span the
    lines of its cell. Tabs are kept so the carets stay under the text.
    """
    if span is None or not lines or not 0 < span.line <= len(lines):
        return []
    text = lines[span.line - 1].rstrip("\r\n")
    end = span.end_column if span.end_line == span.line else len(text)
    width = max(1, min(end, len(text)) - span.column)
    pad = "".join(c if c == "\t" else " " for c in text[: span.column])
    return [text, pad + "^" * width]


def render(diagnostic: Diagnostic, path: str, source_lines: Sequence[str] | None = None) -> str:
    """One diagnostic for people: location, severity, code, message, and the line underlined."""
    d = diagnostic
    head = f"{d.location(path)}: {d.severity}: {d.code} {d.message}"
    return "\n".join([head, *(f"    {line}" for line in excerpt(d.span, source_lines))])


__all__ = ["Code", "Diagnostic", "Dimension", "Severity", "diag", "excerpt", "render", "where"]
