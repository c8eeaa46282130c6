"""The interpreter's settings of a process: the garbage collector's for bot games (``play``, ``simulate``
workers, benches), and the server's thread switch interval (:data:`DEFAULT_SWITCH_INTERVAL_MS`).

A bot game's objects die by reference counting as soon as the game is over (its match, table and
record), so the cyclic collector mostly rescans what outlives every game: loaded modules, the
compiled guest, the interpreter's own objects. :func:`tune_for_bot_jobs` collects once, freezes
what exists (never scanned again: :func:`gc.freeze`) and raises the thresholds, as the server
does at start-up (``tablehost.api.server``, thresholds chosen there for short pauses; here for
throughput: nobody waits on a pause).

Measured (random self-play, 60 games, collection CPU time from ``gc.callbacks``, load 6-8, this
machine of 2026-12-01)::

    thresholds                 reversi gc µs/move (collections 0/1/2)   checkers
    (700, 10, 10) default      7.8-10.3  (165/14/1)                      4.2-4.7 (286/26/2)
    freeze + (700, 10, 10)     3.7-3.8   (165/14/1)                      2.6     (286/26/2)
    freeze + (1000, 2, 1000)   4.0-5.5   (90/30/0)                       3.3-3.4 (159/52/0)
    freeze + (10000, 10, 1000) 0         (0/0/0)                         0       (0/0/0)

With the last, a whole 60-move game never holds 10,000 more tracked objects than it freed,
so no collection runs at all; a long game (hearts, spades: 1,000+ moves and their records)
gets a young collection every 10,000 net allocations, about a millisecond each.
"""

from __future__ import annotations

import gc
import threading

BOT_JOB_GC_THRESHOLDS = (10_000, 10, 1_000)
"""``gc.set_threshold`` of a process that plays bot games (see the module docstring for the figures)."""

DEFAULT_SWITCH_INTERVAL_MS = 5.0
"""``serve``'s thread switch interval (``sys.setswitchinterval``), ms: Python's own default.

A thread that wants the interpreter lock back (grpc's intake thread between polls, a request
thread back from a guest call or a store commit) waits at most this long before the holder is
asked to let go. Shorter was tried and not adopted (``bench/grpc_latency.py --levels 100
--loads paced --sync normal --games 6``, 4,578 moves, alternated, load 3-4 from other work):
5 ms gave a p99 of 23.9 / 54.6 / 22.7 ms at 3.23 / 3.39 / 3.27 server CPU ms per move, 1 ms
50.9 / 45.9 / 57.9 ms at 4.19 / 4.13 / 3.58: more forced switches cost CPU, and the queue that
sets the p99 grew with it. On a quiet machine neither won clearly (p99 within each other's
run-to-run spread). ``serve --switch-interval-ms`` is there to try it on other machines."""

_lock = threading.Lock()
_tuned = False


def tune_gc(thresholds: tuple[int, int, int]) -> None:
    """Collect, freeze every object alive now (:func:`gc.freeze`), then ``gc.set_threshold(*thresholds)``.

    Args:
        thresholds: the three generation thresholds (allocations net of deallocations for the
            youngest; collections of the younger generation for the other two).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)


def tune_for_bot_jobs() -> bool:
    """:func:`tune_gc` with :data:`BOT_JOB_GC_THRESHOLDS`, once per process (later calls do nothing:
    a second freeze would keep the first games' garbage cycles forever).

    Call it once the module is loaded and before the games: from ``tablehost play``, each
    ``simulate`` worker, the benches that time host-driven games. Not for the server (its own
    thresholds, chosen for pauses).

    Returns:
        True when this call tuned the collector, False when an earlier one had.
    """
    global _tuned
    with _lock:
        if _tuned:
            return False
        tune_gc(BOT_JOB_GC_THRESHOLDS)
        _tuned = True
        return True
