"""Results (tablehost.results) and the early ends of a match (tablehost.match): ranks with ties,
winners, resign under both resign rules, abort, and how each survives the record and a resume."""

from __future__ import annotations

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
from tablehost.results import compute_result
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
