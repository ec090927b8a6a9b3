"""The generated MCP bundle end to end: ``python server.py`` driven by the official ``mcp``
client (``ClientSession`` over ``stdio_client``), with the same fixture functions as the REST
tests, so every request rule is checked for tools too."""

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_client import McpBundle
from servers import FIXTURES, generate


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mcp") / "bundle"
    generate(
        FIXTURES / "rules.py",
        out,
        "--requirements",
        str(FIXTURES / "requirements.txt"),
        "--allow",
        "env",
        interface="mcp",
    )
    return out


@pytest.fixture(scope="module")
def mcp(bundle: Path) -> Iterator[McpBundle]:
    client = McpBundle(bundle)
    yield client
    client.close()


def ok(client: McpBundle, name: str, arguments: dict[str, Any] | None) -> Any:
    result = client.call(name, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content["result"]


def tool_error(client: McpBundle, name: str, arguments: dict[str, Any] | None) -> str:
    result = client.call(name, arguments)
    assert result.is_error, result
    assert result.structured_content is None
    text = result.content[0].text  # type: ignore[union-attr]
    assert isinstance(text, str)
    return text


def test_initialize(mcp: McpBundle) -> None:
    init = mcp.initialize_result
    assert init is not None
    assert init.server_info.name == "rules"
    assert init.capabilities.tools is not None


def test_list_tools_serves_the_bundled_definitions(mcp: McpBundle, bundle: Path) -> None:
    listed = mcp.list_tools().tools
    document = json.loads((bundle / "mcp-tools.json").read_text())["tools"]
    assert [t.name for t in listed] == [t["name"] for t in document]
    # one tool per capability of the source, however many the fixture holds
    capabilities = json.loads((bundle / "capability-ir.json").read_text())["capabilities"]
    assert len(listed) == len(capabilities) > 0
    for tool, expected in zip(listed, document, strict=True):
        wire = tool.model_dump(by_alias=True, exclude_none=True)
        assert wire["inputSchema"] == expected["inputSchema"]
        assert wire.get("outputSchema") == expected.get("outputSchema")
        assert wire["description"] == expected["description"]
    add = next(t for t in listed if t.name == "add")
    assert add.description == "Add two integers."
    assert add.input_schema["required"] == ["a", "b"]
    assert add.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
        "additionalProperties": False,
    }


def test_valid_sync_and_async_calls(mcp: McpBundle) -> None:
    assert ok(mcp, "add", {"a": 2, "b": 40}) == 42
    assert ok(mcp, "async_add", {"a": 2, "b": 3}) == 5
    result = mcp.call("add", {"a": 1, "b": 1})
    assert result.content[0].text == "2"  # type: ignore[union-attr]


def test_call_semantics_match_rest(mcp: McpBundle) -> None:
    assert ok(mcp, "greet", {"name": "ada"}) == "hello ada!"
    assert ok(mcp, "omitted", {}) == "omitted"
    assert ok(mcp, "nullable", {"x": None}) == "None"
    assert ok(mcp, "positional", {"a": 1, "d": 4}) == [1, 10, 20, 4, 0]
    assert ok(mcp, "keyword_only", {"key": "k"}) == {"k": 1}
    assert ok(mcp, "pair", {"p": [1, "x"]}) == ["tuple", 1, "x"]
    assert ok(mcp, "scale", {"x": 3}) == 6.0
    assert ok(mcp, "nothing", None) == "nothing"
    tree = {"label": "a", "children": [{"children": [{"label": "c"}]}]}
    assert ok(mcp, "depth", {"tree": tree}) == 3


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("add", {"a": 1, "b": 2, "c": 3}, "c"),  # unexpected
        ("add", {"a": 1}, "b"),  # missing
        ("add", {"a": "1", "b": 2}, "a"),  # string as number
        ("add", {"a": True, "b": 2}, "a"),  # boolean as number
        ("add", {"a": 1.5, "b": 2}, "a"),  # float as int
        ("scale", {"x": "2"}, "x"),
        ("negate", {"on": 1}, "on"),
        ("greet", {"name": 5}, "name"),
        ("omitted", {"x": None}, "x"),  # explicit null refused for int = None
        ("nullable_required", {}, "x"),
        ("positional", {"a": 1, "c": 3}, "b"),  # positional-only gap
        ("keyword_only", {"value": 1}, "key"),
        ("shape_size", {"shape": {"name": "t", "points": [{"x": 0}]}}, "shape.points.0.y"),
        ("shape_size", {"shape": {"name": "t", "points": [], "z": 1}}, "shape.z"),
        (
            "shape_size",
            {"shape": {"name": "t", "points": [{"x": "0", "y": 0}]}},
            "shape.points.0.x",
        ),
        ("pick", {"mode": "fast", "level": True}, "level"),  # true is never 1
        ("pick", {"mode": "medium"}, "mode"),
        ("pair", {"p": [1, "x", 2]}, "p"),
        ("nothing", {"x": 1}, "x"),
    ],
)
def test_invalid_arguments_are_tool_errors_naming_the_field(
    mcp: McpBundle, name: str, arguments: dict[str, Any], field: str
) -> None:
    text = tool_error(mcp, name, arguments)
    assert text.startswith("invalid arguments: ")
    assert f" {field}: " in f" {text.split(': ', 1)[1]}"


def test_print_never_corrupts_the_protocol(mcp: McpBundle) -> None:
    assert ok(mcp, "noisy", {"text": "abc"}) == "ABC"
    assert ok(mcp, "add", {"a": 1, "b": 2}) == 3  # the session is intact
    assert "NOISE abc" in mcp.stderr()


def test_exception_names_its_type_and_first_line(mcp: McpBundle) -> None:
    """Direct mode: what an agent can act on (as FastMCP reports it), never the traceback;
    the traceback is in the server log. Governed mode stays sanitised (test_governed)."""
    text = tool_error(mcp, "boom", {})
    assert text == "the tool raised ValueError: secret detail that must not reach the client"
    assert "Traceback" in mcp.stderr()
    assert ok(mcp, "add", {"a": 1, "b": 2}) == 3


def test_exception_summary_is_bounded() -> None:
    from svcc.runtime.mcp_tool import MAX_ERROR_MESSAGE, exception_summary

    assert exception_summary(KeyError("k")) == "KeyError: 'k'"
    assert exception_summary(RuntimeError()) == "RuntimeError"
    assert exception_summary(ValueError("first\nsecond")) == "ValueError: first"
    long = exception_summary(ValueError("x" * 10_000))
    assert len(long) == MAX_ERROR_MESSAGE
    assert long.endswith("…")


@pytest.mark.parametrize("name", ["returns_nan", "returns_object", "returns_lie"])
def test_results_that_cannot_be_served_are_tool_errors(mcp: McpBundle, name: str) -> None:
    assert "internal error" in tool_error(mcp, name, {})


def test_http_exception_is_named_like_any_other(mcp: McpBundle) -> None:
    assert tool_error(mcp, "teapot", {}) == "the tool raised HTTPException: 418: short and stout"


def test_non_json_results_use_the_encoder(mcp: McpBundle) -> None:
    assert ok(mcp, "returns_tuple", {}) == [1, 2]
    assert ok(mcp, "returns_set", {}) == [3]


def test_unknown_tool(mcp: McpBundle) -> None:
    assert "unknown tool 'nope'" in tool_error(mcp, "nope", {})


def test_tampered_bundle_refuses_to_start(bundle: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(bundle), str(copy)], check=True)
    source = copy / "source" / "rules.py"
    source.write_text(source.read_text().replace("a + b", "a - b"))
    proc = subprocess.run(
        [sys.executable, "server.py"],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 4  # startup refused
    assert proc.stdout == ""  # nothing on the protocol stream
    assert proc.stderr.strip().splitlines() == [
        "svc-mcp: startup refused: source/rules.py does not match its digest in svc-mcp.json "
        "(the bundle was changed after generation; regenerate it)"
    ]
