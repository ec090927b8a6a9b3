"""The Python front end: source text → ``ModuleIR``, by ``ast`` only.

Never imports or executes the source. Every failure is returned as a diagnostic
(``SVC-F###``), never raised, so callers (CLI, service, directory workers) decide what
an error means for them.
"""

import ast
import keyword
import re
import unicodedata
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import F001_SYNTAX, F002_DECODE
from svcc.frontends.python import _sibling_context
from svcc.frontends.python._chunks import (
    PARSE_ERRORS,
    SLICE_LINES,
    SlicedModule,
    SliceParseError,
)
from svcc.frontends.python._collection import collection_paused
from svcc.frontends.python._effects import JSON_VALUE_ATTRIBUTES
from svcc.frontends.python._lower import ModuleLowerer
from svcc.frontends.python._source import (
    SourceDecodeError,
    SourceText,
    decode_source,
    short,
)
from svcc.frontends.python._walk import walk
from svcc.ir.canonical import digest_bytes
from svcc.ir.model import ModuleIR, SourceFormat, SourceInfo, Span
from svcc.ir.python_version import parse_python_version, running_version

if TYPE_CHECKING:
    from attrs import field, frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import field, frozen


@frozen(kw_only=True)
class FrontendResult:
    """``ir`` is ``None`` exactly when an error diagnostic stopped the front end.

    ``ir_json``: ``ir``'s canonical JSON (``ir_to_json``) when a worker process lowering
    a repository encoded it, else ``None``; the readiness pass of the parent reuses it
    (encoding the IR was half of the parent's readiness time on the standard library).
    Not part of equality: it is ``ir`` in other words."""

    ir: ModuleIR | None
    diagnostics: tuple[Diagnostic, ...]
    module_text: str | None
    ir_json: bytes | None = field(default=None, eq=False)


def module_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name the generated module, or ``None`` when it can."""
    parts = name.split(".")
    for part in parts:
        if not part.isidentifier() or keyword.iskeyword(part):
            return (
                f"invalid module name {name!r}: {part!r} is not a Python identifier; "
                "name the module with --module-name NAME"
            )
    if parts[0] == "__main__":
        return (
            f"module name {name!r} cannot be served: `__main__` is the server's own entry "
            "module; name the module with --module-name NAME"
        )
    return None


# A module's text, the grammar it was parsed with and its tree, parsed before it is lowered
# (the import-time evaluator of another module read it first): used only for that text and
# grammar, the tree is the one ``parse`` makes (a file name changes only error messages,
# and a text that does not parse has no tree).
Parsed = tuple[str, tuple[int, int], ast.Module]


def parse(text: str, version: tuple[int, int], filename: str) -> ast.Module:
    """``ast.parse`` with the requested grammar and no warnings leaking to stderr."""
    feature = min(version, running_version())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text, filename=filename, feature_version=feature)
        except SystemError as exc:
            # CPython's parser out of memory can fail without setting the MemoryError
            # ("error return without exception set"): it is one, and is judged as one
            raise MemoryError(str(exc)) from None


def syntax_diagnostic(
    exc: BaseException, version: tuple[int, int], src: SourceText | None
) -> Diagnostic:
    if isinstance(exc, SyntaxError):
        line = exc.lineno or 1
        col = max((exc.offset or 1) - 1, 0)
        message = exc.msg or "invalid syntax"
        if src is not None and message.startswith("Pattern matching is only supported"):
            line, col = _first_match(src, (line, col))
    elif isinstance(exc, RecursionError | MemoryError):
        line, col, message = 1, 0, "source nested too deeply to parse"
    else:
        line, col, message = 1, 0, str(exc) or type(exc).__name__
    if version > running_version():
        message += (
            f" (svcc runs on Python {running_version()[0]}.{running_version()[1]} and "
            f"parses {version[0]}.{version[1]} code with that grammar)"
        )
    if src is not None:
        line = min(max(line, 1), max(len(src.lines), 1))
        span = src.make_span(line, col, line, col)
    else:
        span = Span(line=line, column=col, end_line=line, end_column=col)
    return diag(F001_SYNTAX, message, span)


def _first_match(src: SourceText, fallback: tuple[int, int]) -> tuple[int, int]:
    """The grammar error for ``match`` under an older grammar points past the statement;
    the newest grammar finds the ``match`` keyword itself."""
    try:
        tree = parse("\n".join(src.lines), running_version(), "<match>")
    except PARSE_ERRORS:
        return fallback
    for node in ast.walk(tree):
        if isinstance(node, ast.Match):
            return node.lineno, node.col_offset
    return fallback


_LAMBDA_PARAMS = re.compile(r"\blambda\b([^:]*):")
_WORD = re.compile(r"\w")


def _lambda_matches(text: str) -> Iterator[re.Match[str]]:
    """``_LAMBDA_PARAMS.finditer(text)``, found from ``str.find``: a pattern that starts
    with ``\\b`` is tried at every position of the text (thirty times slower)."""
    position = text.find("lambda")
    while position >= 0:
        match = None
        if position == 0 or not _WORD.match(text, position - 1):
            match = _LAMBDA_PARAMS.match(text, position)
        position = text.find("lambda", match.end() if match else position + 1)
        if match is not None:
            yield match


# A default holding one of these may hold a colon (``d[1:2]``, ``{1: 2}``, ``"a:b"``, a
# nested lambda), where the text's parameter list would end too early.
_DEFAULT_OPENERS = ("(", "[", "{", "'", '"', "lambda")


def _lambda_may_repeat(text: str) -> bool:
    """A cheap over-approximation: some ``lambda a, b:`` in the text names a parameter
    twice (after NFKC, as the parser normalises identifiers), or has a parameter list the
    text cannot delimit (a default with a bracket, a string or a lambda in it)."""
    for match in _lambda_matches(text):
        if any(opener in match.group(1) for opener in _DEFAULT_OPENERS):
            return True
        names = [
            name if name.isascii() else unicodedata.normalize("NFKC", name)  # ASCII: as is
            for name in (
                part.split("=", 1)[0].strip().lstrip("*").strip()
                for part in match.group(1).split(",")
            )
        ]
        names = [n for n in names if n and n != "/"]
        if len(names) != len(set(names)):
            return True
    return False


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _repeated_parameter(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
) -> SyntaxError | None:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if args.vararg is not None:
        every.append(args.vararg)
    if args.kwarg is not None:
        every.append(args.kwarg)
    if len(every) < 2 or len({a.arg for a in every}) == len(every):  # the commonest case
        return None
    seen: set[str] = set()
    for arg in every:
        if arg.arg in seen:
            error = SyntaxError(f"duplicate argument {arg.arg!r} in function definition")
            error.lineno, error.offset = arg.lineno, arg.col_offset + 1
            return error
        seen.add(arg.arg)
    return None


_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")
# The node types that are functions (exact types: the parser makes no subclasses) and, for
# each node type that is a function or holds statement lists, which of those fields it has.
_FUNCTION_TYPES = frozenset(_FUNCTIONS)
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {
    kind: tuple(f for f in _STATEMENT_LISTS if f in kind._fields)
    for kind in vars(ast).values()
    if isinstance(kind, type)
    and issubclass(kind, ast.AST)
    and (kind in _FUNCTION_TYPES or any(f in kind._fields for f in _STATEMENT_LISTS))
}


def duplicate_parameter(
    tree: ast.Module, text: str, lambdas_may_repeat: bool | None = None
) -> SyntaxError | None:
    """The first function or lambda naming a parameter twice. ``ast.parse`` accepts it (the
    compiler refuses it later), so the module could never be imported. Identifiers are
    already NFKC-normalised by the parser, so look-alikes (fullwidth x and ``x``) collide.

    Functions are statements, so only statement lists are walked; lambdas hide in any
    expression, so the whole tree is walked only when a lambda's parameter list, read from
    the text, repeats a name. A caller checking a sliced module one statement at a time
    passes ``lambdas_may_repeat``, read from the whole text once (reading it again for each
    statement made the sliced parse quadratic)."""
    if lambdas_may_repeat is None:
        lambdas_may_repeat = "lambda" in text and _lambda_may_repeat(text)
    if lambdas_may_repeat:
        for node in walk(tree):
            if isinstance(node, _FUNCTIONS) and (error := _repeated_parameter(node)):
                return error
        return None
    pending: list[ast.AST] = [tree]
    pop, extend = pending.pop, pending.extend
    while pending:
        node = pop()
        if type(node) in _FUNCTION_TYPES and (error := _repeated_parameter(node)):  # type: ignore[arg-type]
            return error
        for field in _BLOCK_FIELDS[type(node)]:
            children = getattr(node, field, None)
            if isinstance(children, list):
                # only what can hold a function is pushed (simple statements are most):
                # the order of what is visited is unchanged
                extend([child for child in children if type(child) in _BLOCK_FIELDS])
    return None


class _DuplicateParameter(Exception):
    """A duplicate parameter met while the lowerer reads a sliced module."""

    def __init__(self, error: SyntaxError) -> None:
        super().__init__(str(error))
        self.error = error


def _sliced(text: str, lines: Sequence[str], version: tuple[int, int], path: str) -> SlicedModule:
    """A long module read a slice at a time (see ``_chunks``); each slice's tree is checked
    for :func:`duplicate_parameter` as the lowerer's first pass reads it (a pass of its own
    cost a third more parsing), with the text's lambdas scanned once."""
    lambdas = "lambda" in text and _lambda_may_repeat(text)

    def check(tree: ast.Module) -> None:
        found = duplicate_parameter(tree, text, lambdas)
        if found is not None:
            raise _DuplicateParameter(found)

    return SlicedModule(text, lines, lambda t: parse(t, version, path), check, SLICE_LINES)


def lower_text(
    text: str,
    *,
    module: str,
    path: str,
    source_sha256: str,
    module_sha256: str | None = None,  # the text's digest when the caller knows it
    encoding: str,
    python_version: tuple[int, int],
    source_format: SourceFormat = "python",
    line_map: Sequence[tuple[int, int]] | None = None,
    parsed: "Parsed | None" = None,
) -> FrontendResult:
    """``text`` parsed and lowered to IR, with the garbage collector paused (see there).
    ``parsed``: a tree of the text made already (see :data:`Parsed`)."""
    with collection_paused():
        return _lower_text(
            text,
            module=module,
            path=path,
            source_sha256=source_sha256,
            module_sha256=module_sha256,
            encoding=encoding,
            python_version=python_version,
            source_format=source_format,
            line_map=line_map,
            parsed=parsed,
        )


def _lower_text(
    text: str,
    *,
    module: str,
    path: str,
    source_sha256: str,
    module_sha256: str | None,
    encoding: str,
    python_version: tuple[int, int],
    source_format: SourceFormat,
    line_map: Sequence[tuple[int, int]] | None,
    parsed: "Parsed | None" = None,
) -> FrontendResult:
    src = SourceText(text, line_map)
    body: ast.Module | SlicedModule
    try:
        if len(src.lines) <= SLICE_LINES:
            same = parsed is not None and parsed[0] == text and parsed[1] == python_version
            body = parsed[2] if parsed is not None and same else parse(text, python_version, path)
        else:  # parsed a slice at a time (see ``_chunks``), checked as it is read
            body = _sliced(text, src.lines, python_version, path)
    except PARSE_ERRORS as exc:
        return FrontendResult(
            ir=None, diagnostics=(syntax_diagnostic(exc, python_version, src),), module_text=text
        )
    siblings = _sibling_context.current()
    if siblings is not None and isinstance(body, ast.Module):
        siblings.lowered(module, text, python_version, body)
    duplicate = duplicate_parameter(body, text) if isinstance(body, ast.Module) else None
    if duplicate is not None:
        return FrontendResult(
            ir=None,
            diagnostics=(syntax_diagnostic(duplicate, python_version, src),),
            module_text=text,
        )
    source = SourceInfo(
        path=path,
        format=source_format,
        sha256=source_sha256,
        module_sha256=module_sha256 or digest_bytes(text.encode("utf-8")),
        encoding=encoding,
        python_version=f"{python_version[0]}.{python_version[1]}",
    )
    try:
        ir = ModuleLowerer(body, src, module=module, source=source).lower()
    except _DuplicateParameter as exc:
        return FrontendResult(
            ir=None,
            diagnostics=(syntax_diagnostic(exc.error, python_version, src),),
            module_text=text,
        )
    except SliceParseError as exc:
        return FrontendResult(
            ir=None,
            diagnostics=(syntax_diagnostic(exc.error, python_version, src),),
            module_text=text,
        )
    except RecursionError:
        return FrontendResult(
            ir=None,
            diagnostics=(syntax_diagnostic(RecursionError(), python_version, src),),
            module_text=text,
        )
    return FrontendResult(ir=ir, diagnostics=(), module_text=text)


def read_python(
    data: bytes,
    *,
    path: str,
    module: str,
    python_version: tuple[int, int],
    encoding: str | None = None,
    parsed: "Parsed | None" = None,
) -> FrontendResult:
    """A ``.py`` file's bytes → IR. ``encoding`` overrides PEP 263 detection; ``parsed``:
    a tree of the file's text made already (see :data:`Parsed`)."""
    try:
        text, used = decode_source(data, encoding)
    except SourceDecodeError as exc:
        line = exc.line or 1
        span = Span(line=line, column=0, end_line=line, end_column=0)
        return FrontendResult(
            ir=None, diagnostics=(diag(F002_DECODE, str(exc), span),), module_text=None
        )
    digest = digest_bytes(data)
    # ASCII UTF-8 without carriage returns decodes to itself: the text's digest is the file's
    same = used == "utf-8" and data.isascii() and b"\r" not in data
    return lower_text(
        text,
        module=module,
        path=path,
        source_sha256=digest,
        module_sha256=digest if same else None,
        encoding=used,
        python_version=python_version,
        parsed=parsed,
    )


__all__ = [
    "JSON_VALUE_ATTRIBUTES",
    "FrontendResult",
    "Parsed",
    "collection_paused",
    "SourceDecodeError",
    "decode_source",
    "parse",
    "lower_text",
    "module_name_problem",
    "parse_python_version",
    "read_python",
    "short",
]
