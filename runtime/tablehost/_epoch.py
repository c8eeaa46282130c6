"""One process-wide ticker thread that turns wall-clock time into wasmtime epochs.

Every engine made by :func:`tablehost.module.make_engine` is registered here; a daemon thread
increments each registered engine's epoch once per elapsed :data:`TICK_MS`. A guest call sets its
store's epoch deadline from :func:`deadline_ticks`, so a call that runs past its wall-clock budget
traps with ``TrapCode.INTERRUPT``.

The ticker catches up on ticks it missed (a Python thread may wait for the GIL), and
:func:`deadline_ticks` adds the ticks that are owed but not yet issued, so a deadline is never
early; it may be late by about one tick plus one GIL wait.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Protocol

TICK_MS = 2.0
"""Milliseconds between epoch increments."""


class _Engine(Protocol):
    def increment_epoch(self) -> None: ...


class EpochTicker:
    """Increments the epoch of registered engines on wall-clock time.

    Args:
        tick_ms: milliseconds per epoch tick (> 0).
    """

    def __init__(self, tick_ms: float = TICK_MS) -> None:
        self.tick_ms = tick_ms
        self._engines: list[_Engine] = []
        self._lock = threading.Lock()
        self._origin = time.monotonic()
        self._issued = 0
        self._thread: threading.Thread | None = None

    def register(self, engine: _Engine) -> None:
        """Start ticking ``engine`` (idempotent); starts the thread on first use."""
        with self._lock:
            if any(known is engine for known in self._engines):
                return
            self._engines.append(engine)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="tablehost-epoch", daemon=True)
                self._thread.start()

    def deadline_ticks(self, wall_ms: float) -> int:
        """Ticks after the current epoch that give a call at least ``wall_ms`` milliseconds.

        Args:
            wall_ms: the call's wall-clock budget in milliseconds.

        Returns:
            A positive tick count for ``Store.set_epoch_deadline``.
        """
        owed = (time.monotonic() - self._origin) * 1000.0 / self.tick_ms - self._issued
        return math.ceil(wall_ms / self.tick_ms + max(0.0, owed)) + 1

    def _run(self) -> None:
        period = self.tick_ms / 1000.0
        while True:
            time.sleep(period)
            due = int((time.monotonic() - self._origin) / period)
            with self._lock:
                engines = list(self._engines)
            while self._issued < due:
                for engine in engines:
                    engine.increment_epoch()
                self._issued += 1


TICKER = EpochTicker()
"""The one ticker of this process."""
