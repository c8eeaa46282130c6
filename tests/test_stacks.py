"""Stacks that cannot crash the host: every entry point survives a recursing module under
``ulimit -s 512`` (a native stack no larger than the default wasm stack cap), and ``simulate``
reports a dead worker instead of hanging (issue 9, "Stacks")."""

from __future__ import annotations

import multiprocessing
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from fixtures_guest import PLAYERS, guest_wasm
from tablehost._stacks import current_stack_bytes, on_big_stack, stack_bytes_for
from tablehost.guest import GuestPool
from tablehost.limits import Limits
from tablehost.match import Match, PlayerInfo
from tablehost.module import load_module
from tablehost.rng import Rng
from tablehost.simulate import GameOutcome, run_games

ROOT = Path(__file__).resolve().parents[1]
SIGSEGV_EXIT = 128 + signal.SIGSEGV


def _run_small_stack(args: list[str], tmp_path: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run ``python -m tablehost ARGS`` with ``ulimit -s 512`` (the soft and hard native stack limit)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), os.environ.get("PYTHONPATH", "")]),
           "TABLEHOST_CACHE_DIR": str(tmp_path / "cache")}
    command = " ".join(shlex.quote(part) for part in [sys.executable, "-m", "tablehost", *args])
    return subprocess.run(
        ["bash", "-c", f"ulimit -s 512 && exec {command}"],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path, check=False,
    )


@pytest.fixture
def recursing(tmp_path: Path) -> Path:
    path = tmp_path / "recurse.wasm"
    path.write_bytes(guest_wasm("hostile_recurse_always"))
    return path


def _assert_survived(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode not in (SIGSEGV_EXIT, -signal.SIGSEGV), result.stderr[-2000:]
    assert result.returncode in (1, 2), (result.returncode, result.stdout[-2000:], result.stderr[-2000:])


def test_play_survives_a_recursing_module_under_a_512_kib_native_stack(tmp_path: Path, recursing: Path) -> None:
    result = _run_small_stack(["play", str(recursing), "--seed", "1", "--quiet"], tmp_path)
    _assert_survived(result)
    assert "stack budget" in result.stderr


def test_check_survives_a_recursing_module_under_a_512_kib_native_stack(tmp_path: Path, recursing: Path) -> None:
    result = _run_small_stack(["check", str(recursing), "--games", "1"], tmp_path)
    _assert_survived(result)
    assert "stack" in result.stdout + result.stderr


def test_simulate_with_workers_survives_and_reports_seeds(tmp_path: Path, recursing: Path) -> None:
    result = _run_small_stack(["simulate", str(recursing), "--games", "3", "--workers", "2", "--seed", "5"], tmp_path)
    _assert_survived(result)
    assert "failures: 3" in result.stdout and "seed" in result.stdout


def test_replay_survives_a_recursing_step_under_a_512_kib_native_stack(tmp_path: Path) -> None:
    module_file = tmp_path / "recurse_step.wasm"
    module_file.write_bytes(guest_wasm("hostile_recurse_offered"))  # setup offers a move; step recurses
    module = load_module(module_file.read_bytes(), cache_dir=tmp_path / "cache")
    match = Match.start(GuestPool(module), [PlayerInfo(**p) for p in PLAYERS], match_id="m", seed=3,
                        module_sha256=module.sha256)
    record = match.record()
    record["moves"] = [{"seq": 1, "player_id": 1, "action": {"type": "space_click", "space_id": "a"},
                        "view_action": None, "seed": 9, "patches": [], "rng_used": False, "allow_undo": False,
                        "picked": False, "undone": False, "undo_seq": None, "at": record["created_at"],
                        "outcome": record["setup"]["outcome"]}]
    (tmp_path / "record.json").write_bytes(orjson.dumps(record))

    result = _run_small_stack(["replay", "record.json", "--verify", "--module", str(module_file)], tmp_path)

    _assert_survived(result)
    assert "stack" in result.stdout + result.stderr


def test_serve_and_demo_survive_a_recursing_upload_under_a_512_kib_native_stack(
    tmp_path: Path, recursing: Path
) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    shutil.copy(recursing, dist / "a_recurse.wasm")  # played first: its matches cannot start
    tic_tac_toe = ROOT / "sample_games" / "dist" / "tic_tac_toe.wasm"
    if not tic_tac_toe.exists():
        pytest.skip("sample games are not built (make games)")
    shutil.copy(tic_tac_toe, dist / "tic_tac_toe.wasm")

    result = _run_small_stack(["demo", "--dist", str(dist), "--data", str(tmp_path / "data")], tmp_path)

    _assert_survived(result)  # the demo fails (one module cannot start) but nothing crashed
    assert "a_recurse" in result.stdout and "FAILED" in result.stdout
    assert "tic_tac_toe" in result.stdout and "replay verified" in result.stdout, result.stdout


def test_guest_code_runs_on_a_thread_with_a_known_big_stack() -> None:
    seen: list[int] = []
    on_big_stack(512 * 1024, lambda: seen.append(current_stack_bytes()))
    assert seen == [stack_bytes_for(512 * 1024)] and current_stack_bytes() == 0
    with pytest.raises(ZeroDivisionError):
        on_big_stack(512 * 1024, lambda: 1 // 0)


def test_simulate_reports_a_killed_worker_with_the_seeds_in_flight(tmp_path: Path) -> None:
    module_file = tmp_path / "loop.wasm"
    module_file.write_bytes(guest_wasm("hostile_loop_always"))  # every setup runs out of its budget
    # Each setup loops for 500 ms of CPU (fuel is no limit here), so 24 games keep two workers busy
    # for about 6 s: games are surely in flight when a worker is killed, on a quiet or busy machine.
    limits = Limits(wall_ms=500, fuel_per_call=10**15, quarantine_after=1000)
    outcomes: list[GameOutcome] = []

    def run() -> None:
        outcomes.extend(run_games(module_file, ["random", "random"], 7, 24, workers=2, limits=limits))

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    deadline = time.monotonic() + 60
    while len(multiprocessing.active_children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(2.0)  # the workers import, load the module and start games
    os.kill(multiprocessing.active_children()[0].pid or 0, signal.SIGKILL)
    runner.join(timeout=240)

    assert not runner.is_alive(), "simulate hung after a worker died"
    rng = Rng(7)
    assert sorted((o.index, o.seed) for o in outcomes) == [(i, rng.next_u64()) for i in range(24)]
    assert all(o.error for o in outcomes)  # every game of this module fails; none vanished
    assert any("simulate/worker_died" in (o.error or "") for o in outcomes)


def test_serve_keeps_serving_after_a_submit_action_that_recurses_under_a_512_kib_stack(tmp_path: Path) -> None:
    from tablehost.client import ApiError, TablehostClient

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), os.environ.get("PYTHONPATH", "")])}
    command = " ".join(shlex.quote(p) for p in [sys.executable, "-m", "tablehost", "serve", "--listen",
                                                 "127.0.0.1:0", "--data", str(tmp_path / "data")])
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(["bash", "-c", f"ulimit -s 512 && exec {command}"], stdout=subprocess.PIPE,
                              stderr=log, text=True, env=env)
    try:
        assert server.stdout is not None
        address = server.stdout.readline().split()[3]
        token = Path(server.stdout.readline().split(": ", 1)[1].strip()).read_text().strip()
        admin = TablehostClient(address, token, timeout_s=30)
        module = admin.upload_module(guest_wasm("hostile_recurse_offered"), "recurse")
        created = admin.create_match(module["module_id"], ["ann", "bob"])
        seat = TablehostClient(address, created["seats"][0]["token"], timeout_s=30)
        view = seat.view(created["match_id"])

        with pytest.raises(ApiError) as refused:
            seat.submit(created["match_id"], view["actions"][0]["action"], view["version"])

        # A player is told the kind of failure and a log reference; the budget is in the log.
        assert refused.value.code == "guest/budget" and "log ref" in refused.value.details
        assert server.poll() is None, "the server died"
        assert seat.view(created["match_id"])["version"] == view["version"]  # still serving, unchanged
        assert [m["name"] for m in admin.list_modules()] == ["recurse"]
        admin.close()
        seat.close()
    finally:
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=30)
        assert server.stdout is not None
        server.stdout.close()
        log.close()
    assert code == 0
