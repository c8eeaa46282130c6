"""Fuel and wall time of one in-guest search decision, against the default per-call budget.

For reversi and checkers, from the opening and from positions a few random moves in: the fuel
one ``mcts:ITERATIONS`` decision uses (the deterministic cost, the same on every machine), that
as a share of the default per-call fuel budget, and the wall-clock milliseconds (median of
``--repeat`` runs; these depend on the machine and its load, printed with the load average).
The guest runs the search on the game's compact state when it has one (docs/abi.md 8.4).

Measured (mcts:1000, seed 1; fuel is deterministic): reversi 35.5 M fuel from the opening (0.71
of the budget), 32.0 M after 10 plies, 27.5 M after 20, 18.2 M after 40, a few ms of wall
clock; checkers 537 M from the opening (10.7 budgets: a checkers search needs fewer iterations
or a bigger budget). Of reversi's opening figure, about 1.5 M is fixed cost per call (the view's
JSON read into a table, the root's offers, the answer), about 27 M the random playouts (some 55
moves an iteration at about 500 fuel each) and about 7 M the tree.

Usage: python bench/search_fuel.py [--iterations N] [--repeat R] [GAME ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import statistics
import time
from pathlib import Path

from tablehost import logs
from tablehost._stacks import on_big_stack
from tablehost.guest import OP_SEARCH, Guest, GuestPool
from tablehost.guest.instance import CallBudget
from tablehost.inguest import BUDGETS_PER_ITERATION
from tablehost.limits import DEFAULT_LIMITS
from tablehost.module import load_module
from tablehost.selfplay import play_game

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
PLIES = (0, 10, 20, 40)
"""Random moves (``first`` bots: the same positions every run) before the searched decision."""


def decisions(game: str, iterations: int, repeat: int) -> None:
    """Print one row per position: plies in, fuel, share of the budget, median wall ms."""
    limits = dataclasses.replace(DEFAULT_LIMITS, wall_ms=600_000)
    module = load_module((DIST / f"{game}.wasm").read_bytes(), name=game, limits=limits)
    pool = GuestPool(module, limits)
    guest = Guest(module, limits)
    for plies in PLIES:
        match = play_game(pool, ["random", "random"], 7, max_plies=plies).match
        if not match.active_player_ids:
            continue
        mover = match.active_player_ids[0]
        request = {"view": match.view(mover).state, "player_id": mover, "algorithm": "mcts",
                   "iterations": iterations, "seed": 1}
        times, fuel = [], 0
        for _ in range(repeat):
            started = time.perf_counter()
            guest.call(OP_SEARCH, request, CallBudget.start(limits, iterations * BUDGETS_PER_ITERATION))
            times.append((time.perf_counter() - started) * 1000)
            assert guest.last_stats is not None
            fuel = guest.last_stats.fuel
        share = fuel / DEFAULT_LIMITS.fuel_per_call
        print(f"  {game:9s} after {plies:2d} plies: {fuel:13,} fuel = {share:5.2f} x the per-call budget of "
              f"{DEFAULT_LIMITS.fuel_per_call:,}; {statistics.median(times):7.1f} ms (median of {repeat})")
    pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=1000, help="search iterations (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per position (default 3)")
    parser.add_argument("games", nargs="*", default=["reversi", "checkers"], help="games (default both)")
    args = parser.parse_args()
    logs.configure(level="error", json=False)
    print(f"mcts:{args.iterations}, one decision; load average {os.getloadavg()[0]:.2f} at the start")
    for game in args.games:
        on_big_stack(DEFAULT_LIMITS.stack_bytes, functools.partial(decisions, game, args.iterations, args.repeat))
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
