"""OpenTelemetry traces of a served bundle, configured only by the SDK's standard ``OTEL_*``
variables (DESIGN §15), so whatever collector an operator already runs reads them as it reads
any other service's.

Tracing is off unless ``OTEL_TRACES_EXPORTER`` names an exporter (``otlp``, ``console``, or
any trace exporter an installed package registers with the SDK); ``none`` and
``OTEL_SDK_DISABLED=true`` keep it off. Off, nothing of OpenTelemetry is imported here and
the servers are the very objects they are without it: tracing costs nothing unless asked for.
On, the SDK does what its variables say: ``OTEL_SERVICE_NAME`` and
``OTEL_RESOURCE_ATTRIBUTES`` (the resource; the service name defaults to the bundle's module,
not the SDK's ``unknown_service``), ``OTEL_EXPORTER_OTLP_ENDPOINT`` /
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` and the other exporter variables, ``OTEL_TRACES_SAMPLER``
and ``OTEL_BSP_*`` (batching), ``OTEL_PROPAGATORS`` (W3C trace context and baggage by
default). ``otlp`` speaks ``http/protobuf`` unless ``OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL``
says ``grpc`` (the specification's default; the SDK's own would be gRPC, which a bundle does
not install). A setting the SDK would only warn about and ignore (an unknown exporter,
sampler or protocol, an endpoint that is not a URL, the SDK not installed) refuses startup
with one line instead: a server that was asked to trace and silently does not is worse than
one that does not start.

Spans (names and attributes in ``docs/how-to/tracing.md``): one ``SERVER`` span per HTTP
request (REST, MCP over HTTP), made with the SDK's tracer by :class:`ServerSpans` for the
network layer, which reads every request anyway (``network``), its parent the request's
``traceparent``; the MCP SDK makes the span of each MCP message (stdio and HTTP,
its parent ``params._meta.traceparent``), and :meth:`Tracing.tool_call` adds the capability
and the outcome to it. The REST span is made here rather than by
``opentelemetry-instrumentation-asgi``: that middleware records three spans and four metric
instruments per request, and took 3.3 times the CPU of this span with its server span alone,
5.9 times as it comes (``bench/bench_rest.py --part tracing``): it sets eleven attributes one
call at a time and extracts the trace context of every request, and none of it can be turned
off. On, the garbage collector is set for the spans waiting to be exported
(:func:`collect_for_spans`).
"""

import gc
import os
from collections.abc import Mapping, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from .integrity import StartupError

Scope = MutableMapping[str, Any]

EXPORTER_ENV = "OTEL_TRACES_EXPORTER"
DISABLED_ENV = "OTEL_SDK_DISABLED"
SERVICE_ENV = "OTEL_SERVICE_NAME"
PROTOCOL_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
SAMPLER_ENV = "OTEL_TRACES_SAMPLER"
SAMPLER_ARG_ENV = "OTEL_TRACES_SAMPLER_ARG"
# What tracing needs installed beside the server (the versions the runtime is tested with).
REQUIREMENTS = ("opentelemetry-sdk>=1.30,<2", "opentelemetry-exporter-otlp-proto-http>=1.30,<2")
EXPORTERS_GROUP = "opentelemetry_traces_exporter"  # the SDK's entry point group
_OTLP_BY_PROTOCOL = {"http/protobuf": "otlp_proto_http", "grpc": "otlp_proto_grpc"}
_PACKAGE_OF = {
    "otlp_proto_http": "opentelemetry-exporter-otlp-proto-http",
    "otlp_proto_grpc": "opentelemetry-exporter-otlp-proto-grpc",
}
SAMPLERS = frozenset(
    {
        "always_on",
        "always_off",
        "traceidratio",
        "parentbased_always_on",
        "parentbased_always_off",
        "parentbased_traceidratio",
    }
)
# Paths whose name is their route (a span name must not carry what a client made up).
FIXED_ROUTES = frozenset(
    {
        "/health",
        "/metrics",
        "/openapi.json",
        "/docs",
        "/mcp",
        "/.well-known/oauth-protected-resource",
    }
)
# Methods whose requests to a fixed path get a span named for it (any other: the method alone).
ROUTE_METHODS = ("GET", "POST", "DELETE", "HEAD")
SCOPE_NAME = "svc_runtime"

# Attribute names of the spans (semantic conventions where they have one).
CAPABILITY = "svc.capability"
REQUEST_ID = "svc.request_id"
STATUS = "svc.status_code"


def exporter_names(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The SDK entry point names of the trace exporters the environment asks for; empty
    when tracing is off. A value the SDK could not honour is a :class:`StartupError`."""
    if environ.get(DISABLED_ENV, "").strip().lower() == "true":
        return ()
    value = environ.get(EXPORTER_ENV, "")
    names = [name.strip().lower() for name in value.split(",") if name.strip()]
    if not names or names == ["none"]:
        return ()
    if "none" in names:
        raise StartupError(f"{EXPORTER_ENV}={value!r}: 'none' cannot be listed with an exporter")
    resolved: list[str] = []
    for given in names:
        name = given
        if given == "otlp":
            protocol = next(
                (environ[e].strip() for e in PROTOCOL_ENVS if environ.get(e, "").strip()),
                "http/protobuf",
            )
            if protocol not in _OTLP_BY_PROTOCOL:
                known = " or ".join(_OTLP_BY_PROTOCOL)
                raise StartupError(f"OTLP protocol {protocol!r} is not supported (use {known})")
            name = _OTLP_BY_PROTOCOL[protocol]
        if name.startswith("otlp"):
            _check_endpoints(environ)
        if name not in resolved:
            resolved.append(name)
    _check_sampler(environ)
    return tuple(resolved)


def _check_endpoints(environ: Mapping[str, str]) -> None:
    for name in ENDPOINT_ENVS:
        value = environ.get(name, "").strip()
        if not value:
            continue
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 (a port that is not a number raises here)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise StartupError(f"{name} must be an http:// or https:// URL, not {value[:80]!r}")


def _check_sampler(environ: Mapping[str, str]) -> None:
    sampler = environ.get(SAMPLER_ENV, "").strip().lower()
    if sampler and sampler not in SAMPLERS:
        known = ", ".join(sorted(SAMPLERS))
        raise StartupError(f"{SAMPLER_ENV}={sampler!r}: expected one of {known}")
    if sampler.endswith("traceidratio") and environ.get(SAMPLER_ARG_ENV, "").strip():
        text = environ[SAMPLER_ARG_ENV].strip()
        try:
            ratio = float(text)
        except ValueError:
            ratio = -1.0
        if not 0.0 <= ratio <= 1.0:
            raise StartupError(f"{SAMPLER_ARG_ENV}={text!r}: expected a ratio from 0 to 1")


def _exporter_class(name: str) -> Any:
    """The exporter class an installed package registers with the SDK under ``name``."""
    from importlib.metadata import entry_points

    found = list(entry_points(group=EXPORTERS_GROUP, name=name))
    if not found:
        if name in _PACKAGE_OF:
            raise StartupError(f"{EXPORTER_ENV} needs {_PACKAGE_OF[name]} installed")
        known = sorted({e.name for e in entry_points(group=EXPORTERS_GROUP)} | {"otlp"})
        raise StartupError(
            f"{EXPORTER_ENV}: no trace exporter {name!r} is installed ({', '.join(known)} are)"
        )
    try:
        return found[0].load()
    except Exception as exc:  # a broken install
        raise StartupError(
            f"{EXPORTER_ENV}: the {name} exporter cannot load: {_line(exc)}"
        ) from None


def _exporter(name: str, cls: Any) -> Any:
    """An exporter made by its class, which reads its own ``OTEL_EXPORTER_*`` variables."""
    try:
        return cls()
    except Exception as exc:  # a setting its class refuses
        raise StartupError(
            f"{EXPORTER_ENV}: the {name} exporter cannot start: {_line(exc)}"
        ) from None


def _line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Tracing:
    """The process's tracer and propagator, once the SDK is configured."""

    def __init__(self, tracer: Any) -> None:
        from opentelemetry import context, propagate, trace
        from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

        self.tracer = tracer
        self.propagator = propagate.get_global_textmap()
        # the headers the propagator reads (W3C: traceparent, tracestate, baggage)
        self.fields = frozenset(f.encode("latin-1") for f in self.propagator.fields)
        self.server_kind = SpanKind.SERVER
        self.internal_kind = SpanKind.INTERNAL
        self.error = Status(StatusCode.ERROR)
        self.attach = context.attach
        self.detach = context.detach
        self.in_context = set_span_in_context
        self.current_span = trace.get_current_span

    def server_spans(self, capabilities: Mapping[str, str]) -> "ServerSpans":
        return ServerSpans(self, capabilities)

    def tool_call(self, capability: str, status: int) -> None:
        """The capability and outcome on the span of the MCP message being answered (the
        MCP SDK's ``tools/call`` span; it names the tool and the JSON-RPC request id)."""
        span = self.current_span()
        span.set_attribute(CAPABILITY, capability)
        span.set_attribute(STATUS, status)
        if status >= 500:
            span.set_status(self.error)


class ServerSpans:
    """The ``SERVER`` span of each HTTP request, for the network layer (``network``), which
    starts it once it knows the request's id and ends it with the status it answered: one
    pass over the request, no layer of its own around it. The span's parent is the
    request's trace context (``traceparent``) when it carries one.

    The name and start attributes of a known route (a capability's ``POST``, a fixed path)
    are built once, here; per request they are copied with the request id into the one dict
    the span is created with (the SDK cleans attributes per call, taking the span's lock),
    and the status is the only attribute set later. The headers are decoded only when the
    propagator's own are there."""

    __slots__ = ("_capabilities", "_routes", "_tracing")

    def __init__(self, tracing: Tracing, capabilities: Mapping[str, str]) -> None:
        self._tracing = tracing
        self._capabilities = dict(capabilities)
        self._routes: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
        for scheme in ("http", "https"):
            for path in self._capabilities:
                self._routes["POST", path, scheme] = self._route("POST", path, scheme)
            for path in FIXED_ROUTES:
                for method in ROUTE_METHODS:
                    self._routes[method, path, scheme] = self._route(method, path, scheme)

    def _route(self, method: str, path: str, scheme: str) -> tuple[str, dict[str, Any]]:
        """The span's name and start attributes for a request to ``path``."""
        attributes: dict[str, Any] = {
            "http.request.method": method,
            "url.path": path,
            "url.scheme": scheme,
        }
        capability = self._capabilities.get(path) if method == "POST" else None
        if capability is None and path not in FIXED_ROUTES:
            return method, attributes  # a path a client made up never names a span
        attributes["http.route"] = path
        if capability is not None:
            attributes[CAPABILITY] = capability
        return f"{method} {path}", attributes

    def start(self, scope: Scope, method: str, path: str, request_id: bytes) -> tuple[Any, Any]:
        """The request's span, started and made current (user code in the capability sees
        it as its parent), and the token that :meth:`end` detaches it with. ``path`` is
        the route's (the root path taken off)."""
        tracing = self._tracing
        fields = tracing.fields
        headers = scope["headers"]
        parent = None
        for name, _ in headers:
            if name in fields:  # only then a carrier, of the propagator's headers alone
                carrier = {
                    k.decode("latin-1"): v.decode("latin-1") for k, v in headers if k in fields
                }
                parent = tracing.propagator.extract(carrier)
                break
        scheme = scope.get("scheme", "http")
        route = self._routes.get((method, path, scheme))
        name, attributes = self._route(method, path, scheme) if route is None else route
        attributes = {**attributes, REQUEST_ID: request_id.decode("latin-1")}
        span = tracing.tracer.start_span(name, parent, tracing.server_kind, attributes)
        return span, tracing.attach(tracing.in_context(span))

    def end(self, span: Any, token: Any, status: int, outcome: int) -> None:
        """End the span with what the request was answered: ``status`` as it started (0:
        it never did), ``outcome`` the final word (a stream's, at its end; else ``status``)."""
        tracing = self._tracing
        if span.is_recording():  # not when sampled out: nothing would be kept
            if outcome >= 500:
                span.set_attributes(
                    {"http.response.status_code": status or 500, "error.type": str(outcome)}
                )
                span.set_status(tracing.error)
            else:  # one attribute: each call takes the span's lock and cleans what it gets
                span.set_attribute("http.response.status_code", status or 500)
        span.end()
        tracing.detach(token)


def _resource(service: str) -> Any:
    """The SDK's resource from the environment; the bundle's module names the service
    unless ``OTEL_SERVICE_NAME`` or ``OTEL_RESOURCE_ATTRIBUTES`` does."""
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource

    resource = Resource.create()
    named = str(resource.attributes.get(SERVICE_NAME, ""))
    if named.startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: service}))
    return resource


def load_tracing(service: str, environ: Mapping[str, str] | None = None) -> Tracing | None:
    """Tracing as the environment configures it, or ``None`` when it is off (then nothing of
    OpenTelemetry is imported). A tracer provider the embedding program installed already
    (``opentelemetry-instrument``, a test) is used as it is, with its own exporters."""
    env = os.environ if environ is None else environ
    names = exporter_names(env)
    if not names:
        return None
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise StartupError(
            f"{EXPORTER_ENV} is set but the OpenTelemetry SDK is not installed "
            f"(install {' and '.join(REQUIREMENTS)} beside the server)"
        ) from None
    classes = {name: _exporter_class(name) for name in names}
    installed = trace.get_tracer_provider()
    if not isinstance(installed, TracerProvider):
        exporters = [_exporter(name, cls) for name, cls in classes.items()]
        provider = TracerProvider(resource=_resource(service))
        for exporter in exporters:
            provider.add_span_processor(BatchSpanProcessor(exporter))
        trace.set_tracer_provider(provider)  # the MCP SDK's spans go through it too
        installed = provider
    return Tracing(installed.get_tracer(SCOPE_NAME))


_process: list[Tracing] = []  # at most one: this process's
_active: list[Tracing] = []  # the one the server being started uses, when tracing is on


def start(service: str) -> Tracing | None:
    """Configure tracing for the server starting now (once per process; later servers of the
    process share its provider), or ``None`` when the environment leaves it off."""
    _active.clear()
    if not exporter_names(os.environ):
        return None
    if not _process:
        tracing = load_tracing(service)
        assert tracing is not None
        _process.append(tracing)
    _active.append(_process[0])
    return _process[0]


def current() -> Tracing | None:
    """The tracing :func:`start` turned on, else ``None``."""
    return _active[0] if _active else None


def server_spans(capabilities: Mapping[str, str]) -> ServerSpans | None:
    """What makes a server span per HTTP request when tracing is on, else ``None``. On, the
    server is built by now: the collector is set for the spans the batch processor holds
    (:func:`collect_for_spans`)."""
    tracing = current()
    if tracing is None:
        return None
    collect_for_spans()
    return tracing.server_spans(capabilities)


# Young objects between two young collections while tracing: above what a batch of spans
# holds (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512, of about ten tracked objects each).
YOUNG_THRESHOLD = 10_000
_collector_set: list[bool] = []


def collect_for_spans() -> None:
    """Set the garbage collector, once per process, for a server whose spans wait in the
    batch span processor's queue until their batch is exported.

    Those spans are not garbage: reference counting frees them once exported. But they
    count as new objects, so at the collector's default (a young collection per 700 of
    them) it ran about every twenty requests to find nothing, and every hundredth run a full
    one walking every object of the process, nearly all of them the startup's (modules,
    schemas, the application) that live as long as it does. So the young threshold is
    raised above what a batch holds (:data:`YOUNG_THRESHOLD`; never lowered, and left at
    0), and what the server built at startup is frozen out of every later collection
    (``gc.freeze``, after a collection, so that nothing dead is kept); reference cycles
    made later are still collected. A process forked after this (uvicorn's multi-process
    mode) also shares those pages instead of copying them."""
    if _collector_set:
        return
    _collector_set.append(True)
    young, middle, old = gc.get_threshold()
    if young:  # 0: the embedding program turned collection off
        gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
    gc.collect()
    gc.freeze()
