"""Parameter and result descriptions: from docstrings (Google, NumPy, reST, parsed by
``docstring_parser``) and from the code (``Annotated[T, Field(description=...)]``, a
pydantic model's ``Field(description=...)``), into the MCP input/output schemas and the
OpenAPI request/response schemas alike. The golden case ``param_docs`` pins the documents;
this file spells what they must say."""

import json
import textwrap
from pathlib import Path
from typing import Any

from helpers import GOLDEN, case_input
from mcp_client import McpBundle
from servers import generate
from svcc.compiler.driver import analyze_file
from svcc.compiler.passes.docstrings import parse_docstring

CASE = GOLDEN / "param_docs"
EXPECTED = {
    "google_style": {"radius": "The circle's radius, in metres.", "scale": "How many circles."},
    "numpy_style": {
        "values": "The series to smooth.",
        "window": "How many values each average covers.",
    },
    "rest_style": {"text": "The text to wrap.", "width": "The longest line."},
    # the annotation's description wins over the docstring's
    "annotated": {"count": "How many items to take.", "label": "The label to repeat."},
    "place": {"order": "The order to place."},
    "stale": {"size": "The size."},
}
RETURNS = {
    "google_style": "The total area, in square metres.",
    "numpy_style": "The averages, one per full window.",
    "rest_style": "The wrapped text.",
}


def _descriptions(schema: dict[str, Any]) -> dict[str, str]:
    return {k: v["description"] for k, v in schema["properties"].items() if "description" in v}


def test_every_style_reaches_both_schemas() -> None:
    tools = {t["name"]: t for t in json.loads((CASE / "mcp/mcp-tools.json").read_text())["tools"]}
    openapi = json.loads((CASE / "rest/openapi.json").read_text())
    schemas = openapi["components"]["schemas"]
    assert set(tools) == set(EXPECTED)
    for name, expected in EXPECTED.items():
        assert _descriptions(tools[name]["inputSchema"]) == expected, name
        assert _descriptions(schemas[f"request.{name}"]) == expected, name
        result = tools[name].get("outputSchema", {}).get("properties", {}).get("result", {})
        assert result.get("description") == RETURNS.get(name), name
        response = openapi["paths"][f"/capabilities/{name}"]["post"]["responses"]["200"]
        assert response["content"]["application/json"]["schema"].get("description") == (
            RETURNS.get(name)
        )


def test_model_field_descriptions_reach_the_definitions() -> None:
    tools = {t["name"]: t for t in json.loads((CASE / "mcp/mcp-tools.json").read_text())["tools"]}
    order = tools["place"]["inputSchema"]["$defs"]["Order"]
    assert _descriptions(order) == {"item": "The item's name.", "quantity": "How many to order."}
    assert order["properties"]["quantity"]["minimum"] == 1, "bounds are kept beside it"
    schemas = json.loads((CASE / "rest/openapi.json").read_text())["components"]["schemas"]
    assert schemas["Order"] == order


def test_a_parameter_the_signature_lacks_is_a_warning() -> None:
    readiness = json.loads((CASE / "analysis/readiness.json").read_text())
    stale = next(a for a in readiness["assessments"] if a["name"] == "stale")
    assert stale["class"] == "eligible"
    [reason] = stale["reasons"]
    assert reason["code"] == "SVC-R070"
    assert reason["severity"] == "warning"
    assert "'colour'" in reason["message"]


def test_a_docstring_that_is_only_prose_documents_nothing(tmp_path: Path) -> None:
    assert parse_docstring("Just prose.\n\nArgs: nothing to see").params == ()
    assert parse_docstring(None).params == ()
    assert parse_docstring(":param: broken\n:returns").returns is None
    path = tmp_path / "m.py"
    path.write_text(
        textwrap.dedent(
            '''
            def f(a: int, *args: int) -> int:
                """Sum.

                Args:
                    a: First.
                    *args: The rest.
                """
                return a
            '''
        )
    )
    analysis = analyze_file(path, python_version="3.11")
    assert analysis.readiness is not None
    f = analysis.readiness.assessment("f")
    assert f is not None
    assert "SVC-R070" not in {r.code for r in f.reasons}


def test_the_official_client_sees_the_descriptions(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    source = case_input("param_docs")
    generate(source, out, "--requirements", str(CASE / "requirements.txt"), interface="mcp")
    client = McpBundle(out)
    try:
        tools = {t.name: t for t in client.list_tools().tools}
        assert tools["numpy_style"].title == "Moving average"
        assert _descriptions(tools["numpy_style"].input_schema) == EXPECTED["numpy_style"]
        output = tools["google_style"].output_schema
        assert output is not None
        assert output["properties"]["result"]["description"] == RETURNS["google_style"]
        answer = client.call("google_style", {"radius": 1.0})
        assert answer.structured_content == {"result": 3.14159}
    finally:
        client.close()


def test_descriptions_the_code_attaches(tmp_path: Path) -> None:
    """``Annotated`` metadata (pydantic ``Field``, ``typing_extensions.Doc``) and a default
    ``cog.Input(description=...)`` are recorded in the IR, literal text only."""
    path = tmp_path / "m.py"
    path.write_text(
        textwrap.dedent(
            """
            from typing import Annotated
            from cog import Input
            from pydantic import Field
            from typing_extensions import Doc

            NAME = "computed"

            def f(
                a: Annotated[int, Field(ge=0, description="From Field.")],
                b: Annotated[int, Doc("From Doc.")],
                c: str = Input(description="From cog."),
                d: Annotated[int, Field(description=NAME)] = 1,
            ) -> int:
                return a
            """
        )
    )
    analysis = analyze_file(path, python_version="3.11")
    assert analysis.ir is not None
    [cap] = analysis.ir.capabilities
    described = {p.name: p.description for p in cap.params}
    assert described == {"a": "From Field.", "b": "From Doc.", "c": "From cog.", "d": None}
