"""Client-given paths, confined to the workspace, and files written there without surprises.

Every path a client names (``directory_path``, ``output``, ``filename``, ``project_path``)
is resolved against the workspace root chosen at start-up. A path is relative to the root,
or absolute and inside it (IDEs send absolute paths); ``..`` components, a path outside the
root, and symlinks anywhere on the way are refused (:class:`PathRefused`, answered with
400), so a request can neither read nor write outside the workspace. Files are written by
the compiler's descriptor-based writer (:func:`svcc.compiler.writer.write_files`), which
re-checks every component without following symlinks while it writes; an existing file is
refused (:class:`Exists`, 409) unless the request says ``overwrite=true``.
"""

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Final

from svcc.contracts.errors import OutputError

MAX_PATH_BYTES: Final = 1024
MAX_NAME_BYTES: Final = 255


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
        """``given`` (POSIX, relative or absolute) inside the workspace; no component may be
        ``..`` or a symlink."""
        if not given or "\0" in given or "\\" in given:
            raise PathRefused(f"{what}: invalid path {given!r}")
        if len(given.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
            raise PathRefused(f"{what}: the path is over {MAX_PATH_BYTES} bytes")
        pure = PurePosixPath(given)
        if any(part == ".." for part in pure.parts):
            raise PathRefused(f"{what}: '..' is refused; give a path inside the workspace")
        if pure.is_absolute():
            root = PurePosixPath(self.root)
            if not pure.is_relative_to(root):
                raise PathRefused(f"{what}: {given!r} is outside the workspace")
            pure = pure.relative_to(root)
        current = self.root
        for part in pure.parts:
            if part == ".":
                continue
            if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
                raise PathRefused(f"{what}: a path component is over {MAX_NAME_BYTES} bytes")
            current = current / part
            if current.is_symlink():
                raise PathRefused(f"{what}: {given!r} passes through a symlink")
        return current

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def shown(self, message: str) -> str:
        """A message with the workspace root replaced by workspace-relative paths."""
        return message.replace(f"{self.root}/", "").replace(str(self.root), ".")

    def write_files(
        self, directory: Path, files: Mapping[str, bytes], *, overwrite: bool
    ) -> list[str]:
        """Write ``files`` (flat names) into ``directory`` (created if needed, inside the
        workspace). Nothing is written unless every target is free or ``overwrite``."""
        from svcc.compiler.writer import TargetExists, write_files

        for name in files:
            self.resolve(self.relative(directory / name), "file")
        try:
            written = write_files(directory, files, overwrite=overwrite)
        except TargetExists as exc:
            raise Exists(
                f"{self.relative(exc.path)} exists; send overwrite=true to replace it"
            ) from None
        except OutputError as exc:
            raise PathRefused(self.shown(str(exc))) from None
        return [self.relative(path) for path in written]
