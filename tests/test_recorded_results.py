"""Durable results (record format 2), refusal texts that leak nothing, module text in the CLI."""

from __future__ import annotations

import copy
import re
from typing import Any

import orjson
import pytest

from fake_game import FakePool, button
from tablehost.errors import RecordError, UndoRefused
from tablehost.history import RECORD_FORMAT_1, PlayerInfo
from tablehost.match import Match
from tablehost.record import parse_record, replay, resume_match

PLAYERS = [PlayerInfo(1, "ann", "#c00"), PlayerInfo(2, "bob", "#00c")]


def finished() -> Match:
    match = Match.start(FakePool(), PLAYERS, match_id="r", seed=3)
    for _ in range(3):
        match.submit(1, button("inc"))
    assert match.game_over
    return match


class LyingPool(FakePool):
    """Answers game_over "not over, 0:0" for every state, as the guest of issue 8 did."""

    def game_over(self, state_ref: str, get_state: Any) -> dict[str, Any]:
        self._count("game_over")
        return {"game_over": False, "scores": {"1": {"public_points": [0.0], "private_points": []}}}


def test_resume_takes_the_result_from_the_record_never_from_the_guest() -> None:
    match = finished()
    pool = LyingPool()
    resumed = resume_match(pool, orjson.loads(orjson.dumps(match.record())))
    assert resumed.game_over and resumed.scores == match.scores
    assert "game_over" not in pool.calls and "scores" not in pool.calls


def test_resume_asks_only_for_offers_and_checks_their_digest() -> None:
    match = Match.start(FakePool(), PLAYERS, match_id="r", seed=3)
    match.submit(1, button("inc"))
    pool = FakePool()
    resumed = resume_match(pool, match.record())
    assert resumed.actions_for(1) == match.actions_for(1)
    assert pool.calls == {"actions": 1}
    record = match.record()
    record["moves"][0]["outcome"]["offers_sha256"] = "0" * 64
    with pytest.raises(RecordError, match="not deterministic"):
        resume_match(FakePool(), record)


@pytest.mark.parametrize(
    ("change", "difference"),
    [
        (lambda o: o["scores"]["1"].update(public_points=[9.0]), "different scores"),
        (lambda o: o.update(game_over=not o["game_over"]), "different game over"),
        (lambda o: o.update(offers_sha256="f" * 64), "different offers"),
    ],
)
def test_replay_compares_results_and_names_the_first_difference(change: Any, difference: str) -> None:
    record = finished().record()
    change(record["moves"][1]["outcome"])
    result = replay(parse_record(record), FakePool())
    assert not result.ok and result.first_difference == 2 and difference in result.detail


def test_a_format_1_record_is_read_without_comparing_results() -> None:
    record = copy.deepcopy(finished().record())
    record["format"] = RECORD_FORMAT_1
    del record["setup"]["outcome"]
    for move in record["moves"]:
        del move["outcome"]
        move["undone"] = False
    parsed = parse_record(record)
    assert not parsed.has_results
    result = replay(parsed, FakePool())
    assert result.ok and not result.results_compared
    pool = FakePool()
    resumed = resume_match(pool, record)  # results asked of the guest, as format 1 always did
    assert resumed.game_over and pool.calls.get("game_over") == 1


def test_an_unknown_format_is_refused_naming_the_ones_read() -> None:
    record = finished().record()
    record["format"] = "tablehost.record/9"
    with pytest.raises(RecordError, match=r"tablehost.record/2.*tablehost.record/1"):
        parse_record(record)


def test_printed_output_of_successful_calls_is_kept_bounded() -> None:
    class Chatty(FakePool):
        def step(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return {**super().step(*args, **kwargs), "printed": "p" * 100_000 + "the end"}

    match = Match.start(Chatty(), PLAYERS, match_id="c", seed=3)
    move = match.submit(1, button("inc"))
    assert move.printed.endswith("the end") and len(move.printed) < 5000
    assert match.record()["moves"][0]["printed"] == move.printed


def test_undo_of_another_seats_move_says_the_same_whatever_that_move_was() -> None:
    texts = set()
    for name in ("draw", "inc", "whisper", "roll", "fixed"):  # revealing, plain, private, random, final
        match = Match.start(FakePool(), PLAYERS, match_id="u", seed=3)
        match.submit(1, button(name))
        with pytest.raises(UndoRefused) as info:
            match.undo(2)
        texts.add(info.value.message)
    assert texts == {"undo refused: the last move was another player's"}


def test_the_cli_escapes_control_characters_in_module_text() -> None:
    from tablehost.cli_remote import format_view

    evil = "\x1b[2J\x1b]0;pwned\x07line\nforged"
    view = {
        "match_id": "m", "version": 0, "viewer": 1, "game_over": False, "active_player_ids": [1],
        "score_labels": [evil], "scores": {"1": {"public_points": [1.0], "private_points": []}},
        "state": {"players": [{"player_id": 1, "username": evil}],
                  "spaces": [{"space_id": evil, "owner": None, "pieces": [{"public_kind": evil}]}],
                  "log": [{"text": evil}]},
        "actions": [{"intent": "choice", "label": evil, "action": {"type": "space_click", "space_id": evil}}],
    }  # fmt: skip
    text = format_view(view)
    assert not any(ord(c) < 0x20 and c != "\n" or 0x7F <= ord(c) < 0xA0 for c in text)
    assert "\\e[2J" in text and "line\\nforged" in text  # shown escaped, no line forged
    assert not any(line.startswith("forged") for line in text.splitlines())


def resigned_partnership_record() -> dict[str, Any]:
    """A four-seat match of the fake game with teams 1+3 and 2+4 that bob (2) resigned."""
    from test_results import FOUR, TeamsPool

    match = Match.start(TeamsPool(), FOUR, match_id="p", seed=4)
    match.submit(1, button("inc"))
    match.resign(2)
    return orjson.loads(orjson.dumps(match.record()))


def test_a_record_made_before_partners_were_journaled_keeps_its_result() -> None:
    """Before, a resigning seat fell alone (bob's partner dan shared first place). Such a
    record resumes and replays with that result; it is not re-ranked under the new rule."""
    from test_results import TeamsPool

    record = resigned_partnership_record()
    assert record["result"]["winners"] == [1, 3]
    old = copy.deepcopy(record)
    del old["ending"]["partners"]
    old["result"] = {"ranks": {"1": 1, "2": 4, "3": 1, "4": 1}, "winners": [1, 3, 4], "ended_by": "resigned",
                     "player_id": 2}
    resumed = resume_match(TeamsPool(), old)  # type: ignore[arg-type]
    assert resumed.result is not None and resumed.result.to_json() == old["result"]
    outcome = replay(parse_record(old), TeamsPool())  # type: ignore[arg-type]
    assert outcome.ok, outcome.detail
    assert replay(parse_record(record), TeamsPool()).ok  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "difference"),
    [
        (lambda r: r["result"].update(winners=[1, 3, 4]), "the result differs"),
        (lambda r: r["result"]["ranks"].update({"4": 1}), "the result differs"),
        (lambda r: r["ending"].update(partners=[3]), "journaled partners [3], but the game's teams give [4]"),
        (lambda r: r["ending"].update(partners=[]), "journaled partners [], but the game's teams give [4]"),
    ],
)
def test_replay_re_derives_the_partners_and_the_result(change: Any, difference: str) -> None:
    from test_results import TeamsPool

    record = resigned_partnership_record()
    change(record)
    outcome = replay(parse_record(record), TeamsPool())  # type: ignore[arg-type]
    assert not outcome.ok and difference in outcome.detail and outcome.first_difference == 2, outcome.detail


@pytest.mark.parametrize(
    ("partners", "says"),
    [([9], "ending.partners names 9"), ([2], "ending.partners names 2"), ([4, 4], "names a seat twice"),
     ("4", "ending.partners must be a JSON array"), ([True], "ending.partners names True")],
)
def test_malformed_journaled_partners_are_refused_naming_the_field(partners: Any, says: str) -> None:
    record = resigned_partnership_record()
    record["ending"]["partners"] = partners
    with pytest.raises(RecordError, match=re.escape(says)):
        parse_record(record)


def test_a_record_whose_result_names_no_seat_of_it_is_refused() -> None:
    record = resigned_partnership_record()
    record["result"]["ranks"]["9"] = 1
    with pytest.raises(RecordError, match="result.ranks names a seat"):
        parse_record(record)


class PlayOnPool(FakePool):
    """The fake game, declaring that a resigned seat's opponents play on (resign rule ``continue``)."""

    def metadata(self) -> dict[str, Any]:
        return {"metadata": {"min_players": 2, "max_players": 4, "resign": "continue"}}


THREE = [*PLAYERS, PlayerInfo(3, "cy", "#0c0")]


def test_replay_resigns_as_the_resign_rule_says() -> None:
    from tablehost.metadata import read_metadata

    pool = PlayOnPool()
    match = Match.start(pool, THREE, match_id="p", seed=3, metadata=read_metadata(pool))
    match.resign(3)  # the others play on
    match.resign(2)  # two seats left: it ends
    honest = match.record()
    assert honest["ending"]["seq"] == 2 and replay(parse_record(honest), PlayOnPool()).ok

    forged = Match.start(pool, THREE, match_id="p", seed=3, metadata=read_metadata(pool))
    forged.end("resigned", 2)  # not what a resignation does with three playing under this rule
    result = replay(parse_record(forged.record()), PlayOnPool())
    assert not result.ok and result.first_difference == 1 and "lets the others play on" in result.detail


def test_a_failed_game_holds_no_result() -> None:
    record = Match.start(FakePool(), PLAYERS, match_id="f", seed=3).record()
    record["failure"] = {"version": 0, "code": "guest/panic", "message": "boom", "op": "step", "budget": None,
                         "move": None, "at": "2026-01-01T00:00:00Z"}
    assert parse_record(record).failure is not None
    record["result"] = finished().record()["result"]
    with pytest.raises(RecordError, match="a record with a failure holds no result"):
        parse_record(record)
