"""Several ``tablehost serve`` processes on one PostgreSQL database, and failover.

Two real server processes share a throwaway PostgreSQL database (tests/conftest.py). Matches
are created and played through both; a watcher on one process follows moves made through the
other; one process is killed with SIGKILL mid-game and every match is finished through the
other, whose records must keep every acknowledged move exactly once and replay exactly.
"""

from __future__ import annotations

import random
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tablehost.cli_remote import run_bot
from tablehost.client import ApiError
from tablehost.guest import GuestPool
from tablehost.module import load_module
from tablehost.record import parse_record, replay
from test_e2e_server import ServerProcess, _env, module_path

pytestmark = pytest.mark.e2e


def test_two_servers_share_matches_and_one_finishes_them_after_the_other_is_killed(
    tmp_path: Path, postgres_url: str
) -> None:
    first = ServerProcess(tmp_path / "first", ("--store", postgres_url))
    second = ServerProcess(tmp_path / "second", ("--store", postgres_url))
    servers = [first, second]
    wasm = module_path("tic_tac_toe").read_bytes()
    try:
        with first.client() as admin_first, second.client(first.admin_token) as admin_second:
            module_id = admin_first.upload_module(wasm, "tic_tac_toe")["module_id"]
            # Each process creates matches; the other serves them all the same.
            matches = [admin_first.create_match(module_id, ["ann", "bob"]) for _ in range(3)]
            matches += [admin_second.create_match(module_id, ["cy", "di"]) for _ in range(3)]
        acknowledged: dict[str, list[tuple[int, dict[str, Any]]]] = {m["match_id"]: [] for m in matches}
        watched_id = matches[0]["match_id"]
        watched: list[int] = []
        watch_ready = threading.Event()

        def watch() -> None:
            with second.client(matches[0]["spectator_token"]) as spectator:
                for view in spectator.watch(watched_id):
                    watched.append(view["version"])
                    watch_ready.set()

        watcher = threading.Thread(target=watch)
        watcher.start()
        assert watch_ready.wait(10)
        stop = threading.Event()
        killed_after = 24

        def play(created: dict[str, Any]) -> None:
            """Each move through either process at random, until the first one is killed."""
            match_id = created["match_id"]
            rng = random.Random(match_id)
            seats = {
                (n, index): server.client(seat["token"])
                for index, server in enumerate(servers)
                for n, seat in enumerate(created["seats"], start=1)
            }
            try:
                while not stop.is_set():
                    via = rng.randrange(2) if match_id != watched_id else 0  # the watched match: first only
                    view = next(
                        v
                        for v in (seats[(n, via)].view(match_id) for n in (1, 2))
                        if v["actions"] or v["game_over"]
                    )
                    if view["game_over"]:
                        return
                    action = rng.choice([a for a in view["actions"] if a["intent"] != "undo"])["action"]
                    seats[(view["viewer"], via)].submit(match_id, action, view["version"])
                    acknowledged[match_id].append((view["version"] + 1, action))
                    if sum(len(a) for a in acknowledged.values()) >= killed_after:
                        stop.set()
            except (ApiError, StopIteration):
                return  # the first process died under this request: not acknowledged
            finally:
                for seat in seats.values():
                    seat.close()

        players = [threading.Thread(target=play, args=(m,)) for m in matches]
        for thread in players:
            thread.start()
        assert stop.wait(60)
        first.kill()
        killed_at = time.monotonic()
        for thread in players:
            thread.join(30)

        # The watched match moved only through the killed process: the survivor takes it over
        # at once (the dead process's connections, and with them its hold, are gone).
        takeover_started = time.monotonic()
        with (
            second.client(matches[0]["seats"][0]["token"]) as ann,
            second.client(matches[0]["seats"][1]["token"]) as bob,
        ):
            view = next(
                v for v in (ann.view(watched_id), bob.view(watched_id)) if v["actions"] or v["game_over"]
            )
            if not view["game_over"]:
                mover = ann if view["viewer"] == 1 else bob
                offered = next(a for a in view["actions"] if a["intent"] != "undo")["action"]
                mover.submit(watched_id, offered, view["version"])
        assert time.monotonic() - takeover_started < 5, "the survivor did not take the match over within 5 s"

        # Every match, wherever it was made and moved, is finished through the survivor.
        results: dict[str, bool] = {}

        def finish(created: dict[str, Any], seat: int) -> None:
            view = run_bot(second.address, created["match_id"], created["seats"][seat]["token"], seed=seat)
            results.setdefault(created["match_id"], view["game_over"])

        finishers = [threading.Thread(target=finish, args=(m, seat)) for m in matches for seat in (0, 1)]
        for thread in finishers:
            thread.start()
        for thread in finishers:
            thread.join(60)
        assert results == {m["match_id"]: True for m in matches}
        assert time.monotonic() - killed_at < 30

        module = load_module(wasm, cache_dir=tmp_path / "cache")
        with second.client(first.admin_token) as admin:
            for created in matches:
                match_id = created["match_id"]
                record = admin.record(match_id)
                stored = {m["seq"]: m["view_action"] for m in record["moves"] if not m["undone"]}
                # Every acknowledged move is stored at its version, and no version twice.
                for seq, action in acknowledged[match_id]:
                    assert stored.get(seq) == action, f"{match_id}: acknowledged move {seq} is missing"
                assert [m["seq"] for m in record["moves"]] == list(range(1, len(record["moves"]) + 1))
                pool = GuestPool(module)
                try:
                    result = replay(parse_record(record), pool)
                finally:
                    pool.close()
                assert result.ok, f"{match_id}: {result.detail}"
            final_version = len(admin.record(watched_id)["moves"])
        watcher.join(30)
        assert not watcher.is_alive()
        # The watcher on the second process saw the moves made through the first, in order, to the end.
        assert watched == sorted(set(watched)) and watched[-1] == final_version
        moved_through_first = [seq for seq, _ in acknowledged[watched_id]]
        assert moved_through_first and set(watched) & set(moved_through_first)
    finally:
        for server in servers:
            if server.proc.poll() is None:
                server.stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_processes_shares_one_address_and_both_processes_answer(
    tmp_path: Path, postgres_url: str
) -> None:
    metrics_port = free_port()
    server = ServerProcess(
        tmp_path / "data",
        ("--store", postgres_url, "--processes", "2", "--metrics-port", str(metrics_port)),
    )
    try:
        connections = 16
        for _ in range(connections):  # each client is its own TCP connection, spread by the kernel
            with server.client() as admin:
                admin.list_modules()
        served = []
        for index in range(2):
            url = f"http://127.0.0.1:{metrics_port + index}/metrics"
            with urllib.request.urlopen(url, timeout=10) as response:
                text = response.read().decode()
            found = re.search(
                r'^tablehost_requests_total\{code="OK",method="ListModules",transport="grpc"\} ([0-9.]+)$', text, re.MULTILINE
            )
            served.append(float(found.group(1)) if found else 0.0)
        assert sum(served) == connections and min(served) > 0, served
    finally:
        assert server.stop() == 0


def test_several_processes_need_a_shared_store(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tablehost", "serve", "--data", str(tmp_path / "d"), "--processes", "2"],
        check=False,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert result.returncode == 2 and "--store postgresql://" in result.stderr


def test_a_database_that_cannot_be_reached_is_one_line_and_exit_status_2(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tablehost",
            "serve",
            "--data",
            str(tmp_path / "d"),
            "--store",
            "postgresql://nobody:secret@127.0.0.1:1/none",
        ],
        check=False,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("tablehost: the PostgreSQL database cannot be reached")
    assert "secret" not in result.stderr


def test_two_registries_on_one_database_never_both_apply_a_version_and_undo_across_them(
    tmp_path: Path, postgres_url: str
) -> None:
    """Two registries in this process stand for two servers: same database, separate memory."""
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry
    from tablehost.errors import MatchError

    first = MatchRegistry(tmp_path / "a", store=postgres_url)
    second = MatchRegistry(tmp_path / "b", store=postgres_url)
    try:
        module = first.upload_module(ADMIN, module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")
        created = first.create_match(ADMIN, module.sha256, [("ann", ""), ("bob", "")])
        match_id = created.match_id
        ann_first = first.authenticate(created.seats[0][1])
        ann_second = second.authenticate(created.seats[0][1])  # a token made by the other "server"
        offers = [
            a["action"] for a in second.view(ann_second, match_id).view.actions if a["intent"] != "undo"
        ]

        # The same version submitted through both at once: exactly one is applied, the other
        # is judged against the stored match (not its stale copy) and refused.
        outcomes: list[object] = []
        barrier = threading.Barrier(2)

        def submit(registry: MatchRegistry, principal: object, action: dict[str, Any]) -> None:
            barrier.wait()
            try:
                outcomes.append(registry.submit(principal, match_id, action, 0).view.version)  # type: ignore[arg-type]
            except MatchError as exc:  # the loser sees the winner's move: not its turn any more
                outcomes.append(exc)

        racers = [
            threading.Thread(target=submit, args=(first, ann_first, offers[0])),
            threading.Thread(target=submit, args=(second, ann_second, offers[1])),
        ]
        for thread in racers:
            thread.start()
        for thread in racers:
            thread.join(30)
        assert sorted(type(o).__name__ for o in outcomes) == ["NotYourTurn", "int"] and 1 in outcomes
        stored = first.store.load_record(match_id)["moves"]
        assert [m["seq"] for m in stored] == [1]

        # A move through one, its undo through the other (hearts: a passing choice is undoable).
        hearts = first.upload_module(ADMIN, module_path("hearts").read_bytes(), "hearts")
        four = first.create_match(ADMIN, hearts.sha256, [("a", ""), ("b", ""), ("c", ""), ("d", "")])
        seat_first, seat_second = first.authenticate(four.seats[0][1]), second.authenticate(four.seats[0][1])
        before = second.view(seat_second, four.match_id).view
        choice = next(a for a in before.actions if a["intent"] == "choice")["action"]
        assert first.submit(seat_first, four.match_id, choice, 0).view.version == 1
        undone = second.undo(seat_second, four.match_id, 1).view
        assert undone.version == 2 and undone.state == before.state
        deadline = time.monotonic() + 5  # the first hears of the undo through NOTIFY
        while first.view(seat_first, four.match_id).view.version != 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert first.view(seat_first, four.match_id).view.state == before.state
        assert [
            (m["seq"], m["undone"], m["undo_seq"]) for m in first.store.load_record(four.match_id)["moves"]
        ] == [(1, True, 2)]
    finally:
        first.close()
        second.close()


def _cell(space_id: str) -> dict[str, Any]:
    return {"type": "space_click", "space_id": space_id}


def _count_holds(registry: Any) -> list[int]:
    """Count ``registry``'s holds of a match in the store (a redo, or a refusal re-judged)."""
    held: list[int] = []
    plain = registry._held

    def counted(live: Any) -> Any:
        held.append(live.match.version)
        return plain(live)

    registry._held = counted
    return held


def test_two_registries_racing_one_version_without_a_hold_store_one_and_redo_the_other(
    tmp_path: Path, postgres_url: str
) -> None:
    """Both copies are current and both moves are made; their one-round-trip writes of
    version 1 are released together. Exactly one is stored; the other is refused by the
    version key, redone under the match's hold on the stored match, and refused there
    (not this seat's turn any more), leaving its registry's copy equal to the store."""
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry
    from tablehost.errors import MatchError

    first = MatchRegistry(tmp_path / "a", store=postgres_url)
    second = MatchRegistry(tmp_path / "b", store=postgres_url)
    try:
        module = first.upload_module(ADMIN, module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")
        created = first.create_match(ADMIN, module.sha256, [("ann", ""), ("bob", "")])
        match_id = created.match_id
        anns = [first.authenticate(created.seats[0][1]), second.authenticate(created.seats[0][1])]
        for registry, ann in zip((first, second), anns, strict=True):
            assert registry.view(ann, match_id).view.version == 0  # both copies in memory, current
        gate = threading.Barrier(2)
        for registry in (first, second):
            plain, calls = registry.store.append, []

            def append(mid: str, kind: str, payload: dict[str, Any], plain: Any = plain, calls: list[int] = calls) -> None:
                calls.append(1)
                if len(calls) == 1:
                    gate.wait(20)  # both moves computed on version 0, both writes sent together
                plain(mid, kind, payload)

            registry.store.append = append  # type: ignore[method-assign]
        holds = [_count_holds(first), _count_holds(second)]
        outcomes: dict[int, object] = {}

        def submit(k: int, cell: str) -> None:
            registry = (first, second)[k]
            try:
                outcomes[k] = registry.submit(anns[k], match_id, _cell(cell), 0).view.version
            except MatchError as exc:
                outcomes[k] = exc

        racers = [threading.Thread(target=submit, args=(0, "a1")), threading.Thread(target=submit, args=(1, "c3"))]
        for thread in racers:
            thread.start()
        for thread in racers:
            thread.join(30)
        winner = next(k for k, outcome in outcomes.items() if outcome == 1)
        loser = 1 - winner
        assert type(outcomes[loser]).__name__ == "NotYourTurn"
        assert holds[winner] == [] and holds[loser] == [0]  # only the loser redid, from version 0
        stored = first.store.load_record(match_id)["moves"]
        assert [(m["seq"], m["view_action"]) for m in stored] == [(1, _cell(("a1", "c3")[winner]))]
        views = [r.view(ann, match_id).view for r, ann in zip((first, second), anns, strict=True)]
        assert views[0].version == views[1].version == 1 and views[0].state == views[1].state
    finally:
        first.close()
        second.close()


def test_a_copy_that_missed_a_move_redoes_or_refuses_as_the_stored_match_says(
    tmp_path: Path, postgres_url: str
) -> None:
    """The second registry hears nothing (its notifications are cut), so its copy falls behind.
    A refusal judged on that copy is judged again on the stored match (and accepted there); a
    move computed on it conflicts and is redone, refused when the other's move ended the game;
    a refusal that the stored match confirms changes nothing."""
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry
    from tablehost.errors import MatchOver, StaleVersion

    first = MatchRegistry(tmp_path / "a", store=postgres_url)
    second = MatchRegistry(tmp_path / "b", store=postgres_url)
    try:
        module = first.upload_module(ADMIN, module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")
        created = first.create_match(ADMIN, module.sha256, [("ann", ""), ("bob", "")])
        match_id = created.match_id
        ann1, bob1 = (first.authenticate(created.seats[k][1]) for k in (0, 1))
        ann2, bob2 = (second.authenticate(created.seats[k][1]) for k in (0, 1))
        second.store.latest_version = lambda match_id: None  # type: ignore[method-assign]
        holds = _count_holds(second)
        for version, (who, cell) in enumerate([(ann1, "a1"), (bob1, "b1"), (ann1, "a2"), (bob1, "b2")]):
            assert first.submit(who, match_id, _cell(cell), version).view.version == version + 1
        assert second.view(ann2, match_id).view.version == 4  # loaded from the store: current

        # A refusal the stored match confirms: one hold to judge it, nothing stored.
        with pytest.raises(StaleVersion):
            second.submit(ann2, match_id, _cell("c3"), 3)
        assert holds == [4] and len(first.store.load_record(match_id)["moves"]) == 4

        # Refused on the copy (not bob's turn at 4), accepted on the stored match (ann moved).
        assert first.submit(ann1, match_id, _cell("c1"), 4).view.version == 5
        assert second.view(bob2, match_id).view.version == 4  # behind: it heard nothing
        assert second.submit(bob2, match_id, _cell("c2"), 5).view.version == 6
        assert holds == [4, 4]

        # Computed on the copy at 6 (behind again), refused by the key, redone: the stored
        # match is over (ann's win through the first), so the answer is MatchOver.
        assert first.submit(ann1, match_id, _cell("a3"), 6).view
        assert first.view(ann1, match_id).view.game_over
        with pytest.raises(MatchOver):
            second.submit(ann2, match_id, _cell("b3"), 6)
        assert holds == [4, 4, 6]
        stored = first.store.load_record(match_id)["moves"]
        assert [m["view_action"]["space_id"] for m in stored] == ["a1", "b1", "a2", "b2", "c1", "c2", "a3"]
        again = second.view(ann2, match_id).view
        assert again.version == 7 and again.game_over  # the copy is the stored match now
    finally:
        first.close()
        second.close()


def test_a_bot_move_after_the_callers_that_another_process_stored_first_leaves_the_callers_move(
    tmp_path: Path, postgres_url: str
) -> None:
    """Ann's move and the server bot's answer journal in one request. Another process stores
    the bot's answer (the same move) between the two writes: ann's move stands (the reply is
    the stored match), the duplicate is refused by the key and the copy reloaded: each version
    stored once."""
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry

    first = MatchRegistry(tmp_path / "a", store=postgres_url)
    second = MatchRegistry(tmp_path / "b", store=postgres_url)
    try:
        module = first.upload_module(ADMIN, module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")
        created = first.create_match(ADMIN, module.sha256, [("ann", "", False, ""), ("bob", "", False, "first")])
        match_id = created.match_id
        ann = second.authenticate(created.seats[0][1])
        plain, written = second.store.append, []

        def append(mid: str, kind: str, payload: dict[str, Any]) -> None:
            written.append(int(payload["seq"]))
            if len(written) == 2:  # the bot's answer: the other process stores it first
                first.store.append(mid, kind, payload)
            plain(mid, kind, payload)

        second.store.append = append  # type: ignore[method-assign]
        served = second.submit(ann, match_id, _cell("a1"), 0).view
        assert written == [1, 2] and served.version == 2
        stored = first.store.load_record(match_id)["moves"]
        assert [(m["seq"], m["player_id"]) for m in stored] == [(1, 1), (2, 2)]
        assert stored[0]["view_action"] == _cell("a1")
        # The first process hears of versions 1 and 2 by NOTIFY: its view catches up when it has.
        ann_first = first.authenticate(created.seats[0][1])
        give_up = time.monotonic() + 10
        while first.view(ann_first, match_id).view.version < 2 and time.monotonic() < give_up:
            time.sleep(0.02)
        assert second.view(ann, match_id).view.state == first.view(ann_first, match_id).view.state
    finally:
        first.close()
        second.close()


def _web_url(server: ServerProcess) -> str:
    """Read ``serve``'s start-up lines after the admin token up to the web table's address."""
    assert server.proc.stdout is not None
    for line in server.proc.stdout:
        found = re.search(r"web table on (http://\S+)/", line)
        if found:
            return found.group(1)
    raise AssertionError("serve did not print the web table's address")


def _http_play_tic_tac_toe(urls: list[str], admin: str) -> tuple[dict[str, Any], list[int]]:
    """Create a tic-tac-toe match through ``urls[0]``, watch its events there (as a spectator),
    and play it to a win with a fresh HTTP connection per move, cycling through ``urls``.
    Returns the created match and the versions the event stream pushed."""
    import httpx

    from web_support import read_events

    wasm = module_path("tic_tac_toe").read_bytes()
    with httpx.Client(base_url=urls[0], headers={"authorization": f"Bearer {admin}"}, timeout=60) as client:
        module = client.post("/api/modules?name=tic_tac_toe", content=wasm).json()
        created = client.post(
            "/api/matches",
            json={"module_id": module["module_id"], "seats": [{"username": "ann"}, {"username": "bob"}]},
        ).json()
    match_id = created["match_id"]
    pushed: list[dict[str, Any]] = []
    ready = threading.Event()
    stream = httpx.Client(
        base_url=urls[0], headers={"authorization": f"Bearer {created['spectator_token']}"}, timeout=60
    )
    reader = threading.Thread(
        target=read_events, args=(stream, f"/api/matches/{match_id}/events", pushed, ready), daemon=True
    )
    reader.start()
    try:
        assert ready.wait(20), "the event stream opened"
        cells = ["a1", "b1", "a2", "b2", "a3"]  # ann wins down the first column
        for version, cell in enumerate(cells):
            seat = created["seats"][version % 2]
            url = urls[(version + 1) % len(urls)]
            with httpx.Client(
                base_url=url, headers={"authorization": f"Bearer {seat['token']}"}, timeout=60
            ) as player:
                answer = player.post(
                    f"/api/matches/{match_id}/actions",
                    json={"action": {"type": "space_click", "space_id": cell}, "version": version},
                )
                assert answer.status_code == 200, answer.text
        reader.join(20)
        assert not reader.is_alive(), "the stream ends with the game-over view"
    finally:
        stream.close()
    return created, [view["version"] for view in pushed]


def test_an_http_event_stream_on_one_process_follows_moves_made_through_another(
    tmp_path: Path, postgres_url: str
) -> None:
    """Two processes with a web table each (own ports), one PostgreSQL database."""
    first = ServerProcess(tmp_path / "first", ("--store", postgres_url, "--http", "127.0.0.1:0"))
    second = ServerProcess(tmp_path / "second", ("--store", postgres_url, "--http", "127.0.0.1:0"))
    try:
        urls = [_web_url(first), _web_url(second)]
        _, versions = _http_play_tic_tac_toe(urls, first.admin_token)
        assert versions[-1] == 5 and versions == sorted(set(versions)), versions
        # Moves 1, 3 and 5 were made through the second process; the first pushed them all.
        assert {1, 3, 5} <= set(versions)
    finally:
        for server in (first, second):
            assert server.stop() == 0


def test_serve_processes_with_http_share_the_web_address(tmp_path: Path, postgres_url: str) -> None:
    """``--processes 2 --http``: both children listen on one web address (SO_REUSEPORT; a
    second plain bind would fail and the child would not start) and a match is played
    through fresh connections spread between them while a stream follows it."""
    server = ServerProcess(
        tmp_path / "data", ("--store", postgres_url, "--processes", "2", "--http", "127.0.0.1:0")
    )
    try:
        url = _web_url(server)
        _, versions = _http_play_tic_tac_toe([url], server.admin_token)
        assert versions[-1] == 5 and versions == sorted(set(versions)), versions
    finally:
        assert server.stop() == 0
