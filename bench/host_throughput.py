"""Host-driven random self-play throughput for each sample game, in one process.

Prints moves/s and games/s from an uninstrumented run, then, from a second instrumented run,
how the time of a move splits between the wasm call (the guest's own work plus the crossing),
JSON (encoding the request, decoding and checking the response), patch application on the
host's table, and the rest (platform rules, bots, bookkeeping).

Usage: python bench/host_throughput.py [--seconds S] [GAME ...]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tablehost import guest as guest_module
from tablehost import logs
from tablehost.guest import GuestPool
from tablehost.module import load_module
from tablehost.selfplay import play_game
from tablehost.table import Table

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
SEATS = {"tic_tac_toe": 2, "reversi": 2, "checkers": 2, "dominoes": 4, "hearts": 4}


def run_for(pool: GuestPool, seats: int, seconds: float) -> tuple[int, int, float]:
    """Play games until ``seconds`` have passed; return (games, moves, elapsed seconds)."""
    games = moves = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        moves += play_game(pool, ["random"] * seats, games + 1).plies
        games += 1
    return games, moves, time.perf_counter() - started


class Timers:
    """Accumulates seconds spent in wrapped callables, by name."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._undo: list[Callable[[], None]] = []

    def wrap(self, owner: Any, attribute: str, name: str) -> None:
        original = getattr(owner, attribute)
        seconds = self.seconds
        seconds.setdefault(name, 0.0)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                seconds[name] += time.perf_counter() - started

        setattr(owner, attribute, timed)
        self._undo.append(lambda: setattr(owner, attribute, original))

    def restore(self) -> None:
        for undo in reversed(self._undo):
            undo()


def split(pool: GuestPool, seats: int, seconds: float) -> dict[str, float]:
    """Per-move microseconds by part, from an instrumented run."""
    timers = Timers()
    timers.wrap(guest_module.Guest, "call", "guest_call")
    timers.wrap(guest_module.Guest, "_cross", "wasm")
    timers.wrap(Table, "apply", "patches")
    try:
        _, moves, elapsed = run_for(pool, seats, seconds)
    finally:
        timers.restore()
    per_move = {name: 1e6 * value / moves for name, value in timers.seconds.items()}
    total = 1e6 * elapsed / moves
    return {
        "wasm": per_move["wasm"],
        "json": per_move["guest_call"] - per_move["wasm"],
        "patches": per_move["patches"],
        "rest": total - per_move["guest_call"] - per_move["patches"],
        "total": total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", help="sample games to run (default: all built)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement (default 3)")
    args = parser.parse_args()
    logs.configure(level="warning", json=False)
    names = args.games or sorted(p.stem for p in DIST.glob("*.wasm"))
    print(f"{'game':12s} {'moves/s':>9s} {'games/s':>8s}   µs per move: wasm  json  patches  rest  total")
    for name in names:
        module = load_module((DIST / f"{name}.wasm").read_bytes(), name=name)
        pool = GuestPool(module)
        seats = SEATS.get(name, 2)
        run_for(pool, seats, 0.3)  # warm up
        games, moves, elapsed = run_for(pool, seats, args.seconds)
        parts = split(pool, seats, args.seconds)
        print(
            f"{name:12s} {moves / elapsed:9.0f} {games / elapsed:8.1f}   "
            f"{parts['wasm']:17.1f} {parts['json']:5.1f} {parts['patches']:8.1f} {parts['rest']:5.1f} "
            f"{parts['total']:6.1f}"
        )
        pool.close()


if __name__ == "__main__":
    main()
