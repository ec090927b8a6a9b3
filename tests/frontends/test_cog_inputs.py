"""Cog's and pydantic's parameter descriptors (``cog.Input(...)``, ``Field(...)``,
``Annotated[T, Field(...)]``): read statically into the request schema, enforced by the
served bundle (a 422 over REST, a tool error over MCP), with the bundle's own ``cog`` module
standing in for the Cog package. The golden cases ``cog_inputs`` (served) and
``cog_refusals`` (each refusal on its line) pin the documents; this file checks what they
must say and do."""

import importlib.util
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers import GOLDEN, case_input
from mcp_client import McpBundle
from pydantic_core import to_json
from servers import generate, serving
from svcc.compiler.driver import analyze_file
from svcc.runtime.validation import RequestInvalid, RequestValidator

CASE = GOLDEN / "cog_inputs"
REQUIREMENTS = str(CASE / "requirements.txt")

# Each body is refused for the keyword its name says.
REFUSED = {
    "too short": ({"prompt": ""}, "string_too_short"),
    "too long": ({"prompt": "x" * 201}, "string_too_long"),
    "above maximum": ({"prompt": "a", "temperature": 1.5}, "less_than_equal"),
    "below minimum": ({"prompt": "a", "temperature": -0.1}, "greater_than_equal"),
    "not a choice": ({"prompt": "a", "style": "haiku"}, "literal_error"),
    "pattern": ({"prompt": "a", "language": "EN"}, "string_pattern_mismatch"),
    "exclusive bound": ({"prompt": "a", "steps": 100}, "less_than"),
    "bound in a union": ({"prompt": "a", "seed": -1}, "greater_than_equal"),
    "required": ({}, "missing"),
}


def _schema(name: str) -> dict[str, Any]:
    openapi = json.loads((CASE / "rest/openapi.json").read_text())
    schema: dict[str, Any] = openapi["components"]["schemas"][f"request.{name}"]
    return schema


def test_the_keywords_reach_both_schemas() -> None:
    schema = _schema("generate")
    props = schema["properties"]
    assert props["prompt"] == {
        "description": "What to write about.",
        "maxLength": 200,
        "minLength": 1,
        "type": "string",
    }
    assert props["temperature"]["minimum"] == 0.0
    assert props["temperature"]["maximum"] == 1.0
    assert props["temperature"]["default"] == 0.75
    assert props["style"] == {
        "default": "plain",
        "enum": ["plain", "poem", "list"],
        "type": "string",
    }
    assert props["language"]["pattern"] == "^[a-z]{2}$"
    assert props["steps"] == {"exclusiveMaximum": 100, "exclusiveMinimum": 0, "type": "integer"}
    # a bound goes to the union's option it applies to (where the validator checks it)
    assert props["seed"]["anyOf"] == [{"minimum": 0, "type": "integer"}, {"type": "null"}]
    # Input() without default= is required, as in Cog
    assert schema["required"] == ["prompt"]
    tools = json.loads((CASE / "mcp/mcp-tools.json").read_text())["tools"]
    [tool] = tools
    assert tool["inputSchema"] == schema


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_validator_refuses_what_the_schema_refuses(case: str) -> None:
    body, kind = REFUSED[case]
    validator = RequestValidator(_schema("generate"), {})
    with pytest.raises(RequestInvalid) as caught:
        validator.validate_json(to_json(body))
    assert kind in {e["type"] for e in caught.value.errors}


def test_the_stated_default_is_what_the_call_receives() -> None:
    """``Field(default=...)`` as a plain function's default is a ``FieldInfo`` to Python:
    the validator supplies the schema's ``default`` instead."""
    values = RequestValidator(_schema("generate"), {}).validate_json(b'{"prompt": "a"}')
    assert values == {
        "prompt": "a",
        "temperature": 0.75,
        "style": "plain",
        "language": "en",
        "seed": None,
    }


def test_choices_with_bounds_must_satisfy_both() -> None:
    schema = {
        "type": "object",
        "properties": {"size": {"type": "string", "maxLength": 2, "enum": ["s", "xl", "xxl"]}},
        "required": ["size"],
        "additionalProperties": False,
    }
    validator = RequestValidator(schema, {})
    assert validator.validate_json(b'{"size": "xl"}') == {"size": "xl"}
    with pytest.raises(RequestInvalid):
        validator.validate_json(b'{"size": "xxl"}')


def test_served_over_rest_without_the_cog_package(tmp_path: Path) -> None:
    assert importlib.util.find_spec("cog") is None, "the bundle's own cog must be the one used"
    out = tmp_path / "bundle"
    generate(case_input("cog_inputs"), out, "--requirements", REQUIREMENTS)
    assert (out / "source/cog.py").is_file()
    with serving(out) as server, server.client() as client:
        answer = client.post("/capabilities/generate", json={"prompt": "tea"})
        assert answer.status_code == 200, answer.text
        assert answer.json() == "plain:en:tea:0.75:10:None"
        answer = client.post(
            "/capabilities/generate",
            json={"prompt": "tea", "style": "poem", "seed": 3, "steps": 5, "temperature": 0},
        )
        assert answer.json() == "poem:en:tea:0.0:5:3"
        for case, (body, kind) in REFUSED.items():
            refused = client.post("/capabilities/generate", json=body)
            assert refused.status_code == 422, case
            assert kind in {e["type"] for e in refused.json()["detail"]}, case


def test_served_over_mcp_through_the_official_client(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    generate(case_input("cog_inputs"), out, "--requirements", REQUIREMENTS, interface="mcp")
    client = McpBundle(out)
    try:
        [tool] = client.list_tools().tools
        assert tool.input_schema["properties"]["style"]["enum"] == ["plain", "poem", "list"]
        answer = client.call("generate", {"prompt": "tea", "style": "list"})
        assert not answer.is_error
        assert answer.structured_content == {"result": "list:en:tea:0.75:10:None"}
        for case in ("too long", "above maximum", "not a choice", "pattern"):
            refused = client.call("generate", REFUSED[case][0])
            assert refused.is_error, case
    finally:
        client.close()


def test_refusals_name_the_keyword() -> None:
    analysis = analyze_file(
        case_input("cog_refusals"),
        module_name="cog_refusals",
        python_version="3.11",
    )
    assert analysis.readiness is not None
    said = {a.name: " ".join(r.message for r in a.reasons) for a in analysis.readiness.assessments}
    assert "le=LIMIT (not a literal)" in said["computed"]
    assert "ge=0 applies to no value of this type" in said["misplaced"]
    assert "multiple_of=0.5 (not served)" in said["not_served"]
    assert "a Cog file" in said["upscale"]
    assert "a Cog file" in said["render"]


@pytest.mark.parametrize(
    ("imports", "served"),
    [
        ("from cog import BasePredictor, Input, Path, File, Secret", True),
        ("import cog", True),
        ("from cog import emit_metric", False),
        ("from cog.types import Path", False),
    ],
)
def test_imports_of_cog_resolve_to_the_shim(tmp_path: Path, imports: str, served: bool) -> None:
    path = tmp_path / "m.py"
    path.write_text(f"{imports}\n\n\ndef f(x: int) -> int:\n    return x\n")
    analysis = analyze_file(path, python_version="3.11")
    assert analysis.readiness is not None
    [assessment] = analysis.readiness.assessments
    codes = {r.code for r in assessment.reasons}
    assert ("SVC-R008" not in codes) is served, assessment.reasons


def test_the_shim_is_cog_as_predictors_use_it() -> None:
    from svcc.runtime import cog

    assert cog.Input(default=0.5, ge=0, le=1, description="x") == 0.5
    assert cog.Input(description="required") is None

    class Predictor(cog.BasePredictor):
        def setup(self) -> None:
            self.ready = True

        def predict(self, text: str = cog.Input(default="hi")) -> str:
            return text

    predictor = Predictor()
    predictor.setup()
    assert predictor.predict() == "hi"
    assert isinstance(cog.Path("/tmp/x"), Path)
    assert cog.Secret("s").get_secret_value() == "s"


def test_a_module_without_cog_ships_no_shim(tmp_path: Path) -> None:
    source = tmp_path / "plain.py"
    source.write_text(
        textwrap.dedent(
            """
            from pydantic import Field


            def f(n: int = Field(default=2, ge=1)) -> int:
                return n
            """
        )
    )
    out = tmp_path / "bundle"
    generate(source, out, "--requirements", REQUIREMENTS)
    assert not (out / "source/cog.py").exists()
    schema = json.loads((out / "openapi.json").read_text())["components"]["schemas"]["request.f"]
    assert schema["properties"]["n"] == {"default": 2, "minimum": 1, "type": "integer"}
    assert schema["required"] == []


def test_fractional_bounds_of_an_integer_admit_the_same_integers() -> None:
    """``Input(ge=0.5)`` on an ``int``: the schema's number bounds, which pydantic-core
    refuses on an integer when the server starts, become the integer bounds admitting
    exactly the same integers (checked against the JSON Schema itself)."""
    import jsonschema

    prop = {"type": "integer", "minimum": 0.5, "exclusiveMaximum": 2.5}
    schema = {"type": "object", "properties": {"n": prop}, "additionalProperties": False}
    validator = RequestValidator(schema, {})
    for n in range(-2, 5):
        documented = jsonschema.Draft202012Validator(schema).is_valid({"n": n})
        try:
            validator.validate_json(to_json({"n": n}))
            served = True
        except RequestInvalid:
            served = False
        assert served == documented, n
