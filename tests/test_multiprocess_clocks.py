"""Joins and clocks across two ``tablehost serve`` processes on one PostgreSQL database.

Every process may serve every match, so the lobby and the clocks must not depend on which
process holds a match in memory:

- joins racing through both processes take distinct seats, and exactly one starts the game;
- both processes show a seat the same time, charged from the stored clocks;
- a timeout is applied once (one ``end`` row in the journal), at the right time, to the right
  seat, even by a process whose in-memory copy of the match was stale;
- after a SIGKILL of the process that ran the match, the other one times the seat out on time
  without any request reaching it (it takes in matches made elsewhere).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest

from tablehost.client import ApiError
from test_e2e_server import ServerProcess, module_path

pytestmark = pytest.mark.e2e

MAIN_MS = 5000
"""Each seat's main time in these matches (room for a loaded machine before the timeouts)."""


def journal_kinds(postgres_url: str, match_id: str) -> list[str]:
    """The journal entry kinds of ``match_id`` in version order, read from the database itself."""
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(
            "SELECT kind FROM moves WHERE match_id = %s ORDER BY version", (match_id,)
        ).fetchall()
    return [row[0] for row in rows]


def view_at(client: Any, match_id: str, version: int) -> dict[str, Any]:
    """The view once this process heard of ``version`` (a move made through the other process
    reaches it by NOTIFY, a few ms later)."""
    deadline = time.monotonic() + 5
    view = client.view(match_id)
    while view["version"] < version and time.monotonic() < deadline:
        time.sleep(0.01)
        view = client.view(match_id)
    assert view["version"] >= version, f"version {version} not heard of within 5 s: {view['version']}"
    return view


def upload_to_both(first: ServerProcess, second: ServerProcess) -> str:
    """Upload tic-tac-toe through both processes; return its module id.

    Each process compiles a module into its own data directory's cache the first time it needs
    it: seconds on a loaded machine. Done here, before any clock runs, so the first request
    about a timed match in either process costs milliseconds, not a seat's time (that wait made
    these tests time a seat out before it could move, 3 runs in 20 under load).
    """
    ids = []
    for server in (first, second):
        with server.client() as admin:
            ids.append(
                admin.upload_module(module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")["module_id"]
            )
    assert ids[0] == ids[1]
    return str(ids[0])


def clocks_of(view: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {c["player_id"]: c for c in view["clocks"]}


def test_joins_race_through_both_processes_and_a_timeout_fires_once(
    tmp_path: Path, postgres_url: str
) -> None:
    first = ServerProcess(tmp_path / "first", ("--store", postgres_url))
    second = ServerProcess(tmp_path / "second", ("--store", postgres_url))
    try:
        module_id = upload_to_both(first, second)
        with first.client() as admin:
            control = {"main_ms": MAIN_MS, "on_timeout": "forfeit"}
            created = admin.create_match(module_id, ["", ""], open_seats=[1, 2], time_control=control)
        match_id, invite = created["match_id"], created["spectator_token"]

        # Four joins for two seats, two through each process, released at once.
        barrier = threading.Barrier(4)
        joined: list[dict[str, Any]] = []
        refused: list[ApiError] = []

        def join(server: ServerProcess, name: str) -> None:
            with server.client(invite) as client:
                barrier.wait()
                try:
                    joined.append(client.join(match_id, name))
                except ApiError as exc:
                    refused.append(exc)

        threads = [
            threading.Thread(target=join, args=(server, name))
            for server, name in ((first, "ann"), (second, "bob"), (first, "cid"), (second, "dee"))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sorted(seat["player_id"] for seat in joined) == [1, 2]
        assert sorted(seat["status"] for seat in joined) == ["active", "waiting"]
        assert [exc.status for exc in refused] == [grpc.StatusCode.FAILED_PRECONDITION] * 2
        tokens = {seat["player_id"]: seat["token"] for seat in joined}

        # Seat 1 moves through the first process, seat 2 through the second: the clocks each
        # process shows are the stored ones (a stopped clock reads the same everywhere).
        with first.client(tokens[1]) as one_first, second.client(tokens[2]) as two_second:
            view = one_first.view(match_id)
            one_first.submit(match_id, view["actions"][0]["action"], view["version"])
            view = view_at(two_second, match_id, 1)
            moved = two_second.submit(match_id, view["actions"][0]["action"], view["version"])
            seat_one_left = clocks_of(moved)[1]["remaining_ms"]
            with second.client(tokens[1]) as one_second:
                assert clocks_of(one_second.view(match_id))[1]["running"]
            views = [view_at(one_first, match_id, 2), two_second.view(match_id)]
        stopped = [clocks_of(v)[2] for v in views]
        assert [c["running"] for c in stopped] == [False, False]
        assert stopped[0]["remaining_ms"] == stopped[1]["remaining_ms"], "both processes charge seat 2 alike"
        assert all(abs(clocks_of(v)[1]["remaining_ms"] - seat_one_left) < 1000 for v in views)

        # Nobody moves: seat 1 runs out. Both processes tick the match; exactly one ends it.
        with second.client(invite) as spectator:
            final = list(spectator.watch(match_id))[-1]
        assert final["result"]["ended_by"] == "timeout" and final["result"]["player_id"] == 1
        time.sleep(0.5)  # a second timeout, if any, would be journaled by now
        assert journal_kinds(postgres_url, match_id) == ["move", "move", "end"]
        with first.client(invite) as spectator:
            assert view_at(spectator, match_id, 3)["result"] == final["result"]
    finally:
        first.stop()
        second.stop()


def test_a_clock_keeps_running_right_on_the_survivor_after_a_sigkill(
    tmp_path: Path, postgres_url: str
) -> None:
    first = ServerProcess(tmp_path / "first", ("--store", postgres_url))
    second = ServerProcess(tmp_path / "second", ("--store", postgres_url))
    try:
        module_id = upload_to_both(first, second)
        with first.client() as admin:
            creating = time.monotonic()
            timed = admin.create_match(module_id, ["ann", "bob"], time_control={"main_ms": MAIN_MS})
            created = time.monotonic()
            # A second match the survivor never hears a request about before the kill.
            unseen = admin.create_match(module_id, ["cy", "di"], time_control={"main_ms": MAIN_MS})
        match_id = timed["match_id"]
        ann, bob = (seat["token"] for seat in timed["seats"])
        # The second process takes the match into memory while ann's clock runs ...
        with second.client(ann) as client:
            first_view = client.view(match_id)
            assert clocks_of(first_view)[1]["running"], first_view
        time.sleep(0.8)
        # ... then ann moves through the first: the second's copy is stale (ann running); it
        # must neither time ann out nor charge bob from its own copy.
        with first.client(ann) as client:
            view = client.view(match_id)
            assert view["actions"], {
                k: view.get(k) for k in ("version", "status", "result", "clocks", "zombies")
            }
            moving = time.monotonic()
            client.submit(match_id, view["actions"][0]["action"], view["version"])
        moved_at = time.monotonic()
        with first.client() as admin:
            unseen_view = admin.view(unseen["match_id"])
        assert clocks_of(unseen_view)[1]["running"]
        time.sleep(0.5)
        first.kill()

        # No request reaches the survivor until both timeouts are due: it finds both on its own.
        deadline = moved_at + MAIN_MS / 1000 + 4.0  # bob's time, plus the survivor's adoption and tick
        while time.monotonic() < deadline and journal_kinds(postgres_url, match_id)[-1:] != ["end"]:
            time.sleep(0.05)
        # Bob's clock started when ann's move was committed: after `moving`, before `moved_at` (the
        # reply may come late on a loaded machine, so the lower bound counts from `moving`).
        ended_after = time.monotonic() - moving
        assert journal_kinds(postgres_url, match_id) == ["move", "end"]
        assert ended_after >= MAIN_MS / 1000 - 0.05, (
            f"bob timed out {ended_after:.2f} s after his move: too early"
        )
        while time.monotonic() < deadline and journal_kinds(postgres_url, unseen["match_id"]) != ["end"]:
            time.sleep(0.05)
        assert journal_kinds(postgres_url, unseen["match_id"]) == ["end"]

        with second.client(bob) as client:
            final = client.view(match_id)
        assert final["result"]["ended_by"] == "timeout" and final["result"]["player_id"] == 2
        clocks = clocks_of(final)
        assert not clocks[1]["running"] and not clocks[2]["running"]
        used_least, used_most = (moving - created) * 1000, (moved_at - creating) * 1000
        assert MAIN_MS - used_most - 50 <= clocks[1]["remaining_ms"] <= MAIN_MS - used_least + 50, clocks
        with second.client(unseen["spectator_token"]) as spectator:
            assert spectator.view(unseen["match_id"])["result"]["player_id"] == 1
    finally:
        if first.proc.poll() is None:
            first.stop()
        second.stop()


def test_a_seat_back_through_one_process_is_no_longer_played_for_by_the_other(
    tmp_path: Path, postgres_url: str
) -> None:
    first = ServerProcess(tmp_path / "first", ("--store", postgres_url))
    second = ServerProcess(tmp_path / "second", ("--store", postgres_url))
    try:
        module_id = upload_to_both(first, second)
        with first.client() as admin:
            control = {"per_move_ms": 3000, "on_timeout": "zombie"}
            created = admin.create_match(module_id, ["ann", "bob"], time_control=control)
        match_id = created["match_id"]
        ann, bob = (seat["token"] for seat in created["seats"])
        with first.client(ann) as ann_first:
            view = ann_first.view(match_id)
            ann_first.submit(match_id, view["actions"][0]["action"], view["version"])
            # Bob is away: his clock runs out and the host plays his move.
            view = view_at(ann_first, match_id, 2)
            assert view["version"] == 2
            with first.client() as admin:
                assert admin.record(match_id)["moves"][1]["by_host"]
            # Bob comes back through the second process (his view), and the first hears of it.
            with second.client(bob) as bob_second:
                assert bob_second.view(match_id)["version"] == 2
                time.sleep(0.5)
                moved = ann_first.submit(match_id, view["actions"][0]["action"], 2)
                # Not played for at once by the first process: bob's turn is his.
                assert moved["version"] == 3, "the first process still played for bob"
                mine = view_at(bob_second, match_id, 3)
                assert mine["version"] == 3 and mine["actions"]
                assert bob_second.submit(match_id, mine["actions"][0]["action"], 3)["version"] == 4
        with first.client() as admin:
            view_at(admin, match_id, 4)  # bob's move reaches the first process by NOTIFY
            moves = admin.record(match_id)["moves"]
        assert [m.get("by_host", False) for m in moves] == [False, True, False, False]
    finally:
        first.stop()
        second.stop()
