"""The one compile entry: what ``svcc compile``, ``svcc generate`` and library callers run
on a file, a notebook or a directory.

A file goes through :mod:`svcc.compiler.driver` (front end, readiness over its local import
closure, selection), a directory through :mod:`svcc.compiler.repository` (the module graph);
both end in the same place: the target protocol (``driver.emit_target``: a servable target's
bundle, or one that wraps it) and the writer. The target, its options and the selection
syntax are checked before any source is read, whatever the path names.
"""

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from svcc.compiler.driver import CompileResult, analyze_file, emit_analysis, served_bundle
from svcc.contracts.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

    from svcc.contracts.policy import ExecutionPolicy
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
) -> CompileResult:
    """The one compile entry (``svcc compile``, ``svcc generate``): a file or notebook, or a
    directory (a repository). Front end → readiness → selection → target → writer; nothing
    is written unless every step succeeds; the target, its options and the selection syntax
    are checked before the source is read. ``servable_only`` refuses a target that writes
    no service (``svcc generate``)."""
    from svcc.compiler.passes.select import parse_selection
    from svcc.compiler.registry import get_target
    from svcc.compiler.writer import write_tree
    from svcc.contracts.errors import UsageError
    from svcc.contracts.policy import execution_mode, image_options_without_policy

    backend = get_target(target, target_options)
    if servable_only and backend.bundle is None:
        raise UsageError(
            f"target {target!r} writes no service bundle; use `svcc compile --target {target}`"
        )
    selection = parse_selection(select)
    if os.path.isdir(path):
        if module_name:
            raise UsageError("--module-name names one module; a directory names its own")
        served_bundle(backend, "a repository bundle")
        from svcc.compiler.repository import compile_repository

        return compile_repository(
            path,
            backend,
            output_dir=output_dir,
            selection=selection,
            python_version=python_version,
            requirements=requirements,
            policy=_repository_policy(backend, execution_policy, runtime_image, runtime_platform),
            allow=allow,
        )
    policy = None
    if execution_policy is not None:
        from svcc.contracts.policy import load_execution

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
        execution=execution_mode(policy),
        module=analysis.module,
    )


def _repository_policy(
    backend: "Target",
    execution_policy: "str | Path | None",
    runtime_image: str | None,
    runtime_platform: str | None,
) -> "ExecutionPolicy | None":
    """A repository bundle is governed by an ``svc.execution/v1`` policy (a local process
    per call); v2 (a container per call) and its image options serve single files."""
    from svcc.contracts.errors import UsageError

    if runtime_image or runtime_platform:
        raise UsageError(
            "--runtime-image and --runtime-platform go with an svc.execution/v2 policy, "
            "which serves single-file bundles"
        )
    if execution_policy is None:
        return None
    if not backend.supports_execution_policy:
        raise UsageError(f"target {backend.name!r} has no governed execution mode")
    from svcc.contracts.policy import load_execution

    return load_execution(execution_policy, local_only="a repository bundle")
