"""IR → the OpenAPI 3.1 document of a REST bundle (written once; the server serves its bytes).

Request schemas come from the shared lowering (``backends/_common/schema.py``) and are
placed in ``components/schemas`` as ``request.<capability>``; TypedDicts keep their own
names. Infrastructure schemas are named ``svc.*``: the dot keeps them apart from any
Python identifier, so no user TypedDict can clash with them.
"""

from typing import Any, Final

from svcc.backends._common.bundle import merge_documents
from svcc.backends._common.schema import (
    JSON,
    LoweringError,
    RequestSchema,
    definitions,
    item_schema,
    relocate_refs,
    request_schema,
    result_schema,
)
from svcc.compiler.passes.tool_effects import tool_effects
from svcc.contracts.program import Program
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
# The last record of every stream (DESIGN §14): how it ended, and how many items it held.
STREAM_END: Final[JSON] = {
    "type": "object",
    "title": "StreamEnd",
    "properties": {
        "done": {"const": True},
        "error": {
            "type": "object",
            "properties": {"status": {"type": "integer"}, "detail": {}},
            "required": ["status", "detail"],
        },
        "items": {"type": "integer", "minimum": 0},
    },
    "required": ["items"],
}
RESULT: Final = "The function's result (the return type documents it and is not enforced)"
# Media types of a stream: JSON Lines (the default) and Server-Sent Events, by ``Accept``.
JSONL: Final = "application/jsonl"
EVENT_STREAM: Final = "text/event-stream"


def request_component(cap: Capability) -> str:
    return f"request.{cap.name}"


def _json_content(schema: JSON) -> JSON:
    return {"application/json": {"schema": schema}}


def _error(description: str, ref: str = "svc.Error") -> JSON:
    return {"description": description, "content": _json_content({"$ref": COMPONENTS + ref})}


def _stream_response(item: RequestSchema | None) -> JSON:
    """A stream's 200: both media types, each item described by ``itemSchema`` (as OpenAPI
    3.2 names it), the final record by ``x-svc-stream-end``."""
    item_doc = relocate_refs(item.schema, COMPONENTS) if item else {}
    end = {"$ref": COMPONENTS + "svc.StreamEnd"}
    data: JSON = {"type": "string", "contentMediaType": "application/json"}
    if item_doc:
        data["contentSchema"] = item_doc  # an item's; a done or error event's is StreamEnd
    event = {
        "type": "object",
        "properties": {"event": {"enum": ["item", "done", "error"]}, "data": data},
        "required": ["event", "data"],
    }
    return {
        "description": "A stream: one JSON value per item (JSON Lines, the default, or "
        "Server-Sent Events `event: item` by `Accept: text/event-stream`), then one final "
        'record, `{"done": true, "items": N}` or `{"error": {"status": S, "detail": ...}, '
        '"items": N}` (SSE: `event: done` or `event: error`)',
        "content": {
            JSONL: {"itemSchema": item_doc, "x-svc-stream-end": end},
            EVENT_STREAM: {"itemSchema": event, "x-svc-stream-end": end},
        },
    }


def _operation(cap: Capability, result: RequestSchema | None) -> JSON:
    doc = (cap.docstring or "").strip()
    summary = doc.splitlines()[0] if doc else cap.name.replace("_", " ").capitalize()
    result_doc = relocate_refs(result.schema, COMPONENTS) if result else {}
    ok: JSON = {
        "description": RESULT,
        "content": _json_content(result_doc),
    }
    if cap.stream is not None:
        ok = _stream_response(result)
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
            "200": ok,
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


def openapi_document(view: ModuleIR, program: Program) -> dict[str, Any]:
    """One document over the program's modules: their paths and schemas merged (a route or
    a schema name two modules define differently refused), titled by the program's view."""
    paths: JSON = {}
    schemas: JSON = {}
    for ir in program.modules:
        part = _module_document(ir)
        for path in part["paths"]:
            if path in paths and path != "/health":
                raise LoweringError(f"two capabilities would be served at {path}")
        paths.update(part["paths"])
        merge_documents(schemas, part["components"]["schemas"], "schema")
    info: JSON = {"title": view.module, "version": "1"}
    if view.docstring:
        info["description"] = view.docstring.strip()
    return {
        "openapi": OPENAPI_VERSION,
        "info": info,
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(schemas.items()))},
    }


def _module_document(ir: ModuleIR) -> JSON:
    """One module's paths (and ``/health``) and component schemas."""
    schemas: JSON = dict(_INFRASTRUCTURE)
    paths: JSON = {}
    reached: set[str] = set()  # components shared by every operation: defined once
    for cap in ir.capabilities:
        request = request_schema(cap)
        result = result_schema(cap) if cap.stream is None else item_schema(cap)
        schemas[request_component(cap)] = relocate_refs(request.schema, COMPONENTS)
        reached |= request.refs | (result.refs if result else frozenset())
        paths[f"/capabilities/{cap.name}"] = {"post": _operation(cap, result)}
        if cap.stream is not None:  # only a document with a stream defines its end
            schemas["svc.StreamEnd"] = STREAM_END
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
    return {"paths": paths, "components": {"schemas": schemas}}
