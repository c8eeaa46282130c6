"""The registry's per-viewer view cache (one view and one wire form per viewer and version) against
views built afresh, after any sequence of moves, undos, resignations and aborts; in a game with
hidden information (dominoes: each seat's hand) no seat is ever served another viewer's view."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablehost.api import convert
from tablehost.api.auth import ADMIN, Principal
from tablehost.api.registry import MatchRegistry
from tablehost.api.servicer import _view
from tablehost.api.validation import MAX_RESPONSE_BYTES
from tablehost.errors import TablehostError

DIST = Path(__file__).resolve().parents[1] / "sample_games" / "dist"
VIEWERS = (1, 2, None)
_REGISTRY: dict[str, Any] = {}


def registry(game: str) -> tuple[MatchRegistry, str]:
    """One registry (SQLite NORMAL in a temporary folder) shared by the examples; ``game``'s module id."""
    path = DIST / f"{game}.wasm"
    if not path.exists():
        pytest.skip(f"{path} is not built (make games)")
    if "registry" not in _REGISTRY:
        folder = tempfile.mkdtemp(prefix="tablehost-view-cache-")
        _REGISTRY["registry"] = MatchRegistry(folder, synchronous="NORMAL")
    reg = _REGISTRY["registry"]
    if game not in _REGISTRY:
        _REGISTRY[game] = reg.upload_module(ADMIN, path.read_bytes(), game).sha256
    return reg, _REGISTRY[game]


def teardown_module() -> None:
    if "registry" in _REGISTRY:
        _REGISTRY["registry"].close()


def check_every_viewer(reg: MatchRegistry, match_id: str) -> None:
    """Each viewer's served view (twice: built, then cached) equals a fresh build, and so does its wire form."""
    match = reg._matches[match_id].match
    for viewer in VIEWERS:
        principal = Principal("spectator", match_id) if viewer is None else Principal("seat", match_id, viewer)
        for _ in range(2):
            served = reg.view(principal, match_id)
            fresh = match.view(viewer)
            assert served.view == fresh
            wire = _view(served, MAX_RESPONSE_BYTES)
            expected = convert.view_to_proto(match_id, viewer, fresh, list(match.setup.get("score_labels", [])))
            assert wire.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)


operations = st.lists(
    st.tuples(st.sampled_from(["move", "move", "move", "undo", "resign", "abort"]), st.integers(0, 40)),
    max_size=14,
)


# Checkers offers undo (a selected piece may be put back); tic-tac-toe never does; dominoes hides
# each seat's hand from the other seat and the spectator.
@pytest.mark.parametrize("game", ["tic_tac_toe", "checkers", "dominoes"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations, viewed_first=st.booleans())
def test_served_views_equal_fresh_views_after_any_change(
    game: str, ops: list[tuple[str, int]], viewed_first: bool
) -> None:
    reg, module = registry(game)
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
    if viewed_first:
        check_every_viewer(reg, match_id)
    for op, pick in ops:
        match = reg._matches[match_id].match
        if match.game_over:
            break
        mover = match.active_player_ids[0]
        seat = Principal("seat", match_id, mover)
        try:
            if op == "move":
                served = reg.view(seat, match_id)
                offered = [a for a in served.view.actions if a["intent"] != "undo"]
                if not offered:
                    continue
                reg.submit(seat, match_id, offered[pick % len(offered)]["action"], served.view.version)
            elif op == "undo":
                reg.undo(seat, match_id, match.version)
            elif op == "resign":
                reg.resign(seat, match_id)
            else:
                reg.abort(ADMIN, match_id)
        except TablehostError:
            pass  # a refused change changes nothing: the views must still be the current ones
        check_every_viewer(reg, match_id)


def test_each_seat_of_a_hidden_information_game_is_served_its_own_view() -> None:
    """The cache is per viewer: in dominoes a seat sees its own hand and not the other seat's,
    on the first request and on every cached one after it, whatever order they come in."""
    reg, module = registry("dominoes")
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
    for order in ((1, 2, None), (None, 2, 1), (2, 1, None)):
        served = {}
        for viewer in order:
            principal = Principal("spectator", match_id) if viewer is None else Principal("seat", match_id, viewer)
            served[viewer] = reg.view(principal, match_id)
            assert served[viewer].viewer == viewer
            assert served[viewer].view == reg._matches[match_id].match.view(viewer)
        hands = [served[viewer].view.state for viewer in VIEWERS]
        assert hands[0] != hands[1] and hands[0] != hands[2] and hands[1] != hands[2]
        wires = [_view(served[viewer], MAX_RESPONSE_BYTES).SerializeToString() for viewer in VIEWERS]
        assert len(set(wires)) == 3
