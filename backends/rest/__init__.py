"""The ``rest`` target: a FastAPI application bundle (``app.py`` + ``svc_runtime``).

Everything that runs in the bundle is ``svc_runtime`` (copied from ``svcc.runtime``);
``app.py`` is glue. The bundle's ``openapi.json`` is written here, once, and is both what
the server serves at ``/openapi.json`` and what its request validators are built from.
"""

from typing import ClassVar, Final

from attrs import frozen
from svcc import __version__
from svcc.backends._common.bundle import assemble, pretty_json
from svcc.backends.rest._openapi import openapi_document
from svcc.backends.templates import render
from svcc.contracts.target import BundleSpec, EmitContext, FileTree
from svcc.ir.model import ModuleIR

BUNDLE: Final = BundleSpec(
    glue="app.py",
    # The access log is the runtime's own (with the request id): uvicorn's is off.
    serve=(
        *("-m", "uvicorn", "app:app", "--host", "{host}", "--port", "{port}"),
        "--no-access-log",
    ),
    # in an image: the same server without an access log line per request
    image_serve=(
        *("-m", "uvicorn", "app:app", "--host", "{host}", "--port", "{port}"),
        "--no-access-log",
    ),
    interface_document="openapi.json",
    # The glue and every top-level module of an installed package the server imports
    # (measured under uvicorn by tests/backends/test_module_names.py), and what OAuth imports when
    # configured (``jwt``, ``cryptography``): the server holds its own module by that name
    # first, so a bundled one could never be imported (SVC-F015).
    reserved_modules=frozenset(
        {
            "app",
            "_cffi_backend",
            "annotated_doc",
            "annotated_types",
            "anyio",
            "click",
            "cryptography",
            "fastapi",
            "h11",
            "httptools",
            "jwt",
            "opentelemetry",
            "prometheus_client",
            "pydantic",
            "pydantic_core",
            "python_multipart",
            "starlette",
            "swagger_ui_bundle",
            "typing_extensions",
            "typing_inspection",
            "uvicorn",
            "uvloop",
            "watchfiles",
            "websockets",
        }
    ),
    interface="rest",
    manifest="svc-rest.json",
    manifest_schema="svc.rest-bundle/v1",
    runtime_modules=(
        "auth",
        "bodies",
        "calls",
        "conversion",
        "encoding",
        "integrity",
        "json_text",
        "limits",
        "lifetime",
        "metrics",
        "network",
        "oauth",
        "prevalidate",
        "rest",
        "rest_endpoint",
        "rest_stream",
        "services",
        "settings",
        "streaming",
        "threads",
        "tracing",
        "validation",
    ),
    governed_runtime_modules=("metrics_governed", "rest_governed", "tracing_governed"),
    # The server's own requirements: pinned to the major versions the runtime is tested with.
    server_requirements=(
        "fastapi>=0.115,<1",
        "prometheus-client>=0.20,<1",
        "PyJWT[crypto]>=2.8,<3",
        "pydantic>=2.9,<3",
        "swagger-ui-bundle-v2>=5.31,<6",
        "uvicorn[standard]>=0.30,<1",
    ),
)


def server_module(governed: bool) -> str:
    """The ``svc_runtime`` module ``app.py`` takes ``create_app`` from."""
    return "rest_governed" if governed else "rest"


@frozen
class RestTarget:
    name: ClassVar[str] = "rest"
    supports_execution_policy: ClassVar[bool] = True
    bundle: ClassVar[BundleSpec | None] = BUNDLE
    description: ClassVar[str] = "a FastAPI REST application with OpenAPI 3.1 (run: svcc serve)"

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        return assemble(
            BUNDLE,
            ir,
            ctx,
            {
                BUNDLE.interface_document: pretty_json(openapi_document(ir, ctx.program)),
                "app.py": render(
                    __name__,
                    "app.py.jinja",
                    module=ir.module,
                    version=__version__,
                    server=server_module(ctx.execution is not None),
                ),
            },
        )


__all__ = ["BUNDLE", "RestTarget", "openapi_document", "server_module"]
