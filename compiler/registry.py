"""Target discovery through the ``svcc.targets`` entry-point group, and target options.

Built-in targets are declared in svcc's own ``pyproject.toml`` exactly as a third-party
target would be. Listing reads entry-point metadata only; a target's module is imported
when it is selected, which keeps ``svcc --help`` fast. Two distributions declaring the
same name is fatal, with both named; an unknown name gets a "did you mean".

A target class is a frozen attrs class whose fields are its options: each field carries
``metadata={"help": ..., "metavar": ...}`` and is typed ``str``, ``int``, ``bool``,
``File`` (a path the driver reads: the target gets the bytes), ``str | None``, ``int | None``,
``File | None`` or a ``Literal`` of strings; a field without a default is required.
:func:`target_options` describes them once, for the CLI (``--<name-with-dashes>``) and for
``svcc targets``.
"""

import difflib
import functools
import os
import sys
import types
import typing
from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Final, Literal

import attrs
from attrs import frozen
from svcc.contracts.errors import UsageError
from svcc.contracts.target import BundleSpec, File, Target

GROUP: Final = "svcc.targets"
_REQUIRED_CLASS_ATTRIBUTES: Final = (
    "name",
    "description",
    "supports_execution_policy",
    "bundle",
    "emit",
)

OptionKind = Literal["str", "int", "bool", "file"]


@frozen(kw_only=True)
class TargetOption:
    """One option of a target: its attrs field, as the CLI and ``svcc targets`` show it."""

    name: str
    kind: OptionKind
    help: str
    metavar: str | None
    required: bool
    default: str | int | bool | None
    optional: bool  # ``X | None``: may be left unset
    choices: tuple[str, ...] | None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, target: str, value: object) -> None:
        """Refuse a value of the wrong type or outside the choices (library callers)."""
        if value is None and self.optional:
            return
        expected = {"str": str, "int": int, "bool": bool, "file": File}[self.kind]
        if not isinstance(value, expected) or (self.kind == "int" and isinstance(value, bool)):
            raise UsageError(f"target {target!r} option {self.flag}: expected {self.kind}")
        if self.choices is not None and value not in self.choices:
            raise UsageError(
                f"target {target!r} option {self.flag}: {value!r} is not one of "
                f"{', '.join(self.choices)}"
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "flag": self.flag,
            "type": self.kind,
            "help": self.help,
            "metavar": self.metavar,
            "required": self.required,
            "default": self.default,
            "choices": list(self.choices) if self.choices is not None else None,
        }


def _option_kind(annotation: object, where: str) -> tuple[OptionKind, bool, tuple[str, ...] | None]:
    """``(kind, optional, choices)`` of a field's type, or a ``UsageError`` naming it."""
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1 or len(typing.get_args(annotation)) != 2:
            raise UsageError(f"{where}: option type {annotation!r} is not supported")
        optional, annotation = True, members[0]
        origin = typing.get_origin(annotation)
    if origin is Literal:
        choices = typing.get_args(annotation)
        if not choices or not all(isinstance(c, str) for c in choices):
            raise UsageError(f"{where}: a Literal option takes strings only")
        return "str", optional, tuple(choices)
    if annotation is bool and not optional:
        return "bool", False, None
    if annotation is str:
        return "str", optional, None
    if annotation is File:
        return "file", optional, None
    if annotation is int:
        return "int", optional, None
    raise UsageError(
        f"{where}: option type {annotation!r} is not supported "
        "(str, int, bool, File, str | None, int | None, File | None or a Literal of strings)"
    )


def target_options(cls: type[Target]) -> tuple[TargetOption, ...]:
    """The options a target class declares, in field order."""
    name = cls.name
    if not attrs.has(cls):
        raise UsageError(f"target {name!r}: a target is a frozen attrs class")
    attrs.resolve_types(cls)
    out = []
    for f in attrs.fields(cls):
        where = f"target {name!r} option {f.name!r}"
        if not f.init:
            continue
        if not isinstance(f.metadata.get("help"), str) or not f.metadata["help"]:
            raise UsageError(f"{where}: needs metadata={{'help': ...}}")
        kind, optional, choices = _option_kind(f.type, where)
        required = f.default is attrs.NOTHING
        factory = getattr(f.default, "factory", None)
        # a default computed when the target is made (``k8s --interface``: from the
        # registry) is shown as it is now
        default = None if required else factory() if factory is not None else f.default
        out.append(
            TargetOption(
                name=f.name,
                kind=kind,
                help=f.metadata["help"],
                metavar=f.metadata.get("metavar"),
                required=required,
                default=default,
                optional=optional,
                choices=choices,
            )
        )
    return tuple(out)


@frozen
class TargetEntry:
    name: str
    value: str
    distribution: str
    entry_point: EntryPoint

    def load_class(self) -> type[Target]:
        try:
            obj = self.entry_point.load()
        except Exception as exc:
            raise UsageError(
                f"target {self.name!r} ({self.value}, from {self.distribution}) failed to "
                f"load: {exc}"
            ) from None
        if not isinstance(obj, type):
            raise UsageError(f"target {self.name!r} ({self.value}) is not a class")
        missing = [a for a in _REQUIRED_CLASS_ATTRIBUTES if not hasattr(obj, a)]
        if missing or getattr(obj, "name", None) != self.name:
            detail = (
                f"missing {', '.join(missing)}"
                if missing
                else f"its name is {getattr(obj, 'name', None)!r}"
            )
            raise UsageError(
                f"target {self.name!r} ({self.value}) is not a Target named {self.name!r} "
                f"({detail})"
            )
        bundle = getattr(obj, "bundle", None)
        if bundle is not None and not isinstance(bundle, BundleSpec):
            raise UsageError(f"target {self.name!r}: bundle must be a BundleSpec or None")
        target_class: type[Target] = obj
        return target_class

    def load(self, options: Mapping[str, object] | None = None) -> Target:
        cls = self.load_class()
        given = dict(options or {})
        declared = {o.name: o for o in target_options(cls)}
        for key, value in given.items():
            option = declared.get(key)
            if option is None:
                known = ", ".join(o.flag for o in declared.values()) or "none"
                raise UsageError(f"target {self.name!r} has no option {key!r} (options: {known})")
            if option.kind == "file" and isinstance(value, str):
                given[key] = File.read(value)  # the driver reads, the target gets bytes
            option.check(self.name, given[key])
        missing = [o.flag for o in declared.values() if o.required and o.name not in given]
        if missing:
            raise UsageError(f"target {self.name!r} needs {', '.join(missing)}")
        try:
            return cls(**given)
        except (TypeError, ValueError) as exc:  # an attrs validator refusing a value
            raise UsageError(f"target {self.name!r}: {exc}") from None


def _environment() -> tuple[tuple[str, int | None], ...]:
    """What target discovery depends on: each ``sys.path`` entry and its modification time.

    Installing or removing a distribution adds or removes a ``*.dist-info`` directory in a
    path entry, which changes that entry's mtime; ``importlib.metadata`` keys its own
    directory listings on the same mtime. A handful of ``stat`` calls, against reading every
    installed distribution's metadata."""
    state = []
    for entry in sys.path:
        path = os.path.abspath(entry or ".")  # "" is the working directory, which may move
        try:
            mtime: int | None = os.stat(path).st_mtime_ns
        except OSError:
            mtime = None
        state.append((path, mtime))
    return tuple(state)


def discover() -> dict[str, TargetEntry]:
    """Every installed target by name, read once per environment state.

    One ``svcc compile --target k8s`` asks about eight times (the target, its default
    interface, the servable targets ...), and each reading parses every installed
    distribution's metadata, which would outweigh the emit itself. A distribution
    installed or removed later in the same process (a long-lived caller, a test) changes
    :func:`_environment` and is seen on the next call."""
    return dict(_discover(_environment()))


@functools.lru_cache(maxsize=4)
def _discover(environment: tuple[tuple[str, int | None], ...]) -> Mapping[str, TargetEntry]:
    """The targets installed in ``environment`` (the key only: ``sys.path`` is read)."""
    del environment
    found: dict[str, TargetEntry] = {}
    for ep in entry_points(group=GROUP):
        dist = ep.dist.name if ep.dist is not None else "<unknown distribution>"
        entry = TargetEntry(ep.name, ep.value, dist, ep)
        previous = found.get(ep.name)
        if previous is not None:
            if (previous.value, previous.distribution) == (entry.value, entry.distribution):
                continue  # the same distribution seen twice on the path
            raise UsageError(
                f"two targets are named {ep.name!r}: {previous.value} (from "
                f"{previous.distribution}) and {entry.value} (from {entry.distribution}); "
                "uninstall one"
            )
        found[ep.name] = entry
    return types.MappingProxyType(dict(sorted(found.items())))


def find_target(name: str) -> TargetEntry:
    targets = discover()
    if name not in targets:
        close = difflib.get_close_matches(name, list(targets), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        known = ", ".join(targets) or "none installed"
        raise UsageError(f"unknown target {name!r}{hint} (known: {known})")
    return targets[name]


def load_target_class(name: str) -> type[Target]:
    """The class registered as ``name`` (imports its module), checked against the protocol."""
    return find_target(name).load_class()


def get_target(name: str, options: Mapping[str, object] | None = None) -> Target:
    """The target ``name`` with ``options`` (field name → value; defaults for the rest)."""
    return find_target(name).load(options)


def servable_targets() -> dict[str, BundleSpec]:
    """Every installed target that writes a service bundle (imports each target's module)."""
    out: dict[str, BundleSpec] = {}
    for name, entry in discover().items():
        bundle = entry.load_class().bundle
        if bundle is not None:
            out[name] = bundle
    return out


def default_servable() -> str:
    """The servable target used when an option names none (``k8s --interface``, ``svcc
    image lock --interface``): the first, by name, of those svcc itself ships whose server
    listens on a port (an HTTP service); an installed plugin never changes a default."""
    for name, entry in discover().items():
        if entry.distribution != "svcc":
            continue
        bundle = entry.load_class().bundle
        if bundle is not None and bundle.listens:
            return name
    raise UsageError("no servable target is installed with svcc; reinstall svcc")


def servable_target(name: str, wrapper: str) -> "tuple[Target, BundleSpec]":
    """The servable target a wrapping target (``oci``, ``k8s``) names, with its bundle."""
    servable = servable_targets()
    if name not in servable:
        raise UsageError(
            f"target {wrapper!r} option --interface: {name!r} is not a target that writes a "
            f"service (one of: {', '.join(servable)})"
        )
    return get_target(name), servable[name]


def bundle_manifests() -> dict[str, str]:
    """Manifest file name → interface, over every servable target (how a bundle on disk
    says what it is)."""
    return {spec.manifest: spec.interface for spec in servable_targets().values()}
