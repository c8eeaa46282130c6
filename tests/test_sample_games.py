"""The newer sample games under `tablehost simulate`: random bots finish every game, for each
seat count the game allows, without a failure (the full 500-game runs are in the issue's
report; these are the same runs, smaller)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablehost.selfplay import is_draw
from tablehost.simulate import simulate

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
SEATS = {"backgammon": [2], "spades": [4]}
CASES = [(game, n) for game, counts in SEATS.items() for n in counts if (DIST / f"{game}.wasm").exists()]


@pytest.mark.parametrize(("game", "players"), CASES)
def test_random_bots_finish_every_game(game: str, players: int) -> None:
    summary = simulate(DIST / f"{game}.wasm", ["random"] * players, seed=11, games=24, workers=2)
    assert summary.failures == []
    assert summary.games == 24
    if game == "spades":
        # Partners share a side's score: both are counted as winners, and a tie plays on.
        assert summary.draws == 0
        assert summary.wins[0] == summary.wins[2] and summary.wins[1] == summary.wins[3]
        assert summary.wins[0] + summary.wins[1] == 24
    else:
        assert summary.draws == 0 and sum(summary.wins) == 24


def test_partners_sharing_the_best_score_are_no_draw() -> None:
    teams = [[0, 2], [1, 3]]
    assert not is_draw([0, 2], teams)
    assert is_draw([0, 1], teams)
    assert is_draw([0, 1], [])
    assert not is_draw([3], teams)
    assert not is_draw([], teams)
