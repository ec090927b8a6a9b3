"""Prometheus metrics of a served bundle, with ``prometheus-client`` (never hand-written).

``svc_requests_total{capability,status}`` and the ``svc_request_duration_seconds``
histogram per capability, ``svc_requests_in_flight`` (every HTTP request being answered),
and whatever a part of the server registers with :meth:`Metrics.extra`. ``status`` has one
shape on both interfaces: the HTTP status code REST answers the outcome with. A REST call
is counted with its response's status; an MCP tool call (on every transport, stdio
included) with the status REST gives the same outcome: ``200`` a result, ``413`` arguments
over the input limit, ``422`` invalid arguments, ``500`` the tool failed, ``503`` busy,
``504`` the time limit. Label values are capability names the bundle declares and status
codes, never a path or a tool name a client sent: what a client sends cannot grow the
series without bound.

One process serves one set of metrics (the metrics live in a private registry, so several
bundles imported by one test process do not collide). With several server processes
(uvicorn's multi-process option), set ``PROMETHEUS_MULTIPROC_DIR`` to an empty writable
directory before the server starts: the client library then keeps every process's values in
files there and ``/metrics`` merges them (``MultiProcessCollector``), the in-flight gauge
summed over live processes. An MCP server over stdio has no ``/metrics``: with that
directory set, its counts are in the files there, for any process that runs
``MultiProcessCollector`` on it. ``SVC_METRICS=0`` turns metrics off (no ``/metrics``,
nothing counted).
"""

import os
from collections.abc import Callable
from typing import Any

METRICS_ENV = "SVC_METRICS"
MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
_OFF = frozenset({"0", "off", "false", "no"})


def enabled() -> bool:
    return os.environ.get(METRICS_ENV, "").strip().lower() not in _OFF


class Metrics:
    """The process's metrics; children per capability are bound once, then reused."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry(auto_describe=False)
        self._requests = Counter(
            "svc_requests",
            "Capability calls answered, by capability and status.",
            ["capability", "status"],
            registry=self.registry,
        )
        self._duration = Histogram(
            "svc_request_duration_seconds",
            "Time to answer a capability call, by capability.",
            ["capability"],
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "svc_requests_in_flight",
            "HTTP requests being answered.",
            registry=self.registry,
            multiprocess_mode="livesum",
        )
        # (capability, status) -> (its counter, its capability's histogram), bound once
        self._children: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._extra: dict[str, Any] = {}

    def observe(self, capability: str, status: str, seconds: float) -> None:
        key = (capability, status)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = (
                self._requests.labels(capability, status),
                self._duration.labels(capability),
            )
        children[0].inc()
        children[1].observe(seconds)

    def extra(self, key: str, make: Callable[[Any], Any]) -> Any:
        """Metrics a server part registers once (``make(registry)``), under ``key``."""
        if key not in self._extra:
            self._extra[key] = make(self.registry)
        return self._extra[key]

    def exposition(self) -> tuple[bytes, str]:
        """``(body, content type)`` in the Prometheus text format."""
        from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

        if os.environ.get(MULTIPROCESS_ENV):
            from prometheus_client.multiprocess import MultiProcessCollector

            merged = CollectorRegistry()
            MultiProcessCollector(merged)  # type: ignore[no-untyped-call]
            return generate_latest(merged), CONTENT_TYPE_LATEST
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


_process: list[Metrics] = []  # at most one: this process's


def current() -> Metrics | None:
    """The process's metrics (created on first use), or ``None`` when turned off."""
    if not enabled():
        return None
    if not _process:
        _process.append(Metrics())
    return _process[0]
