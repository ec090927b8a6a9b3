"""The library API's analysis: what ``svcc inspect``/``compile``/``generate``, ``svc expose
build`` and the analysis service call, and the one selection over what it found.

:func:`analyze` reads a path (a ``.py`` file, an ``.ipynb`` notebook or a directory) or
source held in memory and returns one :class:`Analysis`: the front end's IR, readiness
(a file's local import closure judged; a directory's modules judged over the module
graph) and the front end's diagnostics. Only how the input is read differs (the front
end); :func:`select` and :mod:`svcc.compiler.bundles` then treat every analysis alike.
Input problems raise :class:`~svcc.contracts.errors.InputError`; the CLI maps them to exit
codes, the service to HTTP statuses.
"""

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from svcc.compiler.options import AnalyzeOptions
from svcc.compiler.passes.readiness import ReadinessReport
from svcc.compiler.program_kinds import DIRECTORY, FILE, ProgramKind
from svcc.contracts.diagnostics import Diagnostic
from svcc.contracts.errors import InputError
from svcc.frontends.source_files import read_source_file
from svcc.ir.canonical import canonical_json
from svcc.ir.model import Capability, ModuleIR, SourceFormat, Span
from svcc.ir.records import evolve

if TYPE_CHECKING:
    from pathlib import Path

    from attrs import field, frozen
    from svcc.compiler.data_files import DataFiles
    from svcc.compiler.passes.select import Entry
    from svcc.contracts.requirements import DeclaredRequirements
    from svcc.frontends.file_repository import LocalClosure
    from svcc.frontends.python import FrontendResult
    from svcc.frontends.repository import LoweringPool, Repository, RepositoryTree, TreeLimits
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import field, frozen


DEFAULTS: Final = AnalyzeOptions()
SUFFIXES: Final[dict[str, SourceFormat]] = {".py": "python", ".ipynb": "notebook"}


@frozen(kw_only=True)
class Analysis:
    """One input analysed. A file or notebook fills the module fields (``ir``/``readiness``
    are ``None`` when ``error`` is set); a directory fills ``repository`` and ``reports``
    (each module judged over the graph; ``path`` is the directory as given). Both answer
    :meth:`capabilities`, which is all selection and the bundle assembler read."""

    path: str
    module: str = ""
    source_format: SourceFormat = "python"
    source_bytes: bytes = b""
    module_text: str | None = None
    ir: ModuleIR | None = None
    readiness: ReadinessReport | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    # The local import closure: bundle path ("source/...") -> exact bytes, to be copied.
    local_files: tuple[tuple[str, bytes], ...] = ()
    # The main module is a package's ``__init__.py`` (bundled as ``source/<pkg>/__init__.py``).
    is_package: bool = False
    # ``--requirements``, or (a directory) the project's declared dependencies.
    requirements: "DeclaredRequirements | None" = None
    repository: "Repository | None" = None
    reports: Mapping[str, ReadinessReport | None] = field(factory=dict)
    # A directory's modules' documents as canonical JSON (module → bytes), when they were
    # rendered where the modules were judged (``analyze_repository(documents=True)``).
    rendered: Mapping[str, bytes | memoryview] = field(factory=dict)
    # How the front end that read the input makes it a program (chosen once, asked after).
    kind: ProgramKind = FILE
    # A directory's notebooks (tree path → their analysis), when asked for
    # (``AnalyzeOptions.notebooks``): not modules of the repository, each is analysed as
    # ``inspect FILE`` would, so a folder of notebooks lists them.
    notebooks: "Mapping[str, Analysis]" = field(factory=dict)

    @property
    def bundle_kind(self) -> str:
        """``"file"`` or ``"repository"``: which bundle layout the input gets."""
        return self.kind.bundle_kind

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

    def failed_modules(self) -> list[str]:
        """A directory's modules that did not analyse (no report: the front end stopped on
        an error), sorted."""
        from svcc.compiler.passes.repository_readiness import EncodedReports

        if isinstance(self.reports, EncodedReports):  # known without decoding any report
            return sorted(self.reports.failed())
        return sorted(m for m, report in self.reports.items() if report is None)

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

    def capabilities(self) -> "list[Entry]":
        """Every capability with its module and verdict, in module then source order."""
        return self.kind.capabilities(self)

    def select(
        self,
        selection: str | Sequence[str] | None,
        *,
        exclude: Sequence[str] = (),
        include_all_ready: bool = False,
    ) -> list[tuple[ModuleIR, Capability]]:
        """The selected capabilities, in the order a bundle lists them: ``--select`` items
        (a function name in a file, a dotted ``module.function`` or a full id; a string is
        ``--select``'s comma-separated text), or an exposure policy's ``include_all_ready``
        and ``exclude``. Unknown items exit 2; a selected capability that is not eligible
        exits 1 with its reason codes (rendered with their source lines)."""
        from svcc.compiler.passes.select import parse_selection
        from svcc.compiler.passes.select import select as select_entries
        from svcc.contracts.diagnostics import render
        from svcc.contracts.errors import IneligibleError

        items = parse_selection(selection) if isinstance(selection, str) else selection
        try:
            return select_entries(
                self.kind.selectable(self),
                items,
                where=self.kind.where(self),
                exclude=exclude,
                include_all_ready=include_all_ready,
                by_plain_name=self.kind.selects_by_function_name,
            )
        except IneligibleError as exc:
            if self.module_text is not None:  # a file's reasons, shown with its lines
                exc.details = tuple(
                    render(r, self.path, self.lines_for(r.span)) for r in exc.reasons
                )
            raise

    def document(
        self, modules: Sequence[str] | None = None, *, files: bool = True
    ) -> dict[str, Any]:
        """A file's readiness document (``{"error": ...}`` when it did not analyse); a
        directory's ``inspect DIR --format json`` document over ``modules`` (default all):
        one readiness document per module file (keyed by path; ids are dotted), which
        module each path is, the graph. ``files=False``: ``"files"`` left empty
        (``compiler.repository_document`` renders them)."""
        return self.kind.document(self, modules, files=files)

    def module_document(self, module: str) -> dict[str, Any]:
        """One module of a directory: its readiness document and front-end diagnostics."""
        from svcc.compiler.repository_document import module_document

        assert self.repository is not None
        source = self.repository.modules[module]
        return module_document(source.file.path, source.result.diagnostics, self.reports[module])

    def file_analysis(self, module: str) -> "Analysis":
        """One module of a directory as a file's analysis (IR and the readiness judged
        over the graph), for callers that answer per file."""
        assert self.repository is not None
        source = self.repository.modules[module]
        return Analysis(
            path=source.file.path,
            module=module,
            source_bytes=source.file.data,
            module_text=source.result.module_text,
            ir=source.ir,
            readiness=self.reports[module],
            diagnostics=source.result.diagnostics,
            is_package=source.file.is_package,
            requirements=self.requirements,
        )


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
    select: Sequence[str] | None = None,
) -> Analysis:
    """Analyse source held in memory. ``path`` is the display path (relative).

    ``layout`` (files on disk only) says where the modules beside the source are: their
    closure is found and judged, and carried for the bundle. ``governed`` asks for the
    rules of governed execution (results must be exactly JSON); ``allow`` holds the
    security effect kinds the user opted into (``--allow``). ``serialize=False`` skips
    the IR's digest (``readiness.ir_digest`` is empty): for a report that shows neither it
    nor the IR, such as the CLI's text table, which then never builds the cattrs converter
    (``ir_json`` is encoded only if asked for). ``select`` (``--select``) narrows a
    notebook's slice to what the selected functions need."""
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

        result = read_notebook(data, path=path, module=name, python_version=version, select=select)
    else:
        from svcc.frontends.python import read_python

        with _siblings_of(layout, version):
            result = read_python(
                data, path=path, module=name, python_version=version, encoding=encoding
            )
    note = derived_name_note(stem, name)
    if note is not None:  # the name the user sees in every capability id is said once
        result = evolve(result, diagnostics=(note, *result.diagnostics))
    readiness = None
    local_files: tuple[tuple[str, bytes], ...] = ()
    if result.ir is not None:
        from svcc.compiler.passes.repository_readiness import RepositoryReadiness

        with _siblings_of(layout, version):
            repository, local_files = _file_repository((path, data, result), name, version, layout)
            if repository is not None:  # the classes it imports from beside it get their shapes
                result = _with_sibling_models(result, repository, name, version)
        if data_files is not None:
            local_files = (*local_files, *data_files.files)  # copied into the bundle, verified
        walk = RepositoryReadiness(
            repository,
            requirements.import_names if requirements else frozenset(),
            requirements.distributions if requirements else (),
            allow,
            requirements.unmapped if requirements else (),
            reserved=_reserved_names(),
            governed=governed,
            data_files={name: data_files.relative} if data_files is not None else None,
            declared_by_project=False,
        )
        readiness = walk.report(
            name, result.ir, serialize=serialize, diagnostics=result.diagnostics
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
        requirements=requirements,
    )


@contextmanager
def _siblings_of(layout: "Layout | None", version: tuple[int, int]) -> Iterator[None]:
    """The modules beside a file on disk, readable by the import-time evaluator while the
    file and its closure are lowered (as a directory's are: see ``sibling_values``)."""
    if layout is None:
        yield
        return
    from svcc.frontends.file_repository import module_sources
    from svcc.frontends.python.sibling_values import reading

    with reading(module_sources(layout.mounts, layout.cache), version):
        yield


def _file_repository(
    main: "tuple[str, bytes, FrontendResult]",
    module: str,
    version: tuple[int, int],
    layout: "Layout | None",
) -> "tuple[Repository | None, tuple[tuple[str, bytes], ...]]":
    """The repository a file is judged in, a one-module repository: its local import
    closure (a file on disk), or the module alone when a relative import needs a graph to
    be judged (source in memory); ``None`` when it has nothing local to judge. Then the
    closure's files, which the bundle carries."""
    if layout is not None:
        closure = layout.closure(*main, version)
        return closure.repository, tuple(closure.files.items())
    ir = main[2].ir
    if ir is not None and any(imp.level for imp in ir.imports):
        from svcc.frontends.file_repository import as_repository

        return as_repository(main, module=module, is_package=False), ()
    return None, ()


def _with_sibling_models(
    result: "FrontendResult", repository: "Repository", module: str, version: tuple[int, int]
) -> "FrontendResult":
    """The main module's result linked to the models of its closure (as a directory's
    modules are when lowered: ``frontends.sibling_models``), and the repository holding it."""
    from svcc.frontends.repository import ModuleSource
    from svcc.frontends.sibling_models import link_models, sources_of

    main = repository.modules[module]
    linked = link_models(
        result,
        module=module,
        is_package=main.file.is_package,
        source_of=sources_of(repository.tree.files),
        python_version=version,
    )
    if linked is not result:
        repository.modules[module] = ModuleSource(file=main.file, result=linked)
    return linked


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
        from svcc.frontends.file_repository import build_closure

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
    source root (see :func:`svcc.frontends.file_repository.source_root`); with ``--module-name``,
    the file's directory holds both the top of ``source/`` and the named package."""
    from svcc.frontends.file_repository import source_root

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
    select: Sequence[str] | None = None,
) -> Analysis:
    """A file on disk, with its local import closure. ``display_path`` is the path shown
    (default: the file name); ``facts_cache`` is shared by a directory analysis; see
    :func:`analyze_source` for ``serialize`` and ``select``."""
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
        select=select,
    )


# -- directories --------------------------------------------------------------------------


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


# -- directories ----------------------------------------------------------------------------


def declared_requirements(
    repo: "Repository",
    requirements: "DeclaredRequirements | None",
    python_version: tuple[int, int] | None = None,
) -> "DeclaredRequirements | None":
    """``--requirements`` when given, else the project's declared dependencies (``pyproject.toml``,
    else ``setup.py`` or ``setup.cfg``: ``ProjectConfig.declared``)."""
    if requirements is not None:
        return requirements
    return repo.tree.config.declared(python_version or target_version(repo))


def target_version(repo: "Repository") -> tuple[int, int] | None:
    """The Python version the repository's modules were read for (each module records it;
    one tree is lowered for one version), None for a tree with no module."""
    for source in repo.modules.values():
        ir = source.result.ir
        if ir is not None:
            return version_tuple(ir.source.python_version)
    return None


def checked_tree(
    root: "Path",
    limits: "TreeLimits | None",
    *,
    strict: bool = True,
    folder_name: str | None = None,
    include_tests: bool = False,
) -> "RepositoryTree":
    """The tree at ``root`` as read (nothing lowered yet); a refused tree (or, ``strict``,
    any refused entry) is an :class:`InputError`. Not ``strict`` (``inspect``), a file over
    the per-file bound is one refused entry, as the analysis service makes it, and the rest
    is analysed, so one large generated file does not hide every module's verdict."""
    from svcc.frontends.repository import TreeRefused, read_tree

    if not root.is_dir():
        raise InputError(f"{root}: not a directory")
    try:
        tree = read_tree(
            root,
            limits,
            folder_name=folder_name,
            oversize_entries=not strict,
            include_tests=include_tests,
        )
    except TreeRefused as exc:
        raise InputError(f"{root}: {exc.diagnostic.code} {exc}") from None
    errors = tree.errors
    if errors and strict:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise InputError(f"{root}: {errors[0].code} {errors[0].message}{more}")
    return tree


def analyze_repository(
    root: "str | os.PathLike[str]",
    *,
    python_version: str | tuple[int, int] | None = None,
    requirements: "DeclaredRequirements | None" = None,
    limits: "TreeLimits | None" = None,
    strict: bool = True,
    encoding: str | None = None,
    folder_name: str | None = None,
    workers: int | None = 1,
    allow: frozenset[str] = frozenset(),
    documents: bool = False,
    include_tests: bool = False,
) -> Analysis:
    """Front end and readiness over the graph. ``strict`` (bundles) refuses a tree with any
    refused entry (exit 2); otherwise (``inspect``, the analysis service) refused entries are
    reported in the document and the rest is analysed. ``folder_name``: the root folder's
    name for the user (a git export's is its ``--subdir``'s; see ``read_tree``).
    ``workers``: processes lowering a large tree (``None``: one per CPU, as the CLI asks),
    which then judge the modules they lowered (see ``RepositoryReadiness.run``) and, with
    ``documents`` (``inspect DIR --format json``), render their documents
    (:attr:`Analysis.rendered`) and send no report back (reading one is an error).
    ``include_tests`` reads test code and tool scripts too (see ``read_tree``)."""
    from pathlib import Path

    from svcc.frontends.repository import lowered_tree

    tree = checked_tree(
        Path(root), limits, strict=strict, folder_name=folder_name, include_tests=include_tests
    )
    version = version_tuple(python_version)
    with lowered_tree(tree, python_version=version, workers=workers, encoding=encoding) as (
        repo,
        pool,
    ):
        analysis = assess_repository(
            repo,
            requirements,
            allow,
            path=os.fspath(root),
            pool=pool,
            python_version=version,
            keep_reports=not (documents and pool is not None),
        )
        if documents and pool is not None:
            from svcc.compiler.repository_document import render_in_workers

            analysis = evolve(analysis, rendered=render_in_workers(pool))
        return analysis


def assess_repository(
    repo: "Repository",
    requirements: "DeclaredRequirements | None" = None,
    allow: frozenset[str] = frozenset(),
    *,
    path: str = ".",
    pool: "LoweringPool | None" = None,
    python_version: tuple[int, int] | None = None,
    keep_reports: bool = True,
) -> Analysis:
    """Readiness over the module graph of a repository already read and lowered (the
    analysis service lowers each module under its own per-file budget, then comes here, so
    it judges exactly as ``svcc inspect DIR``). ``pool``: the workers that lowered it, which
    judge the modules they hold (the same reports; ``keep_reports`` false: kept there for
    their documents, not sent). ``python_version``: the target's, which declared
    requirements' markers are evaluated for (default: the one the modules were read
    for)."""
    from svcc.compiler.passes.repository_readiness import RepositoryReadiness

    declared = declared_requirements(repo, requirements, python_version)
    readiness = RepositoryReadiness(
        repo,
        declared.import_names if declared else frozenset(),
        declared.distributions if declared else (),
        allow=allow | frozenset(repo.tree.config.allow),  # checked with the tree
        unmapped=declared.unmapped if declared else (),
    )
    reports = readiness.run(pool, keep=keep_reports)
    return Analysis(
        path=path, repository=repo, reports=reports, requirements=declared, kind=DIRECTORY
    )


# -- the one entry ----------------------------------------------------------------------------


def analyze(path: "str | os.PathLike[str]", options: AnalyzeOptions = DEFAULTS) -> Analysis:
    """Any input: source held in memory (``options.source``), a directory (the repository
    front end) or a file or notebook on disk (with its local import closure). The front
    end is the only thing that differs; :class:`~svcc.compiler.options.AnalyzeOptions`
    says which option applies to which."""
    o = options
    if o.source is not None:
        return analyze_source(
            o.source,
            path=os.fspath(path),
            module=o.module_name,
            python_version=o.python_version,
            encoding=o.encoding,
            source_format=o.source_format,
            check_name=o.check_name,
            requirements=o.requirements,
            governed=o.governed,
            allow=o.allow,
            serialize=o.serialize,
            select=o.select,
        )
    if os.path.isdir(path):
        _refuse_file_options(o)
        analysis = analyze_repository(
            path,
            python_version=o.python_version,
            requirements=o.requirements,
            strict=o.strict,
            encoding=o.encoding,
            folder_name=o.folder_name,
            workers=o.workers,
            allow=o.allow,
            documents=o.documents,
            include_tests=o.include_tests,
        )
        if o.notebooks:
            analysis = evolve(analysis, notebooks=analyze_notebooks(path, o, analysis))
        return analysis
    return analyze_file(
        path,
        module_name=o.module_name,
        python_version=o.python_version,
        requirements=o.requirements,
        encoding=o.encoding,
        governed=o.governed,
        allow=o.allow,
        data=o.data,
        serialize=o.serialize,
        display_path=o.display_path,
        facts_cache=o.facts_cache,
        select=o.select,
    )


def analyze_notebooks(
    root: "str | os.PathLike[str]", options: AnalyzeOptions, analysis: Analysis
) -> dict[str, Analysis]:
    """The notebooks below ``root`` (the tree's skip rules, test code as the directory's
    analysis read it), each analysed as ``inspect FILE`` would and shown by its tree path;
    one that cannot be read is an entry saying why (``SVC-F007``)."""
    from pathlib import Path

    from svcc.frontends.repository import notebook_paths

    assert analysis.repository is not None  # a directory's analysis
    include_tests = options.include_tests or analysis.repository.tree.config.include_tests
    each = AnalyzeOptions(python_version=options.python_version, requirements=options.requirements)
    out: dict[str, Analysis] = {}
    for rel in notebook_paths(Path(root), include_tests=include_tests):
        try:
            out[rel] = analyze(Path(root) / rel, evolve(each, display_path=rel))
        except InputError as exc:
            out[rel] = failed_analysis(rel, str(exc))
    return out


def _refuse_file_options(options: AnalyzeOptions) -> None:
    """The options that name one file's module or data, refused for a directory."""
    from svcc.contracts.errors import UsageError

    if options.module_name:
        raise UsageError("--module-name names one module; it cannot apply to a directory")
    if options.data:
        raise UsageError(
            "--data declares a single file's data files; a directory declares them "
            "in [tool.svcc] data-files of its pyproject.toml"
        )


# -- selection --------------------------------------------------------------------------------


def select(
    analysis: Analysis,
    selection: str | Sequence[str] | None,
    *,
    exclude: Sequence[str] = (),
    include_all_ready: bool = False,
) -> list[tuple[ModuleIR, Capability]]:
    """:meth:`Analysis.select` (the CLI's and the service's name for it)."""
    return analysis.select(selection, exclude=exclude, include_all_ready=include_all_ready)
