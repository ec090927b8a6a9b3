"""The served validators read explicit markers the generator writes, never documentation:
an n-dimensional array's definition carries ``x-svc-ndarray`` (its item type), and a
schema titled like one without the marker is an ordinary union."""

import pytest
from svcc.runtime.validation import RequestInvalid, RequestValidator

ARRAY = {"type": "array", "items": {"$ref": "#/$defs/ndarray_integer"}}


def errors(definition: dict[str, object]) -> list[dict[str, object]]:
    schema = {"type": "object", "properties": {"m": ARRAY}, "required": ["m"]}
    validator = RequestValidator(schema, {"ndarray_integer": definition})
    with pytest.raises(RequestInvalid) as refused:
        validator.validate_json(b'{"m": [["a"]]}')
    return refused.value.errors


def test_the_marker_makes_one_error_per_bad_item() -> None:
    marked = {"anyOf": [{"type": "integer"}, ARRAY], "x-svc-ndarray": "integer"}
    found = errors(marked)
    assert [e["type"] for e in found] == ["ndarray_item"]
    assert found[0]["msg"] == "Input should be a integer or an array of them"


def test_a_title_alone_is_documentation() -> None:
    titled = {"title": "ndarray of integer", "anyOf": [{"type": "integer"}, ARRAY]}
    assert "ndarray_item" not in [e["type"] for e in errors(titled)]
