"""Prometheus metrics of one server process (``tablehost serve --metrics-port PORT``).

Names and labels (all ``tablehost_``; seconds and instructions as Prometheus expects):

=====================================  =========  ===========================================
metric                                 type       labels, meaning
=====================================  =========  ===========================================
``moves_accepted_total``               counter    ``kind`` (move, undo): journaled changes
``moves_refused_total``                counter    ``reason``: the error code (``match/not_offered``...)
``guest_call_seconds``                 histogram  ``module``, ``op``: one pool call, wall time
``guest_call_fuel``                    histogram  ``module``, ``op``: fuel one answered op burnt
``budget_refusals_total``              counter    ``module``, ``budget``: calls stopped by a budget
``matches``                            gauge      ``state``: active (a change in the last
                                                  :data:`ACTIVE_WINDOW_S`), waiting (not over,
                                                  idle longer), over
``watch_streams``                      gauge      open WatchMatch streams
``store_commit_seconds``               histogram  one write transaction of the store
``store_up``                           gauge      1 while the store answers health pings
``requests_total``                     counter    ``method``, ``code``: gRPC requests by status
``rate_limited_total``                 counter    ``kind`` (request, watch): refused by a rate limit
=====================================  =========  ===========================================

Each server has its own :class:`Metrics` (its own ``CollectorRegistry``), so tests can run
several servers in one process. Nothing here imports grpc.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from tablehost.errors import BudgetExceeded
from tablehost.guest import Guest, GuestPool
from tablehost.guest.instance import CallBudget
from tablehost.guest.protocol import OP_NAMES
from tablehost.limits import Limits
from tablehost.module import GameModule
from tablehost.types import ActionDict, AvailableActionDict, PlayerId, Seed, StateDict

T = TypeVar("T")

ACTIVE_WINDOW_S = 60.0
"""A match changed within this many seconds counts as active; longer idle and not over, waiting."""
FUEL_BUCKETS = tuple(float(10**k) for k in range(3, 11))
"""Fuel units, 10**3 to 10**10 (a tic-tac-toe step burns tens of thousands)."""
LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)


class Metrics:
    """Every metric of one server, in a registry of its own.

    Attributes:
        registry: the ``CollectorRegistry`` the HTTP endpoint serves.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.moves_accepted = Counter(
            "tablehost_moves_accepted", "Journaled moves and undos", ["kind"], registry=r
        )
        self.moves_refused = Counter(
            "tablehost_moves_refused", "Refused moves and undos, by error code", ["reason"], registry=r
        )
        self.guest_seconds = Histogram(
            "tablehost_guest_call_seconds",
            "Guest pool calls, wall time",
            ["module", "op"],
            buckets=LATENCY_BUCKETS,
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
        self.watch_streams = Gauge("tablehost_watch_streams", "Open WatchMatch streams", registry=r)
        self.store_commit = Histogram(
            "tablehost_store_commit_seconds", "Store write transactions", buckets=LATENCY_BUCKETS, registry=r
        )
        self.store_up = Gauge("tablehost_store_up", "1 while the store answers health pings", registry=r)
        self.requests = Counter(
            "tablehost_requests", "gRPC requests by method and status", ["method", "code"], registry=r
        )
        self.rate_limited = Counter(
            "tablehost_rate_limited",
            "Requests and watch streams refused by a rate limit",
            ["kind"],
            registry=r,
        )

    def watch_matches(self, summaries: Callable[[], Iterable[tuple[bool, str]]]) -> None:
        """Count matches at scrape time from ``summaries()``: ``(game_over, newest_change_at)``
        per match (``newest_change_at`` an ISO 8601 timestamp)."""
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
        counts = {"active": 0, "waiting": 0, "over": 0}
        now = time.time()
        for game_over, changed_at in self._summaries():
            if game_over:
                counts["over"] += 1
                continue
            try:
                idle = now - datetime.fromisoformat(changed_at).timestamp()
            except ValueError:
                idle = 0.0
            counts["active" if idle <= ACTIVE_WINDOW_S else "waiting"] += 1
        family = GaugeMetricFamily("tablehost_matches", "Matches in memory by state", labels=["state"])
        for state, count in counts.items():
            family.add_metric([state], count)
        yield family


class MeteredPool(GuestPool):
    """A guest pool whose calls are timed (and their budget refusals counted) per module and op.

    Args:
        module: the compiled module (as :class:`~tablehost.guest.GuestPool`).
        limits: per-call budgets (as :class:`~tablehost.guest.GuestPool`).
        metrics: where the figures go; the ``module`` label is ``module.name``.
    """

    def __init__(self, module: GameModule, limits: Limits | None, metrics: Metrics) -> None:
        super().__init__(module, limits)
        self._metrics = metrics
        self._label = module.name or module.sha256[:12]
        self._seconds = {
            op: metrics.guest_seconds.labels(self._label, op)
            for op in ("setup", "step", "actions", "scores", "game_over")
        }
        self._fuel = {code: metrics.guest_fuel.labels(self._label, name) for code, name in OP_NAMES.items()}

    def _call_with_state(  # type: ignore[override]
        self,
        guest: Guest,
        op: int,
        held_ref: str | None,
        get_state: Callable[[], StateDict],
        fields: dict[str, Any],
        budget: CallBudget,
    ) -> tuple[dict[str, Any], bool]:
        """The pool's call of one op, and the fuel it burnt (the op's budget, all crossings).

        Only answered ops are measured: after a failure the budget holds what the panic-message
        read left, not what the op burnt (a failure is counted by ``budget_refusals``)."""
        answer = GuestPool._call_with_state(guest, op, held_ref, get_state, fields, budget)
        self._fuel[op].observe(max(0, self.limits.fuel_per_call - budget.fuel))
        return answer

    def _timed(self, op: str, call: Callable[[], T]) -> T:
        started = time.perf_counter()
        try:
            return call()
        except BudgetExceeded as exc:
            self._metrics.budget_refusals.labels(self._label, exc.budget or "unknown").inc()
            raise
        finally:
            self._seconds[op].observe(time.perf_counter() - started)

    def setup(
        self, players: list[dict[str, Any]], seed: Seed, next_ref: str, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return self._timed("setup", lambda: GuestPool.setup(self, players, seed, next_ref, options))

    def step(
        self,
        state_ref: str,
        get_state: Callable[[], StateDict],
        next_ref: str,
        player_id: PlayerId,
        action: ActionDict,
        seed: Seed,
        *,
        want_state: bool = False,
    ) -> dict[str, Any]:
        return self._timed(
            "step",
            lambda: GuestPool.step(
                self, state_ref, get_state, next_ref, player_id, action, seed, want_state=want_state
            ),
        )

    def actions(
        self, state_ref: str, get_state: Callable[[], StateDict], player_id: PlayerId
    ) -> list[AvailableActionDict]:
        return self._timed("actions", lambda: GuestPool.actions(self, state_ref, get_state, player_id))

    def scores(self, state_ref: str, get_state: Callable[[], StateDict]) -> dict[str, Any]:
        return self._timed("scores", lambda: GuestPool.scores(self, state_ref, get_state))

    def game_over(self, state_ref: str, get_state: Callable[[], StateDict]) -> dict[str, Any]:
        return self._timed("game_over", lambda: GuestPool.game_over(self, state_ref, get_state))
