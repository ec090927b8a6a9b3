"""The runtime's request validators accept exactly what the published schemas describe.

For every capability of the rules fixture, random JSON bodies are checked by the bundle's
validator (built from ``openapi.json``) and by ``jsonschema`` (a reference implementation
of JSON Schema 2020-12) on the same schema: they must agree, and the validator must never
fail with anything but a 422-shaped ``RequestInvalid``. The one documented divergence is
kept out of the comparison: JSON Schema calls ``1.0`` an integer, while the server, like
Python, refuses a float where an ``int`` is declared.
"""

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servers import FIXTURES, generate
from svcc.runtime.validation import RequestInvalid, RequestValidator, to_core_schema

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
    | st.text(max_size=8)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("validation") / "bundle"
    generate(
        FIXTURES / "rules.py",
        out,
        "--requirements",
        str(FIXTURES / "requirements.txt"),
        "--allow",
        "env",
    )
    loaded: dict[str, Any] = json.loads((out / "openapi.json").read_text())
    return loaded


def _field_names(schema: dict[str, Any]) -> list[str]:
    return list(schema.get("properties", {}))


def bodies(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Mostly objects over the schema's own field names (so valid bodies occur), some noise."""
    names = _field_names(schema)
    keys = st.sampled_from([*names, "extra"]) if names else st.just("extra")
    return st.dictionaries(keys, JSON_VALUES, max_size=len(names) + 1) | JSON_VALUES


CAPABILITIES = [
    "add",
    "scale",
    "greet",
    "negate",
    "omitted",
    "nullable",
    "nullable_required",
    "positional",
    "keyword_only",
    "shape_size",
    "depth",
    "pick",
    "pair",
    "anything",
    "nothing",
]


@pytest.mark.parametrize("name", CAPABILITIES)
def test_validator_agrees_with_json_schema(document: dict[str, Any], name: str) -> None:
    components = document["components"]["schemas"]
    schema = components[f"request.{name}"]
    validator = RequestValidator(schema, components)
    reference = jsonschema.Draft202012Validator(
        {**schema, "components": {"schemas": components}},
    )

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(bodies(schema))
    def agree(body: Any) -> None:
        raw = json.dumps(body).encode()
        errors: list[dict[str, Any]] = []
        try:
            validator.validate_json(raw)
        except RequestInvalid as exc:
            errors = exc.errors or [{"loc": ["missing errors"]}]
        for error in errors:
            assert error["loc"][0] == "body"
            json.dumps(error)  # always encodable
        accepted = not errors
        assert accepted == reference.is_valid(body), (name, body)

    agree()


def test_valid_examples_are_accepted(document: dict[str, Any]) -> None:
    components = document["components"]["schemas"]
    validator = RequestValidator(components["request.positional"], components)
    assert validator.validate_json(b'{"a": 1, "b": 2, "c": 3}') == {"a": 1, "b": 2, "c": 3}
    with pytest.raises(RequestInvalid) as caught:
        validator.validate_json(b'{"a": 1, "c": 3}')
    assert caught.value.errors[0]["type"] == "positional_gap"


def test_tuples_are_tuples_and_lists_are_lists(document: dict[str, Any]) -> None:
    components = document["components"]["schemas"]
    pair = RequestValidator(components["request.pair"], components).validate_json(
        b'{"p": [1, "x"]}'
    )
    assert pair == {"p": (1, "x")}
    shape = RequestValidator(components["request.shape_size"], components).validate_json(
        b'{"shape": {"name": "n", "points": []}}'
    )
    assert shape == {"shape": {"name": "n", "points": []}}


@pytest.mark.parametrize(
    "node",
    [
        {"type": "integer", "multipleOf": 3},
        {"type": "string", "format": "email"},
        {"oneOf": [{"type": "string"}]},
        {"type": "widget"},
        {"enum": [1.5]},
        {"$ref": "http://example.com/x"},
    ],
)
def test_unknown_schema_keywords_are_refused_not_ignored(node: dict[str, Any]) -> None:
    """A hand-edited schema cannot quietly validate less than it documents."""
    from svcc.runtime.integrity import StartupError

    with pytest.raises(StartupError):
        to_core_schema(node)


def test_deep_nesting_is_a_422_not_a_crash(document: dict[str, Any]) -> None:
    components = document["components"]["schemas"]
    validator = RequestValidator(components["request.anything"], components)
    deep = b'{"value": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(RequestInvalid):
        validator.validate_json(deep)
