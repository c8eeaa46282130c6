"""Host-driven random self-play throughput, where a move's time goes, and a plain Python reversi beside it.

Times are CPU time of the thread that plays (``time.thread_time``; the guest runs on that
thread too): other work on the machine no longer counts, though it still slows ours through
shared caches and cores; ``--wall`` uses wall-clock time instead.

For each sample game, on a big-stack thread as ``tablehost simulate`` runs games:

1. moves/s and µs per move of an uninstrumented run of ``selfplay.play_game`` with ``random`` bots;
2. from a second, instrumented run, µs per move by stage (each stage's callables wrapped with a
   timer; the timers add about 1 µs per wrapped call, so the stages sum to more than line 1):

   - ``encode``: building and serialising the request, and the call's own bookkeeping
     (``Guest.call`` minus the crossing and the decode);
   - ``guest``: the crossing into wasm and back (``Guest._cross``: the guest's work, memory copies);
   - ``decode``: parsing the response and the repeated-key check (``parse_response``);
   - ``gate``: the gate's checks of a step answer, patch check included, offers excluded;
   - ``offers``: the gate's check of the offers (``Gate._all_offers``, the whole map at once, and
     ``Gate._offers``, per player, when the first does not pass);
   - ``apply``: applying the patches to the host's table (``Table.apply``);
   - ``history``: the move record, its outcome digest, undo bookkeeping (``Match._accept_move``
     minus the gate and the apply);
   - ``pool``: instance routing and budgets (``GuestPool.step`` minus ``Guest.call``);
   - ``match``: the platform's turn rules (``Match.submit`` minus the pool and ``_accept_move``);
   - ``loop``: the rest: the self-play loop, the bots and each game's setup (``Match.start``:
     the guest's ``setup``, its gate check, the first table) spread over the game's moves.

3. for reversi, a plain hand-written Python reversi (``bench/plain_reversi.py``, same rules and
   policy) in the same run, and the ratio host-driven / plain.

``--before REF`` runs the same measurements a second time against the runtime and the built
games of a git ref (extracted with ``git archive`` into a temporary directory, run in a child
process) and prints both, rounds alternating so that machine load hits both alike.

Figures on this machine (2 cores shared with other work, load 7-9; CPU µs per move, best of 3
rounds; ``--before main`` at 19dd29b, which this work started from)::

    game      side   moves/s µs/move | encode guest decode gate offers apply history pool match loop
    reversi   main      6236   160.4 |    6.9  37.4   14.5 16.8    9.9   7.5    17.8 12.0   6.7 31.6
    reversi   this      9838   101.6 |    5.4  31.9   14.4 16.3    7.3   2.4    14.1  6.8   6.0 22.0
    checkers  main      4603   217.2 |    7.4  35.3    8.5 13.0    9.6   4.6    99.3 17.4   7.3 15.9
    checkers  this     10108    98.9 |    5.6  29.1    8.5 10.7    7.2   2.0    31.5 10.8   5.7 11.0
    plain Python reversi 25505 moves/s: host-driven / plain 0.24x before, 0.39x after

After merging main at 46c604d (run slots: ``pool`` went from about 7 to 17-23 µs per move),
``--before 19dd29b``::

    reversi   19dd29b   5887   169.9 |    7.6  41.1   17.5 19.6   10.5   8.6    19.7  6.6   6.9 37.6
    reversi   this      6822   146.6 |    5.9  35.4   19.6 18.4    9.0   2.6    12.8 17.3   6.5 25.1
    checkers  19dd29b   5337   187.4 |    8.2  39.7    9.3 14.4   10.1   5.0   104.4 13.1   7.4 18.7
    checkers  this      7429   134.6 |    6.6  36.1   11.3 13.9    9.6   2.4    37.1 23.5   7.1 14.3
    plain Python reversi 23327 moves/s: host-driven / plain 0.25x before, 0.29x after

(On a loaded machine both sides run slower than on a quiet one, ours more: the guest's
share and the plain Python loop suffer differently; compare sides of one run only.)

``Game::summary`` (reversi reads its board once for scores, game over and offers: a step
80,597 -> 58,187 wasm instructions) and no ``CallTiming`` without an observer, ``--before
main`` at 78ab897, best of 5 rounds, load 13-15::

    reversi   main      8535   117.2 |    5.8  34.3   15.6 17.8    9.1   2.4    12.5 19.6   6.6 23.0
    reversi   this      8901   112.4 |    6.0  33.1   14.8 17.8    9.0   2.4    12.9 14.0   6.6 24.6
    plain Python reversi 23758 moves/s: host-driven / plain 0.36x before, 0.37x after

The guest stage fell less than its instructions: timed alone (the host's raw call path,
fuel on, best of 40 rounds), a reversi step's crossing went from 13.4 to 11.8 µs; the rest
of the stage is the crossing's bookkeeping (request copy, budgets, response copy).

Setup states remembered by the gate, bot games without undo positions, fewer pool hops, and
cheaper reversi/checkers display hints and reversi log lines (issue 12, item 6), ``--before
main`` at 98ee487, best of 3 rounds, load 6-8::

    reversi   main      8941   111.9 |    5.9  31.5   13.3 17.2    8.7   2.4    12.1 14.3   6.5 21.7
    reversi   this     10718    93.3 |    6.0  30.8   14.4 17.1    8.5   2.5    11.7 12.8   6.5 15.8
    checkers  main      9755   102.5 |    5.5  28.1    8.8 10.7    7.6   2.0    28.4 16.0   5.9  9.5
    checkers  this     11655    85.8 |    5.8  28.8   11.8 11.5    8.3   2.0    11.7 14.7   6.2 10.6
    plain Python reversi 24851 moves/s: host-driven / plain 0.36x before, 0.43x after

What is left is spread thin: the wasm step itself (55,849 instructions, about 15-18 µs of the
``guest`` stage; a minimal crossing costs under 1 µs), then a few microseconds each for JSON
parsing (orjson on cache-cold memory after the call), the patch and offers checks, the move
record and the pool's slots. The 1.5x target (about 26 µs a move in all) needs a step answer the
host need not parse and check field by field, and a guest step that builds no strings per offer.

On the 2.5x slower machine of 2026-12-01 (2 cores, 4 sessions, load 6-10), fewer Python calls
per move on the step path (pool call chain without lambdas, the pool's lock held directly and no
notify without waiters, one crossing object, inline step-flag and score checks): Python-visible
calls per move (cProfile, 40 seeded games, load-independent) reversi 320.6 -> 287.6, checkers
246.2 -> 216.1. The time saved is below this machine's run-to-run spread: ``--before 930e0b1``,
best of 7 rounds, load 6-10::

    reversi   930e0b    4692   213.1 |   10.3  63.7   22.9 32.1   14.6   4.3    22.3 25.6  10.4 28.8
    reversi   this      5311   188.3 |   11.4  57.8   24.9 33.9   15.3   4.9    24.3 26.0  10.7 29.2
    checkers  930e0b    6202   161.2 |    9.8  55.2   14.9 21.0   14.0   3.5    21.5 29.0   9.8 17.3
    checkers  this      6105   163.8 |   11.3  56.9   17.3 22.2   15.5   4.1    24.7 29.7  10.3 17.8
    plain Python reversi 16761 moves/s (59.7 µs/move): host-driven / plain 0.28x before, 0.32x after

(a run of 4 rounds minutes earlier gave reversi 214.7 before, 217.0 after.) Where a reversi
step's wasm work goes, by fuel (wasm instructions) on a mid-game state: the step 50k (38-62k);
an ``actions`` op for a player with nothing to do (request parse, cache, answer) 4.7k; ``scores``
12.2k; ``game_over`` 19.5k; ``actions`` for the active player 19.8k (reading the board from the
generic table and building about ten labelled offers). The guest crossing is about 37 µs of
wasm and 20-30 µs of copies, clocks and budget bookkeeping around it; the rest of a move (about
150 µs here) is Python. The 1.5x target (about 40 µs a move on this machine) is out of reach of
the step path as designed: the host's per-move Python (pool, match rules, record, bot loop)
alone is over 1x the plain reversi, before any parsing or checking.

Leases and the bot jobs' collector settings (issue 12, item 6): ``play_game`` holds its
match's instance, module slot and run slot for the whole game (``GuestPool.lease``: every call
still gets its own budgets and checks), and ``play``, ``simulate`` workers and this bench (the
same ``tablehost.gcpolicy.tune_for_bot_jobs``) freeze what is loaded and collect at (10000, 10,
1000): no collection at all during a reversi game. Records byte-identical for the same seeds (9
games x 4 seeds, random bots, ``match.record()`` without its ``created_at``/``at`` times,
sha256 before and after). ``--before 82d90ed`` (the previous entry), best of 7 rounds of 2 s,
load 3-5::

    reversi   82d90e    5044   198.3 |    9.7  50.7   25.0 29.7   13.9   4.0    20.6 21.9   8.8 24.2
    reversi   this      5819   171.8 |    9.7  50.6   20.3 29.7   14.1   4.1    20.7 10.1   9.0 25.2
    plain Python reversi 15714 moves/s (63.6 µs/move): host-driven / plain 0.32x before, 0.37x after

``--before main`` at cecbc94 (without the entry above either), best of 5 rounds, load 6-9::

    reversi   main      4285   233.4 |   11.4  63.9   25.2 36.0   16.6   4.8    24.8 28.9  12.0 32.4
    reversi   this      5327   187.7 |   11.1  60.1   23.6 33.9   16.2   4.8    23.9 11.8  10.3 31.3
    checkers  main      5831   171.5 |   10.8  57.0   16.0 22.7   15.1   3.7    23.5 32.0  11.1 18.4
    checkers  this      6179   161.8 |   10.7  55.5   15.2 20.8   15.1   3.7    23.8 15.8   9.8 16.1
    plain Python reversi 16233 moves/s (61.6 µs/move): host-driven / plain 0.26x before, 0.33x after

The ``pool`` stage halves (what is left: the lease check, the budget's start, the ref
bookkeeping under the pool's lock); collections had cost 4-10 µs a move (``gc.callbacks``,
reversi), most of it landing in ``decode`` (orjson's allocations trigger them). Another
``--before HEAD`` run at load 6-9 gave reversi 182.0 -> 198.6 and checkers 194.1 -> 160.4
with the pool stage 26.8 -> 12.2 and 36.5 -> 16.2: on this machine a single comparison of
totals can be off by 10-15%, the stage split less so.

Python work per move on the checked step path (issue 12, item 6, this session): common patch
pieces, log lines and active-player lists built without the general normaliser, the
``set_*_kind``/owner space and index checks inline (``Table.check`` of a mid-game reversi step
7.8 -> 5.7 µs), the gate's patch value checks with the frequent ops first and the answer's member
types tested inline (``Gate.check_step`` of that step, table prepared, 22-23 -> 17-18 µs), a
call's fresh budget from fields computed once per limits object (``CallBudget.start`` 1.9 ->
0.5 µs), ``Guest.last_stats`` built only when read, a random bot's candidates not copied when no
undo is offered, and a dozen calls inlined. Every check stays (fast paths with property tests
against the full ones); records byte-identical for the same seeds (9 games x 4 seeds, as above).
Calls per move (cProfile, 40 seeded games, load-independent): reversi 270.5 -> 223.8, checkers
198.3 -> 171.9. ``--before main`` at db695b3 (merged in), best of 5 rounds, load 3-6::

    reversi   main      5931   168.6 |    8.2  50.6   21.0 31.1   13.0   3.7    19.2  8.5   7.8 29.5
    reversi   this      6179   161.8 |    6.6  49.7   22.4 25.5   12.8   3.8    18.6  6.4   7.9 30.9
    checkers  main      7278   137.4 |    8.3  48.3   12.9 19.0   13.2   2.9    19.7 13.5   7.7 15.6
    checkers  this      7692   130.0 |    6.7  47.6   12.5 17.4   12.9   2.8    18.3 10.9   7.4 14.7
    plain Python reversi 13797 moves/s (72.5 µs/move): host-driven / plain 0.43x before, 0.45x after

(A 3-round run minutes earlier, load 3-4: reversi 175.4 -> 169.4, checkers 151.0 -> 131.8; one
before the merge (this tree without db695b3's crossing change), 180.4 -> 145.8 and 127.3 -> 124.9: the totals
move by 5-15% from run to run here, the ``gate``, ``encode`` and ``pool`` stages fall in every
run.) What is left of a reversi move's Python is mostly C work already: parsing the answer
(orjson 3.8, about 9 µs for 1.4 KB), re-encoding it for the repeated-key check (3 µs) and its
offers sorted for the regex and the digest (4 µs), the regex (3 µs), the digest (1.5 µs); a Python
loop over five patches now costs about 1 µs a patch in check and gate together.

Usage: python bench/host_throughput.py [--seconds S] [--rounds N] [--before REF] [--wall] [GAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEATS = {"tic_tac_toe": 2, "reversi": 2, "checkers": 2, "dominoes": 4, "hearts": 4, "spades": 4}
CLOCK = time.thread_time
"""The clock every figure is taken with (``--wall``: ``time.perf_counter``)."""
STAGES = ("encode", "guest", "decode", "gate", "offers", "apply", "history", "pool", "match", "loop")
DEFAULT_GAMES = ("reversi", "checkers")


class Timers:
    """Accumulates seconds spent in wrapped callables, by name; a missing attribute is skipped."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._undo: list[Callable[[], None]] = []

    def wrap(self, owner: Any, attribute: str, name: str) -> None:
        """Time every call of ``owner.attribute`` into ``seconds[name]`` (until :meth:`restore`)."""
        original = getattr(owner, attribute, None)
        if original is None:
            return
        seconds = self.seconds
        seconds.setdefault(name, 0.0)
        clock = CLOCK

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = clock()
            try:
                return original(*args, **kwargs)
            finally:
                seconds[name] += clock() - started

        setattr(owner, attribute, timed)
        self._undo.append(lambda: setattr(owner, attribute, original))

    def restore(self) -> None:
        """Put every wrapped callable back."""
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()


def run_for(pool: Any, seats: int, seconds: float) -> tuple[int, int, float]:
    """Play random games for ``seconds`` of wall-clock time; return (games, moves, seconds by :data:`CLOCK`)."""
    from tablehost.selfplay import play_game

    games = moves = 0
    started, clock_started = time.perf_counter(), CLOCK()
    while time.perf_counter() - started < seconds:
        moves += play_game(pool, ["random"] * seats, games + 1).plies
        games += 1
    return games, moves, CLOCK() - clock_started


def stages(pool: Any, seats: int, seconds: float) -> dict[str, float]:
    """µs per move by stage (see the module docstring), from an instrumented run."""
    from tablehost import gate, match, table
    from tablehost.guest import instance
    from tablehost.guest import pool as pool_module

    timers = Timers()
    timers.wrap(instance.Guest, "call", "call")
    timers.wrap(instance.Guest, "_cross", "guest")
    timers.wrap(instance, "parse_response", "decode")
    timers.wrap(gate.Gate, "check_step", "check_step")
    timers.wrap(gate.Gate, "_offers", "offers")
    timers.wrap(gate.Gate, "_all_offers", "offers")  # the map-level fast path (after this work)
    timers.wrap(table.Table, "apply", "apply")
    timers.wrap(match.Match, "_accept_move", "accept")
    timers.wrap(pool_module.GuestPool, "step", "pool_step")
    timers.wrap(match.Match, "submit", "submit")
    try:
        _, moves, elapsed = run_for(pool, seats, seconds)
    finally:
        timers.restore()
    us = {name: 1e6 * value / moves for name, value in timers.seconds.items()}
    total = 1e6 * elapsed / moves
    get = us.get
    return {
        "encode": get("call", 0.0) - get("guest", 0.0) - get("decode", 0.0),
        "guest": get("guest", 0.0),
        "decode": get("decode", 0.0),
        "gate": get("check_step", 0.0) - get("offers", 0.0),
        "offers": get("offers", 0.0),
        "apply": get("apply", 0.0),
        "history": get("accept", 0.0) - get("check_step", 0.0) - get("apply", 0.0),
        "pool": get("pool_step", 0.0) - get("call", 0.0),
        "match": get("submit", 0.0) - get("accept", 0.0) - get("pool_step", 0.0),
        "loop": total - get("submit", 0.0),
        "total": total,
    }


def _tune_gc_as_bot_jobs() -> None:
    """The collector settings ``play`` and ``simulate`` use (``tablehost.gcpolicy``), when the
    runtime measured has them (a ``--before`` ref may not: it then runs with its own)."""
    try:
        from tablehost.gcpolicy import tune_for_bot_jobs
    except ImportError:
        return
    tune_for_bot_jobs()


def measure(games: list[str], seconds: float, dist: Path) -> dict[str, dict[str, float]]:
    """Per game: ``moves_per_s``, ``us_per_move`` (uninstrumented) and the stages, on a big-stack thread."""
    from tablehost import logs
    from tablehost._stacks import on_big_stack
    from tablehost.guest import GuestPool
    from tablehost.module import load_module

    logs.configure(level="warning", json=False)
    results: dict[str, dict[str, float]] = {}
    for name in games:
        module = load_module((dist / f"{name}.wasm").read_bytes(), name=name)
        pool = GuestPool(module)
        _tune_gc_as_bot_jobs()
        seats = SEATS.get(name, 2)

        def work(pool: Any = pool, seats: int = seats) -> dict[str, float]:
            run_for(pool, seats, min(0.3, seconds))  # warm up
            _, moves, elapsed = run_for(pool, seats, seconds)
            row = {"moves_per_s": moves / elapsed, "us_per_move": 1e6 * elapsed / moves}
            row.update(stages(pool, seats, seconds))
            return row

        results[name] = on_big_stack(pool.limits.stack_bytes, work)
        pool.close()
    return results


def plain_reversi(seconds: float) -> float:
    """Moves per second of :mod:`plain_reversi` random games for ``seconds``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from plain_reversi import random_game

    moves = games = 0
    started, clock_started = time.perf_counter(), CLOCK()
    while time.perf_counter() - started < seconds:
        moves += random_game(games + 1)
        games += 1
    return moves / (CLOCK() - clock_started)


def measure_in_child(tree: Path, games: list[str], seconds: float) -> dict[str, dict[str, float]]:
    """:func:`measure` in a child process whose ``tablehost`` and games come from ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree / "runtime"))
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(tree / "sample_games" / "dist"), "--seconds", str(seconds),
         *(["--wall"] if CLOCK is time.perf_counter else []), *games],
        env=env, check=True, capture_output=True, text=True,
    ).stdout
    result: dict[str, dict[str, float]] = json.loads(out.strip().splitlines()[-1])
    return result


def extract(ref: str, into: Path) -> Path:
    """The runtime and built games of git ``ref`` under ``into`` (``git archive``); returns ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "runtime", "sample_games/dist"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def best(rows: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Per game and figure, the best of the rounds (most moves/s, fewest µs): a busy machine's
    slow rounds drop out."""
    merged: dict[str, dict[str, float]] = {}
    for row in rows:
        for game, figures in row.items():
            kept = merged.setdefault(game, dict(figures))
            for name, value in figures.items():
                kept[name] = max(kept[name], value) if name == "moves_per_s" else min(kept[name], value)
    return merged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", help=f"sample games (default: {' '.join(DEFAULT_GAMES)})")
    parser.add_argument("--seconds", type=float, default=1.5, help="seconds per measurement (default 1.5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per side, alternating, best kept (default 3)")
    parser.add_argument("--before", metavar="REF", help="also measure git REF's runtime and games (e.g. main)")
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of the thread's CPU time")
    parser.add_argument("--child", metavar="DIST", help=argparse.SUPPRESS)
    args = parser.parse_args()
    global CLOCK
    if args.wall:
        CLOCK = time.perf_counter
    games = args.games or list(DEFAULT_GAMES)
    if args.child:
        print(json.dumps(measure(games, args.seconds, Path(args.child))))
        return

    sides: dict[str, list[dict[str, dict[str, float]]]] = {"after": []}
    plain: list[float] = []
    with tempfile.TemporaryDirectory(prefix="host_throughput_") as tmp:
        before_tree = extract(args.before, Path(tmp)) if args.before else None
        if before_tree is not None:
            sides = {"before": [], "after": []}
        for _ in range(max(1, args.rounds)):
            if "reversi" in games:
                plain.append(plain_reversi(args.seconds))
            if before_tree is not None:
                sides["before"].append(measure_in_child(before_tree, games, args.seconds))
            sides["after"].append(measure_in_child(ROOT, games, args.seconds))

    header = f"{'game':10s} {'side':6s} {'moves/s':>8s} {'µs/move':>8s} | " + " ".join(f"{s:>7s}" for s in STAGES)
    clock = "wall-clock" if args.wall else "CPU (thread)"
    print(f"{clock} µs per move; stages from an instrumented run (its timers add about 1 µs per wrapped call)")
    print(header)
    results = {side: best(rows) for side, rows in sides.items()}
    for game in games:
        for side, result in results.items():
            row = result[game]
            label = args.before if side == "before" else "this"
            print(
                f"{game:10s} {label[:6]:6s} {row['moves_per_s']:8.0f} {row['us_per_move']:8.1f} | "
                + " ".join(f"{row[s]:7.1f}" for s in STAGES)
            )
    if plain:
        plain_rate = max(plain)
        print(f"\nplain Python reversi: {plain_rate:.0f} moves/s ({1e6 / plain_rate:.1f} µs/move)")
        for side, result in results.items():
            if "reversi" in result:
                label = args.before if side == "before" else "this tree"
                print(f"host-driven reversi / plain Python, {label}: {result['reversi']['moves_per_s'] / plain_rate:.2f}x")


if __name__ == "__main__":
    main()
