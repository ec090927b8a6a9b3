"""What module-level code does when the module is imported: the reviewed effect tables.

The front end records facts (each call's callee origin, each dotted name read: see
``svcc.frontends.python._effects``); this module judges them. A call is harmless when its
callee is in :data:`PURE` (or under a :data:`PURE_PREFIXES` entry): standard-library
callables that do no I/O, read no environment or process state and give the same result on
every run. A call or read in :data:`EFFECTS` keeps its own reason code (I/O, environment,
output, randomness and clocks, process state). The module's own functions and classes are
harmless when their bodies are (to the depth the front end followed them). Anything else is
unknown and stays an effect (``SVC-R007``): precision never at the cost of the promise that
an eligible function's bundle starts.

``docs/effects.md`` is generated from these tables (``python -m
svcc.compiler.passes.effects``); a test keeps it in sync and a unit test checks every entry.
"""

import builtins
import re
from collections.abc import Callable
from typing import Final

from svcc.compiler.passes.data_read_rules import climbs, served_relative, source_depth
from svcc.compiler.passes.type_readiness import MODEL_BASES
from svcc.contracts.diagnostics import codes as C
from svcc.contracts.diagnostics.codes import Code
from svcc.frontends.python.data_reads import (  # one table: reads at import and per call
    DATA_READERS,
    normalise,
)
from svcc.frontends.python.path_arguments import PATH_ARGUMENTS
from svcc.ir.model import ClassDecl, Evaluation, Helper, ModuleIR


def _names(module: str, *names: str) -> frozenset[str]:
    return frozenset(f"{module}.{n}" for n in names)


_TYPING = frozenset(
    f"{m}.{n}"
    for m in ("typing", "typing_extensions")
    for n in (
        "TypeVar", "NewType", "ParamSpec", "TypeVarTuple", "NamedTuple", "TypedDict",
        "TypeAliasType", "cast", "overload", "final", "runtime_checkable", "no_type_check",
        "override", "dataclass_transform", "Protocol", "Generic",
    )
)  # fmt: skip

# Pure callables: constructors and functions with no I/O, no environment, no process state,
# deterministic. Reviewed one by one; ``tests/compiler/test_effects.py`` holds a case per entry.
PURE: Final[dict[str, frozenset[str]]] = {
    "regular expressions (a literal pattern is compiled to check it)": _names(
        "re",
        "compile",
        "escape",
        "match",
        "fullmatch",
        "search",
        "sub",
        "subn",
        "split",
        "findall",
    ),
    "collections": _names(
        "collections", "namedtuple", "OrderedDict", "defaultdict", "deque", "Counter", "ChainMap"
    )
    | {"collections.namedtuple()"},
    "typing constructs": _TYPING,
    "enum machinery": _names(
        "enum", "Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "auto", "unique", "verify"
    ),
    "functools": _names(
        "functools",
        "partial",
        "wraps",
        "lru_cache",
        "cache",
        "total_ordering",
        "singledispatch",
        "cached_property",
        "update_wrapper",
        "cmp_to_key",
    )
    | {"functools.lru_cache()", "functools.wraps()"},
    "dataclasses": _names("dataclasses", "field", "dataclass", "make_dataclass"),
    "literal containers and values": _names(
        "builtins",
        "frozenset",
        "set",
        "dict",
        "list",
        "tuple",
        "str",
        "int",
        "float",
        "bool",
        "bytes",
        "bytearray",
        "complex",
        "object",
        "range",
        "len",
        "min",
        "max",
        "sum",
        "sorted",
        "reversed",
        "enumerate",
        "zip",
        "abs",
        "round",
        "divmod",
        "pow",
        "chr",
        "ord",
        "hex",
        "oct",
        "bin",
        "isinstance",
        "issubclass",
        "property",
        "staticmethod",
        "classmethod",
        "slice",
        "any",
        "all",
        "format",
        "type",
    ),
    "struct, string, decimal, fractions, uuid values": _names("struct", "Struct", "calcsize")
    | _names("string", "Template", "Formatter")
    | _names("decimal", "Decimal")
    | _names("fractions", "Fraction")
    | _names("uuid", "UUID"),
    "datetime constructors": _names("datetime", "datetime", "date", "time", "timedelta", "timezone")
    | _names("datetime.datetime", "fromisoformat", "strptime")
    | _names("datetime.date", "fromisoformat"),
    "logging objects (getting a logger configures nothing)": _names(
        "logging", "getLogger", "NullHandler", "Formatter", "Filter", "LoggerAdapter"
    )
    | _names("logging.getLogger()", "getChild", "addHandler")
    | {"logging.getLogger().addHandler"},
    "path arithmetic (never a read)": _names(
        "os.path",
        "join",
        "dirname",
        "basename",
        "abspath",
        "realpath",
        "normpath",
        "splitext",
        "split",
        "relpath",
        "isabs",
        "commonpath",
    )
    | _names("os", "fspath", "fsencode", "fsdecode")
    | _names("pathlib", "Path", "PurePath", "PurePosixPath", "PureWindowsPath", "PosixPath")
    | _names("pathlib.Path()", "relative_to", "with_name", "with_suffix", "with_stem", "joinpath"),
    "operator, itertools, types, abc, contextlib, json text": _names(
        "operator", "itemgetter", "attrgetter", "methodcaller"
    )
    | _names("itertools", "chain", "count", "repeat", "product", "permutations", "combinations")
    | _names("types", "SimpleNamespace", "MappingProxyType")
    | _names("abc", "abstractmethod", "ABCMeta")
    | _names("contextlib", "contextmanager", "asynccontextmanager")
    | _names("json", "loads", "dumps", "JSONEncoder", "JSONDecoder"),
    "text wrapping": _names("textwrap", "TextWrapper", "dedent", "indent", "wrap", "fill"),
    "descriptions attached to a type (``Annotated`` metadata)": _names("pydantic", "Field")
    | _names("pydantic.fields", "Field")
    | _names("typing_extensions", "Doc"),
    "Cog's parameter descriptor (the bundle's own `cog` returns its default)": _names(
        "cog", "Input"
    ),
    "loaders of a file already open (the open is judged where it happens)": _names("json", "load")
    | _names("tomllib", "load", "loads")
    | _names("pickle", "load", "loads", "dumps")
    | _names("io", "StringIO", "BytesIO"),
}

# Prefixes of pure callables: every method of a literal's type (mutating the module's own
# containers is deterministic), of a compiled pattern, of a string template or struct, and
# the math functions.
PURE_PREFIXES: Final = (
    "builtins.str().", "builtins.bytes().", "builtins.int().", "builtins.float().",
    "builtins.dict().", "builtins.list().", "builtins.set().", "builtins.tuple().",
    "builtins.frozenset().", "re.compile().", "string.Template().", "struct.Struct().",
    "decimal.Decimal().", "math.", "collections.namedtuple()().", "builtins.open().",
    "io.open().", "pathlib.Path().open().",
)  # fmt: skip

# Builtin exception classes: constructing one is pure.
_EXCEPTIONS: Final = frozenset(
    f"builtins.{n}"
    for n, v in vars(builtins).items()
    if isinstance(v, type) and issubclass(v, BaseException)
)

# Effects with their own code: (reason code, what it is). Exact names or prefixes (a key
# ending in "." or "()." covers what starts with it).
EFFECTS: Final[dict[str, tuple[Code, str]]] = {
    # file, network and process I/O
    **dict.fromkeys(
        [
            "builtins.open", "builtins.input", "io.open", "os.listdir", "os.scandir", "os.walk",
            "os.stat", "os.makedirs", "os.mkdir", "os.remove", "os.path.exists",
            "os.path.isfile", "os.path.isdir", "os.path.getsize", "os.path.getmtime",
            "shutil.", "socket.", "urllib.request.", "http.client.", "subprocess.",
            "os.system", "os.popen", "os.exec", "os.spawn", "os.fork", "sqlite3.", "tempfile.",
            "glob.", "pkgutil.get_data",
            "importlib.resources.", "sys.stdin", "logging.FileHandler",
            "pathlib.Path().read_text", "pathlib.Path().read_bytes", "pathlib.Path().open",
            "pathlib.Path().write_text", "pathlib.Path().write_bytes", "pathlib.Path().exists",
            "pathlib.Path().is_file", "pathlib.Path().is_dir", "pathlib.Path().iterdir",
            "pathlib.Path().glob", "pathlib.Path().rglob", "pathlib.Path().stat",
            "pathlib.Path().mkdir", "pathlib.Path().touch", "pathlib.Path().unlink",
            "joblib.load", "numpy.load", "pandas.read_",
        ],
        (C.R026_IMPORT_IO, "file, network or process I/O"),
    ),
    # the environment and the command line
    **dict.fromkeys(
        [
            "os.environ", "os.environb", "os.getenv", "os.putenv", "os.unsetenv", "sys.argv",
            "sys.orig_argv", "dotenv.", "os.getcwd", "os.getlogin", "getpass.getuser",
            "os.path.expanduser", "os.path.expandvars", "pathlib.Path.home",
            "pathlib.Path.cwd", "pathlib.Path().expanduser",
        ],
        (C.R027_IMPORT_ENVIRONMENT, "the environment or command line"),
    ),
    # output: stdout would corrupt an MCP stdio stream
    **dict.fromkeys(
        [
            "builtins.print", "logging.debug", "logging.info", "logging.warning",
            "logging.error", "logging.critical", "logging.exception", "logging.log",
            "logging.basicConfig", "logging.StreamHandler", "logging.getLogger().debug",
            "logging.getLogger().info", "logging.getLogger().warning",
            "logging.getLogger().error", "logging.getLogger().critical",
            "logging.getLogger().exception", "logging.getLogger().log", "sys.stdout.",
            "sys.stderr.", "warnings.warn", "pprint.",
        ],
        (C.R028_IMPORT_OUTPUT, "output (a print or logging call)"),
    ),
    # randomness and clocks
    **dict.fromkeys(
        [
            "time.", "random.", "secrets.", "uuid.uuid1", "uuid.uuid4", "os.urandom",
            "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
            "datetime.date.today",
        ],
        (C.R029_IMPORT_NONDETERMINISM, "randomness or a clock"),
    ),
    # process state: threads, signals, exit handlers, other modules, sys.path
    **dict.fromkeys(
        [
            "threading.", "_thread.", "multiprocessing.", "concurrent.futures.", "signal.",
            "atexit.", "sys.path.", "sys.modules.", "sys.setrecursionlimit", "sys.settrace",
            "sys.setprofile", "os.chdir", "os.umask", "warnings.filterwarnings",
            "warnings.simplefilter", "locale.setlocale", "socket.setdefaulttimeout",
            "asyncio.", "gc.", "faulthandler.", "importlib.import_module", "builtins.__import__",
            "builtins.exec", "builtins.eval", "builtins.setattr", "builtins.delattr",
            "logging.getLogger().setLevel", "logging.disable", "logging.captureWarnings",
        ],
        (C.R030_IMPORT_PROCESS_STATE, "process state (threads, signals, exit handlers, other "
         "modules or sys.path)"),
    ),
}  # fmt: skip

# Reads of these dotted names are effects; every other read of a module attribute is a
# value (PEP 562 module ``__getattr__`` aside).
EFFECT_READS: Final = ("os.environ", "os.environb", "sys.argv", "sys.orig_argv", "sys.stdin")

PURE_NAMES: Final = frozenset().union(*PURE.values()) | _EXCEPTIONS


# The entries of :data:`EFFECTS` that cover every name they start (a key ending in ``.`` or
# ``_``, and ``os.exec``, ``os.spawn``), and the longest: :func:`effect_of` looks each of a
# name's prefixes up here instead of testing every entry (it was a scan of the whole table
# per evaluation judged).
_EFFECT_PREFIXES: Final[dict[str, tuple[Code, str]]] = {
    key: value
    for key, value in EFFECTS.items()
    if key.endswith((".", "_")) or key in ("os.exec", "os.spawn")
}
_LONGEST_EFFECT_PREFIX: Final = max(map(len, _EFFECT_PREFIXES))


def effect_of(name: str) -> tuple[Code, str] | None:
    """The effect entry covering ``name`` (exact, then the longest prefix)."""
    found = EFFECTS.get(name)
    if found is not None:
        return found
    for end in range(min(len(name), _LONGEST_EFFECT_PREFIX), 0, -1):
        found = _EFFECT_PREFIXES.get(name[:end])
        if found is not None:
            return found
    return None


def is_pure(name: str) -> bool:
    return name in PURE_NAMES or name.startswith(PURE_PREFIXES)


class Judge:
    """Judges a module's evaluations; memoises the module's helpers (cycles are unknown)."""

    def __init__(
        self,
        ir: ModuleIR,
        plain_class: Callable[[ClassDecl], bool],
        data_files: frozenset[str] = frozenset(),
        *,
        governed: bool = False,
    ) -> None:
        self.data_files = data_files
        self.governed = governed  # a governed worker's working directory is a scratch folder
        self.depth = source_depth(ir)
        self.helpers: dict[str, Helper] = {h.name: h for h in ir.helpers}
        self.classes: dict[str, ClassDecl] = {c.name: c for c in ir.classes}
        self.plain_class = plain_class
        self._memo: dict[str, bool] = {}

    def effect(self, e: Evaluation) -> tuple[Code, str] | None:
        """Why evaluating ``e`` at import is not known harmless, or ``None``: the reason's
        code and a phrase for the message."""
        if e.kind == "read":
            name = normalise(e.callee or "?")
            for read in EFFECT_READS:
                if name == read or name.startswith((f"{read}.", f"{read}[")):
                    return effect_of(read) or (C.R027_IMPORT_ENVIRONMENT, "the environment")
            if name.startswith("local.") and not self.local_pure(name, call=False):
                return C.R007_MODULE_EFFECT, "a method or property of the module's own class"
            return None
        if e.kind != "call":
            return C.R007_MODULE_EFFECT, ""
        name = normalise(e.callee or "?")
        found = effect_of(name)
        if (
            found is not None
            and e.path is None
            and e.literal is not None
            and not self.governed
            and name.startswith(DATA_READERS)
            and served_relative(e.literal, self.data_files, self.depth)
        ):
            return None  # read from the working directory, source/, where the bundle holds it
        if found is not None and e.path is not None and name.startswith(DATA_READERS):
            if e.path in self.data_files:
                return None  # a declared data file: the bundle holds it, verified at startup
            if climbs(e.path) > self.depth:
                return found[0], (
                    f"it reads {e.path}, which climbs above the module's source root, where "
                    "the served bundle holds nothing (move the file below the root and "
                    "declare it)"
                )
            return found[0], (
                f"it reads {e.path}, which is not a declared data file "
                "(--data, or [tool.svcc] data-files)"
            )
        if found is not None:
            return found
        if (
            name.startswith("re.")
            and name in PURE["regular expressions (a literal pattern is compiled to check it)"]
        ):
            return self._pattern(e)
        if is_pure(name):
            return None
        if name.startswith("local.") and self.local_pure(name):
            return None
        return C.R007_MODULE_EFFECT, ""

    def _pattern(self, e: Evaluation) -> tuple[Code, str] | None:
        if e.callee == "re.escape":
            return None
        if e.literal is None:
            return C.R007_MODULE_EFFECT, "a pattern that is not a literal"
        flags = 0
        for name in e.names:
            if name.startswith("re.") and isinstance(getattr(re, name[3:], None), int):
                flags |= getattr(re, name[3:])
        try:
            re.compile(e.literal, flags)
        except (re.error, ValueError, OverflowError) as exc:
            return C.R031_INVALID_PATTERN, f"an invalid pattern ({exc})"
        except RecursionError:  # groups nested past the interpreter's limit: the import fails
            return C.R031_INVALID_PATTERN, "an invalid pattern (nested too deeply to compile)"
        return None

    def local_pure(self, callee: str, *, call: bool = True) -> bool:
        """``local.f`` / ``local.C`` / ``local.C().attr``: the module's own function or class
        whose body (a class's construction) is harmless, its local bases too; for a method
        of an instance (``C().m``), the method's body too (``C.m``); a deeper chain, or a
        call of an attribute that is not a method of the class, is not known."""
        rest = callee[len("local.") :]
        name = re.split(r"[.(\[]", rest, maxsplit=1)[0]
        if not call and self._enum_member(name, rest):
            return True
        if rest != name and not rest.startswith(f"{name}()") and rest != f"{name}()":
            return False  # an attribute of the function or class object itself
        if rest.startswith(f"{name}()") and rest != f"{name}()":
            if name not in self.classes:
                return False  # a method of what a function returned
            attribute = re.fullmatch(rf"{re.escape(name)}\(\)\.(\w+)", rest)
            if attribute is None:
                return False
            method = f"{name}.{attribute[1]}"
            if method in self.helpers:
                return self._helper_pure(name) and self._helper_pure(method)
            return not call and self._helper_pure(name)
        return self._helper_pure(name)

    def _enum_member(self, name: str, rest: str) -> bool:
        """``Size.M`` (and ``Size.M.value``): a member of the module's own Enum, read
        through the enum's own lookup, which runs nothing of the module."""
        cls = self.classes.get(name)
        if cls is None or not any(b in ENUM_BASES for b in cls.bases):
            return False
        return re.fullmatch(rf"{re.escape(name)}\.[A-Za-z_]\w*(\.(value|name))?", rest) is not None

    def _helper_pure(self, name: str) -> bool:
        if name in self._memo:
            return self._memo[name]
        self._memo[name] = False  # a cycle is unknown
        helper = self.helpers.get(name)
        ok = helper is not None and helper.opaque is None
        if ok and helper is not None:
            ok = all(self.effect(e) is None for e in helper.calls)
        cls = self.classes.get(name)
        if ok and cls is not None:
            ok = self.plain_class(cls) and all(
                self._helper_pure(b.split(".", 1)[1]) for b in cls.bases if b.startswith("local.")
            )
        self._memo[name] = ok
        return ok


# The standard library's Enum bases: a member read through the class runs no module code.
ENUM_BASES: Final = frozenset(
    {"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"}
)

# Class bases that add no import-time behaviour of their own (plus the module's plain
# classes).
PLAIN_BASE_PREFIXES: Final = (
    "builtins.", "typing.", "typing_extensions.", "enum.", "abc.ABC", "collections.",
    "textwrap.TextWrapper", "string.Template", "string.Formatter", "json.JSONEncoder",
    "json.JSONDecoder", "logging.Handler", "logging.Filter", "logging.Formatter",
    "logging.LoggerAdapter", "html.parser.HTMLParser",
    "argparse.Action",
    "contextlib.ContextDecorator", "contextlib.AbstractContextManager", "numbers.",
    "datetime.tzinfo", "codecs.Codec", "codecs.IncrementalEncoder", "codecs.IncrementalDecoder",
    "codecs.StreamReader", "codecs.StreamWriter", "types.ModuleType",
    "cog.BasePredictor", "cog.predictor.BasePredictor",  # the bundle's own cog (source/cog.py)
    *MODEL_BASES,
)  # fmt: skip


SECURITY_CALLS: Final[dict[str, tuple[str, ...]]] = {
    "env": ("os.environ", "os.environb", "os.getenv", "os.getenvb", "dotenv."),
    "process": (
        "subprocess.", "os.system", "os.popen", "os.exec", "os.spawn", "os.fork",
        "os.posix_spawn", "pty.", "asyncio.create_subprocess",
    ),
    "eval": (
        "builtins.eval", "builtins.exec", "builtins.compile", "builtins.__import__",
        "pickle.load", "pickle.Unpickler", "marshal.load", "shelve.open", "yaml.load",
        "yaml.unsafe_load", "yaml.full_load", "dill.load", "cloudpickle.load", "joblib.load",
        "importlib.import_module", "runpy.",
    ),
}  # fmt: skip

# Calls that open, list, change or remove a path: a security effect when an argument reads a
# parameter.
PATH_CALLS: Final = (
    "builtins.open", "io.open", "pathlib.", "os.open", "os.remove", "os.unlink", "os.listdir",
    "os.scandir", "os.walk", "os.rename", "os.replace", "os.rmdir", "os.makedirs", "os.mkdir",
    "os.path.join", "shutil.", "logging.FileHandler", "logging.handlers.RotatingFileHandler",
    "logging.handlers.TimedRotatingFileHandler", "logging.handlers.WatchedFileHandler",
    "logging.basicConfig", *PATH_ARGUMENTS,
)  # fmt: skip


_SECURITY_CODES: Final = {
    "env": C.R033_READS_ENVIRONMENT,
    "process": C.R034_STARTS_PROCESS,
    "eval": C.R035_EVALUATES_CODE,
    "paths": C.R036_PARAMETER_PATH,
}


def security_kind(effect: Evaluation, params: set[str]) -> tuple[str, Code] | None:
    """The security kind of a capability's sensitive call or read, with its code."""
    callee = effect.callee or ""
    for kind, prefixes in SECURITY_CALLS.items():
        if callee.startswith(prefixes):
            return kind, _SECURITY_CODES[kind]
    if effect.kind == "call" and callee.startswith(PATH_CALLS) and params & set(effect.names):
        return "paths", _SECURITY_CODES["paths"]
    return None


def markdown() -> str:
    """The body of ``docs/effects.md``."""
    lines = [
        "# Import-time effects: the reviewed tables",
        "",
        "Generated from `compiler/passes/effects.py` by "
        "`python -m svcc.compiler.passes.effects > docs/effects.md`; a test keeps them in "
        "sync, and `tests/compiler/test_effects.py` checks every entry on a module that uses it.",
        "",
        "A module-level statement is harmless when everything it evaluates is known pure: "
        "a call in the tables below, a literal, a name, an attribute of a module, an "
        "operator, a subscript, a comprehension or a lambda, a function or class of the "
        "module whose own body is harmless (followed three calls deep), or a class whose "
        "bases are the module's plain classes or the bases listed at the end. What stays an "
        "effect keeps its own code; anything unknown stays `SVC-R007` (conditional).",
        "",
        "## Pure callables",
        "",
    ]
    for family, names in PURE.items():
        lines.append(f"- **{family}**: " + ", ".join(f"`{n}`" for n in sorted(names)))
    lines.append(
        "- **methods of**: "
        + ", ".join(f"`{p.rstrip('.')}`" for p in PURE_PREFIXES)
        + " (any method; `math.` any function), and constructing any builtin exception"
    )
    lines += [
        "",
        "## Effects",
        "",
        "| callable or name (a trailing `.` covers a module) | code |",
        "|---|---|",
    ]
    for name, (code, _) in EFFECTS.items():
        lines.append(f"| `{name}` | {code.code} |")
    lines += [
        "",
        "Reads (not calls) that are effects: " + ", ".join(f"`{r}`" for r in EFFECT_READS) + ".",
        "",
    ]
    lines += ["## Plain class bases", "", ", ".join(f"`{b}`" for b in PLAIN_BASE_PREFIXES), ""]
    lines += [
        "## Security effects inside a capability",
        "",
        "A capability whose body does one of these is conditional with the kind's code "
        'until `--allow KIND` (or `[tool.svcc] allow = ["KIND"]`) opts in; then a warning '
        "(`SVC-R039`) records it.",
        "",
        "| kind | code | calls and reads |",
        "|---|---|---|",
    ]
    for kind, prefixes in SECURITY_CALLS.items():
        shown = ", ".join(f"`{p}`" for p in prefixes)
        lines.append(f"| `{kind}` | {_SECURITY_CODES[kind].code} | {shown} |")
    shown = ", ".join(f"`{p}`" for p in PATH_CALLS)
    lines.append(
        f"| `paths` | {_SECURITY_CODES['paths'].code} | {shown}, when an argument reads a "
        "parameter |"
    )
    lines += [
        "",
        "### The path argument of file-opening callables",
        "",
        "For the callables below the *path argument* is judged on every call in the body: "
        "the function is `paths` when a parameter reaches it, directly, through a local name "
        "derived from it (`full = os.path.join(BASE, name)`; `open(full)`), or through the "
        "module's own functions that pass their parameter on to one of them (`def _read(p): "
        "return json.load(open(p))`, followed three calls deep). The table is "
        "`PATH_ARGUMENTS` in `frontends/python/path_arguments.py`; "
        "`tests/frontends/test_slices_and_unbound_names.py` checks each position and name "
        "against the installed library's signature.",
        "",
        "| callable | path argument (position: name) |",
        "|---|---|",
    ]
    for callee, spec in PATH_ARGUMENTS.items():
        where = ", ".join(f"{position}: `{name}`" for position, name in spec)
        lines.append(f"| `{callee}` | {where} |")
    lines += [
        "",
        "## Names libraries removed",
        "",
        "A capability reading one is conditional (`SVC-R060`) with the replacement in its "
        "message (the table is `REMOVED_NAMES` in `frontends/removed_names.py`; "
        "`tests/frontends/test_removed_names.py` checks each is gone from the installed library).",
        "",
        "| name | removed in | use instead |",
        "|---|---|---|",
    ]
    from svcc.frontends.removed_names import REMOVED_NAMES

    for name, (distribution, version, instead) in REMOVED_NAMES.items():
        lines.append(f"| `{name}` | {distribution} {version} | {instead} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
