"""Seats the server plays itself (a ``bot`` in CreateMatch's SeatRequest, ``create --bot``).

A bot seat is played on **its own view only**, as a client holding that seat's token would be:
the bot is handed :meth:`Match.view` of its seat (the state with everything the seat may not see
removed) and the actions offered there in view addresses, and its choice goes through
:meth:`Match.submit_view_action`, so it is checked, journaled and replayed like any move. A search
bot (``mcts:N``, ``ismcts:N``) searches inside the guest on that view (:mod:`tablehost.inguest`).

Each decision's seed derives from the match id, the version and the seat (all public), so a
decision is the same after a restart and never depends on what the seat may not see. The
registry plays bot seats after every change (create, the last join, each move) and on every
timekeeper tick, which also makes a restarted server play on.

A bot whose search fails (budget, a refused answer) is logged and plays the first offered
action of intent ``confirm``, else ``choice``, as the host does for an absent seat, so a match
never stalls on a failing bot.
"""

from __future__ import annotations

import hashlib

import structlog

from tablehost.api.faults import InvalidRequest
from tablehost.bots import SearchBot, make_bot
from tablehost.errors import GuestError
from tablehost.match import Match
from tablehost.sampler_probe import no_sampler_refusal
from tablehost.types import PlayerId

log = structlog.get_logger("tablehost.server_bots")

MAX_BOT_ITERATIONS = 5000
"""Most search iterations a server bot may take a decision (the server's CPU is shared)."""

BOT_MOVES_PER_CALL = 256
"""Most bot moves one :func:`play_bots` call makes (a game of bots only goes on at the next tick)."""

HOST_INTENTS = ("confirm", "choice")


def check_bot_name(name: str) -> str:
    """``name`` when it is a bot the server plays (``random``, ``first``, ``mcts:N``, ``ismcts:N``,
    N at most :data:`MAX_BOT_ITERATIONS`).

    Raises:
        InvalidRequest: an unknown name or too many iterations.
    """
    try:
        bot = make_bot(name)
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from exc
    if isinstance(bot, SearchBot) and bot.iterations > MAX_BOT_ITERATIONS:
        raise InvalidRequest(f"bot {name!r}: a server bot searches at most {MAX_BOT_ITERATIONS} iterations")
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


def play_bots(match: Match, max_moves: int = BOT_MOVES_PER_CALL) -> int:
    """Play the bot seats of ``match`` while one of them is to move (at most ``max_moves``).

    Returns:
        The moves made.

    Raises:
        MatchError, GuestError, PatchError: the move itself was refused or failed (nothing of it
            changed); a failing *search* is not raised (see the module docstring).
        StoreUnavailable, StoreConflict: the move could not be stored.
    """
    moves = 0
    while moves < max_moves:
        player_id = next_bot(match)
        if player_id is None:
            break
        view = match.view(player_id)
        offered = [a for a in view.actions if a.get("intent") != "undo"]
        if not offered:
            break
        name = match.bots[player_id]
        bot = make_bot(name, decision_seed(match.match_id, match.version, player_id))
        try:
            if isinstance(bot, SearchBot):
                choice = bot.choose_in_view(match.pool, view.state, offered, player_id)
            else:
                choice = bot.choose(offered)
        except GuestError as exc:
            log.warning("bot.search_failed", match_id=match.match_id, player_id=player_id, bot=name,
                        code=exc.code, error=str(exc))
            choice = next((a for intent in HOST_INTENTS for a in offered if a.get("intent", "choice") == intent),
                          offered[0])
        match.submit_view_action(player_id, choice["action"], expected_version=match.version)
        moves += 1
    return moves
