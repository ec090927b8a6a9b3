"""IR → MCP tool definitions (``mcp-tools.json``, served as they are written).

The input schema is the shared request schema of the capability, made self-contained with
``$defs`` (REST places the same schema in ``components/schemas``). A result schema, when the
return annotation is expressible, is always wrapped as ``{"result": ...}`` because MCP
requires an object at the root of ``outputSchema``; wrapping every tool the same way keeps
the rule simple for clients.
"""

import re
from typing import Any, Final

from svcc.backends._common.schema import (
    JSON,
    LoweringError,
    definitions,
    request_schema,
    result_schema,
)
from svcc.compiler.passes.tool_effects import title_of, tool_effects
from svcc.contracts.program import Program
from svcc.ir.model import Capability, ModuleIR

TOOLS_SCHEMA: Final = "svc.mcp-tools/v1"
# MCP tool names: 1-128 characters of letters, digits, "_", "-" and "." (dotted repository names).
_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def output_schema(ir: ModuleIR, cap: Capability) -> JSON | None:
    result = result_schema(cap)
    if result is None:
        return None
    schema: JSON = {
        "type": "object",
        "properties": {"result": result.schema},
        "required": ["result"],
        "additionalProperties": False,
    }
    defs = definitions(ir, result.refs)
    if defs:
        schema["$defs"] = defs
    return schema


def tool_definition(ir: ModuleIR, cap: Capability) -> JSON:
    doc = (cap.docstring or "").strip()
    tool: JSON = {
        "name": cap.name,
        "description": doc or f"Call {cap.name}.",
        "inputSchema": request_schema(cap).self_contained(ir),
    }
    output = output_schema(ir, cap)
    if output is not None:
        tool["outputSchema"] = output
    tool.update(agent_hints(cap))
    return tool


def agent_hints(cap: Capability) -> JSON:
    """The tool's ``title`` and ``annotations`` (the title and every hint, written out:
    MCP's defaults are the unsafe values), derived from the effect analysis."""
    title = title_of(cap.name, cap.docstring)
    return {"title": title, "annotations": tool_effects(cap).annotations(title)}


def tools_document(program: Program) -> dict[str, Any]:
    """Every selected capability of the program as a tool, a tool name taken twice
    refused, in the order the program's layout lists tools."""
    seen: set[str] = set()
    tools = []
    for ir in program.modules:
        for cap in ir.capabilities:
            if not _NAME.fullmatch(cap.name):
                raise LoweringError(
                    f"{cap.name!r} cannot be an MCP tool name (1-128 ASCII letters, digits, "
                    "'_', '-' or '.'); select other functions or rename it"
                )
            if cap.name in seen:
                raise LoweringError(f"two capabilities would be the MCP tool {cap.name!r}")
            seen.add(cap.name)
            tools.append(tool_definition(ir, cap))
    return {"schema": TOOLS_SCHEMA, "tools": program.layout.tool_order(tools)}
