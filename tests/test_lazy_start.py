"""A server starting over a store loads only what must run without a request, and lobby entries
are evicted like matches.

At startup every stored match is read once; only timed matches not over and those where the
server moves for a seat are resumed into memory; every other one is kept as its list summary
(read off the record without the guest) and loaded on its first request. The summary must equal
the one the loaded match gives, and the loaded match must serve exactly what a server that never
restarted serves (views, log, record, list entry).
"""

from __future__ import annotations

import tempfile
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tablehost.api.auth import ADMIN, Principal
from tablehost.api.metrics import Metrics
from tablehost.api.registry import MatchRegistry
from tablehost.clocks import TimeControl
from tablehost.lobby import SeatTaken
from test_e2e_server import ServerProcess
from test_eviction import module_bytes, observed, operations, play, twin_of


def listed(reg: MatchRegistry, match_id: str) -> list[dict[str, Any]]:
    return [s for s in reg.list_matches(ADMIN) if s["match_id"] == match_id]


# Checkers offers undo and has draws; tic-tac-toe ends by the rules quickly.
@pytest.mark.parametrize("game", ["tic_tac_toe", "checkers"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations)
def test_the_summary_read_off_the_record_equals_the_loaded_matchs(game: str, ops: list[tuple[str, int, bool]]) -> None:
    reg = MatchRegistry(tempfile.mkdtemp(prefix="tablehost-lazy-"), synchronous="NORMAL", evict_after_s=None)
    restarted = None
    try:
        module = reg.upload_module(ADMIN, module_bytes(game), game).sha256
        match_id = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
        for op, pick, _ in ops:
            play(reg, match_id, op, pick)
        restarted = twin_of(reg)
        assert match_id not in restarted._matches  # untimed, nobody the server moves for
        lazy = listed(restarted, match_id)
        assert lazy == listed(reg, match_id)
        assert observed(restarted, match_id) == observed(reg, match_id)
        assert match_id in restarted._matches and listed(restarted, match_id) == lazy
    finally:
        reg.close()
        if restarted is not None:
            restarted.close()


def test_a_restart_resumes_only_what_runs_and_serves_the_rest_on_demand(tmp_path: Path) -> None:
    reg = MatchRegistry(tmp_path / "a", synchronous="NORMAL", evict_after_s=None)
    module = reg.upload_module(ADMIN, module_bytes("tic_tac_toe"), "ttt").sha256
    two = [("ann", ""), ("bob", "")]
    finished = reg.create_match(ADMIN, module, two).match_id
    reg.resign(Principal("seat", finished, 1), finished)
    idle = reg.create_match(ADMIN, module, two).match_id
    play(reg, idle, "move", 3)
    waiting = reg.create_match(ADMIN, module, [("ann", ""), ("", "", True)]).match_id
    aborted = reg.create_match(ADMIN, module, [("ann", ""), ("", "", True)]).match_id
    reg.abort(ADMIN, aborted)
    timed = reg.create_match(ADMIN, module, two, time_control=TimeControl(main_ms=3_600_000)).match_id
    versus_bot = reg.create_match(ADMIN, module, [("ann", ""), ("", "", False, "first")]).match_id
    before = {m: observed(reg, m) for m in (finished, idle, timed, versus_bot)}
    before_list = reg.list_matches(ADMIN)
    reg.close()

    metrics = Metrics()
    again = MatchRegistry(tmp_path / "a", synchronous="NORMAL", evict_after_s=None, metrics=metrics)
    try:
        assert set(again._matches) == {timed} and not again._lobby  # only the running clock
        assert metrics.registry.get_sample_value("tablehost_matches_in_memory") == 1
        assert again.list_matches(ADMIN) == before_list  # from the summaries alone
        assert set(again._matches) == {timed}
        for match_id, seen in before.items():
            now = observed(again, match_id)
            if match_id == timed:  # the clocks ran meanwhile: compare all but them
                for viewer in ("view 1", "view 2", "view None"):
                    now[viewer], seen[viewer] = now[viewer][:2], seen[viewer][:2]
            assert now == seen, match_id
        assert metrics.registry.get_sample_value("tablehost_matches_in_memory") == 4
        # The waiting matches come back into the lobby on their first request.
        spectator = Principal("spectator", waiting)
        assert again.view(spectator, waiting).extras["open_seats"] == [2]
        assert waiting in again._lobby
        assert again.view(Principal("spectator", aborted), aborted).view.status == "aborted"
        _, _, status = again.join(spectator, waiting, "cy")
        assert status == "active" and waiting in again._matches
        # The lazily loaded match against a bot plays on: the bot answers ann's move.
        ann = Principal("seat", versus_bot, 1)
        view = again.view(ann, versus_bot).view
        after = again.submit(ann, versus_bot, view.actions[0]["action"], view.version).view
        assert after.version == view.version + 2
    finally:
        again.close()


def test_a_broken_stored_match_is_left_out_at_startup_and_the_others_served(tmp_path: Path) -> None:
    import sqlite3

    from tablehost.store.sqlite import DB_FILENAME

    reg = MatchRegistry(tmp_path, synchronous="NORMAL", evict_after_s=None)
    module = reg.upload_module(ADMIN, module_bytes("tic_tac_toe"), "ttt").sha256
    good = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
    bad = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
    reg.close()
    with sqlite3.connect(tmp_path / DB_FILENAME) as db:
        db.execute("UPDATE matches SET setup = ? WHERE match_id = ?", ('{"format": "nonsense"}', bad))
    again = MatchRegistry(tmp_path, synchronous="NORMAL", evict_after_s=None)
    try:
        assert [s["match_id"] for s in again.list_matches(ADMIN)] == [good]
        assert not again.view(Principal("spectator", good), good).view.game_over
    finally:
        again.close()


# ------------------------------------------------------------------ lobby eviction


@pytest.fixture
def lobby(tmp_path: Path) -> Any:
    reg = MatchRegistry(tmp_path, synchronous="NORMAL", evict_after_s=60)
    module = reg.upload_module(ADMIN, module_bytes("tic_tac_toe"), "ttt").sha256
    yield reg, module
    reg.close()


def test_an_idle_waiting_match_leaves_the_lobby_and_is_listed_and_joined_as_before(lobby: Any) -> None:
    reg, module = lobby
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("", "", True)]).match_id
    fresh = reg.create_match(ADMIN, module, [("ann", ""), ("", "", True)]).match_id
    listing = reg.list_matches(ADMIN, open_only=True)
    reg._lobby[match_id].used_at -= 61
    assert reg.evict_idle() == 1
    assert match_id not in reg._lobby and fresh in reg._lobby
    assert reg.list_matches(ADMIN, open_only=True) == listing  # listed from its summary
    spectator = Principal("spectator", match_id)
    assert reg.log_history(spectator, match_id, 0, 10) == ([], 0)
    _, token, status = reg.join(spectator, match_id, "bob")
    assert status == "active" and reg.authenticate(token).player_id == 2
    with pytest.raises(SeatTaken):
        reg.join(spectator, match_id, "cy")


def test_an_evicted_waiting_match_can_be_aborted_and_stays_aborted(lobby: Any) -> None:
    reg, module = lobby
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("", "", True)]).match_id
    assert reg.evict_idle(now=reg._lobby[match_id].used_at + 61) == 1
    assert reg.abort(ADMIN, match_id).view.status == "aborted"
    assert reg.evict_idle(now=reg._lobby[match_id].used_at + 61) == 1
    assert [s["status"] for s in reg.list_matches(ADMIN)] == ["aborted"]
    with pytest.raises(SeatTaken):
        reg.join(Principal("spectator", match_id), match_id, "bob")


def test_a_waiting_match_followed_by_a_watch_stream_stays_in_the_lobby(lobby: Any) -> None:
    reg, module = lobby
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("", "", True)]).match_id
    spectator = Principal("spectator", match_id)
    stream = reg.watch(spectator, match_id, lambda: True)
    assert next(stream).view.status == "waiting"
    later = reg._lobby[match_id].used_at + 1_000
    assert reg.evict_idle(now=later) == 0 and match_id in reg._lobby
    reg.join(spectator, match_id, "bob")
    assert next(stream).view.status == "active"  # the stream follows the started match
    stream.close()


A1 = {"type": "space_click", "space_id": "a1"}


def test_an_evicted_waiting_match_refuses_a_move_as_waiting_and_logs_no_resume(lobby: Any) -> None:
    """A move on a waiting match was NOT_FOUND, and each one read the store and logged
    `match.resumed` again for a match already in the lobby."""
    from structlog.testing import capture_logs

    from tablehost.errors import MatchWaiting

    reg, module = lobby
    created = reg.create_match(ADMIN, module, [("ann", ""), ("", "", True)])
    match_id, ann = created.match_id, reg.authenticate(created.seats[0][1])
    with capture_logs() as events, pytest.raises(MatchWaiting) as waiting:
        reg.submit(ann, match_id, A1, 0)
    assert waiting.value.open_seats == [2] and waiting.value.code == "match/waiting"
    assert [e["event"] for e in events if e["event"] == "match.resumed"] == []
    assert reg.evict_idle(now=reg._lobby[match_id].used_at + 61) == 1  # only its summary is left
    with pytest.raises(MatchWaiting):
        reg.undo(ann, match_id, 0)
    reg.join(Principal("spectator", match_id), match_id, "bob")
    assert reg.submit(ann, match_id, A1, 0).view.version == 1


def test_on_a_shared_store_a_match_waiting_or_aborted_in_another_process_is_refused_as_such(
    tmp_path: Path, postgres_url: str
) -> None:
    from tablehost.errors import MatchOver, MatchWaiting, NeverStarted

    first = MatchRegistry(tmp_path / "a", store=postgres_url, evict_after_s=None)
    second = MatchRegistry(tmp_path / "b", store=postgres_url, evict_after_s=None)
    try:
        module = first.upload_module(ADMIN, module_bytes("tic_tac_toe"), "ttt").sha256
        waiting = first.create_match(ADMIN, module, [("ann", ""), ("", "", True)])
        aborted = first.create_match(ADMIN, module, [("ann", ""), ("", "", True)])
        first.abort(ADMIN, aborted.match_id)
        ann = second.authenticate(waiting.seats[0][1])
        with pytest.raises(MatchWaiting):
            second.submit(ann, waiting.match_id, A1, 0)
        with pytest.raises(MatchWaiting):
            second.record(ADMIN, waiting.match_id)
        with pytest.raises(MatchOver):
            second.resign(second.authenticate(aborted.seats[0][1]), aborted.match_id)
        with pytest.raises(NeverStarted):
            second.record(ADMIN, aborted.match_id)
        first.join(Principal("spectator", waiting.match_id), waiting.match_id, "bob")  # started in the first
        assert second.submit(ann, waiting.match_id, A1, 0).view.version == 1
    finally:
        first.close()
        second.close()


def test_on_a_shared_store_an_evicted_waiting_summary_follows_joins_elsewhere(
    tmp_path: Path, postgres_url: str
) -> None:
    first = MatchRegistry(tmp_path / "a", store=postgres_url, evict_after_s=0)
    second = MatchRegistry(tmp_path / "b", store=postgres_url, evict_after_s=None)
    try:
        module = first.upload_module(ADMIN, module_bytes("tic_tac_toe"), "ttt").sha256
        match_id = first.create_match(ADMIN, module, [("", "", True), ("", "", True)]).match_id
        assert first.evict_idle() == 1 and match_id not in first._lobby
        second.join(Principal("spectator", match_id), match_id, "bob")
        first.adopt_matches()
        assert listed(first, match_id)[0]["open_seats"] == [2]
        second.join(Principal("spectator", match_id), match_id, "cy")
        first.adopt_matches()
        summary = listed(first, match_id)[0]
        assert summary["status"] == "active" and summary["open_seats"] == []
    finally:
        first.close()
        second.close()


# ------------------------------------------------------------------ a real server


@pytest.mark.e2e
def test_a_restarted_server_serves_finished_and_idle_matches_it_did_not_load_at_startup(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = ServerProcess(data)
    try:
        with first.client() as admin:
            module_id = admin.upload_module(module_bytes("tic_tac_toe"), "ttt")["module_id"]
            matches = [admin.create_match(module_id, ["ann", "bob"]) for _ in range(3)]
        for created in matches[:2]:  # two finished, one idle after a move
            with first.client(created["seats"][0]["token"]) as ann:
                ann.resign(created["match_id"])
        idle = matches[2]
        with first.client(idle["seats"][0]["token"]) as ann:
            view = ann.view(idle["match_id"])
            ann.submit(idle["match_id"], view["actions"][4]["action"], view["version"])

        def seen(server: ServerProcess) -> dict[str, Any]:
            out: dict[str, Any] = {}
            with server.client() as admin:
                out["list"] = admin.list_matches()
                for created in matches:
                    out[created["match_id"]] = admin.record(created["match_id"])
            for created in matches:
                for seat in created["seats"]:
                    with server.client(seat["token"]) as client:
                        out[seat["token"]] = (client.view(created["match_id"]), client.log(created["match_id"]))
            return out

        before = seen(first)
    finally:
        assert first.stop() == 0
    second = ServerProcess(data, ("--metrics-port", "0"))
    try:
        assert second.proc.stdout is not None
        metrics_url = second.proc.stdout.readline().split()[-1]

        def in_memory() -> float:
            text = urllib.request.urlopen(metrics_url, timeout=10).read().decode()
            return sum(float(line.split()[1]) for line in text.splitlines()
                       if line.startswith("tablehost_matches_in_memory "))

        assert in_memory() == 0
        assert seen(second) == before
        assert in_memory() == 3
    finally:
        assert second.stop() == 0
