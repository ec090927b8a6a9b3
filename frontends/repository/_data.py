"""A repository's declared data files: ``[tool.svcc] data-files`` globs, expanded once.

A project declares the files its modules read at import (a model, a table) with globs
relative to the project root: ``data-files = ["src/shop/*.json", "models/*.joblib"]``. The
globs are POSIX paths whose parts are ``fnmatch`` patterns (``*`` never crosses a ``/``;
a part ``**`` is any number of folders); a wildcard part never matches a hidden name, and
``**`` never walks into hidden or tool folders (``.venv``, ``node_modules``, ...). The same
rule (:func:`matches`) chooses what a git snapshot exports, so a local tree and its commit
declare the same files.

Each file must be a regular file below a source root, reached without a symlink; the files
count in the bundle limits with the declared modules (4,096 files, 64 MiB in all). A glob
that matches nothing, an escape, a symlink or a special file stops the reading with one line
naming it. A data file keeps its place relative to its source root in the bundle
(``source/<path below the root>``), so the module finds it beside itself through
``__file__`` exactly as in the tree.
"""

import os
import posixpath
import stat
from collections.abc import Callable, Iterator, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Final

from attrs import frozen
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import F008_REPOSITORY_ENTRY, F010_REPOSITORY_LIMIT
from svcc.contracts.names import escaped, is_utf8
from svcc.frontends.repository._folders import skipped

WHERE: Final = "[tool.svcc] data-files"


@frozen(kw_only=True)
class DataFile:
    """``path``: relative to the tree root (POSIX); ``bundle_path``: where the bundle holds
    it (``source/...``, its place relative to its source root)."""

    path: str
    bundle_path: str
    data: bytes


class DataRefused(Exception):
    """A declared data file cannot be taken (the tree front end makes it a refusal)."""

    def __init__(self, message: str, *, limit: bool = False) -> None:
        super().__init__(message)
        self.code = F010_REPOSITORY_LIMIT if limit else F008_REPOSITORY_ENTRY

    def diagnostic(self) -> Diagnostic:
        return diag(self.code, str(self), None)


def check_pattern(pattern: str) -> str:
    """``pattern`` when it stays inside the project root; why not otherwise."""
    parts = pattern.split("/")
    if not pattern.strip():
        raise DataRefused(
            f"{WHERE}: {pattern!r} is an empty glob; give a path such as 'data/*.csv'"
        )
    if pattern.startswith("/") or "\\" in pattern or ".." in parts:
        raise DataRefused(
            f"{WHERE}: {pattern!r} escapes the project root (give a relative glob without '..')"
        )
    return "/".join(p for p in parts if p not in ("", "."))


def _wild(part: str) -> bool:
    return any(c in part for c in "*?[")


def _part_matches(part: str, name: str) -> bool:
    if not _wild(part):
        return part == name
    return not name.startswith(".") and fnmatchcase(name, part)


def _descends(name: str) -> bool:
    """Whether ``**`` walks into the folder ``name`` (the module walk's rule)."""
    return not skipped(name)


def matches(pattern: str, relpath: str) -> bool:
    """Whether the tree-relative file ``relpath`` is declared by ``pattern`` (checked)."""
    parts, names = pattern.split("/"), relpath.split("/")
    # Each (pattern part, path name) pair is judged once: tried naively, every way of
    # sharing the names among several ``**`` parts is a branch (``**/**/**/**/**/**/x``
    # over a path 25 folders deep took 88 s).
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        found = memo.get((i, j))
        if found is None:
            found = memo[i, j] = _match(parts, names, i, j, match)
        return found

    return match(0, 0)


def declared_by(patterns: Sequence[str]) -> Callable[[str], bool]:
    """:func:`matches` for many patterns over many paths: a pattern with no wildcard names
    one path, looked up in a set; only the globs are tried per path (every pattern tried
    against every path of a git snapshot was N² for N files declared one by one)."""
    exact = {p for p in patterns if not any(_wild(part) for part in p.split("/"))}
    globs = [p for p in patterns if p not in exact]

    def declared(relpath: str) -> bool:
        return relpath in exact or any(matches(p, relpath) for p in globs)

    return declared


def _match(
    parts: list[str], names: list[str], i: int, j: int, match: Callable[[int, int], bool]
) -> bool:
    """Whether ``parts[i:]`` matches ``names[j:]`` (``match`` judges the rest)."""
    if i == len(parts):
        return j == len(names)
    if j == len(names):
        return parts[i:] == ["**"]
    head = parts[i]
    if head == "**":
        if match(i + 1, j):
            return True
        return len(names) - j > 1 and _descends(names[j]) and match(i, j + 1)
    return _part_matches(head, names[j]) and match(i + 1, j + 1)


Listings = dict[str, dict[str, os.DirEntry[str]]]  # folder -> its entries by name, sorted


def _expand(
    folder: Path,
    parts: list[str],
    rel: str,
    pattern: str,
    *,
    seen: set[tuple[str, int]],
    listings: Listings,
) -> Iterator[str]:
    """Tree-relative paths of the regular files below ``folder`` that ``parts`` match;
    ``seen``: the (folder, parts left) states already walked, each walked once (several
    ``**`` reach one folder in many ways); ``listings``: the folders listed so far, shared
    by every pattern (so a list of files declared one by one stays linear)."""
    if (rel, len(parts)) in seen:
        return
    seen.add((rel, len(parts)))
    head, rest = parts[0], parts[1:]
    entries = _entries(folder, listings)
    if head == "**":
        if rest:
            yield from _expand(folder, rest, rel, pattern, seen=seen, listings=listings)
        for entry in entries.values():
            if entry.is_dir(follow_symlinks=False) and _descends(entry.name):
                below = Path(entry.path)
                yield from _expand(
                    below, parts, _join(rel, entry.name), pattern, seen=seen, listings=listings
                )
            elif entry.is_symlink() and _descends(entry.name):
                _symlink(_join(rel, entry.name), pattern)
        return
    named = entries.get(head)
    chosen = (
        [e for e in entries.values() if _part_matches(head, e.name)]
        if _wild(head)
        else [named]
        if named is not None
        else []
    )
    for entry in chosen:
        shown = _join(rel, entry.name)
        if not is_utf8(shown):  # the manifest could not be written (exit 3 before)
            raise DataRefused(
                f"{WHERE}: {escaped(shown)} (from {pattern!r}): the name is not UTF-8 (rename it)"
            )
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            _symlink(shown, pattern)
        if rest:
            if stat.S_ISDIR(mode):
                yield from _expand(
                    Path(entry.path), rest, shown, pattern, seen=seen, listings=listings
                )
        elif stat.S_ISREG(mode):
            yield shown
        elif not stat.S_ISDIR(mode):
            raise DataRefused(f"{WHERE}: {shown} (from {pattern!r}) is not a regular file")


def _entries(folder: Path, listings: Listings) -> dict[str, os.DirEntry[str]]:
    key = os.fspath(folder)
    if key not in listings:
        try:
            with os.scandir(folder) as it:
                listings[key] = {e.name: e for e in sorted(it, key=lambda e: e.name)}
        except OSError:
            listings[key] = {}
    return listings[key]


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


def _symlink(shown: str, pattern: str) -> None:
    raise DataRefused(
        f"{WHERE}: {shown} (from {pattern!r}) is a symlink; declare regular files only"
    )


def bundle_path(path: str, roots: Sequence[str], package: str | None) -> str:
    """Where the bundle holds the tree file ``path``: below ``source/`` at its place
    relative to the deepest source root holding it (as the modules are)."""
    best: str | None = None
    for root in roots:
        holds = root == "." or path.startswith(f"{root}/")
        if holds and (best is None or best == "." or len(root) > len(best)):
            best = root
    if best is None:
        raise DataRefused(
            f"{WHERE}: {path} is outside the source roots ({', '.join(roots)}), so no module "
            "can read it beside itself; move it below a source root or add its folder to "
            "[tool.svcc] source-roots"
        )
    inside = path if best == "." else path[len(best) + 1 :]
    return "/".join(["source", *([package] if package else []), inside])


def collect(
    root: Path,
    patterns: Sequence[str],
    *,
    roots: Sequence[str],
    package: str | None,
    modules: frozenset[str],
    counted: tuple[int, int],
    limits: tuple[int, int],
) -> tuple[DataFile, ...]:
    """The declared data files of the tree at ``root``, read; ``modules``: the tree paths
    of its declared modules (a module is not data); ``counted``: the files and bytes of
    those modules; ``limits``: the bundle's (files, bytes)."""
    found: dict[str, str] = {}
    listings: Listings = {}
    for given in patterns:
        pattern = check_pattern(given)
        parts = pattern.split("/")
        paths = (
            list(_expand(root, parts, "", pattern, seen=set(), listings=listings))
            if pattern
            else []
        )
        if not paths:
            folder = pattern and not _wild(pattern) and (root / pattern).is_dir()
            raise DataRefused(
                f"{WHERE}: {given!r} is a folder; declare the files in it ('{pattern}/**/*')"
                if folder
                else f"{WHERE}: {given!r} matches no file"
            )
        for path in paths:
            found.setdefault(path, given)
    files, total = counted
    max_files, max_bytes = limits
    if files + len(found) > max_files:
        raise DataRefused(
            f"{WHERE}: {len(found)} data files and {files} modules, over the "
            f"{max_files}-file bundle limit",
            limit=True,
        )
    out: list[DataFile] = []
    for path, given in sorted(found.items()):
        if path in modules:
            raise DataRefused(f"{WHERE}: {path} (from {given!r}) is a module, not data")
        target = bundle_path(path, roots, package)
        total += os.lstat(root / path).st_size
        if total > max_bytes:
            raise DataRefused(
                f"{WHERE}: the modules and data files exceed {max_bytes} bytes in all (at {path})",
                limit=True,
            )
        out.append(DataFile(path=path, bundle_path=target, data=(root / path).read_bytes()))
    return tuple(out)


def module_relative(data: Sequence[DataFile], module: str, is_package: bool) -> frozenset[str]:
    """The data files as ``module`` reads them: relative to its folder in the bundle (what
    the IR records for a path built from ``__file__``), climbing above it for a file
    elsewhere below ``source/`` (``../data/x.json`` from ``source/pkg/mod.py``)."""
    parts = module.split(".")
    folder = "/".join(["source", *(parts if is_package else parts[:-1])])
    return frozenset(posixpath.relpath(f.bundle_path, folder) for f in data)
