"""IR → the OpenAPI 3.1 document of a REST bundle (written once; the server serves its bytes).

Request schemas come from the shared lowering (``backends/_common/schema.py``) and are
placed in ``components/schemas`` as ``request.<capability>``; TypedDicts keep their own
names. Infrastructure schemas are named ``svc.*``: the dot keeps them apart from any
Python identifier, so no user TypedDict can clash with them.
"""

from typing import Any, Final

from svcc.backends._common.schema import (
    JSON,
    RequestSchema,
    definitions,
    relocate_refs,
    request_schema,
    result_schema,
)
from svcc.compiler.passes.tool_effects import tool_effects
from svcc.ir.model import Capability, ModuleIR

COMPONENTS: Final = "#/components/schemas/"
OPENAPI_VERSION: Final = "3.1.0"

_VALIDATION_ERROR: Final[JSON] = {
    "type": "object",
    "title": "ValidationError",
    "properties": {
        "loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
        "msg": {"type": "string"},
        "type": {"type": "string"},
        "input": {},
        "ctx": {"type": "object"},
    },
    "required": ["loc", "msg", "type"],
}
_INFRASTRUCTURE: Final[JSON] = {
    "svc.Error": {
        "type": "object",
        "title": "Error",
        "properties": {"detail": {}},
        "required": ["detail"],
    },
    "svc.Health": {
        "type": "object",
        "title": "Health",
        "properties": {"status": {"const": "ok"}},
        "required": ["status"],
    },
    "svc.HTTPValidationError": {
        "type": "object",
        "title": "HTTPValidationError",
        "properties": {
            "detail": {"type": "array", "items": {"$ref": COMPONENTS + "svc.ValidationError"}}
        },
        "required": ["detail"],
    },
    "svc.ValidationError": _VALIDATION_ERROR,
}


def request_component(cap: Capability) -> str:
    return f"request.{cap.name}"


def _json_content(schema: JSON) -> JSON:
    return {"application/json": {"schema": schema}}


def _error(description: str, ref: str = "svc.Error") -> JSON:
    return {"description": description, "content": _json_content({"$ref": COMPONENTS + ref})}


def _operation(cap: Capability, result: RequestSchema | None) -> JSON:
    doc = (cap.docstring or "").strip()
    summary = doc.splitlines()[0] if doc else cap.name.replace("_", " ").capitalize()
    result_doc = relocate_refs(result.schema, COMPONENTS) if result else {}
    operation: JSON = {
        "operationId": cap.name,
        "summary": summary,
        "tags": ["capabilities"],
        "x-svc-capability": cap.id,
        "requestBody": {
            "required": True,
            "content": _json_content({"$ref": COMPONENTS + request_component(cap)}),
        },
        "responses": {
            "200": {
                "description": "The function's result (the return type documents it and is "
                "not enforced)",
                "content": _json_content(result_doc),
            },
            "413": _error("Request body too large"),
            "415": _error("The body is not application/json"),
            "422": _error(
                "Unexpected, missing or invalid fields; the body is not a JSON object",
                "svc.HTTPValidationError",
            ),
            "500": _error("The function failed or its result is not JSON (details are logged)"),
        },
    }
    if doc:
        operation["description"] = doc
    operation.update(effects_extension(cap))
    return operation


def effects_extension(cap: Capability) -> JSON:
    """``x-svc-effects``: what the capability may do when it runs and the hints an agent
    host acts on, the same object as the readiness document's ``effects``."""
    return {"x-svc-effects": tool_effects(cap).to_json()}


def openapi_document(ir: ModuleIR) -> dict[str, Any]:
    schemas: JSON = dict(_INFRASTRUCTURE)
    paths: JSON = {}
    reached: set[str] = set()  # components shared by every operation: defined once
    for cap in ir.capabilities:
        request = request_schema(cap)
        result = result_schema(cap)
        schemas[request_component(cap)] = relocate_refs(request.schema, COMPONENTS)
        reached |= request.refs | (result.refs if result else frozenset())
        paths[f"/capabilities/{cap.name}"] = {"post": _operation(cap, result)}
    schemas.update(relocate_refs(definitions(ir, reached), COMPONENTS))
    paths["/health"] = {
        "get": {
            "operationId": "svc.health",
            "summary": "Health check",
            "tags": ["infrastructure"],
            "responses": {
                "200": {
                    "description": "The server is up",
                    "content": _json_content({"$ref": COMPONENTS + "svc.Health"}),
                }
            },
        }
    }
    info: JSON = {"title": ir.module, "version": "1"}
    if ir.docstring:
        info["description"] = ir.docstring.strip()
    return {
        "openapi": OPENAPI_VERSION,
        "info": info,
        "paths": paths,
        "components": {"schemas": dict(sorted(schemas.items()))},
    }
