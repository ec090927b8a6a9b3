"""The generated REST server end to end: real uvicorn on loopback, real HTTP (httpx).

Every request rule and error row of the specification has a fixture function in
``tests/fixtures/rest/rules.py``.
"""

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from servers import FIXTURES, Server, generate, serving


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rules") / "bundle"
    generate(
        FIXTURES / "rules.py",
        out,
        "--requirements",
        str(FIXTURES / "requirements.txt"),
        "--allow",
        "env",
    )
    return out


@pytest.fixture(scope="module")
def server(bundle: Path) -> Iterator[Server]:
    with serving(bundle, env={"SVC_TEST_SECRET": "from-the-server"}) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def call(client: httpx.Client, name: str, body: Any) -> httpx.Response:
    return client.post(f"/capabilities/{name}", json=body)


def errors(response: httpx.Response) -> list[tuple[tuple[Any, ...], str]]:
    assert response.status_code == 422, response.text
    return [(tuple(e["loc"]), e["type"]) for e in response.json()["detail"]]


# -- infrastructure routes ------------------------------------------------------------------


def test_health(client: httpx.Client) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_openapi_is_the_bundled_file_byte_for_byte(client: httpx.Client, bundle: Path) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.content == (bundle / "openapi.json").read_bytes()
    assert response.json()["openapi"] == "3.1.0"


def test_docs_render_from_local_assets_only(client: httpx.Client) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    refs = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page.text)
    refs += re.findall(r"""url:\s*['"]([^'"]+)['"]""", page.text)
    assert len(refs) >= 3
    for ref in refs:
        assert ref.startswith("/"), f"{ref} is not a local asset"
        assert not ref.startswith("//")
        assert client.get(ref).status_code == 200, ref
    assert "http://" not in page.text
    assert "https://" not in page.text


def test_unknown_capability_and_method(client: httpx.Client) -> None:
    assert client.post("/capabilities/nope", json={}).status_code == 404
    response = client.get("/capabilities/add")
    assert response.status_code == 405
    assert response.json() == {"detail": "Method Not Allowed"}


# -- rule 1: JSON object, closed, typed --------------------------------------------------------


def test_valid_call(client: httpx.Client) -> None:
    response = call(client, "add", {"a": 2, "b": 40})
    assert response.status_code == 200
    assert response.json() == 42


def test_unexpected_field(client: httpx.Client) -> None:
    assert errors(call(client, "add", {"a": 1, "b": 2, "c": 3})) == [
        (("body", "c"), "extra_forbidden")
    ]


def test_missing_field(client: httpx.Client) -> None:
    assert errors(call(client, "add", {"a": 1})) == [(("body", "b"), "missing")]


@pytest.mark.parametrize("value", ["1", True, 1.5, None, [1], {"n": 1}])
def test_int_accepts_only_integers(client: httpx.Client, value: Any) -> None:
    found = errors(call(client, "add", {"a": value, "b": 1}))
    assert [loc for loc, _ in found] == [("body", "a")]


@pytest.mark.parametrize("value", ["1.5", False, None])
def test_float_refuses_strings_and_booleans(client: httpx.Client, value: Any) -> None:
    assert [loc for loc, _ in errors(call(client, "scale", {"x": value}))] == [("body", "x")]


def test_float_accepts_integers(client: httpx.Client) -> None:
    assert call(client, "scale", {"x": 3}).json() == 6.0


@pytest.mark.parametrize("value", [1, 0, "true", None])
def test_bool_is_strict(client: httpx.Client, value: Any) -> None:
    assert [loc for loc, _ in errors(call(client, "negate", {"on": value}))] == [("body", "on")]
    assert call(client, "negate", {"on": False}).json() is True


@pytest.mark.parametrize("value", [1, True, None])
def test_str_is_strict(client: httpx.Client, value: Any) -> None:
    assert [loc for loc, _ in errors(call(client, "greet", {"name": value}))] == [("body", "name")]


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b"[1, 2]", "dict_type"),
        (b'"text"', "dict_type"),
        (b"{nope", "json_invalid"),
        (b"", "missing"),
    ],
)
def test_body_must_be_a_json_object(client: httpx.Client, body: bytes, kind: str) -> None:
    response = client.post(
        "/capabilities/add", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == kind
    assert response.json()["detail"][0]["loc"][0] == "body"


def test_no_parameters_takes_an_empty_object(client: httpx.Client) -> None:
    assert call(client, "nothing", {}).json() == "nothing"
    assert errors(call(client, "nothing", {"x": 1})) == [(("body", "x"), "extra_forbidden")]


def test_non_json_content_type_is_refused(client: httpx.Client) -> None:
    response = client.post("/capabilities/add", data={"a": "1", "b": "2"})
    assert response.status_code == 415
    assert "detail" in response.json()


def test_oversize_body_is_refused(tmp_path: Path, bundle: Path) -> None:
    with serving(bundle, env={"SVC_MAX_BODY_BYTES": "64"}) as small, small.client() as c:
        response = c.post("/capabilities/greet", json={"name": "x" * 100})
        assert response.status_code == 413
        assert call(c, "greet", {"name": "x"}).status_code == 200


def test_any_value_parameter(client: httpx.Client) -> None:
    assert call(client, "anything", {"value": {"a": [1, None]}}).json() == "dict"
    assert call(client, "anything", {"value": None}).json() == "NoneType"


# -- rule 2: omitted defaults are applied by the source -----------------------------------------


def test_omitted_default_is_the_sources(client: httpx.Client) -> None:
    assert call(client, "greet", {"name": "ada"}).json() == "hello ada!"
    assert call(client, "greet", {"name": "ada", "punctuation": "?"}).json() == "hello ada?"
    assert call(client, "scale", {"x": 2}).json() == 4.0


def test_defaults_are_not_copied_into_the_schema(bundle: Path) -> None:
    document = json.loads((bundle / "openapi.json").read_text())
    request = document["components"]["schemas"]["request.greet"]
    assert "default" not in json.dumps(request)
    assert request["required"] == ["name"]


# -- rule 3: explicit null -------------------------------------------------------------------


def test_int_default_none_accepts_omission_not_null(client: httpx.Client) -> None:
    assert call(client, "omitted", {}).json() == "omitted"
    assert call(client, "omitted", {"x": 5}).json() == "got 5"
    assert [loc for loc, _ in errors(call(client, "omitted", {"x": None}))] == [("body", "x")]


def test_nullable_accepts_null_and_omission(client: httpx.Client) -> None:
    assert call(client, "nullable", {}).json() == "3"
    assert call(client, "nullable", {"x": None}).json() == "None"
    assert call(client, "nullable_required", {"x": None}).json() == "None"
    assert errors(call(client, "nullable_required", {})) == [(("body", "x"), "missing")]


# -- rule 4: positional-only and keyword-only ---------------------------------------------------


def test_positional_only_call_semantics(client: httpx.Client) -> None:
    assert call(client, "positional", {"a": 1}).json() == [1, 10, 20, 0, 0]
    assert call(client, "positional", {"a": 1, "b": 2}).json() == [1, 2, 20, 0, 0]
    assert call(client, "positional", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}).json() == [
        1,
        2,
        3,
        4,
        5,
    ]
    assert call(client, "positional", {"a": 1, "d": 4}).json() == [1, 10, 20, 4, 0]


def test_positional_only_gap_is_refused(client: httpx.Client) -> None:
    response = call(client, "positional", {"a": 1, "c": 3})
    assert errors(response) == [(("body", "b"), "positional_gap")]
    assert "'c'" in response.json()["detail"][0]["msg"]


def test_gap_rule_is_documented(bundle: Path) -> None:
    schema = json.loads((bundle / "openapi.json").read_text())["components"]["schemas"]
    request = schema["request.positional"]
    assert request["dependentRequired"] == {"c": ["b"]}
    assert "gap" in request["description"]


def test_keyword_only(client: httpx.Client) -> None:
    assert call(client, "keyword_only", {"key": "k"}).json() == {"k": 1}
    assert call(client, "keyword_only", {"key": "k", "value": 7}).json() == {"k": 7}
    assert errors(call(client, "keyword_only", {"value": 7})) == [(("body", "key"), "missing")]


# -- rule 5: nested TypedDicts are closed objects -------------------------------------------------


def test_nested_typed_dict(client: httpx.Client) -> None:
    shape = {"name": "tri", "points": [{"x": 0, "y": 0}, {"x": 1, "y": 0.5}]}
    assert call(client, "shape_size", {"shape": shape}).json() == {
        "name": "tri",
        "points": 2,
        "meta": False,
    }
    shape["meta"] = {"colour": "red"}
    assert call(client, "shape_size", {"shape": shape}).json()["meta"] is True


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ({"name": "t", "points": [{"x": 0}]}, (("body", "shape", "points", 0, "y"), "missing")),
        (
            {"name": "t", "points": [{"x": 0, "y": 0, "z": 1}]},
            (("body", "shape", "points", 0, "z"), "extra_forbidden"),
        ),
        (
            {"name": "t", "points": [{"x": "0", "y": 0}]},
            (("body", "shape", "points", 0, "x"), "float_type"),
        ),
        ({"points": []}, (("body", "shape", "name"), "missing")),
        (
            {"name": "t", "points": [], "meta": {"a": 1}},
            (("body", "shape", "meta", "a"), "string_type"),
        ),
    ],
)
def test_nested_errors_name_the_exact_path(
    client: httpx.Client, shape: dict[str, Any], expected: tuple[tuple[Any, ...], str]
) -> None:
    assert errors(call(client, "shape_size", {"shape": shape})) == [expected]


def test_recursive_typed_dict(client: httpx.Client) -> None:
    tree = {"label": "a", "children": [{"children": [{"label": "c"}]}]}
    assert call(client, "depth", {"tree": tree}).json() == 3
    bad = {"children": [{"children": [{"oops": 1}]}]}
    assert errors(call(client, "depth", {"tree": bad})) == [
        (("body", "tree", "children", 0, "children", 0, "oops"), "extra_forbidden")
    ]


def test_literal_and_tuple(client: httpx.Client) -> None:
    assert call(client, "pick", {"mode": "slow", "level": 2}).json() == "slow-2"
    assert [loc for loc, _ in errors(call(client, "pick", {"mode": "medium"}))] == [
        ("body", "mode")
    ]
    assert [loc for loc, _ in errors(call(client, "pick", {"mode": "fast", "level": True}))] == [
        ("body", "level")
    ]
    assert call(client, "pair", {"p": [1, "x"]}).json() == ["tuple", 1, "x"]
    assert errors(call(client, "pair", {"p": [1, "x", 2]}))[0][0][:2] == ("body", "p")


# -- rule 6: return types document, they do not enforce --------------------------------------------


def test_return_type_is_documentation_only(client: httpx.Client) -> None:
    assert call(client, "returns_lie", {}).json() == "not an int"


def test_framework_encoder_for_non_json_results(client: httpx.Client) -> None:
    assert call(client, "returns_tuple", {}).json() == [1, 2]
    assert call(client, "returns_set", {}).json() == [3]


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["boom", "returns_nan", "returns_object"])
def test_generic_500_without_traceback(client: httpx.Client, server: Server, name: str) -> None:
    response = call(client, name, {})
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal Server Error"}
    assert "Traceback" not in response.text


def test_500_details_are_logged_server_side(client: httpx.Client, server: Server) -> None:
    call(client, "boom", {})
    deadline = time.monotonic() + 5
    while "secret detail" not in server.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = server.log_text()
    assert "secret detail that must not reach the client" in log
    assert "Traceback" in log


def test_http_exception_is_preserved(client: httpx.Client) -> None:
    response = call(client, "teapot", {})
    assert response.status_code == 418
    assert response.json() == {"detail": "short and stout"}
    assert response.headers["x-tea"] == "yes"


def test_async_function_is_awaited(client: httpx.Client) -> None:
    assert call(client, "async_add", {"a": 1, "b": 2}).json() == 3


def test_sync_functions_stay_off_the_event_loop(server: Server) -> None:
    """While a sync call sleeps, the server still answers: it runs in the thread pool."""
    results: list[int] = []

    started = threading.Event()

    def slow() -> None:
        with server.client() as c:
            started.set()
            results.append(call(c, "blocking", {"seconds": 6.0}).status_code)

    thread = threading.Thread(target=slow)
    thread.start()
    assert started.wait(10)
    time.sleep(0.3)
    with server.client() as c:
        assert c.get("/health").status_code == 200
        assert call(c, "add", {"a": 1, "b": 1}).json() == 2
        # answered while the slow call is still running: an order, not a timing bound
        assert thread.is_alive()
        assert not results
    thread.join()
    assert results == [200]


def test_direct_mode_globals_persist(client: httpx.Client) -> None:
    first = call(client, "counter", {}).json()
    assert call(client, "counter", {}).json() == first + 1


def test_direct_mode_runs_in_the_server_environment(client: httpx.Client) -> None:
    assert call(client, "env", {"name": "SVC_TEST_SECRET"}).json() == "from-the-server"
