"""Hostile guests: one per kind of bad answer seen (issue 8), against the gate.

Each case is a real wasm module (tests/scripted_guest.py) answering a well-formed setup and
a hostile ``step``. Each asserts the typed refusal (``guest/protocol`` naming the first bad
path, or the failure's own code), that the match is byte-identical afterwards (canonical
state, history, version, offers), and that its record still replays. A server-level test
runs every case over gRPC: ABORTED with the code in the trailers, never INTERNAL, the
hostile match still readable, another match still served.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import orjson
import pytest

from scripted_guest import MOVE, SCORES, SETUP, STEP, answer, scripted_guest
from tablehost.errors import GuestError, GuestPanic, GuestProtocolError, StuckGame
from tablehost.guest import GuestPool
from tablehost.history import PlayerInfo
from tablehost.match import Match
from tablehost.module import load_module
from tablehost.record import parse_record, replay

SEATS = [PlayerInfo(1, "ann", "#d33"), PlayerInfo(2, "bob", "#33d")]
OFFER_B = {"action": {"type": "space_click", "space_id": "b"}, "intent": "confirm", "label": "b"}


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"k": value}
    return value


def with_offers(offers: list[Any]) -> dict[str, Any]:
    return answer(STEP, actions={"2": offers})


def offer(action: dict[str, Any], intent: str = "confirm") -> dict[str, Any]:
    return {"action": action, "intent": intent, "label": "x"}


def patched(index: int, **changes: Any) -> dict[str, Any]:
    step = copy.deepcopy(STEP)
    step["patches"][index].update(changes)
    return step


# (case id, step answer (dict or raw bytes), the path the refusal must name)
HOSTILE_STEPS: list[tuple[str, dict[str, Any] | bytes, str]] = [
    ("offers keyed by an unseated id", answer(STEP, actions={"7": [OFFER_B]}), 'step.actions["7"]'),
    ("offers keyed by a non-id", answer(STEP, actions={"x": [OFFER_B]}), 'step.actions["x"]'),
    ("score null (a NaN score)", answer(STEP, scores={**SCORES, "1": {"public_points": [None], "private_points": []}}),
     'step.scores["1"].public_points[0]'),
    ("score a string", answer(STEP, scores={**SCORES, "2": {"public_points": ["7"], "private_points": []}}),
     'step.scores["2"].public_points[0]'),
    ("scores keyed by a non-id", answer(STEP, scores={"x": SCORES["1"]}), 'step.scores["x"]'),
    ("a value nested 48 deep", patched(0, piece={"public_kind": "x", "public_state": {"v": nested(48)}}),
     'step.patches[0].piece.public_state["v"]'),
    ("an unknown action type", with_offers([offer({"type": "teleport", "space_id": "b"})]),
     'step.actions["2"][0].action.type'),
    ("a piece index of -1", with_offers([offer({"type": "piece_click", "space_id": "hand-1", "index": -1})]),
     'step.actions["2"][0].action.index'),
    ("a piece index past the end", with_offers([offer({"type": "piece_click", "space_id": "hand-1", "index": 1})]),
     'step.actions["2"][0].action.index'),
    ("a space click without space_id", with_offers([offer({"type": "space_click"})]),
     'step.actions["2"][0].action.space_id'),
    ("a click on no space", with_offers([OFFER_B, offer({"type": "space_click", "space_id": "zz"})]),
     'step.actions["2"][1].action.space_id'),
    ("an offer with intent undo", with_offers([offer({"type": "space_click", "space_id": "b"}, "undo")]),
     'step.actions["2"][0].intent'),
    ("game over with offers", answer(STEP, game_over=True), 'step.actions["2"]'),
    ("game over not a boolean", answer(STEP, game_over="yes"), "step.game_over"),
    ("a 3.9 MB log line", patched(1, entry={"text": "z" * 3_900_000, "for_player": {}}), "step.patches[1].entry.text"),
    ("25,000 offers", with_offers([OFFER_B] * 25_000), 'step.actions["2"]'),
    ("an owner not seated", patched(0, piece={"public_kind": "x", "owner": 9}), "step.patches[0].piece.owner"),
    ("an active player not seated", patched(2, player_ids=[9]), "step.patches[2].player_ids[0]"),
    ("a patch that does not fit", patched(0, space_id="nowhere"), "step.patches[0]"),
    ("an unknown patch op", answer(STEP, patches=[{"op": "explode"}]), "step.patches[0]"),
    ("patches not a list", answer(STEP, patches={"op": "log"}), "step.patches"),
    ("a missing member", {k: v for k, v in STEP.items() if k != "scores"}, "step.scores"),
    ("an answer that is not an object", b"[1, 2, 3]", ""),
    ("a repeated key", orjson.dumps(STEP)[:-1] + b',"game_over":true}', ""),
    ("NaN in JSON", orjson.dumps(STEP).replace(b"[1.0]", b"[NaN]"), ""),
    ("an offer with an unknown member", with_offers([{**OFFER_B, "secret": "the deck order"}]),
     'step.actions["2"][0]'),
    ("a printed that is not text", answer(STEP, printed=["a"]), ""),
]  # fmt: skip


def frozen(match: Match) -> bytes:
    """Everything observable of a match, canonical: state, history, version, results, offers."""
    return orjson.dumps(
        {
            "state": match.state,
            "history": [m.to_json() for m in match.history],
            "version": match.version,
            "scores": match.scores,
            "game_over": match.game_over,
            "offers": {str(pid): match.actions_for(pid) for pid in (1, 2)},
        },
        option=orjson.OPT_SORT_KEYS,
    )


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("modules")


def pool_for(wasm: bytes, cache: Path) -> GuestPool:
    return GuestPool(load_module(wasm, cache_dir=cache))


@pytest.mark.parametrize(("case", "step", "path"), HOSTILE_STEPS, ids=[c[0] for c in HOSTILE_STEPS])
def test_a_hostile_step_is_refused_and_changes_nothing(
    case: str, step: dict[str, Any] | bytes, path: str, cache: Path
) -> None:
    wasm = scripted_guest(step=step)
    pool = pool_for(wasm, cache)
    match = Match.start(pool, SEATS, match_id="hostile", seed=1)
    before = frozen(match)
    with pytest.raises(GuestProtocolError) as info:
        match.submit(1, MOVE)
    assert info.value.code == "guest/protocol"
    if path:
        assert (info.value.path or "").startswith(path), info.value.message
    assert frozen(match) == before
    with pytest.raises(GuestProtocolError):  # a retry is refused the same way, still changing nothing
        match.submit(1, MOVE)
    assert frozen(match) == before
    pool.close()
    again = pool_for(wasm, cache)
    result = replay(parse_record(orjson.loads(orjson.dumps(match.record()))), again)
    again.close()
    assert result.ok and result.results_compared, result.detail


def test_the_well_formed_step_passes(cache: Path) -> None:
    pool = pool_for(scripted_guest(), cache)
    match = Match.start(pool, SEATS, match_id="calm", seed=1)
    match.submit(1, MOVE)
    assert match.version == 1 and match.active_player_ids == [2]
    assert match.history[0].outcome is not None and match.history[0].outcome["scores"]["1"]["public_points"] == [1.0]
    pool.close()


HOSTILE_SETUPS: list[tuple[str, dict[str, Any], str]] = [
    ("scores keyed by a non-id", answer(SETUP, scores={"x": SCORES["1"]}), 'setup.scores["x"]'),
    ("state players not the seats", answer(SETUP, state={**SETUP["state"], "players": [{"player_id": 2}, {"player_id": 1}]}),
     "setup.state.players"),
    ("a deep meta value", answer(SETUP, state={**SETUP["state"], "meta_data": {"m": nested(40)}}),
     'setup.state.meta_data["m"]'),
    ("offers on no space", answer(SETUP, actions={"1": [offer({"type": "space_click", "space_id": "q"})]}),
     'setup.actions["1"][0].action.space_id'),
    ("labels not strings", answer(SETUP, score_labels=[1]), "setup.score_labels[0]"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "setup", "path"), HOSTILE_SETUPS, ids=[c[0] for c in HOSTILE_SETUPS])
def test_a_hostile_setup_creates_nothing(case: str, setup: dict[str, Any], path: str, cache: Path) -> None:
    pool = pool_for(scripted_guest(setup=setup), cache)
    journaled: list[str] = []
    with pytest.raises(GuestProtocolError) as info:
        Match.start(pool, SEATS, match_id="h", seed=1, journal=lambda kind, payload: journaled.append(kind))
    assert (info.value.path or "").startswith(path), info.value.message
    assert journaled == []
    pool.close()


@pytest.mark.parametrize(
    "step",
    [
        answer(STEP, actions={}),  # seat 2 to move, offered nothing
        answer(STEP, actions={"1": STEP["actions"]["2"]}),  # only a seat not to move is offered
        answer(STEP, patches=STEP["patches"][:2] + [{"op": "set_active_players", "player_ids": []}], actions={}),
    ],
    ids=["nothing offered", "offered to a seat not to move", "nobody to move"],
)
def test_a_step_that_leaves_no_one_able_to_move_is_refused(step: dict[str, Any], cache: Path) -> None:
    """Not over, yet no active seat offered anything: the game could never go on (the server
    showed "your turn" with no choice), so the answer is refused as ``match/stuck``."""
    pool = pool_for(scripted_guest(step=step), cache)
    journaled: list[str] = []
    match = Match.start(pool, SEATS, match_id="stuck", seed=1, journal=lambda kind, payload: journaled.append(kind))
    before = frozen(match)
    with pytest.raises(StuckGame) as info:
        match.submit(1, MOVE)
    assert info.value.code == "match/stuck" and "version 1" in info.value.message
    assert frozen(match) == before and journaled == ["setup"]
    pool.close()


def test_a_setup_that_leaves_no_one_able_to_move_creates_nothing(cache: Path) -> None:
    pool = pool_for(scripted_guest(setup=answer(SETUP, actions={"1": []})), cache)
    journaled: list[str] = []
    with pytest.raises(StuckGame):
        Match.start(pool, SEATS, match_id="stuck", seed=1, journal=lambda kind, payload: journaled.append(kind))
    assert journaled == []
    pool.close()


def test_a_panic_is_a_guest_failure_that_changes_nothing(cache: Path) -> None:
    report = orjson.dumps({"message": "m" * (1 << 20), "printed": "deck order: ace king two"})
    pool = pool_for(scripted_guest(step_panics=report), cache)
    match = Match.start(pool, SEATS, match_id="panics", seed=1)
    before = frozen(match)
    with pytest.raises(GuestPanic):
        match.submit(1, MOVE)
    assert frozen(match) == before
    pool.close()


# ---------------------------------------------------------------- over gRPC


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from test_api_server import start_host, stop_host

    started = start_host(tmp_path_factory.mktemp("data"))
    yield started
    stop_host(started)


SERVER_CASES = [c for c in HOSTILE_STEPS if c[0] in {
    "offers keyed by an unseated id", "score null (a NaN score)", "a value nested 48 deep", "a piece index of -1",
    "a 3.9 MB log line", "25,000 offers", "game over with offers", "a repeated key",
}]  # fmt: skip


@pytest.mark.parametrize(("case", "step", "path"), SERVER_CASES, ids=[c[0] for c in SERVER_CASES])
def test_a_hostile_step_over_grpc_is_aborted_never_internal(
    case: str, step: dict[str, Any] | bytes, path: str, host: Any
) -> None:
    from tablehost.client import ApiError

    module_id = host.admin.upload_module(scripted_guest(step=step), f"hostile-{len(case)}")["module_id"]
    created = host.admin.create_match(module_id, ["ann", "bob"])
    match_id = created["match_id"]
    seat1 = host.client(created["seats"][0]["token"])
    before = host.admin.record(match_id)
    with pytest.raises(ApiError) as info:
        seat1.submit(match_id, MOVE, 0)
    assert info.value.status == grpc.StatusCode.ABORTED and info.value.code == "guest/protocol"
    assert "log ref" in info.value.details and len(info.value.details) <= 2048
    assert host.admin.record(match_id) == before  # nothing journaled
    assert seat1.view(match_id)["version"] == 0  # the match can still be viewed
    calm = host.admin.create_match(host.module_id, ["cid", "dee"])  # other matches are served
    first = host.client(calm["seats"][0]["token"])
    view = first.view(calm["match_id"])
    first.submit(calm["match_id"], view["actions"][0]["action"], view["version"])


def test_a_hostile_setup_over_grpc_stores_no_match(host: Any) -> None:
    from tablehost.client import ApiError

    bad = answer(SETUP, scores={"x": SCORES["1"]})
    module_id = host.admin.upload_module(scripted_guest(setup=bad), "bad-setup")["module_id"]
    listed = {m["match_id"] for m in host.admin.list_matches()}
    with pytest.raises(ApiError) as info:
        host.admin.create_match(module_id, ["ann", "bob"])
    assert info.value.status == grpc.StatusCode.ABORTED and info.value.code == "guest/protocol"
    assert {m["match_id"] for m in host.admin.list_matches()} == listed


def test_a_players_refusal_hides_what_the_game_said(host: Any) -> None:
    from tablehost.client import ApiError

    report = orjson.dumps({"message": "m" * (1 << 20), "printed": "deck order: ace king two"})
    module_id = host.admin.upload_module(scripted_guest(step_panics=report), "panics")["module_id"]
    created = host.admin.create_match(module_id, ["ann", "bob"])
    seat1 = host.client(created["seats"][0]["token"])
    with pytest.raises(ApiError) as info:
        seat1.submit(created["match_id"], MOVE, 0)
    assert info.value.status == grpc.StatusCode.ABORTED and info.value.code == "guest/panic"
    assert "deck order" not in info.value.details and "mmm" not in info.value.details
    assert "log ref" in info.value.details


def test_guest_errors_never_become_internal() -> None:
    from tablehost.api.interceptors import status_for

    for error in (GuestError, GuestProtocolError, GuestPanic):
        assert status_for(error.code) == grpc.StatusCode.ABORTED
