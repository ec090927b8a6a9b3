"""Every diagnostic code svcc emits, in one table. Codes are never renumbered or reused.

Each code is a module-level ``Final`` constant that registers itself (mypy's
``errorcodes`` style). ``docs/diagnostics.md`` is generated from this table
(``python -m svcc.compiler.diagnostics``); ``tests/test_codes.py`` fails when the
two disagree, when a number is skipped, or when a code has no fixture triggering it.

Families: ``SVC-R`` readiness reasons (attached to a capability), ``SVC-F`` front-end
notes and errors (attached to the module).
"""

from typing import Final, Literal

from attrs import frozen
from svcc.ir.record import Record

Severity = Literal["error", "warning", "note"]
Dimension = Literal["binding", "inputs", "outputs", "execution", "source"]
ReadinessClass = Literal["eligible", "conditional", "unsupported", "ambiguous"]

CLASS_ORDER: Final[dict[ReadinessClass, int]] = {
    "eligible": 0,
    "conditional": 1,
    "ambiguous": 2,
    "unsupported": 3,
}


@frozen(repr=False)
class Code(Record):
    code: str
    title: str
    severity: Severity
    dimension: Dimension
    # The readiness class an error of this code forces; None for warnings and front-end codes.
    klass: ReadinessClass | None
    explanation: str


REGISTRY: dict[str, Code] = {}


def _code(  # noqa: PLR0917 -- the table below reads as rows of positional columns
    code: str,
    title: str,
    severity: Severity,
    dimension: Dimension,
    klass: ReadinessClass | None,
    explanation: str,
) -> Code:
    if code in REGISTRY:
        raise AssertionError(f"duplicate diagnostic code {code}")
    entry = Code(code, title, severity, dimension, klass, explanation)
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
)
R002_REBOUND: Final = _code(
    "SVC-R002",
    "name bound more than once",
    "error",
    "binding",
    "ambiguous",
    "The module binds the name more than once at import; which object is served is unclear.",
)
R003_DELETED: Final = _code(
    "SVC-R003",
    "name deleted at module level",
    "error",
    "binding",
    "ambiguous",
    "A module-level `del` removes or may remove the binding before it is served.",
)
R004_UNANNOTATED: Final = _code(
    "SVC-R004",
    "parameter without annotation",
    "warning",
    "inputs",
    None,
    "The parameter accepts any JSON value; annotate it to get validation and a schema.",
)
R005_ANY: Final = _code(
    "SVC-R005",
    "parameter annotated Any or object",
    "warning",
    "inputs",
    None,
    "The parameter accepts any JSON value.",
)
R006_CONDITIONAL_DEF: Final = _code(
    "SVC-R006",
    "definition under if/try/loop/with",
    "error",
    "binding",
    "ambiguous",
    "The function exists only on some paths through module import (an optional-dependency "
    "fallback, a platform check, a loop).",
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
)
R009_UNRESOLVED_CALL_IMPORT: Final = _code(
    "SVC-R009",
    "unresolved import in the function body",
    "error",
    "execution",
    "conditional",
    "An unguarded import inside the function is not resolvable: calls would fail. "
    "Declare it with --requirements FILE.",
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
)
R011_UNSUPPORTED_TYPE: Final = _code(
    "SVC-R011",
    "annotation not expressible as JSON",
    "error",
    "inputs",
    "unsupported",
    "The parameter's type has no exact JSON shape (a callable, an arbitrary class, bytes, "
    "a set, non-string dict keys...).",
)
R012_UNRESOLVED_TYPE: Final = _code(
    "SVC-R012",
    "annotation not resolvable statically",
    "error",
    "inputs",
    "ambiguous",
    "The annotation names something svcc cannot resolve without running code.",
)
R013_STAR_IMPORT_TYPE: Final = _code(
    "SVC-R013",
    "annotation may come from a star import",
    "error",
    "inputs",
    "ambiguous",
    "The annotation names something not defined in the module, and a star import could provide it.",
)
R014_VAR_POSITIONAL: Final = _code(
    "SVC-R014",
    "*args parameter",
    "error",
    "inputs",
    "unsupported",
    "Variadic positional parameters have no named JSON field.",
)
R015_VAR_KEYWORD: Final = _code(
    "SVC-R015",
    "**kwargs parameter",
    "error",
    "inputs",
    "unsupported",
    "Variadic keyword parameters make the request object open-ended.",
)
R016_GENERATOR: Final = _code(
    "SVC-R016",
    "generator function",
    "error",
    "outputs",
    "unsupported",
    "A generator's result is an iterator, not a JSON value.",
)
R017_ASYNC_GENERATOR: Final = _code(
    "SVC-R017",
    "async generator function",
    "error",
    "outputs",
    "unsupported",
    "An async generator's result is an async iterator, not a JSON value.",
)
R018_RETURN_TYPE: Final = _code(
    "SVC-R018",
    "return annotation not expressible as JSON",
    "warning",
    "outputs",
    None,
    "Return types are documentation only; this one is documented as any JSON value.",
)
R019_GLOBAL_REBIND: Final = _code(
    "SVC-R019",
    "rebound through a global statement",
    "error",
    "binding",
    "ambiguous",
    "A function declares the capability's name `global` and may rebind it after import.",
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
)
R021_LOCAL_IMPORT: Final = _code(
    "SVC-R021",
    "local import the bundle cannot hold",
    "error",
    "execution",
    "conditional",
    "An import reaches a module beside the source that cannot be copied into the bundle "
    "faithfully (a relative import above the top package or outside the file's directory, "
    "a local module that does not parse, or one whose own imports are not available). "
    "Pass --module-name PKG.MODULE for a module inside a package.",
)
R022_GOVERNED_RETURN: Final = _code(
    "SVC-R022",
    "governed result can never be JSON",
    "error",
    "outputs",
    "unsupported",
    "In governed mode the worker returns exactly JSON; the declared return type (a tuple, a "
    "set, bytes, a class instance) can never be, so every call would fail.",
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
)

R024_IMPORTED_MODULE_RISK: Final = _code(
    "SVC-R024",
    "imported repository module runs code at import",
    "error",
    "execution",
    "conditional",
    "A repository module this capability imports (directly, transitively, or as a parent "
    "package) runs code at import, cannot be analysed, or has an unresolved import; the "
    "message names that module's file and line.",
)


# --- repositories -----------------------------------------------------------------------------
F008_REPOSITORY_ENTRY: Final = _code(
    "SVC-F008",
    "repository entry refused",
    "error",
    "source",
    None,
    "A symlink, special file (FIFO, socket, device) or path escaping the tree inside a "
    "repository's source roots; a repository bundle holds regular files only.",
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
    "The declared files of a repository exceed a limit: 4,096 files, 64 MiB in all, or the "
    "per-file bound.",
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
)


# --- types and results (issue 23: SVC-R050..R059) ----------------------------------------------
R050_RETURN_NOT_ENCODABLE: Final = _code(
    "SVC-R050",
    "return type the result encoder cannot encode",
    "error",
    "outputs",
    "unsupported",
    "The declared return type is a class (or holds one) with no JSON form the result encoder "
    "knows: every call would fail. Return a JSON type, a TypedDict, a dataclass, a pydantic "
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


def markdown_table() -> str:
    """The body of ``docs/diagnostics.md``."""
    lines = [
        "# Diagnostic codes",
        "",
        "Generated from `compiler/diagnostics/codes.py` by "
        "`python -m svcc.compiler.diagnostics > docs/diagnostics.md`; "
        "a test keeps them in sync. Codes are never renumbered.",
        "",
        "An `error` reason blocks generation and sets the capability's class; a `warning` "
        "informs; a `note` records what svcc did (a notebook cell left out). `SVC-R` codes "
        "are readiness reasons attached to a capability; `SVC-F` codes "
        "are front-end diagnostics attached to the module.",
        "",
        "| code | title | severity | dimension | class | explanation |",
        "|---|---|---|---|---|---|",
    ]
    for entry in REGISTRY.values():
        klass = entry.klass or "—"
        lines.append(
            f"| {entry.code} | {entry.title} | {entry.severity} | {entry.dimension} | "
            f"{klass} | {entry.explanation} |"
        )
    return "\n".join(lines) + "\n"
