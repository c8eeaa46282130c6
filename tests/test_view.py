"""Per-viewer views (runtime/tablehost/view.py): nothing hidden leaks, no order leaks, actions round-trip."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import MARKER_RE, offered_piece_clicks, states, states_with_patches, viewer_of
from tablehost.errors import NotOffered
from tablehost.table import Table, canonical_json, normalize_state
from tablehost.view import resolve_view_action, view_actions, view_state, visible_scores

Case = tuple[dict[str, Any], list[dict[str, Any]]]
Reordering = tuple[dict[str, Any], dict[str, Any], int | None, list[dict[str, Any]], str, list[int]]


def viewers(state: dict[str, Any]) -> list[int | None]:
    return [None, *(p["player_id"] for p in state["players"]), 999]


def markers_in(value: Any) -> set[bytes]:
    return set(MARKER_RE.findall(orjson.dumps(value)))


def allowed_markers(state: dict[str, Any], viewer: int | None) -> set[bytes]:
    """Every private marker ``viewer`` may see, by docs/architecture.md "Views" read off the state."""
    allowed: set[bytes] = set()
    for player in state["players"]:
        if player["player_id"] == viewer:
            allowed |= markers_in(player["private_state"])
    for space in state["spaces"]:
        if viewer is not None and space["owner"] == viewer:
            allowed |= markers_in(space["private_state"])
        for piece in space["pieces"]:
            if viewer is not None and viewer_of(piece, space) == viewer:
                allowed |= markers_in([piece["private_kind"], piece["private_state"]])
    for entry in state["log"]:
        allowed |= markers_in(entry["for_player"].get(str(viewer)))
    return allowed


def patched(case: Case) -> dict[str, Any]:
    state, patches = case
    table = Table(state)
    table.apply(patches)
    return table.state


def first_pick(n: int) -> int:
    return 0


# --- Nothing hidden leaks ---


@settings(max_examples=100)
@given(states_with_patches())
def test_a_view_holds_exactly_the_private_values_its_viewer_may_see(case: Case) -> None:
    state = patched(case)
    for viewer in viewers(state):
        view_bytes = orjson.dumps(view_state(state, viewer))
        assert set(MARKER_RE.findall(view_bytes)) == allowed_markers(state, viewer), viewer


@given(states_with_patches())
def test_a_spectator_sees_public_parts_only(case: Case) -> None:
    view = view_state(patched(case), None)
    assert not MARKER_RE.search(orjson.dumps(view))
    for space in view["spaces"]:
        assert space["private_state"] == {}
        for piece in space["pieces"]:
            assert "private_kind" not in piece and "private_state" not in piece
    assert all(player["private_state"] == {} for player in view["players"])


@given(states())
def test_log_lines_for_one_player_reach_only_that_player(state: dict[str, Any]) -> None:
    for viewer in viewers(state):
        texts = [entry["text"] for entry in view_state(state, viewer)["log"]]
        expected = [entry["for_player"].get(str(viewer), entry["text"]) for entry in state["log"]]
        assert texts == expected


# --- No order leaks ---


@st.composite
def hidden_reorderings(draw: Any) -> Reordering:
    """A state, the same state with one collection's hidden pieces moved around, a viewer,
    offered clicks in the first state, the collection's id and the permutation made
    (``new[k] = old[order[k]]``)."""
    state = draw(states(max_pieces=8))
    viewer = draw(st.sampled_from(viewers(state)))
    collections = [s for s in state["spaces"] if s["arrangement"] == "collection"]
    if not collections:
        state["spaces"][0]["arrangement"] = "collection"
        collections = [state["spaces"][0]]
    space = draw(st.sampled_from(collections))
    pieces = space["pieces"]
    visible = [i for i, p in enumerate(pieces) if viewer is not None and viewer_of(p, space) == viewer]
    hidden = draw(st.permutations([i for i in range(len(pieces)) if i not in visible]))
    # Visible pieces keep their relative order; hidden ones go anywhere in any order.
    slots = sorted(draw(st.permutations(range(len(pieces))))[: len(visible)])
    order, rest = [], iter(hidden)
    seen = iter(visible)
    for position in range(len(pieces)):
        order.append(next(seen) if position in slots else next(rest))
    other = copy.deepcopy(state)
    next(s for s in other["spaces"] if s["space_id"] == space["space_id"])["pieces"] = [
        pieces[k] for k in order
    ]
    offered = draw(offered_piece_clicks(state))
    return state, other, viewer, offered, space["space_id"], order


def renumber(offered: list[dict[str, Any]], space_id: str, order: list[int]) -> list[dict[str, Any]]:
    """The same offers in the reordered state (each names the same piece as before)."""
    new_index = {old: new for new, old in enumerate(order)}
    result = copy.deepcopy(offered)
    for entry in result:
        action = entry["action"]
        if action["type"] == "piece_click" and action["space_id"] == space_id:
            action["index"] = new_index[action["index"]]
    return result


def listed_by_index(offered: list[dict[str, Any]], space_id: str) -> list[dict[str, Any]]:
    """The offers with the clicks in ``space_id`` listed in index order, as a game looping
    over the space would list them (so the listing order follows the hidden order)."""
    slots = [
        i for i, e in enumerate(offered) if e["action"].get("space_id") == space_id and "index" in e["action"]
    ]
    result = list(offered)
    for slot, entry in zip(slots, sorted((offered[i] for i in slots), key=lambda e: e["action"]["index"])):
        result[slot] = entry
    return result


@settings(max_examples=120)
@given(hidden_reorderings())
def test_hidden_order_changes_neither_the_view_nor_the_actions(case: Reordering) -> None:
    state, other, viewer, offered, moved, order = case
    assert canonical_json(view_state(state, viewer)) == canonical_json(view_state(other, viewer))
    renumbered = renumber(offered, moved, order)
    assert view_actions(state, viewer, offered) == view_actions(other, viewer, renumbered)
    assert view_actions(state, viewer, listed_by_index(offered, moved)) == view_actions(
        other, viewer, listed_by_index(renumbered, moved)
    )


# --- Actions in view addresses ---


@settings(max_examples=60)
@given(st.data())
def test_view_actions_round_trip_to_every_offered_action(data: st.DataObject) -> None:
    state = patched(data.draw(states_with_patches()))
    viewer = data.draw(st.sampled_from(viewers(state)))
    offered = data.draw(offered_piece_clicks(state))
    listed = view_actions(state, viewer, offered)
    view = view_state(state, viewer)
    view_spaces = {s["space_id"]: s for s in view["spaces"]}
    state_spaces = {s["space_id"]: s for s in state["spaces"]}
    reached = []
    for entry in listed:
        action = entry["action"]
        choices: list[int] = []
        resolve_view_action(state, viewer, action, offered, lambda n, seen=choices: seen.append(n) or 0)
        n = choices[0] if choices else 1
        for k in range(n):
            guest = resolve_view_action(state, viewer, action, offered, lambda _n, k=k: k)
            assert guest in [o["action"] for o in offered]
            reached.append(guest)
            if action["type"] == "piece_click":
                # The guest's piece looks like the view's entry at the view index.
                seen = view_spaces[action["space_id"]]["pieces"][action["index"]]
                real = state_spaces[guest["space_id"]]["pieces"][guest["index"]]
                assert {k2: real[k2] for k2 in seen if k2 != "count"} == {
                    k2: v for k2, v in seen.items() if k2 != "count"
                }
    assert sorted(map(canonical_json, reached)) == sorted({canonical_json(o["action"]) for o in offered})


@given(st.data())
def test_listed_actions_never_name_a_hidden_piece_by_its_true_index(data: st.DataObject) -> None:
    state = data.draw(states(max_pieces=8))
    viewer = data.draw(st.sampled_from(viewers(state)))
    offered = data.draw(offered_piece_clicks(state))
    view = view_state(state, viewer)
    for entry in view_actions(state, viewer, offered):
        action = entry["action"]
        if action["type"] != "piece_click":
            continue
        space = next(s for s in view["spaces"] if s["space_id"] == action["space_id"])
        assert 0 <= action["index"] < len(space["pieces"])
        if space["arrangement"] == "collection" and "count" in space["pieces"][action["index"]]:
            assert entry["label"] in {o["label"] for o in offered} | {
                f"a hidden piece in {space['space_id']}"
            }
    clicks = [e["action"] for e in view_actions(state, viewer, offered)]
    assert len(clicks) == len({canonical_json(a) for a in clicks}), "a view action is listed twice"


# --- Examples ---


def hand_state() -> dict[str, Any]:
    def card(name: str, owner: int | None = None, face: str = "down") -> dict[str, Any]:
        return {"public_kind": "card", "public_state": {"face": face}, "private_kind": name, "owner": owner}

    return normalize_state(
        {
            "players": [
                {"player_id": 1, "private_state": {"note": "p1-secret"}},
                {"player_id": 2, "private_state": {"note": "p2-secret"}},
            ],
            "spaces": [
                {
                    "space_id": "hand-1",
                    "owner": 1,
                    "arrangement": "collection",
                    "private_state": {"count_hint": "h1"},
                    "pieces": [card("9H"), card("QS", owner=2), card("2C"), card("KD", owner=2)],
                },
                {
                    "space_id": "deck",
                    "arrangement": "collection",
                    "pieces": [card("AS"), card("3D"), card("7C")],
                },
                {"space_id": "line", "pieces": [card("5S", face="up"), card("6S", owner=1)]},
            ],
            "log": [{"text": "cards were passed", "for_player": {"1": "you received 9H"}}],
        }
    )


def test_a_collection_lists_visible_pieces_then_counted_groups() -> None:
    view = view_state(hand_state(), 1)
    hand = view["spaces"][0]
    assert [p.get("private_kind") for p in hand["pieces"]] == ["9H", "2C", None]
    assert hand["pieces"][2] == {
        "public_kind": "card",
        "public_state": {"face": "down"},
        "owner": 2,
        "count": 2,
    }
    assert hand["private_state"] == {"count_hint": "h1"}
    assert view["spaces"][1]["pieces"] == [
        {"public_kind": "card", "public_state": {"face": "down"}, "owner": None, "count": 3}
    ]
    assert view["spaces"][2]["pieces"][0] == {
        "public_kind": "card",
        "public_state": {"face": "up"},
        "owner": None,
    }
    assert view["spaces"][2]["pieces"][1]["private_kind"] == "6S"
    assert [p["private_state"] for p in view["players"]] == [{"note": "p1-secret"}, {}]
    assert view["log"] == [{"text": "you received 9H"}]
    assert view_state(hand_state(), 2)["log"] == [{"text": "cards were passed"}]


def test_clicks_on_a_hidden_group_become_one_action_and_pick_chooses_among_them() -> None:
    state = hand_state()
    offered = [
        {
            "action": {"type": "piece_click", "space_id": "deck", "index": i},
            "intent": "choice",
            "label": f"Draw {i}",
        }
        for i in (2, 0)
    ] + [
        {
            "action": {"type": "piece_click", "space_id": "hand-1", "index": 2},
            "intent": "choice",
            "label": "Play 2C",
        }
    ]
    listed = view_actions(state, 1, offered)
    assert listed == [
        {"action": {"type": "piece_click", "space_id": "deck", "index": 0}, "intent": "choice",
         "label": "a hidden piece in deck"},
        {"action": {"type": "piece_click", "space_id": "hand-1", "index": 1}, "intent": "choice", "label": "Play 2C"},
    ]  # fmt: skip
    picks: list[int] = []
    deck_click = listed[0]["action"]
    assert resolve_view_action(state, 1, deck_click, offered, lambda n: picks.append(n) or 1)["index"] == 2
    assert picks == [2]
    assert resolve_view_action(state, 1, deck_click, offered, first_pick)["index"] == 0
    assert resolve_view_action(state, 1, listed[1]["action"], offered, first_pick)["index"] == 2


def test_anything_not_offered_is_refused() -> None:
    state = hand_state()
    offered = [
        {
            "action": {"type": "piece_click", "space_id": "hand-1", "index": 0},
            "intent": "choice",
            "label": "x",
        }
    ]
    button = {
        "type": "button_click",
        "button": {"id": "pass", "label": "Pass", "location": "", "disabled": False},
    }
    for bad in (
        {"type": "piece_click", "space_id": "hand-1", "index": 1},  # 2C: visible but not offered
        {"type": "piece_click", "space_id": "hand-1", "index": 2},  # the hidden group
        {"type": "piece_click", "space_id": "hand-1", "index": 3},  # past the view
        {"type": "piece_click", "space_id": "hand-1", "index": -1},
        {"type": "piece_click", "space_id": "nowhere", "index": 0},
        {"type": "space_click", "space_id": "deck"},
        button,
    ):
        with pytest.raises(NotOffered) as caught:
            resolve_view_action(state, 1, bad, offered, first_pick)
        assert caught.value.code == "match/not_offered"
    with pytest.raises(ValueError):
        two = offered + [
            {**offered[0], "action": {**offered[0]["action"], "space_id": "deck", "index": i}} for i in (0, 1)
        ]
        resolve_view_action(
            state, 1, {"type": "piece_click", "space_id": "deck", "index": 0}, two, lambda n: n
        )


def test_buttons_and_space_clicks_pass_through() -> None:
    button = {
        "type": "button_click",
        "button": {"id": "pass", "label": "Pass", "location": "", "disabled": False},
    }
    offered = [
        {"action": button, "intent": "confirm", "label": "Pass"},
        {"action": {"type": "space_click", "space_id": "line"}, "intent": "choice", "label": "Here"},
        {
            "action": {"type": "piece_click", "space_id": "line", "index": 0},
            "intent": "choice",
            "label": "5S",
        },
    ]
    assert view_actions(hand_state(), 2, offered) == offered
    for entry in offered:
        assert resolve_view_action(hand_state(), 2, entry["action"], offered, first_pick) == entry["action"]


def test_a_view_shares_nothing_with_the_state() -> None:
    state = hand_state()
    before = canonical_json(state)
    view = view_state(state, 1)
    view["spaces"][0]["pieces"][0]["private_state"]["x"] = 1
    view["players"][0]["private_state"]["x"] = 1
    view["meta_data"]["x"] = 1
    assert canonical_json(state) == before


def test_private_points_only_for_their_player() -> None:
    scores = {
        "1": {"public_points": [3.0], "private_points": [7.0]},
        "2": {"public_points": [1.0], "private_points": [9.0]},
    }
    assert visible_scores(scores, 1) == {
        "1": {"public_points": [3.0], "private_points": [7.0]},
        "2": {"public_points": [1.0], "private_points": []},
    }
    assert all(s["private_points"] == [] for s in visible_scores(scores, None).values())


def test_a_refused_action_is_shown_as_json() -> None:
    # it read {'type': 'button_click', 'button': {..., 'disabled': False}}: Python, not what a client sends
    button = {"type": "button_click", "button": {"id": "pass", "label": "Pass", "location": "", "disabled": False}}
    with pytest.raises(NotOffered) as caught:
        resolve_view_action(hand_state(), 1, button, [], first_pick)
    assert str(caught.value) == (
        'the action {"type":"button_click","button":{"id":"pass","label":"Pass","location":"","disabled":false}}'
        " is not among those offered to player 1"
    )
    huge = {"type": "space_click", "space_id": "x" * 10_000}
    with pytest.raises(NotOffered) as caught:
        resolve_view_action(hand_state(), 1, huge, [], first_pick)
    assert len(str(caught.value)) < 300 and '"space_id":"xxx' in str(caught.value)
