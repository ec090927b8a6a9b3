"""Reading a repository tree: which files are declared, under which source roots, within limits.

A repository is read from a directory (a local tree, or the export of a git commit). Source
roots come from ``[tool.svcc] source-roots`` of the project's ``pyproject.toml``, else ``src/``
when it holds Python files, else the tree root. Every ``.py`` file below a root is declared
(hidden folders and build/tool folders skipped); anything that is not a regular file or a
folder (a symlink, a FIFO, a socket, a device) is refused, because a bundle built from the
tree must hold exactly the bytes that were read. Limits are checked while walking, so a huge
tree is refused before it is read.
"""

import os
import stat
import tomllib
from pathlib import Path
from typing import Any, Final

import attrs
from attrs import frozen
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import (
    F008_REPOSITORY_ENTRY,
    F009_DUPLICATE_MODULE,
    F010_REPOSITORY_LIMIT,
    F011_NOT_A_MODULE,
    F037_TEST_CODE_LEFT_OUT,
    F039_DEPENDENCIES_READ,
)
from svcc.contracts.errors import InputError
from svcc.contracts.names import escaped, is_utf8
from svcc.contracts.requirements import DeclaredRequirements, parse_requirements
from svcc.contracts.security import unknown_kind
from svcc.frontends.cog import COG_FILE, CogConfig, keys_note, read_cog
from svcc.frontends.repository._data import DataFile, DataRefused, check_pattern
from svcc.frontends.repository._data import collect as collect_data
from svcc.frontends.repository._folders import has_python as _has_python
from svcc.frontends.repository._folders import skipped as _skipped
from svcc.frontends.repository._folders import test_or_tool
from svcc.frontends.repository._poetry import poetry_dependencies
from svcc.frontends.repository._roots import find_roots
from svcc.frontends.repository._setup_files import setup_dependencies

PYPROJECT: Final = "pyproject.toml"


@frozen(kw_only=True)
class TreeLimits:
    """The specification's bundle limits (files, total size), applied to the declared files,
    plus a per-file bound and a bound on ``pyproject.toml``."""

    max_files: int = 4096
    max_total_bytes: int = 64 * 1024 * 1024
    max_file_bytes: int = 4 * 1024 * 1024
    max_pyproject_bytes: int = 1024 * 1024


@frozen(kw_only=True)
class SourceFile:
    """A declared module file. ``path`` is relative to the tree root (POSIX)."""

    path: str
    module: str
    is_package: bool
    data: bytes


@frozen(kw_only=True)
class ProjectConfig:
    """What ``pyproject.toml`` says about the project (absent file → all empty)."""

    source_roots: tuple[str, ...] | None
    name: str | None
    dependencies: tuple[str, ...]
    pyproject_sha256: str | None
    # ``[tool.svcc] allow``: security effect kinds the project opts into (the readiness
    # pass checks the names).
    allow: tuple[str, ...] = ()
    # ``[tool.svcc] import-names``: distribution → the modules it provides.
    import_names: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # ``[tool.svcc] data-files``: globs of the files modules read at import (``_data``).
    data_files: tuple[str, ...] = ()
    # ``[tool.svcc] select``: the functions the project serves (``svcc check`` keeps them
    # eligible), as ``--select`` names them.
    select: tuple[str, ...] = ()
    # ``[tool.svcc] include-tests``: read test code and tool scripts as modules too.
    include_tests: bool = False
    # ``cog.yaml`` beside ``pyproject.toml`` (a Cog project): its predictor, and its Python
    # packages, declared with ``dependencies`` (see ``svcc.frontends.cog``).
    cog: CogConfig | None = None
    # Where ``dependencies`` were declared (for messages); the setuptools files read for
    # them when ``pyproject.toml`` declares none (path, ``sha256:``; the tree's digest
    # covers them) and the note saying where they were read (``SVC-F039``: the file it
    # concerns, the note), for setuptools files and Poetry's table.
    dependencies_origin: str = "pyproject.toml dependencies"
    setup_files: tuple[tuple[str, str], ...] = ()
    dependencies_note: tuple[str, Diagnostic] | None = None

    def declared(self, python_version: tuple[int, int] | None) -> DeclaredRequirements | None:
        """The declared dependencies as the analysis reads them (markers evaluated for
        ``python_version``, the target's), None when there are none."""
        if not self.dependencies:
            return None
        return parse_requirements(
            "\n".join(self.dependencies),
            self.dependencies_origin,
            dict(self.import_names),
            python_version=python_version,
        )


@frozen(kw_only=True)
class RepositoryTree:
    roots: tuple[str, ...]
    files: tuple[SourceFile, ...]
    # Namespace packages: dotted names of folders below a root that hold modules but no
    # ``__init__.py``.
    namespaces: frozenset[str]
    config: ProjectConfig
    # Entries refused or skipped, each with the path it concerns (sorted by path).
    problems: tuple[tuple[str, Diagnostic], ...]
    # The tree is itself this regular package (see :func:`package_prefix`), else None.
    package: str | None = None
    # The declared data files (``[tool.svcc] data-files``), read, in path order.
    data: tuple[DataFile, ...] = ()

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return tuple(d for _, d in self.problems)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")


class TreeRefused(Exception):
    """The tree cannot be read at all (a limit, a bad ``pyproject.toml``, an unreadable root)."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _str_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TreeRefused(
            diag(F008_REPOSITORY_ENTRY, f"{PYPROJECT}: {where} must be a list of strings", None)
        )
    return tuple(value)


def with_cog(root: Path, config: ProjectConfig) -> ProjectConfig:
    """``config`` with the directory's ``cog.yaml`` (when it has one): the predictor, and its
    Python packages declared after ``pyproject.toml``'s own dependencies."""
    try:
        cog = read_cog(root)
    except InputError as exc:  # refused as any project file is (one line, exit 2)
        raise TreeRefused(diag(F008_REPOSITORY_ENTRY, str(exc), None)) from None
    if cog is None:
        return config
    extra = tuple(r for r in cog.requirements if r not in config.dependencies)
    return attrs.evolve(config, cog=cog, dependencies=(*config.dependencies, *extra))


def read_config(root: Path, limits: TreeLimits) -> ProjectConfig:
    """``[tool.svcc] source-roots`` / ``dependencies`` and ``[project] dependencies``; when
    ``pyproject.toml`` declares no dependencies (no ``dependencies`` key in either table),
    those of ``setup.py`` or ``setup.cfg`` (read statically, ``_setup_files``)."""
    config = _pyproject_config(root, limits)
    if config.dependencies_origin != "":
        return config
    found = setup_dependencies(root, limits.max_pyproject_bytes)
    if found is None:
        return attrs.evolve(config, dependencies_origin=_PROJECT_WHERE)
    return attrs.evolve(
        config,
        dependencies=found.lines,
        dependencies_origin=found.origin,
        setup_files=found.files,
        dependencies_note=(found.files[-1][0], found.note),
    )


_PROJECT_WHERE: Final = "pyproject.toml dependencies"


def _pyproject_config(root: Path, limits: TreeLimits) -> ProjectConfig:
    """What ``pyproject.toml`` says; ``dependencies_origin`` is empty when it declares no
    dependencies at all (then the setuptools files may)."""
    from svcc.ir.canonical import digest_bytes

    path = root / PYPROJECT
    try:
        info = path.lstat()
    except FileNotFoundError:
        return ProjectConfig(
            source_roots=None,
            name=None,
            dependencies=(),
            pyproject_sha256=None,
            dependencies_origin="",
        )
    if not stat.S_ISREG(info.st_mode):
        raise TreeRefused(diag(F008_REPOSITORY_ENTRY, f"{PYPROJECT} is not a regular file", None))
    if info.st_size > limits.max_pyproject_bytes:
        raise TreeRefused(
            diag(
                F010_REPOSITORY_LIMIT,
                f"{PYPROJECT} is {info.st_size} bytes, over the "
                f"{limits.max_pyproject_bytes}-byte limit",
                None,
            )
        )
    data = path.read_bytes()
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TreeRefused(
            diag(F008_REPOSITORY_ENTRY, f"{PYPROJECT} is not valid TOML: {exc}", None)
        ) from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise TreeRefused(
            diag(F008_REPOSITORY_ENTRY, f"{PYPROJECT} is not valid TOML: nested too deeply", None)
        ) from None
    tool = _table(_table(doc.get("tool", {}), "[tool]").get("svcc", {}), "[tool.svcc]")
    unknown = sorted(set(tool) - TOOL_KEYS)
    if unknown:  # a misspelt key (``data_files``) would silently declare nothing
        raise TreeRefused(
            diag(
                F008_REPOSITORY_ENTRY,
                f"{PYPROJECT}: [tool.svcc] has no key {unknown[0]!r} "
                f"(known: {', '.join(sorted(TOOL_KEYS))})",
                None,
            )
        )
    project = _table(doc.get("project", {}), "[project]")
    roots = None
    if "source-roots" in tool:
        roots = _str_list(tool["source-roots"], "[tool.svcc] source-roots")
        if not roots:  # it read no module at all, silently
            raise TreeRefused(
                diag(
                    F008_REPOSITORY_ENTRY,
                    f"{PYPROJECT}: [tool.svcc] source-roots is empty; name the folders that "
                    'hold the modules (["src"], ["."]) or remove the key',
                    None,
                )
            )
        for entry in roots:
            parts = entry.split("/")
            if entry.startswith("/") or "\\" in entry or ".." in parts or not entry:
                raise TreeRefused(
                    diag(
                        F008_REPOSITORY_ENTRY,
                        f"{PYPROJECT}: source root {entry!r} escapes the tree "
                        "(give a relative path without '..')",
                        None,
                    )
                )
    where = "[tool.svcc] dependencies" if "dependencies" in tool else "[project] dependencies"
    deps = _requirements(
        tool["dependencies"] if "dependencies" in tool else project.get("dependencies", []), where
    )
    name = project.get("name")
    declared = "dependencies" in tool or "dependencies" in project
    origin = _PROJECT_WHERE if declared else ""
    note = None
    poetry = _table(doc.get("tool", {}), "[tool]").get("poetry", {})
    if not declared and isinstance(poetry, dict) and "dependencies" in poetry:
        deps, origin, note = _poetry(poetry["dependencies"])
    return ProjectConfig(
        source_roots=roots,
        name=name if isinstance(name, str) and name else None,
        dependencies=deps,
        dependencies_origin=origin,
        dependencies_note=note,
        pyproject_sha256=digest_bytes(data),
        allow=_allow(tool.get("allow", [])),
        import_names=_import_names(tool.get("import-names", {})),
        data_files=_data_patterns(tool.get("data-files", [])),
        select=_str_list(tool.get("select", []), "[tool.svcc] select"),
        include_tests=_flag(tool.get("include-tests", False), "[tool.svcc] include-tests"),
    )


_POETRY_WHERE: Final = "pyproject.toml [tool.poetry.dependencies]"


def _poetry(table: Any) -> tuple[tuple[str, ...], str, tuple[str, Diagnostic]]:
    """Poetry's dependencies as requirement lines (``_poetry``), and the note saying so; an
    entry that is not translated, or not valid once translated, is named in the note."""
    lines, skipped = poetry_dependencies(table)
    valid: list[str] = []
    for line in lines:
        try:
            parse_requirements(line, _POETRY_WHERE)
        except InputError:
            skipped += (line.split(";")[0],)
            continue
        valid.append(line)
    message = f"declared dependencies read from {_POETRY_WHERE}: {', '.join(valid) or 'none'}"
    if skipped:
        message += (
            f"; not read: {', '.join(skipped)} (declare them in [project] dependencies or "
            "with --requirements FILE)"
        )
    return tuple(valid), _POETRY_WHERE, (PYPROJECT, diag(F039_DEPENDENCIES_READ, message, None))


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise TreeRefused(
            diag(F008_REPOSITORY_ENTRY, f"{PYPROJECT}: {where} must be true or false", None)
        )
    return value


def _requirements(value: Any, where: str) -> tuple[str, ...]:
    """The declared dependencies, parsed here as the analysis parses them (one line per
    entry, ``contracts.requirements``), so an invalid one is refused with the tree: one line
    naming the table and the entry's number (``[project] dependencies:2: ...``)."""
    deps = _str_list(value, where)
    try:
        parse_requirements("\n".join(deps), f"{PYPROJECT}: {where}")
    except InputError as exc:
        raise TreeRefused(diag(F008_REPOSITORY_ENTRY, str(exc), None)) from None
    return deps


# The keys of ``[tool.svcc]`` (README, Repositories and Data files).
TOOL_KEYS = frozenset(
    {
        "allow",
        "data-files",
        "dependencies",
        "import-names",
        "include-tests",
        "select",
        "source-roots",
    }
)


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TreeRefused(
            diag(F008_REPOSITORY_ENTRY, f"{PYPROJECT}: {where} must be a table", None)
        )
    return value


def _data_patterns(value: Any) -> tuple[str, ...]:
    patterns = _str_list(value, "[tool.svcc] data-files")
    try:
        for pattern in patterns:
            check_pattern(pattern)
    except DataRefused as exc:
        raise TreeRefused(exc.diagnostic()) from None
    return patterns


def _allow(value: Any) -> tuple[str, ...]:
    """``[tool.svcc] allow``, refused here (with the tree) when it names no kind: a
    misspelt kind would otherwise be noticed only by the analysis, not as a pyproject key."""
    kinds = _str_list(value, "[tool.svcc] allow")
    reason = unknown_kind(kinds)
    if reason is not None:
        raise TreeRefused(
            diag(F008_REPOSITORY_ENTRY, f"{PYPROJECT}: [tool.svcc] allow: {reason}", None)
        )
    return kinds


def _import_names(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    where = "[tool.svcc] import-names"
    if not isinstance(value, dict):
        raise TreeRefused(
            diag(F008_REPOSITORY_ENTRY, f"{PYPROJECT}: {where} must be a table", None)
        )
    out = tuple(
        (dist, _str_list(modules, f"{where}.{dist}")) for dist, modules in sorted(value.items())
    )
    for dist, modules in out:  # as ``# import:`` in a requirements file
        bad = [m for m in modules if not all(p.isidentifier() for p in m.split("."))]
        if bad:
            raise TreeRefused(
                diag(
                    F008_REPOSITORY_ENTRY,
                    f"{PYPROJECT}: {where}.{dist} names {bad[0]!r}, not a module",
                    None,
                )
            )
    return out


def _not_a_module(shown: str) -> str:
    """Why a file is not a module here, and exactly what to pass instead."""
    parts = shown.split("/")
    for depth, folder in enumerate(parts[:-1]):
        if not folder.isidentifier():
            root = escaped("/".join(parts[: depth + 1]))
            return (
                f"folder {folder!r} is not a Python name, so the file is not a module here; "
                f"pass that folder as the directory (svcc inspect {root}) or add "
                f'"{root}" to [tool.svcc] source-roots'
            )
    return (
        "not an importable module name; the file is not a module (rename it, or inspect it "
        "alone with --module-name NAME)"
    )


def _normal_root(entry: str) -> str:
    parts = [p for p in entry.split("/") if p not in ("", ".")]
    return "/".join(parts) or "."


def choose_roots(root: Path, config: ProjectConfig) -> tuple[str, ...]:
    if config.source_roots is not None:
        roots = tuple(dict.fromkeys(_normal_root(r) for r in config.source_roots))
        for entry in roots:
            folder = root / entry
            if folder.is_symlink() or not folder.is_dir():
                raise TreeRefused(
                    diag(
                        F008_REPOSITORY_ENTRY,
                        f"{PYPROJECT}: source root {entry!r} is not a folder of the tree",
                        None,
                    )
                )
        return roots
    src = root / "src"
    if not src.is_symlink() and src.is_dir() and _has_python(src):
        return ("src",)
    return (".",)


def package_prefix(root: Path, roots: tuple[str, ...], folder_name: str) -> str | None:
    """The package the tree itself is, when its root folder holds ``__init__.py`` and no
    project layout says otherwise: pointing svcc at ``site-packages/iniconfig`` means the
    package ``iniconfig``, whose relative imports only work inside it (read as a folder of
    top-level modules, ``from .exceptions import X`` would be a bundle that cannot start)."""
    if roots != (".",) or module_name(f"{folder_name}.py") is None:
        return None
    try:
        info = (root / "__init__.py").lstat()
    except OSError:
        return None
    return folder_name if stat.S_ISREG(info.st_mode) else None


def module_name(relpath: str) -> tuple[str, bool] | None:
    """``a/b.py`` → ``("a.b", False)``; ``a/__init__.py`` → ``("a", True)``; None when the
    path is not a dotted Python name."""
    import keyword

    parts = relpath[:-3].split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    if not parts or any(not p.isidentifier() or keyword.iskeyword(p) for p in parts):
        return None
    return ".".join(parts), is_package


class _Walker:
    def __init__(
        self,
        root: Path,
        roots: tuple[str, ...],
        limits: TreeLimits,
        prefix: str | None,
        oversize_entries: bool,
        *,
        skip: frozenset[str] = frozenset(),
        include_tests: bool = True,
    ) -> None:
        self.root = root
        self.include_tests = include_tests
        self.left_out: list[str] = []  # test code and tool scripts not read (tree paths)
        self.skip = skip  # folders not read (automatic roots' projects: their src/ is read)
        self.roots = roots
        self.prefix = prefix
        self.limits = limits
        self.oversize_entries = oversize_entries
        self.files: list[SourceFile] = []
        self.claimed: dict[str, str] = {}
        self.namespaces: set[str] = set()
        self.problems: list[tuple[str, Diagnostic]] = []
        self.total = 0

    def refuse(self, shown: str, message: str) -> None:
        self.problems.append(
            (shown, diag(F008_REPOSITORY_ENTRY, f"{escaped(shown)}: {message}", None))
        )

    def limit(self, message: str) -> None:
        raise TreeRefused(diag(F010_REPOSITORY_LIMIT, message, None))

    def walk(self, source_root: str) -> None:
        base = self.root if source_root == "." else self.root / source_root
        others = {r for r in self.roots if r != source_root} | self.skip
        self._folder(base, source_root, "", others)

    def _folder(self, folder: Path, source_root: str, rel: str, others: set[str]) -> bool:
        """Walk one folder; returns whether it holds any module (for namespace packages)."""
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.refuse(self._shown(source_root, rel) or ".", f"cannot be read: {exc.strerror}")
            return False
        holds = False
        for entry in entries:
            if not is_utf8(entry.name):
                self._not_utf8(entry, source_root, rel)
                continue
            relpath = f"{rel}/{entry.name}" if rel else entry.name
            shown = self._shown(source_root, relpath)
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                self.refuse(shown, f"cannot be read: {exc.strerror}")
                continue
            mode = info.st_mode
            if self._left_out(entry, shown, stat.S_ISDIR(mode)):
                continue
            if stat.S_ISDIR(mode):
                if _skipped(entry.name) or shown in others:
                    continue
                if self._folder(Path(entry.path), source_root, relpath, others):
                    holds = True
                    dotted = self._module(relpath + "/__init__.py")
                    if dotted is not None and not (Path(entry.path) / "__init__.py").exists():
                        self.namespaces.add(dotted[0])
                continue
            if stat.S_ISLNK(mode):
                self.refuse(shown, "symlinks are refused; a repository holds regular files")
                continue
            if not stat.S_ISREG(mode):
                self.refuse(shown, "special file (not a regular file or folder) refused")
                continue
            if not entry.name.endswith(".py"):
                continue
            if self._declare(Path(entry.path), relpath, shown, info.st_size):
                holds = True
        return holds

    def _not_utf8(self, entry: os.DirEntry[str], source_root: str, rel: str) -> None:
        """A name that is not UTF-8 is refused when it is a module's or a folder of modules'
        (other files are not the repository's business)."""
        if entry.name.endswith((".py", ".ipynb")) or (
            entry.is_dir(follow_symlinks=False) and _has_python(Path(entry.path))
        ):
            name = escaped(entry.name)
            self.refuse(
                self._shown(source_root, f"{rel}/{name}" if rel else name),
                "the name is not UTF-8 (rename it)",
            )

    def _left_out(self, entry: os.DirEntry[str], shown: str, is_dir: bool) -> bool:
        """Whether test code or a packaging/tool script is left out (listed once when it
        holds Python)."""
        if self.include_tests or not (is_dir or entry.name.endswith(".py")):
            return False
        if not test_or_tool(shown, is_dir):
            return False
        if not is_dir or _has_python(Path(entry.path)):
            self.left_out.append(f"{shown}/" if is_dir else shown)
        return True

    @staticmethod
    def _shown(source_root: str, relpath: str) -> str:
        return (
            relpath
            if source_root == "."
            else f"{source_root}/{relpath}"
            if relpath
            else (source_root)
        )

    def _module(self, relpath: str) -> tuple[str, bool] | None:
        return module_name(f"{self.prefix}/{relpath}" if self.prefix else relpath)

    def _declare(self, path: Path, relpath: str, shown: str, size: int) -> bool:
        named = self._module(relpath)
        if named is None:
            self.problems.append(
                (
                    shown,
                    diag(F011_NOT_A_MODULE, f"{escaped(shown)}: {_not_a_module(shown)}", None),
                )
            )
            return False
        if len(self.files) + 1 > self.limits.max_files:
            self.limit(
                f"more than {self.limits.max_files} declared files (at {escaped(shown)}); "
                "narrow [tool.svcc] source-roots"
            )
        if size > self.limits.max_file_bytes:
            limit = self.limits.max_file_bytes
            message = f"{escaped(shown)}: {size} bytes is over the {limit}-byte limit"
            if not self.oversize_entries:
                self.limit(message)
            self.problems.append((shown, diag(F010_REPOSITORY_LIMIT, message, None)))
            return False
        self.total += size
        if self.total > self.limits.max_total_bytes:
            self.limit(
                f"declared files exceed {self.limits.max_total_bytes} bytes in all "
                f"(at {escaped(shown)})"
            )
        module, is_package = named
        if module in self.claimed:
            self.problems.append(
                (
                    shown,
                    diag(
                        F009_DUPLICATE_MODULE,
                        f"{escaped(shown)} and {self.claimed[module]} both give module {module!r}",
                        None,
                    ),
                )
            )
            return False
        self.claimed[module] = shown
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.refuse(shown, f"cannot be read: {exc.strerror}")
            return False
        if len(data) != size:
            self.refuse(shown, "changed while it was read")
            return False
        self.files.append(SourceFile(path=shown, module=module, is_package=is_package, data=data))
        return True


def _left_out_note(paths: list[str]) -> Diagnostic:
    shown = ", ".join(escaped(p) for p in paths[:8])
    more = f" and {len(paths) - 8} more" if len(paths) > 8 else ""
    return diag(
        F037_TEST_CODE_LEFT_OUT,
        f"left out as test code or tool scripts: {shown}{more} (--include-tests, or "
        "[tool.svcc] include-tests = true, reads them)",
        None,
    )


def read_tree(
    root: Path,
    limits: TreeLimits | None = None,
    *,
    folder_name: str | None = None,
    oversize_entries: bool = False,
    include_tests: bool = False,
) -> RepositoryTree:
    """Walk ``root``: declared files, namespaces, configuration and refusals.

    ``folder_name`` is the name the root folder has for the user (default: its own; a git
    export passes the ``--subdir``'s last part, its temporary folder's name means nothing).
    Raises :class:`TreeRefused` for what stops the reading (limits, ``pyproject.toml``);
    entries refused one by one (symlinks, special files, duplicate modules) are error
    diagnostics of the returned tree, so a user sees all of them at once.
    ``oversize_entries`` makes a file over the per-file bound such an entry (``SVC-F010``;
    the file is not read) instead of refusing the tree: the analysis service answers per
    file, and one hostile file must cost its own entry only. Test code and tool scripts
    (``_folders.test_or_tool``) are left out, listed in one note, unless ``include_tests``
    or ``[tool.svcc] include-tests``.
    """
    limits = limits or TreeLimits()
    config = with_cog(root, read_config(root, limits))
    roots = choose_roots(root, config)
    name = root.resolve().name if folder_name is None else folder_name
    package = package_prefix(root, roots, name)
    automatic = None
    if config.source_roots is None and package is None:
        automatic = find_roots(root, roots)
        roots = (*roots, *automatic.roots)
    skip = automatic.skipped if automatic else frozenset()
    walker = _Walker(
        root,
        roots,
        limits,
        package,
        oversize_entries,
        skip=skip,
        include_tests=include_tests or config.include_tests,
    )
    for source_root in roots:
        walker.walk(source_root)
    if walker.left_out:
        walker.problems.append((".", _left_out_note(sorted(walker.left_out))))
    if config.cog is not None:
        walker.problems.append((COG_FILE, keys_note(config.cog)))
    if config.dependencies_note is not None:
        walker.problems.append(config.dependencies_note)
    files = sorted(walker.files, key=lambda f: f.module)
    if automatic is not None:
        walker.problems = automatic.soften(walker.problems)
        walker.problems += automatic.notes([(f.path, f.module) for f in files])
    try:
        data = collect_data(
            root,
            config.data_files,
            roots=roots,
            package=package,
            modules=frozenset(f.path for f in files),
            counted=(len(files), walker.total),
            limits=(TreeLimits().max_files, limits.max_total_bytes),
        )
    except DataRefused as exc:
        raise TreeRefused(exc.diagnostic()) from None
    return RepositoryTree(
        roots=roots,
        files=tuple(files),
        namespaces=frozenset(walker.namespaces - {f.module for f in files}),
        config=config,
        problems=tuple(sorted(walker.problems, key=lambda p: p[0])),
        package=package,
        data=data,
    )
