"""SubmitAction latency and throughput of real ``tablehost serve`` processes.

Starts a server (``--processes N`` of them on one address, PostgreSQL only) on a free loopback
port with a fresh store (``--store sqlite``, the default; ``--store postgresql``, a throwaway
cluster made with initdb in a temporary folder, fsync on; or ``--store postgresql://URL`` of an
empty database), uploads a module
(tic-tac-toe by default), and for each load and concurrency level plays that many matches at
once from one asyncio client process: each match repeatedly fetches the active seat's view
(GetView, untimed) and submits a random offered action with that seat's own token
(SubmitAction, timed from the client: request, guest step, store commit, reply). Lanes use
``--channels`` gRPC connections between them (each its own TCP connection, so several server
processes behind one address each get a share), and ``--clients`` client processes.

Two loads are measured:

- ``saturated``: no pause between moves (a closed loop): shows capacity in moves/s; latency
  is mostly queueing behind the other matches.
- ``paced``: after each reply the match pauses ``--pace-ms`` (uniformly 0.5x to 1.5x) before its
  next move, so ``matches`` matches offer about ``matches * 1000 / pace_ms`` moves/s. The
  default 500 ms is a brisk bot or a very fast human (people think for seconds); 100 matches
  then offer about 200 moves/s, around half of what the server carries saturated on two
  shared cores. The p99 target (under 5 ms at 100 matches) is about this load.

Usage::

    PYTHONPATH=runtime python bench/grpc_latency.py [--levels 1,10,100] [--loads saturated,paced]
        [--pace-ms 500] [--games 3] [--sync full] [--store sqlite|postgresql|postgresql://...]
        [--processes N] [--channels C] [--clients K] [--max-workers W] [--switch-interval-ms MS]
        [--trace DIR]

``--trace DIR`` (one serve process, one client process) runs the server through
bench/latency_trace.py and writes every call's times to ``DIR``; ``python3
bench/latency_trace.py analyse DIR`` then says what the SubmitActions over 5 ms waited for.

Prints one line per load and level: matches, moves, offered moves/s (paced), p50 and p99
SubmitAction latency in ms, moves/s, and the CPU use (percent of one core) of the server
processes, of the database's processes (PostgreSQL), and of the clients; then the CPU
milliseconds per move of each (``srv``, ``db``, ``cli``: a move here is one GetView and one
SubmitAction) and the capacity they imply on this machine's cores (``cap/s`` = cores * 1000 /
total CPU ms per move: what saturation would reach with every core busy with this work only);
and how many moves were refused RESOURCE_EXHAUSTED (all of the module's call slots busy) and
retried (counted with one client process). With one serve process, a second line says where
the server's CPU per move went, from its Prometheus counters (``--metrics-port``): the GetView
and SubmitAction handlers (``tablehost_request_cpu_seconds``; the guest's step inside the
latter, ``tablehost_guest_call_cpu_seconds``), and outside the handlers (grpc and its threads,
garbage collection, the background threads: the process's CPU minus the handlers'); the
mean wall time of one store commit (an fsync with ``--sync full``); and the garbage
collector's pauses (every request waits for one): time per move, how many, how many over 5 ms.
The machine is shared: the load average is printed with each line, and CPU per move is the
figure least disturbed by other work (throughput and latency are not).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runtime"))

from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api._pb import tablehost_pb2_grpc as pb_grpc


def start_server(
    data_dir: Path,
    sync: str,
    store: str | None,
    processes: int,
    max_workers: int | None = None,
    extra: tuple[str, ...] = (),
    trace: Path | None = None,
) -> tuple[subprocess.Popen[str], str, str, str | None]:
    """Start ``tablehost serve`` (``extra``: more ``serve`` arguments; ``trace``: through
    bench/latency_trace.py, writing ``trace/server.json``); return the process, its address,
    the admin token and (one process only) the URL of its Prometheus metrics."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), os.environ.get("PYTHONPATH", "")]),
    }
    if trace is not None:
        env["TABLEHOST_TRACE_OUT"] = str(trace / "server.json")
    command = [
        sys.executable,
        *([str(ROOT / "bench" / "latency_trace.py")] if trace is not None else ["-m", "tablehost"]),
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data",
        str(data_dir),
        "--sync",
        sync,
        "--log-level",
        "warning",
        *(["--store", store] if store else []),
        *(["--processes", str(processes)] if processes > 1 else []),
        *(["--max-workers", str(max_workers)] if max_workers else []),
        *(["--metrics-port", "0"] if processes == 1 else []),
        *extra,
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert proc.stdout is not None
    address = proc.stdout.readline().split()[3]
    token_path = proc.stdout.readline().split(": ", 1)[1].strip()
    metrics = proc.stdout.readline().split()[-1] if processes == 1 else None
    return proc, address, Path(token_path).read_text().strip(), metrics


def scrape(url: str | None) -> dict[str, float]:
    """The server's CPU counters now (seconds), summed over labels: ``GetView`` and
    ``SubmitAction`` (handler CPU, ``tablehost_request_cpu_seconds``), ``step`` (guest step CPU,
    ``tablehost_guest_call_cpu_seconds``), ``commit`` (store commits, wall seconds) and
    ``commits``, ``gc`` (garbage collections, wall seconds), ``gcs`` and ``gc_short`` (those of
    5 ms at most); empty without a metrics URL."""
    if url is None:
        return {}
    wanted = {
        'tablehost_request_cpu_seconds_total{method="GetView"}': "GetView",
        'tablehost_request_cpu_seconds_total{method="SubmitAction"}': "SubmitAction",
        "tablehost_store_commit_seconds_sum": "commit",
        "tablehost_store_commit_seconds_count": "commits",
    }
    totals = dict.fromkeys(["GetView", "SubmitAction", "step", "commit", "commits", "gc", "gcs", "gc_short"], 0.0)
    for line in urllib.request.urlopen(url, timeout=10).read().decode().splitlines():
        name, _, value = line.rpartition(" ")
        if name in wanted:
            totals[wanted[name]] += float(value)
        elif name.startswith("tablehost_guest_call_cpu_seconds_total{") and 'op="step"' in name:
            totals["step"] += float(value)
        elif name.startswith("tablehost_gc_pause_seconds_sum{"):
            totals["gc"] += float(value)
        elif name.startswith("tablehost_gc_pause_seconds_bucket{") and 'le="0.005"' in name:
            totals["gc_short"] += float(value)
        elif name.startswith("tablehost_gc_pause_seconds_count{"):
            totals["gcs"] += float(value)
    return totals


def breakdown(before: dict[str, float], after: dict[str, float], moves: int, server_ms: float) -> str:
    """Where the server's CPU per move went (ms): GetView and SubmitAction handlers (the guest's
    step inside the latter), and the rest (grpc, its threads, the background threads)."""
    if not before:
        return ""
    per = {key: 1e3 * (after[key] - before[key]) / max(1, moves) for key in before}
    handlers = per["GetView"] + per["SubmitAction"]
    commits = max(1.0, after["commits"] - before["commits"])
    return (
        f"           server CPU ms/move: GetView {per['GetView']:.2f}, SubmitAction {per['SubmitAction']:.2f} "
        f"(guest step {per['step']:.2f}), outside handlers {server_ms - handlers:.2f}; "
        f"store commit {1e3 * (after['commit'] - before['commit']) / commits:.2f} ms wall each; "
        f"garbage collection {per['gc']:.2f} ms/move, {after['gcs'] - before['gcs']:.0f} pauses "
        f"({after['gcs'] - after['gc_short'] - before['gcs'] + before['gc_short']:.0f} over 5 ms)"
    )


def auth(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


async def play_match(
    stub: pb_grpc.MatchServiceStub,
    created: pb.CreateMatchResponse,
    latencies: list[float],
    rng: random.Random,
    think_s: float,
    refusals: list[float] | None = None,
) -> None:
    """Play one match to the end, timing every SubmitAction (seconds into ``latencies``); a move
    refused with RESOURCE_EXHAUSTED (every call slot of the module busy) goes into ``refusals``
    and is tried again."""
    if refusals is None:
        refusals = []
    tokens = {seat.player_id: seat.token for seat in created.seats}
    view = created.view
    while not view.game_over:
        player = view.active_player_ids[0]
        asked = time.perf_counter()
        view = await stub.GetView(pb.GetViewRequest(match_id=created.match_id), metadata=auth(tokens[player]))
        TRACE.append(("GetView", created.match_id, asked, time.perf_counter()))
        offered = [a for a in view.actions if a.intent != pb.INTENT_UNDO]
        request = pb.SubmitActionRequest(
            match_id=created.match_id, action=rng.choice(offered).action, expected_version=view.version
        )
        started = time.perf_counter()
        try:
            reply = await stub.SubmitAction(request, metadata=auth(tokens[player]))
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise
            refusals.append(time.perf_counter() - started)  # the module's call slots were all busy
            await asyncio.sleep(0.01)
            continue
        latencies.append(time.perf_counter() - started)
        TRACE.append(("SubmitAction", created.match_id, started, started + latencies[-1]))
        view = reply.view
        if think_s:
            await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))


async def create_matches(address: str, admin: str, module_id: str, count: int) -> list[bytes]:
    """Create ``count`` two-seat matches; return each CreateMatchResponse serialised."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.MatchServiceStub(channel)
        seats = [pb.SeatRequest(username="a"), pb.SeatRequest(username="b")]
        request = pb.CreateMatchRequest(module_id=module_id, seats=seats)
        slots = asyncio.Semaphore(4)  # the module's call slots: do not queue setups past them

        async def create() -> pb.CreateMatchResponse:
            async with slots:
                return await stub.CreateMatch(request, metadata=auth(admin))

        created = await asyncio.gather(*(create() for _ in range(count)))
    return [c.SerializeToString() for c in created]


async def play_lanes(
    address: str, created: list[bytes], lanes: list[int], games: int, think_s: float, channels: int
) -> tuple[list[float], float]:
    """Play ``games`` games in each lane of ``lanes`` concurrently over ``channels`` connections;
    return the SubmitAction latencies (seconds) and the elapsed time."""
    opened = [grpc.aio.insecure_channel(address) for _ in range(max(1, min(channels, len(lanes))))]
    stubs = [pb_grpc.MatchServiceStub(channel) for channel in opened]
    latencies: list[float] = []
    refusals: list[float] = []

    async def lane(slot: int, number: int) -> None:
        rng = random.Random(number)
        if think_s:  # paced matches start spread over one pause, as independent players would
            await asyncio.sleep(think_s * rng.random())
        for game in range(games):
            match = pb.CreateMatchResponse.FromString(created[number * games + game])
            await play_match(stubs[slot % len(stubs)], match, latencies, rng, think_s, refusals)

    started = time.perf_counter()
    await asyncio.gather(*(lane(slot, n) for slot, n in enumerate(lanes)))
    elapsed = time.perf_counter() - started
    for channel in opened:
        await channel.close()
    REFUSED.append(len(refusals))
    return latencies, elapsed


def client_process(args: tuple[str, list[bytes], list[int], int, float, int]) -> tuple[list[float], float, float]:
    """One client process's share (multiprocessing); returns latencies, elapsed and its CPU seconds."""
    address, created, lanes, games, think_s, channels = args
    latencies, elapsed = asyncio.run(play_lanes(address, created, lanes, games, think_s, channels))
    return latencies, elapsed, time.process_time()


def run_level(
    address: str,
    admin: str,
    module_id: str,
    matches: int,
    games: int,
    think_s: float,
    channels: int,
    clients: int,
    mark: Callable[[], None] = lambda: None,
) -> tuple[int, float, float, float, float]:
    """Play ``games`` games in each of ``matches`` concurrent lanes, pausing about ``think_s`` seconds
    between a lane's moves, from ``clients`` processes; return moves, p50 ms, p99 ms, moves/s and
    the clients' CPU seconds. ``mark()`` is called once the matches are created, right before play."""
    created = asyncio.run(create_matches(address, admin, module_id, matches * games))
    mark()
    clients = max(1, min(clients, matches))
    shares = [list(range(matches))[k::clients] for k in range(clients)]
    per_client = max(1, channels // clients)
    jobs = [(address, created, share, games, think_s, per_client) for share in shares]
    started = time.perf_counter()
    if clients == 1:
        before = time.process_time()
        latencies, _elapsed = asyncio.run(play_lanes(*jobs[0]))
        client_cpu = time.process_time() - before
    else:
        with multiprocessing.get_context("spawn").Pool(clients) as pool:
            results = pool.map(client_process, jobs)
        latencies = [x for r in results for x in r[0]]
        client_cpu = sum(r[2] for r in results)
    elapsed = time.perf_counter() - started
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1e3
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1e3
    return len(latencies), p50, p99, len(latencies) / elapsed, client_cpu


TRACE: list[tuple[str, str, float, float]] = []
"""Every call of this client process: method, match id, sent and answered (``perf_counter``)."""
REFUSED: list[int] = []
"""SubmitActions refused as RESOURCE_EXHAUSTED and retried, per lane group of this process."""


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds used so far by process ``pid`` (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int | None) -> float:
    """CPU seconds of ``pid`` and its living children (the serve processes, the database's backends)."""
    if pid is None:
        return 0.0
    total = cpu_seconds(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(tree_cpu_seconds(int(child)) for child in children)


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
    parser.add_argument(
        "--store",
        default="sqlite",
        help="sqlite (default), postgresql (a throwaway cluster, fsync on) or postgresql://URL (an empty database)",
    )
    parser.add_argument(
        "--pg-fsync",
        choices=("on", "off"),
        default="on",
        help="the throwaway cluster's fsync (off shows the cost of everything but the disk)",
    )
    parser.add_argument("--processes", type=int, default=1, help="serve processes on one address (PostgreSQL)")
    parser.add_argument("--channels", type=int, default=16, help="gRPC connections the lanes share")
    parser.add_argument("--clients", type=int, default=1, help="client processes the lanes are spread over")
    parser.add_argument("--max-workers", type=int, default=None, help="the server's request threads (serve's default)")
    parser.add_argument(
        "--switch-interval-ms", type=float, default=None,
        help="the server's interpreter switch interval (serve's default; Python's own is 5)",
    )
    parser.add_argument(
        "--trace",
        type=Path,
        default=None,
        help="record every call in this folder (server through bench/latency_trace.py; one client process)",
    )
    args = parser.parse_args()
    loads = [load.strip() for load in args.loads.split(",")]
    if not set(loads) <= {"saturated", "paced"}:
        parser.error(f"--loads takes saturated and/or paced, got {args.loads!r}")
    if args.processes > 1 and args.store == "sqlite":
        parser.error("--processes above 1 needs --store postgresql (SQLite admits one process)")
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        store, db_pid = None, None
        if args.store == "postgresql":
            sys.path.insert(0, str(ROOT / "tests"))
            from conftest import PostgresCluster

            cluster = PostgresCluster(fsync=args.pg_fsync == "on")
            stack.callback(cluster.stop)
            store, db_pid = cluster.new_database(), cluster.postmaster_pid()
        elif args.store.startswith("postgresql://"):
            store = args.store
        if args.trace is not None:
            args.trace.mkdir(parents=True, exist_ok=True)
        proc, address, admin, metrics_url = start_server(
            Path(tmp) / "data", args.sync, store, args.processes, args.max_workers, trace=args.trace,
            extra=() if args.switch_interval_ms is None else ("--switch-interval-ms", str(args.switch_interval_ms)),
        )
        try:
            module_id = asyncio.run(upload(address, admin, Path(args.module).read_bytes()))
            store_name = (
                "SQLite synchronous=" + args.sync.upper()
                if store is None
                else f"PostgreSQL (fsync {args.pg_fsync})"
                if args.store == "postgresql"
                else "PostgreSQL"
            )
            print(
                f"SubmitAction over gRPC, {Path(args.module).name}, {store_name}, {args.processes} serve "
                f"process(es), {args.clients} client process(es), {args.channels} channels, "
                f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, pace {args.pace_ms:g} ms"
            )
            print(
                f"{'load':>9} {'matches':>8} {'moves':>7} {'offered/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
                f"{'moves/s':>8} {'srv cpu%':>8} {'db cpu%':>8} {'cli cpu%':>8} "
                f"{'srv ms/mv':>9} {'db ms/mv':>8} {'cli ms/mv':>9} {'cap/s':>6} {'loadavg':>7}"
            )
            for load in loads:
                think_s = args.pace_ms / 1e3 if load == "paced" else 0.0
                for level in (int(x) for x in args.levels.split(",")):
                    before: list[float] = []

                    counted: list[dict[str, float]] = []

                    def mark(before: list[float] = before, counted: list[dict[str, float]] = counted) -> None:
                        # CPU of the play alone, not of creating the matches
                        counted[:] = [scrape(metrics_url)]
                        before[:] = [tree_cpu_seconds(proc.pid), tree_cpu_seconds(db_pid), time.perf_counter()]

                    moves, p50, p99, rate, client_cpu = run_level(
                        address, admin, module_id, level, args.games, think_s, args.channels, args.clients, mark
                    )
                    server_before, db_before, started = before
                    elapsed = time.perf_counter() - started
                    server_s = tree_cpu_seconds(proc.pid) - server_before
                    where = breakdown(counted[0], scrape(metrics_url), moves, 1e3 * server_s / max(1, moves))
                    db_s = tree_cpu_seconds(db_pid) - db_before
                    server, db = 100 * server_s / elapsed, 100 * db_s / elapsed
                    per_move = [1e3 * x / max(1, moves) for x in (server_s, db_s, client_cpu)]
                    capacity = (os.cpu_count() or 1) * 1e3 / max(1e-9, sum(per_move))
                    offered = f"{level / think_s:.0f}" if think_s else "-"
                    busy = sum(REFUSED)
                    REFUSED.clear()
                    print(
                        f"{load:>9} {level:>8} {moves:>7} {offered:>9} {p50:>8.2f} {p99:>8.2f} {rate:>8.0f} "
                        f"{server:>8.0f} {db:>8.0f} {100 * client_cpu / elapsed:>8.0f} "
                        f"{per_move[0]:>9.2f} {per_move[1]:>8.2f} {per_move[2]:>9.2f} {capacity:>6.0f} "
                        f"{os.getloadavg()[0]:>7.2f}"
                        + (f"  ({busy} refused busy, retried)" if busy else ""),
                        flush=True,
                    )
                    if where:
                        print(where, flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            if args.trace is not None:
                (args.trace / "client.json").write_text(json.dumps(TRACE))
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
