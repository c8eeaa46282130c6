"""Prometheus metrics of one server process (``tablehost serve --metrics-port PORT``).

Names and labels (all ``tablehost_``; seconds and instructions as Prometheus expects):

=====================================  =========  ===========================================
metric                                 type       labels, meaning
=====================================  =========  ===========================================
``moves_accepted_total``               counter    ``kind`` (move, undo), ``by`` (person, bot, host):
                                                  every journaled move and undo, whoever made it
                                                  (a seat's request, a server bot, the host
                                                  playing for an absent seat)
``moves_refused_total``                counter    ``reason``: the error code the match refused a
                                                  seat's move or undo with (``match/not_offered``,
                                                  ``guest/budget``...)
``moves_failed_total``                 counter    ``reason`` (``store/unavailable``...): a seat's
                                                  move or undo the server could not store (not
                                                  refused: it may be sent again)
``guest_call_seconds``                 histogram  ``module``, ``op``: one pool call, wall time
                                                  (queue wait and run, answered or refused;
                                                  buckets to 60 s: a bot's ``search``)
``guest_call_fuel``                    histogram  ``module``, ``op``: fuel one answered op burnt
                                                  (``playout`` and ``search`` included)
``guest_call_cpu_seconds_total``       counter    ``module``, ``op``: CPU seconds of the guest's
                                                  thread while its calls ran
``budget_refusals_total``              counter    ``module``, ``budget``: calls stopped by a budget
``matches``                            gauge      ``state``: active (a change in the last
                                                  :data:`ACTIVE_WINDOW_S`), idle (not over,
                                                  unchanged longer), over: the started matches in
                                                  this process's memory only (not evicted ones,
                                                  not the lobby's waiting matches, not another
                                                  process's)
``watch_streams``                      gauge      open watch streams: gRPC WatchMatch and the
                                                  HTTP API's event streams together
``matches_in_memory``                  gauge      started matches held in memory (evicted ones are
                                                  reloaded from the store on their next request)
``evictions_total``                    counter    ``reason`` (over, idle, waiting, timed): matches
                                                  and lobby entries dropped from memory
                                                  (``serve --evict-after``, ``--max-live-matches``)
``store_commit_seconds``               histogram  one write transaction of the store
``store_up``                           gauge      1 while the store answers health pings
``requests_total``                     counter    ``transport`` (grpc, http), ``method``, ``code``:
                                                  requests by status; an HTTP request's method
                                                  is its endpoint's name (``view``, ``act``...,
                                                  ``unrouted``) and its code the gRPC status name
                                                  of its answer (a 429 is ``RESOURCE_EXHAUSTED``;
                                                  a client gone mid-stream ``CANCELLED``)
``request_cpu_seconds_total``          counter    ``method``: gRPC only, CPU seconds of the serving thread
                                                  inside handlers (auth, registry, guest, store,
                                                  views); the rest of the process's CPU is grpc,
                                                  its threads and the background threads
``rate_limited_total``                 counter    ``kind`` (request, watch, auth): refused by a rate limit
                                                  (gRPC and HTTP together: the limits are shared)
``gc_pause_seconds``                   histogram  ``generation`` (0, 1, 2): one garbage collection
                                                  (every thread waits for it: the interpreter lock)
=====================================  =========  ===========================================

Each server has its own :class:`Metrics` (its own ``CollectorRegistry``), so tests can run
several servers in one process. Guest calls reach it through the pool's public observer hook
(:attr:`tablehost.guest.GuestPool.observer` set to :meth:`Metrics.observe_guest_call`).
Nothing here imports grpc.

The per-request paths (a move, a guest call, a request) reach their labelled series through
:meth:`Metrics.child`, which remembers each ``(metric, labels)`` child once looked up:
``labels()`` validates and takes the metric's lock on every call, a few microseconds that every
request paid several times over.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from tablehost.guest.pool import CallTiming

ACTIVE_WINDOW_S = 60.0
"""A match changed within this many seconds counts as active; unchanged longer and not over, idle."""
MATCH_STATES = ("active", "idle", "over")
"""The ``state`` label values of ``tablehost_matches`` (``idle`` was ``waiting``, which the lobby's
status of a match waiting for its players also says)."""
FUEL_BUCKETS = tuple(float(10**k) for k in range(3, 13))
"""Fuel units, 10**3 to 10**12 (a tic-tac-toe step burns tens of thousands; a server bot's
search, a scaled budget, up to hundreds of billions)."""
LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
RATE_LIMIT_CODES = frozenset({"request/rate_limited", "request/too_many_watchers"})
"""The error codes of a rate limit's refusal (``rate_limited_total``)."""
GUEST_CALL_BUCKETS = (*LATENCY_BUCKETS, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Seconds of one guest call: a move's op takes milliseconds, a server bot's ``search`` up to a
minute (its budget is scaled by the iterations asked for)."""


class Metrics:
    """Every metric of one server, in a registry of its own.

    Attributes:
        registry: the ``CollectorRegistry`` the HTTP endpoint serves.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.moves_accepted = Counter(
            "tablehost_moves_accepted", "Journaled moves and undos, by who made them (person, bot, host)",
            ["kind", "by"], registry=r,
        )
        self.moves_refused = Counter(
            "tablehost_moves_refused", "Moves and undos the match refused, by error code", ["reason"], registry=r
        )
        self.moves_failed = Counter(
            "tablehost_moves_failed", "Moves and undos the server could not store, by error code", ["reason"],
            registry=r,
        )
        self.guest_seconds = Histogram(
            "tablehost_guest_call_seconds",
            "Guest pool calls, wall time",
            ["module", "op"],
            buckets=GUEST_CALL_BUCKETS,
            registry=r,
        )
        self.guest_fuel = Histogram(
            "tablehost_guest_call_fuel",
            "Fuel one guest op burnt, all its crossings",
            ["module", "op"],
            buckets=FUEL_BUCKETS,
            registry=r,
        )
        self.budget_refusals = Counter(
            "tablehost_budget_refusals", "Guest calls stopped by a budget", ["module", "budget"], registry=r
        )
        self.watch_streams = Gauge(
            "tablehost_watch_streams", "Open watch streams (gRPC WatchMatch and HTTP event streams)", registry=r
        )
        self._watch_slots: list[Any] = []
        self.watch_streams.set_function(lambda: sum(slots.open for slots in self._watch_slots))
        self.matches_in_memory = Gauge(
            "tablehost_matches_in_memory", "Started matches held in memory", registry=r
        )
        self.evictions = Counter(
            "tablehost_evictions", "Matches dropped from memory, by reason", ["reason"], registry=r
        )
        self.store_commit = Histogram(
            "tablehost_store_commit_seconds", "Store write transactions", buckets=LATENCY_BUCKETS, registry=r
        )
        self.store_up = Gauge("tablehost_store_up", "1 while the store answers health pings", registry=r)
        self.requests = Counter(
            "tablehost_requests", "API requests (gRPC and HTTP) by method and status", ["transport", "method", "code"],
            registry=r,
        )
        self.request_cpu = Counter(
            "tablehost_request_cpu_seconds", "CPU of the serving thread inside handlers", ["method"], registry=r
        )
        self.guest_cpu = Counter(
            "tablehost_guest_call_cpu_seconds", "CPU of guest pool calls while they ran", ["module", "op"], registry=r
        )
        self.gc_pause = Histogram(
            "tablehost_gc_pause_seconds", "Garbage collections, wall time", ["generation"],
            buckets=LATENCY_BUCKETS, registry=r,
        )
        self.rate_limited = Counter(
            "tablehost_rate_limited",
            "Requests and watch streams refused by a rate limit",
            ["kind"],
            registry=r,
        )
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}

    def child(self, metric: Any, *values: str) -> Any:
        """``metric.labels(*values)``, looked up once per metric and label values and then
        remembered (the label values of the per-request paths are few: methods, status names,
        error codes, modules and ops).

        Args:
            metric: one of this object's labelled metrics (``requests``, ``guest_cpu``...).
            values: its label values, in the metric's label order.

        Returns:
            The labelled child (``inc``/``observe`` on it as on ``metric.labels(...)``).

        Raises:
            ValueError: the wrong number of label values (from ``labels``, on first use).
        """
        key = (id(metric), values)
        found = self._children.get(key)
        if found is None:
            # Two threads may both look it up: labels() answers both with the same child.
            found = self._children[key] = metric.labels(*values)
        return found

    def count_request(self, method: str, outcome: str, cpu_s: float | None, transport: str = "grpc") -> None:
        """Count one finished request in ``requests_total{transport, method, code=outcome}``.

        Args:
            method: the RPC's name, or the HTTP endpoint's.
            outcome: the status name (``OK``, ``RESOURCE_EXHAUSTED``...).
            cpu_s: CPU seconds the serving thread spent in the handler, added to
                ``request_cpu_seconds_total{method}``; None (HTTP: its handler hops between
                threads) counts none.
            transport: ``grpc`` or ``http``.
        """
        self.child(self.requests, transport, method, outcome).inc()
        if cpu_s is not None:
            self.child(self.request_cpu, method).inc(cpu_s)

    def count_rate_limited(self, exc: Exception) -> None:
        """Count ``exc`` in ``rate_limited_total{kind}`` when it is a limit's refusal
        (:data:`RATE_LIMIT_CODES`); anything else, even with a retry hint (``store/unavailable``),
        is not counted.

        The kind is the error's own (``RateLimited.kind``: ``request`` or ``auth``), ``watch``
        for a stream over its cap (``request/too_many_watchers``)."""
        code = getattr(exc, "code", None)
        if code not in RATE_LIMIT_CODES:
            return
        kind = getattr(exc, "kind", None) or ("watch" if code == "request/too_many_watchers" else "request")
        self.child(self.rate_limited, kind).inc()

    def count_journaled(self, kind: str, by: str) -> None:
        """Count one journaled move or undo in ``moves_accepted_total``.

        Args:
            kind: ``move`` or ``undo``.
            by: who made it: ``person`` (a seat's request), ``bot`` (a server bot seat) or
                ``host`` (the host playing for an absent seat).
        """
        self.child(self.moves_accepted, kind, by).inc()

    def count_unstored(self, code: str) -> None:
        """Count a seat's move or undo that did not go through, by its error ``code``: a store
        failure (``store/...``: the server could not store it) in ``moves_failed_total``, any
        other code (the match refused it) in ``moves_refused_total``."""
        self.child(self.moves_failed if code.startswith("store/") else self.moves_refused, code).inc()

    def observe_guest_call(self, timing: CallTiming) -> None:
        """Count one guest pool call: a :attr:`GuestPool.observer <tablehost.guest.GuestPool.observer>`.

        Args:
            timing: the call's record. Its ``queue_ms + run_ms`` goes to ``guest_call_seconds``,
                its ``cpu_ms`` to ``guest_call_cpu_seconds``;
                the fuel of an answered op to ``guest_call_fuel`` (a refused op's budget says
                nothing about what it burnt); a ``guest/budget`` refusal to ``budget_refusals``.
        """
        module, op = timing.module, timing.op
        self.child(self.guest_seconds, module, op).observe((timing.queue_ms + timing.run_ms) / 1000.0)
        self.child(self.guest_cpu, module, op).inc(timing.cpu_ms / 1000.0)
        if not timing.failed:
            self.child(self.guest_fuel, module, op).observe(timing.fuel)
        elif timing.budget is not None:
            self.child(self.budget_refusals, module, timing.budget).inc()

    def follow_gc(self) -> Callable[[str, dict[str, int]], None]:
        """Time every garbage collection of this process into ``gc_pause_seconds`` (a
        ``gc.callbacks`` hook, two calls per collection; for the process's one serving Metrics).

        Returns:
            The hook (remove it from ``gc.callbacks`` to stop).
        """
        started: list[float] = [0.0]

        def timed(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                pause = time.perf_counter() - started[0]
                self.child(self.gc_pause, str(info["generation"])).observe(pause)

        gc.callbacks.append(timed)
        return timed

    def follow_watch_slots(self, slots: Any) -> None:
        """Count the streams open through ``slots`` in ``watch_streams`` (with every other
        transport's followed so; the same slots followed twice count once).

        Args:
            slots: a :class:`~tablehost.api.watch_slots.WatchSlots` (anything with ``open``).
        """
        if not any(followed is slots for followed in self._watch_slots):
            self._watch_slots.append(slots)

    def watch_matches(self, summaries: Callable[[], Iterable[tuple[bool, str]]]) -> None:
        """Count matches at scrape time into ``tablehost_matches{state}`` (:data:`MATCH_STATES`).

        Args:
            summaries: ``(game_over, newest_change_at)`` per started match in this process's
                memory (``newest_change_at`` an ISO 8601 timestamp; one that does not parse
                counts as a change now).
        """
        self.registry.register(_MatchStates(summaries))

    def serve_http(self, port: int, host: str = "127.0.0.1") -> int:
        """Serve ``/metrics`` over HTTP on ``host:port`` (0 picks a port); returns the port bound.

        Raises:
            OSError: the port cannot be bound.
        """
        try:
            server, _thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            raise OSError(f"cannot serve metrics on {host}:{port}: {exc.strerror or exc}") from exc
        return int(server.server_port)


class _MatchStates(Collector):
    def __init__(self, summaries: Callable[[], Iterable[tuple[bool, str]]]) -> None:
        self._summaries = summaries

    def collect(self) -> Iterable[Any]:
        counts = dict.fromkeys(MATCH_STATES, 0)
        now = time.time()
        for game_over, changed_at in self._summaries():
            if game_over:
                counts["over"] += 1
                continue
            try:
                idle = now - datetime.fromisoformat(changed_at).timestamp()
            except ValueError:
                idle = 0.0
            counts["active" if idle <= ACTIVE_WINDOW_S else "idle"] += 1
        family = GaugeMetricFamily(
            "tablehost_matches",
            "Started matches in this process's memory by state (active: changed in the last minute; idle: "
            "not over, unchanged longer; over); evicted matches, the lobby and other processes are not counted",
            labels=["state"],
        )
        for state, count in counts.items():
            family.add_metric([state], count)
        yield family
