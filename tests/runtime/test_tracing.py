"""OpenTelemetry traces of the generated servers (DESIGN §15), with the SDK itself: the
in-memory exporter in this process (a REST app served in-process, the official MCP client's
own spans), the console exporter of a server run as a subprocess (its spans read back from its
output). Spans are checked for their names, attributes and parents, and ``traceparent`` for
being honoured (the span's trace id is the one sent); settings the SDK cannot honour refuse
startup with one line; with no ``OTEL_*`` setting the SDK is never imported."""

import asyncio
import gc
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import modules_loaded_by
from mcp_client import McpBundle
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from servers import generate, serving, serving_mcp_http
from svcc.runtime import tracing
from svcc.runtime.integrity import StartupError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SOURCE = '''\
"""Functions to trace."""


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def boom() -> int:
    """Always fails."""
    raise ValueError("no")
'''
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
CONSOLE = {"OTEL_TRACES_EXPORTER": "console", "OTEL_BSP_SCHEDULE_DELAY": "20"}


# -- the environment ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "names"),
    [
        ({}, ()),
        ({"OTEL_TRACES_EXPORTER": "none"}, ()),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, ()),
        ({"OTEL_TRACES_EXPORTER": "console"}, ("console",)),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, ("otlp_proto_http",)),
        ({"OTEL_TRACES_EXPORTER": "otlp, console"}, ("otlp_proto_http", "console")),
        (
            {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
            ("otlp_proto_grpc",),
        ),
        (
            {
                "OTEL_TRACES_EXPORTER": "otlp",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
            },
            ("otlp_proto_http",),
        ),
    ],
)
def test_the_exporters_the_environment_names(
    environ: dict[str, str], names: tuple[str, ...]
) -> None:
    assert tracing.exporter_names(environ) == names


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"OTEL_TRACES_EXPORTER": "none,console"},
            "OTEL_TRACES_EXPORTER='none,console': 'none' cannot be listed with an exporter",
        ),
        (
            {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
            "OTLP protocol 'http/json' is not supported (use http/protobuf or grpc)",
        ),
        (
            {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
            "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL, not 'collector:4318'",
        ),
        (
            {
                "OTEL_TRACES_EXPORTER": "otlp",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:port/v1/traces",
            },
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:// or https:// URL, "
            "not 'http://collector:port/v1/traces'",
        ),
        (
            {"OTEL_TRACES_EXPORTER": "console", "OTEL_TRACES_SAMPLER": "sometimes"},
            "OTEL_TRACES_SAMPLER='sometimes': expected one of always_off, always_on, "
            "parentbased_always_off, parentbased_always_on, parentbased_traceidratio, "
            "traceidratio",
        ),
        (
            {
                "OTEL_TRACES_EXPORTER": "console",
                "OTEL_TRACES_SAMPLER": "traceidratio",
                "OTEL_TRACES_SAMPLER_ARG": "2",
            },
            "OTEL_TRACES_SAMPLER_ARG='2': expected a ratio from 0 to 1",
        ),
    ],
)
def test_a_setting_the_sdk_cannot_honour_is_one_line(environ: dict[str, str], message: str) -> None:
    with pytest.raises(StartupError) as refused:
        tracing.exporter_names(environ)
    assert str(refused.value) == message


def test_an_exporter_that_is_not_installed_is_named() -> None:
    """The gRPC exporter is not installed here (a bundle never needs it); nor is ``zipkin``."""
    grpc = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
    with pytest.raises(StartupError) as refused:
        tracing.load_tracing("svc", grpc)
    assert str(refused.value) == (
        "OTEL_TRACES_EXPORTER needs opentelemetry-exporter-otlp-proto-grpc installed"
    )
    with pytest.raises(StartupError) as unknown:
        tracing.load_tracing("svc", {"OTEL_TRACES_EXPORTER": "zipkin"})
    assert str(unknown.value).startswith(
        "OTEL_TRACES_EXPORTER: no trace exporter 'zipkin' is installed (console, otlp, "
    )


# -- in this process: the in-memory exporter ------------------------------------------------


@pytest.fixture(scope="module")
def spans() -> Iterator[InMemorySpanExporter]:
    """This process's tracer provider, its spans kept in memory. A provider is set once per
    process (the SDK's rule): the runtime then uses it as an embedding program's."""
    installed = trace.get_tracer_provider()
    if not isinstance(installed, TracerProvider):
        installed = TracerProvider()
        trace.set_tracer_provider(installed)
    exporter = InMemorySpanExporter()
    installed.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()  # keeps nothing more for the rest of the session


@pytest.fixture(scope="module")
def rest_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("traced")
    (base / "traced.py").write_text(SOURCE)
    generate(base / "traced.py", base / "rest")
    return base / "rest"


def _served(bundle: Path, monkeypatch: pytest.MonkeyPatch, **environ: str) -> Any:
    from svcc.runtime.rest import create_app

    for name in ("OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SVC_ACCESS_LOG", "0")
    return create_app(bundle)


def _post(app: Any, path: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    async def main() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 4321))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.post(path, json=body, headers=headers)

    return asyncio.run(main())


def _one(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    (span,) = [s for s in exporter.get_finished_spans() if s.name == name]
    return span


def _served_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    """The runtime's server spans (FastAPI adds spans of its own inside them)."""
    return [
        s for s in exporter.get_finished_spans() if s.instrumentation_scope.name == "svc_runtime"
    ]


def test_a_rest_call_is_a_server_span_under_the_callers_trace(
    rest_bundle: Path, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry.trace import SpanKind, StatusCode

    app = _served(rest_bundle, monkeypatch, OTEL_TRACES_EXPORTER="console")
    assert isinstance(app._spans, tracing.ServerSpans)
    spans.clear()
    answered = _post(app, "/capabilities/add", {"a": 20, "b": 22}, {"traceparent": TRACEPARENT})
    assert answered.json() == 42
    span = _one(spans, "POST /capabilities/add")
    assert span.kind is SpanKind.SERVER
    assert span.context is not None
    assert span.parent is not None
    assert f"{span.context.trace_id:032x}" == TRACE_ID
    assert f"{span.parent.span_id:016x}" == PARENT_ID
    assert span.parent.is_remote
    assert dict(span.attributes or {}) == {
        "http.request.method": "POST",
        "url.path": "/capabilities/add",
        "url.scheme": "http",
        "http.route": "/capabilities/add",
        "svc.capability": "add",
        "svc.request_id": answered.headers["x-request-id"],
        "http.response.status_code": 200,
    }
    assert span.status.status_code is StatusCode.UNSET

    spans.clear()
    refused = _post(app, "/capabilities/add", {"a": "x"}, {"x-request-id": "mine-1"})
    failed = _post(app, "/capabilities/boom", {}, {})
    assert (refused.status_code, failed.status_code) == (422, 500)
    invalid, error = _served_spans(spans)
    assert invalid.parent is None  # no traceparent: a trace of its own
    assert invalid.attributes is not None
    assert error.attributes is not None
    assert invalid.attributes["http.response.status_code"] == 422
    assert invalid.attributes["svc.request_id"] == "mine-1"
    assert invalid.status.status_code is StatusCode.UNSET  # a client's mistake
    assert error.attributes["svc.capability"] == "boom"
    assert error.attributes["error.type"] == "500"
    assert error.status.status_code is StatusCode.ERROR


def test_a_path_a_client_made_up_does_not_name_the_span(
    rest_bundle: Path, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _served(rest_bundle, monkeypatch, OTEL_TRACES_EXPORTER="console")
    spans.clear()
    assert _post(app, "/made/up/path-1234", {}, {}).status_code == 404
    (span,) = _served_spans(spans)
    assert span.name == "POST"
    assert span.attributes is not None
    assert "http.route" not in span.attributes


def test_a_fixed_path_names_its_span_and_the_scheme_is_the_requests(
    rest_bundle: Path, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names and start attributes are built once per route: each request still gets its own
    scheme, and the headers of its trace context alone make the parent."""

    async def main() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 4321))
        async with httpx.AsyncClient(transport=transport, base_url="https://t") as client:
            health = await client.get("/health", headers={"traceparent": TRACEPARENT})
            added = await client.post("/capabilities/add", json={"a": 1, "b": 2})
            return [health, added]

    app = _served(rest_bundle, monkeypatch, OTEL_TRACES_EXPORTER="console")
    spans.clear()
    assert [r.status_code for r in asyncio.run(main())] == [200, 200]
    health, added = _served_spans(spans)
    assert (health.name, added.name) == ("GET /health", "POST /capabilities/add")
    assert health.attributes is not None
    assert added.attributes is not None
    assert health.attributes["http.route"] == "/health"
    assert health.attributes["url.scheme"] == added.attributes["url.scheme"] == "https"
    assert health.parent is not None
    assert f"{health.parent.span_id:016x}" == PARENT_ID
    assert added.parent is None
    # on: the startup heap is out of garbage collection, young collections are rarer
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] >= tracing.YOUNG_THRESHOLD


INSIDE = '''\
"""A capability that traces its own work with the OpenTelemetry API."""

from opentelemetry import trace


def measured(n: int) -> str:
    """Its own span inside the request's; answers the id of the span current here."""
    with trace.get_tracer("user.code").start_as_current_span("inside"):
        pass
    return format(trace.get_current_span().get_span_context().span_id, "016x")
'''


def test_user_code_in_a_capability_sees_the_request_span(
    tmp_path: Path, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request's span is current where the capability runs (a pool thread): the API's
    ``get_current_span`` answers it, and a span the capability starts is its child."""
    (tmp_path / "inside.py").write_text(INSIDE)
    (tmp_path / "requirements.txt").write_text("opentelemetry-api\n")
    requirements = ("--requirements", str(tmp_path / "requirements.txt"))
    generate(tmp_path / "inside.py", tmp_path / "rest", *requirements)
    app = _served(tmp_path / "rest", monkeypatch, OTEL_TRACES_EXPORTER="console")
    spans.clear()
    answered = _post(app, "/capabilities/measured", {"n": 1}, {"traceparent": TRACEPARENT})
    assert answered.status_code == 200
    (request,) = _served_spans(spans)
    inside = _one(spans, "inside")
    assert request.context is not None
    assert inside.parent is not None
    assert answered.json() == f"{request.context.span_id:016x}"
    assert inside.parent.span_id == request.context.span_id
    assert inside.context is not None
    assert f"{inside.context.trace_id:032x}" == TRACE_ID


@pytest.mark.parametrize(
    ("traceparent", "parented"),
    [
        (TRACEPARENT, True),
        (f"00-{TRACE_ID}-{PARENT_ID}-01-extra", False),  # version 00 has no more fields
        (f"ff-{TRACE_ID}-{PARENT_ID}-01", False),  # the version W3C forbids
        (f"00-{'0' * 32}-{PARENT_ID}-01", False),  # an invalid (all-zero) trace id
        (f"00-{TRACE_ID.upper()}-{PARENT_ID}-01", False),  # hex digits are lowercase
        ("00-abc-def-01", False),
    ],
)
def test_a_malformed_traceparent_is_ignored_as_the_propagator_ignores_it(
    rest_bundle: Path,
    spans: InMemorySpanExporter,
    monkeypatch: pytest.MonkeyPatch,
    traceparent: str,
    parented: bool,
) -> None:
    """The W3C propagator's rules decide: a header it refuses starts a trace of its own,
    and the request is answered as any other."""
    app = _served(rest_bundle, monkeypatch, OTEL_TRACES_EXPORTER="console")
    spans.clear()
    answered = _post(app, "/capabilities/add", {"a": 1, "b": 1}, {"traceparent": traceparent})
    assert answered.json() == 2
    (span,) = _served_spans(spans)
    assert span.context is not None
    assert (span.parent is not None) is parented
    assert (f"{span.context.trace_id:032x}" == TRACE_ID) is parented


def test_a_caller_that_did_not_sample_its_trace_gets_no_span(
    rest_bundle: Path, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK's sampler decides (parent-based by default): a ``traceparent`` whose flags
    say "not sampled" makes a span that records nothing and reaches no exporter."""
    app = _served(rest_bundle, monkeypatch, OTEL_TRACES_EXPORTER="console")
    spans.clear()
    unsampled = f"00-{TRACE_ID}-{PARENT_ID}-00"
    answered = _post(app, "/capabilities/add", {"a": 1, "b": 1}, {"traceparent": unsampled})
    assert answered.json() == 2
    assert answered.headers["x-request-id"]
    assert _served_spans(spans) == []


@pytest.mark.parametrize(
    "environ",
    [
        {},
        {"OTEL_TRACES_EXPORTER": "none"},
        {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"},
    ],
)
def test_off_the_server_is_untouched(
    rest_bundle: Path, monkeypatch: pytest.MonkeyPatch, environ: dict[str, str]
) -> None:
    from svcc.runtime.network import NetworkLayer

    app = _served(rest_bundle, monkeypatch, **environ)
    assert isinstance(app, NetworkLayer)
    assert app._spans is None


def test_off_the_sdk_is_never_imported(rest_bundle: Path, tmp_path: Path) -> None:
    """A fresh interpreter serving the bundle with no ``OTEL_*`` setting: the SDK stays out
    (FastAPI itself imports the OpenTelemetry API, which is not the SDK)."""
    statement = (
        "import os, sys\n"
        "for name in [n for n in os.environ if n.startswith('OTEL_')]: del os.environ[name]\n"
        f"os.chdir({str(rest_bundle)!r}); sys.path.insert(0, '.')\n"
        "import app"
    )
    loaded = modules_loaded_by(statement, ("opentelemetry.sdk", "opentelemetry.exporter"))
    assert loaded == []


def test_the_sdk_missing_stops_startup_with_one_line(rest_bundle: Path) -> None:
    """The bundle's own glue, with the SDK's modules unimportable (as in an environment
    that installed only the bundle's requirements)."""
    code = (
        "import sys; sys.modules['opentelemetry.sdk'] = None\nsys.path.insert(0, '.'); import app"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=rest_bundle,
        env={"PATH": "/usr/bin:/bin", "OTEL_TRACES_EXPORTER": "otlp"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 4
    assert proc.stderr.strip().splitlines() == [
        "svc-rest: startup refused: OTEL_TRACES_EXPORTER is set but the OpenTelemetry SDK "
        "is not installed (install opentelemetry-sdk>=1.30,<2 and "
        "opentelemetry-exporter-otlp-proto-http>=1.30,<2 beside the server)"
    ]


# -- servers as subprocesses: the console exporter ------------------------------------------


def console_spans(text: str) -> list[dict[str, Any]]:
    """The spans the console exporter wrote (one indented JSON object each) among the other
    lines of a server's output."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    at = text.find('{\n    "name"')
    while at >= 0:
        value, end = decoder.raw_decode(text, at)
        found.append(value)
        at = text.find('{\n    "name"', end)
    return found


def _named(found: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (span,) = [s for s in found if s["name"] == name]
    return span


def test_a_served_rest_bundle_exports_its_spans(rest_bundle: Path) -> None:
    with serving(rest_bundle, env={**CONSOLE, "OTEL_SERVICE_NAME": "adder"}) as server:
        with server.client() as client:
            answered = client.post(
                "/capabilities/add", json={"a": 1, "b": 2}, headers={"traceparent": TRACEPARENT}
            )
        assert answered.json() == 3
    span = _named(console_spans(server.log_text()), "POST /capabilities/add")
    assert span["context"]["trace_id"] == "0x" + TRACE_ID
    assert span["parent_id"] == "0x" + PARENT_ID
    assert span["kind"] == "SpanKind.SERVER"
    assert span["attributes"]["svc.request_id"] == answered.headers["x-request-id"]
    assert span["resource"]["attributes"]["service.name"] == "adder"


def test_the_sampler_the_environment_names_decides(rest_bundle: Path) -> None:
    """``OTEL_TRACES_SAMPLER=parentbased_always_off``: a request that brings no trace
    context is not sampled (no span), one whose caller sampled its trace is."""
    environ = {**CONSOLE, "OTEL_TRACES_SAMPLER": "parentbased_always_off"}
    with serving(rest_bundle, env=environ) as server, server.client() as client:
        alone = client.post("/capabilities/add", json={"a": 1, "b": 2})
        followed = client.post(
            "/capabilities/add", json={"a": 2, "b": 2}, headers={"traceparent": TRACEPARENT}
        )
        assert (alone.json(), followed.json()) == (3, 4)
    (span,) = [s for s in console_spans(server.log_text()) if s["name"].startswith("POST")]
    assert span["attributes"]["svc.request_id"] == followed.headers["x-request-id"]
    assert span["parent_id"] == "0x" + PARENT_ID
    assert span["attributes"]["http.response.status_code"] == 200


@pytest.fixture(scope="module")
def mcp_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("traced-mcp")
    (base / "traced.py").write_text(SOURCE)
    generate(base / "traced.py", base / "mcp", interface="mcp")
    return base / "mcp"


def test_an_mcp_tool_call_over_stdio_continues_the_clients_trace(
    mcp_bundle: Path, spans: InMemorySpanExporter
) -> None:
    """The official client sends its span's context in ``params._meta`` (the MCP SDK's
    propagation); the server's span of the call is its child, with the capability and the
    outcome the runtime adds."""
    spans.clear()
    session = McpBundle(mcp_bundle, env=CONSOLE)
    try:
        assert session.call("add", {"a": 2, "b": 3}).structured_content == {"result": 5}
        assert session.call("boom", {}).is_error
    finally:
        session.close()
    sent = _one(spans, "MCP send tools/call add")
    found = console_spans(session.stderr())
    served = _named(found, "tools/call add")
    assert sent.context is not None
    assert served["context"]["trace_id"] == f"0x{sent.context.trace_id:032x}"
    assert served["parent_id"] == f"0x{sent.context.span_id:016x}"
    assert served["kind"] == "SpanKind.SERVER"
    attributes = served["attributes"]
    assert attributes["svc.capability"] == "add"
    assert attributes["svc.status_code"] == 200
    assert attributes["gen_ai.tool.name"] == "add"
    assert attributes["jsonrpc.request.id"]
    assert served["resource"]["attributes"]["service.name"] == "traced"
    failed = _named(found, "tools/call boom")
    assert failed["attributes"]["svc.status_code"] == 500
    assert failed["status"]["status_code"] == "ERROR"


def test_an_mcp_call_over_http_has_the_request_span_and_the_call_span(
    mcp_bundle: Path, spans: InMemorySpanExporter
) -> None:
    """Over HTTP the request's span follows its ``traceparent`` header; the tool call's
    span follows ``_meta`` (the client's span), as the MCP SDK decides."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def call(url: str) -> Any:
        async with (
            httpx2.AsyncClient(headers={"traceparent": TRACEPARENT}, timeout=30) as http,
            streamable_http_client(url + "/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool("add", {"a": 4, "b": 5})

    spans.clear()
    with serving_mcp_http(mcp_bundle, CONSOLE) as server:
        assert asyncio.run(call(server.url)).structured_content == {"result": 9}
    found = console_spans(server.log_text())
    requests = [s for s in found if s["name"] == "POST /mcp"]
    assert requests
    assert all(s["parent_id"] == "0x" + PARENT_ID for s in requests)
    assert all(s["attributes"]["svc.request_id"] for s in requests)
    served = _named(found, "tools/call add")
    sent = _one(spans, "MCP send tools/call add")
    assert sent.context is not None
    assert served["parent_id"] == f"0x{sent.context.span_id:016x}"
    assert served["attributes"]["svc.capability"] == "add"


def _governed(tmp_path: Path, interface: str) -> Path:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"limits": {"wall_time_ms": 4000}}))
    bundle = tmp_path / f"governed-{interface}"
    generate(
        FIXTURES / "governed" / "gov.py",
        bundle,
        "--requirements",
        str(FIXTURES / "governed" / "requirements.txt"),
        "--allow",
        "env,process",
        "--execution-policy",
        str(policy),
        interface=interface,
    )
    return bundle


def test_a_governed_call_has_a_span_for_its_worker(tmp_path: Path) -> None:
    bundle = _governed(tmp_path, "rest")
    with serving(bundle, env=CONSOLE) as server, server.client() as client:
        answered = client.post(
            "/capabilities/counter", json={}, headers={"traceparent": TRACEPARENT}
        )
        assert answered.json() == 1
    found = console_spans(server.log_text())
    request = _named(found, "POST /capabilities/counter")
    worker = _named(found, "worker counter")
    assert request["parent_id"] == "0x" + PARENT_ID
    assert worker["context"]["trace_id"] == "0x" + TRACE_ID
    assert worker["parent_id"] == request["context"]["span_id"]
    assert worker["kind"] == "SpanKind.INTERNAL"
    assert worker["attributes"] == {"svc.capability": "counter", "svc.status_code": 200}


def test_a_governed_tool_call_has_a_span_for_its_worker(tmp_path: Path) -> None:
    session = McpBundle(_governed(tmp_path, "mcp"), env=CONSOLE)
    try:
        assert session.call("counter", {}).structured_content == {"result": 1}
    finally:
        session.close()
    found = console_spans(session.stderr())
    call = _named(found, "tools/call counter")
    worker = _named(found, "worker counter")
    assert worker["parent_id"] == call["context"]["span_id"]
    assert worker["context"]["trace_id"] == call["context"]["trace_id"]
    assert call["attributes"]["svc.status_code"] == 200
