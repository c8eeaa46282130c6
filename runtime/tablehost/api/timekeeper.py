"""The timekeeper: one thread per server that lets the registry's clocks run.

Every :data:`TICK_S` it calls :meth:`MatchRegistry.tick_clocks`, which times out seats whose
clock reached 0, plays for absent seats and beats the heartbeat the clocks' downtime policy
reads after a restart (:mod:`tablehost.clocks`). On a shared store it also takes in, every
:data:`~tablehost.api.registry.ADOPT_INTERVAL_S`, the matches other processes made
(:meth:`MatchRegistry.adopt_matches`), so their clocks run here too if that process dies.
Every :data:`~tablehost.api.registry.EVICT_INTERVAL_S` it drops finished and idle matches from
memory (:meth:`MatchRegistry.evict_idle`).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from tablehost.api.registry import MatchRegistry

log = structlog.get_logger(__name__)

TICK_S = 0.1
"""Seconds between ticks: a timeout is applied at most this late (plus the tick's own work)."""


class Timekeeper:
    """A daemon thread ticking ``registry`` until :meth:`stop`.

    Args:
        registry: the matches whose clocks run.
        tick_s: seconds between ticks.
    """

    def __init__(self, registry: MatchRegistry, tick_s: float = TICK_S) -> None:
        self.registry = registry
        self.tick_s = tick_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tablehost-timekeeper", daemon=True)

    def start(self) -> None:
        """Start ticking (once)."""
        self._thread.start()

    def stop(self) -> None:
        """Stop ticking and wait for the thread (at most one tick)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        from tablehost.api.registry import ADOPT_INTERVAL_S, EVICT_INTERVAL_S

        adopted_at = evicted_at = time.monotonic()
        while not self._stop.wait(self.tick_s):
            if time.monotonic() - evicted_at >= EVICT_INTERVAL_S:
                evicted_at = time.monotonic()
                try:
                    self.registry.evict_idle()
                except Exception:
                    log.exception("match.evict_crashed")
            if time.monotonic() - adopted_at >= ADOPT_INTERVAL_S:
                adopted_at = time.monotonic()
                try:
                    self.registry.adopt_matches()
                except Exception as exc:  # noqa: BLE001 - the store is down: the clocks wait, then resume
                    log.warning("clock.adopt_failed", error=str(exc))
            try:
                self.registry.tick_clocks()
            except Exception:
                log.exception("clock.tick_crashed")
