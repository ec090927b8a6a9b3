"""A capability's MCP ``inputSchema`` is its REST request schema: one lowering, two placements.

The REST document keeps TypedDicts in ``components/schemas``; the tool keeps them in its own
``$defs``. Moving the REST references to ``#/$defs/`` and gathering the definitions they
reach must give the tool's schema exactly, for every capability of every bundle fixture.
"""

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import case_arguments, case_input, case_options, cases
from servers import FIXTURES, generate

COMPONENTS = "#/components/schemas/"


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def _relocated(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (v.replace(COMPONENTS, "#/$defs/") if k == "$ref" else _relocated(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_relocated(v) for v in node]
    return node


def rest_request_as_tool_schema(openapi: dict[str, Any], name: str) -> dict[str, Any]:
    components = openapi["components"]["schemas"]
    request = components[f"request.{name}"]
    reached: dict[str, Any] = {}
    pending = sorted(_refs(request))
    while pending:
        ref = pending.pop()
        key = ref.removeprefix(COMPONENTS)
        if key not in reached:
            reached[key] = components[key]
            pending.extend(_refs(components[key]))
    schema = _relocated(request)
    if reached:
        schema["$defs"] = _relocated(dict(sorted(reached.items())))
    return schema


def compare(source: Path, tmp_path: Path, *args: str) -> int:
    generate(source, tmp_path / "rest", *args)
    generate(source, tmp_path / "mcp", *args, interface="mcp")
    openapi = json.loads((tmp_path / "rest" / "openapi.json").read_text())
    tools = json.loads((tmp_path / "mcp" / "mcp-tools.json").read_text())["tools"]
    assert len(tools) == len([p for p in openapi["paths"] if p.startswith("/capabilities/")])
    for tool in tools:
        assert tool["inputSchema"] == rest_request_as_tool_schema(openapi, tool["name"])
    return len(tools)


def test_rules_fixture(tmp_path: Path) -> None:
    count = compare(
        FIXTURES / "rules.py",
        tmp_path,
        "--requirements",
        str(FIXTURES / "requirements.txt"),
        "--allow",
        "env",
    )
    # every public function of the fixture is eligible and becomes one tool (counted from
    # the source itself, not tuned to the corpus)
    tree = ast.parse((FIXTURES / "rules.py").read_text())
    public = [
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and not n.name.startswith("_")
    ]
    assert count == len(public)


@pytest.mark.parametrize(
    "case", [c for c in cases() if "mcp" in case_options(c).get("targets", [])]
)
def test_golden_cases(case: str, tmp_path: Path) -> None:
    assert compare(case_input(case), tmp_path, *case_arguments(case))
