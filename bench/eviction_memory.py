"""Memory of a ``tablehost serve`` process after many finished matches, with and without eviction.

For each mode (``--evict-after 0``: never evict; ``--evict-after S``: evict after ``S`` seconds)
it starts a fresh server (SQLite, ``--sync normal``), uploads tic-tac-toe, plays ``--matches``
matches to the end in batches of ``--batch`` at once (random offered moves, no pause; the
client of :mod:`bench.grpc_latency`), waits ``S + 2`` seconds, and reads the server's resident
memory (``VmRSS``, and its peak ``VmHWM``, from ``/proc``) and its ``tablehost_matches_in_memory``
gauge; with the server's CPU seconds over the play it gives the CPU milliseconds per move (a
move: one GetView and one SubmitAction), to check that eviction and reloading cost no CPU per
move.

Usage::

    PYTHONPATH=runtime python bench/eviction_memory.py [--matches 1000] [--batch 50]
        [--evict-after 2] [--game tic_tac_toe]

Prints one line per mode: matches, moves, RSS and peak RSS in MiB, matches in memory, evictions,
server CPU ms per move, the mean GetView of the last batch's matches one by one afterwards
(``first_view``: a reload from the store each when evicted, a cached view otherwise), and the
load average (the machine is shared: CPU per move is the figure
least disturbed by other work).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import grpc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import grpc_latency as gl  # the sibling bench: its server and client helpers

from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api._pb import tablehost_pb2_grpc as pb_grpc


def proc_kib(pid: int, field: str) -> int:
    """A ``/proc/PID/status`` memory field (``VmRSS``, ``VmHWM``) in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def gauge(url: str | None, name: str) -> float:
    """The sum of one metric's samples on the server's Prometheus endpoint (0 when absent)."""
    if url is None:
        return 0.0
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


async def play_all(
    address: str, admin: str, module_id: str, matches: int, batch: int
) -> tuple[int, list[pb.CreateMatchResponse]]:
    """Play ``matches`` matches to the end, ``batch`` at once; returns the moves played and the
    last batch's matches."""
    moves: list[float] = []
    responses: list[pb.CreateMatchResponse] = []
    rng = random.Random(1)
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.MatchServiceStub(channel)
        for start in range(0, matches, batch):
            count = min(batch, matches - start)
            created = await gl.create_matches(address, admin, module_id, count)
            responses = [pb.CreateMatchResponse.FromString(c) for c in created]
            await asyncio.gather(*(gl.play_match(stub, r, moves, rng, 0.0) for r in responses))
    return len(moves), responses


async def reload_ms(address: str, responses: list[pb.CreateMatchResponse]) -> float:
    """Mean wall milliseconds of one GetView (spectator) per match, one after another: with the
    matches evicted, each is a reload from the store (replaying its moves through the guest)."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.MatchServiceStub(channel)
        started = time.perf_counter()
        for created in responses:
            request = pb.GetViewRequest(match_id=created.match_id)
            await stub.GetView(request, metadata=gl.auth(created.spectator_token))
    return (time.perf_counter() - started) * 1000.0 / max(len(responses), 1)


def run(mode: str, evict_after: float, matches: int, batch: int, wasm: bytes) -> None:
    with tempfile.TemporaryDirectory(prefix="tablehost-evict-bench-") as folder:
        extra = ("--evict-after", str(evict_after))
        proc, address, admin, metrics = gl.start_server(Path(folder) / "data", "normal", None, 1, extra=extra)
        try:
            module_id = asyncio.run(gl.upload(address, admin, wasm))
            cpu_before = gl.cpu_seconds(proc.pid)
            moves, last = asyncio.run(play_all(address, admin, module_id, matches, batch))
            cpu_ms = (gl.cpu_seconds(proc.pid) - cpu_before) * 1000.0
            time.sleep(evict_after + 2.0 if evict_after else 1.0)
            rss, peak = proc_kib(proc.pid, "VmRSS"), proc_kib(proc.pid, "VmHWM")
            in_memory = gauge(metrics, "tablehost_matches_in_memory ")
            evicted = gauge(metrics, "tablehost_evictions_total")
            view_ms = asyncio.run(reload_ms(address, last))  # a reload each when evicted
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(
        f"{mode:<14} matches={matches} moves={moves} rss={rss / 1024:.1f}MiB peak={peak / 1024:.1f}MiB "
        f"in_memory={in_memory:.0f} evicted={evicted:.0f} srv_cpu={cpu_ms / max(moves, 1):.2f}ms/move "
        f"first_view={view_ms:.2f}ms "
        f"load={os.getloadavg()[0]:.1f}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=1000, help="matches played to the end per mode")
    parser.add_argument("--batch", type=int, default=50, help="matches played at once")
    parser.add_argument("--evict-after", type=float, default=2.0, help="the evicting mode's --evict-after, s")
    parser.add_argument("--game", default="tic_tac_toe", help="a module of sample_games/dist")
    args = parser.parse_args()
    wasm = (gl.ROOT / "sample_games" / "dist" / f"{args.game}.wasm").read_bytes()
    run("no eviction", 0.0, args.matches, args.batch, wasm)
    run(f"evict {args.evict_after:g}s", args.evict_after, args.matches, args.batch, wasm)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
