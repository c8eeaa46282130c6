"""Risk (sample_games/risk): random bot games for every player count end within the
default round limit, with no failure; the rules themselves are tested natively
(sample_games/risk/tests), views, leaks and replay by tests/test_conformance.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablehost.simulate import simulate

WASM = Path(__file__).resolve().parent.parent / "sample_games" / "dist" / "risk.wasm"

pytestmark = pytest.mark.skipif(not WASM.exists(), reason="run `make games` first")


@pytest.mark.parametrize("players", range(2, 7))
def test_random_games_end_without_failures(players: int) -> None:
    summary = simulate(WASM, ["random"] * players, seed=players, games=2)
    assert summary.failures == []
    assert summary.games == 2 and sum(summary.wins) + summary.draws == 2
    assert summary.plies_max < 10_000
