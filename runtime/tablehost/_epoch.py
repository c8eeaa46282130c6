"""One process-wide ticker thread that turns wall-clock time into wasmtime epochs.

Every engine made by :func:`tablehost.module.make_engine` is registered here; a daemon thread
increments each registered engine's epoch once per elapsed :data:`TICK_MS`. A guest call sets its
store's epoch deadline from :func:`deadline_ticks`, so a call that runs past its wall-clock budget
traps with ``TrapCode.INTERRUPT``.

The ticker ticks only while some armed deadline has not been reached yet: each
:meth:`EpochTicker.deadline_ticks` call extends the span that needs ticks to that call's deadline
and wakes the thread; once every deadline has passed, the thread sleeps on an event instead of
waking the interpreter every tick (an idle server pays nothing; a busy one pays one wake-up per
tick). Time spent asleep is not owed: the tick clock restarts from the current epoch.

The ticker catches up on ticks it missed (a Python thread may wait for the GIL), and
:func:`deadline_ticks` adds the ticks that are owed but not yet issued, so a deadline is never
early; it may be late by about one tick plus one GIL wait.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Protocol

TICK_MS = 5.0
"""Milliseconds between epoch increments (a deadline may be late by about this much)."""


class _Engine(Protocol):
    def increment_epoch(self) -> None: ...


class EpochTicker:
    """Increments the epoch of registered engines on wall-clock time, while a deadline needs it.

    Args:
        tick_ms: milliseconds per epoch tick (> 0).
    """

    def __init__(self, tick_ms: float = TICK_MS) -> None:
        self.tick_ms = tick_ms
        self._engines: list[_Engine] = []
        self._lock = threading.Lock()
        self._origin = time.monotonic()
        self._issued = 0
        self._needed = 0
        self._idle = True
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def idle(self) -> bool:
        """True while no armed deadline needs ticks (the thread sleeps on its event)."""
        return self._idle

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

        Also arms the ticker: it keeps ticking at least until this many ticks have been issued.

        Args:
            wall_ms: the call's wall-clock budget in milliseconds.

        Returns:
            A positive tick count for ``Store.set_epoch_deadline``.
        """
        period = self.tick_ms / 1000.0
        with self._lock:
            now = time.monotonic()
            if self._idle:
                # Restart the tick clock at the current epoch: no ticks are owed for the idle time.
                self._origin = now - self._issued * period
                self._idle = False
                self._wake.set()
            owed = (now - self._origin) / period - self._issued
            ticks = math.ceil(wall_ms / self.tick_ms + max(0.0, owed)) + 1
            # +1: the ticker may be between incrementing the engines and counting the tick.
            self._needed = max(self._needed, self._issued + ticks + 1)
        return ticks

    def _run(self) -> None:
        period = self.tick_ms / 1000.0
        while True:
            with self._lock:
                if self._issued >= self._needed:
                    self._idle = True
                    self._wake.clear()
                idle = self._idle
                engines = list(self._engines)
            if idle:
                self._wake.wait()
                continue
            time.sleep(period)
            due = int((time.monotonic() - self._origin) / period)
            while self._issued < due:
                for engine in engines:
                    engine.increment_epoch()
                self._issued += 1


TICKER = EpochTicker()
"""The one ticker of this process."""
