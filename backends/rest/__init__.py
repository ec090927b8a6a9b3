"""The ``rest`` target: a FastAPI application bundle (``app.py`` + ``svc_runtime``).

Everything that runs in the bundle is ``svc_runtime`` (copied from ``svcc.runtime``);
``app.py`` is glue. The bundle's ``openapi.json`` is written here, once, and is both what
the server serves at ``/openapi.json`` and what its request validators are built from.
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
from svcc.backends.rest._openapi import openapi_document
from svcc.compiler.target import EmitContext, FileTree
from svcc.ir.model import ModuleIR

from svcc import __version__

MANIFEST: Final = "svc-rest.json"
MANIFEST_SCHEMA: Final = "svc.rest-bundle/v1"
RUNTIME_MODULES: Final = ("calls", "encoding", "integrity", "rest", "validation")
# The server's own requirements: pinned to the major versions the runtime is tested with.
SERVER_REQUIREMENTS: Final = (
    "fastapi>=0.115,<1",
    "pydantic>=2.9,<3",
    "swagger-ui-bundle-v2>=5.31,<6",
    "uvicorn[standard]>=0.30,<1",
)


@frozen
class RestTarget:
    name: ClassVar[str] = "rest"
    supports_execution_policy: ClassVar[bool] = True
    description: ClassVar[str] = "a FastAPI REST application with OpenAPI 3.1 (run: svcc serve)"

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        module_path, files = source_files(ir, ctx)
        files |= analysis_files(ir, ctx)
        files |= runtime_files(RUNTIME_MODULES)
        files |= requirement_files(SERVER_REQUIREMENTS, ctx)
        files["openapi.json"] = pretty_json(openapi_document(ir))
        files["app.py"] = render(__name__, "app.py.jinja", module=ir.module, version=__version__)
        if ctx.execution is not None:
            files |= governed_files(ir, ctx.execution, files, module_path)
        return with_manifest(
            MANIFEST,
            MANIFEST_SCHEMA,
            files,
            ir=ir,
            module_path=module_path,
            interface="rest",
            execution=execution_mode(ctx.execution),
        )
