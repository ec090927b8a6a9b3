"""The one compile entry: what ``svcc compile``, ``svcc generate`` and library callers run
on a file, a notebook or a directory.

Target, options and selection syntax are checked first, before any source is read; then
:func:`svcc.compiler.driver.analyze` (the front end is the one thing that depends on the
input) and :func:`svcc.compiler.bundles.write_bundle` (selection, the target protocol, the
writer), the same calls whatever the path names.
"""

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Final, Protocol

import attrs
from attrs import field, frozen
from svcc.compiler.bundles import CompileResult

if TYPE_CHECKING:
    from pathlib import Path

    from svcc.compiler.driver import Analysis
    from svcc.compiler.options import AnalyzeOptions, CompileOptions
    from svcc.compiler.program_kinds import Selected
    from svcc.contracts.policy import AnyExecution
    from svcc.contracts.target import BundleSpec, FileTree, Target


def compile_path(
    path: "str | Path",
    *,
    target: str,
    output_dir: "str | Path",
    options: "CompileOptions | None" = None,
) -> CompileResult:
    """The one compile entry (``svcc compile``, ``svcc generate``): a file or notebook, or a
    directory (a repository). Front end → readiness → selection → target → writer; nothing
    is written unless every step succeeds; the target, its options and the selection syntax
    are checked before the source is read (see :class:`~svcc.compiler.options.CompileOptions`)."""
    from svcc.compiler.bundles import served_bundle
    from svcc.compiler.options import AnalyzeOptions, CompileOptions
    from svcc.compiler.passes.select import parse_selection
    from svcc.compiler.registry import get_target
    from svcc.contracts.errors import UsageError

    o = options or CompileOptions()
    backend = get_target(target, o.target_options)
    if o.servable_only and backend.bundle is None:
        raise UsageError(
            f"target {target!r} writes no service bundle; use `svcc compile --target {target}`"
        )
    selection = parse_selection(o.select)
    directory = os.path.isdir(path)
    if directory:  # a repository bundle: a servable target, a v1 policy (a process per call)
        served_bundle(backend, "a repository bundle")
    policy = _policy(backend, o.execution_policy, o.runtime_image, o.runtime_platform, directory)
    analysis_options = AnalyzeOptions(
        module_name=o.module_name,
        python_version=o.python_version,
        requirements=o.requirements,
        governed=policy is not None,
        allow=o.allow,
        data=o.data,
        workers=None,  # a large tree is lowered on every core
        select=selection,  # a notebook's slice keeps what the selected functions need
        include_tests=o.include_tests,
    )
    state = Compilation(
        path=str(path),
        options=analysis_options,
        backend=backend,
        output_dir=output_dir,
        execution=policy,
    )
    result = COMPILE.run(state).result
    assert result is not None  # the write pass is the last
    return result


@frozen(kw_only=True)
class Compilation:
    """What the passes hand on: the input and its options, the target, then what each
    pass found (the analysis, the bundle it writes, the selection, the tree, the result)."""

    path: str
    options: "AnalyzeOptions"
    backend: "Target"
    output_dir: "str | Path"
    execution: "AnyExecution | None" = None
    analysis: "Analysis | None" = None
    spec: "BundleSpec | None" = None
    selected: "Selected" = field(factory=list)
    tree: "FileTree | None" = None
    result: CompileResult | None = None

    @property
    def analysed(self) -> "Analysis":
        assert self.analysis is not None  # the front end pass runs first
        return self.analysis


class Pass(Protocol):
    """One step of the pipeline: a name and ``run(state) -> state``."""

    name: ClassVar[str]

    def run(self, state: Compilation) -> Compilation: ...


class FrontEnd:
    """Reads the input and judges it: the front end, the local import closure (a file's) or
    the module graph (a directory's), then every module's passes (``module_passes``:
    verify, the readiness rules) and the import-time risks over the graph."""

    name: ClassVar[str] = "front end"

    def run(self, state: Compilation) -> Compilation:
        from svcc.compiler.driver import analyze
        from svcc.contracts.errors import InputError

        analysis = analyze(state.path, state.options)
        if analysis.error is not None:
            raise InputError(analysis.error_message(state.path))
        return attrs.evolve(state, analysis=analysis)


class Complete:
    """A module that could not be analysed is refused before anything is selected."""

    name: ClassVar[str] = "complete"

    def run(self, state: Compilation) -> Compilation:
        selection = state.options.select
        if selection is None and (cog := cog_selection(state.analysed)) is not None:
            selection = cog  # a Cog project serves its predictor, as Cog would
            state = attrs.evolve(state, options=attrs.evolve(state.options, select=cog))
        if selection is None:
            _all_analysed(state.analysed, state.path)
        else:
            _selected_analysed(state.analysed, state.path, selection)
        return state


def cog_selection(analysis: "Analysis") -> tuple[str, ...] | None:
    """A Cog project's predictor, when ``cog.yaml`` names a function of the analysis
    (``predict: "predict.py:predict"``) or a service class (``predict.py:Predictor``: its
    ``predict`` method): a directory compiled without ``--select`` serves it alone, as Cog
    would. ``None`` otherwise (no ``cog.yaml``, or nothing of that file by that name)."""
    repository = analysis.repository  # a file's one-module program has no cog.yaml
    cog = repository.tree.config.cog if repository else None
    if not repository or cog is None:
        return None
    for ir, cap, _ in analysis.capabilities():  # the module is the tree's name of the file
        served = cap.qualname in (cog.predictor, f"{cog.predictor}.predict")
        if served and repository.modules[ir.module].file.path == cog.predict_file:
            return (cap.id,)
    return None


class Check:
    """What the target's bundle can hold (module names, the kind of program)."""

    name: ClassVar[str] = "check"

    def run(self, state: Compilation) -> Compilation:
        analysis = state.analysed
        return attrs.evolve(state, spec=analysis.kind.check(analysis, state.backend))


class Select:
    """``--select`` over every module's assessments (generate rules 2-3)."""

    name: ClassVar[str] = "select"

    def run(self, state: Compilation) -> Compilation:
        return attrs.evolve(state, selected=state.analysed.select(state.options.select))


class Emit:
    """The program of the selection, emitted by the target (no I/O)."""

    name: ClassVar[str] = "emit"

    def run(self, state: Compilation) -> Compilation:
        from svcc.compiler.bundles import BundleRequest, emit_program

        request = BundleRequest(spec=state.spec, execution=state.execution)
        tree = emit_program(state.analysed, state.backend, state.selected, request)
        return attrs.evolve(state, tree=tree)


class Write:
    """The writer: the tree into the output directory, all or nothing."""

    name: ClassVar[str] = "write"

    def run(self, state: Compilation) -> Compilation:
        from svcc.compiler.bundles import compile_result
        from svcc.compiler.writer import write_tree

        assert state.tree is not None  # the emit pass runs first
        written = write_tree(state.tree, state.output_dir)
        result = compile_result(
            state.analysed, state.backend, state.selected, state.tree, written, state.execution
        )
        return attrs.evolve(state, result=result)


@frozen
class Pipeline:
    """Named passes run in order over one :class:`Compilation`, each with one call shape."""

    passes: tuple[Pass, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.passes)

    def run(self, state: Compilation) -> Compilation:
        for step in self.passes:
            state = step.run(state)
        return state


COMPILE: Final = Pipeline((FrontEnd(), Complete(), Check(), Select(), Emit(), Write()))


def _all_analysed(analysis: "Analysis", shown: str) -> None:
    """A directory compiled whole (no ``--select``) serves every eligible function: a module
    that could not be analysed would drop out of the bundle unsaid (exit 0), where
    ``inspect DIR`` exits 2 for it. Refused (exit 2) with the first one's error; a
    selection of functions elsewhere in the tree still compiles (a module that imports the
    broken one inherits it as ``SVC-R024``)."""
    from svcc.contracts.errors import InputError

    failed = analysis.failed_modules()  # a file's program has none: it analysed
    if not failed:
        return
    repository = analysis.repository
    assert repository is not None  # a failed module is a directory's
    where = os.path.join(shown, repository.modules[failed[0]].file.path)
    first = analysis.file_analysis(failed[0]).error_message(where)
    more = f" (and {len(failed) - 1} more module(s))" if len(failed) > 1 else ""
    raise InputError(f"{first}{more}; fix it, or name the functions to compile with --select")


def _selected_analysed(analysis: "Analysis", shown: str, selection: Sequence[str]) -> None:
    """A selected function of a module that did not analyse is refused with that module's
    error (exit 2), so the user is told why the function cannot be served rather than that
    its name is unknown (the analysis service says why too)."""
    from svcc.contracts.errors import InputError

    failed = set(analysis.failed_modules())  # a file's program has none: it analysed
    for item in selection:
        module = item.split(":")[1] if item.startswith("python:") else item.rpartition(".")[0]
        if module in failed:
            assert analysis.repository is not None  # a failed module is a directory's
            where = os.path.join(shown, analysis.repository.modules[module].file.path)
            error = analysis.file_analysis(module).error_message(where)
            raise InputError(f"{error}; the selection names {item!r} of it")


def _policy(
    backend: "Target",
    execution_policy: "str | Path | None",
    runtime_image: str | None,
    runtime_platform: str | None,
    directory: bool,
) -> "AnyExecution | None":
    """The execution policy, checked against the target. A repository bundle is governed
    by an ``svc.execution/v1`` policy (a local process per call); v2 (a container per call)
    and its image options serve single files."""
    from svcc.contracts.errors import UsageError
    from svcc.contracts.policy import image_options_without_policy, load_execution

    if directory and (runtime_image or runtime_platform):
        raise UsageError(
            "--runtime-image and --runtime-platform go with an svc.execution/v2 policy, "
            "which serves single-file bundles"
        )
    if execution_policy is None:
        image_options_without_policy(runtime_image, runtime_platform)
        return None
    if not backend.supports_execution_policy:
        raise UsageError(f"target {backend.name!r} has no governed execution mode")
    if directory:
        return load_execution(execution_policy, local_only="a repository bundle")
    return load_execution(execution_policy, runtime_image, runtime_platform)
