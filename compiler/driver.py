"""The library API: what the CLI and the analysis service call.

``analyze_source`` / ``analyze_file`` run a front end and the
readiness pass and return an :class:`Analysis` (IR + readiness + front-end diagnostics).
``emit_analysis`` adds selection and a target (``emit_target``, through the protocol);
``compiler.pipeline.compile_path`` hands the ``FileTree`` to the writer.
Input problems raise :class:`~svcc.contracts.errors.InputError`; the CLI maps them to exit
codes, the service to HTTP statuses.
"""

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from attrs import evolve, frozen
from svcc.compiler.closure import EMPTY, LocalClosure
from svcc.compiler.passes.readiness import Environment, ReadinessReport
from svcc.compiler.source_files import read_source_file
from svcc.contracts.diagnostics import Diagnostic
from svcc.contracts.errors import InputError
from svcc.ir.canonical import canonical_json
from svcc.ir.model import ModuleIR, SourceFormat, Span

if TYPE_CHECKING:
    from pathlib import Path

    from svcc.compiler.data_files import DataFiles
    from svcc.contracts.policy import AnyExecution
    from svcc.contracts.requirements import DeclaredRequirements
    from svcc.contracts.target import BundleSpec, EmitContext, FileTree, Target
    from svcc.frontends.python import FrontendResult


SUFFIXES: Final[dict[str, SourceFormat]] = {".py": "python", ".ipynb": "notebook"}
SKIP_DIRS: Final = frozenset({"__pycache__", "node_modules"})


@frozen(kw_only=True)
class Analysis:
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
    from svcc.frontends.module_names import derive_module_name, derived_name_note

    fmt = source_format or source_format_of(path)
    stem = name_parts(path)[0]
    name = module if module is not None else derive_module_name(stem) or stem
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
    note = derived_name_note(stem, name)
    if note is not None:  # the name the user sees in every capability id is said once
        result = evolve(result, diagnostics=(note, *result.diagnostics))
    readiness = None
    local_files: tuple[tuple[str, bytes], ...] = ()
    if result.ir is not None:
        from svcc.compiler.passes.pipeline import ModuleUnit, run_passes
        from svcc.ir.serde import ir_digest

        closure = layout.closure(path, data, result, version) if layout is not None else None
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
        unit = ModuleUnit(
            path=path,
            ir=result.ir,
            env=env,
            digest=ir_digest(result.ir) if serialize else "",
            diagnostics=result.diagnostics,
        )
        readiness = run_passes(unit)
        if closure is not None and closure.repository is not None:
            from svcc.compiler.passes.repository_readiness import RepositoryReadiness

            walk = RepositoryReadiness(
                closure.repository,
                env.declared_imports,
                env.declared_requirements,
                unmapped=env.unmapped,
            )
            readiness = walk.inherit(name, readiness)
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
    from svcc.contracts.reserved import BUNDLE_RESERVED

    return BUNDLE_RESERVED


@frozen(kw_only=True)
class Layout:
    """Where a file on disk sits: the directories the bundle's ``source/`` mirrors
    (``mounts``: package prefix → directory) and the shared per-file facts cache."""

    root: str
    mounts: tuple[tuple[str, str], ...]
    module: str
    is_package: bool
    cache: dict[str, Any]

    def closure(
        self, path: str, data: bytes, result: "FrontendResult", version: tuple[int, int]
    ) -> "LocalClosure":
        """The file's local import closure, with the file (``path`` as shown, ``data``, its
        front-end ``result``) as the main module of its repository."""
        from svcc.compiler.closure import build_closure

        return build_closure(
            (path, data, result),
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
        from svcc.frontends.module_names import derive_dotted

        root, module = source_root(absolute)
        module = derive_dotted(module)  # `Gradient Descent.ipynb` -> gradient_descent
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
    from svcc.contracts.diagnostics import diag
    from svcc.contracts.diagnostics.codes import F007_NOT_ANALYSABLE

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


MAX_MANIFEST_BYTES: Final = 1024 * 1024  # the specification's bundle manifest limit


@frozen(kw_only=True)
class CompileResult:
    """What was written. ``module`` is a file's module; ``bundle_kind`` is ``"repository"``
    for a directory (a file's result keeps today's JSON shape, without it)."""

    target: str
    output_dir: "Path"
    files: tuple[str, ...]
    capabilities: tuple[str, ...]
    execution: Mapping[str, str]
    module: str | None = None
    bundle_kind: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"target": self.target, "output_dir": str(self.output_dir)}
        if self.module is not None:
            out["module"] = self.module
        if self.bundle_kind is not None:
            out["bundle_kind"] = self.bundle_kind
        return out | {
            "capabilities": list(self.capabilities),
            "execution": dict(self.execution),
            "files": list(self.files),
        }


def served_bundle(backend: "Target", what: str) -> "BundleSpec":
    """The bundle ``backend`` writes or wraps (``oci``, ``k8s``: their ``--interface``'s);
    a target that does neither cannot build ``what`` (a repository)."""
    from svcc.compiler.registry import servable_target
    from svcc.contracts.errors import UsageError
    from svcc.contracts.target import Wrapper

    if backend.bundle is not None:
        return backend.bundle
    if isinstance(backend, Wrapper):
        return servable_target(backend.wrapped_target(), backend.name)[1]
    raise UsageError(
        f"target {backend.name!r} writes no service bundle, so it cannot build {what}; "
        "use a servable target or one that wraps one (`svcc targets`)"
    )


def emit_target(backend: "Target", ir: ModuleIR, ctx: "EmitContext") -> "FileTree":
    """``backend.emit``, through the protocol: a :class:`~svcc.contracts.target.Wrapper` gets
    the bundle of the servable target it names, emitted from the same IR and context. Every
    service bundle's manifest is held to the specification's size limit."""
    import attrs
    from svcc.compiler.registry import servable_target
    from svcc.contracts.target import Wrapper

    if isinstance(backend, Wrapper) and backend.bundle is None:
        inner, spec = servable_target(backend.wrapped_target(), backend.name)
        bundle = _checked(spec, inner.emit(ir, ctx))
        return backend.emit(ir, attrs.evolve(ctx, bundle=bundle, served=spec))
    tree = backend.emit(ir, ctx)
    return tree if backend.bundle is None else _checked(backend.bundle, tree)


def _checked(spec: "BundleSpec", tree: "FileTree") -> "FileTree":
    manifest = tree.get(spec.manifest) or b""
    if len(manifest) > MAX_MANIFEST_BYTES:
        raise InputError(
            f"the bundle manifest would be {len(manifest)} bytes, over the "
            f"{MAX_MANIFEST_BYTES}-byte limit; select fewer capabilities"
        )
    return tree


def emit_analysis(
    analysis: Analysis,
    backend: "Target",
    *,
    select: str | None = None,
    requirements: "DeclaredRequirements | None" = None,
    execution: "AnyExecution | None" = None,
) -> "tuple[ModuleIR, FileTree]":
    """Selection → target, in memory: ``(the selected IR, the tree)``. No I/O."""
    from svcc.compiler.passes.select import SelectPass, parse_selection
    from svcc.contracts.errors import IneligibleError
    from svcc.contracts.target import EmitContext, Wrapper

    selection = parse_selection(select)
    if analysis.error is not None or analysis.ir is None or analysis.readiness is None:
        raise InputError(analysis.error_message())
    if analysis.module_text is None:
        raise IneligibleError(f"{analysis.path}: no module text")
    kind = backend.bundle
    if kind is None and isinstance(backend, Wrapper):
        kind = served_bundle(backend, "a bundle")
    if kind is not None:
        problem = kind.module_name_problem(analysis.module)
        if problem:
            raise InputError(f"{problem}; choose another with --module-name")
        for local in sorted({p.split("/")[1].removesuffix(".py") for p, _ in analysis.local_files}):
            problem = kind.module_name_problem(local)
            if local != analysis.module.split(".")[0] and problem:
                raise IneligibleError(
                    f"{analysis.path}: imports the local module {local!r}: {problem}; rename it"
                )
    try:
        selected = SelectPass().run(analysis.ir, analysis.readiness, selection, analysis.path)
    except IneligibleError as exc:
        from svcc.contracts.diagnostics import render

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
    return selected, emit_target(backend, selected, ctx)
