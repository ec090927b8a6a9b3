"""The one compile entry: what ``svcc compile``, ``svcc generate`` and library callers run
on a file, a notebook or a directory.

Target, options and selection syntax are checked first, before any source is read; then
:func:`svcc.compiler.analysis.analyze` (the front end is the one thing that depends on the
input) and :func:`svcc.compiler.bundles.write_bundle` (selection, the target protocol, the
writer), the same calls whatever the path names.
"""

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from svcc.compiler.bundles import CompileResult

if TYPE_CHECKING:
    from pathlib import Path

    from svcc.compiler.analysis import Analysis
    from svcc.contracts.policy import AnyExecution
    from svcc.contracts.requirements import DeclaredRequirements
    from svcc.contracts.target import Target


def compile_path(
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
    include_tests: bool = False,
) -> CompileResult:
    """The one compile entry (``svcc compile``, ``svcc generate``): a file or notebook, or a
    directory (a repository). Front end → readiness → selection → target → writer; nothing
    is written unless every step succeeds; the target, its options and the selection syntax
    are checked before the source is read. ``servable_only`` refuses a target that writes
    no service (``svcc generate``)."""
    from svcc.compiler.analysis import analyze
    from svcc.compiler.bundles import served_bundle, write_bundle
    from svcc.compiler.passes.select import parse_selection
    from svcc.compiler.registry import get_target
    from svcc.contracts.errors import InputError, UsageError

    backend = get_target(target, target_options)
    if servable_only and backend.bundle is None:
        raise UsageError(
            f"target {target!r} writes no service bundle; use `svcc compile --target {target}`"
        )
    selection = parse_selection(select)
    directory = os.path.isdir(path)
    if directory:  # a repository bundle: a servable target, a v1 policy (a process per call)
        served_bundle(backend, "a repository bundle")
    policy = _policy(backend, execution_policy, runtime_image, runtime_platform, directory)
    analysis = analyze(
        path,
        module_name=module_name,
        python_version=python_version,
        requirements=requirements,
        governed=policy is not None,
        allow=allow,
        data=data,
        workers=None,  # a large tree is lowered on every core
        select=selection,  # a notebook's slice keeps what the selected functions need
        include_tests=include_tests,
    )
    if analysis.error is not None:
        raise InputError(analysis.error_message(str(path)))
    if directory and selection is None:
        selection = cog_selection(analysis)
    if directory and selection is None:
        _all_analysed(analysis, str(path))
    elif directory and selection is not None:
        _selected_analysed(analysis, str(path), selection)
    return write_bundle(analysis, backend, output_dir, select=selection, execution=policy)


def cog_selection(analysis: "Analysis") -> tuple[str, ...] | None:
    """A Cog project's predictor, when ``cog.yaml`` names a function of the analysis
    (``predict: "predict.py:predict"``) or a service class (``predict.py:Predictor``: its
    ``predict`` method): a directory compiled without ``--select`` serves it alone, as Cog
    would. ``None`` otherwise (no ``cog.yaml``, or nothing of that file by that name)."""
    repository = analysis.repository
    cog = repository.tree.config.cog if repository is not None else None
    if repository is None or cog is None:
        return None
    for ir, cap, _ in analysis.capabilities():  # the module is the tree's name of the file
        served = cap.qualname in (cog.predictor, f"{cog.predictor}.predict")
        if served and repository.modules[ir.module].file.path == cog.predict_file:
            return (cap.id,)
    return None


def _all_analysed(analysis: "Analysis", shown: str) -> None:
    """A directory compiled whole (no ``--select``) serves every eligible function: a module
    that could not be analysed would drop out of the bundle unsaid (exit 0), where
    ``inspect DIR`` exits 2 for it. Refused (exit 2) with the first one's error; a
    selection of functions elsewhere in the tree still compiles (a module that imports the
    broken one inherits it as ``SVC-R024``)."""
    from svcc.contracts.errors import InputError

    repository = analysis.repository
    assert repository is not None
    failed = analysis.failed_modules()
    if not failed:
        return
    where = os.path.join(shown, repository.modules[failed[0]].file.path)
    first = analysis.file_analysis(failed[0]).error_message(where)
    more = f" (and {len(failed) - 1} more module(s))" if len(failed) > 1 else ""
    raise InputError(f"{first}{more}; fix it, or name the functions to compile with --select")


def _selected_analysed(analysis: "Analysis", shown: str, selection: Sequence[str]) -> None:
    """A selected function of a module that did not analyse is refused with that module's
    error (exit 2): it was "unknown selection 'bad.f'; its functions are: ...", which sent
    the user looking for a typo in a name that is there (the analysis service says why)."""
    from svcc.contracts.errors import InputError

    repository = analysis.repository
    assert repository is not None
    failed = set(analysis.failed_modules())
    for item in selection:
        module = item.split(":")[1] if item.startswith("python:") else item.rpartition(".")[0]
        if module in failed:
            where = os.path.join(shown, repository.modules[module].file.path)
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
