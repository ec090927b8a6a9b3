"""What a back end plugs into: the ``Target`` protocol, its ``EmitContext`` and ``FileTree``,
and the ``BundleSpec`` a servable target declares.

A target turns IR into a ``FileTree`` and does no I/O; the writer is the only code that
touches the output directory. A target that writes a runnable service declares its bundle
here, once: the manifest's name, the glue file, how ``svcc serve`` runs it, the module names
it occupies and the runtime modules it copies. The CLI, ``svcc serve``, the selection of a
module name and the golden tests all read that declaration, so adding a servable target
means adding one package. ``docs/adding-a-target.md`` walks through a whole target.
"""

import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, ClassVar, Final, Protocol, runtime_checkable

from attrs import frozen
from svcc.contracts.program import Program
from svcc.contracts.reserved import BUNDLE_RESERVED
from svcc.ir.model import ModuleIR

if TYPE_CHECKING:
    from svcc.compiler.passes.readiness import ReadinessReport
    from svcc.contracts.policy import AnyExecution


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
    """Everything a target may read besides the IR. No handles, no paths.

    ``ir`` (given to ``emit``) is the program's view: named for the program (a file's
    module, a directory's project) with every selected capability; ``program`` holds the
    selected modules themselves, the files the bundle carries and its layout, which
    :func:`svcc.backends._common.bundle.assemble` turns into a bundle."""

    readiness: "ReadinessReport"
    program: Program
    requirements: tuple[str, ...] = ()
    # Governed execution (``--execution-policy``); ``None`` is direct mode. Only targets whose
    # class sets ``supports_execution_policy = True`` are given one.
    execution: "AnyExecution | None" = None
    # For a target that wraps a servable bundle (:class:`Wrapper`): that bundle, built by
    # the driver from the same IR and context, and how it is declared.
    bundle: "FileTree | None" = None
    served: "BundleSpec | None" = None

    @property
    def bundle_kind(self) -> str:
        """``"repository"`` or ``"file"``: the manifest's ``bundle_kind``."""
        return self.program.kind


@frozen
class File:
    """A target option naming a file: the driver reads it (``File.read``), the target gets
    its bytes, so ``emit`` does no I/O. ``path`` is kept for messages."""

    path: str
    data: bytes

    @classmethod
    def read(cls, path: str, limit: int = 16 * 1024 * 1024) -> "File":
        from svcc.contracts.errors import InputError

        try:
            with open(path, "rb") as handle:
                data = handle.read(limit + 1)
        except FileNotFoundError:
            raise InputError(f"{path}: file not found") from None
        except OSError as exc:
            raise InputError(f"{path}: {exc.strerror}") from None
        if len(data) > limit:
            raise InputError(f"{path}: over {limit} bytes")
        return cls(path, data)


HOST: Final = "{host}"
PORT: Final = "{port}"


@frozen(kw_only=True)
class BundleSpec:
    """How a servable target's bundle is laid out and run: declared once, read everywhere.

    ``serve`` is the command ``svcc serve`` runs from the bundle directory after the bundle's
    own interpreter (``{host}`` and ``{port}`` are replaced); a command without ``{port}``
    speaks on stdin/stdout. ``reserved_modules`` are top-level module names the bundle's
    files and server dependencies occupy: a user module by one of those names would shadow
    them, so compiling for this target refuses it (``BUNDLE_RESERVED`` is added).
    """

    interface: str
    manifest: str
    manifest_schema: str
    glue: str
    serve: tuple[str, ...]
    # The interface document in the bundle (``openapi.json``; ``""``: none), whose digest
    # labels an image of the bundle.
    interface_document: str = ""
    # How the bundle runs inside an image, after the image's interpreter (``{host}`` and
    # ``{port}`` replaced; without ``{port}`` it speaks on stdin/stdout). Default: ``serve``.
    image_serve: tuple[str, ...] | None = None
    reserved_modules: frozenset[str] = frozenset()
    runtime_modules: tuple[str, ...] = ()
    # Copied besides ``runtime_modules`` into governed bundles only (the server side of
    # governed execution): a direct bundle carries no code for a mode it does not run in.
    governed_runtime_modules: tuple[str, ...] = ()
    server_requirements: tuple[str, ...] = ()
    # A server that speaks stdio may also take ``--transport T --host H --port P`` to listen
    # (``svcc serve --transport``): the transports it takes besides stdio; empty: none.
    http_transports: tuple[str, ...] = ()
    # The environment variable through which a listening server accepts ``Host`` values
    # besides loopback (DNS-rebinding protection); a cluster base sets it to the Service's
    # names. ``""``: the server checks no ``Host`` header.
    allowed_hosts_env: str = ""

    @property
    def listens(self) -> bool:
        """Whether the server listens on ``--host``/``--port`` (else it uses stdio)."""
        return any(PORT in arg for arg in self.serve)

    @property
    def listens_in_image(self) -> bool:
        """Whether the bundle listens on a port inside an image (else it uses stdio)."""
        return any(PORT in arg for arg in self.image_args)

    @property
    def image_args(self) -> tuple[str, ...]:
        return self.serve if self.image_serve is None else self.image_serve

    def serve_command(self, python: str, host: str, port: int) -> list[str]:
        args = [a.replace(HOST, host).replace(PORT, str(port)) for a in self.serve]
        return [python, *args]

    def image_command(self, python: str, host: str, port: int) -> list[str]:
        """The command an image runs (its interpreter, all interfaces, its port)."""
        args = [a.replace(HOST, host).replace(PORT, str(port)) for a in self.image_args]
        return [python, *args]

    def module_name_problem(self, module: str) -> str | None:
        """Why ``module`` cannot be a module of this bundle (``SVC-F015``), or ``None``: its
        top-level name is one the server imports itself (its own modules, or the standard
        library's), first, so the bundled module could never be imported."""
        top = module.split(".", 1)[0]
        if top in self.reserved_modules or top in BUNDLE_RESERVED:
            taken = f"the {self.interface} bundle's own module {top!r}"
        elif top in sys.stdlib_module_names:
            taken = f"the standard library's module {top!r}, which the server imports first"
        else:
            return None
        return f"SVC-F015 module name {module!r} clashes with {taken}"


@runtime_checkable
class Target(Protocol):
    """A back end. Implementations are frozen attrs classes whose fields are their options
    (``svcc compile --target NAME --<option>``; see ``compiler.registry``).

    ``bundle`` is ``None`` for a target that writes artifacts rather than a service (``ir``);
    ``supports_execution_policy`` says whether ``--execution-policy`` may be given.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    supports_execution_policy: ClassVar[bool]
    bundle: ClassVar[BundleSpec | None]

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree: ...


@runtime_checkable
class Wrapper(Protocol):
    """A target that wraps a servable target's bundle (``oci``: an image build context,
    ``k8s``: a cluster base). The driver emits the bundle of ``wrapped_target()`` from the
    same IR and context first and passes it as ``ctx.bundle`` with its declaration as
    ``ctx.served``; so every servable target, built in or not, gets images and Kubernetes."""

    def wrapped_target(self) -> str: ...
