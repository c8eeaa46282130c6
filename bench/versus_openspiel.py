"""Random self-play of reversi and checkers, ours and OpenSpiel's, side by side in one run.

Rows, each in moves per second (one process, one core):

- ``host-driven``: tablehost's normal path, a guest call per move (``selfplay.play_game``), run
  on a big-stack thread as ``play`` and ``simulate`` run it (else every guest call pays a thread
  hop, about 200 µs a move);
- ``in-guest``: whole games inside the guest, 32 per ``playout`` call (``inguest.playouts``);
- ``openspiel python loop``: OpenSpiel's C++ rules driven move by move from Python;
- ``openspiel c++ games``: whole games in C++ (``pyspiel.evaluate_bots`` with uniform random
  bots); OpenSpiel does not report plies there, so moves = games x the mean plies its Python
  loop measured with the same policy;
- ``plain python`` (reversi only): a short hand-written Python reversi with the same policy.

Then the ratios of ours to theirs, and the load average (the machine may be shared). A move is
one action: a checkers hop is two of ours (select the piece, then its destination) but one of
OpenSpiel's, and a reversi move is one in both. OpenSpiel (``pip install open_spiel``, named ``othello``
there) is an optional bench dependency; without it only our rows print.

Usage: python bench/versus_openspiel.py [--seconds S]
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable
from pathlib import Path

from tablehost import logs
from tablehost._stacks import on_big_stack
from tablehost.guest import GuestPool
from tablehost.inguest import playouts
from tablehost.limits import DEFAULT_LIMITS
from tablehost.module import load_module
from tablehost.selfplay import default_players, play_game

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
OPENSPIEL_NAMES = {"reversi": "othello", "checkers": "checkers"}


def timed(seconds: float, one_round: Callable[[int], int]) -> float:
    """Call ``one_round(i)`` (returning moves played) until ``seconds`` pass; moves per second."""
    moves, rounds = 0, 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        moves += one_round(rounds)
        rounds += 1
    return moves / (time.perf_counter() - started)


def ours(game: str, seconds: float) -> dict[str, float]:
    pool = GuestPool(load_module((DIST / f"{game}.wasm").read_bytes(), name=game))
    players = [p.to_json() for p in default_players(2)]
    rows = {
        "host-driven": timed(seconds, lambda i: play_game(pool, ["random", "random"], i + 1).plies),
        "in-guest": timed(
            seconds,
            lambda i: sum(g.plies for g in playouts(pool, range(32 * i, 32 * i + 32), ["random"], players=players)),
        ),
    }
    pool.close()
    return rows


def openspiel(game: str, seconds: float) -> dict[str, float]:
    import numpy as np
    import pyspiel

    loaded = pyspiel.load_game(OPENSPIEL_NAMES[game])
    rng = np.random.RandomState(1)
    plies: list[int] = []

    def python_loop(_: int) -> int:
        state = loaded.new_initial_state()
        n = 0
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[rng.randint(len(legal))])
            n += 1
        plies.append(n)
        return n

    rows = {"openspiel python loop": timed(seconds, python_loop)}
    mean_plies = sum(plies) / len(plies)

    def cpp_games(i: int) -> int:
        bots = [pyspiel.make_uniform_random_bot(p, 1000 * i + p) for p in range(2)]
        for _ in range(20):
            pyspiel.evaluate_bots(loaded.new_initial_state(), bots, i)
        return round(20 * mean_plies)

    rows["openspiel c++ games"] = timed(seconds, cpp_games)
    return rows


_DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc]


def _flips(board: list[int], at: int, me: int) -> list[int]:
    row, col = divmod(at, 8)
    flipped: list[int] = []
    for dr, dc in _DIRECTIONS:
        r, c, line = row + dr, col + dc, []
        while 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == -me:
            line.append(r * 8 + c)
            r, c = r + dr, c + dc
        if line and 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == me:
            flipped += line
    return flipped


def plain_python_reversi(seed: int) -> int:
    """One random game of a straightforward Python reversi; returns the moves played."""
    rng = random.Random(seed)
    board = [0] * 64
    board[27] = board[36] = -1
    board[28] = board[35] = 1
    me, moves, passes = 1, 0, 0
    while passes < 2:
        legal = [(at, f) for at in range(64) if board[at] == 0 and (f := _flips(board, at, me))]
        if legal:
            at, flipped = legal[rng.randrange(len(legal))]
            for square in [at, *flipped]:
                board[square] = me
            moves, passes = moves + 1, 0
        else:
            passes += 1
        me = -me
    return moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per row (default 3)")
    args = parser.parse_args()
    logs.configure(level="warning", json=False)
    print(f"load average {os.getloadavg()[0]:.2f} at the start")
    for game in ("reversi", "checkers"):
        rows = on_big_stack(DEFAULT_LIMITS.stack_bytes, lambda game=game: ours(game, args.seconds))
        try:
            rows.update(openspiel(game, args.seconds))
        except ImportError:
            print("(open_spiel is not installed: pip install open_spiel)")
        if game == "reversi":
            rows["plain python"] = timed(args.seconds, lambda i: plain_python_reversi(i))
        print(f"\n{game}: random self-play, moves/s")
        for name, rate in rows.items():
            print(f"  {name:24s} {rate:12,.0f}")
        for mine in ("host-driven", "in-guest"):
            for theirs in ("openspiel python loop", "openspiel c++ games", "plain python"):
                if theirs in rows:
                    print(f"  {mine} / {theirs}: {rows[mine] / rows[theirs]:.2f}x")
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
