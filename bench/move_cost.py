"""Where a move's time goes below gRPC: the registry, the match, the guest and the store.

Plays tic-tac-toe matches one move at a time through :class:`MatchRegistry` in this process
(GetView's work, then SubmitAction's work, each view turned into its protobuf message, as the
servicer does) with no gRPC in between, and prints per move: wall time, CPU time of this
process, and the store's commit time. Compare with ``bench/grpc_latency.py``'s server CPU per
move to see what gRPC and the thread pool add.

Usage::

    PYTHONPATH=runtime python bench/move_cost.py [--store sqlite|postgresql] [--sync full|normal]
        [--pg-fsync on|off] [--games 60]

``--store postgresql`` makes a throwaway cluster with ``initdb`` (tests/conftest.py).
The machine is shared: note ``uptime``'s load average with the figures.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import structlog

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runtime"))

from tablehost.api import convert
from tablehost.api.auth import ADMIN
from tablehost.api.metrics import Metrics
from tablehost.api.registry import CreatedMatch, MatchRegistry

sys.path.insert(0, str(ROOT / "bench"))
from grpc_latency import tree_cpu_seconds  # noqa: E402 - the bench folder is not a package


def play(registry: MatchRegistry, matches: list[CreatedMatch]) -> int:
    """Play each match to the end with random offered moves; return the moves made."""
    moves = 0
    for number, created in enumerate(matches):
        seats = {player.player_id: registry.authenticate(token) for player, token in created.seats}
        rng = random.Random(number)
        view = created.view
        while not view.game_over:
            principal = seats[view.active_player_ids[0]]
            served = registry.view(principal, created.match_id)
            convert.view_to_proto(served.match_id, served.viewer, served.view, served.score_labels)
            offered = [a["action"] for a in served.view.actions if a["intent"] != "undo"]
            reply = registry.submit(principal, created.match_id, rng.choice(offered), served.view.version)
            convert.view_to_proto(reply.match_id, reply.viewer, reply.view, reply.score_labels)
            view = reply.view
            moves += 1
    return moves


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--sync", choices=("full", "normal"), default="full", help="SQLite's sync mode")
    parser.add_argument("--pg-fsync", choices=("on", "off"), default="on")
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--module", default=str(ROOT / "sample_games" / "dist" / "tic_tac_toe.wasm"))
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        store, db_pid = None, None
        if args.store == "postgresql":
            sys.path.insert(0, str(ROOT / "tests"))
            from conftest import PostgresCluster

            cluster = PostgresCluster(fsync=args.pg_fsync == "on")
            stack.callback(cluster.stop)
            store, db_pid = cluster.new_database(), cluster.postmaster_pid()
        metrics = Metrics()
        registry = MatchRegistry(
            Path(tmp) / "data", synchronous=args.sync.upper(), store=store, metrics=metrics
        )
        stack.callback(registry.close)
        commits: list[float] = []
        module = registry.upload_module(ADMIN, Path(args.module).read_bytes(), "bench")
        matches = [
            registry.create_match(ADMIN, module.sha256, [("a", ""), ("b", "")]) for _ in range(args.games + 5)
        ]
        play(registry, matches[:5])  # warm up: compiled code, pools, prepared statements
        registry.store.on_commit = commits.append
        started, cpu_before, db_before = time.perf_counter(), time.process_time(), tree_cpu_seconds(db_pid)
        moves = play(registry, matches[5:])
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_before
        db_cpu = tree_cpu_seconds(db_pid) - db_before
        name = (
            f"SQLite synchronous={args.sync.upper()}"
            if store is None
            else f"PostgreSQL fsync {args.pg_fsync}"
        )
        print(
            f"{Path(args.module).name}, {name}, {moves} moves, load average {os.getloadavg()[0]:.2f}: "
            f"{wall / moves * 1e3:.3f} ms wall, {cpu / moves * 1e3:.3f} ms CPU per move "
            f"(GetView + SubmitAction work); store commit {sum(commits) / len(commits) * 1e3:.3f} ms mean"
            + (f"; database {db_cpu / moves * 1e3:.3f} ms CPU per move" if db_pid else "")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
