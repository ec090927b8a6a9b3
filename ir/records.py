"""Frozen records whose methods are generated ahead of time: attrs' ``frozen`` without its
cost at import.

attrs writes each class's ``__init__``, ``__eq__``, ``__hash__`` and ``__repr__`` as source
text and compiles it when the class statement runs, and builds the class a second time to
add ``__slots__``: for the IR's fifty-odd records that was a fifth of a cold ``svcc inspect
FILE``, paid by every start. Here the same methods are written once by
``tools/gen_records.py`` into ``svcc.ir._records_generated`` (a module whose bytecode is
cached like any other), and :func:`frozen` only attaches them to a ``__slots__`` class.

The classes keep attrs' interface: ``attrs.fields``/``attrs.has``/``attrs.evolve`` and cattrs
work on them (``__attrs_attrs__``: attrs' own ``Attribute`` objects, made on first use from
the same annotations, defaults and :func:`field` options), instances are frozen
(``attrs.exceptions.FrozenInstanceError``),
compare and hash by their fields, pickle, and ``match`` as attrs' do. A class whose generated
methods are missing or stale (a field added, a default changed, without re-running the
generator) is built by attrs instead: slower, never wrong; ``tests/ir/test_records.py``
keeps the generated module current and checks each record against attrs' own build.

Nothing of attrs is imported until something asks for attrs' interface: :func:`evolve`,
:func:`field_names` and :func:`plain_fields` are ``attrs.evolve``, ``attrs.fields``' names and
``attrs.asdict`` (shallow) for these records, so ``svcc inspect FILE`` (both reports) never
imports attrs, whose import was a tenth of the command.

Type checkers see ``attrs.frozen``, ``attrs.field`` and ``attrs.evolve`` (the modules import
them under ``TYPE_CHECKING``), so attrs' plugin types the constructors and copies as before.
What is supported is what those records use: ``@frozen``/``@frozen(kw_only=True)`` on a class
of its own (no base), defaults (a literal is written into the generated ``__init__``, any
other value, such as another record, is given to it when the class is made), and
:func:`field` with ``default``, ``factory``, ``converter`` and ``eq=False``; anything else is
attrs' build.
"""

from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, get_origin, overload

C = TypeVar("C", bound=type)

# Every record decorated so far, by ``module.qualname``, as written (before its methods are
# attached) and whether it is keyword-only: what the generator writes methods for.
SPECS: dict[str, tuple[type, bool]] = {}
# Whether a record got its generated methods (``True``) or attrs' build (``False``).
GENERATED: dict[str, bool] = {}
# The methods a generated record gets (``__init__`` checked against the fields first).
METHODS = ("__init__", "__eq__", "__hash__", "__repr__")
_NO_DEFAULTS: dict[str, Any] = {}


class Field:
    """A field stated with :func:`field`: its default (``NOTHING``: none), the callable that
    makes a fresh default each time (``factory``), the callable that converts what
    ``__init__`` is given, and whether equality and hashing compare it."""

    __slots__ = ("converter", "default", "eq", "factory")

    def __init__(
        self,
        default: Any,
        converter: Callable[[Any], Any] | None,
        eq: bool,
        factory: Callable[[], Any] | None = None,
    ) -> None:
        self.default = default
        self.converter = converter
        self.eq = eq
        self.factory = factory


class _Nothing:
    """No default (attrs' ``NOTHING`` without importing attrs)."""

    def __repr__(self) -> str:
        return "NOTHING"


NOTHING: Any = _Nothing()


def field(
    *,
    default: Any = NOTHING,
    factory: Callable[[], Any] | None = None,
    converter: Callable[[Any], Any] | None = None,
    eq: bool = True,
) -> Any:
    """``attrs.field`` for a record: a default or a factory, a converter, ``eq=False``."""
    return Field(default, converter, eq, factory)


def plain_defaults(defaults: dict[str, Any]) -> dict[str, Any]:
    """The defaults ``__init__`` takes: a :func:`field`'s own default, where it has one
    (``NOTHING`` for a factory's: ``__init__`` calls the factory when given nothing)."""
    out = {}
    for name, value in defaults.items():
        if type(value) is not Field:
            out[name] = value
        elif value.factory is not None:
            out[name] = NOTHING
        elif value.default is not NOTHING:
            out[name] = value.default
    return out


def attrs_defaults(defaults: dict[str, Any]) -> dict[str, Any]:
    """The class body's defaults as attrs reads them (a :func:`field` as ``attrs.field``)."""
    import attrs

    return {
        name: attrs.field(
            default=attrs.Factory(value.factory)
            if value.factory is not None
            else attrs.NOTHING
            if value.default is NOTHING
            else value.default,
            converter=value.converter,
            eq=value.eq,
        )
        if type(value) is Field
        else value
        for name, value in defaults.items()
    }


def fields_of(cls: type) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The record's field names in order (its annotations, ``ClassVar`` ones left out) and
    the defaults the class body gives (``name = value``, or a :func:`field`)."""
    names: list[str] = []
    defaults: dict[str, Any] = {}
    # the class's own annotations (``inspect.get_annotations`` would import ``inspect``)
    own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    for name, annotation in own.items():
        if get_origin(annotation) is ClassVar or (
            isinstance(annotation, str) and annotation.startswith(("ClassVar", "typing.ClassVar"))
        ):
            continue
        names.append(name)
        if name in cls.__dict__:
            defaults[name] = cls.__dict__[name]
    return tuple(names), defaults


def _frozen_setattr(_self: object, _name: str, _value: object) -> None:
    from attrs.exceptions import FrozenInstanceError

    raise FrozenInstanceError


def _frozen_delattr(_self: object, _name: str) -> None:
    from attrs.exceptions import FrozenInstanceError

    raise FrozenInstanceError


class _AttrsFields:
    """``__attrs_attrs__`` of a generated record, built on first use (``attrs.fields``,
    ``attrs.evolve``, cattrs) as attrs would describe the class, and then put on the class in
    place of this descriptor, so ``attrs.resolve_types`` edits what later reads see."""

    def __init__(self, names: tuple[str, ...], defaults: dict[str, Any], kw_only: bool) -> None:
        self.names = names
        self.defaults = defaults
        self.kw_only = kw_only

    def __get__(self, instance: object, owner: type) -> Any:
        from attrs import NOTHING as ATTRS_NOTHING
        from attrs import Attribute, Factory

        names, defaults = self.names, plain_defaults(self.defaults)
        fields = {n: f for n, f in self.defaults.items() if type(f) is Field}
        for name, spec in fields.items():
            if spec.factory is not None:
                defaults[name] = Factory(spec.factory)
        own = owner.__annotations__
        fields_type = type(
            f"{owner.__name__}Attributes",
            (tuple,),
            {"__slots__": (), **{n: property(itemgetter(i)) for i, n in enumerate(names)}},
        )
        value = fields_type(
            _aliased(
                Attribute(  # type: ignore[call-arg]  # attrs' own keyword arguments
                    name=name,
                    default=defaults.get(name, ATTRS_NOTHING),
                    validator=None,
                    repr=True,
                    cmp=None,
                    hash=None,
                    init=True,
                    inherited=False,
                    type=own[name],
                    converter=fields[name].converter if name in fields else None,
                    kw_only=self.kw_only,
                    eq=fields[name].eq if name in fields else True,
                    eq_key=None,
                    order=None,
                    order_key=None,
                    on_setattr=None,
                    alias=name,
                )
            )
            for name in names
        )
        type.__setattr__(owner, "__attrs_attrs__", value)
        return value


def _aliased(field: Any) -> Any:
    """The field as attrs describes a field whose ``__init__`` name is its own (attrs 25.4 and
    later record that the alias is the default one)."""
    if hasattr(type(field), "alias_is_default"):
        object.__setattr__(field, "alias_is_default", True)
    return field


def _init_annotation(name: str, own: dict[str, Any], defaults: dict[str, Any]) -> Any:
    """A field's annotation in ``__init__``, as attrs gives it: the converter's parameter's
    when the field converts (and that is annotated), else the field's."""
    spec = defaults.get(name)
    if type(spec) is Field and spec.converter is not None:
        code = spec.converter.__code__
        given = spec.converter.__annotations__.get(code.co_varnames[0])
        if given is not None:
            return given
    return own[name]


def _state_methods(names: tuple[str, ...]) -> dict[str, Callable[..., Any]]:
    """Pickling and copying, as attrs' slotted classes do it: the fields by name, set back
    past the frozen ``__setattr__``."""
    setter = object.__setattr__

    def __getstate__(self: object) -> dict[str, Any]:
        return {name: getattr(self, name) for name in names}

    def __setstate__(self: object, state: dict[str, Any]) -> None:
        for name in names:
            if name in state:
                setter(self, name, state[name])

    return {"__getstate__": __getstate__, "__setstate__": __setstate__}


def field_rules(
    names: tuple[str, ...], defaults: dict[str, Any]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The fields ``__init__`` converts, the fields equality leaves out and the fields whose
    default a factory makes, in field order."""
    fields = {n: f for n, f in defaults.items() if type(f) is Field}
    converted = tuple(n for n in names if n in fields and fields[n].converter is not None)
    uncompared = tuple(n for n in names if n in fields and not fields[n].eq)
    made = tuple(n for n in names if n in fields and fields[n].factory is not None)
    return converted, uncompared, made


def _generated(
    key: str, names: tuple[str, ...], defaults: dict[str, Any], kw_only: bool
) -> dict[str, Any]:
    """The generated methods of ``key`` when they were written for exactly these fields,
    defaults, converters and calling convention, else an empty mapping."""
    from svcc.ir._records_generated import RECORDS

    entry = RECORDS.get(key)
    if entry is None:
        return {}
    converted, uncompared, made = field_rules(names, defaults)
    if (
        entry.get("converted", ()) != converted
        or entry.get("uncompared", ()) != uncompared
        or entry.get("made", ()) != made
    ):
        return {}
    plain = plain_defaults(defaults)
    shared = entry.get("shared", ())
    if any(n not in plain for n in shared):
        return {}
    methods = {name: entry[name] for name in METHODS}
    if converted or made or shared:  # the generated ``__init__`` is made for the body's values
        if entry["__init__"].__code__.co_argcount != 4:  # written by an older generator
            return {}
        methods["__init__"] = entry["__init__"](
            {n: defaults[n].converter for n in converted},
            {n: defaults[n].factory for n in made},
            NOTHING,
            {n: plain[n] for n in shared},
        )
    init = methods["__init__"]
    code = init.__code__
    count = len(names)
    if kw_only:
        shape = (code.co_argcount, code.co_kwonlyargcount) == (1, count)
        given = init.__kwdefaults__ or _NO_DEFAULTS
    else:
        shape = (code.co_argcount, code.co_kwonlyargcount) == (1 + count, 0)
        values = init.__defaults__ or ()
        given = dict(zip(names[count - len(values) :], values, strict=True))
    if (
        not shape
        or code.co_varnames[1 : 1 + count] != names
        or given != plain
        or any(type(given[n]) is not type(v) for n, v in plain.items())
    ):
        return {}
    return methods


@overload
def frozen(maybe_cls: C, /) -> C: ...
@overload
def frozen(*, kw_only: bool = False) -> Callable[[C], C]: ...
def frozen(maybe_cls: C | None = None, /, *, kw_only: bool = False) -> C | Callable[[C], C]:
    """``attrs.frozen``, written the same ways (``@frozen``, ``@frozen(kw_only=True)``), with
    the methods generated ahead of time (see the module's docstring)."""
    if maybe_cls is None:
        return lambda cls: _record(cls, kw_only)
    return _record(maybe_cls, kw_only)


def _record(cls: C, kw_only: bool) -> C:
    key = f"{cls.__module__}.{cls.__qualname__}"
    SPECS[key] = (cls, kw_only)
    names, defaults = fields_of(cls)
    methods = _generated(key, names, defaults, kw_only) if cls.__bases__ == (object,) else {}
    GENERATED[key] = bool(methods)
    if not methods:
        import attrs

        if any(type(value) is Field for value in defaults.values()):  # a copy: SPECS keeps cls
            body = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
            cls = type(cls)(cls.__name__, cls.__bases__, body | attrs_defaults(defaults))
        return attrs.frozen(kw_only=kw_only)(cls)
    body = {
        k: v
        for k, v in cls.__dict__.items()
        if k not in ("__dict__", "__weakref__") and k not in defaults
    }
    for name, method in methods.items():
        method.__name__ = name
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        body[name] = method
    own = cls.__dict__["__annotations__"]  # noqa: RUF063 -- the class's own, as attrs reads them
    body["__init__"].__annotations__ = {n: _init_annotation(n, own, defaults) for n in names} | {
        "return": None
    }
    body.update(_state_methods(names))
    body["__qualname__"] = cls.__qualname__
    body["__slots__"] = (*names, "__weakref__")
    body["__match_args__"] = () if kw_only else names
    body["__setattr__"] = _frozen_setattr
    body["__delattr__"] = _frozen_delattr
    body["__attrs_attrs__"] = _AttrsFields(names, defaults, kw_only)
    body["__record_fields__"] = names
    return type(cls)(cls.__name__, cls.__bases__, body)


def field_names(cls: type) -> tuple[str, ...] | None:
    """A record class's field names in order (a generated record's, or any attrs class's),
    ``None`` for any other class: ``attrs.fields`` without importing attrs for a generated
    record (the IR's writer asks it of every record it writes)."""
    names: tuple[str, ...] | None = cls.__dict__.get("__record_fields__")
    if names is not None:
        return names
    attributes = getattr(cls, "__attrs_attrs__", None)  # attrs' own build, or a subclass
    return None if attributes is None else tuple(a.name for a in attributes)


def plain_fields(inst: Any) -> dict[str, Any]:
    """A record's fields by name, in order (``attrs.asdict`` of a record of plain values)."""
    names = field_names(inst.__class__)
    if names is None:
        raise TypeError(f"not a record: {inst.__class__.__name__}")
    return {name: getattr(inst, name) for name in names}


if TYPE_CHECKING:
    # re-exported (mypy strict); attrs' plugin checks the changes' names and types
    from attrs import evolve as evolve  # noqa: PLC0414
else:

    def evolve(inst, /, **changes):
        """``attrs.evolve``: a copy of ``inst`` with ``changes``, made by its ``__init__``
        (so converters and factories apply as attrs' do); a generated record's without
        importing attrs."""
        names = inst.__class__.__dict__.get("__record_fields__")
        if names is None:
            import attrs

            return attrs.evolve(inst, **changes)
        for name in names:
            if name not in changes:
                changes[name] = getattr(inst, name)
        return inst.__class__(**changes)
