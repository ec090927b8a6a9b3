"""What a bundle is built from: one :class:`Program` of selected modules, whatever the input.

A file, a notebook and a directory are all programs: named modules with their selected
capabilities, the files a bundle carries for them (``source/``, a notebook's
``original/``, data files) and the readiness document. Outside tools read two bundle
layouts (DESIGN §12): a file's manifest describes its one module under ``source``; a
repository's says ``"bundle_kind": "repository"``, lists its declared modules and
provenance, and its IR document holds every module. That difference is data of the
program, a :class:`FileLayout` or a :class:`RepositoryLayout` chosen once by the front end,
so the assembler, the interface documents and the governed plans are each written once.
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol

from svcc.ir.model import Capability, ModuleIR

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen

REPOSITORY_IR_SCHEMA: Final = "svc.repository-ir/v1"
JSON = dict[str, Any]


class BundleLayout(Protocol):
    """How a program's bundle is laid out for the tools that read it (DESIGN §12)."""

    kind: ClassVar[str]
    # Runtime modules a bundle of this layout adds to its target's (``svc_runtime/``).
    runtime_modules: ClassVar[tuple[str, ...]]

    @property
    def provided(self) -> tuple[str, ...]:
        """Top-level runtime modules shipped beside the sources (``source/cog.py``)."""
        ...

    def ir_document(self, program: "Program") -> bytes:
        """``capability-ir.json``."""
        ...

    def manifest_fields(self, program: "Program", files: Mapping[str, bytes]) -> JSON:
        """What the manifest says about the program's sources."""
        ...

    def plan_fields(self, cap: Capability) -> JSON:
        """What a governed plan binds besides the module, its source and the policy."""
        ...

    def tool_order(self, tools: Sequence[JSON]) -> list[JSON]:
        """The MCP tool list's order."""
        ...


@frozen(kw_only=True)
class FileLayout:
    """A file or notebook: one module, described by the manifest's ``source`` (its bundle
    path, the original file and, for a notebook, the cells kept); tools in source order."""

    kind: ClassVar[str] = "file"
    runtime_modules: ClassVar[tuple[str, ...]] = ()

    # Top-level modules the bundle ships from the runtime beside the source (the ``cog``
    # shim of a Cog predictor), found on the served module's ``sys.path``.
    provided: tuple[str, ...] = ()

    def ir_document(self, program: "Program") -> bytes:
        from svcc.ir.serde import ir_to_json

        return ir_to_json(program.modules[0])

    def manifest_fields(self, program: "Program", files: Mapping[str, bytes]) -> JSON:
        from svcc.ir.canonical import digest_bytes

        ir = program.modules[0]
        module_path = program.module_path(ir.module)
        cells = sorted({s.span.cell for s in ir.statements if s.span.cell})
        return {
            "source": {  # a notebook's also lists the cells its served module keeps
                "path": module_path,
                "digest": digest_bytes(files[module_path]),
                "original": ir.source.path,
                "original_digest": ir.source.sha256,
                "format": ir.source.format,
                **({"cells_kept": cells} if ir.source.format == "notebook" else {}),
            }
        }

    def plan_fields(self, _cap: Capability) -> JSON:
        return {}

    def tool_order(self, tools: Sequence[JSON]) -> list[JSON]:
        return list(tools)


@frozen(kw_only=True)
class DeclaredSource:
    """One repository module copied into the bundle under ``source/``, its bytes exact."""

    module: str
    is_package: bool
    path: str  # the file's path in the repository (display, provenance)
    data: bytes

    @property
    def bundle_path(self) -> str:
        parts = self.module.split(".")
        if self.is_package:
            return "/".join(["source", *parts, "__init__.py"])
        return "/".join(["source", *parts]) + ".py"


@frozen(kw_only=True)
class RepositoryLayout:
    """A directory: the declared modules (module → bundle path → repository path), the
    namespace and top-level packages the bundle's import finder needs, the declared data
    files and the provenance; one IR document over every module; tools by name."""

    kind: ClassVar[str] = "repository"
    runtime_modules: ClassVar[tuple[str, ...]] = ("repository",)

    sources: tuple[DeclaredSource, ...]
    namespaces: tuple[str, ...]
    packages: tuple[str, ...]
    provenance: Mapping[str, Any]
    # Declared data files (``[tool.svcc] data-files``): (bundle path, tree path).
    data: tuple[tuple[str, str], ...] = ()
    # Top-level modules the bundle ships from the runtime beside the sources (the ``cog``
    # shim of a Cog predictor), imported by the finder as the repository's own.
    provided: tuple[str, ...] = ()

    def declared(self) -> JSON:
        """What the bundle's import finder reads: the modules and packages it serves."""
        modules = {s.module: s.bundle_path for s in self.sources}
        modules |= {name: f"source/{name}.py" for name in self.provided}
        return {
            "modules": modules,
            "namespace_packages": list(self.namespaces),
            "packages": sorted({*self.packages, *self.provided}),
        }

    def ir_document(self, program: "Program") -> bytes:
        from svcc.ir.canonical import canonical_json
        from svcc.ir.serde import unstructure

        capabilities = [unstructure(c) for ir in program.modules for c in ir.capabilities]
        return canonical_json(
            {
                "schema": REPOSITORY_IR_SCHEMA,
                "capabilities": sorted(capabilities, key=lambda c: c["id"]),
                "modules": [unstructure(ir) for ir in program.modules],
            }
        )

    def manifest_fields(self, _program: "Program", _files: Mapping[str, bytes]) -> JSON:
        data = {"data_files": dict(self.data)} if self.data else {}
        return {
            "bundle_kind": self.kind,
            "repository": {
                **self.declared(),
                "original_paths": {s.bundle_path: s.path for s in self.sources},
                **data,
            },
            "provenance": dict(self.provenance),
        }

    def plan_fields(self, cap: Capability) -> JSON:
        return {"function": cap.qualname, "repository": self.declared()}

    def tool_order(self, tools: Sequence[JSON]) -> list[JSON]:
        return sorted(tools, key=lambda t: str(t["name"]))


@frozen(kw_only=True)
class Program:
    """The selected modules of one input and what their bundle carries.

    ``modules`` hold the selected capabilities only (a directory's named
    ``<module>.<function>``); ``files`` are the program's own bundle files with their exact
    bytes (``source/``, ``original/``, data files); ``module_paths`` gives each selected
    module's file among them; ``readiness`` is the bundle's ``readiness.json``."""

    name: str
    modules: tuple[ModuleIR, ...]
    files: tuple[tuple[str, bytes], ...]
    module_paths: tuple[tuple[str, str], ...]
    readiness: Mapping[str, Any]
    layout: BundleLayout

    @property
    def kind(self) -> str:
        """``"file"`` or ``"repository"``: the manifest's ``bundle_kind``."""
        return self.layout.kind

    def module_path(self, module: str) -> str:
        return dict(self.module_paths)[module]
