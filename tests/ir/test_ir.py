"""The IR's converter and invariants: round trips, strictness, located errors."""

import json

import attrs
import pytest
from helpers import case_input, cases
from svcc.compiler.driver import analyze_file
from svcc.ir.model import Span
from svcc.ir.serde import IRFormatError, converter, ir_from_json, ir_to_json, unstructure
from svcc.ir.types import IntType, ListType, TupleType, TypedDictType
from svcc.ir.verify import IRInvariantError, verify


def _irs() -> list[bytes]:
    out = []
    for case in cases():
        analysis = analyze_file(case_input(case), module_name=case, python_version="3.11")
        if analysis.ir_json is not None:
            out.append(analysis.ir_json)
    return out


def test_every_golden_ir_round_trips_byte_for_byte() -> None:
    for data in _irs():
        assert ir_to_json(ir_from_json(data)) == data


def test_the_ir_encoding_is_the_canonical_encoding() -> None:
    """``ir_to_json`` encodes without sorting keys (``unstructure`` writes them sorted):
    its bytes are still ``canonical_json`` of the unstructured IR, for every golden case
    (type nodes and their ``kind`` tags, models, notebooks among them)."""
    from svcc.ir.canonical import canonical_json

    for data in _irs():
        ir = ir_from_json(data)
        assert ir_to_json(ir) == canonical_json(unstructure(ir)) == data


def test_the_text_writer_writes_what_the_encoder_would() -> None:
    """The IR is written as text straight from its records (not built as plain values to
    be encoded): the same bytes for every kind of value, floats and dicts through the
    encoder itself, and the same refusal of a NaN."""
    from svcc.ir.canonical import canonical_json
    from svcc.ir.serde import _text

    value = (
        1.5,
        -0.0,
        10**30,
        True,
        False,
        None,
        'é\n"\u2028\U0001f600',
        Span(line=1, column=0, end_line=2, end_column=3, cell=4),
        TupleType(items=(ListType(item=IntType()),), variadic=None),
        {"b": 1, "a": [2, {"d": "x", "c": None}]},
        [],
    )
    assert (_text(value) + "\n").encode() == canonical_json(unstructure(value))
    with pytest.raises(ValueError, match="not JSON compliant"):
        _text((1, float("nan")))
    with pytest.raises(TypeError, match="not an IR value"):
        _text(object())


def test_one_writer_of_the_shape() -> None:
    """The IR is written without cattrs, and cattrs' own unstructuring delegates to that
    writer: reading (cattrs) and writing agree, type nodes carry their tag at any depth."""
    node = TupleType(items=(ListType(item=IntType()),), variadic=IntType())
    assert unstructure(node) == {
        "kind": "tuple",
        "items": [{"kind": "list", "item": {"kind": "int"}}],
        "variadic": {"kind": "int"},
    }
    for data in _irs():
        ir = ir_from_json(data)
        assert converter().unstructure(ir) == unstructure(ir) == json.loads(data)
    with pytest.raises(TypeError, match="not an IR value"):
        unstructure(object())


def test_records_print_as_attrs_would() -> None:
    assert repr(Span(line=1, column=0, end_line=2, end_column=3)) == (
        "Span(line=1, column=0, end_line=2, end_column=3, cell=None)"
    )
    assert repr(ListType(item=IntType())) == "ListType(item=IntType())"


def test_unknown_keys_are_refused_with_their_path() -> None:
    doc = json.loads(_irs()[0])
    doc["capabilities"][0]["params"][0]["type"]["surprise"] = 1
    with pytest.raises(IRFormatError) as info:
        ir_from_json(json.dumps(doc))
    assert info.value.errors == ["extra fields found (surprise) @ $.capabilities[0].params[0].type"]


def test_invariants_are_checked_when_reading() -> None:
    doc = json.loads(_irs()[0])
    doc["capabilities"][0]["id"] = "python:other:thing"
    with pytest.raises(IRFormatError, match=r"does not match module and qualname @ \$\.capab"):
        ir_from_json(json.dumps(doc))


def test_verify_reports_every_problem() -> None:
    ir = ir_from_json(_irs()[0])
    cap = ir.capabilities[0]
    broken = attrs.evolve(
        ir,
        capabilities=(cap, cap),
        typed_dicts=(),
        schema="svc.capability-ir/v0",
    )
    broken = attrs.evolve(
        broken,
        capabilities=(
            attrs.evolve(cap, returns=attrs.evolve(cap.returns, type=TypedDictType(name="Nope"))),
            cap,
        ),
    )
    with pytest.raises(IRInvariantError) as info:
        verify(broken)
    text = str(info.value)
    assert "schema is 'svc.capability-ir/v0'" in text
    assert "duplicate capability id" in text
    assert "TypedDict 'Nope' is not declared @ $.capabilities[0].returns.type" in text
