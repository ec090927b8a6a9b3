"""The library API: what the CLI and the analysis service call.

``analyze_source`` / ``analyze_file`` run a front end and the
readiness pass and return an :class:`Analysis` (IR + readiness + front-end diagnostics).
``compile_file`` adds selection and a target, and hands the ``FileTree`` to the writer.
Input problems raise :class:`~svcc.compiler.errors.InputError`; the CLI maps them to exit
codes, the service to HTTP statuses.
"""

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from attrs import frozen
from svcc.compiler.closure import EMPTY, LocalClosure
from svcc.compiler.diagnostics import Diagnostic
from svcc.compiler.errors import InputError
from svcc.compiler.passes.readiness import Environment, ReadinessPass, ReadinessReport
from svcc.compiler.source_files import read_source_file
from svcc.ir.canonical import canonical_json
from svcc.ir.model import ModuleIR, SourceFormat, Span
from svcc.ir.record import Record

if TYPE_CHECKING:
    from pathlib import Path

    from svcc.compiler.data_files import DataFiles
    from svcc.compiler.policy_v2 import AnyExecution
    from svcc.compiler.requirements import DeclaredRequirements
    from svcc.compiler.target import FileTree, Target


SUFFIXES: Final[dict[str, SourceFormat]] = {".py": "python", ".ipynb": "notebook"}
SKIP_DIRS: Final = frozenset({"__pycache__", "node_modules"})


@frozen(kw_only=True, repr=False)
class Analysis(Record):
    """One source analysed. ``ir``/``readiness`` are ``None`` when ``error`` is set."""

    path: str
    module: str
    source_format: SourceFormat
    source_bytes: bytes
    module_text: str | None
    ir: ModuleIR | None
    readiness: ReadinessReport | None
    diagnostics: tuple[Diagnostic, ...]
    # The local import closure: bundle path ("source/...") -> exact bytes, to be copied.
    local_files: tuple[tuple[str, bytes], ...] = ()
    # The main module is a package's ``__init__.py`` (bundled as ``source/<pkg>/__init__.py``).
    is_package: bool = False

    @property
    def ir_json(self) -> bytes | None:
        """The IR's canonical JSON, encoded on first use (once per IR): a readiness report
        needs only its digest, which is computed without holding the document."""
        if self.ir is None:
            return None
        from svcc.ir.serde import ir_to_json

        return ir_to_json(self.ir)

    @property
    def error(self) -> Diagnostic | None:
        return next((d for d in self.diagnostics if d.severity == "error"), None)

    def error_message(self, shown_path: str | None = None) -> str:
        """``path:line:col: message``; ``shown_path`` is the path as the user gave it."""
        error = self.error
        assert error is not None
        return f"{error.location(shown_path or self.path)}: {error.message}"

    def lines_for(self, span: Span | None) -> list[str] | None:
        """The lines ``span`` counts in (the module's, or its notebook cell's), for excerpts."""
        if span is None:
            return None
        if span.cell is None or self.source_format != "notebook":
            return self.module_text.splitlines() if self.module_text is not None else None
        try:
            raw = json.loads(self.source_bytes)["cells"][span.cell - 1]["source"]
        except (ValueError, KeyError, IndexError, TypeError):
            return None
        text = "".join(raw) if isinstance(raw, list) else raw
        return text.splitlines() if isinstance(text, str) else None

    def document(self) -> dict[str, Any]:
        """The readiness document, or ``{"error": ...}`` for a source that did not analyse."""
        if self.readiness is None:
            error = self.error
            assert error is not None
            return {"error": {"path": self.path, **error.to_json()}}
        return self.readiness.to_json()


def version_tuple(version: str | tuple[int, int] | None) -> tuple[int, int]:
    from svcc.ir.python_version import parse_python_version, running_version

    if version is None:
        return running_version()
    if isinstance(version, tuple):
        return version
    try:
        return parse_python_version(version)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def check_module_name(name: str) -> str:
    from svcc.frontends.python import module_name_problem

    problem = module_name_problem(name)
    if problem:
        raise InputError(problem)
    return name


def name_parts(path: "str | os.PathLike[str]") -> tuple[str, str]:
    """``(stem, suffix)`` of a path's last part, as :mod:`pathlib` names them (a leading or
    trailing dot is no suffix), without importing it: ``svcc inspect FILE`` never needs it."""
    name = os.path.basename(os.fspath(path).rstrip("/"))
    dot = name.rfind(".")
    if 0 < dot < len(name) - 1:
        return name[:dot], name[dot:]
    return name, ""


def source_format_of(path: "str | os.PathLike[str]") -> SourceFormat:
    suffix = name_parts(path)[1].lower()
    if suffix not in SUFFIXES:
        raise InputError(
            f"{path}: unsupported format {suffix or '(no suffix)'!r}: "
            "expected a .py file or an .ipynb notebook"
        )
    return SUFFIXES[suffix]


def analyze_source(
    source: bytes | str,
    *,
    path: str = "module.py",
    module: str | None = None,
    python_version: str | tuple[int, int] | None = None,
    encoding: str | None = None,
    source_format: SourceFormat | None = None,
    requirements: "DeclaredRequirements | None" = None,
    layout: "Layout | None" = None,
    check_name: bool = True,
    governed: bool = False,
    serialize: bool = True,
    allow: frozenset[str] = frozenset(),
    data_files: "DataFiles | None" = None,
) -> Analysis:
    """Analyse source held in memory. ``path`` is the display path (relative).

    ``layout`` (files on disk only) says where the modules beside the source are: their
    closure is found and judged, and carried for the bundle. ``governed`` asks for the
    rules of governed execution (results must be exactly JSON); ``allow`` holds the
    security effect kinds the user opted into (``--allow``). ``serialize=False`` skips
    the IR's digest (``readiness.ir_digest`` is empty): for a report that shows neither it
    nor the IR, such as the CLI's text table, which then never builds the cattrs converter
    (``ir_json`` is encoded only if asked for)."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    fmt = source_format or source_format_of(path)
    name = module if module is not None else name_parts(path)[0]
    if check_name:
        check_module_name(name)
    version = version_tuple(python_version)
    if fmt == "notebook":
        from svcc.frontends.notebook import read_notebook

        result = read_notebook(data, path=path, module=name, python_version=version)
    else:
        from svcc.frontends.python import read_python

        result = read_python(
            data, path=path, module=name, python_version=version, encoding=encoding
        )
    readiness = None
    local_files: tuple[tuple[str, bytes], ...] = ()
    if result.ir is not None:
        from svcc.compiler.errors import InternalError
        from svcc.ir.serde import ir_digest
        from svcc.ir.verify import IRInvariantError, verify

        try:
            verify(result.ir)
        except IRInvariantError as exc:  # a front-end bug: never emit invalid IR
            raise InternalError(f"{path}: {exc}") from None
        closure = layout.closure(result.ir, version) if layout is not None else None
        if closure is not None:
            local_files = tuple(closure.files.items())
        if data_files is not None:
            local_files = (*local_files, *data_files.files)  # copied into the bundle, verified
        is_package = layout.is_package if layout is not None else False
        env = Environment(
            closure=closure if closure is not None else EMPTY,
            package=name if is_package else name.rpartition(".")[0],
            reserved=_reserved_names(),
            declared_imports=requirements.import_names if requirements else frozenset(),
            declared_requirements=requirements.distributions if requirements else (),
            governed=governed,
            allow=allow,
            unmapped=requirements.unmapped if requirements else (),
            data_files=data_files.relative if data_files is not None else frozenset(),
        )
        digest = ir_digest(result.ir) if serialize else ""
        readiness = ReadinessPass().run(result.ir, env, digest, diagnostics=result.diagnostics)
        if closure is not None and closure.modules:
            from svcc.compiler.passes.closure_readiness import inherit_closure_risks
            from svcc.frontends.repository import SourceFile

            readiness = inherit_closure_risks(
                readiness,
                main=SourceFile(path=path, module=name, is_package=is_package, data=data),
                result=result,
                closure=closure,
                python_version=version,
                declared_imports=env.declared_imports,
                declared_requirements=env.declared_requirements,
                unmapped=env.unmapped,
            )
    return Analysis(
        path=path,
        module=name,
        source_format=fmt,
        source_bytes=data,
        module_text=result.module_text,
        ir=result.ir,
        readiness=readiness,
        diagnostics=result.diagnostics,
        local_files=local_files,
        is_package=layout.is_package if layout is not None else False,
    )


def _reserved_names() -> frozenset[str]:
    """Names every bundle takes (a target's own are checked when it is chosen)."""
    from svcc.compiler.reserved import BUNDLE_RESERVED

    return BUNDLE_RESERVED


@frozen(kw_only=True, repr=False)
class Layout(Record):
    """Where a file on disk sits: the directories the bundle's ``source/`` mirrors
    (``mounts``: package prefix → directory) and the shared per-file facts cache."""

    root: str
    mounts: tuple[tuple[str, str], ...]
    module: str
    is_package: bool
    cache: dict[str, Any]

    def closure(self, ir: ModuleIR, version: tuple[int, int]) -> "LocalClosure":
        from svcc.compiler.closure import ImportFact, build_closure

        facts = [
            ImportFact(
                level=imp.level,
                module=imp.module,
                names=imp.names,
                required=imp.scope == "" and not imp.guarded,
                line=imp.span.line,
            )
            for imp in ir.imports
            if not imp.type_checking
        ]
        return build_closure(
            facts,
            module=self.module,
            mounts=self.mounts,
            root=self.root,
            python_version=version,
            is_package=self.is_package,
            cache=self.cache,
        )


def layout_of(
    path: "str | os.PathLike[str]", module_name: str | None, cache: dict[str, Any] | None = None
) -> Layout:
    """The module name and mounts of a file: by default its dotted name from the nearest
    source root (see :func:`svcc.compiler.closure.source_root`); with ``--module-name``,
    the file's directory holds both the top of ``source/`` and the named package."""
    from svcc.compiler.closure import source_root

    absolute = os.path.abspath(path)
    is_package = os.path.basename(absolute) == "__init__.py"
    if module_name is None:
        root, module = source_root(absolute)
        if is_package and "." in module:
            module = module.rpartition(".")[0]
        else:
            is_package = False
        return Layout(
            root=root,
            mounts=(("", root),),
            module=module,
            is_package=is_package,
            cache=cache if cache is not None else {},
        )
    folder = os.path.dirname(absolute)
    package = module_name.rpartition(".")[0]
    mounts = ((package, folder), ("", folder)) if package else (("", folder),)
    return Layout(
        root=folder,
        mounts=mounts,
        module=module_name,
        is_package=False,
        cache=cache if cache is not None else {},
    )


def refuse_directory(path: "str | os.PathLike[str]") -> None:
    """A directory where one source file is expected, said as such (not "no suffix")."""
    if os.path.isdir(path):
        raise InputError(
            f"{path}: is a directory; give one .py file or .ipynb notebook "
            "(`svcc inspect` also accepts a directory)"
        )


def analyze_file(
    path: "str | os.PathLike[str]",
    *,
    module_name: str | None = None,
    python_version: str | tuple[int, int] | None = None,
    requirements: "DeclaredRequirements | None" = None,
    encoding: str | None = None,
    governed: bool = False,
    allow: frozenset[str] = frozenset(),
    data: Sequence[str] = (),
    display_path: str | None = None,
    facts_cache: dict[str, Any] | None = None,
    serialize: bool = True,
) -> Analysis:
    """A file on disk, with its local import closure. ``display_path`` is the path shown
    (default: the file name); ``facts_cache`` is shared by a directory analysis; see
    :func:`analyze_source` for ``serialize``."""
    path = os.fspath(path)
    refuse_directory(path)
    fmt = source_format_of(path)
    layout = layout_of(path, module_name, facts_cache)
    module = check_module_name(layout.module)
    declared = None
    if data:
        from svcc.compiler.data_files import collect

        declared = collect(
            data, source=path, root=layout.root, module=module, is_package=layout.is_package
        )
    source = read_source_file(path)
    return analyze_source(
        source,
        path=display_path or os.path.basename(path),
        module=module,
        python_version=python_version,
        encoding=encoding,
        source_format=fmt,
        requirements=requirements,
        layout=layout,
        check_name=False,
        governed=governed,
        serialize=serialize,
        allow=allow,
        data_files=declared,
    )


# -- directories --------------------------------------------------------------------------


def python_files(root: "Path") -> list[str]:
    """Relative POSIX paths of every ``.py`` and ``.ipynb`` below ``root``, sorted; hidden
    directories, ``__pycache__`` and symlinks are skipped (a symlink could lead outside the
    tree)."""
    out: list[str] = []
    for current, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for name in files:
            if name_parts(name)[1].lower() in SUFFIXES:
                full = os.path.join(current, name)
                if not os.path.islink(full):
                    out.append(os.path.relpath(full, root).replace(os.sep, "/"))
    out.sort()
    return out


def failed_analysis(path: str, message: str) -> Analysis:
    """An entry for a file that could not be analysed at all (``SVC-F007``)."""
    from svcc.compiler.diagnostics import diag
    from svcc.compiler.diagnostics.codes import F007_NOT_ANALYSABLE

    return Analysis(
        path=path,
        module="",
        source_format=SUFFIXES.get(name_parts(path)[1].lower(), "python"),
        source_bytes=b"",
        module_text=None,
        ir=None,
        readiness=None,
        diagnostics=(diag(F007_NOT_ANALYSABLE, message, None),),
    )


def render_document(analysis: Analysis) -> bytes:
    """Canonical JSON of the readiness document (a directory worker's ``render``)."""
    return canonical_json(analysis.document())


def render_ir(analysis: Analysis) -> bytes:
    if analysis.ir_json is None:
        return canonical_json(analysis.document())
    return analysis.ir_json


# -- compile ------------------------------------------------------------------------------


@frozen(kw_only=True, repr=False)
class CompileResult(Record):
    target: str
    output_dir: "Path"
    files: tuple[str, ...]
    capabilities: tuple[str, ...]
    analysis: Analysis
    execution: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "output_dir": str(self.output_dir),
            "module": self.analysis.module,
            "capabilities": list(self.capabilities),
            "execution": dict(self.execution),
            "files": list(self.files),
        }


def emit_analysis(
    analysis: Analysis,
    backend: "Target",
    *,
    select: str | None = None,
    requirements: "DeclaredRequirements | None" = None,
    execution: "AnyExecution | None" = None,
) -> "tuple[ModuleIR, FileTree]":
    """Selection → target, in memory: ``(the selected IR, the tree)``. No I/O."""
    from svcc.compiler.errors import IneligibleError
    from svcc.compiler.passes.select import SelectPass, parse_selection
    from svcc.compiler.target import EmitContext

    selection = parse_selection(select)
    if analysis.error is not None or analysis.ir is None or analysis.readiness is None:
        raise InputError(analysis.error_message())
    if analysis.module_text is None:
        raise IneligibleError(f"{analysis.path}: no module text")
    if backend.bundle is not None:
        problem = backend.bundle.module_name_problem(analysis.module)
        if problem:
            raise InputError(problem)
        for local in sorted({p.split("/")[1].removesuffix(".py") for p, _ in analysis.local_files}):
            if local != analysis.module.split(".")[0] and backend.bundle.module_name_problem(local):
                raise IneligibleError(
                    f"{analysis.path}: imports the local module {local!r}, which clashes with "
                    f"the {backend.bundle.interface} bundle's own module of that name; rename it"
                )
    try:
        selected = SelectPass().run(analysis.ir, analysis.readiness, selection, analysis.path)
    except IneligibleError as exc:
        from svcc.compiler.diagnostics import render

        exc.details = tuple(
            render(r, analysis.path, analysis.lines_for(r.span)) for r in exc.reasons
        )
        raise
    ctx = EmitContext(
        readiness=analysis.readiness,
        source_path=analysis.path,
        source_bytes=analysis.source_bytes,
        module_text=analysis.module_text,
        requirements=requirements.lines if requirements else (),
        local_files=analysis.local_files,
        module_is_package=analysis.is_package,
        execution=execution,
    )
    return selected, backend.emit(selected, ctx)


def compile_file(
    path: "str | Path",
    *,
    target: str,
    output_dir: "str | Path",
    module_name: str | None = None,
    select: str | None = None,
    python_version: str | tuple[int, int] | None = None,
    requirements: "DeclaredRequirements | None" = None,
    execution_policy: "str | Path | None" = None,
    target_options: Mapping[str, object] | None = None,
    servable_only: bool = False,
    runtime_image: str | None = None,
    runtime_platform: str | None = None,
    allow: frozenset[str] = frozenset(),
    data: Sequence[str] = (),
) -> CompileResult:
    """Front end → readiness → selection → target → writer. Nothing is written unless
    every step succeeds; the target and the selection syntax are checked before the
    source is read. ``target_options`` are the target's own options (field → value);
    ``servable_only`` refuses a target that writes no service (``svcc generate``)."""
    from svcc.compiler.passes.select import parse_selection
    from svcc.compiler.policy import execution_mode
    from svcc.compiler.policy_v2 import image_options_without_policy
    from svcc.compiler.registry import get_target
    from svcc.compiler.writer import write_tree

    backend = get_target(target, target_options)
    if servable_only and backend.bundle is None:
        from svcc.compiler.errors import UsageError

        raise UsageError(
            f"target {target!r} writes no service bundle; use `svcc compile --target {target}`"
        )
    parse_selection(select)
    policy = None
    if execution_policy is not None:
        from svcc.compiler.errors import UsageError
        from svcc.compiler.policy_v2 import load_execution

        if not backend.supports_execution_policy:
            raise UsageError(f"target {backend.name!r} has no governed execution mode")
        policy = load_execution(execution_policy, runtime_image, runtime_platform)
    else:
        image_options_without_policy(runtime_image, runtime_platform)
    analysis = analyze_file(
        path,
        module_name=module_name,
        python_version=python_version,
        requirements=requirements,
        governed=policy is not None,
        allow=allow,
        data=data,
    )
    if analysis.error is not None:
        raise InputError(analysis.error_message(str(path)))
    selected, tree = emit_analysis(
        analysis, backend, select=select, requirements=requirements, execution=policy
    )
    written = write_tree(tree, output_dir)
    return CompileResult(
        target=backend.name,
        output_dir=written,
        files=tuple(tree.paths()),
        capabilities=tuple(c.id for c in selected.capabilities),
        analysis=analysis,
        execution=execution_mode(policy),
    )
