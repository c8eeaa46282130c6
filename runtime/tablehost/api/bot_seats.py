"""The registry's side of the server search bots: a decision asked for under the match's lock,
searched on the bot thinker's lanes without it, and played under it again.

A search (``mcts:N``, ``ismcts:N``) can take long (:mod:`tablehost.api.bot_thinker`), so the
registry never searches while it holds a match: under the lock it only asks for the decision
(:meth:`BotSeats.ask`, the match pinned in memory until the decision ran); a lane's thread then
takes the seat's view under the lock, searches without it, and plays the chosen action under it
again (:meth:`BotSeats._think`). :meth:`BotSeats.due` tells the timekeeper whether a bot seat
waits for a decision nobody asked for yet, and :meth:`BotSeats.await_answer` lets the reply to
the create or last join that starts a match wait a little for a quick bot's first move (a move's
reply never waits: it answers once the person's own move is durable). ``random`` and ``first`` seats take microseconds and are played by
the registry itself, in the request (``MatchRegistry._play_bots``).

:class:`BotSeats` knows the registry only through the callables it is given (pinning a match,
catching it up with the store, running a change as stored, a seat's move with its answers), so
what a decision touches of the registry is named in one place.

Several processes on one PostgreSQL database: every process's timekeeper finds a bot seat to
move in the matches it holds, so a decision is searched only under the match's search lock in
the store (``MatchStore.searching``). A process refused it leaves the decision to the holder and
asks again after :data:`SEARCHED_ELSEWHERE_RECHECK_S` while the version has not moved (the
holder may have died: its lock went with its connection).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import structlog

from tablehost.api.bot_thinker import BotThinker
from tablehost.api.server_bots import decide, next_bot, take_decision, version_to_play
from tablehost.bots import is_search_bot
from tablehost.errors import GuestCancelled, GuestError, PatchError, StuckGame, TablehostError
from tablehost.history import MoveRecord
from tablehost.store.errors import StoreError

if TYPE_CHECKING:
    from tablehost.api.registry import LiveMatch

log = structlog.get_logger(__name__)

BOT_RETRY_FIRST_S = 1.0
"""Seconds before a bot seat's move that failed in the game (a guest failure, a refused patch) is
tried again at the same version; doubled after each further failure there, up to
:data:`BOT_RETRY_MAX_S`. A broken move retried at every tick flooded the log and kept its module
quarantined for every other match."""
BOT_RETRY_MAX_S = 60.0
"""The longest wait between two tries of a failing bot move (seconds)."""

SEARCHED_ELSEWHERE_RECHECK_S = 1.0
"""Seconds a process leaves a decision to the process holding its search lock before it tries
the lock again (at the same version): how soon a dead holder's decision is taken over."""


class BotSeats:
    """The search decisions of one registry's server bot seats.

    Args:
        thinker: the lanes the searches run on (owned and closed by the registry).
        closing: whether the registry is closing: no decision is played, a running search stops.
        pin: count one more use of a match, so it stays in memory (takes the registry's lock).
        unpin: end that use (takes the registry's lock).
        catch_up: reload a match when the store holds a newer version (call under its lock).
        changed: run one change of a match so that it applies to the match as stored
            (``MatchRegistry._changed``: the change's answer, or None when a later entry of it
            conflicted; raises what the change raises to refuse). Call under its lock.
        move: one seat's move in view addresses at an expected version, with its clocks and the
            answers of the host and the other bots (``MatchRegistry._move_and_answers``; raises
            as ``Match.submit_view_action``). Call under the match's lock, within ``changed``.
        searching: ``searching(match_id)``, the match's search lock in the store
            (``MatchStore.searching``): a context yielding whether this process may search.
    """

    def __init__(
        self,
        thinker: BotThinker,
        *,
        closing: Callable[[], bool],
        pin: Callable[[LiveMatch], None],
        unpin: Callable[[LiveMatch], None],
        catch_up: Callable[[LiveMatch], None],
        changed: Callable[[LiveMatch, Callable[[], MoveRecord]], MoveRecord | None],
        move: Callable[[LiveMatch, int, dict[str, Any], int], MoveRecord],
        searching: Callable[[str], AbstractContextManager[bool]],
    ) -> None:
        self._thinker = thinker
        self._closing = closing
        self._pin = pin
        self._unpin = unpin
        self._catch_up = catch_up
        self._changed = changed
        self._move = move
        self._searching = searching
        self._elsewhere: dict[str, tuple[int, float]] = {}
        """Match id → (version, monotonic s) when another process held its search lock."""
        self._failing: dict[str, tuple[int, float, float]] = {}
        """Match id → (version, retry at monotonic s, last wait s) of a bot move that failed."""

    def ask(self, live: LiveMatch) -> None:
        """Have a lane take the decision of the search bot to move in ``live``, if one is (and
        none is asked for yet); the match stays in memory until it ran (pinned). Call under
        ``live.changed``."""
        player_id = next_bot(live.match)
        if player_id is None or not is_search_bot(live.match.bots[player_id]):
            return
        self._pin(live)  # before the ask: the thread may run it at once and unpin
        quick = self._thinker.is_quick((live.match.pool.module.sha256, live.match.bots[player_id]))
        if not self._thinker.ask(live.match.match_id, lambda: self._think(live), quick=quick):
            self._unpin(live)

    def failed(self, live: LiveMatch, exc: TablehostError) -> None:
        """A bot seat's move in ``live`` failed in the game (``exc``: a guest failure or a refused
        patch; nothing of it changed): log ``bot.move_failed`` and leave the seat be for
        :data:`BOT_RETRY_FIRST_S`, doubled after each further failure at this version (at most
        :data:`BOT_RETRY_MAX_S`). The seat's next move at another version starts afresh. Call
        under ``live.changed``."""
        match_id, version = live.match.match_id, live.match.version
        before = self._failing.get(match_id)
        wait = BOT_RETRY_FIRST_S if before is None or before[0] != version else min(before[2] * 2, BOT_RETRY_MAX_S)
        self._failing[match_id] = (version, time.monotonic() + wait, wait)
        log.warning("bot.move_failed", match_id=match_id, version=version, code=exc.code, retry_in_s=wait)

    def backing_off(self, live: LiveMatch) -> bool:
        """Whether ``live``'s bot move failed at this version and its wait is not over. Call under
        ``live.changed``."""
        failing = self._failing.get(live.match.match_id)
        if failing is None:
            return False
        if failing[0] != live.match.version:  # the match moved on: a new situation
            del self._failing[live.match.match_id]
            return False
        return time.monotonic() < failing[1]

    def due(self, live: LiveMatch) -> bool:
        """Whether a server bot seat of ``live`` is to move with no decision of it asked for yet
        (a search asked for is played by its lane, which pins the match meanwhile). Call under
        ``live.changed``."""
        if not live.match.bots or self.backing_off(live):
            return False
        player_id = next_bot(live.match)
        if player_id is None:
            return False
        if not is_search_bot(live.match.bots[player_id]):
            return True
        match_id = live.match.match_id
        if self._thinker.busy_with(match_id):
            return False
        elsewhere = self._elsewhere.get(match_id)
        if elsewhere is not None and elsewhere[0] != live.match.version:
            del self._elsewhere[match_id]  # the match moved on: whoever searched has played
            return True
        return elsewhere is None or time.monotonic() - elsewhere[1] >= SEARCHED_ELSEWHERE_RECHECK_S

    def await_answer(self, live: LiveMatch, up_to_s: float) -> None:
        """Wait, releasing ``live.changed``, up to ``up_to_s`` seconds while a search bot a lane
        was asked for is to move, so the reply that started the match shows a quick bot's first
        moves. Call under ``live.changed``, outside the match's hold in the store."""
        if not live.match.bots:
            return
        give_up = time.monotonic() + up_to_s
        while not self._closing():
            match = live.match
            player_id = next_bot(match)
            if player_id is None or not self._thinker.busy_with(match.match_id):
                return
            remaining = give_up - time.monotonic()
            if remaining <= 0:
                return
            live.changed.wait(remaining)

    def _think(self, live: LiveMatch) -> None:
        """One search bot decision of ``live``, on a lane's thread: the seat's view taken under
        ``live.changed``, the search run without it, and the action played under it again at the
        version searched, or at the current one while the action is still offered to the seat
        (:func:`~tablehost.api.server_bots.version_to_play`); otherwise refused as stale, and
        logged, and the next change or tick asks again. Searched only under the match's search
        lock (:meth:`_searching`). Unpins ``live`` (pinned by :meth:`ask`)."""
        match_id = live.match.match_id
        try:
            with self._searching(match_id) as mine:
                if mine:
                    self._elsewhere.pop(match_id, None)
                    self._decide(live)
                else:  # another process searches this decision
                    self._elsewhere[match_id] = (live.match.version, time.monotonic())
                    log.debug("bot.searched_elsewhere", match_id=match_id, version=live.match.version)
        except StoreError as exc:  # the lock could not be asked for: the next tick asks again
            log.warning("bot.search_deferred", match_id=match_id, code=exc.code, error=str(exc))
        finally:
            self._unpin(live)

    def _decide(self, live: LiveMatch) -> None:
        """:meth:`_think`'s decision, under the search lock."""
        with live.changed:
            if self._closing() or live.match.game_over:
                return
            self._catch_up(live)
            player_id = next_bot(live.match)
            if player_id is None or not is_search_bot(live.match.bots[player_id]):
                return
            decision = take_decision(live.match, player_id)
        if decision is None:
            return
        started = time.monotonic()
        try:  # the long part, with the match free for everyone else
            choice = decide(decision, cancelled=lambda: self._closing() or live.match.game_over)
        except GuestCancelled:  # the match ended (abort, resign, timeout) or the server stops
            log.info("bot.search_cancelled", match_id=decision.match_id, player_id=decision.player_id,
                     version=decision.version, after_s=round(time.monotonic() - started, 3))
            return
        self._thinker.took((decision.pool.module.sha256, decision.name), time.monotonic() - started)

        def change() -> MoveRecord:  # run again on the stored match when the copy was behind
            version = version_to_play(live.match, decision, choice)
            return self._move(live, decision.player_id, choice["action"], version)

        with live.changed:
            if self._closing():
                return
            try:
                self._changed(live, change)
            except (GuestError, PatchError, StuckGame) as exc:  # the game failed on the move: nothing changed
                self.failed(live, exc)
            except TablehostError as exc:  # stale (the match moved on) or refused: nothing changed
                log.info("bot.decision_dropped", match_id=decision.match_id, player_id=decision.player_id,
                         version=decision.version, code=exc.code, error=str(exc))
            live.changed.notify_all()
