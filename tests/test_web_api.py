"""The HTTP/JSON API and event stream of the web table, against a real uvicorn server on loopback."""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tablehost.api.auth import Principal
from tablehost.errors import GuestPanic, NotOffered, TablehostError
from tablehost.web.wire import error_body, http_status
from web_support import WebTable, read_events, web_table


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebTable]:
    with web_table(tmp_path_factory.mktemp("web")) as table:
        yield table


def _all_error_classes() -> list[type[TablehostError]]:
    found, todo = [], [TablehostError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_error_code_has_a_client_error_status_but_unknown_ones() -> None:
    import tablehost.api.faults  # noqa: F401 - registers the API's error classes

    for cls in _all_error_classes():
        if cls.code in ("tablehost/error",):
            continue
        status = http_status(cls.code)
        assert 400 <= status < 600, cls.code
    assert http_status("auth/unauthenticated") == 401
    assert http_status("auth/permission_denied") == 403
    assert http_status("match/unknown") == 404
    assert http_status("match/not_offered") == 409
    assert http_status("something/new") == 500


def test_a_guest_failure_reaches_players_as_its_code_only() -> None:
    body = error_body(GuestPanic("panicked at src/lib.rs: hand-2 holds QS", printed="QS"))
    assert body["error"]["code"] == "guest/panic"
    assert "QS" not in orjson.dumps(body).decode()
    assert "QS" in error_body(GuestPanic("hand-2 holds QS"), admin=True)["error"]["message"]
    refused = error_body(NotOffered("not offered"))
    assert refused == {"error": {"code": "match/not_offered", "message": "not offered"}}


def test_pages_and_static_files_carry_the_content_security_policy(web: WebTable) -> None:
    with httpx.Client(base_url=web.url) as anonymous:
        for path in ("/", "/table", "/static/render.js", "/static/rules-worker.js", "/static/style.css"):
            response = anonymous.get(path)
            assert response.status_code == 200, path
            assert "script-src 'self' 'wasm-unsafe-eval'" in response.headers["content-security-policy"]
            assert response.headers["referrer-policy"] == "no-referrer"


def test_an_unknown_api_route_or_method_answers_the_apis_json_error(web: WebTable) -> None:
    """GET /api/nope answered Starlette's plain-text `Not Found`, unlike every other API refusal."""
    with httpx.Client(base_url=web.url) as anonymous:
        nope = anonymous.get("/api/nope")
        assert nope.status_code == 404 and nope.headers["content-type"] == "application/json"
        assert nope.json() == {"error": {"code": "request/unknown_route",
                                         "message": "no API endpoint has the path '/api/nope'"}}
        for path in ("/api", "/api/", "/api/matches/m-1/nope", "/api/" + "x" * 5000):
            unknown = anonymous.post(path)
            assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "request/unknown_route", path
            assert len(unknown.text) < 300, "a long path is not echoed whole"
        wrong = anonymous.delete("/api/modules")
        assert wrong.status_code == 405 and wrong.headers["allow"] == "GET, HEAD, POST"
        assert wrong.json() == {"error": {"code": "request/method_not_allowed",
                                          "message": "'/api/modules' takes GET, HEAD, POST, not 'DELETE'"}}
        get_actions = anonymous.get("/api/matches/m-1/actions")
        assert get_actions.status_code == 405 and get_actions.headers["allow"] == "POST"
        assert "script-src 'self'" in get_actions.headers["content-security-policy"]
        page = anonymous.get("/nope")
        assert page.status_code == 404 and page.text == "Not Found", "pages keep a plain answer"
        assert anonymous.get("/static/nope.js").status_code == 404
        assert anonymous.post("/table").status_code == 405


def test_every_api_call_needs_a_known_bearer_token(web: WebTable) -> None:
    with httpx.Client(base_url=web.url) as anonymous:
        assert anonymous.get("/api/modules").status_code == 401
        assert anonymous.get("/api/modules", headers={"authorization": "Bearer ths_nope"}).json() == {
            "error": {"code": "auth/unauthenticated", "message": "unknown token"}
        }
        assert anonymous.get("/api/modules", headers={"authorization": "Basic abc"}).status_code == 401


def test_two_authorization_headers_are_refused_whatever_they_say(web: WebTable) -> None:
    """The first of two Authorization headers was used (admin then seat: the admin's view);
    two are ambiguous, so every API path, the event stream included, answers 401."""
    created = web.create("tic_tac_toe")
    match_id, seat = created["match_id"], created["seats"][0]["token"]
    paths = ["/api/whoami", "/api/modules", "/api/matches", f"/api/matches/{match_id}/view",
             f"/api/matches/{match_id}/events", f"/api/matches/{match_id}/module"]
    with httpx.Client(base_url=web.url, timeout=10) as anonymous:
        for first, second in [(web.admin_token, seat), (seat, web.admin_token), (seat, seat)]:
            headers = [("authorization", f"Bearer {first}"), ("authorization", f"Bearer {second}")]
            for path in paths:
                answer = anonymous.get(path, headers=headers)
                assert answer.status_code == 401, path
                assert answer.json()["error"] == {
                    "code": "auth/unauthenticated",
                    "message": "the request carries 2 'Authorization' headers; send exactly one "
                    "'Authorization: Bearer <token>'",
                }, path
            acted = anonymous.post(f"/api/matches/{match_id}/actions", headers=headers,
                                   json={"action": {"type": "space_click", "space_id": "a1"}, "expected_version": 0})
            assert acted.status_code == 401
        one = anonymous.get(f"/api/matches/{match_id}/view", headers={"authorization": f"Bearer {seat}"})
        assert one.status_code == 200 and one.json()["version"] == 0, "nothing was played; one header is served"


def test_http_create_takes_no_time_control_and_says_so(web: WebTable) -> None:
    """The HTTP API has no time control (CreateMatch over gRPC has): a body that sends one,
    valid or not (an increment alone, an unknown policy), is refused, never made untimed."""
    module_id = web.modules["tic_tac_toe"]
    with web.client(web.admin_token) as admin:
        before = len(admin.get("/api/matches").json())
        for control in ({"increment_ms": 5000}, {"main_ms": 60_000, "on_timeout": 7}):
            refused = admin.post("/api/matches", json={"module_id": module_id, "seats": [{}, {}], "time_control": control})
            assert refused.status_code == 400 and refused.json()["error"]["code"] == "request/invalid"
            assert "no key 'time_control'" in refused.json()["error"]["message"]
        assert len(admin.get("/api/matches").json()) == before


def test_only_the_admin_creates_matches_and_uploads(web: WebTable) -> None:
    created = web.create("tic_tac_toe")
    with web.client(created["seats"][0]["token"]) as seat:
        refused = seat.post("/api/matches", json={"module_id": web.modules["tic_tac_toe"], "seats": [{}, {}]})
        assert refused.status_code == 403
        assert seat.post("/api/modules?name=x", content=b"\0asm").status_code == 403
    with web.client(web.admin_token) as admin:
        bad = admin.post("/api/matches", json={"module_id": web.modules["tic_tac_toe"], "seats": "two"})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "request/invalid"
        assert admin.post("/api/modules?name=junk", content=b"not wasm").status_code == 400
        assert admin.post("/api/matches", content=b"{").status_code == 400
        big = admin.post("/api/matches", content=b" " * (70 * 1024))
        assert big.status_code == 413 and "over" in big.json()["error"]["message"]
        huge = admin.post("/api/modules?name=huge", content=b"\0" * (web.registry.limits.module_bytes + 1))
        assert huge.status_code == 413 and huge.json()["error"]["code"] == "request/invalid"
        assert "over" in huge.json()["error"]["message"]
        from tablehost.api.registry import EMPTY_MODULE

        empty = admin.post("/api/modules?name=empty", content=b"")
        assert empty.status_code == 400 and empty.json()["error"]["message"] == EMPTY_MODULE


def test_a_seat_gets_exactly_the_registry_view_of_its_seat(web: WebTable) -> None:
    created = web.create("hearts")
    match_id = created["match_id"]
    for seat in created["seats"]:
        with web.client(seat["token"]) as client:
            body = client.get(f"/api/matches/{match_id}/view").json()
        served = web.registry.view(Principal("seat", match_id, seat["player_id"]), match_id)
        assert body["viewer"] == seat["player_id"]
        assert body["state"] == served.view.state
        assert body["actions"] == served.view.actions
        assert body["scores"] == served.view.scores
    with web.client(created["spectator_token"]) as spectator:
        body = spectator.get(f"/api/matches/{match_id}/view").json()
    assert body["viewer"] is None and body["actions"] == []


def test_a_hearts_seat_never_receives_another_seats_cards(web: WebTable) -> None:
    created = web.create("hearts")
    match_id = created["match_id"]
    web.play_randomly(created, 14, seed=3)  # through passing into the first tricks
    state = web.registry._matches[match_id].match.state  # the full table, for the check only
    hidden_from = {seat["player_id"]: set[str]() for seat in created["seats"]}
    for space in state["spaces"]:
        for piece in space["pieces"]:
            viewer = piece["owner"] if piece["owner"] is not None else space["owner"]
            if piece["private_kind"] and piece["public_kind"] == "back":
                for pid, hidden in hidden_from.items():
                    if pid != viewer:
                        hidden.add(piece["private_kind"])
    for seat in created["seats"]:
        with web.client(seat["token"]) as client:
            body = client.get(f"/api/matches/{match_id}/view").json()
        shown = {
            piece.get("private_kind")
            for space in body["state"]["spaces"]
            for piece in space["pieces"]
            if piece.get("private_kind")
        }
        assert hidden_from[seat["player_id"]], "the deal hides cards from every seat"
        assert not shown & hidden_from[seat["player_id"]]


def test_moves_undo_and_refusals(web: WebTable) -> None:
    created = web.create("tic_tac_toe")
    match_id = created["match_id"]
    first, second = (web.client(s["token"]) for s in created["seats"])
    with first, second:
        path = f"/api/matches/{match_id}"
        view = first.get(f"{path}/view").json()
        assert view["version"] == 0
        moved = first.post(
            f"{path}/actions", json={"action": {"type": "space_click", "space_id": "b2"}, "version": 0}
        )
        assert moved.status_code == 200 and moved.json()["version"] == 1
        b2 = next(s for s in moved.json()["state"]["spaces"] if s["space_id"] == "b2")
        assert b2["pieces"][0]["public_kind"] == "x"
        stale = second.post(
            f"{path}/actions", json={"action": {"type": "space_click", "space_id": "a1"}, "version": 0}
        )
        assert stale.status_code == 409 and stale.json()["error"]["code"] == "match/stale_version"
        taken = second.post(
            f"{path}/actions", json={"action": {"type": "space_click", "space_id": "b2"}, "version": 1}
        )
        assert taken.status_code == 409 and taken.json()["error"]["code"] == "match/not_offered"
        not_yours = first.post(
            f"{path}/actions", json={"action": {"type": "space_click", "space_id": "a1"}, "version": 1}
        )
        assert not_yours.json()["error"]["code"] == "match/not_your_turn"
        assert first.post(f"{path}/actions", json={"action": "b2", "version": 1}).status_code == 400
        assert first.post(f"{path}/actions", json={"action": {}, "version": -1}).status_code == 400
        undo = first.post(f"{path}/undo", json={"version": 1})
        assert undo.status_code in (200, 409)
        with web.client(created["spectator_token"]) as spectator:
            acted = spectator.post(
                f"{path}/actions", json={"action": {"type": "space_click", "space_id": "a1"}, "version": 1}
            )
            assert acted.status_code == 403


def test_another_matchs_token_sees_nothing_of_this_match(web: WebTable) -> None:
    one, two = web.create("tic_tac_toe"), web.create("tic_tac_toe")
    with web.client(one["seats"][0]["token"]) as client:
        for suffix in ("view", "module", "events"):
            response = client.get(f"/api/matches/{two['match_id']}/{suffix}")
            assert response.status_code == 403, suffix
        listed = client.get("/api/matches").json()
        assert [m["match_id"] for m in listed] == [one["match_id"]]
        assert client.get("/api/matches/m-none/view").status_code == 403


def test_the_module_served_is_the_matchs_own(web: WebTable) -> None:
    created = web.create("reversi")
    with web.client(created["spectator_token"]) as client:
        response = client.get(f"/api/matches/{created['match_id']}/module")
    assert response.headers["content-type"] == "application/wasm"
    assert hashlib.sha256(response.content).hexdigest() == web.modules["reversi"]


def test_the_event_stream_pushes_every_change_until_game_over(web: WebTable) -> None:
    created = web.create("tic_tac_toe")
    match_id = created["match_id"]
    seen: list[dict[str, Any]] = []
    ready = threading.Event()
    watcher = web.client(created["seats"][1]["token"])
    thread = threading.Thread(
        target=read_events, args=(watcher, f"/api/matches/{match_id}/events", seen, ready)
    )
    thread.start()
    assert ready.wait(10)
    first, second = (web.client(s["token"]) for s in created["seats"])
    moves = [(first, "a1"), (second, "b1"), (first, "a2"), (second, "b2"), (first, "a3")]
    with first, second:
        for version, (client, cell) in enumerate(moves):
            answer = client.post(
                f"/api/matches/{match_id}/actions",
                json={"action": {"type": "space_click", "space_id": cell}, "version": version},
            )
            assert answer.status_code == 200, answer.text
    thread.join(10)
    watcher.close()
    assert not thread.is_alive()
    assert seen[0]["version"] == 0 and seen[-1]["version"] == 5 and seen[-1]["game_over"]
    assert [v["version"] for v in seen] == sorted({v["version"] for v in seen})
    assert all(v["viewer"] == created["seats"][1]["player_id"] for v in seen)


def test_serve_http_flag_is_off_by_default(tmp_path: Path) -> None:
    import argparse

    from tablehost.cli_remote import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    assert parser.parse_args(["serve"]).http is None
    assert parser.parse_args(["serve", "--http", "127.0.0.1:8080"]).http == "127.0.0.1:8080"
    del tmp_path


def test_tablehost_web_prints_the_admin_link_with_the_token_in_the_fragment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from tablehost.cli_remote import cmd_web

    (tmp_path / "admin_token").write_text("tha_secret\n")
    args = argparse.Namespace(data=str(tmp_path), http="127.0.0.1:8080", no_open=True)
    assert cmd_web(args) == 0
    assert capsys.readouterr().out.strip() == "http://127.0.0.1:8080/#admin=tha_secret"
    from tablehost import cli

    web = ["web", "--http", "127.0.0.1:8080", "--no-open", "--data"]
    assert cli.main([*web, str(tmp_path / "none")]) == 2  # no admin token to read: bad input (README: exit statuses)
    assert "cannot read the admin token" in capsys.readouterr().err
    (tmp_path / "admin_token").write_bytes(b"tok\xe9n")
    assert cli.main([*web, str(tmp_path)]) == 2 and "not UTF-8" in capsys.readouterr().err
    (tmp_path / "admin_token").write_text("a b")
    assert cli.main([*web, str(tmp_path)]) == 2 and "admin token" in capsys.readouterr().err
    (tmp_path / "admin_token").write_text("tha_a&b#c\n")
    assert cli.main([*web, str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "http://127.0.0.1:8080/#admin=tha_a%26b%23c", "the link is URL-encoded"


def test_a_spectator_link_joins_the_open_seat_and_the_match_starts(web: WebTable) -> None:
    with web.client(web.admin_token) as admin:
        created = admin.post(
            "/api/matches",
            json={"module_id": web.modules["tic_tac_toe"], "seats": [{"username": "ann"}, {"open": True}]},
        ).json()
    match_id = created["match_id"]
    with web.client(created["spectator_token"]) as invited:
        waiting = [m for m in invited.get("/api/matches").json() if m["match_id"] == match_id]
        assert waiting[0]["status"] == "waiting" and waiting[0]["open_seats"] == [2]
        bad = invited.post(f"/api/matches/{match_id}/join", json={"username": 7})
        assert bad.status_code == 400
        joined = invited.post(f"/api/matches/{match_id}/join", json={"username": "bob"})
        assert joined.status_code == 201
        body = joined.json()
        assert body["player_id"] == 2 and body["username"] == "bob" and body["status"] == "active"
        again = invited.post(f"/api/matches/{match_id}/join", json={"username": "cy"})
        assert again.status_code == 409 and again.json()["error"]["code"] == "match/seat_taken"
    with web.client(body["token"]) as bob:
        view = bob.get(f"/api/matches/{match_id}/view").json()
        assert view["viewer"] == 2 and view["version"] == 0
    with web.client(created["seats"][0]["token"]) as ann:  # a seat token cannot join
        assert ann.post(f"/api/matches/{match_id}/join", json={"username": "x"}).status_code == 403


def test_a_waiting_match_refuses_moves_with_409_and_shows_its_seats(web: WebTable) -> None:
    """`POST .../actions` and `/undo` of a match with an open seat were 404 `match/unknown`, and
    its view's `state` was `{}`: no seats, and the table page could not draw it."""
    with web.client(web.admin_token) as admin:
        created = admin.post(
            "/api/matches",
            json={"module_id": web.modules["tic_tac_toe"], "seats": [{"username": "ann"}, {"open": True}]},
        ).json()
    path = f"/api/matches/{created['match_id']}"
    move = {"action": {"type": "space_click", "space_id": "a1"}, "version": 0}
    with web.client(created["seats"][0]["token"]) as ann, web.client(created["spectator_token"]) as spectator:
        for answer in (ann.post(f"{path}/actions", json=move), ann.post(f"{path}/undo", json={"version": 0})):
            assert answer.status_code == 409, answer.text
            assert answer.json()["error"]["code"] == "match/waiting"
            assert "waits for 1 open seat (2)" in answer.json()["error"]["message"]
        assert spectator.post(f"{path}/actions", json=move).status_code == 403
        for viewer in (ann, spectator):
            state = viewer.get(f"{path}/view").json()["state"]
            assert [(p["player_id"], p["username"]) for p in state["players"]] == [(1, "ann"), (2, "")]
            assert state["spaces"] == [] and state["log"] == []
        module = ann.get(f"{path}/module")  # the page loads the rules before the game starts
        assert module.status_code == 200
        assert hashlib.sha256(module.content).hexdigest() == web.modules["tic_tac_toe"]


def test_a_finished_match_lists_its_result_with_string_player_ids(web: WebTable) -> None:
    created = web.create("tic_tac_toe")
    for player, cell in ((1, "a1"), (2, "b1"), (1, "a2"), (2, "b2"), (1, "a3")):
        seat = created["seats"][player - 1]
        with web.client(seat["token"]) as client:
            view = client.get(f"/api/matches/{created['match_id']}/view").json()
            action = {"type": "space_click", "space_id": cell}
            assert client.post(
                f"/api/matches/{created['match_id']}/actions", json={"action": action, "version": view["version"]}
            ).status_code == 200
    with web.client(web.admin_token) as admin:
        listed = [m for m in admin.get("/api/matches").json() if m["match_id"] == created["match_id"]]
        view = admin.get(f"/api/matches/{created['match_id']}/view").json()
    assert listed[0]["result"]["ranks"] == {"1": 1, "2": 2} and listed[0]["result"]["winners"] == [1]
    assert view["game_over"] and view["result"]["winners"] == [1]


def test_the_module_list_gives_each_games_seat_range_for_the_lobby(web: WebTable) -> None:
    with web.client(web.admin_token) as admin:
        listed = {m["name"]: m for m in admin.get("/api/modules").json()}
    assert (listed["spades"]["min_players"], listed["spades"]["max_players"]) == (4, 4)
    assert (listed["risk"]["min_players"], listed["risk"]["max_players"]) == (2, 6)
    assert listed["backgammon"]["description"].startswith("Backgammon")


def test_a_seat_given_to_a_server_bot_answers_the_persons_move(web: WebTable) -> None:
    """``"bot": "mcts:300"`` in a seat of POST /api/matches: the seat has no token, the server plays
    it, and the person's move over HTTP is answered at once, the bot's answer following."""
    with web.client(web.admin_token) as admin:
        refused = admin.post("/api/matches", json={
            "module_id": web.modules["tic_tac_toe"], "seats": [{"username": "ann"}, {"bot": "mcts:0"}]})
        assert refused.status_code == 400 and "at most 5000 iterations" in refused.json()["error"]["message"]
        assert admin.post("/api/matches", json={
            "module_id": web.modules["tic_tac_toe"], "seats": [{"username": "ann"}, {"bot": 300}]}).status_code == 400
        created = admin.post("/api/matches", json={
            "module_id": web.modules["tic_tac_toe"], "seats": [{"username": "ann"}, {"bot": "mcts:300"}]})
    assert created.status_code == 201, created.text
    seats = created.json()["seats"]
    assert [s["token"] == "" for s in seats] == [False, True] and seats[1]["username"] == "bot2"
    match_id = created.json()["match_id"]
    with web.client(seats[0]["token"]) as ann:
        moved = ann.post(f"/api/matches/{match_id}/actions",
                         json={"action": {"type": "space_click", "space_id": "b2"}, "version": 0})
        assert moved.status_code == 200 and moved.json()["version"] == 1, "the reply is ann's own move's"
        deadline = time.monotonic() + 20
        view = ann.get(f"/api/matches/{match_id}/view").json()
        while view["version"] < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            view = ann.get(f"/api/matches/{match_id}/view").json()
        assert view["version"] == 2, "the bot answered"


def test_an_overlong_match_id_in_a_path_is_refused_without_echoing_it(web: WebTable) -> None:
    with web.client(web.admin_token) as admin:
        answer = admin.get(f"/api/matches/m-{'a' * 5000}/view")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "request/invalid" and len(answer.text) < 300


def test_every_codes_http_status_agrees_with_its_grpc_status() -> None:
    """One refusal, two transports: an HTTP client gets the status class a gRPC client gets
    (an undeclared player count was 500 over HTTP, INVALID_ARGUMENT over gRPC)."""
    import grpc

    from tablehost.api.interceptors import STATUS_BY_CODE

    allowed = {
        grpc.StatusCode.INVALID_ARGUMENT: {400},
        grpc.StatusCode.NOT_FOUND: {404},
        grpc.StatusCode.FAILED_PRECONDITION: {409},
        grpc.StatusCode.ABORTED: {409},
        grpc.StatusCode.RESOURCE_EXHAUSTED: {413, 429, 503},
        grpc.StatusCode.UNAVAILABLE: {503},
        grpc.StatusCode.UNAUTHENTICATED: {401},
        grpc.StatusCode.PERMISSION_DENIED: {403},
        grpc.StatusCode.DATA_LOSS: {500},
        grpc.StatusCode.INTERNAL: {500},
        grpc.StatusCode.UNIMPLEMENTED: {404, 405},  # an HTTP path or method the API does not have
    }
    for code, status in STATUS_BY_CODE.items():
        assert http_status(code) in allowed[status], (code, status, http_status(code))
    assert http_status("request/rate_limited") == 429 and http_status("setup/invalid") == 400


def test_an_http_action_has_exactly_the_keys_and_types_of_its_kind(web: WebTable) -> None:
    """An action 1,000 lists deep in a field made the refusal's repr recurse: a 500. Every bad
    action is a 400 whose message does not repeat it, and nothing changes."""
    created = web.create("tic_tac_toe")
    match_id = created["match_id"]
    deep = "[" * 1000 + "]" * 1000
    bad = [
        '{"type":"space_click","space_id":"a1","x":' + deep + "}",
        '{"type":' + deep + "}",
        '{"type":"space_click","space_id":' + deep + "}",
        '{"type":"space_click","space_id":"a1","extra":1}',
        '{"type":"space_click","space_id":""}',
        '{"type":"piece_click","space_id":"a1","index":true}',
        '{"type":"button_click","button":{"id":"x","colour":"red"}}',
        '"b2"',
    ]
    with web.client(created["seats"][0]["token"]) as ann:
        for action in bad:
            answer = ann.post(f"/api/matches/{match_id}/actions", content='{"action":' + action + ',"version":0}',
                              headers={"content-type": "application/json"})
            assert answer.status_code == 400, (action[:60], answer.text[:200])
            assert answer.json()["error"]["code"] == "request/invalid" and len(answer.text) < 300
        assert ann.get(f"/api/matches/{match_id}/view").json()["version"] == 0
        played = ann.post(f"/api/matches/{match_id}/actions",
                          json={"action": {"type": "space_click", "space_id": "b2"}, "version": 0})
        assert played.status_code == 200 and played.json()["version"] == 1


def test_an_http_action_without_a_type_says_so(web: WebTable) -> None:
    """A missing type read `unknown action type None` over gRPC; every transport says it is missing."""
    created = web.create("tic_tac_toe")
    with web.client(created["seats"][0]["token"]) as ann:
        untyped = ann.post(f"/api/matches/{created['match_id']}/actions",
                           json={"action": {"space_id": "b2"}, "version": 0})
        teleport = ann.post(f"/api/matches/{created['match_id']}/actions",
                            json={"action": {"type": "teleport" * 1000}, "version": 0})
    assert untyped.status_code == 400
    assert untyped.json()["error"]["message"].startswith('the action has no "type" (one of space_click,')
    assert teleport.status_code == 400 and len(teleport.text) < 300
    assert teleport.json()["error"]["message"].startswith('unknown action type "teleportteleport')


def test_http_create_refuses_an_undeclared_player_count_as_400_and_takes_a_null_bot(web: WebTable) -> None:
    with web.client(web.admin_token) as admin:
        one = admin.post("/api/matches", json={"module_id": web.modules["tic_tac_toe"], "seats": [{"username": "a"}]})
        assert one.status_code == 400 and one.json()["error"]["code"] == "setup/invalid"
        null_bot = admin.post("/api/matches", json={
            "module_id": web.modules["tic_tac_toe"], "seats": [{"username": "a", "bot": None}, {"username": "b"}]})
        assert null_bot.status_code == 201 and all(s["token"] for s in null_bot.json()["seats"])


def test_the_http_api_takes_from_the_same_rate_limits_as_grpc(tmp_path: Path) -> None:
    """`serve --rate-limit` and the failed-authentication limit held over gRPC only: twenty
    HTTP requests went through at `--rate-limit 1 --rate-burst 1`, and unknown tokens were
    never throttled. One RequestGate now serves both transports."""
    import grpc

    from tablehost.api.rate_limit import RateLimits, RequestGate
    from tablehost.api.registry import MatchRegistry
    from tablehost.api.server import create_server
    from tablehost.client import ApiError, TablehostClient
    from tablehost.web.app import HttpServer

    registry = MatchRegistry(tmp_path / "data", synchronous="NORMAL")
    gate = RequestGate(RateLimits(requests_per_s=0.001, burst=3, auth_failures_per_s=0.001, auth_failure_burst=2))
    grpc_server, port = create_server("127.0.0.1:0", registry, gate=gate)
    grpc_server.start()
    http = HttpServer("127.0.0.1:0", registry, gate=gate)
    http.start()
    admin_token = registry.admin_token_path.read_text().strip()
    try:
        with httpx.Client(base_url=http.url, headers={"authorization": f"Bearer {admin_token}"}) as admin:
            assert [admin.get("/api/matches").status_code for _ in range(2)] == [200, 200]
            with TablehostClient(f"127.0.0.1:{port}", admin_token, timeout_s=10) as over_grpc:
                over_grpc.list_matches()  # the token's third and last request
                with pytest.raises(ApiError) as refused:
                    over_grpc.list_matches()
                assert refused.value.status == grpc.StatusCode.RESOURCE_EXHAUSTED
            limited = admin.get("/api/matches")
            assert limited.status_code == 429 and limited.json()["error"]["code"] == "request/rate_limited"
            assert int(limited.headers["retry-after"]) >= 1
        with httpx.Client(base_url=http.url) as stranger:
            codes = [stranger.get("/api/whoami", headers={"authorization": f"Bearer nope{n}"}).status_code
                     for n in range(4)]
        assert codes == [401, 401, 429, 429], "two failures, then the address is refused before any lookup"
    finally:
        http.stop()
        grpc_server.stop(0).wait()
        registry.close()


def test_http_create_refuses_unknown_keys_and_a_huge_bot_name_without_echoing_it(web: WebTable) -> None:
    """`{"bots": "random"}` (a typo) made a person's seat, and a 60 KB bot name came back whole."""
    module_id = web.modules["tic_tac_toe"]
    with web.client(web.admin_token) as admin:
        typo = admin.post("/api/matches", json={"module_id": module_id, "seats": [{"username": "a", "bots": "random"}, {}]})
        assert typo.status_code == 400 and "a seat has no key 'bots'" in typo.json()["error"]["message"]
        extra = admin.post("/api/matches", json={"module_id": module_id, "seats": [{}, {}], "options": {"misere": 1}})
        assert extra.status_code == 400 and "no key 'options'" in extra.json()["error"]["message"]
        huge = admin.post("/api/matches", json={"module_id": module_id, "seats": [{}, {"bot": "x" * 60_000}]})
        assert huge.status_code == 400 and len(huge.text) < 300
        assert "at most 32 characters" in huge.json()["error"]["message"]


def test_a_store_outage_over_http_hides_the_drivers_text_and_says_when_to_retry(
    web: WebTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tablehost.store.errors import StoreUnavailable

    created = web.create("tic_tac_toe")
    path = f"/api/matches/{created['match_id']}"

    def down(*args: Any) -> None:
        raise StoreUnavailable('connection to server at "10.1.2.3", port 5432 failed: Connection refused')

    with web.client(created["seats"][0]["token"]) as ann:
        offer = ann.get(f"{path}/view").json()["actions"][0]
        monkeypatch.setattr(web.registry.store, "append", down)
        answer = ann.post(f"{path}/actions", json={"action": offer["action"], "version": 0})
        monkeypatch.undo()
        assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
        error = answer.json()["error"]
        assert error["code"] == "store/unavailable" and "10.1.2.3" not in error["message"]
        assert ann.get(f"{path}/view").json()["version"] == 0


def test_serve_holds_watches_per_token_over_http_and_grpc_together(tmp_path: Path) -> None:
    """`serve --watches-per-token 2` stopped gRPC at 2 while the HTTP API's event streams took a
    pool of their own at a fixed 4 per token, uncounted in `tablehost_watch_streams`. One token's
    streams now count against the one limit over both transports, and the gauge counts both."""
    import re
    import urllib.request

    from test_e2e_server import ServerProcess, module_path

    server = ServerProcess(
        tmp_path / "data",
        ("--http", "127.0.0.1:0", "--metrics-port", "0", "--watches-per-token", "2", "--log-level", "warning"),
    )
    try:
        assert server.proc.stdout is not None
        metrics_url = server.proc.stdout.readline().split()[2]
        web_url = server.proc.stdout.readline().split()[3].rstrip("/")
        with server.client() as admin:
            module_id = admin.upload_module(module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")["module_id"]
            created = admin.create_match(module_id, ["ann", "bob"])
        match_id, token = created["match_id"], created["seats"][0]["token"]
        events = f"/api/matches/{match_id}/events"
        with (
            httpx.Client(base_url=web_url, headers={"authorization": f"Bearer {token}"}, timeout=30) as http,
            server.client(token) as grpc_client,
        ):
            over_grpc = grpc_client.watch(match_id)
            assert next(over_grpc)["version"] == 0
            with http.stream("GET", events) as first:
                assert first.status_code == 200
                with http.stream("GET", events) as third:  # the token's third stream
                    assert third.status_code == 429
                    assert orjson.loads(third.read())["error"]["code"] == "request/too_many_watchers"
                with urllib.request.urlopen(metrics_url, timeout=10) as scraped:
                    text = scraped.read().decode()
                assert re.search(r"^tablehost_watch_streams 2\.0$", text, re.MULTILINE), text
            over_grpc.close()
    finally:
        assert server.stop() == 0


def test_every_http_api_request_is_logged_and_counted_like_grpcs(tmp_path: Path) -> None:
    """No HTTP API request was logged, and none (nor its 429s, nor its event streams) was in
    `tablehost_requests_total`, `tablehost_rate_limited_total` or `tablehost_watch_streams`."""
    import structlog
    from structlog.testing import capture_logs

    from tablehost.api.auth import ADMIN
    from tablehost.api.metrics import Metrics
    from tablehost.api.rate_limit import RateLimits, RequestGate
    from tablehost.api.registry import MatchRegistry
    from tablehost.web.app import HttpServer
    from web_support import DIST

    metrics = Metrics()
    registry = MatchRegistry(tmp_path / "data", synchronous="NORMAL", metrics=metrics)
    http = HttpServer("127.0.0.1:0", registry, metrics=metrics,
                      gate=RequestGate(RateLimits(requests_per_s=0.001, burst=4)))
    http.start()
    try:
        module_id = registry.upload_module(ADMIN, (DIST / "tic_tac_toe.wasm").read_bytes(), "ttt").sha256
        created = registry.create_match(ADMIN, module_id, [("ann", ""), ("bob", "")])
        match_id = created.match_id
        ann, bob = (token for _, token in created.seats)
        with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as events:
            with httpx.Client(base_url=http.url, headers={"authorization": f"Bearer {ann}"}, timeout=30) as seat:
                assert seat.get(f"/api/matches/{match_id}/view").status_code == 200
                refused = seat.post(f"/api/matches/{match_id}/actions",
                                    json={"action": {"type": "space_click", "space_id": "z9"}, "version": 0})
                assert refused.status_code == 409, refused.text
                assert seat.get("/api/nope").status_code == 404
                with seat.stream("GET", f"/api/matches/{match_id}/events") as stream:
                    # Keep the iterator: a discarded one is closed at once, and httpx then closes the stream.
                    lines = stream.iter_lines()
                    assert next(lines) == "event: view"
                    assert metrics.registry.get_sample_value("tablehost_watch_streams") == 1
            with httpx.Client(base_url=http.url, headers={"authorization": f"Bearer {bob}"}, timeout=30) as other:
                codes = [other.get("/api/whoami").status_code for _ in range(5)]
            assert codes == [200, 200, 200, 200, 429]
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not any(e.get("method") == "events" for e in events):
                time.sleep(0.05)  # the closed stream is logged once the server notices
        logged = [e for e in events if e["event"] == "api.request"]
        assert all(e["transport"] == "http" and e["latency_ms"] >= 0 for e in logged)
        assert [(e["method"], e.get("match_id"), e.get("seat"), e["outcome"], e["http_status"])
                for e in logged if e["method"] != "whoami"] == [
            ("view", match_id, "seat:1", "OK", 200),
            ("act", match_id, "seat:1", "FAILED_PRECONDITION", 409),
            ("unrouted", None, None, "UNIMPLEMENTED", 404),
            ("events", match_id, "seat:1", "CANCELLED", 200),
        ]
        assert logged[0]["version"] == 0 and logged[1]["code"] == "match/not_offered"
        assert logged[3]["messages"] >= 1
        # bob's fifth request is over his token's rate: refused before the token is resolved
        assert [(e["outcome"], e.get("seat")) for e in logged if e["method"] == "whoami"] == (
            [("OK", "seat:2")] * 4 + [("RESOURCE_EXHAUSTED", None)]
        )
        assert ann not in str(events) and bob not in str(events), "a token was logged"

        def counted(name: str, **labels: str) -> float:
            return metrics.registry.get_sample_value(name, labels) or 0.0

        assert counted("tablehost_requests_total", transport="http", method="view", code="OK") == 1
        assert counted("tablehost_requests_total", transport="http", method="act", code="FAILED_PRECONDITION") == 1
        assert counted("tablehost_requests_total", transport="http", method="whoami", code="RESOURCE_EXHAUSTED") == 1
        assert counted("tablehost_requests_total", transport="http", method="events", code="CANCELLED") == 1
        assert counted("tablehost_rate_limited_total", kind="request") == 1
        assert counted("tablehost_watch_streams") == 0
    finally:
        registry.close_watchers()
        http.stop()
        registry.close()


@pytest.mark.parametrize("moment", ["checking_the_view", "preparing_the_first_view"])
def test_an_event_stream_closed_before_its_first_event_gives_its_slot_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str
) -> None:
    """Suspected: a client that closed its event stream before the first event was sent kept its
    watch slot, so a client that reconnected a few times locked its token out. Each early close
    here lands in one window (while the server checks the token's view, before the slot is taken;
    or while the first view is being made, with the slot taken and the response started), three
    times over: each time the slot comes back (``tablehost_watch_streams`` counts it), and the
    token (one stream at most) is then served a new stream."""
    from tablehost.api.auth import ADMIN
    from tablehost.api.metrics import Metrics
    from tablehost.api.registry import MatchRegistry
    from tablehost.api.watch_slots import WatchSlots
    from tablehost.web.app import HttpServer
    from web_support import DIST

    metrics = Metrics()
    registry = MatchRegistry(tmp_path / "data", synchronous="NORMAL")
    http = HttpServer("127.0.0.1:0", registry, metrics=metrics, watch_slots=WatchSlots(8, per_token=1))
    http.start()

    def streams_open() -> float:
        return metrics.registry.get_sample_value("tablehost_watch_streams") or 0.0

    try:
        module_id = registry.upload_module(ADMIN, (DIST / "tic_tac_toe.wasm").read_bytes(), "ttt").sha256
        created = registry.create_match(ADMIN, module_id, [("ann", ""), ("bob", "")])
        match_id, token = created.match_id, created.seats[0][1]
        real_view, real_watch = registry.view, registry.watch
        entered, release, watched = threading.Event(), threading.Event(), threading.Event()

        def view(*args: Any) -> Any:  # the stream's check, before it takes a slot
            if moment == "checking_the_view":
                entered.set()
                assert release.wait(10)
            return real_view(*args)

        def watch(principal: Any, match: str, is_active: Any) -> Iterator[Any]:
            watched.set()  # called once the stream holds its slot, before its response starts
            if moment == "checking_the_view":
                return real_watch(principal, match, is_active)
            return first_view_held(principal, match, is_active)

        def first_view_held(principal: Any, match: str, is_active: Any) -> Iterator[Any]:
            entered.set()  # on the stream's thread: the response has started, no event is sent
            assert release.wait(10)
            deadline = time.monotonic() + 10
            while is_active() and time.monotonic() < deadline:  # until the server saw the close
                time.sleep(0.01)
            yield from real_watch(principal, match, is_active)

        monkeypatch.setattr(registry, "view", view)
        monkeypatch.setattr(registry, "watch", watch)
        request = (
            f"GET /api/matches/{match_id}/events HTTP/1.1\r\nHost: test\r\n"
            f"Authorization: Bearer {token}\r\n\r\n"
        ).encode()
        for _ in range(3):
            for event in (entered, release, watched):
                event.clear()
            with socket.create_connection((http.host, http.port)) as client:
                client.sendall(request)
                assert entered.wait(10)
                assert streams_open() == (moment == "preparing_the_first_view"), "the slot is taken after the check"
            release.set()
            assert watched.wait(10), "the early-closed stream took its slot"
            deadline = time.monotonic() + 10
            while streams_open() and time.monotonic() < deadline:  # seen a moment after the close
                time.sleep(0.02)
            assert streams_open() == 0, "the closed stream kept its slot"
        monkeypatch.undo()
        seat = httpx.Client(base_url=http.url, headers={"authorization": f"Bearer {token}"}, timeout=10)
        with seat, seat.stream("GET", f"/api/matches/{match_id}/events") as stream:
            assert stream.status_code == 200, "the token may open a stream again"
            assert any(line.startswith("data:") for line in stream.iter_lines())
    finally:
        registry.close_watchers()
        http.stop()
        registry.close()
