"""A single file's local import closure, judged for import-time risks as a repository is.

A file inside a package (``mdurl/_decode.py``) or one that imports a sibling is bundled with
the modules it imports; importing it runs them, and their parent packages. ``svcc inspect
DIR`` gives a capability the risks of every repository module its import executes
(``SVC-R024``); ``svcc inspect FILE`` must say the same of the same function, so the closure
is read as a small repository and judged by that same walk
(:meth:`RepositoryReadiness.inherit`), not by a second copy of the rule.
"""

from svcc.compiler.closure import LocalClosure
from svcc.compiler.passes.readiness import ReadinessReport
from svcc.compiler.passes.repository_readiness import RepositoryReadiness
from svcc.frontends.python import FrontendResult
from svcc.frontends.repository import (
    ProjectConfig,
    RepositoryTree,
    SourceFile,
    build_repository,
    lower_file,
)

NO_PROJECT = ProjectConfig(source_roots=None, name=None, dependencies=(), pyproject_sha256=None)


def inherit_closure_risks(
    report: ReadinessReport,
    *,
    main: SourceFile,
    result: FrontendResult,
    closure: LocalClosure,
    python_version: tuple[int, int],
    declared_imports: frozenset[str],
    declared_requirements: tuple[str, ...],
    unmapped: tuple[str, ...] = (),
) -> ReadinessReport:
    """``report`` (the main module's) with the closure's import-time risks inherited."""
    files = [main]
    for local in closure.modules.values():
        files.append(
            SourceFile(
                path=local.path,
                module=local.name,
                is_package=local.bundle_path.endswith("/__init__.py"),
                data=closure.files[local.bundle_path],
            )
        )
    modules = {f.module for f in files}
    tree = RepositoryTree(
        roots=(".",),
        files=tuple(sorted(files, key=lambda f: f.module)),
        namespaces=frozenset(closure.located - modules - {""}),
        config=NO_PROJECT,
        problems=(),
    )
    results = {f.module: lower_file(f, python_version) for f in files[1:]}
    results[main.module] = result
    repository = build_repository(tree, results)
    walk = RepositoryReadiness(
        repository, declared_imports, declared_requirements, unmapped=unmapped
    )
    return walk.inherit(main.module, report)
