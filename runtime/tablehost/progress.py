"""Progress of a long local job (``tablehost simulate``) on standard error.

On a terminal the progress is one line, redrawn at least once a second (games done of the
total, elapsed time, rate and estimate: tqdm's bar), so a run whose games each take long still
shows its clock moving. When standard error is not a terminal (a log file, CI) a plain line is
written every :data:`PLAIN_INTERVAL_S` seconds instead, and nothing at all by a run shorter
than that. Progress never goes to standard output, which carries the summary (``--json``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self, TextIO

TERMINAL_INTERVAL_S = 1.0
"""Seconds between redraws of the progress line on a terminal."""

PLAIN_INTERVAL_S = 10.0
"""Seconds between progress lines when standard error is not a terminal."""


class ProgressReport:
    """Games done of a total, told on ``stream`` while a job runs; a context manager.

    On entering, a daemon thread starts that calls :meth:`tick` every interval until exit.

    Args:
        name: what runs (the module's name), at the start of each line.
        total: the games the job will play (>= 1).
        stream: where to write (standard error); a terminal (``isatty()``) gets the redrawn
            line, anything else a plain line per interval.
        interval_s: seconds between ticks (default :data:`TERMINAL_INTERVAL_S` on a terminal,
            :data:`PLAIN_INTERVAL_S` otherwise).
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(
        self,
        name: str,
        total: int,
        stream: TextIO,
        *,
        interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.total = total
        self.stream = stream
        self.terminal = bool(getattr(stream, "isatty", lambda: False)())
        self.interval_s = interval_s or (TERMINAL_INTERVAL_S if self.terminal else PLAIN_INTERVAL_S)
        self.done = 0
        self._clock = clock
        self._started = clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar: Any = None
        if self.terminal:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="game", desc=name, file=stream, mininterval=0)

    def advance(self, games: int = 1) -> None:
        """Count ``games`` more games done (on a terminal the line is redrawn now)."""
        self.done += games
        if self._bar is not None:
            self._bar.update(games)

    def tick(self) -> None:
        """Tell the progress now: redraw the terminal line (its elapsed time moves on), or write
        ``"NAME: DONE/TOTAL games, S s"`` as a line of its own."""
        if self._bar is not None:
            self._bar.refresh()
            return
        elapsed = self._clock() - self._started
        self.stream.write(f"{self.name}: {self.done}/{self.total} games, {elapsed:.0f} s\n")
        self.stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.tick()

    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=self._run, name="tablehost-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        """Stop ticking; on a terminal leave the last state of the line and end it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.close()
