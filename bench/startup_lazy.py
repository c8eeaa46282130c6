"""Startup of a ``tablehost serve`` process over a big store: time, CPU, memory, matches loaded.

Fills one SQLite data directory in this process (:class:`~tablehost.api.registry.MatchRegistry`,
tic-tac-toe) with ``--matches`` matches of four kinds: finished (random offered moves to the end),
idle (two moves, untimed, nobody to move for), waiting (one open seat) and timed (a running
clock, a 1 h main time). Then, for each ``--runtime`` (a folder holding the ``tablehost``
package: this tree's ``runtime`` by default, or an older tree extracted with ``git archive
COMMIT runtime | tar -x -C DIR`` to compare), it starts ``tablehost serve`` on a copy of that
directory and measures until the server prints its address (it serves from then on):

- ``start``: wall seconds from the process start (the Python interpreter and imports included);
- ``cpu``: the server's CPU seconds at that point (user + system; the figure least disturbed by
  the other work on a shared machine);
- ``rss``: its resident memory then (``VmRSS``, MiB), and again after the checks below;
- ``in_memory``: its ``tablehost_matches_in_memory`` gauge (started matches held in memory);

then checks that it serves: ListMatches lists every match, and the spectator view of one match
of each kind answers (a finished match's view is its final view), with the wall milliseconds of
those first views (a lazily loaded match is loaded then).

Usage::

    PYTHONPATH=runtime python bench/startup_lazy.py [--matches 2000] [--runtime DIR ...]

Prints one line per runtime with the figures above and the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runtime"))

from tablehost.api.auth import ADMIN, Principal
from tablehost.api.registry import MatchRegistry
from tablehost.client import TablehostClient
from tablehost.clocks import TimeControl
from tablehost.logs import configure as configure_logs

KINDS = ("finished", "idle", "waiting", "timed")


def shares(matches: int) -> dict[str, int]:
    """How many matches of each kind: 85% finished, 10% idle, 4% waiting, the rest timed."""
    finished, idle, waiting = matches * 85 // 100, matches * 10 // 100, matches * 4 // 100
    return {"finished": finished, "idle": idle, "waiting": waiting, "timed": matches - finished - idle - waiting}


def fill(data_dir: Path, matches: int, wasm: bytes) -> dict[str, list[tuple[str, str]]]:
    """Store ``matches`` matches in ``data_dir``; returns ``(match_id, spectator_token)`` per kind."""
    reg = MatchRegistry(data_dir, synchronous="NORMAL", evict_after_s=0)
    rng = random.Random(1)
    made: dict[str, list[tuple[str, str]]] = {kind: [] for kind in KINDS}
    try:
        module = reg.upload_module(ADMIN, wasm, "tic_tac_toe").sha256
        for kind, count in shares(matches).items():
            for _ in range(count):
                seats = [("ann", ""), ("", "", True)] if kind == "waiting" else [("ann", ""), ("bob", "")]
                control = TimeControl(main_ms=3_600_000, on_timeout="forfeit") if kind == "timed" else None
                created = reg.create_match(ADMIN, module, seats, time_control=control)
                match_id = created.match_id
                moves = {"finished": 99, "idle": 2}.get(kind, 0)
                for _ in range(moves):
                    spectator = reg.view(Principal("spectator", match_id), match_id).view
                    if spectator.game_over:
                        break
                    seat = Principal("seat", match_id, spectator.active_player_ids[0])
                    view = reg.view(seat, match_id).view
                    reg.submit(seat, match_id, rng.choice(view.actions)["action"], view.version)
                made[kind].append((match_id, created.spectator_token))
                reg.evict_idle()  # keeps this filling process small
    finally:
        reg.close()
    return made


def proc_kib(pid: int, field: str) -> int:
    """A ``/proc/PID/status`` memory field (``VmRSS``) in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds used so far by process ``pid`` (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def gauge(url: str, name: str) -> float:
    """The sum of one metric's samples on the server's Prometheus endpoint."""
    text = urllib.request.urlopen(url, timeout=30).read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def measure(runtime: Path, source: Path, made: dict[str, list[tuple[str, str]]], total: int) -> None:
    """Start a server with ``runtime`` on a copy of ``source`` and print its startup figures."""
    with tempfile.TemporaryDirectory(prefix="tablehost-startup-bench-") as folder:
        data_dir = Path(folder) / "data"
        shutil.copytree(source, data_dir)
        env = {**os.environ, "PYTHONPATH": str(runtime)}
        command = [sys.executable, "-m", "tablehost", "serve", "--listen", "127.0.0.1:0", "--data", str(data_dir),
                   "--sync", "normal", "--log-level", "warning", "--metrics-port", "0"]
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        try:
            assert proc.stdout is not None
            address = proc.stdout.readline().split()[3]
            start_s = time.perf_counter() - started
            cpu = cpu_seconds(proc.pid)
            rss = proc_kib(proc.pid, "VmRSS")
            token = Path(proc.stdout.readline().split(": ", 1)[1].strip()).read_text().strip()
            metrics = proc.stdout.readline().split()[-1]
            in_memory = gauge(metrics, "tablehost_matches_in_memory ")
            with TablehostClient(address, token) as admin:
                listed = len(admin.list_matches())
            first_ms = []
            for kind in KINDS:
                match_id, spectator = made[kind][0]
                with TablehostClient(address, spectator) as client:
                    begun = time.perf_counter()
                    client.view(match_id)
                    first_ms.append(f"{kind}={(time.perf_counter() - begun) * 1000:.1f}")
            rss_after = proc_kib(proc.pid, "VmRSS")
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    print(
        f"{runtime!s:<40} matches={total} start={start_s:.2f}s cpu={cpu:.2f}s rss={rss / 1024:.1f}MiB "
        f"in_memory={in_memory:.0f} listed={listed} first_view_ms[{' '.join(first_ms)}] "
        f"rss_after={rss_after / 1024:.1f}MiB load={os.getloadavg()[0]:.1f}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=2000, help="stored matches")
    parser.add_argument("--runtime", type=Path, action="append", help="a folder with the tablehost package")
    args = parser.parse_args()
    configure_logs(level="warning")  # the filling registry's info lines are not the figures
    wasm = (ROOT / "sample_games" / "dist" / "tic_tac_toe.wasm").read_bytes()
    with tempfile.TemporaryDirectory(prefix="tablehost-startup-fill-") as folder:
        source = Path(folder) / "data"
        begun = time.perf_counter()
        made = fill(source, args.matches, wasm)
        print(f"filled {args.matches} matches {shares(args.matches)} in {time.perf_counter() - begun:.0f}s",
              flush=True)
        for runtime in args.runtime or [ROOT / "runtime"]:
            measure(runtime.resolve(), source, made, args.matches)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
