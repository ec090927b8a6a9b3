"""The one result encoder (``svc_runtime/encoding.py``), rule by rule; served end to end in
test_types_served.py."""

import dataclasses
import datetime
import decimal
import enum
import json
import subprocess
import sys
import uuid
from typing import Any, NamedTuple

import pytest
from svcc.runtime.encoding import ResultNotJson, encode_result


class Color(enum.Enum):
    RED = "red"


class Pair(NamedTuple):
    left: int
    right: "Pair | None" = None


@dataclasses.dataclass
class Point:
    x: int
    when: datetime.date


def plain(value: Any, walk: bool = False) -> Any:
    return json.loads(encode_result(value, walk))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime.date(2024, 2, 29), "2024-02-29"),
        (datetime.datetime(2024, 1, 1, 10, tzinfo=datetime.UTC), "2024-01-01T10:00:00+00:00"),
        (datetime.time(10, 20, 30), "10:20:30"),
        (datetime.timedelta(days=1, hours=2), "P1DT2H"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (decimal.Decimal("12.50"), "12.50"),
        (Color.RED, "red"),
        (b"\xfb\xff", "+/8="),  # standard base64, not URL-safe
        ({3}, [3]),
        (Point(1, datetime.date(2024, 1, 1)), {"x": 1, "when": "2024-01-01"}),
        ({"nested": [Color.RED, (1, 2)]}, {"nested": ["red", [1, 2]]}),
    ],
)
def test_values(value: Any, expected: Any) -> None:
    assert plain(value) == expected


def test_named_tuples_are_objects_when_walked() -> None:
    value = Pair(1, Pair(2))
    assert plain(value, walk=True) == {"left": 1, "right": {"left": 2, "right": None}}
    assert plain([value], walk=True)[0]["left"] == 1
    assert plain(value) == [1, [2, None]]  # not declared: the C encoder's array


@pytest.mark.parametrize(
    "value", [float("nan"), [float("inf")], decimal.Decimal("NaN"), object(), {1j: 1}]
)
def test_what_is_not_json_is_refused(value: Any) -> None:
    with pytest.raises(ResultNotJson):
        encode_result(value)


def test_numpy_and_pandas() -> None:
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    assert plain(np.int64(1)) == 1
    assert plain(np.bool_(False)) is False
    assert plain(np.float32(0.5)) == 0.5
    assert plain(np.arange(4).reshape(2, 2)) == [[0, 1], [2, 3]]
    assert plain(pd.Series([1, 2], index=["a", "b"])) == {"a": 1, "b": 2}
    assert plain(pd.DataFrame({"a": [1], "b": ["x"]})) == [{"a": 1, "b": "x"}]
    with pytest.raises(ResultNotJson):
        encode_result(np.array([np.nan]))


def test_numpy_and_pandas_are_not_imported_for_other_results() -> None:
    code = (
        "import sys, datetime\n"
        "from svcc.runtime.encoding import encode_result\n"
        "encode_result({'d': datetime.date(2024, 1, 1), 's': {1}})\n"
        "print('numpy' in sys.modules, 'pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
