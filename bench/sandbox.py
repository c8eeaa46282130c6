"""What isolation costs and how refusals behave under hostile load (issue 9).

Prints three figures:

1. **Match switch**: a match whose instance was dropped (another match took its slot, or it
   sat idle past ``keep_warm_ms``) gets a fresh instance from the compiled module and sends the
   full state. Measured per sample game: instantiation alone (µs), and a step from a fresh
   instance with the full state minus a warm step by reference (µs), i.e. the whole switch.
2. **Idle-match memory**: what an idle match holds once its instance is dropped (the host's
   ``Match``: state, history, offers; tracemalloc bytes per match) against what a warm instance
   holds (resident-set growth per instance, bytes).
3. **Refusal latency with hostile neighbours**: 16 matches of 4 modules whose every call loops
   run next to 2 honest matches whose moves take 32 M fuel each (``tests/wat/slow_step.wat``,
   about 30 ms of CPU). *Refusal latency* is the wall-clock time from the host's call into
   the pool until the refusal reaches the caller, whatever refused it: a budget (the guest ran
   until fuel or ``wall_ms`` stopped it), ``module/busy`` (a struggling module already has a
   call in flight, or no run slot came) or ``module/quarantined``. Prints p50/p99/max of every
   refusal and of each kind against the target (``wall_ms`` + 20 ms); budget refusals are split
   into queue wait, run time and the guest thread's CPU share during the run (below 1 when
   other processes take the cores). Also the honest moves' latency (``Match.submit``) and how
   many were refused (must be 0). Run with quarantine off and with the default quarantine;
   ``--compare`` first runs it as before run slots (every call at once, no struggling rule).

Usage: PYTHONPATH=runtime python bench/sandbox.py [--seconds S] [--dist DIR] [--refusals-only] [--compare]
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import statistics
import sys
import threading
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

import structlog
import wasmtime

import tablehost.guest.pool as guest_pool
from tablehost.errors import GuestError
from tablehost.guest import Guest, GuestPool
from tablehost.guest.scheduler import RUN_SLOTS, RunSlots
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


def refusal_latency(
    seconds: float, limits: Limits, cache: Path, run_slots: RunSlots, *, as_before: bool = False
) -> dict[str, Any]:
    """16 hostile matches on 4 modules next to 2 honest matches, for ``seconds``.

    Every hostile call is refused. Its *refusal latency* is the wall-clock time from the
    host's call into the pool (``GuestPool.setup``) until the refusal is raised to the caller,
    whatever refused it: a budget (fuel or ``wall_ms``: the guest ran), ``module/busy`` (a
    struggling module already had a call in flight, or no slot came) or ``module/quarantined``.
    Budget refusals are also split (``CallTiming``): queue wait (thread hop, module slot, run
    slot), run time (instantiation and the crossing until the budget stopped it) and the
    guest thread's CPU share during the run. An honest move's latency is the wall-clock time
    of ``Match.submit`` (the step, the gate, the offers).
    """
    data = wat_guest("hostile_loop_always")
    honest = load_module(wat_guest("slow_step"), limits=limits, cache_dir=cache, name="slow_step")
    hostile = []
    for index in range(4):
        # Four distinct modules: a custom section makes each one's bytes (and sha256) differ.
        tagged = data + bytes([0, 2 + 1, 1, ord("a") + index, 0])
        module = load_module(tagged, limits=limits, cache_dir=cache, name=f"loop{index}")
        hostile.append(GuestPool(module, limits, run_slots=run_slots))
    honest_pool = GuestPool(honest, limits, run_slots=run_slots)
    if as_before:
        for pool in [*hostile, honest_pool]:
            pool._proven = True  # white box: full call slots from the first call, as before
    stop = threading.Event()
    refusals: dict[str, list[float]] = {"budget": [], "busy": [], "quarantined": []}
    budget_timings: list[Any] = []
    honest_latency: list[float] = []
    honest_failures: list[str] = []
    lock = threading.Lock()
    players = [p.to_json() for p in default_players(2)]

    def hostile_match(pool: GuestPool, name: str) -> None:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                pool.setup(players, 1, f"{name}:0")
            except GuestError as exc:
                took = (time.perf_counter() - started) * 1000
                kind = {"module/quarantined": "quarantined", "module/busy": "busy"}.get(exc.code, "budget")
                with lock:
                    refusals[kind].append(took)
                    if kind == "budget":
                        budget_timings.append(exc.timing)  # type: ignore[attr-defined]
                if kind != "budget":
                    time.sleep(0.01)  # a client told to come back later does not spin

    def honest_match(name: str) -> None:
        while True:
            try:
                match = Match.start(honest_pool, default_players(1), match_id=name, seed=1)
                break
            except GuestError as exc:
                with lock:
                    honest_failures.append(exc.code)
        click = match.actions_for(1)[0]["action"]
        while not stop.is_set():
            started = time.perf_counter()
            try:
                match.submit(1, click)
                with lock:
                    honest_latency.append((time.perf_counter() - started) * 1000)
            except GuestError as exc:
                with lock:
                    honest_failures.append(exc.code)

    threads = [threading.Thread(target=hostile_match, args=(hostile[i % 4], f"h{i}")) for i in range(16)]
    threads += [threading.Thread(target=honest_match, args=(f"ok{i}",)) for i in range(2)]
    load_before = os.getloadavg()[0]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    for pool in [*hostile, honest_pool]:
        pool.close()
    every = [value for values in refusals.values() for value in values]
    return {
        "load": (load_before, os.getloadavg()[0]),
        "all": every,
        **refusals,
        "queue_ms": [t.queue_ms for t in budget_timings],
        "run_ms": [t.run_ms for t in budget_timings],
        "cpu_share": [t.cpu_ms / t.run_ms for t in budget_timings if t.run_ms > 0],
        "honest_ms": honest_latency,
        "honest_failures": honest_failures,
    }


def describe(values: list[float], unit: str = "ms") -> str:
    """``n, p50, p99, max`` of ``values`` (``-`` when empty)."""
    if not values:
        return "n 0"
    return (f"n {len(values)}, p50 {percentile(values, 0.5):.1f} {unit}, p99 {percentile(values, 0.99):.1f} {unit}, "
            f"max {max(values):.1f} {unit}")


def print_refusals(label: str, figures: dict[str, Any], limits: Limits, seconds: float) -> None:
    load = figures["load"]
    print(f"refusal latency, 16 hostile matches of 4 looping modules + 2 honest matches, {label} "
          f"({seconds:.0f} s, wall_ms {limits.wall_ms} ms, fuel {limits.fuel_per_call}, "
          f"load average {load[0]:.1f} -> {load[1]:.1f}):")
    print(f"  every refusal:       {describe(figures['all'])}   (target p99 <= {limits.wall_ms + 20} ms)")
    print(f"  by a budget:         {describe(figures['budget'])}")
    print(f"    queue wait:        {describe(figures['queue_ms'])}")
    print(f"    run time:          {describe(figures['run_ms'])}")
    shares = figures["cpu_share"]
    if shares:
        print(f"    CPU share of run:  mean {statistics.mean(shares):.2f}, p1 {percentile(shares, 0.01):.2f}")
    print(f"  module/busy:         {describe(figures['busy'])}")
    print(f"  module/quarantined:  {describe(figures['quarantined'])}")
    failures = figures["honest_failures"]
    print(f"  honest ~30 ms moves: {describe(figures['honest_ms'])}; refused {len(failures)}"
          + (f" ({', '.join(sorted(set(failures)))})" if failures else ""))


def print_switch_and_memory(modules: dict[str, GameModule]) -> None:
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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="duration of each hostile run")
    parser.add_argument("--dist", type=Path, default=DIST)
    parser.add_argument("--refusals-only", action="store_true", help="skip the match-switch and memory figures")
    parser.add_argument("--compare", action="store_true",
                        help="also run the hostile case as before run slots (one slot per call, no struggling rule)")
    args = parser.parse_args(argv)
    import tempfile

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))

    cache = Path(tempfile.mkdtemp(prefix="tablehost-bench-"))
    modules = {name: load_module((args.dist / f"{name}.wasm").read_bytes(), name=name, cache_dir=cache)
               for name in SEATS if (args.dist / f"{name}.wasm").exists()}
    if not modules:
        print(f"no sample games in {args.dist}: run `make games`", file=sys.stderr)
        return 1
    if not args.refusals_only:
        print_switch_and_memory(modules)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; run slots {RUN_SLOTS.slots}")
    runs = [("quarantine off", replace(DEFAULT_LIMITS, quarantine_after=10**9), RUN_SLOTS, None),
            ("default quarantine", DEFAULT_LIMITS, RUN_SLOTS, None)]
    if args.compare:
        # As before run slots: every call runs at once (time-shared by the OS), no struggling rule,
        # full call slots for a new module.
        runs.insert(0, ("as before: no run slots, no struggling rule, quarantine off",
                        replace(DEFAULT_LIMITS, quarantine_after=10**9), RunSlots(10_000), 10**9))
    for label, limits, slots, struggling in runs:
        saved = guest_pool.STRUGGLING_AFTER
        if struggling is not None:
            guest_pool.STRUGGLING_AFTER = struggling
        try:
            figures = refusal_latency(args.seconds, limits, cache, slots, as_before=struggling is not None)
        finally:
            guest_pool.STRUGGLING_AFTER = saved
        print_refusals(label, figures, limits, args.seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
