"""What counts as a reveal for undo (reveal.py): derived from the viewer rule, before vs after."""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import states_with_patches
from tablehost import table as table_module
from tablehost.reveal import RevealCheck, reveals
from tablehost.table import Table, apply_patches
from tablehost.view import view_state


def table() -> Table:
    hidden = {"public_kind": "back", "private_kind": "ace"}
    return Table(
        {
            "active_player_ids": [1],
            "players": [{"player_id": 1, "username": "a", "color": ""}, {"player_id": 2, "username": "b", "color": ""}],
            "spaces": [
                {"space_id": "deck", "kind": "deck", "arrangement": "collection", "pieces": [hidden, {"public_kind": "x"}]},
                {"space_id": "hand-1", "kind": "hand", "owner": 1, "pieces": [hidden]},
                {"space_id": "stage-1", "kind": "stage", "owner": 1},
                {"space_id": "hand-2", "kind": "hand", "owner": 2},
                {"space_id": "board", "kind": "board", "pieces": [{"public_kind": "x"}]},
                # a card player 1 owns lying in player 2's space: player 2 cannot see it
                {"space_id": "table-2", "kind": "table", "owner": 2,
                 "pieces": [{"public_kind": "back", "private_kind": "queen", "owner": 1}]},
            ],
        }
    )


@pytest.mark.parametrize(
    ("patch", "reveals"),
    [
        ({"op": "move_piece", "from": "deck", "index": 0, "to": "hand-1"}, True),  # a draw
        ({"op": "move_piece", "from": "deck", "index": 1, "to": "hand-1"}, False),  # nothing hidden on it
        ({"op": "move_piece", "from": "hand-1", "index": 0, "to": "stage-1"}, False),  # same viewer
        ({"op": "move_piece", "from": "hand-1", "index": 0, "to": "hand-2"}, True),  # given to player 2
        ({"op": "move_piece", "from": "hand-1", "index": 0, "to": "board"}, False),  # hidden from all
        ({"op": "set_public_kind", "space_id": "deck", "index": 0, "kind": "ace"}, True),  # turned face up
        ({"op": "set_public_kind", "space_id": "board", "index": 0, "kind": "y"}, False),
        ({"op": "set_piece_owner", "space_id": "deck", "index": 0, "owner": 2}, True),
        ({"op": "set_piece_owner", "space_id": "hand-1", "index": 0, "owner": 1}, False),
        ({"op": "set_space_owner", "space_id": "deck", "owner": 2}, True),
        ({"op": "set_space_owner", "space_id": "board", "owner": 2}, False),
        ({"op": "set_private_kind", "space_id": "hand-1", "index": 0, "kind": "king"}, True),
        ({"op": "set_private_kind", "space_id": "deck", "index": 0, "kind": "king"}, False),  # nobody views it
        ({"op": "set_piece_private_state", "space_id": "hand-1", "index": 0, "key": "k", "value": None}, False),
        ({"op": "add_piece", "space_id": "hand-2", "piece": {"public_kind": "back", "private_kind": "q"}}, True),
        ({"op": "add_piece", "space_id": "deck", "piece": {"public_kind": "back", "private_kind": "q"}}, False),
        ({"op": "set_space_private_state", "space_id": "hand-1", "key": "k", "value": 1}, True),
        ({"op": "set_player_private_state", "player_id": 1, "key": "k", "value": 1}, True),
        ({"op": "set_player_private_state", "player_id": 1, "key": "k", "value": None}, False),
        ({"op": "log", "entry": {"text": "drew", "for_player": {"1": "you drew the ace"}}}, True),
        ({"op": "log", "entry": {"text": "drew"}}, False),
        ({"op": "set_active_players", "player_ids": [2]}, False),
        ({"op": "permute", "space_id": "deck", "order": [1, 0]}, False),
        # owner cleared: the space's owner (player 2) now views the card
        ({"op": "set_piece_owner", "space_id": "table-2", "index": 0, "owner": None}, True),
        ({"op": "set_piece_owner", "space_id": "table-2", "index": 0, "owner": 2}, True),  # owner changed
        ({"op": "move_piece", "from": "table-2", "index": 0, "to": "hand-1"}, False),  # still player 1's
        ({"op": "move_piece", "from": "deck", "index": 0, "to": "table-2"}, True),  # into an owned space
        ({"op": "remove_piece", "space_id": "hand-1", "index": 0}, False),
    ],
)
def test_patch_reveals(patch: dict[str, Any], reveals: bool) -> None:
    assert judge([patch]) is reveals


def judge(patches: list[dict[str, Any]]) -> bool:
    before = table()
    after = before.copy()
    after.apply(patches)
    return reveals(before.state, after.state, [1, 2])


def test_only_before_and_after_count() -> None:
    there_and_back = [
        {"op": "move_piece", "from": "hand-1", "index": 0, "to": "hand-2"},
        {"op": "move_piece", "from": "hand-2", "index": 0, "to": "hand-1"},
    ]
    assert judge(there_and_back) is False  # nobody is ever shown the state in between


def _shown_private_parts(view: dict[str, Any]) -> Counter[tuple[Any, ...]]:
    """Private parts present in one viewer's view (the oracle, read off view_state)."""
    seen: Counter[tuple[Any, ...]] = Counter()
    for space in view["spaces"]:
        for key, value in space["private_state"].items():
            seen[("space", space["space_id"], key, orjson.dumps(value, option=orjson.OPT_SORT_KEYS))] += 1
        for piece in space["pieces"]:
            if "private_kind" in piece and (piece["private_kind"] is not None or piece["private_state"]):
                seen[("piece", piece["public_kind"], piece["private_kind"],
                      orjson.dumps(piece["private_state"], option=orjson.OPT_SORT_KEYS))] += 1
    for player in view["players"]:
        for key, value in player["private_state"].items():
            seen[("player", key, orjson.dumps(value, option=orjson.OPT_SORT_KEYS))] += 1
    return seen


def _private_lines(state: dict[str, Any], viewer: int) -> Counter[str]:
    return Counter(e["for_player"][str(viewer)] for e in state["log"] if str(viewer) in e["for_player"])


def _faces(state: dict[str, Any]) -> set[tuple[str, bytes]]:
    return {
        (p["public_kind"], orjson.dumps(p["public_state"], option=orjson.OPT_SORT_KEYS))
        for s in state["spaces"] for p in s["pieces"]
        if p["private_kind"] is not None or p["private_state"]
    }


@settings(max_examples=300, deadline=None)
@given(states_with_patches())
def test_reveals_exactly_when_some_view_gains_a_private_part(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    before, patches = case
    after = orjson.loads(orjson.dumps(before))
    apply_patches(after, patches)
    ids = [p["player_id"] for p in before["players"]]
    gained = any(
        _shown_private_parts(view_state(after, v)) - _shown_private_parts(view_state(before, v))
        or _private_lines(after, v) - _private_lines(before, v)
        for v in ids
    )
    turned_up = bool(_faces(after) - _faces(before))
    assert reveals(before, after, ids) is (gained or turned_up)


def _scoped(table: Table, patches: list[dict[str, Any]], ids: list[int]) -> bool | None:
    """What a match judges: RevealCheck on the live table, before and after the apply."""
    check = RevealCheck.before(table, patches, ids)
    table.apply(patches)
    return None if check is None else check.revealed(table)


@settings(max_examples=300, deadline=None)
@given(states_with_patches(), st.sampled_from([500, 1, 2, 3]))
def test_scoped_check_equals_whole_state_comparison(case: tuple[dict[str, Any], list[dict[str, Any]]], cap: int) -> None:
    """RevealCheck reads only what the patches touch, and answers exactly as reveals() on whole
    states, also when the log cap drops lines (a small cap here)."""
    state, patches = case
    saved = table_module.LOG_CAP
    table_module.LOG_CAP = cap
    try:
        live = Table(state)
        before = orjson.loads(live.snapshot())
        ids = [p["player_id"] for p in before["players"]]
        scoped = _scoped(live, patches, ids)
        assert scoped is reveals(before, live.state, ids)
    finally:
        table_module.LOG_CAP = saved


@pytest.mark.parametrize(("patch", "expected"), [
    ({"op": "move_piece", "from": "deck", "index": 0, "to": "hand-1"}, True),
    ({"op": "set_public_kind", "space_id": "deck", "index": 0, "kind": "ace"}, True),
    ({"op": "set_public_kind", "space_id": "board", "index": 0, "kind": "y"}, False),
])
def test_scoped_check_on_the_fixed_cases(patch: dict[str, Any], expected: bool) -> None:
    assert _scoped(table(), [patch], [1, 2]) is expected


def test_scoped_check_declines_what_it_cannot_read() -> None:
    """An unknown op or a missing space: None (the match then compares whole states)."""
    assert RevealCheck.before(table(), [{"op": "explode"}], [1, 2]) is None
    assert RevealCheck.before(table(), [{"op": "remove_piece", "space_id": "nowhere", "index": 0}], [1, 2]) is None
    assert RevealCheck.before(table(), [["not", "a", "patch"]], [1, 2]) is None  # type: ignore[list-item]


def test_a_face_shown_elsewhere_already_is_not_new() -> None:
    """A hidden card turned to a face that an untouched hidden card shows already reveals no new
    face (the set difference needs the untouched spaces too); without that card it does."""
    extra = {"space_id": "extra", "kind": "", "pieces": [{"public_kind": "up", "private_kind": "k"}]}
    patch = {"op": "set_public_kind", "space_id": "deck", "index": 0, "kind": "up"}
    with_extra = Table({**table().state, "spaces": [*table().state["spaces"], extra]})
    assert _scoped(with_extra, [patch], [1, 2]) is False
    assert _scoped(table(), [patch], [1, 2]) is True


def test_a_line_the_log_cap_drops_and_the_move_writes_again_is_not_new() -> None:
    """With the log full, the oldest line goes as the move writes one: the same private line
    dropped and written again shows player 1 nothing new (whole-state rule), a new line does."""
    saved = table_module.LOG_CAP
    table_module.LOG_CAP = 2
    try:
        lines = [{"text": "", "for_player": {"1": "you hold the ace"}}, {"text": "x", "for_player": {}}]
        for line, expected in (("you hold the ace", False), ("you hold the king", True)):
            live = Table({**table().state, "log": lines})
            before = orjson.loads(live.snapshot())
            patch = {"op": "log", "entry": {"text": "", "for_player": {"1": line}}}
            assert _scoped(live, [patch], [1, 2]) is expected
            assert reveals(before, live.state, [1, 2]) is expected
    finally:
        table_module.LOG_CAP = saved
