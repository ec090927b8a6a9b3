"""Only JSON values reach a function, and every JSON result leaves it: NaN, Infinity and
``1e400`` are refused wherever a parameter takes any JSON value (``Any``, unannotated,
``dict[str, Any]``), in direct and governed REST servers; an integer result over Python's
4,300-digit conversion limit is encoded (MCP: ``test_mcp_wire.py``)."""

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from servers import Server, generate, serving

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "hostile"
POLICY = {
    "limits": {"wall_time_ms": 4000, "max_input_bytes": 100_000, "max_output_bytes": 100_000},
    "environment": {"allow": []},
}


@pytest.fixture(scope="module", params=["direct", "governed"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp(f"values-{request.param}")
    options = []
    if request.param == "governed":
        policy = tmp / "policy.json"
        policy.write_text(json.dumps(POLICY))
        options = ["--execution-policy", str(policy)]
    generate(FIXTURE / "json_values.py", tmp / "rest", *options)
    with serving(tmp / "rest") as running:
        yield running


def post(server: Server, name: str, body: bytes) -> httpx.Response:
    return httpx.post(
        f"{server.url}/capabilities/{name}",
        content=body,
        headers={"content-type": "application/json"},
        timeout=30,
    )


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("kind", b'{"value": NaN}'),
        ("kind", b'{"value": [1, Infinity]}'),
        ("kind", b'{"value": {"a": -Infinity}}'),
        ("untyped", b'{"value": 1e400}'),
        ("mapping", b'{"values": {"a": NaN}}'),
    ],
)
def test_non_finite_numbers_are_422(server: Server, name: str, body: bytes) -> None:
    answer = post(server, name, body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["type"] == "finite_number"


def test_finite_values_still_pass(server: Server) -> None:
    answer = post(server, "kind", b'{"value": [1, 2.5, {}]}')
    assert answer.json() == "list:[1, 2.5, {}]"


def test_an_integer_result_over_4300_digits_is_encoded(server: Server) -> None:
    answer = post(server, "power", b'{"digits": 5000}')
    assert answer.status_code == 200, answer.text
    assert answer.content == b"1" + b"0" * 5000
