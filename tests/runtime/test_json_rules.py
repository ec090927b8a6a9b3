"""One rule of JSON numbers for the whole runtime (``svc_runtime/json_text.py``): every
parser and check that reads what a client or a worker sent refuses NaN, infinities and
literals that overflow to infinity; integers are bounded on the way in (4,300 digits, as
Python's conversion limit) and of any size on the way out. Before, the rule was written
four times and the server's check of a governed worker's result let ``1e400`` through."""

import pytest
from svcc.runtime import json_text, wire
from svcc.runtime.mcp_stdio import Refused, parse_line
from svcc.runtime.validation import RequestInvalid, RequestValidator

NOT_JSON_NUMBERS = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e999", b"[1, 1e400]"]
BIG_INT = b"7" * 4301


@pytest.mark.parametrize("literal", NOT_JSON_NUMBERS)
def test_non_finite_numbers_are_refused_everywhere(literal: bytes) -> None:
    with pytest.raises(json_text.NotStrictJson):
        json_text.loads_strict(literal.decode())
    with pytest.raises(Refused):
        parse_line(b'{"jsonrpc": "2.0", "id": 1, "value": ' + literal + b"}")
    assert not wire.is_strict_json(b'{"result": ' + literal + b"}")  # a worker's result
    validator = RequestValidator({"type": "object", "properties": {"value": {}}}, {})
    with pytest.raises(RequestInvalid) as refused:
        validator.validate_json(b'{"value": ' + literal + b"}")
    assert refused.value.errors[0]["type"] in ("finite_number", "json_invalid")


def test_integers_are_bounded_on_the_way_in_and_not_on_the_way_out() -> None:
    with pytest.raises(json_text.NotStrictJson, match="4300 digits"):
        json_text.loads_strict(BIG_INT.decode())
    with pytest.raises(Refused, match="4300 digits"):
        parse_line(b'{"jsonrpc": "2.0", "id": 1, "value": ' + BIG_INT + b"}")
    assert wire.is_strict_json(BIG_INT)  # a result may be any size
    big = json_text.loads_int(BIG_INT.decode())  # a result read back: no limit
    assert big == 7 * (10**4301 - 1) // 9
    assert json_text.dumps([big]) == "[" + BIG_INT.decode() + "]"


def test_plain_json_is_exact_and_finite() -> None:
    assert json_text.plain_json({"a": [1, 2.5, "x", None, True]})
    assert not json_text.plain_json({"a": float("nan")})
    assert not json_text.plain_json((1, 2))
    assert json_text.first_non_finite([1, {"b": float("-inf")}]) == float("-inf")
