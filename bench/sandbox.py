"""What isolation costs and how refusals behave under hostile load (issue 9).

Prints three figures:

1. **Match switch**: a match whose instance was dropped (another match took its slot, or it
   sat idle past ``keep_warm_ms``) gets a fresh instance from the compiled module and sends the
   full state. Measured per sample game: instantiation alone (µs), and a step from a fresh
   instance with the full state minus a warm step by reference (µs), i.e. the whole switch.
2. **Idle-match memory**: what an idle match holds once its instance is dropped (the host's
   ``Match``: state, history, offers; tracemalloc bytes per match) against what a warm instance
   holds (resident-set growth per instance, bytes).
3. **Refusal latency with hostile neighbours**: 16 matches of 4 modules that loop on every move
   run next to 2 honest matches whose moves take 32 M fuel each (``tests/wat/slow_step.wat``,
   about 10 ms of CPU); each hostile move is refused by a budget. Prints p50/p99/max
   of the refusal latency against the ``wall_ms`` budget, and the honest moves played and
   refused. Run once with quarantine off (every hostile move runs until its budget stops it) and
   once with the default quarantine.

Usage: PYTHONPATH=runtime python bench/sandbox.py [--seconds S] [--dist DIR]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import threading
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

import wasmtime

from tablehost.errors import GuestError, ModuleQuarantined
from tablehost.guest import Guest, GuestPool
from tablehost.limits import DEFAULT_LIMITS, Limits
from tablehost.match import Match
from tablehost.module import GameModule, load_module
from tablehost.selfplay import default_players, play_game

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "sample_games" / "dist"
SEATS = {"tic_tac_toe": 2, "reversi": 2, "checkers": 2, "dominoes": 3, "hearts": 4}
WAT = ROOT / "tests" / "wat"
HOOK = """  (func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
    (i64.const 0))"""


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def match_switch(module: GameModule, seats: int, games: int = 3) -> dict[str, float]:
    """Instantiation (µs, median), and the mean cost of a move with a warm instance and with a fresh one.

    The same seeded games are played twice: with the default pool (a match keeps its instance
    between moves) and with ``keep_warm_ms=0`` (every move instantiates and sends the full
    state, i.e. every move is a match switch). Their difference per move is the switch cost.
    """
    instantiate = []
    for _ in range(40):
        started = time.perf_counter()
        Guest(module, module.limits)
        instantiate.append((time.perf_counter() - started) * 1e6)
    per_move = {}
    for label, keep_warm_ms in (("warm", 60_000.0), ("fresh", 0.0)):
        pool = GuestPool(module, keep_warm_ms=keep_warm_ms)
        plies, started = 0, time.perf_counter()
        for seed in range(games):
            plies += play_game(pool, ["random"] * seats, seed, match_id=f"{label}{seed}", max_plies=400).plies
        per_move[label] = (time.perf_counter() - started) * 1e6 / max(plies, 1)
        pool.close()
    return {
        "instantiate_us": statistics.median(instantiate),
        "warm_move_us": per_move["warm"],
        "fresh_move_us": per_move["fresh"],
        "switch_us": per_move["fresh"] - per_move["warm"],
    }


def idle_memory(module: GameModule, seats: int, matches: int = 40) -> dict[str, float]:
    """Bytes an idle match holds (no instance) and resident bytes a warm instance adds."""
    pool = GuestPool(module, module.limits.tightened(instances_per_module=1), keep_warm_ms=0)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept = [
        Match.start(pool, default_players(seats), match_id=f"idle-{i}", seed=i) for i in range(matches)
    ]
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    held = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert pool.instance_count == 0
    gc.collect()
    rss_before = rss_bytes()
    guests = [Guest(module, module.limits) for _ in range(20)]
    for guest in guests:
        guest.call(1, {"players": [p.to_json() for p in default_players(seats)], "seed": 1, "next_ref": "x:0"})
    per_instance = (rss_bytes() - rss_before) / len(guests)
    del guests, kept
    return {"idle_match_bytes": held / matches, "warm_instance_rss_bytes": per_instance}


def wat_guest(variant: str) -> bytes:
    """The echo guest of ``tests/wat`` with ``variant``'s ``$on_call`` (as the tests build them)."""
    text = (WAT / "echo_guest.wat").read_text().replace(HOOK, (WAT / f"{variant}.wat").read_text())
    return bytes(wasmtime.wat2wasm(text))


def refusal_latency(seconds: float, limits: Limits, cache: Path) -> dict[str, Any]:
    """16 hostile matches on 4 modules next to 2 honest matches, for ``seconds``."""
    data = wat_guest("hostile_loop_always")
    honest = load_module(wat_guest("slow_step"), limits=limits, cache_dir=cache, name="slow_step")
    hostile = []
    for index in range(4):
        # Four distinct modules: a custom section makes each one's bytes (and sha256) differ.
        tagged = data + bytes([0, 2 + 1, 1, ord("a") + index, 0])
        hostile.append(GuestPool(load_module(tagged, limits=limits, cache_dir=cache, name=f"loop{index}"), limits))
    honest_pool = GuestPool(honest, limits)
    stop = threading.Event()
    refusals: list[float] = []
    quarantined = 0
    honest_moves = honest_failures = 0
    lock = threading.Lock()
    players = [p.to_json() for p in default_players(2)]

    def hostile_match(pool: GuestPool, name: str) -> None:
        nonlocal quarantined
        while not stop.is_set():
            started = time.perf_counter()
            try:
                pool.setup(players, 1, f"{name}:0")
            except ModuleQuarantined:
                with lock:
                    quarantined += 1
                time.sleep(0.01)
                continue
            except GuestError:
                with lock:
                    refusals.append((time.perf_counter() - started) * 1000)

    def honest_match(name: str) -> None:
        nonlocal honest_moves, honest_failures
        match = Match.start(honest_pool, default_players(1), match_id=name, seed=1)
        click = match.actions_for(1)[0]["action"]
        while not stop.is_set():
            try:
                match.submit(1, click)
                with lock:
                    honest_moves += 1
            except GuestError:
                with lock:
                    honest_failures += 1

    threads = [threading.Thread(target=hostile_match, args=(hostile[i % 4], f"h{i}")) for i in range(16)]
    threads += [threading.Thread(target=honest_match, args=(f"ok{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    return {
        "refusals": len(refusals),
        "p50_ms": percentile(refusals, 0.5) if refusals else float("nan"),
        "p99_ms": percentile(refusals, 0.99) if refusals else float("nan"),
        "max_ms": max(refusals) if refusals else float("nan"),
        "quarantined_refusals": quarantined,
        "honest_moves": honest_moves,
        "honest_failures": honest_failures,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="duration of each hostile run")
    parser.add_argument("--dist", type=Path, default=DIST)
    args = parser.parse_args(argv)
    import tempfile

    cache = Path(tempfile.mkdtemp(prefix="tablehost-bench-"))
    modules = {name: load_module((args.dist / f"{name}.wasm").read_bytes(), name=name, cache_dir=cache)
               for name in SEATS if (args.dist / f"{name}.wasm").exists()}
    if not modules:
        print(f"no sample games in {args.dist}: run `make games`", file=sys.stderr)
        return 1
    print("match switch (a fresh instance from the compiled module, then the full state):")
    print(f"  {'game':12s} {'instantiate µs':>15s} {'move, warm µs':>14s} {'move, fresh µs':>15s} "
          f"{'switch µs':>10s}")
    for name, module in modules.items():
        figures = match_switch(module, SEATS[name])
        print(f"  {name:12s} {figures['instantiate_us']:15.0f} {figures['warm_move_us']:14.0f} "
              f"{figures['fresh_move_us']:15.0f} {figures['switch_us']:10.0f}")
    print("idle-match memory (instance dropped) vs a warm instance:")
    for name, module in modules.items():
        figures = idle_memory(module, SEATS[name])
        print(f"  {name:12s} idle match {figures['idle_match_bytes']:9.0f} B   "
              f"warm instance {figures['warm_instance_rss_bytes']:11.0f} B (RSS)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for label, limits in (("quarantine off", replace(DEFAULT_LIMITS, quarantine_after=10**9)),
                          ("default quarantine", DEFAULT_LIMITS)):
        figures = refusal_latency(args.seconds, limits, cache)
        print(f"refusal latency, 16 hostile matches of 4 modules + 2 honest, {label} "
              f"(wall_ms budget {limits.wall_ms} ms, {args.seconds:.0f} s):")
        print(f"  budget refusals {figures['refusals']}: p50 {figures['p50_ms']:.1f} ms, "
              f"p99 {figures['p99_ms']:.1f} ms, max {figures['max_ms']:.1f} ms; "
              f"quarantined refusals {figures['quarantined_refusals']}")
        print(f"  honest 32 M-fuel moves played {figures['honest_moves']}, refused {figures['honest_failures']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
