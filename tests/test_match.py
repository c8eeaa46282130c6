"""Platform rules of match.py, driven by the Python test game in fake_game.py."""

from __future__ import annotations

from typing import Any

import pytest

from fake_game import FakePool, button
from tablehost.errors import (
    GuestPanic,
    MatchOver,
    NotOffered,
    NotYourTurn,
    PatchError,
    RecordError,
    StaleVersion,
    UndoRefused,
)
from tablehost.history import PlayerInfo
from tablehost.match import UNDO_ACTION, Match
from tablehost.record import parse_record, replay, resume_match, state_at
from tablehost.table import canonical_json

PLAYERS = [PlayerInfo(1, "ann", "#c00"), PlayerInfo(2, "bob", "#00c")]


def new_match(**kwargs: Any) -> Match:
    return Match.start(FakePool(), PLAYERS, match_id="m1", seed=11, **kwargs)


def frozen(match: Match) -> tuple[bytes, int, int, bytes]:
    """Everything a refusal must leave unchanged."""
    return (canonical_json(match.state), match.version, len(match.history), canonical_json(match.scores))


def counter(match: Match) -> str:
    return match.table.space("counter")["pieces"][0]["public_kind"]


def test_setup_applies_prepare_patches_and_offers_actions() -> None:
    match = new_match()
    assert match.version == 0
    assert match.state["log"] == [{"text": "setup with seed 11", "for_player": {}}]
    assert match.active_player_ids == [1]
    assert {a["label"] for a in match.actions_for(1)} >= {"inc", "draw"}
    assert match.actions_for(2) == []


def test_accepted_move_records_seed_patches_and_version() -> None:
    match = new_match()
    move = match.submit(1, button("inc"), seed=99)
    assert (move.seq, move.seed, move.allow_undo, move.rng_used) == (1, 99, True, False)
    assert counter(match) == "1"
    assert match.version == 1 and match.history == [move]


@pytest.mark.parametrize(
    ("player", "action", "version", "error"),
    [
        (2, button("inc"), None, NotYourTurn),
        (1, button("nope"), None, NotOffered),
        (1, {"type": "space_click", "space_id": "counter"}, None, NotOffered),
        (1, button("inc"), 5, StaleVersion),
        (2, button("inc"), 5, NotYourTurn),  # order: not active before stale
        (1, button("nope"), 5, StaleVersion),  # order: stale before not offered
    ],
)
def test_refusals_change_nothing(player: int, action: dict[str, Any], version: int | None, error: type) -> None:
    match = new_match()
    match.submit(1, button("inc"))
    before = frozen(match)
    with pytest.raises(error) as info:
        match.submit(player, action, expected_version=version)
    assert info.value.message
    assert frozen(match) == before


def test_guest_failures_change_nothing() -> None:
    match = new_match()
    before = frozen(match)
    with pytest.raises(GuestPanic) as info:
        match.submit(1, button("boom"))
    assert info.value.printed == "about to explode\n"
    with pytest.raises(PatchError):
        match.submit(1, button("badpatch"))
    assert frozen(match) == before
    match.submit(1, button("inc"))  # the match goes on
    assert counter(match) == "1"


def test_nothing_is_accepted_after_game_over() -> None:
    match = new_match()
    for _ in range(3):
        match.submit(1, button("inc"))
    assert match.game_over
    before = frozen(match)
    with pytest.raises(MatchOver):
        match.submit(1, button("inc"))
    with pytest.raises(MatchOver):  # game over is checked before "not your turn"
        match.submit(2, button("inc"))
    with pytest.raises(MatchOver):
        match.undo(1)
    assert match.actions_for(1) == []
    assert frozen(match) == before


def test_undo_restores_state_exactly_newest_first() -> None:
    match = new_match()
    start = canonical_json(match.state)
    match.submit(1, button("inc"))
    after_one = canonical_json(match.state)
    match.submit(1, button("inc"))
    assert {"action": UNDO_ACTION, "intent": "undo", "label": "Undo"} in match.actions_for(1)
    undone = match.submit(1, UNDO_ACTION)  # offered as an action with intent undo
    assert undone.seq == 2 and undone.undone and undone.undo_seq == 3
    assert canonical_json(match.state) == after_one
    match.undo(1)
    assert canonical_json(match.state) == start  # log included
    assert match.version == 4
    assert [m.undone for m in match.history] == [True, True]  # history keeps undone moves
    with pytest.raises(UndoRefused, match="no move"):
        match.undo(1)


@pytest.mark.parametrize(
    ("moves", "reason"),
    [
        (["roll"], "randomness"),
        (["fixed"], "did not allow undo"),
        (["draw"], "revealed"),
        (["whisper"], "revealed"),
        (["flip"], "revealed"),
        (["inc", "fixed"], "did not allow undo"),  # the first move that did not allow it stops the chain
    ],
)
def test_undo_refused(moves: list[str], reason: str) -> None:
    match = new_match()
    for name in moves:
        match.submit(1, button(name))
    assert all(a["intent"] != "undo" for a in match.actions_for(1))
    before = frozen(match)
    with pytest.raises(UndoRefused, match=reason):
        match.undo(1)
    assert frozen(match) == before


def test_undo_refused_after_another_player_acted() -> None:
    match = new_match()
    match.submit(1, button("end_undoable"))
    assert match.undo_refusal(1) is None  # still allowed: nobody else acted yet
    match.submit(2, button("inc"))
    with pytest.raises(UndoRefused):
        match.undo(1)
    with pytest.raises(UndoRefused, match="the last move was another player's"):
        match.undo(1)
    match.undo(2)  # player 2 may take back their own
    with pytest.raises(UndoRefused):  # and player 1 still may not: player 2 did act
        match.undo(1)


def test_undo_with_stale_version_is_refused() -> None:
    match = new_match()
    match.submit(1, button("inc"))
    with pytest.raises(StaleVersion):
        match.undo(1, expected_version=0)
    match.undo(1, expected_version=1)


class Journal:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.fail = False

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        if self.fail:
            raise OSError("disk full")
        self.events.append((kind, payload))


def test_journal_sees_every_change_and_a_failed_write_changes_nothing() -> None:
    journal = Journal()
    match = new_match(journal=journal)
    match.submit(1, button("inc"))
    match.undo(1)
    assert [kind for kind, _ in journal.events] == ["setup", "move", "undo"]
    assert journal.events[2][1]["seq"] == 1 and journal.events[2][1]["undo_seq"] == 2
    before = frozen(match)
    journal.fail = True
    with pytest.raises(OSError):
        match.submit(1, button("inc"))
    assert frozen(match) == before
    journal.fail = False
    match.submit(1, button("inc"))
    assert match.version == 3


def played_record() -> tuple[Match, dict[str, Any]]:
    match = new_match()
    for name in ["inc", "inc"]:
        match.submit(1, button(name))
    match.undo(1)
    for name in ["draw", "roll", "end"]:
        match.submit(1, button(name))
    match.submit(2, button("inc"))
    return match, match.record()


def test_resume_rebuilds_state_version_and_undo_chain() -> None:
    match, record = played_record()
    resumed = resume_match(FakePool(), record)
    assert canonical_json(resumed.state) == canonical_json(match.state)
    assert resumed.version == match.version == 7
    assert resumed.actions_for(2) == match.actions_for(2)
    resumed.undo(2)  # the undo chain is rebuilt too
    assert counter(resumed) == "1"


def test_replay_reproduces_and_finds_the_first_difference() -> None:
    match, record = played_record()
    result = replay(parse_record(record), FakePool())
    assert result.ok, result.detail
    assert result.events == 7
    assert canonical_json(result.final_state) == canonical_json(match.state)
    record["moves"][3]["patches"][0]["to"] = "hand-2"  # tamper with the draw (version 5)
    bad = replay(parse_record(record), FakePool())
    assert not bad.ok and bad.first_difference == 5 and "patches" in bad.detail


def test_state_at_each_version() -> None:
    match, record = played_record()
    parsed = parse_record(record)
    assert counter_of(state_at(parsed, 0)) == "0"
    assert counter_of(state_at(parsed, 2)) == "2"
    assert counter_of(state_at(parsed, 3)) == "1"  # after the undo
    assert canonical_json(state_at(parsed)) == canonical_json(match.state)
    with pytest.raises(RecordError):
        state_at(parsed, 99)


def counter_of(state: dict[str, Any]) -> str:
    space = next(s for s in state["spaces"] if s["space_id"] == "counter")
    return space["pieces"][0]["public_kind"]


def test_malformed_records_are_refused() -> None:
    _, record = played_record()
    with pytest.raises(RecordError, match="format"):
        parse_record({**record, "format": "other"})
    with pytest.raises(RecordError, match="not JSON"):
        parse_record(b"{nope")
    with pytest.raises(RecordError):
        parse_record({k: v for k, v in record.items() if k != "players"})


def test_a_move_with_bad_patches_never_reaches_the_journal() -> None:
    journal = Journal()
    match = new_match(journal=journal)
    before = frozen(match)
    with pytest.raises(PatchError):
        match.submit(1, button("badpatch"))
    assert [kind for kind, _ in journal.events] == ["setup"]
    assert frozen(match) == before


def test_a_click_on_hidden_cards_takes_a_random_one_and_replay_keeps_it() -> None:
    taken: set[str] = set()
    for attempt in range(40):
        match = new_match()
        groups = [a for a in match.view(1).actions if a["action"]["type"] == "piece_click"]
        assert len(groups) == 1, "four face-down deck cards must show as one group"
        move = match.submit_view_action(1, groups[0]["action"])
        assert move.picked and move.view_action == groups[0]["action"]
        taken.add(match.table.space("hand-1")["pieces"][0]["private_kind"])
        with pytest.raises(UndoRefused, match="randomness"):
            match.undo(1)
        if attempt == 0:
            result = replay(parse_record(match.record()), FakePool())
            assert result.ok and canonical_json(result.final_state) == canonical_json(match.state)
    assert len(taken) > 1, "the host must pick among indistinguishable pieces at random"
