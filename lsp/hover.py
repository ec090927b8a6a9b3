"""Hover on a function: its readiness class, its reasons and the request schema it would
get (the MCP ``inputSchema``, which is the REST request body's schema with its
definitions inline), as Markdown."""

import json
from typing import TYPE_CHECKING

from svcc.contracts.diagnostics.reporting import code_url

if TYPE_CHECKING:
    from svcc.compiler.driver import Analysis
    from svcc.ir.model import Capability


def capability_at(analysis: "Analysis", line: int, cell: int | None = None) -> "Capability | None":
    """The capability whose ``def`` (decorators to the end of its body) holds the 1-based
    ``line`` (of ``cell``, for a notebook)."""
    ir = analysis.ir
    if ir is None:
        return None
    for cap in ir.capabilities:
        span = cap.span
        first = min([span.line, *(d.span.line for d in cap.decorators if d.span.cell == span.cell)])
        if span.cell == cell and first <= line <= span.end_line:
            return cap
    return None


def hover_markdown(analysis: "Analysis", cap: "Capability") -> str:
    report = analysis.readiness
    assessment = report.assessment(cap.id) if report is not None else None
    klass = assessment.klass if assessment is not None else "unknown"
    lines = [f"**{cap.name}**: `{klass}` (svcc readiness)", ""]
    if assessment is not None and assessment.can_generate_interface:
        lines.append("Can be served as a REST operation and an MCP tool.")
    if assessment is not None:
        for r in assessment.reasons:
            lines.append(f"- [{r.code}]({code_url(r.code)}) {r.severity}: {r.message}")
    schema = request_schema_text(analysis, cap)
    if schema is not None:
        lines += ["", "Request schema:", "", "```json", schema, "```"]
    return "\n".join(lines)


def request_schema_text(analysis: "Analysis", cap: "Capability") -> str | None:
    """The capability's request schema as the bundles would carry it; ``None`` when its
    parameters have none (``*args``, an unsupported type)."""
    from svcc.backends.schemas import LoweringError, request_schema

    if analysis.ir is None:
        return None
    try:
        schema = request_schema(cap).self_contained(analysis.ir)
    except (LoweringError, KeyError, ValueError):
        return None
    return json.dumps(schema, indent=2, sort_keys=True)
