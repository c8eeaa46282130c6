"""One game played by bots on the host, without a server: the loop behind ``play``,
``simulate``, the benchmarks and the conformance tests.

Everything random is derived from one 64-bit seed (SplitMix64, docs/abi.md): the setup seed,
every move's seed, each bot's choices and, when several players are active at once, which of
them moves next. The same seed therefore plays the same game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from tablehost.bots import SearchBot, make_bot
from tablehost.errors import StuckGame, TablehostError
from tablehost.guest import GuestPool
from tablehost.history import FailureRecord, MoveRecord, PlayerInfo
from tablehost.match import Match, utc_now
from tablehost.metadata import read_metadata as module_metadata
from tablehost.metadata import resolve_options
from tablehost.results import declared_teams
from tablehost.rng import Rng

COLORS = ("#c0392b", "#2c3e50", "#27ae60", "#f39c12", "#8e44ad", "#16a085", "#d35400", "#7f8c8d")
"""Default seat colours, in seat order."""


def default_players(count: int) -> list[PlayerInfo]:
    """Seats 1..count named ``seat1``.. with the default colours. Raises ``ValueError`` if count < 1."""
    if count < 1:
        raise ValueError("at least one player is needed")
    return [PlayerInfo(i + 1, f"seat{i + 1}", COLORS[i % len(COLORS)]) for i in range(count)]


@dataclass
class GameResult:
    """How one bot game ended.

    Attributes:
        seed: the game's seed (replays the same game).
        plies: moves applied.
        scores: final scores keyed by player id (decimal string).
        winners: seat indexes (0-based) ranked first by the module's result rule (several on a tie).
        teams: the game's partnerships (``meta_data["teams"]``), seat indexes; empty when none.
        finished: the game reached game over (False when ``max_plies`` cut it off or it failed).
        match: the match itself (its record, history and state).
        failure: how the game failed after setup, when :func:`play_game` was asked to keep
            failures (``keep_failure``); the match holds the moves accepted before it. None
            when the game did not fail.
    """

    seed: int
    plies: int
    scores: dict[str, Any]
    winners: list[int]
    finished: bool
    match: Match = field(repr=False)
    teams: list[list[int]] = field(default_factory=list)
    failure: FailureRecord | None = None

    @property
    def draw(self) -> bool:
        """More than one seat shares the best score, and they are not all one team."""
        return is_draw(self.winners, self.teams)


def is_draw(winners: Sequence[int], teams: Sequence[Sequence[int]]) -> bool:
    """Whether seats ``winners`` (0-based) sharing the best score make a draw: more than one
    of them, not all in one of ``teams``."""
    if len(winners) < 2:
        return False
    return not any(set(winners) <= set(team) for team in teams)


def teams_of(match: Match) -> list[list[int]]:
    """The partnerships a game declares in ``meta_data["teams"]`` (lists of 0-based seat
    indexes); empty when it declares none or the value is malformed
    (:func:`tablehost.results.declared_teams`, the reading the host ranks resignations by)."""
    return declared_teams(match.state["meta_data"], len(match.players))


def play_game(
    pool: GuestPool,
    bots: Sequence[str],
    seed: int,
    *,
    match_id: str = "selfplay",
    max_plies: int = 10_000,
    module_sha256: str = "",
    module_name: str = "",
    check_mirror: bool = False,
    via_views: bool = False,
    on_move: Callable[[Match, MoveRecord], None] | None = None,
    options: dict[str, Any] | None = None,
    undo: bool = False,
    on_start: Callable[[Match], None] | None = None,
    keep_failure: bool = False,
) -> GameResult:
    """Play one game with one bot per seat.

    Args:
        pool: the game module's instances.
        bots: one bot name per seat (see :mod:`tablehost.bots`); a search bot (``mcts:N``,
            ``ismcts:N``) is handed its seat's view and acts through view addresses.
        seed: 64-bit seed from which everything random derives.
        max_plies: stop after this many moves (the result says ``finished=False``).
        check_mirror: compare the host's state with the SDK's after every move (slower).
        via_views: bots see only their own view's actions (view addresses) and act through
            :meth:`Match.submit_view_action`, as a client of the server does (slower).
        on_move: called after each move (printing, leak checks).
        on_start: called once with the match at version 0, after setup and before the first
            move (``tablehost check`` looks for leaks at setup).
        options: game options by name (checked against the module's metadata; defaults filled in).
        undo: keep positions for undo (:attr:`Match.undo_enabled`). Bots never undo, so by default
            the match keeps none: no state snapshot per undoable move, and undo is never offered.
        keep_failure: a game that fails after setup returns instead of raising: the result's
            ``failure`` says how (with the move that failed), its match holds the moves accepted
            before it (``tablehost play --record`` writes them). A failed setup still raises.

    Raises:
        SetupRefused: the seat count or an option is outside what the module declares.
        GuestError: the game failed (with ``keep_failure``: only at setup); the error says how.
        StuckGame: no active player is offered anything before game over (not with ``keep_failure``).
        ValueError: an unknown bot name.
    """
    rng = Rng(seed)
    players = default_players(len(bots))
    metadata = module_metadata(pool)
    resolved = resolve_options(metadata, options or {})
    if metadata.declared:
        from tablehost.metadata import check_player_count

        check_player_count(metadata, len(players))
    match = Match.start(
        pool,
        players,
        match_id=match_id,
        module_sha256=module_sha256,
        module_name=module_name,
        seed=rng.next_u64(),
        check_mirror=check_mirror,
        metadata=metadata,
        options=resolved,
        undo=undo,
    )
    if on_start is not None:
        on_start(match)
    seat_bots = {p.player_id: make_bot(name, rng.next_u64()) for p, name in zip(players, bots)}
    # One local job drives this game: the match may hold its instance and run slot between its
    # calls (GuestPool.lease), except with a search bot, whose own guest calls need slots too,
    # and with a stand-in pool that has no leases (conformance's, which re-runs every call).
    leasing = getattr(pool, "lease", None)
    lease: AbstractContextManager[object] = (
        nullcontext()
        if leasing is None or any(isinstance(b, SearchBot) for b in seat_bots.values())
        else leasing(match.match_id)
    )
    tried = _Tried()
    try:
        with lease:
            plies = _play_moves(match, seat_bots, rng, pool, max_plies, via_views, on_move, tried)
    except TablehostError as exc:
        if not keep_failure:
            raise
        limit = match.gate.limits.printed_kept_chars  # as much as the record keeps of a move's output
        failure = FailureRecord.of(exc, match.version, tried.move, limit=limit, at=utc_now())
        return GameResult(
            seed, len(match.history), match.scores, [], False, match, teams_of(match), failure=failure
        )
    return GameResult(seed, plies, match.scores, winners(match), match.game_over, match, teams_of(match))


@dataclass
class _Tried:
    """The move :func:`_play_moves` is trying: ``{"player_id", "action", "view_action", "seed",
    "picked"}`` (:attr:`FailureRecord.move`) from just before it is submitted until it is
    accepted; None between moves."""

    move: dict[str, Any] | None = None


def _play_moves(
    match: Match,
    seat_bots: dict[int, Any],
    rng: Rng,
    pool: GuestPool,
    max_plies: int,
    via_views: bool,
    on_move: Callable[[Match, MoveRecord], None] | None,
    tried: _Tried,
) -> int:
    """:func:`play_game`'s move loop: moves until game over or ``max_plies``; returns the moves
    applied. ``tried`` holds each move while it is submitted (what failed, when one does).

    Raises what :func:`play_game` raises.
    """
    plies = 0
    while not match.game_over and plies < max_plies:
        tried.move = None
        active = match.state["active_player_ids"]
        offered = match.actions_for(active[0]) if len(active) == 1 else []
        if _has_move(offered):
            mover = active[0]
        else:
            movers = [pid for pid in active if _has_move(match.actions_for(pid))]
            if not movers:
                raise StuckGame(
                    f"the game is not over but no active player ({active}) is offered an action"
                    f" at version {match.version}",
                    match_id=match.match_id,
                )
            mover = movers[rng.below(len(movers))] if len(movers) > 1 else movers[0]
            offered = match.actions_for(mover)
        bot = seat_bots[mover]
        if isinstance(bot, SearchBot) or via_views:
            if isinstance(bot, SearchBot):
                view = match.view(mover)  # a search sees the seat's view, never the state
                choice = bot.choose_in_view(pool, view.state, view.actions, mover)
            else:
                choice = bot.choose(match.view(mover).actions)
            seed = rng.next_u64()  # drawn before the pick, as submit_view_action's arguments were
            view_action = choice["action"]
            action, picked = match.guest_action_for(mover, view_action, pick_below=rng.below)
        else:
            view_action, picked = None, False
            action = bot.choose(offered)["action"]
            seed = rng.next_u64()
        tried.move = {"player_id": mover, "action": action, "view_action": view_action, "seed": seed, "picked": picked}
        move = match.submit(mover, action, seed=seed, view_action=view_action, picked=picked)
        tried.move = None  # accepted: a failure from here on (on_move) is no failure of this move
        plies += 1
        if on_move is not None:
            on_move(match, move)
    return plies


def _has_move(offered: list[dict[str, Any]]) -> bool:
    """Whether ``offered`` holds an action other than the platform's undo (a plain loop: no generator per move)."""
    for action in offered:
        if action.get("intent") != "undo":
            return True
    return False


def winners(match: Match) -> list[int]:
    """Seat indexes (0-based) ranked first by the match's result (the module's result rule:
    highest or lowest first score, or the game's own ranks). Empty while the game runs."""
    result = match.result
    if result is None:
        return []
    seats = [p.player_id for p in match.players]
    return [seats.index(pid) for pid in result.winners]
