"""Results (tablehost.results) and the early ends of a match (tablehost.match): ranks with ties,
winners, resign under both resign rules, abort, and how each survives the record and a resume."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fake_game import FakePool, button
from tablehost.errors import MatchOver, NotYourTurn, StaleVersion
from tablehost.match import Match, PlayerInfo
from tablehost.metadata import DEFAULT_METADATA, GameMetadata
from tablehost.record import parse_record, replay, resume_match, state_at
from tablehost.results import compute_result, declared_partners, declared_teams
from tablehost.store import SqliteStore


class ContinuePool(FakePool):
    """The fake game declaring the resign rule ``continue``."""

    def metadata(self) -> dict[str, Any]:
        return {"metadata": {"resign": "continue"}}


PLAYERS = [PlayerInfo(1, "ann", "#a00"), PlayerInfo(2, "bob", "#0a0"), PlayerInfo(3, "cid", "#00a")]


def scores(*points: float) -> dict[str, Any]:
    return {str(i + 1): {"public_points": [p], "private_points": []} for i, p in enumerate(points)}


def test_highest_and_lowest_score_rank_with_shared_places() -> None:
    high = compute_result([1, 2, 3, 4], "highest_score", scores(5, 9, 5, 1), None)
    assert high.ranks == {1: 2, 2: 1, 3: 2, 4: 4} and high.winners == [2]
    low = compute_result([1, 2, 3, 4], "lowest_score", scores(5, 9, 5, 1), None)
    assert low.ranks == {1: 2, 2: 4, 3: 2, 4: 1} and low.winners == [4]
    draw = compute_result([1, 2], "highest_score", scores(0.5, 0.5), None)
    assert draw.winners == [1, 2] and draw.ranks == {1: 1, 2: 1}


def test_a_resigned_or_timed_out_seat_ranks_last_whatever_its_score() -> None:
    resigned = compute_result([1, 2, 3], "highest_score", scores(9, 1, 5), None, ended_by="resigned", player_id=1)
    assert resigned.ranks == {1: 3, 2: 2, 3: 1} and resigned.winners == [3]
    timeout = compute_result([1, 2], "lowest_score", scores(0, 50), None, ended_by="timeout", player_id=1)
    assert timeout.ranks == {1: 2, 2: 1} and timeout.player_id == 1


def test_seats_that_resigned_earlier_rank_behind_everyone_first_resigner_last() -> None:
    result = compute_result([1, 2, 3, 4], "highest_score", scores(9, 8, 1, 0), None, resigned=[1, 2])
    assert result.ranks == {1: 4, 2: 3, 3: 1, 4: 2}


def test_an_aborted_match_has_no_ranks_and_no_winners() -> None:
    result = compute_result([1, 2], "highest_score", scores(1, 0), None, ended_by="aborted")
    assert result.ranks == {} and result.winners == [] and result.ended_by == "aborted"


@given(st.lists(st.integers(-5, 5), min_size=1, max_size=8), st.sampled_from(["highest_score", "lowest_score"]))
def test_ranks_are_competition_ranks(points: list[int], rule: str) -> None:
    ids = list(range(1, len(points) + 1))
    result = compute_result(ids, rule, scores(*points), None)
    for pid in ids:
        mine = points[pid - 1]
        better = sum(1 for p in points if (p > mine if rule == "highest_score" else p < mine))
        assert result.ranks[pid] == better + 1
    assert result.winners and all(result.ranks[w] == 1 for w in result.winners)


# ------------------------------------------------------------------ early ends on a match


def start(resign: str = "ends", journal: Any = None) -> Match:
    return Match.start(FakePool(), PLAYERS, match_id="m-1", module_sha256="f" * 64,
                       metadata=GameMetadata(resign=resign), journal=journal, seed=5)


def test_resign_ends_the_match_with_the_resigner_last_and_refuses_afterwards() -> None:
    match = start()
    match.submit(1, button("inc"))
    with pytest.raises(StaleVersion):
        match.resign(2, expected_version=0)
    ending = match.resign(2)
    assert ending["seq"] == match.version == 2 and match.game_over and match.status == "finished"
    assert match.result is not None and match.result.ranks[2] == 3 and match.result.ended_by == "resigned"
    assert match.actions_for(1) == [] and match.view(1).result == match.result
    with pytest.raises(MatchOver):
        match.submit(1, button("inc"))
    with pytest.raises(MatchOver):
        match.end("aborted")


def test_under_the_continue_rule_the_others_play_on_and_the_resigner_cannot_act(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.put_module("f" * 64, "fake", b"\0asm", [], "2026-11-30T00:00:00Z")
    match = start("continue", store.journal_for(None))
    match.journal = store.journal_for("m-1")
    match.resign(3)
    assert not match.game_over and match.resigned_ids == [3] and match.version == 1
    with pytest.raises(NotYourTurn, match="resigned"):
        match.resign(3)
    match.submit(1, button("end"))  # player 2 is active now
    match.submit(2, button("inc"))
    match.submit(2, button("inc"))
    match.submit(2, button("inc"))
    assert match.game_over
    result = match.result
    assert result is not None and result.ranks == {1: 1, 2: 1, 3: 3} and result.ended_by == "normal"
    record = store.load_record("m-1")
    assert record["resignations"][0]["player_id"] == 3
    resumed = resume_match(FakePool(), record, metadata=GameMetadata(resign="continue"))  # type: ignore[arg-type]
    assert resumed.version == match.version and resumed.resigned_ids == [3] and resumed.result == result
    assert replay(parse_record(match.record()), ContinuePool()).ok  # type: ignore[arg-type]
    assert not replay(parse_record(match.record()), FakePool()).ok, "replay follows the module's resign rule"  # type: ignore[arg-type]
    assert state_at(parse_record(record)) == match.state
    store.close()


def test_with_two_left_a_continue_resignation_ends_the_match() -> None:
    match = Match.start(FakePool(), PLAYERS[:2], match_id="m", metadata=GameMetadata(resign="continue"))
    match.resign(1)
    assert match.game_over and match.result is not None and match.result.winners == [2]


def test_abort_and_resign_survive_the_journal_and_a_resume(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.put_module("f" * 64, "fake", b"\0asm", [], "2026-11-30T00:00:00Z")
    match = start(journal=store.journal_for(None))
    match.journal = store.journal_for("m-1")
    match.submit(1, button("inc"))
    match.end("aborted")
    record = store.load_record("m-1")
    assert record["ending"]["ended_by"] == "aborted"
    resumed = resume_match(FakePool(), record, metadata=DEFAULT_METADATA)  # type: ignore[arg-type]
    assert resumed.status == "aborted" and resumed.game_over and resumed.version == 2
    assert resumed.result is not None and resumed.result.ranks == {}
    assert replay(parse_record(match.record()), FakePool()).ok  # type: ignore[arg-type]
    store.close()


# ------------------------------------------------------------------ partnerships


def test_a_resigning_or_timed_out_seat_takes_its_partners_down_with_it() -> None:
    # Spades: seats 1+3 against 2+4, nothing scored yet; bob (2) gives up, so dan (4) loses too.
    for ended_by in ("resigned", "timeout"):
        result = compute_result([1, 2, 3, 4], "highest_score", scores(0, 0, 0, 0), None,
                                ended_by=ended_by, player_id=2, partners={2: [4]})
        assert result.ranks == {1: 1, 2: 3, 3: 1, 4: 3} and result.winners == [1, 3], ended_by


def test_the_other_sides_rank_by_the_scores_at_the_moment_one_gave_up() -> None:
    # Three pairs (1+4, 2+5, 3+6): 2+5 resign; 3+6 lead 1+4 on the scores so far.
    result = compute_result([1, 2, 3, 4, 5, 6], "highest_score", scores(10, 99, 40, 10, 99, 40), None,
                            ended_by="resigned", player_id=5, partners={5: [2]})
    assert result.ranks == {1: 3, 2: 5, 3: 1, 4: 3, 5: 5, 6: 1} and result.winners == [3, 6]
    # Under the ranks rule the game ranks only at game over: the others share first place.
    ranked = compute_result([1, 2, 3, 4], "ranks", scores(0, 0, 0, 0), None,
                            ended_by="timeout", player_id=1, partners={1: [3]})
    assert ranked.ranks == {1: 3, 2: 1, 3: 3, 4: 1} and ranked.winners == [2, 4]


def test_a_side_that_gave_up_earlier_keeps_its_place_behind_a_later_one() -> None:
    # Six seats in three pairs: 1 resigned (continue) taking 4 with it, then 2 resigned ending it.
    result = compute_result([1, 2, 3, 4, 5, 6], "highest_score", scores(5, 5, 5, 5, 5, 5), None,
                            ended_by="resigned", player_id=2, resigned=[1], partners={1: [4], 2: [5]})
    assert result.ranks == {1: 5, 2: 3, 3: 1, 4: 5, 5: 3, 6: 1}
    # A partner that resigns after its side fell already keeps the side's place.
    again = compute_result([1, 2, 3, 4, 5, 6], "highest_score", scores(5, 5, 5, 5, 5, 5), None,
                           ended_by="resigned", player_id=4, resigned=[1], partners={1: [4], 4: [1]})
    assert again.ranks == {1: 5, 2: 1, 3: 1, 4: 5, 5: 1, 6: 1}


def test_partners_journaled_without_a_seat_id_we_know_are_ignored() -> None:
    result = compute_result([1, 2], "highest_score", scores(0, 0), None,
                            ended_by="resigned", player_id=1, partners={1: [7]})
    assert result.ranks == {1: 2, 2: 1}


@pytest.mark.parametrize(
    "teams",
    [
        "0,2;1,3",  # not a list
        [[0, 2], "1,3"],  # a team that is not a list
        [[0, 2], [1, 4]],  # seat index out of range
        [[0, 2], [1, -1]],
        [[0, 2], [1, 3.0]],  # not an integer
        [[0, True], [1, 3]],  # a boolean is no seat index
        [[0, 2], [2, 3]],  # a seat in two teams
        [[0, 0], [1, 3]],  # a seat named twice
        [[0, 2], [1, {"seat": 3}]],
    ],
)
def test_a_malformed_teams_value_declares_no_partnership(teams: Any) -> None:
    """The game writes meta_data.teams (untrusted): the host reads it whole or not at all."""
    assert declared_teams({"teams": teams}, 4) == []
    assert declared_partners({"teams": teams}, [1, 2, 3, 4], 2) == []
    result = TeamsPool.resign_in_a_match(teams, 2)
    assert result.ranks == {1: 1, 2: 4, 3: 1, 4: 1}, "a malformed declaration: bob falls alone"


def test_declared_teams_map_seat_indexes_to_player_ids() -> None:
    assert declared_teams({"teams": [[0, 2], [], [1, 3]]}, 4) == [[0, 2], [1, 3]]
    assert declared_partners({"teams": [[2, 0], [1, 3]]}, [10, 20, 30, 40], 30) == [10]
    assert declared_partners({"teams": [[0, 2]]}, [10, 20, 30, 40], 20) == [], "a seat in no team plays alone"
    assert declared_partners({}, [10, 20], 10) == []


class TeamsPool(FakePool):
    """The fake game with partnerships in meta_data.teams (seats 0+2 against 1+3 by default);
    the button ``reteam`` makes every seat play alone (a game whose teams change)."""

    def __init__(self, teams: Any = ((0, 2), (1, 3)), resign: str = "ends") -> None:
        super().__init__()
        self.teams = [list(t) for t in teams] if isinstance(teams, tuple) else teams
        self.resign = resign

    def metadata(self) -> dict[str, Any]:
        return {"metadata": {"resign": self.resign}}

    def setup(self, players: list[dict[str, Any]], seed: int, next_ref: str, *options: Any) -> dict[str, Any]:
        answer = super().setup(players, seed, next_ref)
        answer["state"]["meta_data"]["teams"] = self.teams
        return answer

    def _actions(self, state: dict[str, Any], player_id: int) -> list[dict[str, Any]]:
        return [*super()._actions(state, player_id), {"action": button("reteam"), "intent": "choice", "label": "r"}]

    def step(self, state_ref: str, get_state: Any, next_ref: str, player_id: int, action: dict[str, Any],
             seed: int, *, want_state: bool = False) -> dict[str, Any]:
        if action.get("button", {}).get("id") != "reteam":
            return super().step(state_ref, get_state, next_ref, player_id, action, seed, want_state=want_state)
        patches = [{"op": "set_meta", "key": "teams", "value": [[0], [1], [2], [3]]}]
        state = copy.deepcopy(get_state())
        from tablehost.table import apply_patches

        apply_patches(state, patches)
        return {"patches": patches, "rng_used": False, "allow_undo": False, **self._outcome(state)}

    @staticmethod
    def resign_in_a_match(teams: Any, player_id: int) -> Any:
        match = Match.start(TeamsPool(teams), FOUR, match_id="t", metadata=GameMetadata(), seed=1)
        match.resign(player_id)
        assert match.result is not None
        return match.result


FOUR = [PlayerInfo(1, "ann", "#a00"), PlayerInfo(2, "bob", "#0a0"), PlayerInfo(3, "cy", "#00a"),
        PlayerInfo(4, "dan", "#aa0")]


@pytest.mark.parametrize("ended_by", ["resigned", "timeout"])
def test_a_partnership_falls_together_live_after_a_resume_and_in_replay(tmp_path: Path, ended_by: str) -> None:
    store = SqliteStore(tmp_path)
    store.put_module("f" * 64, "fake", b"\0asm", [], "2026-11-30T00:00:00Z")
    match = Match.start(TeamsPool(), FOUR, match_id="m-1", module_sha256="f" * 64,
                        metadata=GameMetadata(), journal=store.journal_for(None), seed=5)
    match.journal = store.journal_for("m-1")
    match.submit(1, button("inc"))
    ending = match.resign(2) if ended_by == "resigned" else match.end("timeout", 2)
    assert ending["partners"] == [4] and ending["ended_by"] == ended_by
    result = match.result
    assert result is not None and result.ranks == {1: 1, 2: 3, 3: 1, 4: 3} and result.winners == [1, 3]
    stored = store.load_record("m-1")
    assert stored["ending"]["partners"] == [4]
    resumed = resume_match(TeamsPool(), stored, metadata=GameMetadata())  # type: ignore[arg-type]
    assert resumed.result == result
    record = match.record()
    assert record["result"]["winners"] == [1, 3]
    outcome = replay(parse_record(record), TeamsPool())  # type: ignore[arg-type]
    assert outcome.ok, outcome.detail
    store.close()


def test_the_partners_are_those_of_the_moment_a_seat_gave_up() -> None:
    """A game may change its teams later: a continue resignation keeps the partners it was
    journaled with, and a seat that resigns after the teams dissolved falls alone."""
    match = Match.start(TeamsPool(resign="continue"), FOUR, match_id="c", metadata=GameMetadata(resign="continue"),
                        seed=2)
    resignation = match.resign(4)
    assert resignation["partners"] == [2] and not match.game_over
    match.submit(1, button("reteam"))
    assert match.partners_of(3) == []
    match.submit(1, button("inc"))
    match.submit(1, button("inc"))
    match.submit(1, button("inc"))
    assert match.game_over
    result = match.result
    assert result is not None and result.ranks == {1: 1, 2: 3, 3: 1, 4: 3} and result.ended_by == "normal"
    replayed = replay(parse_record(match.record()), TeamsPool(resign="continue"))  # type: ignore[arg-type]
    assert replayed.ok, replayed.detail
