"""Paths built from ``__file__``, followed as pathlib and ``os.path`` build them.

A path is kept lexically, as the code spells it, until it is read: ``.parent`` and
``os.path.dirname`` drop the last part even when it is ``..`` (``(HERE / "..").parent`` is
``HERE``), and only ``resolve()``, ``os.path.abspath``/``normpath``/``realpath`` collapse
the ``..`` parts; collapsing them at each step named the wrong file. Above the module's
folder a path climbs (``Path(__file__).parent.parent / "data"`` is ``../data``: the src
layout's usual spelling), and an absolute part restarts it at ``/`` as pathlib and
``os.path.join`` do (``HERE / "/etc/hostname"`` is ``/etc/hostname``, no file beside the
module). :func:`ir_path` gives the form the IR records (``Evaluation.path``).
"""

from typing import TYPE_CHECKING, Final, Literal

from svcc.ir.records import evolve

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen


@frozen
class FilePath:
    """``anchor``: the module's file itself, its folder climbed ``up`` times, or ``/``;
    ``parts``: the names below it, as spelt (``..`` kept)."""

    anchor: Literal["file", "folder", "root"]
    up: int = 0
    parts: tuple[str, ...] = ()


FILE: Final = FilePath("file")
_ROOT: Final = FilePath("root")


def parent(path: FilePath) -> FilePath:
    """``path.parent``: its last part dropped, else one folder up (``/`` stays ``/``)."""
    if path.anchor == "file":
        return FilePath("folder")
    if path.parts:
        return evolve(path, parts=path.parts[:-1])
    if path.anchor == "root":
        return path
    return FilePath("folder", path.up + 1)


def join(path: FilePath, part: str) -> FilePath | None:
    """``path / part``; ``None`` for a part joined below the module's file itself (no
    such file)."""
    if part.startswith("/"):
        path = _ROOT
    elif path.anchor == "file":
        return None
    pieces = tuple(p for p in part.split("/") if p not in ("", "."))
    return evolve(path, parts=path.parts + pieces)


def with_name(path: FilePath, name: str) -> FilePath | None:
    """``path.with_name(name)``; ``None`` where pathlib raises."""
    if not name or "/" in name or name in (".", ".."):
        return None
    if path.anchor == "file":
        return FilePath("folder", parts=(name,))
    if path.parts:
        return evolve(path, parts=(*path.parts[:-1], name))
    if path.anchor == "root":
        return None
    return FilePath("folder", path.up + 1, (name,))


def normalised(path: FilePath) -> FilePath:
    """``path`` with its ``..`` parts collapsed (``resolve()``, ``os.path.normpath``)."""
    up, kept = path.up, []
    for part in path.parts:
        if part != "..":
            kept.append(part)
        elif kept:
            kept.pop()
        elif path.anchor == "folder":
            up += 1
    return evolve(path, up=up, parts=tuple(kept))


def ir_path(path: FilePath) -> str:
    """The file a read of ``path`` opens, as the IR records it: ``__file__`` (the module
    itself), a POSIX path relative to the module's folder that may climb above it
    (``data/x.json``, ``../data/x.json``), or an absolute one (``/etc/hostname``)."""
    if path.anchor == "file":
        return "__file__"
    path = normalised(path)
    if path.anchor == "root":
        return "/" + "/".join(path.parts)
    return "/".join([".."] * path.up + list(path.parts))
