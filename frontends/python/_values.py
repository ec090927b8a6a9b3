"""The values the import-time evaluator computes, and the bounds every value keeps.

A known value is plain data (``None``, ``bool``, numbers, ``str``, ``bytes``, tuples,
lists, dicts, sets, frozensets, ranges) built by the evaluator itself, or one of the
evaluator's own markers below: an Enum member or a class of the module, the target's
``sys.version_info``, a module-level function. Python's own operators are applied only to
plain data, so nothing of the source ever runs: an operator on plain data reads nothing
else and writes nothing.
"""

import ast
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final

from svcc.frontends.python._walk import walk

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen

# Bounds: past any of them a value is unknown (never a hang, never a large allocation).
MAX_STRING: Final = 100_000  # characters or bytes of one string
MAX_ITEMS: Final = 10_000  # elements of one container
MAX_INT_BITS: Final = 4_096  # bits of one integer
MAX_ITERATIONS: Final = 10_000  # iterations of one loop or comprehension
MAX_STEPS: Final = 200_000  # expression nodes evaluated for one module-level statement
MAX_MODULE_STEPS: Final = 2_000_000  # ... for one module
MAX_CALL_DEPTH: Final = 3  # nested calls of the module's own functions


class Unknown(Exception):
    """Raised where a value cannot be known; ``node`` is the sub-expression (or
    statement) that could not be evaluated."""

    def __init__(self, node: object, why: str = "") -> None:
        super().__init__(why)
        self.node = node
        self.why = why


class Raises(Unknown):
    """A known callable applied to arguments that are plain data (strings, numbers,
    containers of them) raised: the import raises the same, for certain, unless code
    around the call catches it (``definite`` is false inside a call of the module's own
    function, whose ``try`` the evaluator does not follow)."""

    def __init__(self, node: object, why: str, definite: bool) -> None:
        super().__init__(node, why)
        self.definite = definite


def plain_data(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is what Python itself would hold there: no stand-in of the
    evaluator's (an opaque value, an instance it models), so an error on it is Python's."""
    if depth > 8:
        return False
    if value is None or isinstance(value, bool | int | float | complex | str | bytes | range):
        return True
    if isinstance(value, list | tuple | set | frozenset):
        return len(value) <= 1_000 and all(plain_data(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return len(value) <= 1_000 and all(
            plain_data(k, depth + 1) and plain_data(v, depth + 1) for k, v in value.items()
        )
    return False


@frozen
class EnumMember:
    cls: str
    name: str
    value: object


class ClassValue:
    """A class of the module whose body binds only known values (an Enum's members).
    Compared by identity (each class statement makes its own class).

    ``constructible``: a plain class (base ``object``) defining neither ``__init__`` nor
    ``__new__``: making an instance runs none of its code. ``instantiable``: a plain class
    whose instances the evaluator makes (``Instance``): no decorator, base ``object``, no
    ``__slots__``, no dunder method Python would call behind its back (``__getattr__``,
    ``__setattr__``, ``__del__``, ...). ``methods``: its undecorated methods
    (``ast.FunctionDef``) by name; ``names``: every name its body binds (a name bound
    otherwise, a property, is not an attribute the evaluator reads or sets).
    ``definitions``: the class statements of the class and its own bases, for
    :attr:`listable`."""

    __slots__ = (
        "attributes",
        "constructible",
        "definitions",
        "instantiable",
        "methods",
        "name",
        "names",
    )

    def __init__(
        self,
        name: str,
        attributes: dict[str, object],
        *,
        constructible: bool = False,
        instantiable: bool = False,
        methods: Mapping[str, object] | None = None,
        names: frozenset[str] = frozenset(),
        definitions: tuple[ast.ClassDef, ...] = (),
    ) -> None:
        self.name = name
        self.attributes = attributes
        self.constructible = constructible
        self.instantiable = instantiable
        self.methods: Mapping[str, object] = {} if methods is None else methods
        self.names = names
        self.definitions = definitions

    def __repr__(self) -> str:
        return f"ClassValue(name={self.name!r})"

    @property
    def listable(self) -> bool:
        """``names`` is every name the class and its bases bind (no ``del`` in their
        bodies): ``dir()`` of an instance is known. Asked for rarely, so only then walked."""
        return bool(self.definitions) and not any(
            isinstance(n, ast.Delete) for d in self.definitions for n in walk(d)
        )


class FunctionRef:
    """A function of the module (undecorated, ``def``), or of another module of the
    repository (``own`` false: called only through ``owner``, that module's evaluator).
    ``attributes``: what a decorator recorded on it (``func.signature = arguments``); a
    function object has no other attribute whose name is not a dunder."""

    def __init__(
        self, node: object, own: bool = True, owner: object | None = None, tracked: bool = False
    ) -> None:
        self.node = node  # its ``ast.FunctionDef``
        self.own = own
        self.owner = owner
        self.attributes: dict[str, object] = {}
        # the one value of a function object the evaluator made and followed (a method it
        # decorated): only then is ``attributes`` all it has (a module function read by
        # name is a new value each time: its attributes are not known)
        self.tracked = tracked


class Generated:
    """The values of a generator of the module, made eagerly: only a ``for`` statement
    iterating the call itself uses them, and its body may not change a container the
    generator could read (``reach``): Python would make them as the loop runs."""

    def __init__(self, values: tuple[object, ...], reach: frozenset[int]) -> None:
        self.values = values
        self.reach = reach


class ClassObject:
    """A class of the module being made by its own metaclass (``class C(metaclass=M)``),
    as the metaclass's ``__init__`` sees it: ``members``, the class body's methods and
    literal attributes (what ``getattr`` on the class finds before the metaclass), and the
    metaclass's methods (``cls.m()``). Mutable (``cls.TABLE = ...``): never hashed."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(
        self,
        name: str,
        members: dict[str, object],
        meta: Mapping[str, object],
        meta_name: str,
        owner: object,
    ):
        self.owner = owner  # the evaluator of the module defining the metaclass
        self.name = name
        self.members = members
        self.meta = meta  # the metaclass's methods (``ast.FunctionDef``) by name
        self.meta_name = meta_name


class Partial:
    """``functools.partial(f, *args, **kwargs)`` of the module's own function ``f``."""

    def __init__(self, function: FunctionRef, args: list[object], kwargs: dict[str, object]):
        self.function = function
        self.args = args
        self.kwargs = kwargs


class Instance:
    """An instance of the module's ``instantiable`` class, made by running its
    ``__init__`` on known arguments: the attributes its methods set. Mutable, so tracked
    as a list is; never hashed (its class may define ``__hash__``)."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, cls: ClassValue) -> None:
        self.cls = cls
        self.attributes: dict[str, object] = {}


@frozen
class TargetVersion:
    """``sys.version_info`` of the target Python (``major.minor``; the micro version is
    not known: a comparison that depends on it is unknown)."""

    major: int
    minor: int


@frozen
class TargetHexversion:
    """``sys.hexversion`` of the target: some integer in ``[low, high)`` (every release of
    its ``major.minor``); a comparison with an integer inside that range is unknown."""

    low: int
    high: int


class Opaque:
    """A value computed harmlessly but not known (``getattr(math, "sumprod", f)``, a
    lambda): binding it is evaluated, using it is unknown."""


OPAQUE: Final = Opaque()

PLAIN_SCALARS: Final = (type(None), bool, int, float, complex, str, bytes)
_SEQUENCES: Final = (tuple, list, set, frozenset)
_TEXT: Final = (str, bytes)
MUTABLE: Final = (list, dict, set)


def is_plain(value: object, depth: int = 0) -> bool:
    """Plain data only (no marker anywhere inside): what Python's operators may touch."""
    if isinstance(value, PLAIN_SCALARS):
        return True
    if depth > 20:
        return False
    # a scalar element answered in place, a loop rather than a generator: a list the
    # module's statements append to is asked again at each call (``_method``)
    if isinstance(value, _SEQUENCES):
        for v in value:  # noqa: SIM110  # a loop: no generator frame per element
            if not (isinstance(v, PLAIN_SCALARS) or is_plain(v, depth + 1)):
                return False
        return True
    if isinstance(value, dict):
        for k, v in value.items():
            if not (isinstance(k, PLAIN_SCALARS) or is_plain(k, depth + 1)):
                return False
            if not (isinstance(v, PLAIN_SCALARS) or is_plain(v, depth + 1)):
                return False
        return True
    return isinstance(value, range)


def range_length(value: range) -> int:
    """``len(value)``, or a bound past every limit when it does not fit a machine word."""
    try:
        return len(value)
    except OverflowError:
        return MAX_ITERATIONS + 1


def unordered(value: object, depth: int = 0) -> bool:
    """Whether ``value`` holds a set of strings or bytes anywhere: their iteration order
    follows the per-run hash seed, so anything built from it in order is unknown (the IR
    is the same bytes for the same input)."""
    if isinstance(value, set | frozenset):
        return not all(isinstance(v, int | type(None)) for v in value)
    if depth > 20:
        return True
    if isinstance(value, tuple | list):
        return any(unordered(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(unordered(v, depth + 1) for v in value.values())
    return False


def check_size(value: object, node: object) -> object:
    """``value`` when it is within the bounds, else ``Unknown`` at ``node``."""
    kind = type(value)  # the commonest exact types first (asked of every value made)
    if kind is str:
        if len(value) > MAX_STRING:  # type: ignore[arg-type]
            raise Unknown(node, "a string past the evaluator's size limit")
        return value
    if kind is list or kind is tuple or kind is dict:
        if len(value) > MAX_ITEMS:  # type: ignore[arg-type]
            raise Unknown(node, "a container past the evaluator's size limit")
        return value
    if isinstance(value, str | bytes):
        if len(value) > MAX_STRING:
            raise Unknown(node, "a string past the evaluator's size limit")
    elif isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > MAX_INT_BITS:
            raise Unknown(node, "an integer past the evaluator's size limit")
    elif isinstance(value, tuple | list | set | frozenset | dict):
        if len(value) > MAX_ITEMS:
            raise Unknown(node, "a container past the evaluator's size limit")
    elif isinstance(value, range) and range_length(value) > MAX_ITERATIONS:
        raise Unknown(node, "a range past the evaluator's iteration limit")
    return value


def weight(value: object, nested: bool = False) -> int:
    """A bound on the size of what an operation over ``value`` may produce: a string's
    length, a container's elements and theirs; an integer on its own is its magnitude (a
    repetition count: ``"x" * n``), inside a container one element."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, int) and not isinstance(value, bool) and not nested:
        return abs(value) if abs(value) < MAX_STRING * 10 else MAX_STRING * 10
    if isinstance(value, _SEQUENCES):
        return len(value) + _nested_weight(value)
    if isinstance(value, dict):
        return len(value) + _nested_weight(value.keys()) + _nested_weight(value.values())
    return 1


def _nested_weight(values: Iterable[object]) -> int:
    """The sum of ``weight(v, True)`` over ``values``, each element's case in place (no
    call per string or number: a container is weighed again at each method call on it)."""
    total = 0
    for v in values:
        if isinstance(v, _TEXT):
            total += len(v)
        elif isinstance(v, _SEQUENCES):
            total += len(v) + _nested_weight(v)
        elif isinstance(v, dict):
            total += len(v) + _nested_weight(v.keys()) + _nested_weight(v.values())
        else:
            total += 1  # a number, or anything else, inside a container: one element
    return total
