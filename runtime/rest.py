"""The generated REST server: capability routes dispatched ahead of a FastAPI application.

``create_app(bundle)`` verifies the bundle (manifest digests), imports the bundled source,
checks every callable's shape against the IR, and builds one raw ASGI endpoint per
capability. The application it returns looks each request's path up in a dict of those
endpoints first (a ``POST`` to a capability never passes through the framework's
middleware and routing); everything else (``/health``, ``/openapi.json``, ``/docs`` with
locally served Swagger UI assets, 404s, a ``GET`` to a capability's 405) is answered by the
FastAPI application. Each endpoint reads the body, validates it in one pass against the
request schema published in ``openapi.json`` (a large body is checked first in a helper
process: see ``prevalidate``), calls the function (sync functions in the thread pool,
async functions awaited) and encodes the result once. Whatever a function raises, even
``SystemExit``, the client gets a JSON answer.
"""

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, cast

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.staticfiles import StaticFiles

from .bodies import BodyReader, body_reader
from .calls import CallShape, import_source, resolve_capabilities
from .conversion import attach_converters
from .encoding import Invoke, direct_invoker
from .integrity import StartupError, load_document, load_manifest
from .lifetime import end_with_supervisor
from .limits import DirectLimits
from .network import App, bound_host, network_layer
from .prevalidate import OFFLOAD_BYTES, Prevalidator
from .rest_endpoint import (
    INTERNAL_ERROR,
    CapabilityEndpoint,
    Receive,
    Scope,
    Send,
    log,
    respond,
)
from .streaming import Open, direct_opener
from .tracing import start as start_tracing
from .validation import (
    RequestValidator,
    max_body_bytes,
)

MANIFEST = "svc-rest.json"
MANIFEST_SCHEMA = "svc.rest-bundle/v1"
DOCS_ASSETS = "/docs/assets"


class RestApp:
    """The ASGI application: capability ``POST``s straight to their endpoint, everything
    else to FastAPI. Attribute access falls through to the FastAPI application."""

    def __init__(self, endpoints: dict[str, CapabilityEndpoint], framework: FastAPI) -> None:
        self._endpoints = endpoints
        self.framework = framework
        # path -> capability name: what the network layer counts calls by
        self.capabilities = {path: e._shape.name for path, e in endpoints.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            path = scope["path"]
            root = scope.get("root_path")
            if root and path.startswith(root):
                path = path[len(root) :]
            endpoint = self._endpoints.get(path)
            if endpoint is not None:
                await _guarded(endpoint, scope, receive, send)
                return
        await self.framework(scope, receive, send)

    def __getattr__(self, name: str) -> Any:
        if name == "framework":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.framework, name)


async def _guarded(
    endpoint: CapabilityEndpoint, scope: Scope, receive: Receive, send: Send
) -> None:
    """The endpoint, with the JSON 500 for anything it lets escape (if it had already
    started answering, the server refuses the second start: nothing more can be said)."""
    try:
        await endpoint(scope, receive, send)
    except asyncio.CancelledError:
        raise
    except BaseException:
        log.exception("unhandled error in %s", scope["path"])
        with contextlib.suppress(Exception):
            await respond(send, 500, INTERNAL_ERROR)


def _docs_routes(app: FastAPI, title: str) -> None:
    """Swagger UI from the ``swagger_ui_bundle`` package: ``/docs`` works offline."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError as exc:
        raise StartupError(f"swagger-ui-bundle-v2 is not installed ({exc})") from None
    page = get_swagger_ui_html(
        openapi_url="/openapi.json",
        title=f"{title} - Swagger UI",
        swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{DOCS_ASSETS}/favicon-32x32.png",
    ).body

    async def docs() -> HTMLResponse:
        return HTMLResponse(page)

    app.add_api_route("/docs", docs, methods=["GET"], include_in_schema=False)
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")


def _direct_invokers(
    bundle: Path, manifest: dict[str, Any], ir: dict[str, Any]
) -> dict[str, tuple[Invoke | Open, CallShape]]:
    """Per capability ``(invoke, shape)``: the bundled source imported, its callables
    checked against the IR."""
    capabilities = ir["capabilities"]
    if manifest.get("bundle_kind") == "repository":  # only repository bundles carry it
        from .repository import resolve_repository_capabilities

        functions = resolve_repository_capabilities(bundle, manifest, capabilities)
    else:
        functions = resolve_capabilities(import_source(bundle, manifest["module"]), capabilities)
    attach_converters(ir, functions)
    return {
        name: (
            direct_opener(f, shape.walk_result) if shape.stream else direct_invoker(f, shape),
            shape,
        )
        for name, (f, shape) in functions.items()
    }


EndpointFactory = Callable[
    [Any, CallShape, RequestValidator, BodyReader, Prevalidator | None], CapabilityEndpoint
]


def stream_endpoints() -> EndpointFactory:
    """The endpoint of a stream capability, with the limits from the environment."""
    from .rest_stream import StreamEndpoint
    from .streaming import stream_limits

    return partial(StreamEndpoint, limits=stream_limits())


def build_app(
    bundle: Path,
    ir: dict[str, Any],
    invokers: Mapping[str, tuple[Invoke | Open, CallShape]],
    *,
    max_body: int,
    endpoint: EndpointFactory = CapabilityEndpoint,
    stream_endpoint: Callable[[], EndpointFactory] = stream_endpoints,
) -> RestApp:
    """The application around prepared invokers: validators from ``openapi.json``, one
    endpoint per capability (made by ``endpoint``, or by ``stream_endpoint()`` for a stream),
    health, the documents and the docs."""
    openapi_bytes = (bundle / "openapi.json").read_bytes()
    openapi = load_document(bundle, "openapi.json")
    title = openapi["info"]["title"]
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    definitions = openapi.get("components", {}).get("schemas", {})
    schemas = {}
    for capability in ir["capabilities"]:
        operation = openapi["paths"][f"/capabilities/{capability['name']}"]["post"]
        schema_ref = operation["requestBody"]["content"]["application/json"]["schema"]
        schemas[capability["name"]] = (
            definitions[schema_ref["$ref"].rsplit("/", 1)[1]],
            definitions,
        )
    prevalidator = Prevalidator(schemas) if max_body > OFFLOAD_BYTES else None
    if prevalidator is not None:  # its helper goes with the server
        app.router.on_shutdown.append(prevalidator.close)
    endpoints: dict[str, CapabilityEndpoint] = {}
    bodies = body_reader(max_body)  # one for every endpoint: one watcher
    streams = stream_endpoint() if any(s.stream for _, s in invokers.values()) else endpoint
    for name, (schema, _) in schemas.items():
        path = f"/capabilities/{name}"
        invoke, shape = invokers[name]
        endpoints[path] = made = (streams if shape.stream else endpoint)(
            invoke, shape, RequestValidator(schema, definitions), bodies, prevalidator
        )
        # Also a framework route: a GET is its 405, and the route table stays complete.
        app.router.routes.append(Route(path, made, methods=["POST"], name=name))

    async def health() -> dict[str, str]:
        return {"status": "ok"}

    async def openapi_document() -> Response:
        return Response(openapi_bytes, media_type="application/json")

    app.add_api_route("/health", health, methods=["GET"], include_in_schema=False)
    app.add_api_route("/openapi.json", openapi_document, methods=["GET"], include_in_schema=False)
    _docs_routes(app, title)
    return RestApp(endpoints, app)


def served(app: RestApp) -> App:
    """The application behind the network layer: bearer tokens, ``/metrics``, request
    ids and the access log (``network``), configured from the environment. In uvicorn's
    multi-process mode each server process ends with uvicorn's supervisor (``lifetime``)."""
    end_with_supervisor()
    return network_layer(app, capabilities=app.capabilities, host=bound_host(), prefix="svc-rest")


def create_app(bundle: Path) -> App:
    """Verify, import and build; any problem is a one-line StartupError."""
    manifest = load_manifest(bundle, MANIFEST, MANIFEST_SCHEMA)
    start_tracing(manifest["module"])  # OTEL_* (``tracing``): off unless configured
    mode = manifest["execution"]["mode"]
    if mode != "direct":  # its own glue serves it; never import its source here
        raise StartupError(f"{MANIFEST}: execution mode {mode!r} is not served by this module")
    ir = load_document(bundle, "capability-ir.json")
    limits = DirectLimits.from_env()
    # SVC_MAX_CONCURRENCY and the async deadline bound calls; a stream has its own limits
    invokers = {
        name: (invoke if shape.stream else limits.wrap(cast(Invoke, invoke), shape), shape)
        for name, (invoke, shape) in _direct_invokers(bundle, manifest, ir).items()
    }
    return served(build_app(bundle, ir, invokers, max_body=max_body_bytes()))
