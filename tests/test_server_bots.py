"""Server bot seats over gRPC (SeatRequest.bot, ``tablehost create --bot``): the server plays the
seat itself on that seat's view only, its moves are journaled and replay like any other, it has
no token, it plays on after a restart, and bad bot seats are refused before anything runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import orjson
import pytest
import structlog
import structlog.testing

from tablehost.api import server_bots
from tablehost.client import ApiError
from tablehost.guest import GuestPool
from tablehost.module import load_module
from tablehost.record import parse_record, replay
from test_api_server import Host, module_bytes, start_host, stop_host

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    started = start_host(tmp_path / "data")
    yield started
    stop_host(started)


def upload(host: Host, name: str) -> str:
    return str(host.admin.upload_module(module_bytes(name), name)["module_id"])


def replays(host: Host, match_id: str, name: str) -> bool:
    record = parse_record(host.admin.record(match_id))
    module = load_module((DIST / f"{name}.wasm").read_bytes(), name=name)
    # Replay's widened wall clock, as `replay --verify` and a resuming server use: fuel decides,
    # and this process's heap (a whole test session's) can make a collection land inside a call.
    return replay(record, GuestPool(module, module.limits.for_replay())).ok


def test_a_person_plays_tic_tac_toe_against_a_server_mcts_bot(host: Host) -> None:
    created = host.admin.create_match(host.module_id, ["ann", ""], bots={2: "mcts:300"})
    match_id = created["match_id"]
    assert [s["player_id"] for s in created["seats"]] == [1, 2]
    assert created["seats"][1]["token"] == "" and created["seats"][1]["username"] == "bot2"
    ann = host.client(created["seats"][0]["token"])
    view = ann.view(match_id)
    while not view["game_over"]:
        offers = [a for a in view["actions"] if a["intent"] != "undo"]
        assert offers, "the bot has moved: it is ann's turn again"
        before = view["version"]
        moved = ann.submit(match_id, offers[-1]["action"], before)
        assert moved["version"] == before + 1, "the reply answers ann's own move"
        view = moved if moved["game_over"] else wait_for(ann, match_id, before + 2)
    record = host.admin.record(match_id)
    assert record["bots"] == {"2": "mcts:300"}
    movers = [m["player_id"] for m in record["moves"]]
    assert movers.count(2) >= 3 and not any(m.get("by_host") for m in record["moves"])
    assert 1 not in record["result"]["winners"] or len(record["result"]["winners"]) > 1, \
        "300 iterations never lose to the last-offer player"
    assert replays(host, match_id, "tic_tac_toe")


def test_a_bot_seat_moves_first_and_sees_only_its_own_view(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[dict[str, Any], int]] = []
    real = server_bots.SearchBot.choose_in_view

    def spy(self: Any, pool: Any, view: dict[str, Any], offered: Any, player_id: int, *more: Any) -> Any:
        seen.append((view, player_id))
        return real(self, pool, view, offered, player_id, *more)

    monkeypatch.setattr(server_bots.SearchBot, "choose_in_view", spy)
    module_id = upload(host, "hearts")
    created = host.admin.create_match(module_id, ["", "", "", ""], bots={n: "ismcts:3" for n in (1, 2, 3)})
    match_id = created["match_id"]
    people = host.client(created["seats"][3]["token"])
    view = people.view(match_id)
    assert view["version"] > 0, "the bots made their moves at once"
    assert seen
    for bot_view, player_id in seen:
        assert player_id in (1, 2, 3)
        for space in bot_view["spaces"]:
            for piece in space["pieces"]:
                viewer = piece.get("owner") if piece.get("owner") is not None else space.get("owner")
                assert piece.get("private_kind") is None or viewer == player_id, "a bot saw another seat's card"


def test_a_server_of_bots_plays_on_after_a_restart(tmp_path: Path) -> None:
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry

    # First life: no timekeeper, so the bots make exactly one call's worth of moves at creation.
    registry = MatchRegistry(tmp_path / "data", synchronous="NORMAL")
    module = registry.upload_module(ADMIN, module_bytes("hearts"), "hearts")
    created = registry.create_match(ADMIN, module.sha256, [("", "", False, "random")] * 4, {"target_score": 500})
    at_stop = registry.view(ADMIN, created.match_id).view
    assert at_stop.version == server_bots.BOT_MOVES_PER_CALL and not at_stop.game_over
    registry.close()

    # Second life, over gRPC: the timekeeper plays the bot seats on to the end.
    host = start_host(tmp_path / "data")
    try:
        with host.client(created.spectator_token) as spectator:
            deadline = time.monotonic() + 120
            view = spectator.view(created.match_id)
            while not view["game_over"] and time.monotonic() < deadline:
                time.sleep(0.2)
                view = spectator.view(created.match_id)
        assert view["game_over"] and view["version"] > at_stop.version
        assert host.admin.record(created.match_id)["bots"] == {str(n): "random" for n in (1, 2, 3, 4)}
        assert replays(host, created.match_id, "hearts")
    finally:
        stop_host(host)


@pytest.mark.parametrize(("bots", "open_seats", "says"), [
    ({2: "clever"}, [], "unknown bot"),
    ({2: "mcts"}, [], "iterations"),
    ({2: f"mcts:{server_bots.MAX_BOT_ITERATIONS + 1}"}, [], "at most"),
    ({2: "mcts:0"}, [], f"a whole number from 1 to {server_bots.MAX_BOT_ITERATIONS} in ASCII digits"),
    ({2: "ismcts:-3"}, [], f"at most {server_bots.MAX_BOT_ITERATIONS}"),
    ({2: "mcts:"}, [], f"from 1 to {server_bots.MAX_BOT_ITERATIONS} in ASCII digits"),
    ({2: "random"}, [2], "open"),
])
def test_bad_bot_seats_are_refused(host: Host, bots: dict[int, str], open_seats: list[int], says: str) -> None:
    before = len(host.admin.list_matches())
    with pytest.raises(ApiError) as info:
        host.admin.create_match(host.module_id, ["ann", ""], bots=bots, open_seats=open_seats)
    assert info.value.status == grpc.StatusCode.INVALID_ARGUMENT and says in str(info.value)
    assert len(host.admin.list_matches()) == before


@pytest.mark.parametrize(("game", "bot", "says"), [
    ("tic_tac_toe", "ismcts:10", "use mcts:10"),
    ("hearts", "mcts:10", "use ismcts:10"),
])
def test_a_search_of_the_wrong_kind_for_the_game_is_refused(host: Host, game: str, bot: str, says: str) -> None:
    """Without the check the match was created and the bot's every search failed, so it quietly
    played the first offered move."""
    module_id = upload(host, game)
    before = len(host.admin.list_matches())
    players = 4 if game == "hearts" else 2
    with pytest.raises(ApiError) as info:
        host.admin.create_match(module_id, ["ann"] + [""] * (players - 1), bots={2: bot})
    assert info.value.status == grpc.StatusCode.INVALID_ARGUMENT and says in str(info.value)
    assert len(host.admin.list_matches()) == before


def test_a_bot_seat_waits_in_the_lobby_and_moves_once_the_last_seat_is_taken(host: Host) -> None:
    created = host.admin.create_match(host.module_id, ["", ""], bots={1: "first"}, open_seats=[2])
    match_id = created["match_id"]
    assert created["open_seats"] == [2] and created["view"]["status"] == "waiting"
    with host.client(created["spectator_token"]) as invite:
        joined = invite.join(match_id, "bob")
    with host.client(joined["token"]) as bob:
        view = bob.view(match_id)
    assert view["version"] == 1, "the bot (seat 1, first to move) moved when bob's join started the game"
    assert host.admin.record(match_id)["bots"] == {"1": "first"}


def test_the_command_line_reads_bot_seats() -> None:
    from tablehost.cli_remote import parse_seat_bots

    assert parse_seat_bots(["2=mcts:200", " 1 = random "], 2) == {2: "mcts:200", 1: "random"}
    for bad in (["2"], ["x=random"], ["3=random"], ["0=random"], ["1=random", "1=first"], ["1="]):
        with pytest.raises(SystemExit):
            parse_seat_bots(bad, 2)


def test_the_command_line_names_every_seat_or_only_the_seats_people_take() -> None:
    """`create --players 4 --usernames a,b,c --bot 2=mcts:200` was refused (3 usernames for 4
    players): a name was needed for the bot's seat too."""
    from tablehost.cli_remote import seat_usernames

    assert seat_usernames(["a", "b", "c"], 4, {2: "mcts:200"}) == ["a", "", "b", "c"]
    assert seat_usernames(["a", "", "b", "c"], 4, {2: "mcts:200"}) == ["a", "", "b", "c"]
    assert seat_usernames(["a", "robo", "b", "c"], 4, {2: "mcts:200"}) == ["a", "robo", "b", "c"]
    assert seat_usernames(["a", "b"], 2, {}) == ["a", "b"]
    with pytest.raises(SystemExit) as wrong:
        seat_usernames(["a", "b"], 4, {2: "mcts:200"})
    assert str(wrong.value) == (
        "tablehost: --usernames gives 2 names; 4 seats with bot seats 2 take 3 (one per person's seat: "
        "1, 3, 4) or 4 (one per seat, a bot seat's may be empty)"
    )
    with pytest.raises(SystemExit, match="gives 1 name for 2 seats; give one per seat"):
        seat_usernames(["a"], 2, {})


def test_create_names_only_the_seat_a_person_takes(host: Host, capsys: pytest.CaptureFixture[str]) -> None:
    from tablehost import cli

    admin_token = host.registry.admin_token_path.read_text().strip()
    server = ["--address", host.address, "--token", admin_token]
    argv = ["create", host.module_id, "--players", "2", "--usernames", "ann", "--bot", "2=random", "--json"]
    assert cli.main([*argv, *server]) == 0
    created = orjson.loads(capsys.readouterr().out)
    players = host.admin.view(created["match_id"])["state"]["players"]
    assert [(p["player_id"], p["username"]) for p in players] == [(1, "ann"), (2, "bot2")]
    assert cli.main(["create", host.module_id, "--usernames", "ann", "--bot", "2=random", *server]) == 2
    assert "without --players it names every seat" in capsys.readouterr().err


def test_create_open_leaves_open_only_the_seats_nobody_is_named_for(
    host: Host, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the lobby does: ``--open`` seats the named seats and leaves the others (but the bot
    seats) open; it used to open every seat and drop the names."""
    from tablehost import cli

    admin_token = host.registry.admin_token_path.read_text().strip()
    server = ["--address", host.address, "--token", admin_token]
    module_id = upload(host, "hearts")
    capsys.readouterr()  # the server's log of the upload
    argv = ["create", module_id, "--players", "4", "--open", "--usernames", "ann,,", "--bot", "4=random", "--json"]
    assert cli.main([*argv, *server]) == 0
    created = orjson.loads(capsys.readouterr().out)
    assert created["open_seats"] == [2, 3]
    assert [s["username"] for s in created["seats"]] == ["ann", "bot4"]
    everyone = ["create", module_id, "--players", "4", "--open", "--usernames", "ann,bob,cy", "--bot", "4=random"]
    assert cli.main([*everyone, *server]) == 2
    assert "--open leaves no seat open" in capsys.readouterr().err


def test_a_bot_move_the_game_fails_on_is_retried_ever_later_and_fails_no_request(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module whose every step traps, seat 1 a ``random`` bot: creating the match answers it
    (the match exists; create said ABORTED before), the failing move is tried again after 1 s,
    then 2 s... (it was tried at every 0.1 s tick, flooding the log and keeping the module
    quarantined), and another match of the module can still be created."""
    from fixtures_guest import offering_guest_wasm
    from tablehost.api import bot_seats

    monkeypatch.setattr(bot_seats, "BOT_RETRY_FIRST_S", 0.4)
    module_id = host.admin.upload_module(offering_guest_wasm("hostile_trap"), "step_traps")["module_id"]
    with structlog.testing.capture_logs() as logs:
        created = host.admin.create_match(module_id, ["", "bob"], bots={1: "random"})
        time.sleep(2.0)  # tries at about 0, 0.4, 1.2 s; the next at 2.8 s
    failures = [e for e in logs if e["event"] == "bot.move_failed"]
    assert 2 <= len(failures) <= 4, [(e["event"], e.get("retry_in_s")) for e in failures]
    assert [e["retry_in_s"] for e in failures[:3]] == [0.4, 0.8, 1.6][: len(failures[:3])]
    assert all(e["code"] == "guest/trap" and e["version"] == 0 for e in failures)
    assert not [e for e in logs if e["event"] == "clock.tick_failed"]
    assert host.admin.view(created["match_id"])["version"] == 0
    assert host.admin.create_match(module_id, ["ann", "bob"])["match_id"], "the module is not quarantined"


def test_a_slow_bot_turn_is_played_a_budget_at_a_time_not_all_in_one_request(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot seat played in the request (random, first) whose turn is many moves plays at least
    one move per request or tick, then stops at the budget; the timekeeper plays on. (Searches
    run on the bot thread instead: test_a_long_search_holds_no_request_of_its_match.)"""
    from tablehost.api import registry as registry_module

    created = host.admin.create_match(host.module_id, ["ann", ""], bots={2: "random"})
    live = host.registry._matches[created["match_id"]]
    calls: list[float] = []

    def slow_move(match: Any, max_moves: int = 1, **_: Any) -> int:
        calls.append(time.monotonic())
        time.sleep(0.1)  # one search
        return 1  # "a move was made": the budget, not the game, ends the turn

    monkeypatch.setattr(registry_module, "BOT_TURN_BUDGET_S", 0.2)
    monkeypatch.setattr(registry_module, "play_bots", slow_move)
    with live.changed:
        assert host.registry._play_bots(live)
    assert 1 <= len(calls) <= 3  # not BOT_MOVES_PER_CALL (256) searches in one go
    calls.clear()
    monkeypatch.setattr(registry_module, "BOT_TURN_BUDGET_S", 0.0)
    with live.changed:
        assert host.registry._play_bots(live)
    assert len(calls) == 1  # always one move, so a bot's turn always goes on


class HeldSearch:
    """A search bot's search that starts, then waits for the test to let it answer."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, iterations: int = 50) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.released: list[bool] = []
        self.calls = 0  # searches of ``iterations`` started, in every registry of this process
        real = server_bots.SearchBot.choose_in_view

        def held(bot: Any, pool: Any, view: dict[str, Any], offered: Any, player_id: int, *more: Any) -> Any:
            if bot.iterations == iterations:  # other bots search as usual
                self.calls += 1
                self.started.set()
                self.released.append(self.release.wait(timeout=8))
            return real(bot, pool, view, offered, player_id, *more)

        monkeypatch.setattr(server_bots.SearchBot, "choose_in_view", held)


def wait_for(client: Any, match_id: str, version: int) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    view = client.view(match_id)
    while view["version"] < version and time.monotonic() < deadline:
        time.sleep(0.05)
        view = client.view(match_id)
    return dict(view)


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_a_long_search_holds_no_request_of_its_match(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """While a server bot searches (ismcts:5000 on risk: about 50 s a decision), the seat that just
    moved, a spectator and the admin are answered (on PostgreSQL too, where a change also holds
    the match in the store); the bot's move lands afterwards, at the version it searched, and the
    match replays."""
    url = request.getfixturevalue("postgres_url") if store == "postgresql" else None
    host = start_host(tmp_path / "data", store=url)
    try:
        searched_off_the_lock(host, monkeypatch)
    finally:
        stop_host(host)


def searched_off_the_lock(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    from tablehost.api import registry as registry_module

    monkeypatch.setattr(registry_module, "BOT_REPLY_WAIT_S", 0.2)
    search = HeldSearch(monkeypatch)
    created = host.admin.create_match(host.module_id, ["ann", ""], bots={2: "mcts:50"})
    match_id = created["match_id"]
    ann = host.client(created["seats"][0]["token"])
    spectator = host.client(created["spectator_token"])
    view = ann.view(match_id)
    moved = ann.submit(match_id, view["actions"][0]["action"], view["version"])
    assert search.started.wait(timeout=5), "the bot was asked for its decision"
    # The search is running: without the bot thread the submit above would still be waiting.
    assert moved["version"] == 1 and not [a for a in moved["actions"] if a["intent"] != "undo"]
    assert ann.view(match_id)["version"] == 1
    assert spectator.view(match_id)["version"] == 1
    assert len(host.admin.record(match_id)["moves"]) == 1
    search.release.set()
    after = wait_for(ann, match_id, 2)
    assert search.released == [True], "the search answered when the test let it, not at its timeout"
    assert after["version"] == 2 and [a for a in after["actions"] if a["intent"] != "undo"]
    assert [m["player_id"] for m in host.admin.record(match_id)["moves"]] == [1, 2]
    assert replays(host, match_id, "tic_tac_toe")


def test_a_quick_bot_does_not_wait_behind_a_long_search(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    """One match's bot searches long (held here); another match's bot, of a kind whose decisions
    have been quick, answers its seat at once: it has a lane of its own."""
    search = HeldSearch(monkeypatch)
    slow = host.admin.create_match(host.module_id, ["ann", ""], bots={2: "mcts:50"})
    ann = host.client(slow["seats"][0]["token"])
    view = ann.view(slow["match_id"])
    ann.submit(slow["match_id"], view["actions"][0]["action"], view["version"])
    assert search.started.wait(timeout=5)
    module = host.registry._pool(host.module_id).module.sha256
    host.registry._thinker.took((module, "mcts:20"), 0.01)  # as if it had decided quickly before
    quick = host.admin.create_match(host.module_id, ["bob", ""], bots={2: "mcts:20"})
    bob = host.client(quick["seats"][0]["token"])
    view = bob.view(quick["match_id"])
    bob.submit(quick["match_id"], view["actions"][0]["action"], view["version"])
    assert wait_for(bob, quick["match_id"], 2)["version"] == 2, "the quick bot answered"
    assert ann.view(slow["match_id"])["version"] == 1 and not search.released, "the long search still runs"
    search.release.set()
    assert wait_for(ann, slow["match_id"], 2)["version"] == 2


def test_a_move_is_answered_once_it_is_durable_and_the_bots_answer_comes_by_watch(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SubmitAction waited up to BOT_REPLY_WAIT_S (1 s) for a search bot's answer, holding a gRPC
    worker thread: a quick bot's move came back in the reply (version 2), a slow bot's reply took a
    second. The reply now answers the person's own move as soon as it is durable, whatever the
    bot; the bot's move reaches the person through watch, as it reaches everyone else."""
    search = HeldSearch(monkeypatch)
    slow = host.admin.create_match(host.module_id, ["ann", ""], bots={2: "mcts:50"})
    match_id = slow["match_id"]
    ann = host.client(slow["seats"][0]["token"])
    watch = ann.watch(match_id)
    assert next(watch)["version"] == 0
    offer = ann.view(match_id)["actions"][0]
    moved = ann.submit(match_id, offer["action"], 0)
    assert search.released == [], "the reply came back while the bot still searched"
    assert moved["version"] == 1 and not [a for a in moved["actions"] if a["intent"] != "undo"]
    assert [m["player_id"] for m in host.admin.record(match_id)["moves"]] == [1], "ann's move is stored"
    search.release.set()
    seen = [next(watch)]
    while seen[-1]["version"] < 2:
        seen.append(next(watch))
    watch.close()
    assert seen[-1]["version"] == 2 and [a for a in seen[-1]["actions"] if a["intent"] != "undo"]
    assert search.released == [True]

    quick = host.admin.create_match(host.module_id, ["bob", ""], bots={2: "mcts:20"})  # searched unheld
    bob = host.client(quick["seats"][0]["token"])
    offer = bob.view(quick["match_id"])["actions"][0]
    moved = bob.submit(quick["match_id"], offer["action"], 0)
    assert moved["version"] == 1, "the reply is bob's own move's, never the bot's answer too"
    assert wait_for(bob, quick["match_id"], 2)["version"] == 2
    for client in (ann, bob):
        client.close()


def test_a_decision_the_match_moved_past_is_dropped(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot's decision searched on a version the match has left (here: the admin aborted it
    meanwhile) is refused and changes nothing."""
    from tablehost.api import registry as registry_module

    monkeypatch.setattr(registry_module, "BOT_REPLY_WAIT_S", 0.0)
    search = HeldSearch(monkeypatch)
    created = host.admin.create_match(host.module_id, ["ann", ""], bots={2: "mcts:50"})
    match_id = created["match_id"]
    ann = host.client(created["seats"][0]["token"])
    view = ann.view(match_id)
    ann.submit(match_id, view["actions"][0]["action"], view["version"])
    assert search.started.wait(timeout=5)
    host.admin.abort(match_id)
    search.release.set()
    deadline = time.monotonic() + 10
    while host.registry._thinker.busy_with(match_id) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not host.registry._thinker.busy_with(match_id)
    record = host.admin.record(match_id)
    assert [m["player_id"] for m in record["moves"]] == [1]
    assert ann.view(match_id)["game_over"]
    assert host.registry._matches[match_id].pins == 0, "the bot thread let go of the match"


@pytest.mark.parametrize("search_answer", [
    {"action": {"type": "space_click", "space_id": "b"}},  # not offered: only "a" is
    b"\xff not json",
    {"error": {"code": "no_action", "message": "refuses to decide"}},
])
def test_a_hostile_search_answer_plays_the_hosts_choice_and_holds_nothing(host: Host, search_answer: Any) -> None:
    """A module whose search answers something not offered, garbage or a refusal: the bot thread
    logs it and plays the host's choice (the first ``confirm``), checked like any move; the server
    and the match go on."""
    from scripted_guest import scripted_guest

    metadata = {"metadata": {"min_players": 2, "max_players": 2, "hidden_information": False}}
    wasm = scripted_guest(more={6: metadata, 8: search_answer})
    module_id = host.admin.upload_module(wasm, "hostile-search")["module_id"]
    with structlog.testing.capture_logs() as logs:
        created = host.admin.create_match(module_id, ["", "bob"], bots={1: "mcts:10"})
        match_id = created["match_id"]
        bob = host.client(created["seats"][1]["token"])
        view = wait_for(bob, match_id, 1)
    assert [e["player_id"] for e in logs if e["event"] == "bot.search_failed"] == [1]
    assert view["version"] == 1 and [a["action"] for a in view["actions"]] == [{"type": "space_click", "space_id": "b"}]
    assert [m["player_id"] for m in host.admin.record(match_id)["moves"]] == [1]
    assert not host.registry._thinker.busy_with(match_id)


def test_a_decision_still_offered_after_another_seat_moved_is_played(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hearts' passing is simultaneous: the person moving while bot seat 1 searches does not
    make the bot drop its decision; its action is still offered, so it is played at the new
    version (a person faster than the search would otherwise stall every bot)."""
    from tablehost.api import registry as registry_module

    monkeypatch.setattr(registry_module, "BOT_REPLY_WAIT_S", 0.0)
    search = HeldSearch(monkeypatch, iterations=3)
    module_id = upload(host, "hearts")
    with structlog.testing.capture_logs() as logs:
        created = host.admin.create_match(module_id, ["", "", "", "dee"], bots={n: "ismcts:3" for n in (1, 2, 3)})
        match_id = created["match_id"]
        assert search.started.wait(timeout=5)
        dee = host.client(created["seats"][3]["token"])
        view = dee.view(match_id)
        offers = [a for a in view["actions"] if a["intent"] != "undo"]
        assert view["version"] == 0 and offers, "everyone passes at once; the bots have not moved yet"
        dee.submit(match_id, offers[0]["action"], 0)
        search.release.set()
        wait_for(dee, match_id, 2)
    movers = [m["player_id"] for m in host.admin.record(match_id)["moves"]]
    assert movers[:2] == [4, 1], "the bot's decision, searched at version 0, was played at version 1"
    assert not [e for e in logs if e["event"] == "bot.decision_dropped"]


def test_a_decision_the_seat_itself_played_meanwhile_is_never_played_again() -> None:
    """Hearts' passing: a choice clicked again takes itself back. A decision searched twice (by
    two processes) whose seat already played it is refused as stale, not played at the newer
    version where it is still offered; another seat's decision of the same version still stands."""
    from tablehost.history import PlayerInfo
    from tablehost.match import Match

    pool = GuestPool(load_module(module_bytes("hearts")))
    players = [PlayerInfo(n, f"p{n}", "") for n in (1, 2, 3, 4)]
    match = Match.start(pool, players, match_id="m-twice", seed=7, bots={1: "ismcts:3", 2: "ismcts:3"})
    first, second = server_bots.take_decision(match, 1), server_bots.take_decision(match, 2)
    assert first is not None and second is not None and first.version == second.version == 0
    choice = first.offered[0]
    match.submit_view_action(1, choice["action"], expected_version=0)  # as the other process did
    again = server_bots.take_decision(match, 1)
    assert again is not None and any(a["action"] == choice["action"] for a in again.offered), (
        "the same click is offered again (it would take the card back)"
    )
    assert server_bots.version_to_play(match, first, choice) == 0, "stale: the seat moved since"
    assert server_bots.version_to_play(match, second, second.offered[0]) == 1, "another seat's move"


def test_ending_a_match_stops_its_bots_running_search(host: Host) -> None:
    """An aborted match's search is cancelled within about one poll (CANCEL_POLL_MS), not run to
    the end of its budget (ismcts:5000 on risk: about 50 s), so the long lane is free again."""
    module_id = upload(host, "risk")
    with structlog.testing.capture_logs() as logs:
        created = host.admin.create_match(module_id, ["", ""], bots={1: "ismcts:5000", 2: "ismcts:5000"})
        match_id = created["match_id"]
        lane = host.registry._thinker._lanes["long"]
        deadline = time.monotonic() + 10
        while lane.running != match_id and time.monotonic() < deadline:
            time.sleep(0.01)
        assert lane.running == match_id, "a bot is searching"
        time.sleep(0.3)
        at_abort = host.admin.abort(match_id)["version"]
        aborted = time.monotonic()
        while host.registry._thinker.busy_with(match_id) and time.monotonic() < aborted + 20:
            time.sleep(0.01)
        stopped_after = time.monotonic() - aborted
    assert not host.registry._thinker.busy_with(match_id)
    assert stopped_after < 5, f"the search went on {stopped_after:.1f} s after the abort"
    assert [e["event"] for e in logs if e["event"].startswith("bot.")] == ["bot.search_cancelled"]
    assert host.admin.view(match_id)["version"] == at_abort, "nothing was played after the abort"


PER_MOVE_MS = 2000
"""The per-move clock of the timed bot matches below (room for a loaded machine's first move)."""


def clocks_of(view: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {c["player_id"]: c for c in view["clocks"]}


def watch_to_the_end(client: Any, match_id: str) -> dict[str, Any]:
    final: dict[str, Any] = {}
    for view in client.watch(match_id):
        final = view
    return final


def test_a_bot_seats_clock_does_not_run_while_its_search_waits(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    """A timed bot seat whose decision waits (behind another match's long search, held here)
    shows a stopped clock and never times out, past its whole time; once it moved, the person's
    clock runs and times out as before. (Before: the bot's clock ran from its turn and the
    match ended on the bot's time while its search was queued.)"""
    from tablehost.api import registry as registry_module

    monkeypatch.setattr(registry_module, "BOT_REPLY_WAIT_S", 0.0)
    search = HeldSearch(monkeypatch)
    created = host.admin.create_match(
        host.module_id, ["ann", ""], bots={2: "mcts:50"}, time_control={"per_move_ms": PER_MOVE_MS}
    )
    match_id = created["match_id"]
    ann = host.client(created["seats"][0]["token"])
    spectator = host.client(created["spectator_token"])
    view = ann.view(match_id)
    assert clocks_of(view)[2] == {"player_id": 2, "remaining_ms": PER_MOVE_MS, "running": False}
    ann.submit(match_id, view["actions"][0]["action"], view["version"])
    assert search.started.wait(timeout=5)
    time.sleep(PER_MOVE_MS / 1000 + 0.5)  # past the bot's time, a few ticks of the timekeeper
    held = spectator.view(match_id)
    assert not search.released, "the search is still held"
    assert not held["game_over"] and held["version"] == 1, held.get("result")
    assert clocks_of(held)[2] == {"player_id": 2, "remaining_ms": PER_MOVE_MS, "running": False}
    assert not clocks_of(held)[1]["running"]
    search.release.set()
    after = wait_for(spectator, match_id, 2)
    assert clocks_of(after)[1]["running"] and not clocks_of(after)[2]["running"]
    final = watch_to_the_end(spectator, match_id)  # ann does not move: her clock runs out
    assert final["result"]["ended_by"] == "timeout" and final["result"]["player_id"] == 1
    assert clocks_of(final)[1]["remaining_ms"] == 0 and clocks_of(final)[2]["remaining_ms"] == PER_MOVE_MS
    assert replays(host, match_id, "tic_tac_toe")


def test_in_hearts_passing_the_persons_clock_runs_and_the_bots_do_not(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hearts' passing is simultaneous: every seat is active, yet only the person's clock runs;
    the bots (one searching, held; the others queued behind it) keep their time, and the person
    times out alone."""
    from tablehost.api import registry as registry_module

    monkeypatch.setattr(registry_module, "BOT_REPLY_WAIT_S", 0.0)
    search = HeldSearch(monkeypatch, iterations=3)
    module_id = upload(host, "hearts")
    created = host.admin.create_match(
        module_id, ["", "", "", "dee"], bots={n: "ismcts:3" for n in (1, 2, 3)},
        time_control={"per_move_ms": PER_MOVE_MS},
    )
    match_id = created["match_id"]
    assert search.started.wait(timeout=5)
    dee = host.client(created["seats"][3]["token"])
    view = dee.view(match_id)
    assert view["version"] == 0 and sorted(view["active_player_ids"]) == [1, 2, 3, 4]
    assert [(c["player_id"], c["running"]) for c in view["clocks"]] == [(1, False), (2, False), (3, False), (4, True)]
    final = watch_to_the_end(dee, match_id)
    search.release.set()
    assert final["result"]["ended_by"] == "timeout" and final["result"]["player_id"] == 4
    assert [c["remaining_ms"] for c in final["clocks"]] == [PER_MOVE_MS] * 3 + [0]


def test_a_second_process_on_postgresql_computes_the_same_bot_clocks(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clocks another process rebuilds from the stored moves agree with the first one's:
    the bot seat's clock stopped there too (the bot seats are read off the stored match), so its
    ticks never time the bot out; the person's clock runs in both."""
    from tablehost.api import registry as registry_module
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry

    monkeypatch.setattr(registry_module, "BOT_REPLY_WAIT_S", 0.0)
    search = HeldSearch(monkeypatch)
    first = start_host(tmp_path / "first", store=postgres_url)
    second = MatchRegistry(tmp_path / "second", store=postgres_url)  # no timekeeper: ticked below
    second._thinker.close()  # the first process's search is the one held; this one asks none
    try:
        created = first.admin.create_match(
            first.module_id, ["ann", ""], bots={2: "mcts:50"}, time_control={"per_move_ms": PER_MOVE_MS}
        )
        match_id = created["match_id"]
        ann = first.client(created["seats"][0]["token"])
        view = ann.view(match_id)
        ann.submit(match_id, view["actions"][0]["action"], view["version"])
        assert search.started.wait(timeout=5)
        time.sleep(PER_MOVE_MS / 1000 + 0.5)  # past the bot's time
        here = first.admin.view(match_id)["clocks"]
        there = second.view(ADMIN, match_id)
        assert there.view.version == 1
        assert there.extras["clocks"] == here, "every clock stopped: both processes show them alike"
        assert {c["player_id"]: c["running"] for c in here} == {1: False, 2: False}
        assert second.tick_clocks() == 0, "the second process does not time the bot out"
        assert not second.store.load_record(match_id).get("ending")
        search.release.set()
        wait_for(first.admin, match_id, 2)
        deadline = time.monotonic() + 5
        while second.view(ADMIN, match_id).view.version < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        there = {c["player_id"]: c for c in second.view(ADMIN, match_id).extras["clocks"]}
        here_now = clocks_of(first.admin.view(match_id))
        assert there[2] == here_now[2] == {"player_id": 2, "remaining_ms": PER_MOVE_MS, "running": False}
        assert there[1]["running"] and here_now[1]["running"]
        assert abs(there[1]["remaining_ms"] - here_now[1]["remaining_ms"]) < 500
    finally:
        search.release.set()
        second.close()
        stop_host(first)


def test_two_processes_never_search_one_decision_and_a_dead_holders_is_taken_over(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On one PostgreSQL database each process's tick finds the bot seat to move: the second
    leaves the decision to the first, whose search holds the match's search lock, and asks no
    more while the version stands. The lock goes with its holder's connection (a dead process):
    the second then searches, and of the two moves only the first stored stands."""
    from tablehost.api import bot_seats
    from tablehost.api import registry as registry_module
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry

    monkeypatch.setattr(registry_module, "BOT_REPLY_WAIT_S", 0.0)
    monkeypatch.setattr(bot_seats, "SEARCHED_ELSEWHERE_RECHECK_S", 0.3)
    search = HeldSearch(monkeypatch)
    first = start_host(tmp_path / "first", store=postgres_url)
    second = MatchRegistry(tmp_path / "second", store=postgres_url)  # no timekeeper: ticked below
    try:
        created = first.admin.create_match(first.module_id, ["ann", ""], bots={2: "mcts:50"})
        match_id = created["match_id"]
        ann = first.client(created["seats"][0]["token"])
        view = ann.view(match_id)
        ann.submit(match_id, view["actions"][0]["action"], view["version"])
        assert search.started.wait(timeout=5) and search.calls == 1
        assert second.view(ADMIN, match_id).view.version == 1
        for _ in range(3):  # ticks within the recheck time: asked once, refused the lock, no more
            second.tick_clocks()
            time.sleep(0.05)
        deadline = time.monotonic() + 5
        while second._thinker.busy_with(match_id) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert search.calls == 1, "the second process searched a decision the first is searching"
        assert second._bots._elsewhere[match_id][0] == 1
        first.registry.store._search_conn.close()  # as the first process's death would end it
        time.sleep(0.35)
        deadline = time.monotonic() + 5
        while search.calls < 2 and time.monotonic() < deadline:
            second.tick_clocks()
            time.sleep(0.05)
        assert search.calls == 2, "the freed decision was taken over"
        search.release.set()
        wait_for(first.admin, match_id, 2)
        deadline = time.monotonic() + 5
        while (first.registry._thinker.busy_with(match_id) or second._thinker.busy_with(match_id)) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.02)
        moves = first.registry.store.load_record(match_id)["moves"]
        assert [(m["seq"], m["player_id"]) for m in moves] == [(1, 1), (2, 2)], "the bot's move, once"
    finally:
        search.release.set()
        second.close()
        stop_host(first)


def test_a_restarted_server_keeps_a_bot_seats_clock_stopped(tmp_path: Path) -> None:
    """After a restart (the timed match resumed from the store at startup) the bot seat to move
    still has a stopped clock, and a tick a minute past its time does not time it out."""
    from tablehost.api.auth import ADMIN
    from tablehost.api.registry import MatchRegistry
    from tablehost.clocks import TimeControl, now_ms

    registry = MatchRegistry(tmp_path / "data", synchronous="NORMAL")
    registry._thinker.close()  # the bot (seat 1, first to move) takes no decision in either life
    module = registry.upload_module(ADMIN, module_bytes("tic_tac_toe"), "tic_tac_toe")
    seats = [("", "", False, "mcts:50"), ("bob", "", False, "")]
    created = registry.create_match(ADMIN, module.sha256, seats, time_control=TimeControl(per_move_ms=PER_MOVE_MS))
    registry.close()

    restarted = MatchRegistry(tmp_path / "data", synchronous="NORMAL")
    restarted._thinker.close()
    try:
        assert created.match_id in restarted._matches, "resumed at startup: its clocks run"
        served = restarted.view(ADMIN, created.match_id)
        assert served.view.version == 0 and served.view.active_player_ids == [1]
        assert served.extras["clocks"][0] == {"player_id": 1, "remaining_ms": PER_MOVE_MS, "running": False}
        assert restarted.tick_clocks(at_ms=now_ms() + 60_000) == 0
        assert not restarted.view(ADMIN, created.match_id).view.game_over
    finally:
        restarted.close()
