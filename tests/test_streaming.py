"""Streams (issue 40): generators served item by item, with an explicit end.

Readiness and the IR first (which generators stream, what their items are); then the REST
server under uvicorn (JSON Lines and SSE, the final record, limits, a client that leaves),
and MCP through the official client with a progress callback.
"""

import textwrap
from pathlib import Path

from helpers import GOLDEN
from svcc.compiler.analysis import Analysis, analyze_file
from svcc.ir.types import AnyType, IntType, ModelType, StrType, TypedDictType


def analysed(tmp_path: Path, source: str) -> Analysis:
    path = tmp_path / "streams_src.py"
    path.write_text(textwrap.dedent(source))
    return analyze_file(path, module_name="streams_src", python_version="3.11")


def verdicts(analysis: Analysis) -> dict[str, tuple[str, list[str]]]:
    assert analysis.readiness is not None
    return {a.name: (a.klass, [r.code for r in a.reasons]) for a in analysis.readiness.assessments}


def test_every_iterator_form_streams_its_item_type(tmp_path: Path) -> None:
    analysis = analysed(
        tmp_path,
        """
        import typing
        from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterable, Iterator

        def a(n: int) -> Iterator[int]:
            yield n

        def b(n: int) -> Iterable[str]:
            yield str(n)

        def c(n: int) -> Generator[int, None, None]:
            yield n

        def d(n: int) -> typing.Iterator[int]:
            yield n

        async def e(n: int) -> AsyncIterator[int]:
            yield n

        async def f(n: int) -> AsyncGenerator[int, None]:
            yield n

        def g(n: int) -> "Iterator[int]":
            yield n
        """,
    )
    assert {name: v[0] for name, v in verdicts(analysis).items()} == dict.fromkeys(
        "abcdefg", "eligible"
    )
    assert analysis.ir is not None
    items = {cap.name: cap.stream.item for cap in analysis.ir.capabilities if cap.stream}
    assert items == {
        "a": IntType(), "b": StrType(), "c": IntType(), "d": IntType(), "e": IntType(),
        "f": IntType(), "g": IntType(),
    }  # fmt: skip


def test_items_follow_the_result_rules(tmp_path: Path) -> None:
    """Models and TypedDicts are items; an item no encoder writes is refused (R050);
    unannotated or Any items are a warning (R018), as a result is."""
    analysis = analysed(
        tmp_path,
        """
        from collections.abc import Iterator
        from dataclasses import dataclass
        from typing import Any, TypedDict

        class Row(TypedDict):
            a: int

        @dataclass
        class P:
            x: int

        class Opaque:
            pass

        def rows() -> Iterator[Row]:
            yield {"a": 1}

        def points() -> Iterator[P]:
            yield P(1)

        def opaque() -> Iterator[Opaque]:
            yield Opaque()

        def anything() -> Iterator[Any]:
            yield 1

        def bare():
            yield 1
        """,
    )
    found = verdicts(analysis)
    assert found["rows"] == ("eligible", [])
    assert found["points"] == ("eligible", [])
    assert found["opaque"][0] == "unsupported"
    assert "SVC-R050" in found["opaque"][1]
    assert found["anything"] == ("eligible", ["SVC-R018"])
    assert found["bare"] == ("eligible", ["SVC-R018"])
    assert analysis.ir is not None
    streams = {cap.name: cap.stream for cap in analysis.ir.capabilities}
    assert streams["rows"] is not None
    assert streams["rows"].item == TypedDictType(name="Row")
    assert streams["points"] is not None
    assert streams["points"].item == ModelType(name="P")
    assert streams["bare"] is not None
    assert streams["bare"].item == AnyType()


def test_send_style_generators_are_refused_with_the_reason(tmp_path: Path) -> None:
    analysis = analysed(
        tmp_path,
        """
        from collections.abc import AsyncIterator, Generator, Iterator

        def total(start: int) -> Iterator[int]:
            running = start
            while True:
                running += yield running

        async def atotal(start: int) -> AsyncIterator[int]:
            x = yield start

        def typed(n: int) -> Generator[int, int, None]:
            yield n

        def lying(n: int) -> list[int]:
            yield n
        """,
    )
    found = verdicts(analysis)
    assert found["total"] == ("unsupported", ["SVC-R016"])
    assert found["atotal"] == ("unsupported", ["SVC-R017"])
    assert found["typed"] == ("unsupported", ["SVC-R016"])
    assert found["lying"] == ("unsupported", ["SVC-R016"])
    assert analysis.readiness is not None
    reason = analysis.readiness.assessments[0].reasons[0]
    assert "send()" in reason.message
    assert reason.span is not None
    assert reason.span.line == 7


def test_a_non_generator_has_no_stream(tmp_path: Path) -> None:
    analysis = analysed(tmp_path, "def f() -> int:\n    return 1\n")
    assert analysis.ir is not None
    assert analysis.ir.capabilities[0].stream is None


def test_golden_stream_case_is_eligible_whole() -> None:
    analysis = analyze_file(
        GOLDEN / "streams" / "input.py", module_name="streams", python_version="3.11"
    )
    assert {klass for klass, _ in verdicts(analysis).values()} == {"eligible"}
