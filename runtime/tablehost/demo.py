"""``tablehost demo``: the whole product end to end on the sample games.

It starts ``tablehost serve`` as a child process on a free loopback port with its own data
directory, uploads every module in ``sample_games/dist``, plays bot matches of each over gRPC
(each bot holding only its own seat token), prints the results, fetches each match's record
and verifies it by replay in a fresh guest, then stops the server.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tablehost.cli_remote import run_bots
from tablehost.client import ApiError, TablehostClient
from tablehost.guest import GuestPool
from tablehost.module import load_module
from tablehost.record import parse_record, replay

DEMO_SEATS_MAX = 3
"""The demo seats each game's minimum player count, raised towards its maximum up to this many
(the counts come from each module's metadata, not from the host)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """Start ``tablehost serve`` on 127.0.0.1:``port``; its log goes to ``data_dir/server.log``."""
    log = (data_dir / "server.log").open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "tablehost", "serve", "--listen", f"127.0.0.1:{port}", "--data", str(data_dir)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def wait_for_admin_token(data_dir: Path, server: subprocess.Popen[bytes], timeout_s: float = 30.0) -> str:
    """Wait until the server wrote its admin token; raise RuntimeError if it died or timed out."""
    path = data_dir / "admin_token"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}; see {data_dir / 'server.log'}")
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise RuntimeError(f"the server did not start within {timeout_s} s; see {data_dir / 'server.log'}")


def describe_result(view: dict[str, Any]) -> str:
    """The result line of :func:`tablehost.cli.describe_result` for a final view (its ``result``),
    its winners named by the view's usernames."""
    from tablehost.cli import describe_result as describe
    from tablehost.cli_remote import usernames_by_seat

    return describe(view["result"], usernames_by_seat(view["state"]["players"]))


def play_match(address: str, admin: TablehostClient, module: dict[str, Any], seats: int, seed: int) -> dict[str, Any]:
    """Create a match of ``module`` and let one random bot per seat play it to the end."""
    created = admin.create_match(module["module_id"], [f"bot{i + 1}" for i in range(seats)])
    finals = run_bots(address, created["match_id"], [s["token"] for s in created["seats"]], seed)
    return {"match_id": created["match_id"], "final": finals[0]}


def run_demo(dist: Path, data_dir: Path | None = None, seed: int = 1) -> int:
    """Run the demo; returns 0 when every match ended and every record verified, 2 when ``dist``
    holds no ``.wasm`` module, else 1."""
    modules = sorted(dist.glob("*.wasm"))
    if not modules:
        print(f"tablehost: no .wasm modules in {dist.resolve()}: run the demo from the repository's root, "
              f"pass --dist DIR, or build the games (`make games`)", file=sys.stderr)
        return 2  # bad input: the folder, not a failed match
    owned_tmp = data_dir is None
    data = Path(tempfile.mkdtemp(prefix="tablehost-demo-")) if data_dir is None else data_dir
    data.mkdir(parents=True, exist_ok=True)
    port = free_port()
    address = f"127.0.0.1:{port}"
    print(f"starting tablehost serve on {address} (data {data})", flush=True)
    server = start_server(data, port)
    failures = 0
    try:
        admin = TablehostClient(address, wait_for_admin_token(data, server))
        admin.wait_ready()
        for path in modules:
            name = path.stem
            uploaded = admin.upload_module(path.read_bytes(), name=name)
            metadata = uploaded["metadata"]
            seats = max(metadata["min_players"], min(metadata["max_players"], DEMO_SEATS_MAX))
            started = time.perf_counter()
            try:
                played = play_match(address, admin, uploaded, seats, seed)
            except ApiError as exc:
                print(f"{name:12s} FAILED over gRPC: {exc}")
                failures += 1
                continue
            seconds = time.perf_counter() - started
            final = played["final"]
            points = {s: v.get("public_points") for s, v in sorted(final.get("scores", {}).items())}
            record = parse_record(admin.record(played["match_id"]))
            module = load_module(path.read_bytes(), name=name)
            verdict = replay(record, GuestPool(module, module.limits.for_replay()))  # fuel decides
            ok = final.get("game_over") and verdict.ok
            failures += 0 if ok else 1
            print(
                f"{name:12s} {seats} bots  {final.get('version', 0):4d} versions  {seconds:6.2f} s  "
                f"scores {points}  replay {'verified' if verdict.ok else 'MISMATCH: ' + verdict.detail}"
            )
            if final.get("result"):
                print(f"{'':12s} {describe_result(final)}")
        admin.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        print("server stopped")
    if owned_tmp and failures == 0:
        import shutil

        shutil.rmtree(data, ignore_errors=True)
    print("demo finished: all matches ended and replayed exactly" if failures == 0 else f"{failures} failed")
    return 0 if failures == 0 else 1
