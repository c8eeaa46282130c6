"""The timekeeper: one thread per server that lets the registry's clocks run.

Every :data:`TICK_S` it calls :meth:`MatchRegistry.tick_clocks`, which times out seats whose
clock reached 0, plays for absent seats and beats the heartbeat the clocks' downtime policy
reads after a restart (:mod:`tablehost.clocks`). On a shared store it also takes in, every
:data:`~tablehost.api.registry.ADOPT_INTERVAL_S`, the matches other processes made
(:meth:`MatchRegistry.adopt_matches`), so their clocks run here too if that process dies.
Every :data:`~tablehost.api.registry.EVICT_INTERVAL_S` it drops finished and idle matches from
memory (:meth:`MatchRegistry.evict_idle`).

A failure that every tick would meet again (the database down) is logged once, not ten times a
second: :class:`TickFailures` for a match's tick, and adoption's ``clock.adopt_failed`` once
until it succeeds again.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import structlog

from tablehost.errors import TablehostError
from tablehost.store import StoreConflict, StoreUnavailable

if TYPE_CHECKING:
    from tablehost.api.registry import MatchRegistry

log = structlog.get_logger(__name__)

TICK_S = 0.1
"""Seconds between ticks: a timeout is applied at most this late (plus the tick's own work)."""


class TickFailures:
    """What is logged of the matches whose tick failed (:meth:`MatchRegistry.tick_clocks`); thread-safe.

    - ``store/unavailable`` (the database down, or another process holding the match too long):
      ``clock.tick_failed`` once per match, then nothing until that match's tick succeeds again,
      which logs ``clock.tick_resumed`` with the ``failed_ticks`` in between (the timekeeper
      retries every tick, ten times a second);
    - ``store/conflict``: another process stored this version of the match first (both applied
      the same timeout, host or server-bot move; the second write is refused and this process
      catches up): ``clock.tick_conflict`` at info, harmless;
    - any other failure (the game failed): ``clock.tick_failed`` each time.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._outages: dict[str, int] = {}  # match id -> ticks failed since its outage was logged

    def failed(self, match_id: str, exc: TablehostError) -> None:
        """Log (or not, as the class says) that ``match_id``'s tick failed with ``exc``.

        Args:
            match_id: the match ticked.
            exc: what the tick raised.
        """
        if isinstance(exc, StoreConflict):
            log.info("clock.tick_conflict", match_id=match_id,
                     message="another process stored this version of the match first (the same timeout, host "
                             "or bot move); this process's write was refused and it catches up")
            return
        if isinstance(exc, StoreUnavailable):
            with self._lock:
                seen = match_id in self._outages
                self._outages[match_id] = self._outages.get(match_id, 0) + 1
            if seen:
                return
        log.warning("clock.tick_failed", match_id=match_id, code=exc.code, error=str(exc),
                    **({"repeats": "logged once until this match's tick succeeds"}
                       if isinstance(exc, StoreUnavailable) else {}))

    def succeeded(self, match_id: str) -> None:
        """Note that ``match_id``'s tick went through: ``clock.tick_resumed`` when its failing
        ticks were not logged one by one."""
        if match_id not in self._outages:  # the usual case: no lock
            return
        with self._lock:
            failed = self._outages.pop(match_id, None)
        if failed is not None:
            log.info("clock.tick_resumed", match_id=match_id, failed_ticks=failed)


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
        adopt_failing = False
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
                    if not adopt_failing:  # once until adoption works again
                        log.warning("clock.adopt_failed", error=str(exc))
                    adopt_failing = True
                else:
                    if adopt_failing:
                        log.info("clock.adopt_resumed")
                    adopt_failing = False
            try:
                self.registry.tick_clocks()
            except Exception:
                log.exception("clock.tick_crashed")
