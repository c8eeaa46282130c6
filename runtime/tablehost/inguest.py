"""Playouts and search inside the guest (ABI v1.1 ops ``playout`` and ``search``, docs/abi.md).

Both ops answer for work the host cannot see happen, so every answer is checked in full
before it is used; anything off is a :class:`~tablehost.errors.GuestProtocolError`
(``guest/protocol``), never a crash and never a wrong summary:

- ``playout``: exactly one game per seed, each ``{"plies": int 0..max_plies, "game_over": bool,
  "cut": null | "max_plies" | "stuck", "scores": Scores}``, ``cut`` null exactly when
  ``game_over``, ``"max_plies"`` only at ``max_plies`` plies, scores for exactly the seated
  players with finite numbers, and ``ranks`` (only at game over, optional) one rank 1..seats
  per seated player (:func:`tablehost.results.check_ranks`).
- ``search``: ``{"action": AvailableAction, "visits": int, "iterations": int}`` whose action,
  named in view addresses again (:mod:`tablehost.search_view`: the guest searches the view with
  its hidden groups expanded), is one of the actions the host itself offers the seat in its view, ``iterations`` the number
  asked, ``0 <= visits <= iterations``.

Budgets: a call's fuel and wall clock are the per-move budgets times
:data:`MOVE_BUDGETS_PER_GAME` per game asked for (``playout``), or times one per
:data:`BUDGETS_PER_ITERATION` per iteration (``search``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from tablehost.errors import GuestProtocolError
from tablehost.guest import OP_PLAYOUT, OP_SEARCH, GuestPool
from tablehost.results import check_ranks
from tablehost.search_view import ExpandedView, expand_view
from tablehost.types import AvailableActionDict, PlayerId, Seed, StateDict

POLICIES = ("random", "first")
"""Seat policies the ``playout`` op knows (docs/abi.md "playout")."""

ALGORITHMS = ("mcts", "ismcts")
"""Searches the ``search`` op knows: UCT on the view, or information-set MCTS."""

BUDGETS_PER_ITERATION = 2
"""A search gets this many per-move budgets (fuel, wall clock) per iteration.

Sized for the costliest sample game: an ISMCTS iteration of risk (a sampled deal, the tree, up
to 200 random moves of about 300,000 fuel each) costs about 62 million fuel, just over one
default 50-million budget; hearts takes about 13 million; reversi about 54,000 and checkers about
490,000 on their compact states (docs/abi.md 8.4; bench/search_fuel.py measures a 1,000-iteration
search)."""

MOVE_BUDGETS_PER_GAME = 20
"""A ``playout`` call gets this many per-move budgets (fuel, wall clock) per game it plays: a whole
game of hearts (some 700 moves of about 60,000 fuel each) fits in 20 default move budgets."""

MAX_GAMES_PER_CALL = 4096
"""Most games one ``playout`` call may ask for (the SDK's own cap)."""

_CUTS = (None, "max_plies", "stuck")


@dataclass(frozen=True)
class PlayoutGame:
    """One game played inside the guest.

    Attributes:
        plies: moves played (0..max_plies).
        game_over: the game reached game over.
        cut: why it stopped before game over: ``"max_plies"`` or ``"stuck"`` (no active player
            was offered a choice or confirm); None when it is over.
        scores: final scores keyed by decimal player id, ``{"public_points": [float],
            "private_points": [float]}`` each.
        ranks: the game's own ranks at game over (player id -> rank), or None when it gives none.
    """

    plies: int
    game_over: bool
    cut: str | None
    scores: dict[str, dict[str, list[float]]]
    ranks: dict[PlayerId, int] | None = None


def playouts(
    pool: GuestPool,
    seeds: Sequence[Seed],
    policies: Sequence[str],
    *,
    players: Sequence[dict[str, Any]] | None = None,
    state_ref: str | None = None,
    get_state: Callable[[], StateDict] | None = None,
    max_plies: int = 10_000,
) -> list[PlayoutGame]:
    """Play one game per seed inside the guest, from setup (``players``) or from a state.

    Args:
        pool: the module's instances.
        seeds: one 64-bit seed per game; game *i* draws its setup seed (from setup) and every
            choice and move seed from ``Rng(seeds[i])``.
        policies: one of :data:`POLICIES` per seat in seat order (the last repeats).
        players: ``[{"player_id", "username", "color"}]`` to start each game from setup.
        state_ref, get_state: the state to start from instead (``get_state`` required).
        max_plies: a game not over after this many moves is cut (``cut == "max_plies"``).

    Returns:
        One :class:`PlayoutGame` per seed, in seed order.

    Raises:
        ValueError: no seeds, too many, an unknown policy, or neither/both starts given.
        BudgetExceeded, GuestPanic, GuestTrap: the call failed (one game's failure fails the call).
        GuestProtocolError: the answer is not what the checks above require.
    """
    if not 1 <= len(seeds) <= MAX_GAMES_PER_CALL:
        raise ValueError(f"a playout call plays 1 to {MAX_GAMES_PER_CALL} games, not {len(seeds)}")
    unknown = [p for p in policies if p not in POLICIES]
    if not policies or unknown:
        raise ValueError(f"policies must be some of {', '.join(POLICIES)}, got {list(policies)}")
    if (players is None) == (get_state is None):
        raise ValueError("start a playout either from setup (players) or from a state (get_state)")
    fields: dict[str, Any] = {"seeds": list(seeds), "policies": list(policies), "max_plies": max_plies}
    if players is not None:
        fields["players"] = list(players)
        seated = [str(p["player_id"]) for p in players]
        response = _run(pool, OP_PLAYOUT, fields, scale=len(seeds) * MOVE_BUDGETS_PER_GAME)
    else:
        assert get_state is not None
        seated = [str(p["player_id"]) for p in get_state()["players"]]
        response = _run(pool, OP_PLAYOUT, fields, scale=len(seeds) * MOVE_BUDGETS_PER_GAME, state_ref=state_ref,
                        get_state=get_state)
    return check_playout_answer(response, len(seeds), seated, max_plies)


def search(
    pool: GuestPool,
    view: StateDict,
    player_id: PlayerId,
    offered: Sequence[AvailableActionDict],
    *,
    algorithm: str,
    iterations: int,
    seed: Seed,
    cancelled: Callable[[], bool] | None = None,
) -> AvailableActionDict:
    """Ask the guest to search ``player_id``'s next action on that seat's view.

    Args:
        pool: the module's instances.
        view: ``tablehost.view.view_state(state, player_id)``: the seat's view, never the state.
        player_id: the searching seat.
        offered: the actions the seat is offered, in view addresses (``view_actions``).
        algorithm: ``"mcts"`` or ``"ismcts"``.
        iterations: search iterations, >= 1.
        seed: the search's 64-bit seed (from the bot's own stream, never from hidden state).
        cancelled: polled while the search runs (:meth:`GuestPool.run_scaled`); True stops it.

    Returns:
        The element of ``offered`` whose action the guest chose.

    Raises:
        ValueError: an unknown algorithm, iterations below 1, or a view whose groups expand past
            :data:`tablehost.search_view.MAX_EXPANDED_PIECES` pieces.
        GuestProtocolError: the guest refused (``guest_code`` ``no_sampler`` for ismcts on a
            game without ``sample_hidden``, ``hidden_information`` for mcts on a game with it,
            ``no_action``) or answered something not offered or malformed.
        BudgetExceeded, GuestPanic, GuestTrap: the call failed.
        GuestCancelled: ``cancelled`` said so.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown search {algorithm!r}; known: {', '.join(ALGORITHMS)}")
    if iterations < 1:
        raise ValueError(f"a search needs at least 1 iteration, got {iterations}")
    expanded = expand_view(view)
    fields = {"view": expanded.state, "player_id": player_id, "algorithm": algorithm, "iterations": iterations,
              "seed": seed}
    scale = iterations * BUDGETS_PER_ITERATION
    response = _run(pool, OP_SEARCH, fields, scale=scale, cancelled=cancelled)
    return check_search_answer(response, offered, iterations, expanded)


def _run(pool: GuestPool, op: int, fields: dict[str, Any], **options: Any) -> dict[str, Any]:
    """``pool.run_scaled`` with a plain word for a module older than these ops (ABI v1.0)."""
    try:
        return pool.run_scaled(op, fields, **options)
    except GuestProtocolError as exc:
        if getattr(exc, "guest_code", None) == "unknown_op":
            raise GuestProtocolError(
                "the module implements ABI v1.0, without the playout and search ops; rebuild it with the "
                "current tablehost SDK",
                op=exc.op, guest_code="unknown_op", printed=exc.printed,
            ) from exc
        raise


def _refuse(what: str, op: str, response: dict[str, Any]) -> GuestProtocolError:
    printed = response.get("printed", "")
    return GuestProtocolError(f"guest {op} answer {what}", op=op, printed=printed if isinstance(printed, str) else "")


def _is_count(value: Any) -> TypeGuard[int]:
    return type(value) is int and value >= 0


def _check_scores(scores: Any, seated: Sequence[str], response: dict[str, Any]) -> dict[str, dict[str, list[float]]]:
    if type(scores) is not dict or sorted(scores) != sorted(seated):
        raise _refuse("has scores that are not one per seated player", "playout", response)
    for score in scores.values():
        if type(score) is not dict:
            raise _refuse("has a score that is not an object", "playout", response)
        for key in ("public_points", "private_points"):
            points = score.get(key, [])
            if type(points) is not list or not all(
                type(p) in (int, float) and math.isfinite(p) for p in points
            ):
                raise _refuse(f"has {key} that are not finite numbers", "playout", response)
    return scores


def check_playout_answer(
    response: dict[str, Any], games: int, seated: Sequence[str], max_plies: int
) -> list[PlayoutGame]:
    """Check a ``playout`` answer in full (module docstring) and return its games.

    Args:
        response: the parsed answer.
        games: the number of seeds sent.
        seated: the seated player ids as decimal strings.
        max_plies: the cap sent.

    Raises:
        GuestProtocolError: anything off; nothing of the answer is used.
    """
    items = response.get("games")
    if type(items) is not list or len(items) != games:
        raise _refuse(f"does not list exactly {games} games", "playout", response)
    result = []
    for item in items:
        if type(item) is not dict:
            raise _refuse("has a game that is not an object", "playout", response)
        plies, over, cut = item.get("plies"), item.get("game_over"), item.get("cut")
        if not _is_count(plies) or plies > max_plies:
            raise _refuse(f"has plies that are not a count up to {max_plies}", "playout", response)
        if type(over) is not bool or cut not in _CUTS or (cut is None) != over:
            raise _refuse("has a game_over/cut pair that does not agree", "playout", response)
        if cut == "max_plies" and plies != max_plies:
            raise _refuse("says a game was cut at max_plies before reaching it", "playout", response)
        ranks = None
        if "ranks" in item:
            if not over:
                raise _refuse("has ranks for a game that is not over", "playout", response)
            try:
                ranks = check_ranks(item["ranks"], [int(pid) for pid in seated])
            except GuestProtocolError as exc:
                raise _refuse(f"has ranks that are off ({exc})", "playout", response) from exc
        result.append(PlayoutGame(plies, over, cut, _check_scores(item.get("scores"), seated, response), ranks))
    return result


def check_search_answer(
    response: dict[str, Any], offered: Sequence[AvailableActionDict], iterations: int,
    expanded: ExpandedView | None = None,
) -> AvailableActionDict:
    """Check a ``search`` answer in full (module docstring); return the offered action it names.

    Args:
        response: the parsed answer.
        offered: the seat's offers in view addresses.
        iterations: the iterations asked.
        expanded: the expanded view the guest searched (its answer's addresses are mapped back
            to view addresses); None when the guest was sent the view itself.

    Raises:
        GuestProtocolError: anything off, including an action the seat is not offered.
    """
    chosen = response.get("action")
    if type(chosen) is not dict or type(chosen.get("action")) is not dict:
        raise _refuse("lacks an action", "search", response)
    if response.get("iterations") != iterations or type(response.get("iterations")) is not int:
        raise _refuse(f"does not report the {iterations} iterations asked", "search", response)
    visits = response.get("visits")
    if not _is_count(visits) or visits > iterations:
        raise _refuse("reports visits that are not a count up to the iterations", "search", response)
    action = expanded.to_view_action(chosen["action"]) if expanded is not None else chosen["action"]
    for offer in offered:
        if offer.get("intent") != "undo" and offer["action"] == action:
            return offer
    raise _refuse("chose an action the seat is not offered in its view", "search", response)
