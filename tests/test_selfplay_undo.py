"""Bot games keep no undo positions (``play_game(undo=False)``, the default): the same record as
a match that keeps them, no undo offered, and undo refused with its own reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablehost.errors import UndoRefused
from tablehost.guest import GuestPool
from tablehost.module import load_module
from tablehost.selfplay import play_game

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
_pools: dict[str, GuestPool] = {}


def pool_for(name: str) -> GuestPool:
    if name not in _pools:
        _pools[name] = GuestPool(load_module((DIST / f"{name}.wasm").read_bytes(), name=name))
    return _pools[name]


def without_times(record: dict[str, Any]) -> dict[str, Any]:
    record = dict(record, created_at="")
    record["moves"] = [dict(move, at="") for move in record["moves"]]
    return record


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["checkers", "tic_tac_toe", "backgammon"]), st.integers(0, 2**64 - 1))
def test_a_bot_game_without_undo_records_what_one_with_undo_records(game: str, seed: int) -> None:
    pool = pool_for(game)
    kept = play_game(pool, ["random", "random"], seed, undo=True, max_plies=120)
    lean = play_game(pool, ["random", "random"], seed, max_plies=120)
    assert without_times(lean.match.record()) == without_times(kept.match.record())
    assert lean.match.scores == kept.match.scores


def test_a_bot_game_offers_no_undo_and_refuses_it() -> None:
    pool = pool_for("checkers")
    kept = play_game(pool, ["first", "first"], 5, undo=True, max_plies=1).match
    lean = play_game(pool, ["first", "first"], 5, max_plies=1).match
    mover = kept.history[-1].player_id
    assert kept.history[-1].undoable, "the test needs a move the game lets its player take back"
    assert any(a["intent"] == "undo" for a in kept.actions_for(mover))
    assert not any(a["intent"] == "undo" for a in lean.actions_for(mover))
    assert lean.undo_refusal(mover) == "this match keeps no undo (a bot game)"
    with pytest.raises(UndoRefused, match="keeps no undo"):
        lean.undo(mover)
    kept.undo(mover)  # the match that keeps positions does take it back
