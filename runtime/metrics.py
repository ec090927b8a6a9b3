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
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any

METRICS_ENV = "SVC_METRICS"
MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
_OFF = frozenset({"0", "off", "false", "no"})
REQUESTS = ("svc_requests", "Capability calls answered, by capability and status.")
DURATION = ("svc_request_duration_seconds", "Time to answer a capability call, by capability.")
IN_FLIGHT = ("svc_requests_in_flight", "HTTP requests being answered.")


def enabled() -> bool:
    return os.environ.get(METRICS_ENV, "").strip().lower() not in _OFF


class Metrics:
    """The process's metrics. Counted on the event loop, where every request and tool call
    ends: in one process as plain numbers that ``prometheus-client`` reads at a scrape
    (:class:`_Calls`, a custom collector: a call costs a dictionary look-up and three
    additions, where the library's locked children cost some microseconds, a few percent
    of a small request); with ``PROMETHEUS_MULTIPROC_DIR`` with the library's own metrics,
    whose values live in the shared files every process reads."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Gauge

        self.registry = CollectorRegistry(auto_describe=False)
        self.running = 0  # HTTP requests being answered by this process
        # observe(capability, status, seconds): one answered call, in the store's own way
        self.observe: Callable[[str, str, float], None]
        self._extra: dict[str, Any] = {}
        self._shared = _Shared(self.registry) if os.environ.get(MULTIPROCESS_ENV) else None
        if self._shared is None:
            calls = _Calls()
            self.registry.register(calls)
            self.observe = calls.observe
            Gauge(*IN_FLIGHT, registry=self.registry).set_function(lambda: self.running)
        else:
            self.observe = self._shared.observe

    def enter(self) -> None:
        """An HTTP request begins."""
        self.running += 1
        if self._shared is not None:
            self._shared.in_flight.inc()

    def leave(self) -> None:
        """An HTTP request is answered."""
        self.running -= 1
        if self._shared is not None:
            self._shared.in_flight.dec()

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


class _Calls:
    """``svc_requests_total`` and the duration histogram of one process, as plain numbers:
    per ``(capability, status)`` its count, per capability its bucket counts and sum (the
    library's default buckets), each with its creation time. Touched on the event loop
    only; :meth:`collect` gives them to ``prometheus-client`` as metric families, which
    write the same exposition as its ``Counter`` and ``Histogram`` would."""

    def __init__(self) -> None:
        from prometheus_client import Histogram

        self._bounds: tuple[float, ...] = tuple(Histogram.DEFAULT_BUCKETS)
        # (capability, status) -> ([count, created], its capability's [buckets, sum, created])
        self._calls: dict[tuple[str, str], tuple[list[float], list[Any]]] = {}
        self._durations: dict[str, list[Any]] = {}

    def observe(self, capability: str, status: str, seconds: float) -> None:
        entry = self._calls.get((capability, status))
        if entry is None:
            entry = self._add(capability, status)
        entry[0][0] += 1
        duration = entry[1]
        duration[0][bisect_left(self._bounds, seconds)] += 1
        duration[1] += seconds

    def _add(self, capability: str, status: str) -> tuple[list[float], list[Any]]:
        duration = self._durations.get(capability)
        if duration is None:
            duration = [[0] * len(self._bounds), 0.0, time.time()]
            self._durations[capability] = duration
        entry = self._calls[(capability, status)] = ([0, time.time()], duration)
        return entry

    def collect(self) -> Iterator[Any]:
        from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily
        from prometheus_client.samples import Sample
        from prometheus_client.utils import floatToGoString

        created = _created_series()
        requests = CounterMetricFamily(*REQUESTS, labels=("capability", "status"))
        for (capability, status), (count, _) in list(self._calls.items()):
            requests.add_metric(
                (capability, status), count[0], created=count[1] if created else None
            )
        yield requests
        durations = HistogramMetricFamily(*DURATION, labels=("capability",))
        bounds = [floatToGoString(b) for b in self._bounds]  # type: ignore[no-untyped-call]
        for capability, (buckets, total, since) in list(self._durations.items()):
            cumulative, running = [], 0
            for bound, count in zip(bounds, buckets, strict=True):
                running += count
                cumulative.append((bound, running))
            durations.add_metric((capability,), cumulative, total)
            if created:
                durations.samples.append(
                    Sample(DURATION[0] + "_created", {"capability": capability}, since)
                )
        yield durations


def _created_series() -> bool:
    """Whether ``_created`` samples are written (``prometheus-client``'s own switch)."""
    value = os.environ.get("PROMETHEUS_DISABLE_CREATED_SERIES", "False")
    return value.lower() not in ("true", "1", "t")


class _Shared:
    """The library's own metrics, whose values ``prometheus-client`` keeps in the files of
    ``PROMETHEUS_MULTIPROC_DIR`` (children bound once per capability and status)."""

    def __init__(self, registry: Any) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        self._requests = Counter(*REQUESTS, ["capability", "status"], registry=registry)
        self._duration = Histogram(*DURATION, ["capability"], registry=registry)
        self.in_flight = Gauge(*IN_FLIGHT, registry=registry, multiprocess_mode="livesum")
        self._children: dict[tuple[str, str], tuple[Any, Any]] = {}

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


_process: list[Metrics] = []  # at most one: this process's


def current() -> Metrics | None:
    """The process's metrics (created on first use), or ``None`` when turned off."""
    if not enabled():
        return None
    if not _process:
        _process.append(Metrics())
    return _process[0]
