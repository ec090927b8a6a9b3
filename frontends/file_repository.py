"""A file as a repository: the file and its local import closure (the modules beside it
that it imports, transitively), in the repository front end's shape.

Every front end hands the compiler the repository front end's shape; for one file that is
this module's job. It finds files and lowers each one once, with the ordinary front end,
and returns them as a :class:`~svcc.frontends.repository.Repository`
(:func:`as_repository`): it never judges them. A file is a one-module repository for
readiness; its closure is the rest of that repository, judged by the same walk as
``svcc inspect DIR`` (the compiler's repository readiness pass). A bundle's ``source/``
mirrors one directory, the *root*: the file's own directory, or, for a file inside a
package (its directory holds ``__init__.py``), the nearest folder above that is not a
package (the *source root*: ``name-1.2.3/src`` for ``name-1.2.3/src/pkg/mod.py``). Every
import the front end records in a file of the closure (module level, class bodies, function
and method bodies, guarded or not; never under ``if TYPE_CHECKING`` or ``if __name__ ==
"__main__"``; one reader, the IR's imports, so no file is parsed twice) that names a module
under the root is added, with the ``__init__.py`` of every package on its way. Nothing
outside the root is ever read, and symlinks are not followed (a link could lead outside the
tree).

It sits beside the repository package rather than inside it: analysing a file that imports
nothing beside it must not load the tree reader (``pathlib``, ``tomllib``: see
``tests/project/test_layering.py``), so :mod:`svcc.frontends.repository` is imported only when a
closure or a relative import is there to be judged.
"""

import contextlib
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from svcc.contracts.errors import InputError
from svcc.frontends.source_files import read_source_file
from svcc.ir.imports import package_of, resolve_relative

if TYPE_CHECKING:
    from svcc.frontends.python import FrontendResult
    from svcc.frontends.repository import Repository
    from svcc.ir.model import ModuleIR

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen

# Bounds: a closure larger than this is not a "single file" any more.
MAX_CLOSURE_FILES: Final = 500
MAX_CLOSURE_BYTES: Final = 32 * 1024 * 1024
MAX_PACKAGE_DEPTH: Final = 32


@frozen(kw_only=True)
class LocalModule:
    """One module of the closure: its dotted name, its file (relative to the root, POSIX)
    and where the bundle holds it."""

    name: str
    path: str
    bundle_path: str  # "source/..."


@frozen(kw_only=True)
class LocalClosure:
    """``files`` maps bundle paths to the exact bytes read (what the bundle copies).
    ``repository`` is the file and its closure in the repository front end's shape
    (modules, graph, declared sources), each module lowered once: readiness judges the
    file over it (the compiler's repository readiness pass), as a directory.
    ``None`` when the file has nothing local to judge: it imports no module beside it and
    has no relative import (every import it has is external)."""

    files: Mapping[str, bytes]
    repository: "Repository | None" = None


# Per-file facts read once (path -> ``(bytes, imports or None, error)``) and module
# lookups; a directory analysis shares one cache across its files so each module is read,
# parsed and looked up once per worker.
FactsCache = dict[Any, Any]


def source_root(path: str) -> tuple[str, str]:
    """``(root, dotted module name)`` for a file (an absolute path): climb while the folder
    is a package with an identifier name. The name is ``None``-free but may be invalid (the
    stem is not an identifier); callers check it. Paths are strings here (``os.path``): the
    analysis of one file does not import :mod:`pathlib`."""
    folder = os.path.dirname(path)
    name = os.path.basename(path)
    dot = name.rfind(".")
    parts = [name[:dot] if 0 < dot < len(name) - 1 else name]
    for _ in range(MAX_PACKAGE_DEPTH):
        folder_name = os.path.basename(folder)
        init = os.path.join(folder, "__init__.py")
        if not os.path.isfile(init) or not folder_name.isidentifier():
            break
        parts.insert(0, folder_name)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folder, ".".join(parts)


@frozen(kw_only=True)
class ImportFact:
    """One import statement, flattened: the absolute names it may load."""

    level: int
    module: str
    names: tuple[str, ...]
    line: int


def facts_of(ir: "ModuleIR") -> list[ImportFact]:
    """The module's import statements as the front end recorded them (``if TYPE_CHECKING``
    left out; the main guard is never lowered)."""
    return [
        ImportFact(
            level=imp.level,
            module=imp.module,
            names=imp.names,
            line=imp.span.line,
        )
        for imp in ir.imports
        if not imp.type_checking
    ]


def absolute_names(fact: ImportFact, package: str) -> list[str] | None:
    """The absolute modules an import may load (``from p import a`` may load ``p.a``);
    ``None`` when a relative import reaches above the top package."""
    if fact.level:
        base = resolve_relative(package, fact.level, fact.module)
        if base is None:
            return None
    else:
        base = fact.module
    return [base, *(f"{base}.{n}" for n in fact.names)]


class _Finder:
    def __init__(self, mounts: tuple[tuple[str, str], ...], memo: dict[Any, Any]) -> None:
        self.mounts = mounts
        self.memo = memo  # shared by a directory analysis: file-system lookups done once

    def locate(self, name: str) -> list[tuple[str, str | None, bool]] | None:
        key = ("locate", self.mounts, name)
        if key not in self.memo:
            self.memo[key] = self._locate(name)
        found: list[tuple[str, str | None, bool]] | None = self.memo[key]
        return found

    def _locate(self, name: str) -> list[tuple[str, str | None, bool]] | None:
        """``[(dotted, file, is_package), ...]`` for ``name`` and the packages on its way
        (``file`` is ``None`` for a namespace package), or ``None`` when ``name`` is not
        under a mounted directory."""
        for prefix, folder in self.mounts:
            if prefix and name != prefix and not name.startswith(prefix + "."):
                continue
            rest = name[len(prefix) :].lstrip(".").split(".") if name != prefix else []
            if not rest or not all(p.isidentifier() for p in rest):
                continue
            found: list[tuple[str, str | None, bool]] = []
            current = folder
            dotted = prefix
            for index, part in enumerate(rest):
                dotted = f"{dotted}.{part}" if dotted else part
                last = index == len(rest) - 1
                package_dir = os.path.join(current, part)
                init = os.path.join(package_dir, "__init__.py")
                module_file = os.path.join(current, f"{part}.py")
                if _regular(init):
                    found.append((dotted, init, True))
                    current = package_dir
                elif last and _regular(module_file):
                    found.append((dotted, module_file, False))
                elif os.path.isdir(package_dir) and not os.path.islink(package_dir):
                    found.append((dotted, None, True))  # a namespace package: nothing to copy
                    current = package_dir
                else:
                    break
            else:
                return found
        return None


def module_sources(
    mounts: tuple[tuple[str, str], ...], cache: FactsCache
) -> "Callable[[str], tuple[bytes, bool] | None]":
    """A module's bytes and whether it is a package, found as the closure finds modules
    (``None``: no such module under the mounts, or a file that cannot be read): what the
    import-time evaluator reads another module's values from (``sibling_values``)."""
    finder = _Finder(mounts, cache)

    def lookup(name: str) -> tuple[bytes, bool] | None:
        key = ("source", mounts, name)
        if key not in cache:
            found = (finder.locate(name) or [])[-1:]
            cache[key] = None
            if found and found[0][0] == name and found[0][1] is not None:
                with contextlib.suppress(InputError):  # unreadable: not a module to read
                    cache[key] = (read_source_file(found[0][1]), found[0][2])
        value: tuple[bytes, bool] | None = cache[key]
        return value

    return lookup


def _regular(path: str) -> bool:
    return os.path.isfile(path) and not os.path.islink(path)


def _bundle_path(dotted: str, is_package: bool) -> str:
    parts = dotted.split(".")
    return "/".join(["source", *parts, "__init__.py"] if is_package else ["source", *parts]) + (
        "" if is_package else ".py"
    )


def build_closure(
    main: "tuple[str, bytes, FrontendResult]",
    *,
    module: str,
    mounts: tuple[tuple[str, str], ...],
    root: str,
    python_version: tuple[int, int],
    is_package: bool = False,
    cache: FactsCache | None = None,
) -> LocalClosure:
    """The closure of the main module (``(shown path, bytes, front-end result)``),
    ``module`` its dotted name.
    The packages above the main module are part of it: importing it runs them."""
    cache = {} if cache is None else cache
    finder = _Finder(mounts, cache)
    located: set[str] = set()
    modules: dict[str, LocalModule] = {}
    files: dict[str, bytes] = {}
    lowered: dict[str, FrontendResult] = {}
    total = 0
    main_result = main[2]
    main_facts = facts_of(main_result.ir) if main_result.ir is not None else []
    pending: list[tuple[str, bool, str | None]] = [(module, is_package, None)]
    queued: set[str] = {module}

    def enqueue(names: list[str]) -> None:
        for name in names:
            for dotted, file, package in finder.locate(name) or ():
                located.add(dotted)
                if file is None or dotted in queued:
                    continue
                queued.add(dotted)
                pending.append((dotted, package, str(file)))

    main_package = package_of(module, is_package)
    if main_package:
        enqueue([main_package])
    while pending:
        name, package_flag, file = pending.pop()
        facts: list[ImportFact] | None = main_facts
        if file is not None:
            rel = _relative(file, root)
            bundle_path = _bundle_path(name, package_flag)
            modules[name] = LocalModule(name=name, path=rel, bundle_path=bundle_path)
            if len(modules) > MAX_CLOSURE_FILES or total > MAX_CLOSURE_BYTES:
                lowered[name] = _unread(rel)  # judged as a module that cannot be analysed
                continue
            key = ("lowered", file, name, package_flag)
            if key not in cache:
                cache[key] = _lower(file, rel, name, package_flag, python_version)
            data, result, facts = cache[key]
            lowered[name] = result
            total += len(data)
            if result.ir is not None or data:
                files[bundle_path] = data
        package = package_of(name, package_flag)
        for fact in facts or ():
            enqueue(absolute_names(fact, package) or [])
    located_all = frozenset(located) | _mount_parents(mounts)
    relative = any(fact.level for fact in main_facts)
    repository = None
    if modules or located_all or relative:
        repository = as_repository(
            main,
            module=module,
            is_package=is_package,
            modules=modules,
            files=files,
            lowered=lowered,
            located=located_all,
        )
    return LocalClosure(files=dict(sorted(files.items())), repository=repository)


def _unread(rel: str) -> "FrontendResult":
    """A closure module past the bounds: not read, so it did not analyse."""
    from svcc.contracts.diagnostics import diag
    from svcc.contracts.diagnostics.codes import F007_NOT_ANALYSABLE
    from svcc.frontends.python import FrontendResult

    message = (
        f"{rel}: not read: a single file's local import closure is bounded "
        f"({MAX_CLOSURE_FILES} files, {MAX_CLOSURE_BYTES // (1024 * 1024)} MiB); "
        "inspect its folder as a repository"
    )
    return FrontendResult(
        ir=None, diagnostics=(diag(F007_NOT_ANALYSABLE, message, None),), module_text=None
    )


def _mount_parents(mounts: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """A mount's parents are namespace packages of the bundle (``acme`` of ``acme.tools``)."""
    return frozenset(
        ".".join(p.split(".")[:i]) for p, _ in mounts if p for i in range(1, p.count(".") + 2)
    )


def as_repository(
    main: "tuple[str, bytes, FrontendResult]",
    *,
    module: str,
    is_package: bool,
    modules: Mapping[str, LocalModule] | None = None,
    files: Mapping[str, bytes] | None = None,
    lowered: "Mapping[str, FrontendResult] | None" = None,
    located: frozenset[str] = frozenset(),
) -> "Repository":
    """The file and its closure as a repository: the file's module, every closure module
    (one that could not be read or lowered is a module that did not analyse, whose error
    its importers inherit), the namespace packages found on the way, and the graph over
    them. Without a closure, a one-module repository (a relative import in a file held in
    memory is judged over it)."""
    from svcc.frontends.repository import (
        ProjectConfig,
        RepositoryTree,
        SourceFile,
        build_repository,
    )

    path, data, result = main
    sources = [SourceFile(path=path, module=module, is_package=is_package, data=data)]
    results = {module: result}
    for local in (modules or {}).values():
        source = SourceFile(
            path=local.path,
            module=local.name,
            is_package=local.bundle_path.endswith("/__init__.py"),
            data=(files or {}).get(local.bundle_path, b""),
        )
        sources.append(source)
        results[local.name] = (lowered or {})[local.name]
    names = {f.module for f in sources}
    tree = RepositoryTree(
        roots=(".",),
        files=tuple(sorted(sources, key=lambda f: f.module)),
        namespaces=frozenset(located - names - {""}),
        config=ProjectConfig(source_roots=None, name=None, dependencies=(), pyproject_sha256=None),
        problems=(),
    )
    return build_repository(tree, results)


def _relative(file: str, root: str) -> str:
    """``file`` relative to ``root`` (POSIX separators) when it is inside, else as is;
    both are paths the finder joined, so the test is on their text."""
    base = root.rstrip(os.sep) + os.sep
    return file[len(base) :].replace(os.sep, "/") if file.startswith(base) else file


def _lower(
    path: str, rel: str, name: str, is_package: bool, version: tuple[int, int]
) -> "tuple[bytes, FrontendResult, list[ImportFact] | None]":
    """``(bytes, front-end result, import facts)`` of one file, lowered once: the facts
    are the IR's imports (it records every import statement that can run, class bodies and
    methods included). A file that cannot be read is a result with its error."""
    from svcc.frontends.repository import SourceFile, lower_file

    try:
        data = read_source_file(path)
    except InputError as exc:
        from svcc.contracts.diagnostics import diag
        from svcc.contracts.diagnostics.codes import F007_NOT_ANALYSABLE
        from svcc.frontends.python import FrontendResult

        error = diag(F007_NOT_ANALYSABLE, f"{rel}: {str(exc).split(': ', 1)[-1]}", None)
        return b"", FrontendResult(ir=None, diagnostics=(error,), module_text=None), None
    result = lower_file(
        SourceFile(path=rel, module=name, is_package=is_package, data=data), version
    )
    return data, result, facts_of(result.ir) if result.ir is not None else None


__all__ = [
    "LocalClosure",
    "LocalModule",
    "as_repository",
    "build_closure",
    "source_root",
]
