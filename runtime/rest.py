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
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import Route
from starlette.staticfiles import StaticFiles

from .bodies import BodyReader, BodyTimeout, body_reader
from .calls import CallShape, import_source, resolve_capabilities
from .conversion import attach_converters
from .encoding import Invoke, ResultNotJson, direct_invoker, encode_result
from .integrity import StartupError, load_document, load_manifest
from .lifetime import end_with_supervisor
from .limits import RETRY_AFTER_SECONDS, DeadlineExceeded, DirectLimits, LimitRefused
from .network import NetworkLayer, bound_host, network_layer
from .prevalidate import OFFLOAD_BYTES, Prevalidator
from .validation import (
    RequestInvalid,
    RequestValidator,
    TooLarge,
    check_size,
    max_body_bytes,
)

MANIFEST = "svc-rest.json"
MANIFEST_SCHEMA = "svc.rest-bundle/v1"
DOCS_ASSETS = "/docs/assets"

log = logging.getLogger("svc.rest")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON_HEADERS = [(b"content-type", b"application/json")]


async def respond(send: Send, status: int, body: bytes, headers: Any = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *(headers or JSON_HEADERS),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def error_body(detail: Any) -> bytes:
    return encode_result({"detail": detail})


INTERNAL_ERROR = error_body("Internal Server Error")
BODY_TIMEOUT = error_body("Request Timeout: the request body did not arrive in time")
# The rest of such a body may still come: the connection ends with the answer.
BODY_TIMEOUT_HEADERS = [*JSON_HEADERS, (b"connection", b"close")]


class CapabilityEndpoint:
    """``POST /capabilities/<name>`` as a raw ASGI app: everything is prepared at startup."""

    __slots__ = ("_bodies", "_invoke", "_prevalidator", "_shape", "_validator")

    def __init__(
        self,
        invoke: Invoke,
        shape: CallShape,
        validator: RequestValidator,
        bodies: BodyReader,
        prevalidator: Prevalidator | None = None,
    ) -> None:
        self._invoke = invoke
        self._shape = shape
        self._validator = validator
        self._bodies = bodies
        self._prevalidator = prevalidator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        if self._prevalidator is None or len(body) <= OFFLOAD_BYTES:
            await self._serve(body, receive, send)
            return
        try:
            await self._prevalidator.check(self._shape.name, body)
        except RequestInvalid as exc:
            await respond(send, 422, encode_result(exc.body()))
            return
        await self._serve(body, receive, send)

    async def _serve(self, body: bytes, receive: Receive, send: Send) -> None:
        try:
            values = self._validator.validate_json(body)
            args, kwargs = self._shape.bind(values)
        except RequestInvalid as exc:
            await respond(send, 422, encode_result(exc.body()))
            return
        del body
        await self._call(receive, send, args, kwargs)

    async def _call(
        self, _receive: Receive, send: Send, args: list[Any], kwargs: dict[str, Any]
    ) -> None:
        """The function in this process, and its answer (``receive`` is for a call that
        watches the client while it runs)."""
        try:
            payload = await self._invoke(args, kwargs)
        except HTTPException as exc:
            await self._http_exception(send, exc)  # the function's own answer, as raised
            return
        except asyncio.CancelledError:
            raise
        except LimitRefused as exc:
            await self._refused(send, exc)
            return
        except ResultNotJson as exc:
            log.error("capability %s: the result has no JSON form: %s", self._shape.name, exc)
            await respond(send, 500, INTERNAL_ERROR)
            return
        except BaseException:  # SystemExit, KeyboardInterrupt...: the JSON 500, never text
            log.exception("capability %s failed", self._shape.name)
            await respond(send, 500, INTERNAL_ERROR)
            return
        await respond(send, 200, payload)

    async def _refused(self, send: Send, exc: LimitRefused) -> None:
        """A call the direct-mode limits refused (``limits``): 503 with ``Retry-After``
        over the concurrency cap, 504 past an async deadline."""
        log.warning("capability %s: %s", self._shape.name, exc)
        if isinstance(exc, DeadlineExceeded):
            await respond(send, 504, error_body("Gateway Timeout"))
            return
        retry = (b"retry-after", str(RETRY_AFTER_SECONDS).encode())
        body = error_body("Service Unavailable: too many calls running; retry later")
        await respond(send, 503, body, [*JSON_HEADERS, retry])

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        try:
            for name, value in scope["headers"]:
                if name == b"content-type":
                    media = value.split(b";", 1)[0].strip().lower()
                    if media != b"application/json" and not media.endswith(b"+json"):
                        await respond(
                            send, 415, error_body("Unsupported Media Type: send application/json")
                        )
                        return None
                elif name == b"content-length" and value.isdigit():
                    check_size(int(value), self._bodies.limit)
            body = await self._bodies.read(receive)
        except TooLarge:
            await respond(send, 413, error_body("Request body too large"))
            return None
        except BodyTimeout:
            await respond(send, 408, BODY_TIMEOUT, BODY_TIMEOUT_HEADERS)
            return None
        if body is None:
            return None  # the client went away
        if not body:
            await respond(
                send,
                422,
                error_body(
                    [
                        {
                            "type": "missing",
                            "loc": ["body"],
                            "msg": "Field required: the body must be a JSON object",
                            "input": None,
                        }
                    ]
                ),
            )
            return None
        return body

    async def _http_exception(self, send: Send, exc: HTTPException) -> None:
        try:
            headers = [
                (k.lower().encode("latin-1"), v.encode("latin-1"))
                for k, v in (exc.headers or {}).items()
            ]
            body = b"" if _bodiless(exc.status_code) else error_body(exc.detail)
        except Exception:
            log.exception(
                "capability %s raised an HTTP exception that cannot be sent "
                "(a header that is not latin-1, or a detail that is not JSON)",
                self._shape.name,
            )
            await respond(send, 500, INTERNAL_ERROR)
            return
        if _bodiless(exc.status_code):
            await respond(send, exc.status_code, b"", headers)
            return
        await respond(send, exc.status_code, body, [*JSON_HEADERS, *headers])


def _bodiless(status: int) -> bool:
    return status in (204, 304) or status < 200


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
) -> dict[str, tuple[Invoke, CallShape]]:
    """Per capability ``(invoke, shape)``: the bundled source imported, its callables
    checked against the IR."""
    capabilities = ir["capabilities"]
    if manifest.get("bundle_kind") == "repository":  # only repository bundles carry it
        from .repository import resolve_repository_capabilities

        functions = resolve_repository_capabilities(bundle, manifest, capabilities)
    else:
        functions = resolve_capabilities(import_source(bundle, manifest["module"]), capabilities)
    attach_converters(ir, functions)
    return {name: (direct_invoker(f, shape), shape) for name, (f, shape) in functions.items()}


EndpointFactory = Callable[
    [Invoke, CallShape, RequestValidator, BodyReader, Prevalidator | None], CapabilityEndpoint
]


def build_app(
    bundle: Path,
    ir: dict[str, Any],
    invokers: dict[str, tuple[Invoke, CallShape]],
    *,
    max_body: int,
    endpoint: EndpointFactory = CapabilityEndpoint,
) -> RestApp:
    """The application around prepared invokers: validators from ``openapi.json``, one
    endpoint per capability (made by ``endpoint``), health, the documents and the docs."""
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
    for name, (schema, _) in schemas.items():
        path = f"/capabilities/{name}"
        invoke, shape = invokers[name]
        endpoints[path] = made = endpoint(
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


def served(app: RestApp) -> NetworkLayer:
    """The application behind the network layer: bearer tokens, ``/metrics``, request
    ids and the access log (``network``), configured from the environment. In uvicorn's
    multi-process mode each server process ends with uvicorn's supervisor (``lifetime``)."""
    end_with_supervisor()
    return network_layer(app, capabilities=app.capabilities, host=bound_host(), prefix="svc-rest")


def create_app(bundle: Path) -> NetworkLayer:
    """Verify, import and build; any problem is a one-line StartupError."""
    manifest = load_manifest(bundle, MANIFEST, MANIFEST_SCHEMA)
    mode = manifest["execution"]["mode"]
    if mode != "direct":  # its own glue serves it; never import its source here
        raise StartupError(f"{MANIFEST}: execution mode {mode!r} is not served by this module")
    ir = load_document(bundle, "capability-ir.json")
    limits = DirectLimits.from_env()
    invokers = {
        name: (limits.wrap(invoke, shape), shape)
        for name, (invoke, shape) in _direct_invokers(bundle, manifest, ir).items()
    }
    return served(build_app(bundle, ir, invokers, max_body=max_body_bytes()))
