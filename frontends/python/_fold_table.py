"""The reviewed table of standard-library values and pure functions the import-time
evaluator (``_evaluator``) may apply to known values.

Each entry is what the name *is* on the target (Linux, CPython): a constant, or a function
that reads nothing but its arguments, writes nothing, and returns plain data (``str``,
``bytes``, numbers, containers of them). ``tests/frontends/test_evaluator.py`` checks every entry
against the running interpreter, as the effects table is checked, so a row that names
something else, or a function that changed, fails a test rather than folding wrongly. The
target-dependent constants (``os.sep``, ``sys.platform``) hold the Linux target's values.
"""

import importlib
import keyword
import math
import operator
import re
from collections.abc import Callable
from typing import Final, Generic, TypeVar, cast

V = TypeVar("V")


class Deferred:
    """The value of a dotted name in a module slow to import (a large table, expressions
    compiled as it loads: ``html.entities``, ``string``, ``textwrap``), read on first use:
    most analyses never fold one, and ``svcc inspect FILE`` need not pay for them."""

    __slots__ = ("dotted",)

    def __init__(self, dotted: str) -> None:
        self.dotted = dotted

    def load(self) -> object:
        module, _, name = self.dotted.rpartition(".")
        return getattr(importlib.import_module(module), name)


class Table(dict[str, "V | Deferred"], Generic[V]):
    """A table whose :class:`Deferred` entries are loaded when first looked up."""

    def __getitem__(self, name: str) -> V:
        value = super().__getitem__(name)
        if isinstance(value, Deferred):
            value = cast("V", value.load())
            self[name] = value
        return value


# Constants: dotted name -> value on the target.
CONSTANTS: Final[Table[object]] = Table(
    {
        "string.ascii_letters": Deferred("string.ascii_letters"),
        "string.ascii_lowercase": Deferred("string.ascii_lowercase"),
        "string.ascii_uppercase": Deferred("string.ascii_uppercase"),
        "string.digits": Deferred("string.digits"),
        "string.hexdigits": Deferred("string.hexdigits"),
        "string.octdigits": Deferred("string.octdigits"),
        "string.punctuation": Deferred("string.punctuation"),
        "string.printable": Deferred("string.printable"),
        "string.whitespace": Deferred("string.whitespace"),
        "math.pi": math.pi,
        "math.e": math.e,
        "math.tau": math.tau,
        "math.inf": math.inf,
        "keyword.kwlist": tuple(keyword.kwlist),
        "html.entities.name2codepoint": Deferred("html.entities.name2codepoint"),
        "html.entities.codepoint2name": Deferred("html.entities.codepoint2name"),
        "os.sep": "/",
        "os.altsep": None,
        "os.extsep": ".",
        "os.pathsep": ":",
        "os.linesep": "\n",
        "os.curdir": ".",
        "os.pardir": "..",
        "os.name": "posix",
        "os.path.sep": "/",
        "sys.platform": "linux",
        "sys.maxsize": 2**63 - 1,
        "sys.byteorder": "little",
        "sys.maxunicode": 0x10FFFF,  # every CPython since 3.3 (PEP 393)
        "re.IGNORECASE": re.IGNORECASE,
        "re.I": re.I,
        "re.MULTILINE": re.MULTILINE,
        "re.M": re.M,
        "re.DOTALL": re.DOTALL,
        "re.S": re.S,
        "re.VERBOSE": re.VERBOSE,
        "re.X": re.X,
        "re.ASCII": re.ASCII,
        "re.A": re.A,
        "re.UNICODE": re.UNICODE,
        "re.U": re.U,
    }
)

# The constants whose value is the target's, not necessarily the running interpreter's.
TARGET_CONSTANTS: Final = frozenset(
    {
        "os.sep", "os.altsep", "os.extsep", "os.pathsep", "os.linesep", "os.curdir",
        "os.pardir", "os.name", "os.path.sep", "sys.platform", "sys.maxsize", "sys.byteorder",
    }
)  # fmt: skip

# Pure functions: dotted name -> the function (applied to known arguments only; every
# result is size-checked by the evaluator).
FUNCTIONS: Final[Table[Callable[..., object]]] = Table(
    {
        "re.escape": re.escape,
        "string.capwords": Deferred("string.capwords"),
        "textwrap.dedent": Deferred("textwrap.dedent"),
        "unicodedata.name": Deferred("unicodedata.name"),
        "unicodedata.lookup": Deferred("unicodedata.lookup"),
        "unicodedata.category": Deferred("unicodedata.category"),
        "unicodedata.normalize": Deferred("unicodedata.normalize"),
        "keyword.iskeyword": keyword.iskeyword,
        "math.sqrt": math.sqrt,
        "math.floor": math.floor,
        "math.ceil": math.ceil,
        "math.log": math.log,
        "math.log2": math.log2,
        "math.log10": math.log10,
        "math.exp": math.exp,
        "math.isclose": math.isclose,
        "operator.add": operator.add,
        "operator.itemgetter": operator.itemgetter,
        "str.maketrans": str.maketrans,
        "bytes.maketrans": bytes.maketrans,
    }
)


def _stable_hash(value: object) -> int:
    """``hash`` of the values whose hash does not depend on the process (integers, ranges,
    ``None``, booleans and tuples of them); a string's is salted per process: unknown."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(item)
        elif not isinstance(item, int | range | type(None)):
            raise TypeError("a hash that depends on the process")
    return hash(value)


# Builtins applied to known arguments (containers are built from evaluated elements).
BUILTINS: Final[dict[str, Callable[..., object]]] = {
    "len": len,
    "min": min,
    "max": max,
    "sum": sum,
    "abs": abs,
    "round": round,
    "sorted": sorted,
    "tuple": tuple,
    "list": list,
    "set": set,
    "frozenset": frozenset,
    "dict": dict,
    "zip": lambda *a: list(zip(*a, strict=False)),
    "enumerate": lambda it, start=0: list(enumerate(it, start)),
    "reversed": lambda it: list(reversed(it)),
    "range": range,
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "bytes": bytes,
    "chr": chr,
    "ord": ord,
    "hex": hex,
    "oct": oct,
    "bin": bin,
    "any": any,
    "all": all,
    "divmod": divmod,
    "pow": pow,
    "hash": _stable_hash,
}

# Methods of known ``str``/``bytes``/containers that return a new value and write nothing.
PURE_METHODS: Final = frozenset(
    {
        "upper", "lower", "title", "capitalize", "casefold", "swapcase", "strip", "lstrip",
        "rstrip", "split", "rsplit", "splitlines", "join", "replace", "startswith", "endswith",
        "find", "rfind", "index", "rindex", "count", "isdigit", "isalpha", "isalnum",
        "isspace", "isupper", "islower", "isidentifier", "encode", "decode", "format",
        "partition", "rpartition", "removeprefix", "removesuffix", "translate", "ljust",
        "rjust", "center", "zfill", "keys", "values", "items", "get", "copy", "union",
        "intersection", "difference", "symmetric_difference", "hex", "fromkeys",
    }
)  # fmt: skip

# Methods that fill a module-level container in place (``TABLE.update(...)``).
FILLING_METHODS: Final = frozenset(
    {"append", "extend", "add", "update", "setdefault", "insert", "discard", "remove"}
)

# Standard-library classes whose construction with no argument runs no Python code and
# changes nothing: their ``__new__`` and ``__init__`` are ``object``'s or store the
# arguments (an exception's ``args``). A class of the module whose bases are all here, that
# defines neither ``__init__`` nor ``__new__`` and has no metaclass, is made without running
# anything of the module (``UTC = Utc()`` with ``class Utc(tzinfo)``). Checked against the
# running interpreter by the tests.
PLAIN_BASES: Final = frozenset(
    {"builtins.object", "builtins.Exception", "builtins.ValueError", "builtins.TypeError",
     "builtins.KeyError", "builtins.LookupError", "builtins.RuntimeError",
     "builtins.ArithmeticError", "datetime.tzinfo"}
)  # fmt: skip

# Names that do not exist on the target platform (Linux): modules only Windows builds of
# Python have, and attributes of portable modules that only Windows defines. Reading one
# raises (``import msvcrt``: ImportError; ``ctypes.WinDLL``: AttributeError), so a ``try``
# whose body reads one before doing anything runs its handler on the target. Checked
# against the running interpreter by the tests (absent here).
WINDOWS_MODULES: Final = frozenset({"msvcrt", "winreg", "_winapi", "nt", "winsound", "_overlapped"})
WINDOWS_ATTRIBUTES: Final = frozenset(
    {"ctypes.WinDLL", "ctypes.windll", "ctypes.oledll", "ctypes.OleDLL", "ctypes.WinError",
     "ctypes.FormatError", "ctypes.GetLastError", "ctypes.HRESULT", "os.startfile",
     "sys.getwindowsversion", "sys.winver", "signal.CTRL_C_EVENT", "signal.CTRL_BREAK_EVENT",
     "os.O_BINARY"}
)  # fmt: skip
