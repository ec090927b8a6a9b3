"""A governed worker reads a plain function's parameters from its code object; every shape
must read as ``inspect.signature`` reads it (the one the direct server uses for the rest)."""

import functools
import inspect
from collections.abc import Callable
from typing import Any

import pytest
from svcc.runtime.calls import _KINDS, parameters


def plain(a, b=1): ...  # type: ignore[no-untyped-def]
def posonly(a, b=2, /, c=3, *, d, e=5): ...  # type: ignore[no-untyped-def]
def star(a, /, *args, k=1, **kwargs): ...  # type: ignore[no-untyped-def]
def kwonly_first(*, x, y=0): ...  # type: ignore[no-untyped-def]
def only_kwargs(**options): ...  # type: ignore[no-untyped-def]
def none(): ...  # type: ignore[no-untyped-def]
async def coroutine(a: int, b: int = 2) -> int: ...
def generator(n: int):  # type: ignore[no-untyped-def]
    yield n


def with_locals(a, *rest, b):  # type: ignore[no-untyped-def]
    inner = a + b
    return inner, rest


@functools.wraps(plain)
def wrapper(*args, **kwargs): ...  # type: ignore[no-untyped-def]


def declared(x, y): ...  # type: ignore[no-untyped-def]


declared.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [inspect.Parameter("only", inspect.Parameter.KEYWORD_ONLY)]
)

FUNCTIONS: list[Callable[..., Any]] = [
    plain, posonly, star, kwonly_first, only_kwargs, none, coroutine, generator, with_locals,
    wrapper, declared, functools.partial(posonly, 1), lambda x, *, y=2: (x, y),
]  # fmt: skip


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: getattr(f, "__name__", "partial"))
def test_parameters_read_as_inspect_reads_them(function: Callable[..., Any]) -> None:
    expected = [
        (p.name, _KINDS[p.kind], p.default is not inspect.Parameter.empty)
        for p in inspect.signature(function).parameters.values()
    ]
    assert parameters(function) == expected


def test_an_object_without_a_signature_has_none() -> None:
    assert parameters(object()) is None
