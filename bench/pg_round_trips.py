"""Round trips, wall time and CPU per move of the PostgreSQL store, counted on the wire.

Plays tic-tac-toe matches one move at a time through ``MatchRegistry.submit`` (no gRPC: the
store's part of a move alone) on a throwaway PostgreSQL cluster (tests/conftest.py), with
libpq's protocol trace on every pooled connection of the store. A round trip is one
``ReadyForQuery`` message from the server (one per simple query, one per extended-protocol
``Sync``): the client waited for the server that many times.

Usage::

    PYTHONPATH=runtime python bench/pg_round_trips.py [--moves 300] [--pg-fsync on|off] [--registries 1|2]

``--registries 2`` submits the moves of every match alternately through two registries on
the database (two "server processes" in one process, each with its own pool and copy of the
match; the views are read through the first): each submit finds its registry's copy one
move behind, so it costs a catch-up (when the NOTIFY was heard: the match is reloaded) or a
refused write and a redo under the match's hold (when it was not): the cost of a match whose
players are served by different processes.

Prints, per move (a move here is one ``submit``; views are read before the timed part):
round trips, what the client sent (simple ``Query`` and extended ``Sync`` messages), the
mean wall time of one ``submit`` and of the store's commits in it (``on_commit``), the CPU
of this process (registry, guest, psycopg) and of the database's processes, and the load
average (the machine is shared: CPU per move is the figure least disturbed by other work).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runtime"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from grpc_latency import tree_cpu_seconds

TRACE_FILES: list[Path] = []
TRACE_HANDLES: list[Any] = []


def traced_connect(trace_dir: Path) -> Any:
    """A ``_Pool.connect`` that turns libpq's trace on for each new connection (one file each)."""
    from psycopg import pq

    from tablehost.store import postgresql

    plain = postgresql._Pool.connect

    def connect(self: Any, *, autocommit: bool = False) -> Any:
        conn = plain(self, autocommit=autocommit)
        path = trace_dir / f"conn{len(TRACE_FILES)}.trace"
        TRACE_FILES.append(path)
        handle = open(path, "w")  # noqa: SIM115 - kept open as long as the connection
        conn.pgconn.trace(handle.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        TRACE_HANDLES.append(handle)  # open as long as the connection may write to it
        return conn

    return connect


def count_messages() -> Counter[str]:
    """``ReadyForQuery`` (from the server), ``Query`` and ``Sync`` (from the client) so far."""
    counts: Counter[str] = Counter()
    for path in TRACE_FILES:
        for line in path.read_text(errors="replace").splitlines():
            parts = line.split("\t")
            if len(parts) >= 3 and parts[2] in ("ReadyForQuery", "Query", "Sync"):
                counts[f"{parts[0]} {parts[2]}"] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=300, help="moves to time (whole games, about)")
    parser.add_argument("--pg-fsync", choices=("on", "off"), default="on", help="the throwaway cluster's fsync")
    parser.add_argument("--registries", type=int, choices=(1, 2), default=1, help="registries sharing the database")
    args = parser.parse_args()

    from conftest import PostgresCluster
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry
    from tablehost.store import postgresql

    cluster = PostgresCluster(fsync=args.pg_fsync == "on")
    registries: list[MatchRegistry] = []
    try:
        url = cluster.new_database()
        with tempfile.TemporaryDirectory() as tmp:
            postgresql._Pool.connect = traced_connect(Path(tmp))  # type: ignore[method-assign]
            registries = [MatchRegistry(Path(tmp) / f"r{k}", store=url) for k in range(args.registries)]
            commits: list[float] = []
            for registry in registries:
                registry.store.on_commit = commits.append
            wasm = (ROOT / "sample_games" / "dist" / "tic_tac_toe.wasm").read_bytes()
            module = registries[0].upload_module(ADMIN, wasm, "tic_tac_toe")
            rng = random.Random(1)
            moves, wall, cpu, db_cpu = 0, 0.0, 0.0, 0.0
            counted: Counter[str] = Counter()
            commits_timed: list[float] = []
            while moves < args.moves:
                created = registries[0].create_match(ADMIN, module.sha256, [("ann", ""), ("bob", "")])
                seats = [[r.authenticate(token) for _, token in created.seats] for r in registries]
                version = 0
                while True:
                    registry = registries[version % len(registries)]
                    viewed = [registries[0].view(p, created.match_id).view for p in seats[0]]
                    while viewed[0].version < version:  # the first has not heard the other's move yet
                        time.sleep(0.001)
                        viewed = [registries[0].view(p, created.match_id).view for p in seats[0]]
                    if viewed[0].game_over:
                        break
                    mover = next(k for k, v in enumerate(viewed) if any(a["intent"] != "undo" for a in v.actions))
                    view = viewed[mover]
                    action = rng.choice([a["action"] for a in view.actions if a["intent"] != "undo"])
                    principal = seats[version % len(registries)][mover]
                    before_msgs, commits[:] = count_messages(), []
                    started_cpu, started_db = time.process_time(), tree_cpu_seconds(cluster.postmaster_pid())
                    started = time.perf_counter()
                    version = registry.submit(principal, created.match_id, action, view.version).view.version
                    wall += time.perf_counter() - started
                    cpu += time.process_time() - started_cpu
                    db_cpu += tree_cpu_seconds(cluster.postmaster_pid()) - started_db
                    counted += count_messages() - before_msgs
                    commits_timed += commits
                    moves += 1
            per = {key: value / moves for key, value in counted.items()}
            print(
                f"PostgreSQL (fsync {args.pg_fsync}), {args.registries} registr{'y' if args.registries == 1 else 'ies'}, "
                f"{moves} moves, load average {os.getloadavg()[0]:.2f}"
            )
            print(
                f"per move: {per.get('B ReadyForQuery', 0):.2f} round trips "
                f"({per.get('F Query', 0):.2f} Query, {per.get('F Sync', 0):.2f} Sync sent); "
                f"submit {1e3 * wall / moves:.2f} ms wall, commits {len(commits_timed) / moves:.2f} "
                f"x {1e3 * sum(commits_timed) / max(1, len(commits_timed)):.2f} ms wall; "
                f"CPU this process {1e3 * cpu / moves:.2f} ms, database {1e3 * db_cpu / moves:.2f} ms"
            )
    finally:
        for registry in registries:
            registry.close()
        cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
