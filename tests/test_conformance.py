"""One conformance harness for every sample game in sample_games/dist.

For seeded random playouts (hypothesis draws the seeds) it checks after every move that the
host's state equals the state the SDK computed, that no view carries a private part its viewer
may not see, that the listed actions never name a hidden piece's true index, and that the
record replays exactly in a fresh guest.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablehost.conformance import describe_viewer, hidden_kind_places
from tablehost.guest import GuestPool
from tablehost.history import MoveRecord
from tablehost.match import Match
from tablehost.module import load_module
from tablehost.record import parse_record, replay, state_at
from tablehost.selfplay import play_game
from tablehost.table import canonical_json
from tablehost.view import view_actions, view_state

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
PLAYERS = {
    "tic_tac_toe": [2],
    "reversi": [2],
    "checkers": [2],
    "dominoes": [2, 3, 4],
    "hearts": [4],
    "backgammon": [2],
    "spades": [4],
    "holdem": [2, 4, 9],
    "risk": [2, 3],
}
CASES = [(name, n) for name, counts in PLAYERS.items() for n in counts if (DIST / f"{name}.wasm").exists()]
MAX_PLIES = {"hearts": 5000, "backgammon": 5000, "spades": 3000, "risk": 5000}

_modules: dict[str, Any] = {}


def pool_for(name: str, *, replaying: bool = False) -> GuestPool:
    """A fresh pool of ``name``'s module: live budgets, or replay's widened wall clock (as
    ``tablehost replay --verify`` and a resuming server use: fuel decides, never the machine's load)."""
    if name not in _modules:
        _modules[name] = load_module((DIST / f"{name}.wasm").read_bytes(), name=name)
    module = _modules[name]
    return GuestPool(module, module.limits.for_replay()) if replaying else GuestPool(module)


def viewer_of(space: dict[str, Any], piece: dict[str, Any]) -> int | None:
    return piece["owner"] if piece.get("owner") is not None else space.get("owner")


def assert_no_leak(match: Match, viewer: int | None, move: MoveRecord | None = None) -> None:
    """No private kind hidden from ``viewer`` appears in anything ``viewer`` is served now.

    Older log lines are history: a card played face up in an earlier round may be hidden again
    after a new deal, so only the log lines this move wrote are checked with the current state.
    """
    leaked = hidden_kind_places(match, viewer, move)
    assert not leaked, f"{describe_viewer(viewer)} was served hidden kinds at version {match.version}: {leaked[:5]}"
    served = match.view(viewer)
    for space in served.state["spaces"]:
        for index, piece in enumerate(space["pieces"]):
            if "count" in piece:
                assert "private_kind" not in piece or piece["private_kind"] is None
    for offered in served.actions:
        action = offered["action"]
        if action["type"] == "piece_click":
            pieces = next(s for s in served.state["spaces"] if s["space_id"] == action["space_id"])["pieces"]
            assert 0 <= action["index"] < len(pieces), "an action names an index outside the view"


def shuffled_hidden(state: dict[str, Any], viewer: int | None, seed: int) -> dict[str, Any]:
    """A copy of ``state`` where each collection's pieces hidden from ``viewer`` are reordered."""
    rng = random.Random(seed)
    copy = orjson.loads(orjson.dumps(state))
    for space in copy["spaces"]:
        if space["arrangement"] != "collection":
            continue
        hidden = [i for i, p in enumerate(space["pieces"]) if viewer is None or viewer_of(space, p) != viewer]
        pieces = [space["pieces"][i] for i in hidden]
        rng.shuffle(pieces)
        for i, piece in zip(hidden, pieces):
            space["pieces"][i] = piece
    return copy


def check_every_view(match: Match, move: MoveRecord) -> None:
    for viewer in [None, *(p.player_id for p in match.players)]:
        assert_no_leak(match, viewer, move)
        if move.seq % 4:
            continue  # the order checks below are costly; every fourth move is plenty
        other = shuffled_hidden(match.state, viewer, move.seq)
        assert canonical_json(view_state(other, viewer)) == canonical_json(view_state(match.state, viewer))
        if viewer is not None:
            offered = match.actions_for(viewer)
            assert canonical_json(view_actions(other, viewer, offered_in(other, match.state, offered))) == (
                canonical_json(view_actions(match.state, viewer, offered))
            ), "the view's action list depends on the order of hidden pieces"


def offered_in(other: dict[str, Any], state: dict[str, Any], offered: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same offers, re-addressed to where each clicked piece sits in ``other``."""
    moved: list[dict[str, Any]] = []
    for offer in offered:
        action = offer["action"]
        if action["type"] == "piece_click":
            space = next(s for s in state["spaces"] if s["space_id"] == action["space_id"])
            twin = next(s for s in other["spaces"] if s["space_id"] == action["space_id"])
            piece = canonical_json(space["pieces"][action["index"]])
            # Equal pieces are interchangeable: keep the index when the twin holds an equal
            # piece there (backgammon's checkers on a point all look alike).
            same_place = action["index"] < len(twin["pieces"]) and canonical_json(twin["pieces"][action["index"]]) == piece
            index = action["index"] if same_place else next(
                i for i, p in enumerate(twin["pieces"]) if canonical_json(p) == piece
            )
            offer = {**offer, "action": {**action, "index": index}}
        moved.append(offer)
    return moved


@pytest.mark.parametrize(("name", "players"), CASES)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**64 - 1), via_views=st.booleans())
def test_random_playout_mirror_views_and_replay(name: str, players: int, seed: int, via_views: bool) -> None:
    pool = pool_for(name)
    result = play_game(
        pool,
        ["random"] * players,
        seed,
        match_id=f"conf-{name}",
        max_plies=MAX_PLIES.get(name, 2000),
        module_sha256=_modules[name].sha256,
        check_mirror=True,
        via_views=via_views,
        on_move=check_every_view,
    )
    assert result.finished, f"{name} did not end within the ply cap (seed {seed})"
    record = parse_record(orjson.loads(orjson.dumps(result.match.record())))
    replayed = replay(record, pool_for(name, replaying=True))
    assert replayed.ok, replayed.detail
    assert canonical_json(replayed.final_state) == canonical_json(result.match.state)
    assert canonical_json(state_at(record)) == canonical_json(result.match.state)


def test_every_sample_game_is_covered() -> None:
    built = {p.stem for p in DIST.glob("*.wasm")}
    assert built, "no sample game is built: run `make games`"
    assert built <= set(PLAYERS), f"add player counts for {built - set(PLAYERS)} to the conformance harness"
