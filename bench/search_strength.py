"""How strong the search bots are, measured with ``simulate`` (the issue's figures).

For each row, games with the search bot in each seat in turn against ``random`` in the others
(``simulate``'s game loop, ``selfplay.play_game``): the search bot's wins, draws and losses,
and its mean first score against the random seats' mean (hearts: lower is better). Also: the
fuel one 1,000-iteration reversi search uses against the default per-call budget.

The wall-clock budget is raised (``--wall-ms``, default 60000 per call) so a loaded machine
measures strength, not its own load; fuel, the budget that decides, stays the default.

Usage: python bench/search_strength.py [--games N] [--wall-ms MS] [GAME ...]
Games: tic_tac_toe (or ttt), reversi, checkers, dominoes, hearts (default: all); another name
exits 2 listing these.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path
from typing import Any

from tablehost import logs
from tablehost.guest import GuestPool
from tablehost.limits import DEFAULT_LIMITS
from tablehost.module import load_module
from tablehost.selfplay import play_game

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
ROWS: dict[str, tuple[str, int]] = {
    "tic_tac_toe": ("mcts:1000", 2),
    "reversi": ("mcts:300", 2),
    "checkers": ("mcts:100", 2),
    "dominoes": ("ismcts:50", 2),
    "hearts": ("ismcts:10", 4),
}
"""Each row's sample game (its module in sample_games/dist): the search bot measured and the seats."""
ALIASES = {"ttt": "tic_tac_toe"}
"""Short names the rows were known by."""


def first_points(result: Any) -> list[float]:
    return [float(result.scores[str(p.player_id)]["public_points"][0]) for p in result.match.players]


def measure(game: str, bot: str, seats: int, games: int, wall_ms: int) -> dict[str, Any]:
    """Play ``games`` games, the search bot in seat ``i % seats``; its record and mean scores."""
    limits = dataclasses.replace(DEFAULT_LIMITS, wall_ms=wall_ms)
    pool = GuestPool(load_module((DIST / f"{game}.wasm").read_bytes(), name=game, limits=limits), limits)
    wins = draws = losses = failures = 0
    mine: list[float] = []
    theirs: list[float] = []
    started = time.perf_counter()
    for i in range(games):
        seat = i % seats
        bots = ["random"] * seats
        bots[seat] = bot
        try:
            result = play_game(pool, bots, 1000 + i)
        except Exception as exc:  # noqa: BLE001 - counted and shown
            failures += 1
            print(f"  game {i}: {exc}")
            continue
        points = first_points(result)
        mine.append(points[seat])
        theirs.extend(p for s, p in enumerate(points) if s != seat)
        if seat in result.winners:
            draws += result.draw
            wins += not result.draw
        else:
            losses += 1
    pool.close()
    return {
        "game": game, "bot": bot, "games": games, "wins": wins, "draws": draws, "losses": losses,
        "failures": failures, "bot_mean": round(statistics.fmean(mine), 2) if mine else None,
        "random_mean": round(statistics.fmean(theirs), 2) if theirs else None,
        "seconds": round(time.perf_counter() - started, 1),
    }


def reversi_search_fuel(iterations: int = 1000) -> tuple[int, float]:
    """Fuel and seconds one ``iterations``-iteration search of the reversi opening takes."""
    from tablehost.guest import OP_SEARCH, Guest
    from tablehost.guest.instance import CallBudget
    from tablehost.inguest import BUDGETS_PER_ITERATION

    limits = dataclasses.replace(DEFAULT_LIMITS, wall_ms=600_000)
    module = load_module((DIST / "reversi.wasm").read_bytes(), name="reversi", limits=limits)
    match = play_game(GuestPool(module, limits), ["first", "first"], 1, max_plies=0).match
    mover = match.active_player_ids[0]
    request = {"view": match.view(mover).state, "player_id": mover, "algorithm": "mcts",
               "iterations": iterations, "seed": 1}
    guest = Guest(module, limits)
    started = time.perf_counter()
    guest.call(OP_SEARCH, request, CallBudget.start(limits, iterations * BUDGETS_PER_ITERATION))
    return guest.last_stats.fuel, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games per row (default 20)")
    parser.add_argument("--wall-ms", type=int, default=60_000, help="wall-clock budget per call (default 60000)")
    parser.add_argument("--no-fuel-check", action="store_true", help="skip the reversi mcts:1000 fuel figure")
    parser.add_argument(
        "games_to_run",
        nargs="*",
        metavar="GAME",
        help=f"sample games to measure: {', '.join(ROWS)} (ttt for tic_tac_toe; default: all)",
    )
    args = parser.parse_args()
    # Checked here, not with argparse's choices: with nargs="*" it also checks the default list as one value.
    unknown = [name for name in args.games_to_run if ALIASES.get(name, name) not in ROWS]
    if unknown:
        parser.error(f"unknown game {unknown[0]!r}: choose from {', '.join(ROWS)} (or ttt)")
    logs.configure(level="error", json=False)
    for name in args.games_to_run or list(ROWS):
        game = ALIASES.get(name, name)
        bot, seats = ROWS[game]
        print(measure(game, bot, seats, args.games, args.wall_ms), flush=True)
    if args.no_fuel_check:
        return
    fuel, seconds = reversi_search_fuel()
    print(f"reversi mcts:1000 opening decision: {fuel:,} fuel ({fuel / DEFAULT_LIMITS.fuel_per_call:.2f} of one "
          f"default per-call budget of {DEFAULT_LIMITS.fuel_per_call:,}), {seconds * 1000:.0f} ms")


if __name__ == "__main__":
    main()
