"""Encoding a function's result as JSON, once: the one result encoder of REST and MCP.

Plain JSON values go straight through the C encoder; anything else reaches
:func:`_default`, which turns what data code returns into the JSON documented in the
README's "Results" (and in DESIGN §12):

- numpy scalars → JSON scalars, ``ndarray`` → nested lists (``tolist``);
- pandas ``DataFrame`` → a list of records, ``Series`` → an object keyed by the index;
- ``date``/``datetime``/``time`` → ISO 8601 strings, ``timedelta`` → an ISO 8601 duration;
- ``UUID`` → its string, ``Decimal`` → its exact string (no binary-float rounding);
- ``Enum`` → its value; dataclass, pydantic model, ``NamedTuple`` → objects;
- ``bytes`` → standard base64 (as the input side); sets → arrays.

numpy and pandas are never imported here: a value is recognised by its type's module, so
a bundle that does not use them never loads them. NaN and infinities are not JSON: they
raise :class:`ResultNotJson` and the caller answers 500 (a tool error in MCP), as does a
value of any other class. Integers over 4,300 digits are encoded (``json_text``).

A ``NamedTuple`` is a tuple, which the C encoder writes as an array before any hook can
see it; :func:`encode_result` with ``walk=True`` (chosen per capability at startup, when
the declared return type holds a ``NamedTuple``) converts those first.
"""

import base64
import dataclasses
import datetime
import decimal
import enum
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from .calls import CallShape
from .json_text import dumps, is_int_limit
from .threads import run_sync


class ResultNotJson(ValueError):
    """The result has no JSON form (NaN, infinity, a class the encoder does not know)."""


def _key(value: Any) -> str:
    """An object key from an index label (JSON keys are strings)."""
    if isinstance(value, str):
        return value
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    plain = _default(value) if not isinstance(value, int | float | bool) else value
    return plain if isinstance(plain, str) else json.dumps(plain, allow_nan=False)


def _numpy(value: Any) -> Any:
    tolist = getattr(value, "tolist", None)
    if tolist is None:
        raise TypeError(f"numpy {type(value).__name__} has no JSON form")
    return tolist()  # scalars → Python scalars, arrays → nested lists


def _pandas(value: Any) -> Any:
    import pandas  # type: ignore[import-untyped,unused-ignore]

    if isinstance(value, pandas.DataFrame):
        return value.to_dict(orient="records")
    if isinstance(value, pandas.Series):
        return {_key(k): v for k, v in zip(value.index, value.tolist(), strict=True)}
    if isinstance(value, pandas.Index):
        return value.tolist()
    if isinstance(value, pandas.Timedelta):
        return _duration(value.to_pytimedelta())
    if value is pandas.NaT or value is pandas.NA:
        return None
    raise TypeError(f"pandas {type(value).__name__} has no JSON form")


def _duration(value: datetime.timedelta) -> str:
    from pydantic_core import to_jsonable_python

    text: str = to_jsonable_python(value)  # ISO 8601: P1DT2H3.5S
    return text


def _object(value: Any) -> Any:
    """Dataclass and pydantic instances (their fields, by alias)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    dump = getattr(type(value), "model_dump", None)
    if dump is not None and hasattr(type(value), "model_fields"):
        return value.model_dump(mode="json", by_alias=True)
    raise TypeError(f"an instance of {type(value).__qualname__} has no JSON form")


def _default(value: Any) -> Any:
    """The JSON form of one value the C encoder does not know (recursion is the encoder's)."""
    module = type(value).__module__
    if module == "numpy" or module.startswith("numpy."):
        return _numpy(value)
    if module == "pandas" or module.startswith("pandas."):
        if isinstance(value, datetime.datetime):  # Timestamp
            return value.isoformat()
        return _pandas(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return _duration(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise ValueError("a non-finite Decimal is not JSON")
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr) if len(value) > 1 else list(value)
    return _object(value)


_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_default
)


def named_tuples(value: Any, depth: int = 0) -> Any:
    """``value`` with every ``NamedTuple`` turned into an object (its fields by name)."""
    if depth > 64:
        return value
    kind = type(value)
    if kind in (str, int, float, bool) or value is None:
        return value
    if isinstance(value, tuple) and hasattr(kind, "_fields"):
        return {f: named_tuples(v, depth + 1) for f, v in zip(kind._fields, value, strict=True)}
    if isinstance(value, list | tuple):
        return [named_tuples(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: named_tuples(v, depth + 1) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return named_tuples(_object(value), depth + 1)
    return value


def encode_result(value: Any, walk: bool = False) -> bytes:
    """The result as compact UTF-8 JSON, or :class:`ResultNotJson`."""
    try:
        if walk:
            value = named_tuples(value)
        return _ENCODER.encode(value).encode("utf-8")
    except ValueError as exc:
        if not is_int_limit(exc):
            raise ResultNotJson(_reason(exc)) from None
    except (TypeError, RecursionError) as exc:
        raise ResultNotJson(_reason(exc)) from None
    try:  # an integer over 4,300 digits: the function's own result, encoded (json_text)
        return dumps(_plain(value)).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as exc:
        raise ResultNotJson(_reason(exc)) from None


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON values (what :func:`_default` makes of each object), for
    :func:`json_text.dumps`, which writes integers of any size."""
    if depth > 256:
        raise ValueError("the result is nested too deeply")
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, dict):
        return {k: _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    return _plain(_default(value), depth + 1)


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "Out of range float" in text:
        return "NaN and infinities are not JSON"
    return text[:200]


Invoke = Callable[[list[Any], dict[str, Any]], Awaitable[bytes]]


def direct_invoker(function: Callable[..., Any], shape: CallShape) -> Invoke:
    """Direct mode, REST and MCP alike: the function in this process (a sync one in the
    pool threads of ``threads``), its result encoded once, as JSON bytes."""
    walk = shape.walk_result
    if shape.is_async:

        async def invoke_async(args: list[Any], kwargs: dict[str, Any]) -> bytes:
            return encode_result(await function(*args, **kwargs), walk)

        return invoke_async

    async def invoke_sync(args: list[Any], kwargs: dict[str, Any]) -> bytes:
        return encode_result(await run_sync(function, *args, **kwargs), walk)

    return invoke_sync
