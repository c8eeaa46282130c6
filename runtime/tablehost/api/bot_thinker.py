"""The server bots' thinking thread: their searches run one at a time, outside every match's lock.

A server bot's search (``mcts:N``, ``ismcts:N``) can take long: ``ismcts:5000`` over one risk
decision took about 50 s (its budget is twice the move budgets per iteration). Run under the
match's lock, it held every other request of the match for that long: the view of the seat
that had just moved, the spectators, the watch streams, and on PostgreSQL the match's hold in
the store. So the registry only *asks* for a decision while it holds the lock
(:meth:`BotThinker.ask`); this thread later takes the seat's view under the lock, searches
without it, and plays the chosen action under the lock again, refused as stale when the match
moved on meanwhile (:meth:`tablehost.api.registry.MatchRegistry._think`).

One thread for the whole server: a search holds one run slot for its whole length, and a
server has about one run slot per core (:data:`tablehost.guest.scheduler.RUN_SLOTS`), so the
server's bots together never take more than one and the people's moves always find another.
Decisions are taken first asked, first served, at most one queued per match.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

import structlog

log = structlog.get_logger(__name__)


class BotThinker:
    """A daemon thread running queued decisions, one at a time, started at the first :meth:`ask`.

    Args:
        name: the thread's name (in logs and py-spy dumps).
    """

    def __init__(self, name: str = "tablehost-bot-thinker") -> None:
        self.name = name
        self._cond = threading.Condition()
        self._queue: deque[tuple[str, Callable[[], None]]] = deque()
        self._queued: set[str] = set()
        self._running: str | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def ask(self, key: str, think: Callable[[], None]) -> bool:
        """Queue ``think()`` (one decision of match ``key``) unless a decision of ``key`` is queued already.

        A decision of ``key`` that is running does not count: it searched an older version, so
        the newer one is queued behind it.

        Args:
            key: the match id.
            think: the decision; runs on this thread; what it raises is logged, never raised.

        Returns:
            Whether ``think`` was queued (False: one is queued already, or the thinker is closed).
        """
        with self._cond:
            if self._closed or key in self._queued:
                return False
            self._queued.add(key)
            self._queue.append((key, think))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._cond.notify()
            return True

    def busy_with(self, key: str) -> bool:
        """Whether a decision of match ``key`` is queued or running."""
        with self._cond:
            return key in self._queued or self._running == key

    def close(self) -> None:
        """Take no more decisions and drop the queued ones; a running search is not waited for
        (its match checks the registry is closing before it plays)."""
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._queued.clear()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                key, think = self._queue.popleft()
                self._queued.discard(key)
                self._running = key
            try:
                think()
            except Exception:  # one match's failing decision must not stop the other matches' bots
                log.exception("bot.think_failed", match_id=key)
            finally:
                with self._cond:
                    self._running = None
