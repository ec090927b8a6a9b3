"""Client-given paths, confined to the workspace, and files written there without surprises.

Every path a client names (``directory_path``, ``output``, ``filename``, ``project_path``)
is resolved against the workspace root chosen at start-up. Absolute paths, ``..``
components and symlinks anywhere on the way are refused (:class:`PathRefused`, answered
with 400), so a request can neither read nor write outside the workspace. Files are written
into a temporary sibling and renamed into place; an existing file is refused
(:class:`Exists`, 409) unless the request says ``overwrite=true``.
"""

import os
import secrets
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class PathRefused(ValueError):
    """A path outside the workspace, through a symlink, or otherwise not acceptable."""


class Exists(FileExistsError):
    """The target exists and the request did not ask to overwrite it."""


class Workspace:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve(strict=True)
        if not self.root.is_dir():
            raise NotADirectoryError(f"{root}: the workspace must be a directory")

    def resolve(self, given: str, what: str) -> Path:
        """``given`` (relative, POSIX) inside the workspace; no component may be a symlink."""
        if not given or "\0" in given or "\\" in given:
            raise PathRefused(f"{what}: invalid path {given!r}")
        pure = PurePosixPath(given)
        if pure.is_absolute():
            raise PathRefused(f"{what}: absolute paths are refused; give a workspace path")
        if any(part == ".." for part in pure.parts):
            raise PathRefused(f"{what}: '..' is refused; give a path inside the workspace")
        current = self.root
        for part in pure.parts:
            if part == ".":
                continue
            current = current / part
            if current.is_symlink():
                raise PathRefused(f"{what}: {given!r} passes through a symlink")
        return current

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def write_files(
        self, directory: Path, files: Mapping[str, bytes], *, overwrite: bool
    ) -> list[str]:
        """Write ``files`` (flat names) into ``directory`` (created if needed, inside the
        workspace). Nothing is written unless every target is free or ``overwrite``."""
        targets = {}
        for name, data in files.items():
            target = self.resolve(self.relative(directory / name), "file")
            if target.exists() and not overwrite:
                raise Exists(f"{self.relative(target)} exists; send overwrite=true to replace it")
            if target.exists() and not target.is_file():
                raise PathRefused(f"{self.relative(target)} exists and is not a file")
            targets[target] = data
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for target, data in targets.items():
            temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(temporary, target)
            except BaseException:
                temporary.unlink(missing_ok=True)
                raise
            written.append(self.relative(target))
        return written
