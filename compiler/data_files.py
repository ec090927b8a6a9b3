"""Declared data files: what a module reads at import (a model, a table) travels with it.

A single file declares them with ``--data PATH`` (repeatable). Each is confined to the
module's source root (a regular file, no symlink on the way, no escape), read once, and
copied byte for byte into the bundle at its place below that root (``source/...``: beside
the module, or above it for a module of a package), where the manifest
lists its digest like any file, so the server verifies it at startup. The bundle limits of
the specification count them (4,096 files, 64 MiB in all). The readiness pass then treats a
module-level read of a declared file through a path built from ``__file__`` as
deterministic.
"""

import os
import posixpath
import stat
from collections.abc import Sequence
from typing import Final

from attrs import frozen
from svcc.contracts.errors import InputError

MAX_FILES: Final = 4096
MAX_TOTAL_BYTES: Final = 64 * 1024 * 1024


@frozen(kw_only=True)
class DataFiles:
    """``relative``: module-directory-relative POSIX paths (what the readiness pass matches
    against the paths the IR records); ``files``: bundle path → bytes."""

    relative: frozenset[str]
    files: tuple[tuple[str, bytes], ...]


NONE: Final = DataFiles(relative=frozenset(), files=())


def collect(
    paths: Sequence[str], *, source: str, root: str, module: str, is_package: bool
) -> DataFiles:
    """Read the declared files of the module at ``source`` (whose source root is ``root``).
    A path that escapes the root, is not a regular file, passes a symlink or breaks a
    limit is an :class:`InputError` naming it (exit 2), before anything is written."""
    if not paths:
        return NONE
    if len(paths) > MAX_FILES:
        raise InputError(f"--data: {len(paths)} files, over the {MAX_FILES}-file limit")
    module_dir = os.path.dirname(os.path.abspath(source))
    root = os.path.abspath(root)
    parts = module.split(".")
    bundle_dir = "/".join(["source", *(parts if is_package else parts[:-1])])
    relative: set[str] = set()
    files: dict[str, bytes] = {}
    total = 0
    for given in paths:
        absolute = os.path.abspath(given)
        inside = os.path.relpath(absolute, root)
        if inside.startswith(("..", "/")) or os.path.isabs(inside):
            raise InputError(f"--data {given}: outside the source root {root}")
        _refuse_links(root, inside, given)
        # relative to the module's folder, above it too (``../data/x.json`` from a package's
        # module): what the IR records for the path the module builds from ``__file__``
        rel = os.path.relpath(absolute, module_dir).replace(os.sep, "/")
        data = _read(absolute, given)
        total += len(data)
        if total > MAX_TOTAL_BYTES:
            raise InputError(f"--data: over the {MAX_TOTAL_BYTES // (1024 * 1024)} MiB limit")
        relative.add(rel)
        files[posixpath.normpath(f"{bundle_dir}/{rel}")] = data
    return DataFiles(relative=frozenset(relative), files=tuple(sorted(files.items())))


def _refuse_links(root: str, inside: str, given: str) -> None:
    current = root
    for part in inside.split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current):
            raise InputError(f"--data {given}: {current} is a symlink; declare regular files")


def _read(absolute: str, given: str) -> bytes:
    try:
        info = os.lstat(absolute)
    except FileNotFoundError:
        raise InputError(f"--data {given}: no such file") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"--data {given}: not a regular file")
    with open(absolute, "rb") as handle:
        return handle.read()
