"""The server bots' thinking threads: their searches run outside every match's lock.

A server bot's search (``mcts:N``, ``ismcts:N``) can take long: ``ismcts:5000`` over one risk
decision took about 50 s (its budget is twice the move budgets per iteration). Run under the
match's lock, it held every other request of the match for that long: the view of the seat
that had just moved, the spectators, the watch streams, and on PostgreSQL the match's hold in
the store. So the registry only *asks* for a decision while it holds the lock
(:meth:`BotThinker.ask`); a thread here later takes the seat's view under the lock, searches
without it, and plays the chosen action under the lock again, refused as stale when the match
moved on meanwhile (:meth:`tablehost.api.bot_seats.BotSeats._think`).

Two lanes, one thread each, first asked first served within a lane, at most one decision
queued per match:

- the *long* lane takes any decision;
- the *quick* lane takes only decisions of a kind (module and bot name) whose last
  :data:`KEPT_DURATIONS` decisions each took at most :data:`QUICK_DECISION_S`, so a tic-tac-toe
  bot never waits behind a risk search of a minute.

A search holds one run slot for its whole length and a server has about one run slot per core
(:data:`tablehost.guest.scheduler.RUN_SLOTS`); one long search at a time keeps the other slot
for the people's moves, which share it with quick decisions only.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable

import structlog

log = structlog.get_logger(__name__)

QUICK_DECISION_S = 0.25
"""Longest a decision may take, seconds, for its kind to count as quick."""

KEPT_DURATIONS = 4
"""Decisions per kind whose durations are kept (all must be quick for the kind to be)."""


class _Lane:
    """One thread's queue of ``(match id, think)``, started at its first job."""

    def __init__(self, name: str, cond: threading.Condition) -> None:
        self.name = name
        self.cond = cond
        self.queue: deque[tuple[str, Callable[[], None]]] = deque()
        self.running: str | None = None
        self.thread: threading.Thread | None = None


class BotThinker:
    """Two daemon threads (lanes) running queued decisions, each started at its first :meth:`ask`.

    Args:
        name: the threads' name prefix (in logs and py-spy dumps).
    """

    def __init__(self, name: str = "tablehost-bot") -> None:
        self._cond = threading.Condition()
        self._lanes = {"long": _Lane(f"{name}-long", self._cond), "quick": _Lane(f"{name}-quick", self._cond)}
        self._queued: set[str] = set()
        self._durations: dict[Hashable, deque[float]] = {}
        self._closed = False

    def is_quick(self, kind: Hashable) -> bool:
        """Whether decisions of ``kind`` (e.g. ``(module sha256, bot name)``) go to the quick lane:
        its last :data:`KEPT_DURATIONS` decisions (at least one) each took at most
        :data:`QUICK_DECISION_S`."""
        with self._cond:
            seen = self._durations.get(kind, ())
            return bool(seen) and max(seen) <= QUICK_DECISION_S

    def took(self, kind: Hashable, seconds: float) -> None:
        """Note that one decision of ``kind`` took ``seconds`` (wall time of its search)."""
        with self._cond:
            self._durations.setdefault(kind, deque(maxlen=KEPT_DURATIONS)).append(seconds)

    def ask(self, key: str, think: Callable[[], None], *, quick: bool = False) -> bool:
        """Queue ``think()`` (one decision of match ``key``) unless a decision of ``key`` is queued already.

        A decision of ``key`` that is running does not count: it searched an older version, so
        the newer one is queued behind it.

        Args:
            key: the match id.
            think: the decision; runs on a lane's thread; what it raises is logged, never raised.
            quick: queue it on the quick lane (:meth:`is_quick` of its kind), else the long one.

        Returns:
            Whether ``think`` was queued (False: one is queued already, or the thinker is closed).
        """
        with self._cond:
            if self._closed or key in self._queued:
                return False
            lane = self._lanes["quick" if quick else "long"]
            self._queued.add(key)
            lane.queue.append((key, think))
            if lane.thread is None:
                lane.thread = threading.Thread(target=self._run, args=(lane,), name=lane.name, daemon=True)
                lane.thread.start()
            self._cond.notify_all()
            return True

    def busy_with(self, key: str) -> bool:
        """Whether a decision of match ``key`` is queued or running."""
        with self._cond:
            return key in self._queued or any(lane.running == key for lane in self._lanes.values())

    def close(self) -> None:
        """Take no more decisions and drop the queued ones; a running search is not waited for
        (its match checks the registry is closing before it plays)."""
        with self._cond:
            self._closed = True
            for lane in self._lanes.values():
                lane.queue.clear()
            self._queued.clear()
            self._cond.notify_all()

    def _run(self, lane: _Lane) -> None:
        while True:
            with self._cond:
                while not lane.queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                key, think = lane.queue.popleft()
                self._queued.discard(key)
                lane.running = key
            try:
                think()
            except Exception:  # one match's failing decision must not stop the other matches' bots
                log.exception("bot.think_failed", match_id=key)
            finally:
                with self._cond:
                    lane.running = None
