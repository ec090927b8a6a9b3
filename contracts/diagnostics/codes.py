"""Every diagnostic code svcc emits, in one table. Codes are never renumbered or reused.

Each code is a module-level ``Final`` constant that registers itself (mypy's
``errorcodes`` style). ``docs/diagnostics.md`` is generated from this table
(``python -m svcc.contracts.diagnostics``); ``tests/contracts/test_codes.py`` fails when the
two disagree, when a number is skipped, or when a code has no fixture triggering it.

Families: ``SVC-R`` readiness reasons (attached to a capability), ``SVC-F`` front-end
notes and errors (attached to the module).
"""

from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen


Severity = Literal["error", "warning", "note"]
Dimension = Literal["binding", "inputs", "outputs", "execution", "source"]
ReadinessClass = Literal["eligible", "conditional", "unsupported", "ambiguous"]

CLASS_ORDER: Final[dict[ReadinessClass, int]] = {
    "eligible": 0,
    "conditional": 1,
    "ambiguous": 2,
    "unsupported": 3,
}


@frozen
class Code:
    code: str
    title: str
    severity: Severity
    dimension: Dimension
    # The readiness class an error of this code forces; None for warnings and front-end codes.
    klass: ReadinessClass | None
    explanation: str
    # How to fix it: the default hint of every reason of this code (a reason may carry a
    # more precise one). Empty only for front-end codes.
    hint: str = ""


REGISTRY: dict[str, Code] = {}


def _code(  # noqa: PLR0917 -- the table below reads as rows of positional columns
    code: str,
    title: str,
    severity: Severity,
    dimension: Dimension,
    klass: ReadinessClass | None,
    explanation: str,
    hint: str = "",
) -> Code:
    if code in REGISTRY:
        raise AssertionError(f"duplicate diagnostic code {code}")
    entry = Code(code, title, severity, dimension, klass, explanation, hint)
    REGISTRY[code] = entry
    return entry


# --- readiness: binding -------------------------------------------------------------------
R001_DECORATED: Final = _code(
    "SVC-R001",
    "decorated function",
    "error",
    "binding",
    "conditional",
    "A decorator may replace the function, so the callable served is not the one read.",
    hint=(
        "remove the decorator, or serve an undecorated function that calls the decorated "
        "one; functools.cache/lru_cache and the pure decorators the manual lists are "
        "accepted"
    ),
)
R002_REBOUND: Final = _code(
    "SVC-R002",
    "name bound more than once",
    "error",
    "binding",
    "ambiguous",
    "The module binds the name more than once at import; which object is served is unclear.",
    hint="bind the name once at module level (rename the other binding)",
)
R003_DELETED: Final = _code(
    "SVC-R003",
    "name deleted at module level",
    "error",
    "binding",
    "ambiguous",
    "A module-level `del` removes or may remove the binding before it is served.",
    hint="remove the module-level `del` of the name",
)
R004_UNANNOTATED: Final = _code(
    "SVC-R004",
    "parameter without annotation",
    "warning",
    "inputs",
    None,
    "The parameter accepts any JSON value; annotate it to get validation and a schema.",
    hint=(
        "annotate the parameter (int, str, list[float], a TypedDict, ...) to get "
        "validation and a schema"
    ),
)
R005_ANY: Final = _code(
    "SVC-R005",
    "parameter annotated Any or object",
    "warning",
    "inputs",
    None,
    "The parameter accepts any JSON value.",
    hint="annotate the parameter with a precise type to get validation and a schema",
)
R006_CONDITIONAL_DEF: Final = _code(
    "SVC-R006",
    "definition under if/try/loop/with",
    "error",
    "binding",
    "ambiguous",
    "The function exists only on some paths through module import (an optional-dependency "
    "fallback, a platform check, a loop).",
    hint="define the function unconditionally at module level; keep the fallback inside its body",
)
R007_MODULE_EFFECT: Final = _code(
    "SVC-R007",
    "module-level statement with import-time effects",
    "error",
    "execution",
    "conditional",
    "Importing the module runs code that may fail or change bindings (a call, I/O, a loop, "
    "an assignment from a call, a decorator or default evaluated at definition time). "
    "Applies to every capability of the module.",
    hint=(
        "move the statement into the function that needs it, or under `if __name__ == "
        '"__main__":`; wrap a load in a function decorated with @functools.cache; or '
        "--select the functions of another module"
    ),
)
R008_UNRESOLVED_IMPORT: Final = _code(
    "SVC-R008",
    "unresolved module-level import",
    "error",
    "execution",
    "conditional",
    "An unguarded module-level import is neither standard library, nor a module beside the "
    "source, nor provided by a declared requirement: the server would fail to start. "
    "Declare it with --requirements FILE.",
    hint="declare its distribution in a requirements file and pass --requirements FILE",
)
R009_UNRESOLVED_CALL_IMPORT: Final = _code(
    "SVC-R009",
    "unresolved import in the function body",
    "error",
    "execution",
    "conditional",
    "An unguarded import inside the function is not resolvable: calls would fail. "
    "Declare it with --requirements FILE.",
    hint="declare its distribution in a requirements file and pass --requirements FILE",
)
R010_COMPLEX_CLASS: Final = _code(
    "SVC-R010",
    "module-level class with import-time behaviour",
    "error",
    "execution",
    "conditional",
    "A class whose bases, decorators, keywords or body run code at import (anything beyond "
    "builtin/typing/enum bases, annotations, literal assignments, docstrings and undecorated "
    "defs). Applies to every capability of the module.",
    hint=(
        "keep the class body to annotations, literal assignments and undecorated methods, "
        "with plain bases (see docs/effects.md), or move the class to another module"
    ),
)
R011_UNSUPPORTED_TYPE: Final = _code(
    "SVC-R011",
    "annotation not expressible as JSON",
    "error",
    "inputs",
    "unsupported",
    "The parameter's type has no exact JSON shape (a callable, an arbitrary class, bytes, "
    "a set, non-string dict keys...), or it nests more than 100 TypedDicts and models one in "
    "another, deeper than the JSON nesting the servers take.",
    hint=(
        "use a JSON type: a TypedDict or a dataclass for an object, list[...] and "
        "dict[str, ...] for collections"
    ),
)
R012_UNRESOLVED_TYPE: Final = _code(
    "SVC-R012",
    "annotation not resolvable statically",
    "error",
    "inputs",
    "ambiguous",
    "The annotation names something svcc cannot resolve without running code.",
    hint="define or import the type the annotation names",
)
R013_STAR_IMPORT_TYPE: Final = _code(
    "SVC-R013",
    "annotation may come from a star import",
    "error",
    "inputs",
    "ambiguous",
    "The annotation names something not defined in the module, and a star import could provide it.",
    hint="import the type by name instead of with `from ... import *`",
)
R014_VAR_POSITIONAL: Final = _code(
    "SVC-R014",
    "*args parameter",
    "error",
    "inputs",
    "unsupported",
    "Variadic positional parameters have no named JSON field.",
    hint="replace *args with a named list parameter",
)
R015_VAR_KEYWORD: Final = _code(
    "SVC-R015",
    "**kwargs parameter",
    "error",
    "inputs",
    "unsupported",
    "Variadic keyword parameters make the request object open-ended.",
    hint="replace **kwargs with named parameters or a dict[str, ...] parameter",
)
R016_GENERATOR: Final = _code(
    "SVC-R016",
    "generator that cannot stream",
    "error",
    "outputs",
    "unsupported",
    "A generator is served as a stream of its items when it only yields and its return "
    "annotation names them; this one uses a yield's value (send()) or its annotation names "
    "no items.",
    hint="annotate the return Iterator[T] (or Generator[T, None, None]) and only yield",
)
R017_ASYNC_GENERATOR: Final = _code(
    "SVC-R017",
    "async generator that cannot stream",
    "error",
    "outputs",
    "unsupported",
    "An async generator is served as a stream of its items when it only yields and its "
    "return annotation names them; this one uses a yield's value (asend()) or its annotation "
    "names no items.",
    hint="annotate the return AsyncIterator[T] (or AsyncGenerator[T, None]) and only yield",
)
R018_RETURN_TYPE: Final = _code(
    "SVC-R018",
    "return annotation not expressible as JSON",
    "warning",
    "outputs",
    None,
    "Return types are documentation only; this one is documented as any JSON value.",
    hint="annotate the return with a JSON type (a TypedDict or a dataclass for an object)",
)
R019_GLOBAL_REBIND: Final = _code(
    "SVC-R019",
    "rebound through a global statement",
    "error",
    "binding",
    "ambiguous",
    "A function declares the capability's name `global` and may rebind it after import.",
    hint="remove the `global` rebinding of the function's name",
)
# --- front end ----------------------------------------------------------------------------
F001_SYNTAX: Final = _code(
    "SVC-F001",
    "syntax error",
    "error",
    "source",
    None,
    "The source does not parse with the requested Python grammar.",
)
F002_DECODE: Final = _code(
    "SVC-F002",
    "undecodable source",
    "error",
    "source",
    None,
    "The bytes are not text in the declared or detected encoding.",
)
F003_NOTEBOOK: Final = _code(
    "SVC-F003",
    "invalid notebook",
    "error",
    "source",
    None,
    "The file is not a valid Jupyter notebook (JSON or nbformat schema).",
)
F004_LINE_MAGIC: Final = _code(
    "SVC-F004",
    "line magic removed",
    "warning",
    "source",
    None,
    "An IPython line magic (`%...`) or help query (`?`) is not Python; the line was removed.",
)
F005_CELL_MAGIC: Final = _code(
    "SVC-F005",
    "cell magic cell dropped",
    "warning",
    "source",
    None,
    "A cell starting with a cell magic (`%%...`) is not Python; the whole cell was dropped.",
)
F006_SHELL_ESCAPE: Final = _code(
    "SVC-F006",
    "shell escape removed",
    "warning",
    "source",
    None,
    "An IPython shell escape (`!...`) is not Python; the line was removed. Declare what it "
    "installed with --requirements.",
)
F007_NOT_ANALYSABLE: Final = _code(
    "SVC-F007",
    "file not analysable",
    "error",
    "source",
    None,
    "In a directory analysis, a file that cannot be read, is over the size limit, or whose "
    "path gives no valid module name.",
)

# --- readiness, added later (numbers continue; codes are never renumbered) ---------------
R020_UNTYPED_CALLABLE: Final = _code(
    "SVC-R020",
    "untyped parameter used as a callable or class",
    "error",
    "inputs",
    "unsupported",
    "A parameter without a JSON type (unannotated or `Any`) is called, instantiated, used as "
    "the class argument of `isinstance`/`issubclass`, or used as a decorator: no JSON value "
    "can be a callable or a class, so every call would fail.",
    hint="annotate the parameter with a JSON type; a callable cannot come from a request",
)
R021_LOCAL_IMPORT: Final = _code(
    "SVC-R021",
    "local import the bundle cannot hold",
    "error",
    "execution",
    "conditional",
    "An import reaches a module of the repository (a directory's, or one beside a file) "
    "that the bundle cannot hold: a relative import that resolves to no module (in a "
    "top-level module, above the top-level package, to a missing module), a local "
    "module named like one of the bundle's own, or a sibling module imported by its bare "
    "name from inside a package (`import config` in `pkg/tools.py`: that works for a script "
    "run from `pkg/`, but the bundle imports `pkg.tools`, where no top-level `config` exists). "
    "A local module that does not parse or "
    "whose own imports are not available is SVC-R024 of its importers. Pass --module-name "
    "PKG.MODULE for a file inside a package.",
    hint="pass --module-name PKG.MODULE, or make the local module importable beside the source",
)
R022_GOVERNED_RETURN: Final = _code(
    "SVC-R022",
    "governed result can never be JSON",
    "error",
    "outputs",
    "unsupported",
    "In governed mode the worker returns exactly JSON; the declared return type (a tuple, a "
    "set, bytes, a class instance) can never be, so every call would fail.",
    hint="return a list or a dict (exactly JSON) in governed mode",
)
R023_UNDEFINED_AT_IMPORT: Final = _code(
    "SVC-R023",
    "name undefined at import",
    "error",
    "execution",
    "unsupported",
    "A module-level statement evaluated at import (an assignment, a class body or base, a "
    "TypedDict field, a default, a decorator, an annotation without PEP 563) reads a name "
    "that is not bound at that point: importing the module raises NameError. Applies to "
    "every capability of the module.",
    hint="bind the name before the statement that reads it",
)

R024_IMPORTED_MODULE_RISK: Final = _code(
    "SVC-R024",
    "imported repository module runs code at import",
    "error",
    "execution",
    "conditional",
    "A repository module this capability imports (directly, transitively, or as a parent "
    "package; for a single file, a module beside it) runs code at import, cannot be "
    "analysed, or has an unresolved import; the message names that module's file and line.",
    hint=(
        "fix the named module's import-time statement (see its own reasons), or --select "
        "functions whose modules do not import it"
    ),
)


# --- repositories -----------------------------------------------------------------------------
F008_REPOSITORY_ENTRY: Final = _code(
    "SVC-F008",
    "repository entry refused",
    "error",
    "source",
    None,
    "A symlink, special file (FIFO, socket, device) or path escaping the tree inside a "
    "repository's source roots (a repository bundle holds regular files only), or a "
    "pyproject.toml svcc cannot use: not TOML, a table that is not one, a key [tool.svcc] does "
    "not have, an empty source-roots, a dependency that is not a requirement, a data-files "
    "glob that matches no file or names a module, a folder, a symlink or a path outside the "
    "source roots.",
)
F009_DUPLICATE_MODULE: Final = _code(
    "SVC-F009",
    "two files claim one module name",
    "error",
    "source",
    None,
    "Two files of a repository give the same dotted module name (`pkg/mod.py` and "
    "`pkg/mod/__init__.py`, or the same path in two source roots).",
)
F010_REPOSITORY_LIMIT: Final = _code(
    "SVC-F010",
    "repository over a limit",
    "error",
    "source",
    None,
    "The declared files of a repository (modules and data files) exceed a limit: 4,096 "
    "files, 64 MiB in all, 4 MiB per module, or 1 MiB of pyproject.toml.",
)
F011_NOT_A_MODULE: Final = _code(
    "SVC-F011",
    "file skipped: not an importable module",
    "warning",
    "source",
    None,
    "A `.py` file whose path relative to its source root is not a dotted Python name "
    "(`my-script.py`, `2024/x.py`) cannot be imported, so it is not a module of the repository.",
)

# --- added after the repository codes --------------------------------------------------------
R025_CALL_HISTORY: Final = _code(
    "SVC-R025",
    "reads a global another function rebinds",
    "error",
    "binding",
    "ambiguous",
    "The capability reads a module-level name that another function rebinds through a "
    "`global` statement, so what a call does depends on which calls came before it (and a "
    "governed call, in a fresh process, never sees them); the message names both.",
    hint="pass the state as a parameter instead of a global another function rebinds",
)


# --- import-time effects, security effects and the unannotated-parameter promise -------------
R026_IMPORT_IO: Final = _code(
    "SVC-R026",
    "module-level I/O",
    "error",
    "execution",
    "conditional",
    "Importing the module reads or writes files, the network or processes "
    "(`open`, `Path.read_text`, `json.load`, `subprocess`, ...), unless it reads a declared data "
    "file. Applies to every capability of the module.",
    hint="declare the file it reads (--data PATH; in a repository, [tool.svcc] data-files) "
    "when its path is built from __file__; or "
    "move the read into a function decorated with @functools.cache that the capability "
    'calls, or move the statement under `if __name__ == "__main__":`',
)
R027_IMPORT_ENVIRONMENT: Final = _code(
    "SVC-R027",
    "module-level environment or command-line read",
    "error",
    "execution",
    "conditional",
    "Importing the module reads the environment (`os.environ`, `os.getenv`, dotenv) or the "
    "command line (`sys.argv`): the server's differ from a script's. Applies to every "
    "capability of the module.",
    hint="pass the value as a parameter, or read it inside the function that needs it",
)
R028_IMPORT_OUTPUT: Final = _code(
    "SVC-R028",
    "module-level output",
    "error",
    "execution",
    "conditional",
    "Importing the module prints or logs (`print`, `logging.info`, a stream handler): "
    "stdout would corrupt an MCP stdio stream. Applies to every capability of the module.",
    hint="remove the print or logging call at import, or move it under "
    '`if __name__ == "__main__":`',
)
R029_IMPORT_NONDETERMINISM: Final = _code(
    "SVC-R029",
    "module-level randomness or clock",
    "error",
    "execution",
    "conditional",
    "Importing the module reads a clock or draws random numbers: every server process "
    "(and every governed worker) gets a different value. Applies to every capability of "
    "the module.",
    hint="compute the value inside the function that needs it, or pass it as a parameter",
)
R030_IMPORT_PROCESS_STATE: Final = _code(
    "SVC-R030",
    "module-level change of process state",
    "error",
    "execution",
    "conditional",
    "Importing the module starts threads, installs signal or exit handlers, changes "
    "`sys.path`, other modules, warnings or logging configuration: it changes the server "
    "itself. Applies to every capability of the module.",
    hint='move the statement under `if __name__ == "__main__":` or into a function',
)
R031_INVALID_PATTERN: Final = _code(
    "SVC-R031",
    "invalid regular expression at import",
    "error",
    "execution",
    "unsupported",
    "A module-level `re.compile` (or `re.match`, ...) of a literal pattern that does not "
    "compile: importing the module raises `re.error`, so the server cannot start.",
    hint="fix the pattern (the message quotes the error)",
)
R032_CACHED_CAPABILITY: Final = _code(
    "SVC-R032",
    "cached capability",
    "warning",
    "execution",
    None,
    "`functools.cache`/`lru_cache` keeps the function's signature; in direct mode results "
    "are cached between calls (and a mutable result is shared between callers).",
    hint="",
)
R033_READS_ENVIRONMENT: Final = _code(
    "SVC-R033",
    "capability reads the environment",
    "error",
    "execution",
    "conditional",
    "The function reads environment variables (`os.environ`, `os.getenv`, dotenv): serving "
    "it can hand every caller the server's secrets.",
    hint="pass the value as a parameter, or opt in with --allow env (or [tool.svcc] allow "
    '= ["env"])',
)
R034_STARTS_PROCESS: Final = _code(
    "SVC-R034",
    "capability starts processes",
    "error",
    "execution",
    "conditional",
    "The function starts processes (`subprocess`, `os.system`, `os.exec*`, `os.popen`): "
    "serving it can give every caller a shell on the server.",
    hint='opt in with --allow process (or [tool.svcc] allow = ["process"]) after checking '
    "that no parameter reaches the command",
)
R035_EVALUATES_CODE: Final = _code(
    "SVC-R035",
    "capability evaluates code",
    "error",
    "execution",
    "conditional",
    "The function evaluates code (`eval`, `exec`, `compile`, `pickle.loads`, `yaml.load`, "
    "`marshal.loads`): serving it can run a caller's code on the server.",
    hint="parse data with json or ast.literal_eval instead, or opt in with --allow eval",
)
R036_PARAMETER_PATH: Final = _code(
    "SVC-R036",
    "capability opens a path built from a parameter",
    "error",
    "execution",
    "conditional",
    "The function opens, lists or removes a file whose path is built from a parameter: "
    "serving it lets every caller read or change the server's files.",
    hint="resolve the name against a fixed folder and refuse escapes, or opt in with --allow paths",
)
R037_UNTYPED_OBJECT_USE: Final = _code(
    "SVC-R037",
    "untyped parameter used as an object no JSON value is",
    "error",
    "inputs",
    "conditional",
    "A parameter without an annotation, or a value taken from it by subscripting, iteration, "
    "unpacking or an alias, is used through an attribute or method that no JSON value "
    "(`dict`, `list`, `str`, `int`, `float`, `bool`, `None`) has (`img.shape`, "
    "`df.drop(...)`, `data[i].reshape(...)`, `row.name`), indexed by a tuple holding a slice "
    "(`X[:, 0]`), or passed to a callable that needs an object (`pd.concat`): every call from "
    "JSON would fail.",
    hint="annotate the parameter with the type it is (np.ndarray, pd.DataFrame, a dataclass)",
)
R038_COMMAND_LINE: Final = _code(
    "SVC-R038",
    "capability reads the command line",
    "error",
    "execution",
    "unsupported",
    "The function reads `sys.argv` or `sys.stdin`, parses the command line (`parse_args()` "
    "with no arguments, or with a parameter that may be None) or is a `click` entry point: "
    "a server's command line and stdin are not the caller's input, so every call would fail.",
    hint="take the options as parameters and keep the command-line parsing under "
    '`if __name__ == "__main__":`',
)
R039_ALLOWED_EFFECT: Final = _code(
    "SVC-R039",
    "security effect allowed",
    "warning",
    "execution",
    None,
    "The function has a security effect (environment, processes, code evaluation, paths "
    "from parameters) that --allow or [tool.svcc] allow opted into; recorded in "
    "readiness.json and the manifest.",
    hint="",
)
R040_ATTRIBUTED_IMPORT: Final = _code(
    "SVC-R040",
    "import attributed to a declared distribution",
    "warning",
    "execution",
    None,
    "An import no declared distribution is known to provide, while a declared distribution "
    "has no known import name: it is attributed to that distribution (the server's startup "
    "import proves it). The verdict never depends on what is installed beside svcc.",
    hint=(
        "state the mapping: `name  # import: module` in the requirements file, or "
        '[tool.svcc] import-names = {"name" = ["module"]}'
    ),
)

R041_AUTOMATIC_SOURCE_ROOT: Final = _code(
    "SVC-R041",
    "source root found automatically",
    "note",
    "source",
    None,
    "A folder of the repository whose name is not a Python name (`ml-serving/`, "
    "`short-texts-clustering/src/`) holds Python files: with no `[tool.svcc] source-roots`, it "
    "is read as a source root of its own (its `src/` when that holds Python files), so its "
    "modules are named from it, as when the folder is passed alone. A file of such a root "
    "whose module name another file already gives is skipped with this note.",
    hint="set [tool.svcc] source-roots to choose the roots, or pass the folder itself",
)

R042_UNDECLARED_DATA_READ: Final = _code(
    "SVC-R042",
    "per-call read of an undeclared data file",
    "error",
    "execution",
    "conditional",
    "The function reads a file through a path built from `__file__` (`open`, "
    "`Path.read_text`, `pd.read_csv`, `np.load`, ...) each time it is called, and the file is "
    "not a declared data file, or lies above the module's source root where nothing can be "
    "declared: the served bundle would not hold it, so every call would fail.",
    hint="declare the file it reads (--data PATH; in a repository, [tool.svcc] data-files)",
)
R043_WORKING_DIRECTORY_READ: Final = _code(
    "SVC-R043",
    "per-call read relative to the working directory",
    "error",
    "execution",
    "conditional",
    'The function reads a file through a literal relative path (`open("catalog.json")`, '
    '`pd.read_csv("data/train.csv")`), which is resolved against the working directory. A '
    "direct server's working directory is the bundle's `source/` (the module's source root), "
    "which holds the declared data files: a path naming one from there is served. An "
    "undeclared file is not in the bundle; and a governed worker runs in a scratch folder, "
    "where even a declared one is not found.",
    hint="declare the file (--data PATH; in a repository, [tool.svcc] data-files), or build "
    'the path from __file__ (Path(__file__).parent / "catalog.json")',
)

# --- types and results (SVC-R050..R059) ------------------------------------------------------
R050_RETURN_NOT_ENCODABLE: Final = _code(
    "SVC-R050",
    "return type the result encoder cannot encode",
    "error",
    "outputs",
    "unsupported",
    "The declared return type is a class (or holds one) with no JSON form the result encoder "
    "knows, or nests more than 100 TypedDicts and models one in another: "
    "every call would fail. Return a JSON type, a TypedDict, a dataclass, a pydantic "
    "model, a NamedTuple, an Enum, a date, a UUID, a Decimal, bytes, or a numpy/pandas value.",
)
R051_MODEL_UNREADABLE: Final = _code(
    "SVC-R051",
    "model field not readable statically",
    "error",
    "inputs",
    "ambiguous",
    "A pydantic model or dataclass used by the capability has a field whose `Field(...)` "
    "argument (or `model_config` entry) is computed: its JSON shape cannot be read without "
    "running the code. Use literals.",
)
R052_PARAMETER_LEFT_OUT: Final = _code(
    "SVC-R052",
    "parameter left out of the interface",
    "warning",
    "inputs",
    None,
    "The parameter's type has no JSON shape but the parameter has a default: it is not part of "
    "the request, so every call uses the function's own default.",
)
R053_ARRAY_LIBRARY_UNDECLARED: Final = _code(
    "SVC-R053",
    "numpy or pandas type without the library declared",
    "error",
    "inputs",
    "conditional",
    "A parameter or return annotation is a numpy array or a pandas DataFrame/Series, and the "
    "library is not declared: the bundle could neither build nor encode it. Declare numpy "
    "(pandas) in a requirements file.",
)

R054_GOVERNED_CONVERSION: Final = _code(
    "SVC-R054",
    "governed parameter that needs a Python object",
    "error",
    "inputs",
    "conditional",
    "In governed mode the worker receives the validated values (dates, times, durations and "
    "UUIDs included), not objects built from the bundled classes: an Enum, dataclass, pydantic "
    "model, NamedTuple, Decimal, bytes or numpy/pandas parameter is served in direct mode only.",
)

R055_INPUT_UNREADABLE: Final = _code(
    "SVC-R055",
    "parameter descriptor not readable statically",
    "error",
    "inputs",
    "ambiguous",
    "A parameter's `cog.Input(...)` or `pydantic.Field(...)` (its default, or `Annotated` "
    "metadata) has a keyword whose value is computed (`ge=LIMIT`), a keyword svcc does not "
    "serve (`default_factory`, `multiple_of`), or a bound or `choices` that applies to no value "
    "of the parameter's type (`ge=0` on a `str`): the request schema and its validation would "
    "say something else than the code. Use literals, of the parameter's type.",
    hint='write the keyword\'s value as a literal (`ge=0`, `choices=["a", "b"]`), or drop it',
)

# --- notebooks as data scientists write them ----------------------------------------------------
F012_LEFT_OUT: Final = _code(
    "SVC-F012",
    "notebook code left out of the module",
    "note",
    "source",
    None,
    "A notebook cell tagged `skip-execution`, `remove-cell`, `svcc:skip` or both "
    "`remove-input` and `remove-output`, marked `#| eval: false`, or not exported in a notebook "
    "that uses nbdev `#| export` directives; or a module-level statement the slice left out "
    "because nothing the served functions read depends on it (a plot, a `print`, a training "
    "loop). The served module never runs it.",
)
F013_DERIVED_NAME: Final = _code(
    "SVC-F013",
    "module name derived from the file name",
    "note",
    "source",
    None,
    "The file's stem is not a Python identifier (`Gradient Descent.ipynb`), so the module is "
    "named from it (`gradient_descent`); `--module-name NAME` names it explicitly.",
)
F014_EXECUTION_ORDER: Final = _code(
    "SVC-F014",
    "notebook cells executed out of order",
    "warning",
    "source",
    None,
    "The saved execution counts do not increase from top to bottom: the notebook was run in "
    "another order than the one the served module runs its cells in (top to bottom), so its "
    "results may depend on that order; the message names the cells.",
)

R060_REMOVED_NAME: Final = _code(
    "SVC-R060",
    "capability uses a name its library removed",
    "error",
    "execution",
    "conditional",
    "The function reads a name a well-known library removed (`np.float`, `np.NaN`, "
    "`pd.datetools`, `pd.Panel`, ...): with the library as it is now, every call would fail "
    "with an AttributeError. Judged by name, never by a version pin, so the verdict is the "
    "same everywhere; the table is `REMOVED_NAMES` in `frontends/removed_names.py`.",
    hint="use the replacement the message names (`float` for `np.float`, `np.nan` for "
    "`np.NaN`, `datetime.timedelta` for `pd.datetools.timedelta`)",
)

R061_UNBOUND_NAME: Final = _code(
    "SVC-R061",
    "capability reads a name the served module never binds",
    "error",
    "execution",
    "conditional",
    "The function (or a function of the module it calls) reads a module-level name that no "
    "statement of the served module binds: a value from a notebook cell left out (tagged "
    "`skip-execution`, not exported), `display` or `get_ipython` (IPython's, not Python's), a "
    "name from a removed `%run` or bound by `exec`, a name bound only under "
    '`if __name__ == "__main__":`, or a plain typo; or a line of its body was IPython syntax '
    "(`lines = !ls`) that the notebook conversion removed. Every call would fail with a "
    "NameError, or do something else than in the notebook.",
    hint="bind the name at module level in code the served module keeps, or take it as a "
    "parameter; replace IPython syntax with Python (`subprocess.run`)",
)


# --- tools agents can trust ----------------------------------------------------------------
R070_DOCUMENTED_PARAMETER_MISSING: Final = _code(
    "SVC-R070",
    "docstring documents a parameter the signature lacks",
    "warning",
    "inputs",
    None,
    "The docstring's parameter section (Google `Args:`, NumPy `Parameters`, reST `:param:`) "
    "names a parameter the function does not have: a renamed or removed parameter whose "
    "documentation stayed behind. The other parameters' descriptions still reach the tool "
    "schemas; this one is left out.",
    hint="rename the entry to the parameter it documents, or remove it",
)

# --- directories, locks and the wire -----------------------------------------------------------
F015_MODULE_NAME_TAKEN: Final = _code(
    "SVC-F015",
    "module name taken inside the server",
    "error",
    "source",
    None,
    "A bundled module (the compiled one, or a local module it imports) has the top-level name "
    "of a module the generated server itself imports: its glue (`app`, `server`), its runtime "
    "(`svc_runtime`), a package the server runs on (`fastapi`, `uvicorn`, `click`, `mcp_types`, "
    "...) or the standard library (`queue`, `calendar`, `email`, ...). The server imports its "
    "own module first, so the bundled one could never be imported: it would compile and then "
    "never start, or fail on every call. Refused when compiling for the target, not by "
    "`inspect`.",
    hint="choose another module name with `--module-name`, or rename the local module",
)


# --- what a directory is ---------------------------------------------------------------------
F037_TEST_CODE_LEFT_OUT: Final = _code(
    "SVC-F037",
    "test code and tool scripts left out",
    "note",
    "source",
    None,
    "`inspect DIR` and `compile DIR` read the service's modules: test code (`tests/`, `test/`, "
    "`test_*.py`, `*_test.py`, `conftest.py`) and packaging or tool scripts (`setup.py`, "
    "`noxfile.py`, `fabfile.py`, `ez_setup.py`, `versioneer.py`, `docs/conf.py`) are left out, "
    "as `build/` and `venv/` are, "
    "and listed once in this note.",
    hint="--include-tests, or [tool.svcc] include-tests = true, reads them as modules",
)


# --- where a directory's dependencies are declared (issue 37) ------------------------------
F039_DEPENDENCIES_READ: Final = _code(
    "SVC-F039",
    "declared dependencies read from Poetry's table, setup.py or setup.cfg",
    "note",
    "source",
    None,
    "A directory with no `[project] dependencies` (nor `[tool.svcc] dependencies`) in its "
    "`pyproject.toml` may declare them in `[tool.poetry.dependencies]` (translated to pip "
    "lines), or, for setuptools, in `setup.py`'s `setup(install_requires=...)` or "
    "`setup.cfg`'s `[options] install_requires`. svcc reads them without running anything: "
    "a literal list of strings (or a module-level name bound once to one) in `setup.py`, the "
    "lines of `setup.cfg`; this note names what was read, and what could not be (a list built "
    "by code, a Poetry `git`/`path` entry).",
    hint="declare the dependencies in pyproject.toml ([project] dependencies) or pass "
    "--requirements FILE",
)


# --- Cog projects (issue 39) ---------------------------------------------------------------------
F038_COG_KEYS: Final = _code(
    "SVC-F038",
    "cog.yaml keys honoured and not honoured",
    "note",
    "source",
    None,
    "The directory is a Cog project: its `cog.yaml` names the predictor (`predict:`) and the "
    "Python packages (`build.python_packages`, `build.python_requirements`), which svcc serves "
    "and declares. Other keys describe Cog's own container (`build.gpu`, `build.cuda`, "
    "`build.system_packages`, `build.run`, `image`, `concurrency`, `train`, ...): the bundle "
    "does not do them, and this note names each one present.",
)


# --- services with state (issue 39) ------------------------------------------------------------
R085_SERVICE_NOT_CONSTRUCTIBLE: Final = _code(
    "SVC-R085",
    "service class cannot be built with no arguments",
    "error",
    "execution",
    "conditional",
    "A method of a service class is served from one instance the server builds at startup, "
    "with no arguments; the class's `__init__` has a parameter without a default, so the "
    "server could never build it.",
    hint="give every constructor parameter a default (read the value in `setup()` from a "
    "declared data file), or serve a module-level function instead",
)
R086_SERVICE_STATE: Final = _code(
    "SVC-R086",
    "service method rebinds instance state",
    "warning",
    "binding",
    None,
    "The method assigns an attribute of the instance (`self.count += 1`): in direct mode one "
    "instance serves every call, so what a call does depends on the calls before it (and "
    "concurrent calls share it), as with a mutable global. Governed calls each get a fresh "
    "copy, so they never see it.",
    hint="keep per-call values in local variables; bind instance attributes only in "
    "`__init__` or `setup()`",
)
R087_SERVICE_METHOD_FORM: Final = _code(
    "SVC-R087",
    "service construction the facts do not describe",
    "error",
    "execution",
    "conditional",
    "Building the service (its `__init__` and `setup()`/`load()`, run once at startup) holds "
    "a statement svcc does not read (a loop with `while`, an `async with`, a nested function, "
    "a write to a name that is not the method's own), so what it does at startup is unknown.",
    hint="keep `__init__` and `setup()` to assignments of calls (`self.model = "
    "joblib.load(HERE / 'model.joblib')`); move other work into a module-level function "
    "they call",
)
R088_PICKLED_MODEL: Final = _code(
    "SVC-R088",
    "pickled model read from a declared file",
    "warning",
    "execution",
    None,
    "`joblib.load`, `pickle.load` or `torch.load` of a declared data file: unpickling imports "
    "the library the model was saved with (`sklearn` for a scikit-learn model), which the "
    "source never names, so a bundle without it starts and then fails while loading the "
    "model. The message names the libraries the module imports that no requirement declares.",
    hint="declare the library the model was saved with (and its version) in the requirements",
)


# Codes whose fix is shown before and after in the manual (docs/how-to/make-eligible.md), by
# the section's anchor there; tests/contracts/test_fix_examples.py runs `svcc inspect` over
# each pair.
FIX_EXAMPLES: Final[dict[str, str]] = {
    **dict.fromkeys(
        ("SVC-R007", "SVC-R010", "SVC-R026", "SVC-R027", "SVC-R029", "SVC-R030"),
        "effect-at-import",
    ),
    **dict.fromkeys(("SVC-R042", "SVC-R043"), "file-read-per-call"),
    **dict.fromkeys(("SVC-R028", "SVC-R038"), "print-or-entry-point"),
    "SVC-R001": "decorator",
    "SVC-R037": "parameter-used-as-object",
    "SVC-R011": "object-without-json-shape",
    **dict.fromkeys(("SVC-R033", "SVC-R034", "SVC-R035", "SVC-R036"), "security-effect"),
    **dict.fromkeys(("SVC-R008", "SVC-R009"), "undeclared-dependency"),
    **dict.fromkeys(("SVC-R002", "SVC-R003", "SVC-R006", "SVC-R019", "SVC-R025"), "binding"),
    **dict.fromkeys(
        (
            "SVC-R004",
            "SVC-R005",
            "SVC-R014",
            "SVC-R015",
            "SVC-R020",
            "SVC-R052",
            "SVC-R055",
            "SVC-R070",
        ),
        "parameters",
    ),
    **dict.fromkeys(("SVC-R012", "SVC-R013", "SVC-R023", "SVC-R051"), "annotations"),
    **dict.fromkeys(("SVC-R016", "SVC-R017", "SVC-R018", "SVC-R050"), "results"),
    **dict.fromkeys(("SVC-R085", "SVC-R086", "SVC-R087"), "service-class"),
    **dict.fromkeys(("SVC-R021", "SVC-R024"), "local-modules"),
    **dict.fromkeys(("SVC-R022", "SVC-R054"), "governed"),
    **dict.fromkeys(("SVC-R031", "SVC-R032", "SVC-R053", "SVC-R060", "SVC-R061"), "fails-when-run"),
}


def markdown_section(entry: Code, *, anchor: bool = True) -> str:
    """One code's section of ``docs/diagnostics.md`` (anchor ``#svc-r007``), which
    ``svcc explain`` prints too (without the anchor, for a terminal)."""
    klass = f", makes the function {entry.klass}" if entry.klass else ""
    lines = [
        f"## {entry.code}: {entry.title}" + (f" {{ #{entry.code.lower()} }}" if anchor else ""),
        "",
        f"*{entry.severity}, {entry.dimension}{klass}*",
        "",
        entry.explanation,
        "",
    ]
    if entry.hint:
        lines += [f"**How to fix:** {entry.hint}", ""]
    if entry.code in FIX_EXAMPLES:
        page = f"how-to/make-eligible.md#{FIX_EXAMPLES[entry.code]}"
        lines += [f"Before and after: [Make a function eligible]({page}).", ""]
    return "\n".join(lines)


def markdown_page() -> str:
    """The whole of ``docs/diagnostics.md``: an index table, then one section per code."""
    lines = [
        "# Diagnostic codes",
        "",
        "Generated from `contracts/diagnostics/codes.py` by "
        "`python -m svcc.contracts.diagnostics > docs/diagnostics.md`; "
        "a test keeps them in sync. Codes are never renumbered. "
        "`svcc explain CODE` prints a code's section.",
        "",
        "An `error` reason blocks generation and sets the capability's class; a `warning` "
        "informs; a `note` records what svcc did (a notebook cell left out). `SVC-R` codes "
        "are readiness reasons attached to a capability; `SVC-F` codes "
        "are front-end diagnostics attached to the module. The usual fixes, before and "
        "after: [Make a function eligible](how-to/make-eligible.md).",
        "",
        "| code | title | severity | class |",
        "|---|---|---|---|",
    ]
    for entry in REGISTRY.values():
        lines.append(
            f"| [{entry.code}](#{entry.code.lower()}) | {entry.title} | {entry.severity} | "
            f"{entry.klass or '—'} |"
        )
    lines.append("")
    body = "\n".join(markdown_section(entry) for entry in REGISTRY.values())
    return "\n".join(lines) + "\n" + body
