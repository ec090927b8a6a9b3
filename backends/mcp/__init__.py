"""The ``mcp`` target: an MCP server bundle over stdio (``server.py`` + ``svc_runtime``).

Same skeleton as the REST bundle (``backends/_common/bundle.py``); the tool definitions
come from the same request-schema lowering, so a tool's ``inputSchema`` is the REST
request schema of the same capability.
"""

from typing import ClassVar, Final

from attrs import frozen
from svcc.backends._common.bundle import (
    analysis_files,
    pretty_json,
    requirement_files,
    runtime_files,
    source_files,
    with_manifest,
)
from svcc.backends._common.governed import execution_mode, governed_files
from svcc.backends._common.templates import render
from svcc.backends.mcp._tools import tools_document
from svcc.compiler.target import EmitContext, FileTree
from svcc.ir.model import ModuleIR

from svcc import __version__

MANIFEST: Final = "svc-mcp.json"
MANIFEST_SCHEMA: Final = "svc.mcp-bundle/v1"
RUNTIME_MODULES: Final = ("calls", "integrity", "mcp", "validation")
SERVER_REQUIREMENTS: Final = ("mcp>=2.3,<3", "pydantic>=2.9,<3")


@frozen
class McpTarget:
    name: ClassVar[str] = "mcp"
    supports_execution_policy: ClassVar[bool] = True
    description: ClassVar[str] = "an MCP server over stdio (official SDK; run: svcc serve)"

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        module_path, files = source_files(ir, ctx)
        files |= analysis_files(ir, ctx)
        files |= runtime_files(RUNTIME_MODULES)
        files |= requirement_files(SERVER_REQUIREMENTS, ctx)
        files["mcp-tools.json"] = pretty_json(tools_document(ir))
        files["server.py"] = render(
            __name__, "server.py.jinja", module=ir.module, version=__version__
        )
        if ctx.execution is not None:
            files |= governed_files(ir, ctx.execution, files, module_path)
        return with_manifest(
            MANIFEST,
            MANIFEST_SCHEMA,
            files,
            ir=ir,
            module_path=module_path,
            interface="mcp",
            execution=execution_mode(ctx.execution),
        )
