"""The generated records (``svcc.ir.records``) behave as attrs builds them, and the module of
generated methods is current.

Each record is compared with attrs' own build of the same class body (a copy decorated with
``attrs.frozen``): the field definitions, the constructor's signature, equality, hashing,
``repr``, frozenness, pickling, ``attrs.evolve`` and ``match``.
"""

import copy
import importlib
import inspect
import pickle
import sys
import weakref
from typing import Any

import attrs
import pytest
from helpers import ROOT
from svcc.ir import records

sys.path.insert(0, str(ROOT / "tools"))
import gen_records  # tools/ is not a package

for _module in gen_records.MODULES:
    importlib.import_module(_module)

KEYS = sorted(records.SPECS)


def _built(key: str) -> type:
    module, _, name = key.rpartition(".")
    while module not in sys.modules:  # a nested class: climb to its module
        module, _, outer = module.rpartition(".")
        name = f"{outer}.{name}"
    found: Any = sys.modules[module]
    for part in name.split("."):
        found = getattr(found, part)
    return found  # type: ignore[no-any-return]


def _reference(key: str) -> type:
    """attrs' build of the record's class body as written."""
    cls, kw_only = records.SPECS[key]
    _, defaults = records.fields_of(cls)
    body = {
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__annotations__": dict(cls.__annotations__),
        **records.attrs_defaults(defaults),
    }
    return attrs.frozen(kw_only=kw_only)(type(cls.__name__, (), body))


def _signature(init: Any) -> inspect.Signature:
    """``__init__``'s signature, a factory's default (attrs' ``NOTHING``, the records' own)
    written alike."""
    sig = inspect.signature(init)
    return sig.replace(
        parameters=[
            p.replace(default="<factory>")
            if p.default is attrs.NOTHING or p.default is records.NOTHING
            else p
            for p in sig.parameters.values()
        ]
    )


def _values(cls: type, salt: str) -> dict[str, Any]:
    """A value for every field without a default (hashable, distinct per field)."""
    return {a.name: f"{salt}{a.name}" for a in attrs.fields(cls) if a.default is attrs.NOTHING}


def test_the_generated_module_is_current() -> None:
    """``python tools/gen_records.py`` after changing a record's fields or defaults."""
    target = ROOT / "ir" / "_records_generated.py"
    assert target.read_text() == gen_records.render(), "run python tools/gen_records.py"


def test_every_record_has_its_generated_methods() -> None:
    assert KEYS, "no records found"
    assert [k for k in KEYS if not records.GENERATED[k]] == []


@pytest.mark.parametrize("key", KEYS)
def test_a_record_behaves_as_attrs_builds_it(key: str) -> None:
    cls, reference = _built(key), _reference(key)
    if getattr(cls, "__attrs_types_resolved__", None) is cls:  # the IR converter ran first
        attrs.resolve_types(reference, vars(sys.modules[cls.__module__]))
    assert tuple(attrs.fields(cls)) == tuple(attrs.fields(reference))
    for field in attrs.fields(reference):
        assert getattr(attrs.fields(cls), field.name) == field
    assert _signature(cls.__init__) == _signature(reference.__init__)  # type: ignore[misc]
    assert cls.__match_args__ == reference.__match_args__  # type: ignore[attr-defined]
    assert set(cls.__slots__) == set(reference.__slots__)  # type: ignore[attr-defined]

    values = _values(cls, "a")
    one, same, ref = cls(**values), cls(**values), reference(**values)
    assert repr(one) == repr(ref)
    assert one == same
    try:
        hash(ref)
    except TypeError:  # a field's default is a mutable value (a factory's): neither hashes
        with pytest.raises(TypeError):
            hash(one)
    else:
        assert hash(one) == hash(same)
    assert one != object()
    if values:
        other = cls(**_values(cls, "b"))
        assert one != other
        assert (one == other) == (ref == reference(**_values(cls, "b")))
        name = next(iter(values))
        assert attrs.evolve(one, **{name: "changed"}) == cls(**{**values, name: "changed"})
        assert records.evolve(one, **{name: "changed"}) == cls(**{**values, name: "changed"})
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(one, name, "changed")
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            delattr(one, name)
    assert attrs.asdict(one, recurse=False) == attrs.asdict(ref, recurse=False)
    assert records.plain_fields(one) == attrs.asdict(ref, recurse=False)
    assert records.field_names(cls) == tuple(a.name for a in attrs.fields(reference))
    assert pickle.loads(pickle.dumps(one)) == one
    assert copy.deepcopy(one) == one
    assert weakref.ref(one)() is one


def test_a_stale_record_is_built_by_attrs() -> None:
    """A record whose generated methods are missing (a class the generator has not seen, or
    one whose fields changed since) is attrs' own: slower, never wrong."""

    @records.frozen(kw_only=True)
    class Unseen:
        value: int
        other: str = "x"

    assert not records.GENERATED[f"{__name__}.{Unseen.__qualname__}"]
    assert attrs.has(Unseen)
    assert Unseen(value=1) == Unseen(value=1, other="x")
    with pytest.raises(TypeError):
        Unseen(1)  # type: ignore[misc]


def test_converters_and_fields_left_out_of_equality() -> None:
    """``records.field(converter=..., eq=False)``: converted on the way in, defaults
    included; ignored by ``==`` and ``hash``; attrs describes the field the same way."""
    from svcc.compiler.options import AnalyzeOptions

    options = AnalyzeOptions(data=["a.csv"], select=["f"], facts_cache={})
    assert options.data == ("a.csv",)
    assert options.select == ("f",)
    assert AnalyzeOptions().data == ()
    assert options == AnalyzeOptions(data=("a.csv",), select=("f",), facts_cache={"x": 1})
    assert hash(options) == hash(AnalyzeOptions(data=("a.csv",), select=("f",)))
    assert attrs.evolve(options, data=["b"]).data == ("b",)
    data = attrs.fields(AnalyzeOptions).data
    assert data.converter is not None
    assert not attrs.fields(AnalyzeOptions).facts_cache.eq


def test_match_by_keyword_and_by_position() -> None:
    from svcc.frontends.python._file_paths import FilePath
    from svcc.ir.types import IntType, ListType

    match ListType(item=IntType()):
        case ListType(item=IntType()):
            pass
        case _:
            pytest.fail("keyword pattern")
    match FilePath("folder", 2):
        case FilePath("folder", up):
            assert up == 2
        case _:
            pytest.fail("positional pattern")


def test_factories_and_defaults_that_are_not_literals() -> None:
    """``records.field(factory=...)``: a fresh value per instance, as attrs' ``Factory``; a
    default that is another record (not a literal) is the class body's own object."""
    from svcc.compiler.driver import Analysis
    from svcc.compiler.program_kinds import FILE

    one, two = Analysis(path="a"), Analysis(path="a")
    assert one.reports == {}
    assert one.reports is not two.reports
    assert one.kind is FILE
    given = {"m": None}
    assert Analysis(path="a", reports=given).reports is given
    assert attrs.fields(Analysis).reports.default == attrs.Factory(dict)
    assert records.GENERATED["svcc.compiler.driver.Analysis"]


def test_evolve_without_attrs() -> None:
    """``records.evolve`` copies a generated record through its ``__init__`` (converters run
    again) and leaves any other attrs class to ``attrs.evolve``."""
    from svcc.compiler.options import AnalyzeOptions

    options = AnalyzeOptions(data=["a.csv"])
    changed = records.evolve(options, select=["f"])
    assert changed == AnalyzeOptions(data=("a.csv",), select=("f",))
    with pytest.raises(TypeError):
        records.evolve(options, nonsense=1)

    @attrs.frozen
    class Plain:
        value: int

    assert records.evolve(Plain(1), value=2) == Plain(2)
    assert records.field_names(Plain) == ("value",)
    assert records.field_names(int) is None
