"""The ``mcp`` target: an MCP server bundle (``server.py`` + ``svc_runtime``), stdio by
default, streamable HTTP with ``--transport streamable-http``.

Same skeleton as the REST bundle (``backends/_common/bundle.py``); the tool definitions
come from the same request-schema lowering, so a tool's ``inputSchema`` is the REST
request schema of the same capability.
"""

from typing import Any, ClassVar, Final

from attrs import frozen
from svcc import __version__
from svcc.backends._common.bundle import assemble, pretty_json
from svcc.backends._common.schema import LoweringError
from svcc.backends.mcp._tools import TOOLS_SCHEMA, tools_document
from svcc.backends.templates import render
from svcc.contracts.target import BundleSpec, EmitContext, FileTree, RepositoryLayout
from svcc.ir.model import ModuleIR

BUNDLE: Final = BundleSpec(
    glue="server.py",
    serve=("server.py",),
    # an image serves streamable HTTP on its port (DESIGN §13); stdio by explicit command
    image_serve=(
        *("-u", "server.py", "--transport", "streamable-http"),
        *("--host", "{host}", "--port", "{port}"),
    ),
    interface_document="mcp-tools.json",
    http_transports=("streamable-http",),
    allowed_hosts_env="SVC_MCP_ALLOWED_HOSTS",  # runtime/mcp_http.py's ALLOWED_HOSTS_ENV
    # The glue and every top-level module of an installed package the server imports, over
    # stdio or HTTP (measured by tests/backends/test_module_names.py): the server holds its own
    # module by that name first, so a bundled one could never be imported (SVC-F015).
    reserved_modules=frozenset(
        {
            "server",
            "_cffi_backend",
            "annotated_types",
            "anyio",
            "click",
            "cryptography",
            "h11",
            "httpcore2",
            "httptools",
            "httpx2",
            "idna",
            "jwt",
            "mcp",
            "mcp_types",
            "opentelemetry",
            "prometheus_client",
            "pydantic",
            "pydantic_core",
            "python_multipart",
            "sse_starlette",
            "starlette",
            "typing_extensions",
            "typing_inspection",
            "uvicorn",
            "uvloop",
            "watchfiles",
            "websockets",
        }
    ),
    interface="mcp",
    manifest="svc-mcp.json",
    manifest_schema="svc.mcp-bundle/v1",
    runtime_modules=(
        "auth",
        "bodies",
        "calls",
        "conversion",
        "encoding",
        "integrity",
        "json_text",
        "limits",
        "mcp",
        "mcp_disconnect",
        "mcp_http",
        "mcp_http_answers",
        "mcp_progress",
        "mcp_stdio",
        "mcp_stream",
        "mcp_tool",
        "metrics",
        "network",
        "oauth",
        "services",
        "settings",
        "streaming",
        "validation",
    ),
    governed_runtime_modules=("mcp_governed", "metrics_governed"),
    # uvicorn serves streamable HTTP (the SDK depends on it; declared because we import it)
    server_requirements=(
        "mcp>=2.3,<3",
        "prometheus-client>=0.20,<1",
        "PyJWT[crypto]>=2.8,<3",
        "pydantic>=2.9,<3",
        "uvicorn>=0.30,<1",
    ),
)


def server_module(governed: bool) -> str:
    """The ``svc_runtime`` module ``server.py`` takes ``main`` from."""
    return "mcp_governed" if governed else "mcp"


def repository_tools(layout: RepositoryLayout) -> dict[str, Any]:
    """One tool list over the selected modules, a tool name taken twice refused."""
    out: list[Any] = []
    seen: set[str] = set()
    for ir in layout.modules:
        for tool in tools_document(ir)["tools"]:
            if tool["name"] in seen:
                raise LoweringError(f"two capabilities would be the MCP tool {tool['name']!r}")
            seen.add(tool["name"])
            out.append(tool)
    return {"schema": TOOLS_SCHEMA, "tools": sorted(out, key=lambda t: t["name"])}


@frozen
class McpTarget:
    name: ClassVar[str] = "mcp"
    supports_execution_policy: ClassVar[bool] = True
    bundle: ClassVar[BundleSpec | None] = BUNDLE
    description: ClassVar[str] = (
        "an MCP server over stdio or streamable HTTP (official SDK; run: svcc serve)"
    )

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        layout = ctx.repository
        document = tools_document(ir) if layout is None else repository_tools(layout)
        return assemble(
            BUNDLE,
            ir,
            ctx,
            {
                BUNDLE.interface_document: pretty_json(document),
                "server.py": render(
                    __name__,
                    "server.py.jinja",
                    module=ir.module,
                    version=__version__,
                    server=server_module(ctx.execution is not None),
                ),
            },
        )


__all__ = ["BUNDLE", "TOOLS_SCHEMA", "McpTarget", "server_module", "tools_document"]
