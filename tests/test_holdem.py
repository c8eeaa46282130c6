"""Hold'em (sample_games/holdem): random bot games for every table size, and the
hidden-information property: no hole card reaches a viewer who may not see it, and a
showdown turns up exactly the hands it names as shown (never a folded one).

The showing rule itself (who must show, in what order) is checked from its definition in
the game's native playout test (sample_games/holdem/tests/playouts.rs), which can rank hands.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablehost.guest import GuestPool
from tablehost.match import Match, MoveRecord
from tablehost.module import load_module
from tablehost.selfplay import play_game
from tablehost.simulate import simulate

WASM = Path(__file__).resolve().parent.parent / "sample_games" / "dist" / "holdem.wasm"
SEATS = range(2, 10)
CARD = re.compile(r"^(10|[2-9JQKA])[CDHS]$")

pytestmark = pytest.mark.skipif(not WASM.exists(), reason="run `make games` first")


@pytest.fixture(scope="module")
def pool() -> GuestPool:
    return GuestPool(load_module(WASM.read_bytes(), name="holdem"))


@pytest.mark.parametrize("seats", SEATS)
def test_random_games_end_without_failures(seats: int) -> None:
    summary = simulate(WASM, ["random"] * seats, seed=seats, games=6)
    assert summary.failures == []
    assert summary.games == 6 and sum(summary.wins) + summary.draws == 6


def words(text: str) -> set[str]:
    return set(re.split(r"[^A-Za-z0-9-]+", text))


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *strings_in(v)]]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []


def hidden_from(state: dict[str, Any], viewer: int | None) -> set[str]:
    """Faces of the cards ``viewer`` may not see (the piece's owner, else the space's, sees it)."""
    hidden = set()
    for space in state["spaces"]:
        for piece in space["pieces"]:
            sees = piece.get("owner") if piece.get("owner") is not None else space.get("owner")
            face = piece.get("private_kind")
            if face is not None and (viewer is None or sees != viewer):
                hidden.add(face)
    return hidden


def revealed_per_showdown(patches: list[dict[str, Any]]) -> list[tuple[set[int], dict[str, Any] | None]]:
    """The hole cards' owners turned face up, split at each ``last_showdown`` the move wrote.

    The last segment (after the last showdown) has ``None`` as its showdown.
    """
    segments: list[tuple[set[int], dict[str, Any] | None]] = []
    shown: set[int] = set()
    for patch in patches:
        if patch["op"] == "set_public_kind" and patch["space_id"].startswith("hole-") and CARD.match(patch["kind"]):
            shown.add(int(patch["space_id"].removeprefix("hole-")))
        if patch["op"] == "set_meta" and patch["key"] == "last_showdown":
            segments.append((shown, patch["value"]))
            shown = set()
    segments.append((shown, None))
    return segments


class HiddenCardsWatch:
    """An ``on_move`` check run after every move of a game."""

    def __init__(self) -> None:
        self.before: dict[str, Any] | None = None
        self.showdowns = 0

    def __call__(self, match: Match, move: MoveRecord) -> None:
        state = match.state
        lines = [p["entry"] for p in move.patches if p["op"] == "log"]
        turned_up = {p["kind"] for p in move.patches if p["op"] == "set_public_kind"}
        for viewer in [None, *(p.player_id for p in match.players)]:
            hidden = hidden_from(state, viewer)
            view = match.view(viewer)
            served = {k: v for k, v in view.state.items() if k != "log"}
            shown = words("\x00".join(strings_in({"state": served, "actions": view.actions, "scores": view.scores})))
            assert not hidden & shown, f"viewer {viewer} is served hidden cards {hidden & shown}"
            read = "\n".join(line.get("for_player", {}).get(str(viewer), line["text"]) for line in lines)
            leaked = (hidden - turned_up) & words(read)
            assert not leaked, f"viewer {viewer} reads hidden cards {leaked} in:\n{read}"
        segments = revealed_per_showdown(move.patches)
        assert not segments[-1][0], "hole cards turned up outside a showdown"
        for revealed, showdown in segments[:-1]:
            assert showdown is not None
            assert revealed == set(showdown["shown"]), (revealed, showdown)
            assert not revealed & set(showdown["mucked"])
            self.showdowns += 1
        if self.before is not None and len(segments) > 1:
            folded = {p["player_id"] for p in self.before["players"] if p["public_state"].get("status") == "folded"}
            assert not folded & segments[0][0], "a folded hand was shown"
        self.before = orjson.loads(orjson.dumps(state))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=2**64 - 1), seats=st.sampled_from([2, 3, 6, 9]))
def test_no_hidden_card_reaches_a_viewer_and_showdowns_show_what_they_say(
    pool: GuestPool, seed: int, seats: int
) -> None:
    watch = HiddenCardsWatch()
    result = play_game(pool, ["random"] * seats, seed, match_id="holdem-hidden", on_move=watch)
    assert result.finished
    if result.match.state["meta_data"]["hand"] < 100:
        assert watch.showdowns > 0, "a player can only bust at a showdown"
    chips = [score["public_points"][0] for score in result.match.scores.values()]
    assert sum(chips) == 1000 * seats, "chips are conserved"
