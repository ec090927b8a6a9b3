"""Types and results end to end: every input kind of ``tests/fixtures/types/kinds.py`` and
every numpy/pandas result of ``tests/fixtures/types/data.py``, served by real uvicorn (REST)
and through the official ``mcp`` client over stdio (MCP): valid calls answer the documented
JSON, invalid input is a 422 (a tool error) naming the field."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import run_svcc
from mcp_client import McpBundle
from servers import Server, generate, serving

pytest.importorskip("numpy", reason="numpy is in the test extras (bundles of data code)")
pytest.importorskip("pandas", reason="pandas is in the test extras (bundles of data code)")

TYPES = Path(__file__).resolve().parents[1] / "fixtures" / "types"
REQUIREMENTS = str(TYPES / "requirements.txt")
UUID = "12345678-1234-5678-1234-567812345678"

# (capability, arguments, the answer)
KINDS_OK: list[tuple[str, dict[str, Any], Any]] = [
    (
        "when",
        {"day": "2024-02-29", "at": "10:20:30", "moment": "2024-01-01T10:00:00Z"},
        {
            "day": "2024-02-29",
            "weekday": "Thursday",
            "at": "10:20:30",
            "moment": "2024-01-01T10:00:00+00:00",
        },
    ),
    ("wait", {"span": "P1DT2H"}, 93600.0),
    ("ident", {"key": UUID}, UUID.replace("-", "")),
    ("total", {"prices": ["1.10", "2.20"]}, "3.30"),
    ("size", {"blob": "aGVsbG8="}, 5),
    ("echo_bytes", {"blob": "aGVsbG8="}, "b2xsZWg="),
    ("paint", {"color": "red", "level": 2, "mode": "slow"}, "RED:HIGH:SLOW"),
    ("paint", {"color": "green"}, "GREEN:LOW:FAST"),
    (
        "area",
        {"shape": {"name": "tri", "points": [{"x": 1, "y": 2}, {"x": 3}], "color": "green"}},
        {"name": "tri", "n": 2, "color": "green", "first": {"x": 1.0, "y": 2.0}},
    ),
    ("area", {"shape": {"name": "empty"}}, {"name": "empty", "n": 0, "color": None, "first": None}),
    ("label", {"point": {"x": 1, "label": "p"}}, "p@1.0,0.0"),
    ("swap", {"pair": {"left": 1, "right": 2}}, {"left": 2, "right": 1}),
    ("swap", {"pair": {"left": 7}}, {"left": 0, "right": 7}),
    (
        "greet",
        {"user": {"name": "ann", "e-mail": "a@b", "joined": "2024-01-01"}},
        {"name": "ann", "age": 0, "e-mail": "a@b", "joined": "2024-01-01"},
    ),
    (
        "place",
        {"order": {"id": UUID, "amount": "3.50", "when": "2024-01-01T00:00:00"}},
        {"id": UUID, "amount": "3.50", "when": "2024-01-01T00:00:00"},
    ),
    ("shapes", {"items": [{"name": "a"}], "fallback": {"x": 1}}, 2),
    ("shapes", {"items": [], "fallback": None}, 0),
    ("today", {}, "2024-02-29"),
    ("notify", {"text": "hi"}, "hi"),
]

# (capability, arguments, the error's location inside the body, its type)
KINDS_INVALID: list[tuple[str, dict[str, Any], list[Any], str]] = [
    (
        "when",
        {"day": "2024-02-30", "at": "10:20:30", "moment": "2024-01-01T10:00:00Z"},
        ["day"],
        "date_parsing",
    ),
    (
        "when",
        {"day": 20240101, "at": "10:20", "moment": "2024-01-01T10:00:00Z"},
        ["day"],
        "date_type",
    ),
    ("wait", {"span": "soon"}, ["span"], "time_delta_parsing"),
    ("ident", {"key": "not-a-uuid"}, ["key"], "uuid_parsing"),
    ("total", {"prices": ["1.1", 2.5]}, ["prices", 1], "string_type"),
    ("total", {"prices": ["1,5"]}, ["prices", 0], "string_pattern_mismatch"),
    ("size", {"blob": "a*GVsbG8="}, ["blob"], "string_pattern_mismatch"),
    ("size", {"blob": "aGVsbG8"}, ["blob"], "string_pattern_mismatch"),  # unpadded
    ("paint", {"color": "blue"}, ["color"], "literal_error"),
    ("paint", {"color": "red", "level": 3}, ["level"], "literal_error"),
    ("area", {"shape": {"points": []}}, ["shape", "name"], "missing"),
    ("area", {"shape": {"name": "a", "sides": 3}}, ["shape", "sides"], "extra_forbidden"),
    (
        "area",
        {"shape": {"name": "a", "points": [{"y": 1}]}},
        ["shape", "points", 0, "x"],
        "missing",
    ),
    ("swap", {"pair": {"right": 1}}, ["pair", "left"], "missing"),
    ("label", {"point": {"x": 1, "seen": 3}}, ["point", "seen"], "extra_forbidden"),  # init=False
    ("greet", {"user": {"name": "root", "e-mail": "a@b"}}, ["user", "name"], "value_error"),
    ("greet", {"user": {"name": "", "e-mail": "a@b"}}, ["user", "name"], "string_too_short"),
    (
        "greet",
        {"user": {"name": "ann", "e-mail": "ab"}},
        ["user", "e-mail"],
        "string_pattern_mismatch",
    ),
    (
        "greet",
        {"user": {"name": "ann", "e-mail": "a@b", "age": -1}},
        ["user", "age"],
        "greater_than_equal",
    ),
    ("greet", {"user": {"name": "ann", "email": "a@b"}}, ["user", "e-mail"], "missing"),
    ("notify", {"text": "hi", "callback": None}, ["callback"], "extra_forbidden"),
]

DATA_OK: list[tuple[str, dict[str, Any], Any]] = [
    ("best", {"values": [1, 5, 2]}, 1),
    ("mean", {"values": [1, 2]}, 1.5),
    ("positive", {"value": -1}, False),
    ("scaled", {"matrix": [[1, 2], [3, 4]]}, [[2.0, 4.0], [6.0, 8.0]]),
    ("counts", {"words": ["a", "b", "a"]}, {"a": 2, "b": 1}),
    (
        "table",
        {"rows": [{"price": 2.5, "qty": 2}, {"price": 1, "qty": 3}]},
        [{"price": 2.5, "qty": 2, "total": 5.0}, {"price": 1.0, "qty": 3, "total": 3.0}],
    ),
    ("summary", {"values": [1, 2, 3]}, {"sum": 6, "max": 3}),
    (
        "stamps",
        {},
        [{"day": "2024-01-01T00:00:00", "n": 1}, {"day": "2024-01-02T00:00:00", "n": 2}],
    ),
    ("when", {}, "2024-03-01T12:00:00"),
]

DATA_INVALID: list[tuple[str, dict[str, Any], list[Any], str]] = [
    ("scaled", {"matrix": [[1, 2], [3]]}, ["matrix"], "ndarray"),
    ("scaled", {"matrix": [["a"]]}, ["matrix", 0], "ndarray_item"),
]


@pytest.fixture(scope="module")
def kinds_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kinds") / "bundle"
    generate(TYPES / "kinds.py", out, "--requirements", REQUIREMENTS)
    return out


@pytest.fixture(scope="module")
def kinds_rest(kinds_bundle: Path) -> Iterator[Server]:
    with serving(kinds_bundle) as server:
        yield server


@pytest.fixture(scope="module")
def data_rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    out = tmp_path_factory.mktemp("data") / "bundle"
    generate(TYPES / "data.py", out, "--requirements", REQUIREMENTS)
    with serving(out) as server:
        yield server


def _mcp(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[McpBundle]:
    out = tmp_path_factory.mktemp(f"{name}-mcp") / "bundle"
    generate(TYPES / f"{name}.py", out, "--requirements", REQUIREMENTS, interface="mcp")
    client = McpBundle(out)
    yield client
    client.close()


@pytest.fixture(scope="module")
def kinds_mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpBundle]:
    yield from _mcp(tmp_path_factory, "kinds")


@pytest.fixture(scope="module")
def data_mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpBundle]:
    yield from _mcp(tmp_path_factory, "data")


def _rest_ok(server: Server, name: str, arguments: dict[str, Any], expected: Any) -> None:
    with server.client() as client:
        response = client.post(f"/capabilities/{name}", json=arguments)
    assert response.status_code == 200, response.text
    assert response.json() == expected


def _rest_invalid(
    server: Server, name: str, arguments: dict[str, Any], loc: list[Any], kind: str
) -> None:
    with server.client() as client:
        response = client.post(f"/capabilities/{name}", json=arguments)
    assert response.status_code == 422, response.text
    found = [(e["loc"], e["type"]) for e in response.json()["detail"]]
    assert (["body", *loc], kind) in found, found


def _mcp_ok(client: McpBundle, name: str, arguments: dict[str, Any], expected: Any) -> None:
    result = client.call(name, arguments)
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    assert (text if isinstance(expected, str) else json.loads(text)) == expected
    if result.structured_content is not None:
        assert result.structured_content["result"] == expected


def _mcp_invalid(
    client: McpBundle, name: str, arguments: dict[str, Any], loc: list[Any], kind: str
) -> None:
    result = client.call(name, arguments)
    assert result.is_error, result
    text = result.content[0].text  # type: ignore[union-attr]
    path = ".".join(str(p) for p in loc)
    assert f"{path}: " in text, text
    assert f"({kind})" in text, text


@pytest.mark.parametrize(("name", "arguments", "expected"), KINDS_OK)
def test_kinds_rest(
    kinds_rest: Server, name: str, arguments: dict[str, Any], expected: Any
) -> None:
    _rest_ok(kinds_rest, name, arguments, expected)


@pytest.mark.parametrize(("name", "arguments", "loc", "kind"), KINDS_INVALID)
def test_kinds_rest_invalid(
    kinds_rest: Server, name: str, arguments: dict[str, Any], loc: list[Any], kind: str
) -> None:
    _rest_invalid(kinds_rest, name, arguments, loc, kind)


@pytest.mark.parametrize(("name", "arguments", "expected"), KINDS_OK)
def test_kinds_mcp(
    kinds_mcp: McpBundle, name: str, arguments: dict[str, Any], expected: Any
) -> None:
    _mcp_ok(kinds_mcp, name, arguments, expected)


@pytest.mark.parametrize(("name", "arguments", "loc", "kind"), KINDS_INVALID)
def test_kinds_mcp_invalid(
    kinds_mcp: McpBundle, name: str, arguments: dict[str, Any], loc: list[Any], kind: str
) -> None:
    _mcp_invalid(kinds_mcp, name, arguments, loc, kind)


@pytest.mark.parametrize(("name", "arguments", "expected"), DATA_OK)
def test_data_rest(data_rest: Server, name: str, arguments: dict[str, Any], expected: Any) -> None:
    _rest_ok(data_rest, name, arguments, expected)


@pytest.mark.parametrize(("name", "arguments", "loc", "kind"), DATA_INVALID)
def test_data_rest_invalid(
    data_rest: Server, name: str, arguments: dict[str, Any], loc: list[Any], kind: str
) -> None:
    _rest_invalid(data_rest, name, arguments, loc, kind)


@pytest.mark.parametrize(("name", "arguments", "expected"), DATA_OK)
def test_data_mcp(data_mcp: McpBundle, name: str, arguments: dict[str, Any], expected: Any) -> None:
    _mcp_ok(data_mcp, name, arguments, expected)


def test_non_finite_result_is_a_500_and_a_tool_error(
    data_rest: Server, data_mcp: McpBundle
) -> None:
    with data_rest.client() as client:
        response = client.post("/capabilities/broken", json={})
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal Server Error"}
    assert (
        "broken: the result has no JSON form: NaN and infinities are not JSON"
        in data_rest.log_text()
    )
    result = data_mcp.call("broken", {})
    assert result.is_error
    assert "no JSON form" in result.content[0].text  # type: ignore[union-attr]


def test_mcp_output_schema_documents_the_result(data_mcp: McpBundle, kinds_mcp: McpBundle) -> None:
    tools = {t.name: t for t in data_mcp.list_tools().tools}
    assert tools["counts"].output_schema["properties"]["result"]["type"] == "object"  # type: ignore[index]
    assert tools["stamps"].output_schema["properties"]["result"]["type"] == "array"  # type: ignore[index]
    tools = {t.name: t for t in kinds_mcp.list_tools().tools}
    day = tools["today"].output_schema["properties"]["result"]  # type: ignore[index]
    assert day == {"type": "string", "format": "date"}
    assert "callback" not in tools["notify"].input_schema["properties"]


def test_client_collection_bodies_are_accepted(
    kinds_bundle: Path, kinds_rest: Server, tmp_path: Path
) -> None:
    """Every example body of the exported collection (dates, UUIDs, decimals, base64, enum
    values, nested dataclasses, a pydantic model with bounds) is answered 200."""
    proc = run_svcc(
        "clients", "export", "--bundle", str(kinds_bundle), "--format", "postman",
        "--output-dir", str(tmp_path / "c"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "c" / "postman_collection.json").read_text())
    bodies = {
        item["name"]: json.loads(item["request"]["body"]["raw"])
        for item in doc["item"]
        if "body" in item["request"]
    }
    assert bodies["when"] == {
        "at": "12:00:00", "day": "2024-01-31", "moment": "2024-01-31T12:00:00Z"
    }  # fmt: skip
    assert bodies["paint"] == {"color": "red"}
    assert len(bodies) == 15
    with kinds_rest.client() as client:
        for name, body in bodies.items():
            response = client.post(f"/capabilities/{name}", json=body)
            assert response.status_code == 200, (name, body, response.text)


@pytest.mark.parametrize("fixture", ["kinds", "data"])
def test_schemas_golden(fixture: str, tmp_path: Path, snapshot: Any) -> None:
    """The OpenAPI document and MCP tool definitions of the fixtures that use every kind
    (pydantic, numpy and pandas declared), pinned as reviewed JSON."""
    from syrupy.extensions.json import JSONSnapshotExtension

    golden = snapshot.use_extension(JSONSnapshotExtension)
    generate(TYPES / f"{fixture}.py", tmp_path / "rest", "--requirements", REQUIREMENTS)
    generate(
        TYPES / f"{fixture}.py", tmp_path / "mcp", "--requirements", REQUIREMENTS, interface="mcp"
    )
    openapi = json.loads((tmp_path / "rest" / "openapi.json").read_text())
    tools = json.loads((tmp_path / "mcp" / "mcp-tools.json").read_text())
    assert openapi == golden(name=f"{fixture}-openapi")
    assert tools == golden(name=f"{fixture}-mcp-tools")
