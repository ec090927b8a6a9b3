"""What a back end plugs into: the ``Target`` protocol, its ``EmitContext`` and ``FileTree``.

A target turns IR into a ``FileTree`` and does no I/O; the writer is the only code that
touches the output directory. ``docs/adding-a-target.md`` walks through a whole target.
"""

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from attrs import frozen
from svcc.ir.model import ModuleIR

if TYPE_CHECKING:
    from svcc.compiler.passes.readiness import ReadinessReport
    from svcc.compiler.policy import ExecutionPolicy


class FileTreeError(ValueError):
    """A back end produced an invalid tree (an absolute path, ``..``, a clash): a bug."""


def _check_path(path: str) -> None:
    if not path or path.startswith("/") or "\\" in path or "\0" in path:
        raise FileTreeError(f"invalid path in file tree: {path!r}")
    for part in path.split("/"):
        if part in ("", ".", ".."):
            raise FileTreeError(f"invalid path in file tree: {path!r}")


@frozen
class FileTree:
    """An ordered mapping of relative POSIX path → bytes, validated at construction.

    Paths are sorted so the same content always gives the same tree, whatever order a
    back end produced it in.
    """

    files: tuple[tuple[str, bytes], ...]

    @classmethod
    def of(cls, mapping: Mapping[str, bytes]) -> "FileTree":
        paths = set(mapping)
        for path, data in mapping.items():
            _check_path(path)
            if not isinstance(data, bytes):
                raise FileTreeError(f"{path}: content must be bytes")
            parts = path.split("/")
            for i in range(1, len(parts)):
                if "/".join(parts[:i]) in paths:
                    raise FileTreeError(f"{path}: a parent is also a file")
        return cls(tuple(sorted(mapping.items())))

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def paths(self) -> list[str]:
        return [p for p, _ in self.files]

    def get(self, path: str) -> bytes | None:
        return dict(self.files).get(path)


@frozen(kw_only=True)
class EmitContext:
    """Everything a target may read besides the (selected) IR. No handles, no paths."""

    readiness: "ReadinessReport"
    source_path: str
    source_bytes: bytes
    module_text: str
    requirements: tuple[str, ...] = ()
    # The source's local import closure (bundle path ``source/...`` → exact bytes) and
    # whether the module itself is a package's ``__init__.py``.
    local_files: tuple[tuple[str, bytes], ...] = ()
    module_is_package: bool = False
    # Governed execution (``--execution-policy``); ``None`` is direct mode. Only targets whose
    # class sets ``supports_execution_policy = True`` are given one.
    execution: "ExecutionPolicy | None" = None


@runtime_checkable
class Target(Protocol):
    """A back end. Implementations are frozen attrs classes whose fields are their options."""

    name: ClassVar[str]
    description: ClassVar[str]

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree: ...
