"""SubmitAction latency and throughput of a real ``tablehost serve`` process.

Starts a server on a free loopback port in a fresh data directory, uploads a module
(tic-tac-toe by default), and for each load and concurrency level plays that many matches at
once from one asyncio client process: each match repeatedly fetches the active seat's view
(GetView, untimed) and submits a random offered action with that seat's own token
(SubmitAction, timed from the client: request, guest step, SQLite commit, reply).

Two loads are measured:

- ``saturated``: no pause between moves (a closed loop): shows capacity in moves/s; latency
  is mostly queueing behind the other matches.
- ``paced``: after each reply the match pauses ``--pace-ms`` (uniformly 0.5x to 1.5x) before its
  next move, so ``matches`` matches offer about ``matches * 1000 / pace_ms`` moves/s. The
  default 500 ms is a brisk bot or a very fast human (people think for seconds); 100 matches
  then offer about 200 moves/s, around half of what the server carries saturated on two
  shared cores. The p99 target (under 10 ms at 100 matches) is about this load.

Usage::

    PYTHONPATH=runtime python bench/grpc_latency.py [--levels 1,10,100] [--loads saturated,paced]
        [--pace-ms 500] [--games 3] [--sync full]

Prints one line per load and level: matches, moves, offered moves/s (paced), p50 and p99
SubmitAction latency in ms, moves/s, and the server's CPU use (percent of one core).
The machine is shared: note ``uptime``'s load average with the figures.
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
            if think_s:  # paced matches start spread over one pause, as independent players would
                await asyncio.sleep(think_s * rng.random())
            for game in range(games):
                await play_match(stub, created[number * games + game], latencies, rng, think_s)

        started = time.perf_counter()
        await asyncio.gather(*(lane(n) for n in range(matches)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1e3
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1e3
    return len(latencies), p50, p99, len(latencies) / elapsed


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds used so far by process ``pid`` (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,10,100", help="concurrent matches per run, comma-separated")
    parser.add_argument(
        "--loads", default="saturated,paced", help="saturated, paced or both, comma-separated"
    )
    parser.add_argument("--games", type=int, default=3, help="games played one after another per lane")
    parser.add_argument("--module", default=str(ROOT / "sample_games" / "dist" / "tic_tac_toe.wasm"))
    parser.add_argument(
        "--pace-ms",
        type=float,
        default=500.0,
        help="mean pause of a match between its moves under the paced load",
    )
    parser.add_argument(
        "--sync", choices=("full", "normal"), default="full", help="the server's SQLite sync mode"
    )
    args = parser.parse_args()
    loads = [load.strip() for load in args.loads.split(",")]
    if not set(loads) <= {"saturated", "paced"}:
        parser.error(f"--loads takes saturated and/or paced, got {args.loads!r}")
    with tempfile.TemporaryDirectory() as tmp:
        proc, address, admin = start_server(Path(tmp) / "data", args.sync)
        try:
            module_id = asyncio.run(upload(address, admin, Path(args.module).read_bytes()))
            print(
                f"SubmitAction over gRPC, {Path(args.module).name}, synchronous={args.sync.upper()}, "
                f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, pace {args.pace_ms:g} ms"
            )
            print(
                f"{'load':>9} {'matches':>8} {'moves':>7} {'offered/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
                f"{'moves/s':>8} {'cpu %':>6}"
            )
            for load in loads:
                think_s = args.pace_ms / 1e3 if load == "paced" else 0.0
                for level in (int(x) for x in args.levels.split(",")):
                    cpu_before, started = cpu_seconds(proc.pid), time.perf_counter()
                    moves, p50, p99, rate = asyncio.run(
                        run_level(address, admin, module_id, level, args.games, think_s)
                    )
                    cpu = 100 * (cpu_seconds(proc.pid) - cpu_before) / (time.perf_counter() - started)
                    offered = f"{level / think_s:.0f}" if think_s else "-"
                    print(
                        f"{load:>9} {level:>8} {moves:>7} {offered:>9} {p50:>8.2f} {p99:>8.2f} {rate:>8.0f} "
                        f"{cpu:>6.0f}",
                        flush=True,
                    )
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
