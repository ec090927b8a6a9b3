"""Diagnostics as data: a stable code, a severity, a dimension, a message and a span.

Front ends and passes return diagnostics; they raise only for bugs and usage errors. This
package is a leaf (it imports only ``svcc.ir``) so front ends can use it too.
"""

from typing import Any

from attrs import frozen
from svcc.compiler.diagnostics.codes import REGISTRY, Code, Dimension, Severity
from svcc.ir.model import Span


@frozen(kw_only=True)
class Diagnostic:
    code: str
    message: str
    span: Span | None

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
            "line": span.line if span else None,
            "end_line": span.end_line if span else None,
            "column": span.column if span else None,
            "cell": span.cell if span else None,
        }

    def location(self, path: str) -> str:
        """``path:line:col`` or ``path: cell N, line L`` for notebooks."""
        span = self.span
        if span is None:
            return path
        if span.cell is not None:
            return f"{path}: cell {span.cell}, line {span.line}"
        return f"{path}:{span.line}:{span.column + 1}"


def diag(code: Code, message: str, span: Span | None) -> Diagnostic:
    return Diagnostic(code=code.code, message=message, span=span)


def render(diagnostic: Diagnostic, path: str, source_lines: list[str] | None = None) -> str:
    """One diagnostic for people: location, severity, code, message, and the line underlined."""
    d = diagnostic
    head = f"{d.location(path)}: {d.severity}: {d.code} {d.message}"
    span = diagnostic.span
    if span is None or not source_lines or span.cell is not None:
        return head
    if not 0 < span.line <= len(source_lines):
        return head
    text = source_lines[span.line - 1].rstrip("\n")
    end = span.end_column if span.end_line == span.line else len(text)
    width = max(1, end - span.column)
    return f"{head}\n    {text}\n    {' ' * span.column}{'^' * width}"


__all__ = ["Code", "Diagnostic", "Dimension", "Severity", "diag", "render"]
