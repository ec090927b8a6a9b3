"""The declared dependencies of a setuptools project, read without running anything.

Many libraries declare what they need in ``setup.cfg`` (``[options] install_requires``) or in
``setup.py`` (``setup(install_requires=[...])``) rather than in ``pyproject.toml``. Both are
read statically: ``setup.cfg`` with ``configparser``, ``setup.py`` by reading its syntax tree
for the ``setup(...)`` call's ``install_requires=`` when it is a literal list of strings (or
one string of lines), or a module-level name bound once to one. ``setup.py`` is never run,
so anything else (a list built by code, read from a file, a ``**kwargs``) is not read, and a
note says so: the user then declares the dependencies in ``pyproject.toml`` or with
``--requirements``. Extras (``extras_require``) are not requirements. Setuptools gives
``setup.py``'s keyword precedence over ``setup.cfg``, and so does this reader.
"""

import ast
import configparser
import stat
from pathlib import Path
from typing import Final

from attrs import frozen
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import F039_DEPENDENCIES_READ
from svcc.contracts.errors import InputError
from svcc.contracts.requirements import parse_requirements

SETUP_PY: Final = "setup.py"
SETUP_CFG: Final = "setup.cfg"
_CFG_WHERE: Final = f"{SETUP_CFG} [options] install_requires"
_PY_WHERE: Final = f"{SETUP_PY} setup(install_requires=...)"
# Names of the call in ``setup.py`` that declares the project.
_SETUP_CALLS: Final = frozenset({"setup", "setuptools.setup", "distutils.core.setup"})


@frozen(kw_only=True)
class SetupDependencies:
    """What the setuptools files declare: the requirement lines and where they were read
    (``origin``, for messages), the files read (path, ``sha256:``) so the tree's digest covers
    them, and one note (``SVC-F039``) saying what was read, or why nothing could be."""

    lines: tuple[str, ...]
    origin: str
    files: tuple[tuple[str, str], ...]
    note: Diagnostic


def setup_dependencies(root: Path, max_bytes: int) -> SetupDependencies | None:
    """The dependencies ``setup.py`` or else ``setup.cfg`` declares under ``root``; None when
    neither file declares any (or neither exists). A file over ``max_bytes``, not a regular
    file, not UTF-8 or not parsable is not read (a note, never a refusal of the tree: it is
    packaging, not a module)."""
    read: list[tuple[str, str]] = []
    for name, reader in ((SETUP_PY, _from_setup_py), (SETUP_CFG, _from_setup_cfg)):
        text = _text(root / name, max_bytes)
        if text is None:
            continue
        from svcc.ir.canonical import digest_bytes

        read.append((name, digest_bytes(text.encode("utf-8", "surrogatepass"))))
        found = reader(text)
        if found is None:
            continue
        lines, problem = found
        where = _PY_WHERE if name == SETUP_PY else _CFG_WHERE
        if problem is None:
            problem = _invalid(lines, where)
        if problem is not None:
            message = f"{where} is not read: {problem}; declare the dependencies in "
            message += "pyproject.toml ([project] dependencies) or with --requirements FILE"
            return SetupDependencies(lines=(), origin=where, files=tuple(read), note=_note(message))
        shown = ", ".join(lines) if lines else "none"
        return SetupDependencies(
            lines=lines,
            origin=where,
            files=tuple(read),
            note=_note(f"declared dependencies read from {where}: {shown}"),
        )
    return None


def _note(message: str) -> Diagnostic:
    return diag(F039_DEPENDENCIES_READ, message, None)


def _invalid(lines: tuple[str, ...], where: str) -> str | None:
    try:
        parse_requirements("\n".join(lines), where)
    except InputError as exc:
        return str(exc).removeprefix(f"{where}:")
    return None


def _text(path: Path, max_bytes: int) -> str | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
        return None
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _from_setup_cfg(text: str) -> tuple[tuple[str, ...], str | None] | None:
    """``[options] install_requires``: one requirement a line, ``#`` comments skipped."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, SETUP_CFG)
    except configparser.Error as exc:
        return (), f"not a valid configuration file ({str(exc).splitlines()[0]})"
    if not parser.has_option("options", "install_requires"):
        return None
    value = parser.get("options", "install_requires")
    if value.strip().startswith(("file:", "attr:")):
        return (), f"{value.strip().split()[0]} names where the list is, read only by setuptools"
    lines = (line.split(" #", 1)[0].strip() for line in value.splitlines())
    return tuple(line for line in lines if line and not line.startswith("#")), None


def _from_setup_py(text: str) -> tuple[tuple[str, ...], str | None] | None:
    """The ``setup(...)`` call's ``install_requires=``: a literal list (or tuple) of strings,
    or a name bound once, at module level, to one and never changed."""
    try:
        tree = ast.parse(text, SETUP_PY)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return (), "it does not parse"
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_setup(n.func)]
    values = [k.value for c in calls for k in c.keywords if k.arg == "install_requires"]
    if not values:
        if any(k.arg is None for c in calls for k in c.keywords):
            return (), "setup() takes **keywords, so install_requires may be among them"
        return None
    if len(values) > 1:
        return (), "more than one setup() call names install_requires"
    value = values[0]
    if isinstance(value, ast.Name):
        bound = _bound_once(tree, value.id)
        if bound is None:
            return (), f"{value.id} is not a name bound once to a literal list"
        value = bound
    strings = _literal_strings(value)
    if strings is None:
        return (), f"{ast.unparse(value)[:60]!r} is not a literal list of strings"
    return strings, None


def _is_setup(func: ast.expr) -> bool:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return False
    return ".".join([func.id, *reversed(parts)]) in _SETUP_CALLS


def _literal_strings(node: ast.expr) -> tuple[str, ...] | None:
    """A list or tuple of string literals, or one string (setuptools reads its lines)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        lines = (line.split(" #", 1)[0].strip() for line in node.value.splitlines())
        return tuple(line for line in lines if line and not line.startswith("#"))
    if not isinstance(node, ast.List | ast.Tuple):
        return None
    out = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return tuple(out) if len(out) == len(node.elts) else None


def _bound_once(tree: ast.Module, name: str) -> ast.expr | None:
    """The value ``name`` is bound to at module level, when that is its only binding and
    nothing reads it through an attribute (``REQUIRES.append(...)``) or a subscript."""
    stores = [
        n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and
        isinstance(n.ctx, ast.Store | ast.Del)
    ]  # fmt: skip
    changed = any(
        isinstance(n, ast.Attribute | ast.Subscript)
        and isinstance(n.value, ast.Name)
        and n.value.id == name
        for n in ast.walk(tree)
    )
    if len(stores) != 1 or changed:
        return None
    for statement in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign):
            target, value = statement.target, statement.value
        if isinstance(target, ast.Name) and target.id == name:
            return value
    return None
