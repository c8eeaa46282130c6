"""SubmitAction latency and throughput of a real ``tablehost serve`` process.

Starts a server on a free loopback port in a fresh data directory, uploads a module
(tic-tac-toe by default), and for each concurrency level plays that many matches at once
from one asyncio client process: each match repeatedly fetches the active seat's view
(GetView, untimed) and submits a random offered action with that seat's own token
(SubmitAction, timed from the client: request, guest step, SQLite commit, reply).

Usage::

    PYTHONPATH=runtime python bench/grpc_latency.py [--levels 1,10,100] [--games 3] [--sync full]

Prints one line per level: matches, moves, p50 and p99 SubmitAction latency in ms, moves/s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runtime"))

from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api._pb import tablehost_pb2_grpc as pb_grpc


def start_server(data_dir: Path, sync: str) -> tuple[subprocess.Popen[str], str, str]:
    """Start ``tablehost serve``; return the process, its address and the admin token."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), os.environ.get("PYTHONPATH", "")]),
    }
    command = [
        sys.executable,
        "-m",
        "tablehost",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data",
        str(data_dir),
        "--sync",
        sync,
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert proc.stdout is not None
    address = proc.stdout.readline().split()[3]
    token_path = proc.stdout.readline().split(": ", 1)[1].strip()
    return proc, address, Path(token_path).read_text().strip()


def auth(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


async def play_match(
    stub: pb_grpc.MatchServiceStub,
    created: pb.CreateMatchResponse,
    latencies: list[float],
    rng: random.Random,
    think_s: float,
) -> None:
    """Play one match to the end, timing every SubmitAction (seconds into ``latencies``)."""
    tokens = {seat.player_id: seat.token for seat in created.seats}
    view = created.view
    while not view.game_over:
        player = view.active_player_ids[0]
        view = await stub.GetView(pb.GetViewRequest(match_id=created.match_id), metadata=auth(tokens[player]))
        offered = [a for a in view.actions if a.intent != pb.INTENT_UNDO]
        request = pb.SubmitActionRequest(
            match_id=created.match_id, action=rng.choice(offered).action, expected_version=view.version
        )
        started = time.perf_counter()
        reply = await stub.SubmitAction(request, metadata=auth(tokens[player]))
        latencies.append(time.perf_counter() - started)
        view = reply.view
        if think_s:
            await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))


async def run_level(
    address: str, admin: str, module_id: str, matches: int, games: int, think_s: float
) -> tuple[int, float, float, float]:
    """Play ``games`` games in each of ``matches`` concurrent lanes, pausing about ``think_s`` seconds
    between a lane's moves; return moves, p50 ms, p99 ms, moves/s."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.MatchServiceStub(channel)
        seats = [pb.SeatRequest(username="a"), pb.SeatRequest(username="b")]
        created = [
            await stub.CreateMatch(
                pb.CreateMatchRequest(module_id=module_id, seats=seats), metadata=auth(admin)
            )
            for _ in range(matches * games)
        ]
        latencies: list[float] = []

        async def lane(number: int) -> None:
            rng = random.Random(number)
            for game in range(games):
                await play_match(stub, created[number * games + game], latencies, rng, think_s)

        started = time.perf_counter()
        await asyncio.gather(*(lane(n) for n in range(matches)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1e3
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1e3
    return len(latencies), p50, p99, len(latencies) / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,10,100", help="concurrent matches per run, comma-separated")
    parser.add_argument("--games", type=int, default=3, help="games played one after another per lane")
    parser.add_argument("--module", default=str(ROOT / "sample_games" / "dist" / "tic_tac_toe.wasm"))
    parser.add_argument(
        "--think-ms",
        type=float,
        default=0.0,
        help="mean pause of a match between its moves (0: closed loop, the server saturated)",
    )
    parser.add_argument(
        "--sync", choices=("full", "normal"), default="full", help="the server's SQLite sync mode"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, address, admin = start_server(Path(tmp) / "data", args.sync)
        try:
            module_id = asyncio.run(upload(address, admin, Path(args.module).read_bytes()))
            print(
                f"SubmitAction over gRPC, {Path(args.module).name}, synchronous={args.sync.upper()}, "
                f"{os.cpu_count()} cores, think {args.think_ms:g} ms"
            )
            print(f"{'matches':>8} {'moves':>7} {'p50 ms':>8} {'p99 ms':>8} {'moves/s':>9}")
            for level in (int(x) for x in args.levels.split(",")):
                moves, p50, p99, rate = asyncio.run(
                    run_level(address, admin, module_id, level, args.games, args.think_ms / 1e3)
                )
                print(f"{level:>8} {moves:>7} {p50:>8.2f} {p99:>8.2f} {rate:>9.0f}", flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    return 0


async def upload(address: str, admin: str, wasm: bytes) -> str:
    """Upload the module; return its id."""
    async with grpc.aio.insecure_channel(address) as channel:
        module = await pb_grpc.ModuleServiceStub(channel).UploadModule(
            pb.UploadModuleRequest(wasm=wasm, name="bench"), metadata=auth(admin)
        )
    return module.module_id


if __name__ == "__main__":
    raise SystemExit(main())
