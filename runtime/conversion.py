"""From validated JSON to the Python objects a function's annotations ask for.

The request validator (``validation``) has already checked every value against the
published schema and parsed dates, times, durations and UUIDs. What is left needs the
bundled module's own classes or a library, so it is prepared here once per capability at
startup from the IR's types and applied to each call's values:

- an ``Enum`` value becomes its member; a dataclass or ``NamedTuple`` object becomes an
  instance (its fields converted first); a pydantic model is built by the model itself
  (``model_validate``), so its validators run and a rejection is a 422 naming the field;
- a ``Decimal`` string becomes a ``Decimal`` (exact), base64 text becomes ``bytes``
  (decoded strictly: bad base64 is a 422);
- nested arrays become ``np.asarray(..., dtype)`` (ragged or mistyped input is a 422),
  records a ``pd.DataFrame``, an array a ``pd.Series``.

A capability whose parameters need none of this gets no converter at all, so plain JSON
capabilities pay nothing. numpy and pandas are imported only by capabilities that use them.
"""

import base64
import binascii
import decimal
from collections.abc import Callable, Mapping
from typing import Any

from .validation import MAX_ERRORS, RequestInvalid, _jsonable

Convert = Callable[[Any], Any]
_DTYPES = {"int": "int64", "float": "float64", "bool": "bool", "str": "str", "any": None}


class ConversionError(Exception):
    """One value could not become its Python object: ``loc`` inside the parameter."""

    def __init__(self, loc: tuple[Any, ...], kind: str, msg: str, value: Any) -> None:
        super().__init__(msg)
        self.loc = loc
        self.kind = kind
        self.msg = msg
        self.value = value


def _located(convert: Convert, key: Any) -> Convert:
    """``convert`` with ``key`` prefixed to the location of its errors."""

    def run(value: Any) -> Any:
        try:
            return convert(value)
        except ConversionError as exc:
            exc.loc = (key, *exc.loc)
            raise

    return run


def _decimal(value: str) -> decimal.Decimal:
    return decimal.Decimal(value)  # the schema's pattern already admits only numbers


def _bytes(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ConversionError((), "base64_decode", "Input should be valid base64", value) from None


class Converters:
    """Builds converters for the type nodes of one IR (as JSON) against one module."""

    def __init__(self, ir: Mapping[str, Any], module: Any) -> None:
        self._models = {m["name"]: m for m in ir.get("models", ())}
        self._typed_dicts = {t["name"]: t for t in ir.get("typed_dicts", ())}
        self._module = module
        self._built: dict[str, Convert] = {}

    def _class(self, name: str) -> Any:
        """The class ``name`` names: the module's own, or ``module.Class`` for one a sibling
        module defines (imported: the server already imported it with the module)."""
        cls = getattr(self._module, name, None) if "." not in name else None
        if "." in name:
            import importlib

            module, _, attribute = name.rpartition(".")
            try:
                cls = getattr(importlib.import_module(module), attribute, None)
            except ImportError:
                cls = None
        if cls is None:
            from .integrity import StartupError

            raise StartupError(f"class {name!r} is missing from the bundled source")
        return cls

    def of(self, node: Mapping[str, Any]) -> Convert | None:
        """The converter of one type node, or ``None`` when values pass as they are."""
        kind = node["kind"]
        if kind == "value":
            return {"decimal.Decimal": _decimal, "builtins.bytes": _bytes}.get(node["name"])
        if kind == "enum":
            return self._enum(node["name"])
        if kind == "model":
            return self._model(node["name"])
        if kind == "ndarray":
            return _ndarray(_DTYPES[node["dtype"]])
        if kind == "dataframe":
            return _dataframe
        if kind == "series":
            return _series
        if kind == "list":
            return _each(self.of(node["item"]))
        if kind == "dict":
            item = self.of(node["value"])
            if item is None:
                return None
            return lambda value: {k: _located(item, k)(v) for k, v in value.items()}
        if kind == "tuple":
            return self._tuple(node)
        if kind == "union":
            return self._union(node["options"])
        if kind == "typeddict":
            return self._typed_dict(node["name"])
        return None

    def _enum(self, name: str) -> Convert:
        member: Convert = self._class(name)  # Color("red") is Color.RED
        return member

    def _model(self, name: str) -> Convert:
        """An instance: the model's own validation (pydantic), or its fields converted and
        passed by name (dataclass, NamedTuple). Built once per model (recursion allowed)."""
        if name in self._built:
            return self._built[name]
        decl = self._models.get(name)
        if decl is None:
            from .integrity import StartupError

            raise StartupError(f"model {name!r} is not in the bundle's IR")
        cls = self._class(name)
        if decl["form"] == "pydantic":
            build = _pydantic(cls)
            self._built[name] = build
            return build
        fields: dict[str, tuple[str, Convert | None]] = {}

        def build_instance(value: dict[str, Any]) -> Any:
            kwargs = {}
            for key, item in value.items():
                attribute, convert = fields[key]
                kwargs[attribute] = _located(convert, key)(item) if convert else item
            return cls(**kwargs)

        self._built[name] = build_instance
        for field in decl["fields"]:
            fields[field["name"]] = (field["attribute"], self.of(field["type"]))
        return build_instance

    def _typed_dict_fields(self, name: str) -> dict[str, Any]:
        """Every field of TypedDict ``name`` (bases first, as Python builds them), walked
        without recursion: an inheritance chain of 3,000 TypedDicts (eligible) stopped the
        server's startup with a ``RecursionError``. A base on the walk's own path is a cycle
        and is skipped."""
        fields: dict[str, Any] = {}
        path: set[str] = set()
        stack: list[tuple[str, bool]] = [(name, False)]
        while stack:
            current, done = stack.pop()
            decl = self._typed_dicts.get(current)
            if decl is None:
                continue
            if done:
                path.discard(current)
                fields.update((f["name"], f) for f in decl["fields"])
            elif current not in path:
                path.add(current)
                stack.append((current, True))
                stack.extend((base, False) for base in reversed(decl.get("bases", ())))
        return fields

    def _typed_dict(self, name: str) -> Convert | None:
        """A dict whose fields holding new kinds are converted (``None`` if none does)."""
        key = f"typeddict:{name}"
        if key in self._built:
            return self._built[key]
        converters: dict[str, Convert] = {}

        def run(value: dict[str, Any]) -> Any:
            for field, convert in converters.items():
                if field in value:
                    value[field] = _located(convert, field)(value[field])
            return value

        self._built[key] = run  # a recursive TypedDict reaches itself
        for field_name, field in self._typed_dict_fields(name).items():
            convert = self.of(field["type"])
            if convert is not None:
                converters[field_name] = convert
        if not converters:
            self._built[key] = None  # type: ignore[assignment]
            return None
        return run

    def _tuple(self, node: Mapping[str, Any]) -> Convert | None:
        if node.get("variadic") is not None:
            item = self.of(node["variadic"])
            if item is None:
                return None
            return lambda value: tuple(_located(item, i)(v) for i, v in enumerate(value))
        items = [self.of(i) for i in node["items"]]
        if not any(items):
            return None
        return lambda value: tuple(
            _located(c, i)(v) if c else v for i, (c, v) in enumerate(zip(items, value, strict=True))
        )

    def _union(self, options: list[Mapping[str, Any]]) -> Convert | None:
        """The first option whose JSON form the value has (``null`` passes as ``None``)."""
        chosen = [(o, self.of(o)) for o in options]
        if not any(c for _, c in chosen):
            return None

        def run(value: Any) -> Any:
            if value is None:
                return None
            for option, convert in chosen:
                if _accepts(option, value, self._models):
                    return convert(value) if convert else value
            return value

        return run


def _accepts(node: Mapping[str, Any], value: Any, models: Mapping[str, Any]) -> bool:
    """Whether ``value`` (validated JSON) has the JSON form of ``node`` (for unions)."""
    kind = node["kind"]
    if kind == "enum":
        return any(type(v) is type(value) and v == value for v in node["values"])
    if kind == "model":
        decl = models[node["name"]]
        names = {f["name"] for f in decl["fields"]}
        required = {f["name"] for f in decl["fields"] if f["required"]}
        return isinstance(value, dict) and required <= value.keys() <= names
    if kind in ("ndarray", "dataframe", "series", "list", "tuple"):
        return isinstance(value, list | tuple)
    if kind in ("dict", "typeddict"):
        return isinstance(value, dict)
    if kind == "value":
        return isinstance(value, str)
    return True


def _each(item: Convert | None) -> Convert | None:
    if item is None:
        return None
    return lambda value: [_located(item, i)(v) for i, v in enumerate(value)]


def _pydantic(cls: Any) -> Convert:
    from pydantic import ValidationError

    def run(value: Any) -> Any:
        try:
            return cls.model_validate(value)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            raise ConversionError(
                tuple(first["loc"]), first["type"], first["msg"], first.get("input")
            ) from None

    return run


def _ndarray(dtype: str | None) -> Convert:
    import numpy

    def run(value: Any) -> Any:
        try:
            return numpy.asarray(value, dtype=dtype)
        except (ValueError, TypeError) as exc:
            del exc  # numpy's message is long and names its internals
            raise ConversionError(
                (), "ndarray", "Input should be a regular array (not ragged)", value
            ) from None

    return run


def _dataframe(value: Any) -> Any:
    import pandas  # type: ignore[import-untyped,unused-ignore]

    return pandas.DataFrame.from_records(value) if value else pandas.DataFrame()


def _series(value: Any) -> Any:
    import pandas  # type: ignore[import-untyped,unused-ignore]

    return pandas.Series(value)


class CallConverter:
    """Converts one capability's validated values in place; errors are a 422."""

    __slots__ = ("_fields",)

    def __init__(self, fields: dict[str, Convert]) -> None:
        self._fields = fields

    def __call__(self, values: dict[str, Any]) -> dict[str, Any]:
        errors = []
        for name, convert in self._fields.items():
            if name in values:
                try:
                    values[name] = convert(values[name])
                except ConversionError as exc:
                    errors.append(
                        {
                            "type": exc.kind,
                            "loc": ["body", name, *exc.loc],
                            "msg": exc.msg,
                            "input": _jsonable(exc.value),
                        }
                    )
        if errors:
            raise RequestInvalid(errors[:MAX_ERRORS], max(len(errors) - MAX_ERRORS, 0))
        return values


def attach_converters(
    ir: Mapping[str, Any], functions: Mapping[str, tuple[Callable[..., Any], Any]]
) -> None:
    """Give each served ``(function, shape)`` the converter of its parameters, against the
    module that defines the function (its classes build the instances)."""
    import inspect
    import sys

    capabilities = {c["name"]: c for c in ir["capabilities"]}
    # a repository bundle's IR holds one IR per module: a capability's classes are its own
    # module's (its ``models`` and ``typed_dicts``)
    owners = {
        c["id"]: module_ir for module_ir in ir.get("modules", ()) for c in module_ir["capabilities"]
    }
    for name, (function, shape) in functions.items():
        module = sys.modules.get(getattr(inspect.unwrap(function), "__module__", ""), None)
        capability = capabilities[name]
        owner = owners.get(capability["id"], ir)
        shape.convert = call_converter(owner, capability, module)
        shape.walk_result = returns_named_tuple(owner, capability["returns"]["type"])


def returns_named_tuple(ir: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """Whether a declared return type reaches a ``NamedTuple`` (encoded as an object, which
    takes a walk of the result: see ``encoding.encode_result``)."""
    models = {m["name"]: m for m in ir.get("models", ())}
    seen: set[str] = set()
    pending: list[Any] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, Mapping):
            if current.get("kind") == "model" and current.get("name") not in seen:
                seen.add(current["name"])
                decl = models.get(current["name"])
                if decl is not None:
                    if decl["form"] == "namedtuple":
                        return True
                    pending.extend(f["type"] for f in decl["fields"])
            pending.extend(v for v in current.values() if isinstance(v, Mapping | list))
        elif isinstance(current, list):
            pending.extend(current)
    return False


def call_converter(
    ir: Mapping[str, Any], capability: Mapping[str, Any], module: Any
) -> CallConverter | None:
    """The converter of ``capability``'s parameters, or ``None`` when none needs one."""
    converters = Converters(ir, module)
    fields = {}
    for param in capability["params"]:
        convert = converters.of(param["type"])
        if convert is not None:
            fields[param["name"]] = convert
    return CallConverter(fields) if fields else None
