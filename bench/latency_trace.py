"""Where slow requests wait: a traced ``tablehost serve`` and the analysis of a traced bench run.

``bench/grpc_latency.py --trace DIR`` runs the server through this file (``serve`` mode): it
patches the running server, without changing its behaviour, to record in memory

- every request of ``tablehost.v1``: method, match id, handler start and end
  (``time.perf_counter()``, which on Linux is ``CLOCK_MONOTONIC`` and so comparable with the
  client's clock), the serving thread's CPU;
- every garbage collection: generation, start, end, and the collecting thread's CPU time (the
  pause's own length, which a busy machine does not stretch);
- every SQLite store commit: start, end, entries, and the WAL frames checkpointed so far
  (``nBackfill`` in the ``-shm`` file) before and after: a rise means a checkpoint ran during
  this commit;
- at the end: the types of the tracked objects not frozen at start (what the collector scans)
  and the CPU time of the threads still running;

and writes them to ``DIR/server.json`` when it stops. The bench writes each client call (method,
match id, sent, answered) to ``DIR/client.json``. ``analyse`` mode joins them::

    PYTHONPATH=runtime python3 bench/latency_trace.py analyse DIR [--slow-ms 5]

and prints, for SubmitActions slower than ``--slow-ms`` (client-measured), how the time splits
into before the handler (grpc's receive, the thread pool hand-off, waiting for the interpreter
lock), the handler and after it (serialising the reply, grpc's send, the client's read), and
what overlapped each slow request: a garbage collection, a store commit over 2 ms, a WAL
checkpoint. The tracing costs a few microseconds per request; it is a diagnostic, not a bench
figure.

Two environment variables try other settings without editing the server:
``TABLEHOST_TRACE_GC=700,10,10`` (the garbage collector's thresholds instead of
``server.GC_THRESHOLDS``) and ``TABLEHOST_TRACE_CHECKPOINT=writer`` (SQLite's own checkpoints
inside the commit that crosses 1,000 WAL pages, as before ``store/wal_checkpoint.py``).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def install(out: Path) -> None:
    """Patch the server's request path to record timings; write them to ``out`` at exit."""
    from tablehost.api import interceptors, server
    from tablehost.store import sqlite

    if os.environ.get("TABLEHOST_TRACE_GC"):  # try other thresholds: "700,10,10"
        server.GC_THRESHOLDS = tuple(int(x) for x in os.environ["TABLEHOST_TRACE_GC"].split(","))
    if os.environ.get("TABLEHOST_TRACE_CHECKPOINT") == "writer":  # SQLite's own: inside the commit
        sqlite.WRITER_CHECKPOINT_PAGES = 1000
        sqlite.WalCheckpointer.committed = lambda self: None  # type: ignore[method-assign]

    requests: list[tuple[str, str, float, float, float, int]] = []
    gcs: list[tuple[int, float, float, float]] = []
    commits: list[tuple[float, float, int, int, int]] = []

    original_unary = interceptors.RequestInterceptor._unary

    def traced_unary(self: Any, method: str, behavior: Any, parse: Any) -> Any:
        # The handler gets the request's bytes and parses them itself: its match id is read off
        # the parsed request the behaviour receives, on the same thread.
        seen = threading.local()

        def behavior_seen(request: Any, context: Any) -> Any:
            seen.match_id = getattr(request, "match_id", "")
            return behavior(request, context)

        handle = original_unary(self, method, behavior_seen, parse)

        def traced(data: bytes, context: Any) -> Any:
            seen.match_id = ""
            started, cpu = time.perf_counter(), time.thread_time()
            try:
                return handle(data, context)
            finally:
                requests.append(
                    (method, seen.match_id, started, time.perf_counter(), time.thread_time() - cpu,
                     threading.get_ident())
                )

        return traced

    interceptors.RequestInterceptor._unary = traced_unary  # type: ignore[method-assign]

    gc_started = [0.0, 0.0]

    def gc_hook(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_started[:] = [time.perf_counter(), time.thread_time()]
        else:
            gcs.append((info["generation"], gc_started[0], time.perf_counter(), time.thread_time() - gc_started[1]))

    gc.callbacks.append(gc_hook)

    original_commit = sqlite.SqliteStore._commit_queued

    def wal_bytes(store: Any) -> int:
        """Frames checkpointed so far (``nBackfill`` of the WAL index in the -shm file, native
        byte order at offset 96): it grows when a checkpoint copies frames into the database."""
        try:
            with open(str(store.path) + "-shm", "rb") as shm:
                return int.from_bytes(shm.read(100)[96:100], sys.byteorder)
        except OSError:
            return -1

    def traced_commit(self: Any) -> None:
        entries = len(self._queued)
        before, started = wal_bytes(self), time.perf_counter()
        try:
            original_commit(self)
        finally:
            commits.append((started, time.perf_counter(), entries, before, wal_bytes(self)))

    sqlite.SqliteStore._commit_queued = traced_commit  # type: ignore[method-assign]

    def dump() -> None:
        from collections import Counter

        heap = Counter(type(o).__qualname__ for o in gc.get_objects())  # not the frozen start-up
        names = {t.native_id: t.name for t in threading.enumerate()}
        threads: Counter[str] = Counter()
        for tid in os.listdir("/proc/self/task"):
            try:
                stat = Path(f"/proc/self/task/{tid}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            name = names.get(int(tid), f"native {comm}").rstrip("0123456789").rstrip("_")
            threads[name] += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        out.write_text(json.dumps({"requests": requests, "gcs": gcs, "commits": commits,
                                   "heap": heap.most_common(25), "frozen": gc.get_freeze_count(),
                                   "threads": threads.most_common()}))

    atexit.register(dump)


def analyse(folder: Path, slow_ms: float, rows_shown: int = 40) -> None:
    """Print where the SubmitActions slower than ``slow_ms`` spent their time (see the module docstring)."""
    server = json.loads((folder / "server.json").read_text())
    client = json.loads((folder / "client.json").read_text())
    handled: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for method, match_id, start, end, cpu, _thread in server["requests"]:
        handled.setdefault((method, match_id), []).append((start, end, cpu))
    for spans in handled.values():
        spans.sort()
    gcs = sorted(server["gcs"], key=lambda g: g[1])
    for generation in range(3):
        these = [g for g in gcs if g[0] == generation]
        if these:
            walls = sorted((g[2] - g[1]) * 1e3 for g in these)
            cpus = sorted(g[3] * 1e3 for g in these)
            print(f"generation {generation}: {len(these)} collections, wall ms median {walls[len(walls) // 2]:.2f} "
                  f"max {walls[-1]:.1f} ({sum(w > 5 for w in walls)} over 5); CPU ms median "
                  f"{cpus[len(cpus) // 2]:.2f} max {cpus[-1]:.1f} ({sum(c > 5 for c in cpus)} over 5), "
                  f"total {sum(cpus):.0f}")
    commits = sorted(server["commits"])
    slow_commits = [c for c in commits if (c[1] - c[0]) * 1e3 > 2.0]
    checkpoints = [c for c in commits if c[4] > c[3] >= 0]
    if "heap" in server:
        print(f"tracked objects at the end: {sum(n for _, n in server['heap'])} in the top types "
              f"(frozen at start {server['frozen']}): "
              + ", ".join(f"{name} {n}" for name, n in server["heap"][:15]))
    if "threads" in server:
        print("CPU seconds by thread, whole run: "
              + ", ".join(f"{name} {seconds:.2f}" for name, seconds in server["threads"] if seconds >= 0.01))
    calls = [c for c in client if c[0] == "SubmitAction"]
    print(f"{len(calls)} SubmitActions; {len(gcs)} collections "
          f"({sum(1 for g in gcs if (g[2] - g[1]) > 0.005)} over 5 ms, longest "
          f"{max([(g[2] - g[1]) * 1e3 for g in gcs], default=0):.1f} ms); {len(commits)} commits "
          f"({len(slow_commits)} over 2 ms, longest {max([(c[1] - c[0]) * 1e3 for c in commits], default=0):.1f} ms); "
          f"{len(checkpoints)} commits during which a WAL checkpoint ran "
          f"({', '.join(f'{(c[1] - c[0]) * 1e3:.1f}' for c in checkpoints)} ms)")
    rows = []
    for method, match_id, sent, answered in calls:
        latency = (answered - sent) * 1e3
        if latency <= slow_ms:
            continue
        spans = handled.get((method, match_id), [])
        inside = [s for s in spans if sent <= s[0] and s[1] <= answered]
        if not inside:
            rows.append((latency, None))
            continue
        start, end, cpu = inside[0]
        overlaps = []
        for generation, g0, g1, _cpu in gcs:
            if g0 < answered and g1 > sent:
                overlaps.append(f"gc{generation} {(g1 - g0) * 1e3:.1f}ms")
        for c0, c1, entries, wal0, wal1 in slow_commits:
            if c0 < answered and c1 > sent:
                kind = "checkpoint" if wal1 > wal0 >= 0 else "commit"
                overlaps.append(f"{kind} {(c1 - c0) * 1e3:.1f}ms x{entries}")
        busy = sum(
            1 for key, others in handled.items() for s in others
            if s[0] < answered and s[1] > sent and (key, s) != ((method, match_id), inside[0])
        )
        rows.append((latency, ((start - sent) * 1e3, (end - start) * 1e3, cpu * 1e3,
                               (answered - end) * 1e3, busy, overlaps)))
    rows.sort(key=lambda r: -r[0])
    print(f"{len(rows)} over {slow_ms:g} ms (before handler / handler (its CPU) / after handler, "
          "ms; other requests in the handlers meanwhile; what overlapped)")
    totals = [0.0, 0.0, 0.0]
    explained = 0
    for shown, (latency, parts) in enumerate(rows):
        if shown == rows_shown:
            print(f"  ... {len(rows) - rows_shown} more")
        if parts is None:
            if shown < rows_shown:
                print(f"  {latency:7.2f}  (no server record)")
            continue
        before, handler, cpu, after, busy, overlaps = parts
        totals[0] += before
        totals[1] += handler
        totals[2] += after
        explained += bool(overlaps)
        if shown < rows_shown:
            print(f"  {latency:7.2f} = {before:6.2f} / {handler:6.2f} ({cpu:5.2f}) / {after:6.2f}   "
                  f"{busy:3d} busy  {', '.join(overlaps)}")
    if rows:
        n = len(rows)
        print(f"mean of the slow: before {totals[0] / n:.2f}, handler {totals[1] / n:.2f}, "
              f"after {totals[2] / n:.2f} ms; {explained} of {n} overlapped a collection or a slow commit")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        out = Path(os.environ["TABLEHOST_TRACE_OUT"])
        sys.path.insert(0, str(ROOT / "runtime"))
        install(out)
        from tablehost.cli import main as cli_main

        return cli_main(sys.argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("analyse",))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--slow-ms", type=float, default=5.0)
    parser.add_argument("--rows", type=int, default=40, help="slow requests listed one by one (the slowest)")
    args = parser.parse_args()
    analyse(args.folder, args.slow_ms, args.rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
