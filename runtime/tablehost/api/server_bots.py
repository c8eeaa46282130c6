"""Seats the server plays itself (a ``bot`` in CreateMatch's SeatRequest, ``create --bot``).

A bot seat is played on **its own view only**, as a client holding that seat's token would be:
the bot is handed :meth:`Match.view` of its seat (the state with everything the seat may not see
removed) and the actions offered there in view addresses, and its choice goes through
:meth:`Match.submit_view_action`, so it is checked, journaled and replayed like any move. A search
bot (``mcts:N``, ``ismcts:N``) searches inside the guest on that view (:mod:`tablehost.inguest`).

Each decision's seed derives from the match id, the version and the seat (all public), so a
decision is the same after a restart and never depends on what the seat may not see. The
registry plays bot seats after every change (create, the last join, each move) and on every
timekeeper tick, which also makes a restarted server play on. ``random`` and ``first`` take
microseconds and play right there (:func:`play_bots`); a search is taken in two steps, so that
it runs outside the match's lock (:mod:`tablehost.api.bot_thinker`): :func:`take_decision`
under the lock, :func:`decide` without it.

A bot whose search fails (budget, a refused answer) is logged and plays the first offered
action of intent ``confirm``, else ``choice``, as the host does for an absent seat, so a match
never stalls on a failing bot.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from tablehost.api.faults import InvalidRequest
from tablehost.bots import SEARCH_BOTS, SearchBot, is_search_bot, make_bot
from tablehost.errors import GuestCancelled, GuestError
from tablehost.guest import GuestPool
from tablehost.match import Match
from tablehost.sampler_probe import no_sampler_refusal
from tablehost.types import AvailableActionDict, PlayerId, StateDict

log = structlog.get_logger("tablehost.server_bots")

MAX_BOT_ITERATIONS = 5000
"""Most search iterations a server bot may take a decision (the server's CPU is shared)."""

MAX_BOT_NAME_CHARS = 32
"""Longest bot name a seat may ask for (``ismcts:5000`` is 11 characters)."""

BOT_MOVES_PER_CALL = 256
"""Most bot moves one :func:`play_bots` call makes (a game of bots only goes on at the next tick)."""

HOST_INTENTS = ("confirm", "choice")


def check_bot_name(name: str) -> str:
    """``name`` when it is a bot the server plays (``random``, ``first``, ``mcts:N``, ``ismcts:N``,
    N at most :data:`MAX_BOT_ITERATIONS`).

    Raises:
        InvalidRequest: an unknown name, iterations out of range (or not ASCII digits), or a
            name over :data:`MAX_BOT_NAME_CHARS` (its length said, the name not echoed).
    """
    if len(name) > MAX_BOT_NAME_CHARS:  # never echoed whole: it comes back in the refusal
        raise InvalidRequest(f"a bot name has at most {MAX_BOT_NAME_CHARS} characters, got {len(name)}")
    iterations = (f"bot {name!r}: the iterations must be a whole number from 1 to {MAX_BOT_ITERATIONS} in ASCII "
                  f"digits 0-9 (a server bot searches at most {MAX_BOT_ITERATIONS} iterations a decision), "
                  f"e.g. {name.partition(':')[0]}:200")
    try:
        bot = make_bot(name)
    except ValueError as exc:
        base, colon, _ = name.partition(":")
        if base in SEARCH_BOTS and colon:  # the iterations are what is wrong (or missing)
            raise InvalidRequest(iterations) from exc
        raise InvalidRequest(str(exc)) from exc
    if isinstance(bot, SearchBot) and bot.iterations > MAX_BOT_ITERATIONS:
        raise InvalidRequest(iterations)
    return name


def check_bot_fits(name: str, hidden_information: bool, samples_hidden: bool | None = None) -> None:
    """Refuse a search bot of the wrong kind for the game, before the match is created.

    ``mcts`` searches the whole state, so it cannot play a game with hidden information (the
    guest would refuse every decision with ``hidden_information``); ``ismcts`` samples what its
    seat cannot see, and a game without hidden information has nothing to sample (the guest
    refuses with ``no_sampler``). Whether a hidden-information game's module has
    ``Game::sample_hidden`` only the module knows: the caller asks it once
    (:func:`tablehost.sampler_probe.samples_hidden`) and passes the answer.

    Args:
        name: a bot name :func:`check_bot_name` accepted.
        hidden_information: the module metadata's ``hidden_information``.
        samples_hidden: whether the module implements ``Game::sample_hidden`` (None: not known,
            not asked, or the probe could not tell; then only the metadata decides).

    Raises:
        InvalidRequest: the search kind does not fit the game, naming the one that does, or
            ``ismcts`` of a module without a sampler (``samples_hidden`` False).
    """
    bot = make_bot(name)
    if not isinstance(bot, SearchBot):
        return
    if bot.algorithm == "mcts" and hidden_information:
        raise InvalidRequest(
            f"bot {name!r}: this game has hidden information, which mcts would see: "
            f"use ismcts:{bot.iterations}"
        )
    if bot.algorithm == "ismcts" and not hidden_information:
        raise InvalidRequest(
            f"bot {name!r}: this game has no hidden information to sample: use mcts:{bot.iterations}"
        )
    if bot.algorithm == "ismcts" and samples_hidden is False:
        raise InvalidRequest(no_sampler_refusal(name))


def needs_sampler(name: str, hidden_information: bool) -> bool:
    """Whether :func:`check_bot_fits` needs the module's ``samples_hidden`` answer for ``name``:
    an ``ismcts`` bot on a hidden-information game."""
    bot = make_bot(name)
    return isinstance(bot, SearchBot) and bot.algorithm == "ismcts" and hidden_information


def decision_seed(match_id: str, version: int, player_id: PlayerId) -> int:
    """The seed of one bot decision: 64 bits of SHA-256 of ``"match_id:version:player_id"``."""
    digest = hashlib.sha256(f"{match_id}:{version}:{player_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def next_bot(match: Match) -> PlayerId | None:
    """The bot seat to move now: the first active bot seat offered something, or None."""
    if match.game_over:
        return None
    for player_id in match.active_player_ids:
        if (player_id in match.bots and player_id not in match.resigned_ids
                and any(a.get("intent") != "undo" for a in match.actions_for(player_id))):
            return player_id
    return None


@dataclass(frozen=True)
class Decision:
    """What a bot seat decides on, taken under the match's lock (:func:`take_decision`).

    Attributes:
        match_id: the match.
        version: the match version the view is of; the move is played only at that version.
        player_id: the bot's seat.
        name: the bot (``random``, ``first``, ``mcts:N``, ``ismcts:N``).
        view: the seat's view (``Match.view(player_id).state``): never the state.
        offered: the seat's offered actions in view addresses, ``undo`` left out (non-empty).
        pool: the game module's instances (a search runs in one of them).
    """

    match_id: str
    version: int
    player_id: PlayerId
    name: str
    view: StateDict
    offered: list[AvailableActionDict]
    pool: GuestPool


def take_decision(match: Match, player_id: PlayerId) -> Decision | None:
    """The decision bot seat ``player_id`` of ``match`` is to take now; None when it is offered
    nothing but ``undo``. Call under the match's lock; the result is read-only and may be used
    without it."""
    view = match.view(player_id)
    offered = [a for a in view.actions if a.get("intent") != "undo"]
    if not offered:
        return None
    return Decision(match.match_id, match.version, player_id, match.bots[player_id], view.state, offered, match.pool)


def decide(decision: Decision, cancelled: Callable[[], bool] | None = None) -> AvailableActionDict:
    """The bot's choice, one element of ``decision.offered``; needs no lock (a search runs in the
    guest pool, which is thread-safe).

    A failing search (a guest failure or refusal, or a view too large to search) is logged as
    ``bot.search_failed`` and replaced by the host's choice: the first offered action of intent
    ``confirm``, else ``choice``, else the first offered.

    Args:
        decision: what to decide on (:func:`take_decision`).
        cancelled: polled while a search runs (about every 50 ms); True stops it.

    Raises:
        GuestCancelled: ``cancelled`` said so (no choice is made).
    """
    bot = make_bot(decision.name, decision_seed(decision.match_id, decision.version, decision.player_id))
    offered = decision.offered
    try:
        if isinstance(bot, SearchBot):
            return bot.choose_in_view(decision.pool, decision.view, offered, decision.player_id, cancelled)
        return bot.choose(offered)
    except GuestCancelled:
        raise
    except (GuestError, ValueError) as exc:
        log.warning("bot.search_failed", match_id=decision.match_id, player_id=decision.player_id,
                    bot=decision.name, code=getattr(exc, "code", "view/too_large"), error=str(exc))
        return next((a for intent in HOST_INTENTS for a in offered if a.get("intent", "choice") == intent),
                    offered[0])


def version_to_play(match: Match, decision: Decision, choice: AvailableActionDict) -> int:
    """The version at which ``choice`` (decided on ``decision``) is played in ``match`` now.

    ``decision.version`` while the match is still there. When the match moved on meanwhile (in
    a simultaneous phase another seat moved, as hearts' passing), the decision still stands
    while its action is offered to the seat as it was: the current version is returned, so a
    seat moving faster than a bot searches cannot make it drop every decision. Otherwise
    ``decision.version``, which the match then refuses as stale; always so when the seat itself
    moved meanwhile (a decision searched twice, by another process: a choice played twice would
    take itself back). Call under the match's lock.
    """
    if match.version == decision.version or match.game_over:
        return decision.version
    for move in reversed(match.history):  # the moves made since the decision's version
        if move.seq <= decision.version:
            break
        if move.player_id == decision.player_id:
            return decision.version
    current = take_decision(match, decision.player_id)
    if current is not None and any(a["action"] == choice["action"] for a in current.offered):
        return match.version
    return decision.version


def play_bots(match: Match, max_moves: int = BOT_MOVES_PER_CALL, *, searches: bool = True) -> int:
    """Play the bot seats of ``match`` while one of them is to move (at most ``max_moves``).

    Args:
        match: the match, under its lock.
        max_moves: the most moves to make.
        searches: False to stop at a search bot's turn (the caller has it searched off the lock).

    Returns:
        The moves made.

    Raises:
        MatchError, GuestError, PatchError: the move itself was refused or failed (nothing of it
            changed); a failing *search* is not raised (see :func:`decide`).
        StoreUnavailable, StoreConflict: the move could not be stored.
    """
    moves = 0
    while moves < max_moves:
        player_id = next_bot(match)
        if player_id is None or (not searches and is_search_bot(match.bots[player_id])):
            break
        decision = take_decision(match, player_id)
        if decision is None:
            break
        choice = decide(decision)
        match.submit_view_action(player_id, choice["action"], expected_version=decision.version)
        moves += 1
    return moves
