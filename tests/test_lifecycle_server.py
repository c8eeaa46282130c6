"""Real matches for real players, end to end over a ``tablehost serve`` process: the lobby
(concurrent joins), clocks with both timeout policies, clocks across SIGKILL and restart,
resign and abort, results for everyone, and refused player counts and options."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from tablehost.client import ApiError, TablehostClient
from tablehost.guest import GuestPool
from tablehost.module import load_module
from tablehost.record import parse_record, replay
from test_e2e_server import ServerProcess, cli, module_path

pytestmark = pytest.mark.e2e


@pytest.fixture
def server(tmp_path: Path) -> Any:
    process = ServerProcess(tmp_path / "data")
    yield process
    if process.proc.poll() is None:
        assert process.stop() == 0


def upload(server: ServerProcess, name: str) -> str:
    with server.client() as admin:
        return str(admin.upload_module(module_path(name).read_bytes(), name)["module_id"])


def wait_for(predicate: Any, timeout_s: float = 20.0, what: str = "the condition") -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def play_first_offer(client: TablehostClient, match_id: str) -> dict[str, Any]:
    """Act with the first offered non-undo action whenever this seat may; return the final view."""
    for view in client.watch(match_id):
        if view["game_over"]:
            return view
        offers = [a for a in view["actions"] if a["intent"] != "undo"]
        if offers:
            try:
                client.submit(match_id, offers[0]["action"], view["version"])
            except ApiError as exc:  # the host may have moved for someone in between
                if exc.status != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
    return client.view(match_id)


# ------------------------------------------------------------------ lobby


def test_four_players_join_hearts_concurrently_and_get_four_distinct_seats(server: ServerProcess) -> None:
    module_id = upload(server, "hearts")
    with server.client() as admin:
        created = admin.create_match(
            module_id, [""] * 4, open_seats=[1, 2, 3, 4], options={"target_score": 30}
        )
    match_id, invite = created["match_id"], created["spectator_token"]
    assert created["seats"] == [] and created["open_seats"] == [1, 2, 3, 4]
    assert created["view"]["status"] == "waiting"
    with server.client(invite) as spectator:
        assert spectator.list_matches(open_only=True)[0]["open_seats"] == [1, 2, 3, 4]
    barrier = threading.Barrier(4)
    joined: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    def join(name: str) -> None:
        try:
            with TablehostClient(server.address, invite, timeout_s=30) as client:
                barrier.wait()
                joined.append(client.join(match_id, name))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=join, args=(name,)) for name in ("ann", "bob", "cid", "dee")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert sorted(seat["player_id"] for seat in joined) == [1, 2, 3, 4]
    assert len({seat["token"] for seat in joined}) == 4
    assert sorted(seat["status"] for seat in joined) == ["active", "waiting", "waiting", "waiting"]
    with server.client(invite) as late, pytest.raises(ApiError) as refused:
        late.join(match_id, "eve")
    assert refused.value.status == grpc.StatusCode.FAILED_PRECONDITION
    for seat in joined:
        with server.client(seat["token"]) as player:
            view = player.view(match_id)
        assert view["viewer"] == seat["player_id"] and view["status"] == "active"
        names = {p["player_id"]: p["username"] for p in view["state"]["players"]}
        assert names[seat["player_id"]] == seat["username"]
        assert view["state"]["meta_data"]["options"] == {"target_score": 30}
    with server.client() as admin:
        assert admin.list_matches(open_only=True) == []
        summary = admin.list_matches(module_id=module_id)[0]
    assert summary["status"] == "active" and summary["options"] == {"target_score": 30}


def test_racing_joins_for_one_seat_get_it_once_or_a_clear_refusal(server: ServerProcess) -> None:
    module_id = upload(server, "tic_tac_toe")
    with server.client() as admin:
        created = admin.create_match(module_id, ["ann", ""], open_seats=[2])
    assert [s["player_id"] for s in created["seats"]] == [1]
    barrier = threading.Barrier(5)
    outcomes: list[Any] = []

    def join(number: int) -> None:
        with TablehostClient(server.address, created["spectator_token"], timeout_s=30) as client:
            barrier.wait()
            try:
                outcomes.append(client.join(created["match_id"], f"p{number}", player_id=2))
            except ApiError as exc:
                outcomes.append(exc)

    threads = [threading.Thread(target=join, args=(n,)) for n in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    won = [o for o in outcomes if isinstance(o, dict)]
    lost = [o for o in outcomes if isinstance(o, ApiError)]
    assert len(won) == 1 and len(lost) == 4
    assert all(e.status == grpc.StatusCode.FAILED_PRECONDITION for e in lost)
    assert all("taken" in e.details or "started" in e.details for e in lost)


# ------------------------------------------------------------------ clocks


def test_a_seat_that_stops_playing_is_played_by_the_host_to_game_over(server: ServerProcess) -> None:
    module_id = upload(server, "tic_tac_toe")
    control = {"per_move_ms": 1000, "on_timeout": "zombie"}  # the shortest (MIN_CLOCK_SECONDS)
    with server.client() as admin:
        created = admin.create_match(module_id, ["ann", "bob"], time_control=control)
    match_id = created["match_id"]
    ann = created["seats"][0]["token"]
    with server.client(ann) as client:
        final = play_first_offer(client, match_id)
    assert final["status"] == "finished" and final["result"]["ended_by"] == "normal"
    with server.client() as admin:
        record = admin.record(match_id)
    by_host = [m for m in record["moves"] if m.get("by_host")]
    assert by_host and all(m["player_id"] == 2 for m in by_host), "only bob's seat was played for"
    assert all("clocks" in m for m in record["moves"])
    module = load_module(module_path("tic_tac_toe").read_bytes())
    outcome = replay(parse_record(record), GuestPool(module))
    assert outcome.ok, outcome.detail


def test_a_seat_that_stops_playing_forfeits_under_the_forfeit_policy(server: ServerProcess) -> None:
    module_id = upload(server, "reversi")
    with server.client() as admin:
        created = admin.create_match(module_id, ["ann", "bob"], time_control={"per_move_ms": 1000})
    match_id = created["match_id"]
    with server.client(created["seats"][1]["token"]) as bob:
        views = list(bob.watch(match_id))
    final = views[-1]
    assert final["status"] == "finished"
    assert final["result"] == {
        "ranks": {"1": 2, "2": 1},
        "winners": [2],
        "ended_by": "timeout",
        "player_id": 1,
    }
    assert views[0]["clocks"][0]["running"] and not views[0]["clocks"][1]["running"]


def test_picking_a_man_and_taking_it_back_earns_no_time(tmp_path: Path) -> None:
    """Checkers with 30 s + 5 s: five picks of a man (a choice) each taken back. A click earned the
    increment and the undo kept it (30 s grew to 48.5 s); now the seat's time only runs down, also
    in the clocks a restarted server computes from the stored moves."""
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry
    from test_api_server import module_bytes, start_host, stop_host

    host = start_host(tmp_path / "data")
    try:
        module_id = host.admin.upload_module(module_bytes("checkers"), "checkers")["module_id"]
        created = host.admin.create_match(module_id, ["ann", "bob"], time_control={"main_ms": 30_000, "increment_ms": 5_000})
        match_id = created["match_id"]
        ann = host.client(created["seats"][0]["token"])
        for _ in range(5):
            view = ann.view(match_id)
            pick = next(a for a in view["actions"] if a["intent"] == "choice")
            picked = ann.submit(match_id, pick["action"], view["version"])
            ann.undo(match_id, picked["version"])
        clocks = {c["player_id"]: c for c in ann.view(match_id)["clocks"]}
        assert clocks[1]["running"] and 25_000 < clocks[1]["remaining_ms"] <= 30_000, clocks
        assert clocks[2] == {"player_id": 2, "remaining_ms": 30_000, "running": False}
    finally:
        stop_host(host)
    again = MatchRegistry(tmp_path / "data", synchronous="NORMAL")
    try:
        restarted = {c["player_id"]: c for c in again.view(ADMIN, match_id).extras["clocks"]}
        # Charged up to the last heartbeat before the stop (the downtime policy): never over 30 s.
        assert restarted[1]["running"] and restarted[1]["remaining_ms"] <= 30_000, restarted
        assert restarted[2] == clocks[2]
    finally:
        again.close()


def test_clocks_and_a_running_timeout_survive_sigkill_and_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = ServerProcess(data)
    try:
        module_id = upload(first, "tic_tac_toe")
        with first.client() as admin:
            created = admin.create_match(module_id, ["ann", "bob"], time_control={"main_ms": 4000})
        match_id = created["match_id"]
        ann, bob = (seat["token"] for seat in created["seats"])
        with first.client(ann) as client:
            view = client.view(match_id)
            client.submit(match_id, view["actions"][0]["action"], view["version"])
        time.sleep(1.5)  # bob thinks; then the server dies
    finally:
        first.kill()
    time.sleep(2.0)  # downtime: charged to nobody
    second = ServerProcess(data)
    try:
        with second.client(bob) as client:
            view = client.view(match_id)
            clocks = {c["player_id"]: c for c in view["clocks"]}
            assert clocks[2]["running"] and not clocks[1]["running"]
            # 4 s less the 1.5 s used, of which up to ~1 s (the heartbeat's period) may go uncharged;
            # the 2 s of downtime are never charged.
            assert 2300 <= clocks[2]["remaining_ms"] <= 3700, clocks
            assert clocks[1]["remaining_ms"] == 4000 or 3000 <= clocks[1]["remaining_ms"] <= 4000
            views = list(client.watch(match_id))
        assert views[-1]["result"]["ended_by"] == "timeout" and views[-1]["result"]["player_id"] == 2
    finally:
        second.stop()
    ended_clocks = {c["player_id"]: c for c in views[-1]["clocks"]}
    assert ended_clocks[2] == {"player_id": 2, "remaining_ms": 0, "running": False}, ended_clocks
    third = ServerProcess(data)
    try:
        with third.client() as admin:
            summary = admin.list_matches()[0]
            restarted = admin.view(match_id)
        assert summary["status"] == "finished" and summary["result"]["ended_by"] == "timeout"
        # The ending journals its time, not clocks: a server that loads the match again charges
        # bob up to it, as the server that timed him out did (not back to his time at ann's move).
        assert {c["player_id"]: c for c in restarted["clocks"]} == ended_clocks
    finally:
        third.stop()


# ------------------------------------------------------------------ resign, abort, refusals


def test_resign_gives_the_result_to_everyone_and_survives_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = ServerProcess(data)
    try:
        module_id = upload(first, "checkers")
        with first.client() as admin:
            created = admin.create_match(module_id, ["ann", "bob"], options={"draw_plies": 40})
        match_id = created["match_id"]
        ann, bob = (seat["token"] for seat in created["seats"])
        streams: dict[str, list[dict[str, Any]]] = {"bob": [], "spectator": []}

        def watch(name: str, token: str) -> None:
            with TablehostClient(first.address, token, timeout_s=30) as client:
                streams[name].extend(client.watch(match_id))

        threads = [
            threading.Thread(target=watch, args=("bob", bob)),
            threading.Thread(target=watch, args=("spectator", created["spectator_token"])),
        ]
        for thread in threads:
            thread.start()
        with first.client(bob) as client:
            wait_for(lambda: client.view(match_id)["connected_player_ids"] == [2], what="bob connected")
        with first.client(ann) as client:
            resigned = client.resign(match_id)
            with pytest.raises(ApiError) as again:
                client.resign(match_id)
        assert again.value.status == grpc.StatusCode.FAILED_PRECONDITION
        for thread in threads:
            thread.join(30)
        expected = {"ranks": {"1": 2, "2": 1}, "winners": [2], "ended_by": "resigned", "player_id": 1}
        assert resigned["result"] == expected
        assert streams["bob"][-1]["result"] == expected and streams["spectator"][-1]["result"] == expected
    finally:
        first.kill()
    second = ServerProcess(data)
    try:
        with second.client(bob) as client:
            assert client.view(match_id)["result"] == expected
            record = client.record(match_id)
        assert record["ending"]["ended_by"] == "resigned" and record["result"] == expected
    finally:
        second.stop()


def test_abort_ends_a_running_and_a_waiting_match(server: ServerProcess) -> None:
    module_id = upload(server, "dominoes")
    with server.client() as admin:
        running = admin.create_match(module_id, ["ann", "bob", "cid"], options={"tiles_per_hand": 3})
        waiting = admin.create_match(module_id, ["ann", ""], open_seats=[2])
        assert admin.abort(running["match_id"])["result"]["ended_by"] == "aborted"
        assert admin.abort(waiting["match_id"])["status"] == "aborted"
        statuses = {m["match_id"]: m["status"] for m in admin.list_matches()}
    assert statuses == {running["match_id"]: "aborted", waiting["match_id"]: "aborted"}
    with server.client(running["seats"][0]["token"]) as ann:
        with pytest.raises(ApiError) as refused:
            ann.abort(running["match_id"])
        assert refused.value.status == grpc.StatusCode.PERMISSION_DENIED
        view = ann.view(running["match_id"])
        assert view["game_over"] and view["result"]["ranks"] == {}
    with server.client(waiting["spectator_token"]) as late, pytest.raises(ApiError):
        late.join(waiting["match_id"], "eve")


@pytest.mark.parametrize(
    ("name", "seats", "options", "named"),
    [
        ("checkers", 3, {}, "exactly 2 players, not 3"),
        ("hearts", 4, {"target_score": 5}, "target_score"),
        ("reversi", 2, {"opening": "diagonal"}, "opening"),
        ("tic_tac_toe", 2, {"board": 4}, "unknown option 'board'"),
        ("dominoes", 5, {}, "2 to 4 players, not 5"),
    ],
)
def test_invalid_player_counts_and_options_are_refused_and_nothing_is_stored(
    server: ServerProcess, name: str, seats: int, options: dict[str, Any], named: str
) -> None:
    module_id = upload(server, name)
    with server.client() as admin:
        with pytest.raises(ApiError) as refused:
            admin.create_match(module_id, [""] * seats, options=options)
        assert refused.value.status == grpc.StatusCode.INVALID_ARGUMENT
        assert named in refused.value.details
        assert admin.list_matches() == []
    # Query the tables: the file's raw bytes also hold module blobs, which may
    # contain "m-" by chance (a dominoes build did).
    with sqlite3.connect(server.data_dir / "tablehost.sqlite3") as db:
        rows = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("matches", "seats", "moves")}
    assert rows == {"matches": 0, "seats": 0, "moves": 0}


# ------------------------------------------------------------------ smaller streams, log history


def test_delta_streams_rebuild_the_same_views_and_the_log_history_goes_past_500_lines(
    server: ServerProcess,
) -> None:
    from tablehost.cli_remote import run_bots

    module_id = upload(server, "hearts")
    with server.client() as admin:
        created = admin.create_match(module_id, ["ann", "bob", "cid", "dee"])
    match_id = created["match_id"]
    tokens = [seat["token"] for seat in created["seats"]]
    streams: dict[bool, list[dict[str, Any]]] = {True: [], False: []}

    def watch(deltas: bool) -> None:
        with TablehostClient(server.address, tokens[0], timeout_s=60) as client:
            streams[deltas].extend(client.watch(match_id, deltas=deltas))

    watchers = [threading.Thread(target=watch, args=(d,)) for d in (True, False)]
    for thread in watchers:
        thread.start()
    run_bots(server.address, match_id, tokens, 7)
    for thread in watchers:
        thread.join(120)
    by_version = {view["version"]: view for view in streams[False]}
    compared = 0
    for view in streams[True]:
        whole = by_version.get(view["version"])
        if whole is not None:
            assert view["state"] == whole["state"] and view["actions"] == whole["actions"]
            compared += 1
    assert compared > 10 and streams[True][-1]["game_over"]
    final = streams[True][-1]
    with server.client(tokens[0]) as ann:
        history = ann.log(match_id, 0, 5000)
    kept = [entry["text"] for entry in final["state"]["log"]]
    assert history["total"] > 500 == len(kept), "the state keeps 500 lines; the history has them all"
    assert history["lines"][-len(kept) :] == kept, "the same lines, filtered for ann exactly as her view"
    with server.client(tokens[0]) as ann:
        assert ann.log(match_id, 10, 3)["lines"] == history["lines"][10:13]


def test_the_lobby_clock_and_resign_through_the_command_line(server: ServerProcess) -> None:
    import orjson

    address = ("--address", server.address)
    inspect = cli("inspect", str(module_path("tic_tac_toe")))
    assert inspect.returncode == 0 and "option      misere = false  (true | false)" in inspect.stdout, (
        inspect.stdout
    )
    module_id = upload(server, "tic_tac_toe")
    refused = cli("create", module_id, "--players", "3", *address, token=server.admin_token)
    assert refused.returncode != 0 and "exactly 2 players, not 3" in refused.stderr
    create = cli(
        "create",
        module_id,
        "--players",
        "2",
        "--open",
        "--option",
        "misere=true",
        "--clock",
        "20+1",
        "--on-timeout",
        "zombie",
        "--json",
        *address,
        token=server.admin_token,
    )
    assert create.returncode == 0, create.stderr
    created = orjson.loads(create.stdout)
    match_id, invite = created["match_id"], created["spectator_token"]
    listed = cli("matches", "--open", *address, token=invite)
    assert listed.returncode == 0 and "open seats 1,2" in listed.stdout and "options misere=true" in listed.stdout
    tokens = []
    for name in ("ann", "bob"):
        joined = cli("join", match_id, "--name", name, "--json", *address, token=invite)
        assert joined.returncode == 0, joined.stderr
        tokens.append(orjson.loads(joined.stdout)["token"])
    shown = cli("view", match_id, *address, token=tokens[0])
    import re

    assert re.search(r"clock ann: 1\d\.\d s  \(running\)", shown.stdout), shown.stdout
    assert "clock bob: 20.0 s\n" in shown.stdout, shown.stdout
    resigned = cli("resign", match_id, *address, token=tokens[1])
    assert resigned.returncode == 0, resigned.stderr
    assert "result: bob (player 2) resigned; winner: ann (player 1)" in resigned.stdout, resigned.stdout
    finished = cli("matches", *address, token=server.admin_token)
    assert "finished" in finished.stdout and "bob (player 2) resigned; winner: ann (player 1)" in finished.stdout
