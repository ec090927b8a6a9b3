"""The ``mcp`` target: an MCP server bundle (``server.py`` + ``svc_runtime``), stdio by
default, streamable HTTP with ``--transport streamable-http``.

Same skeleton as the REST bundle (``backends/_common/bundle.py``); the tool definitions
come from the same request-schema lowering, so a tool's ``inputSchema`` is the REST
request schema of the same capability.
"""

from typing import ClassVar, Final

from attrs import frozen
from svcc import __version__
from svcc.backends._common.bundle import assemble, pretty_json
from svcc.backends.mcp._tools import TOOLS_SCHEMA, tools_document
from svcc.backends.templates import render
from svcc.contracts.target import BundleSpec, EmitContext, FileTree
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
        "threads",
        "tracing",
        "validation",
    ),
    governed_runtime_modules=("mcp_governed", "metrics_governed", "tracing_governed"),
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


@frozen
class McpTarget:
    name: ClassVar[str] = "mcp"
    supports_execution_policy: ClassVar[bool] = True
    bundle: ClassVar[BundleSpec | None] = BUNDLE
    description: ClassVar[str] = (
        "an MCP server over stdio or streamable HTTP (official SDK; run: svcc serve)"
    )

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        return assemble(
            BUNDLE,
            ir,
            ctx,
            {
                BUNDLE.interface_document: pretty_json(tools_document(ctx.program)),
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
