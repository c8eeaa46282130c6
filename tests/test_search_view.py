"""A seat's view expanded for the guest's search (tablehost.search_view): groups of hidden
pieces become copies of their public part, and answers map back to view addresses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablehost.search_view import MAX_EXPANDED_PIECES, expand_view
from tablehost.table import normalize_state
from tablehost.view import view_state


def hand_view() -> dict[str, Any]:
    return {
        "players": [{"player_id": 1}],
        "spaces": [
            {"space_id": "table", "kind": "table", "pieces": [{"public_kind": "7H"}]},
            {"space_id": "hand", "kind": "hand", "arrangement": "collection", "pieces": [
                {"public_kind": "back", "private_kind": "7H"},
                {"public_kind": "back", "public_state": {}, "owner": None, "count": 3},
                {"public_kind": "chip", "public_state": {}, "owner": None, "count": 2}]},
        ],
    }


def test_groups_expand_and_clicks_map_back_to_the_group() -> None:
    view = hand_view()
    expanded = expand_view(view)
    kinds = [p["public_kind"] for p in expanded.state["spaces"][1]["pieces"]]
    assert kinds == ["back", "back", "back", "back", "chip", "chip"]
    assert all("count" not in p for p in expanded.state["spaces"][1]["pieces"])
    assert expanded.state["spaces"][0] == view["spaces"][0]  # no groups: untouched
    assert view["spaces"][1]["pieces"][1]["count"] == 3  # the view itself is not changed
    click = {"type": "piece_click", "space_id": "hand"}
    assert expanded.to_view_action({**click, "index": 0}) == {**click, "index": 0}
    assert expanded.to_view_action({**click, "index": 3}) == {**click, "index": 1}
    assert expanded.to_view_action({**click, "index": 5}) == {**click, "index": 2}
    # Past the space, another space, another action: unchanged (the offer check refuses them).
    assert expanded.to_view_action({**click, "index": 6}) == {**click, "index": 6}
    table_click = {"type": "piece_click", "space_id": "table", "index": 0}
    assert expanded.to_view_action(table_click) == table_click
    assert expanded.to_view_action({"type": "space_click", "space_id": "hand"}) == {"type": "space_click",
                                                                                    "space_id": "hand"}


@pytest.mark.parametrize("count", [0, -1, 1.5, "3", True, MAX_EXPANDED_PIECES + 1])
def test_a_bad_or_huge_count_is_refused(count: Any) -> None:
    view = {"spaces": [{"space_id": "s", "kind": "k", "pieces": [{"public_kind": "x", "count": count}]}]}
    with pytest.raises(ValueError):
        expand_view(view)


@settings(max_examples=40, deadline=None)
@given(faces=st.lists(st.sampled_from(["2C", "3D", "QS", "AH"]), min_size=0, max_size=12),
       owners=st.lists(st.sampled_from([1, 2, None]), min_size=12, max_size=12))
def test_an_expanded_collection_has_one_piece_per_piece_of_the_state(faces: list[str], owners: list[Any]) -> None:
    pieces = [{"public_kind": "back", "private_kind": face, "owner": owner} for face, owner in zip(faces, owners)]
    state = normalize_state({"players": [{"player_id": 1}, {"player_id": 2}], "spaces": [
        {"space_id": "deck", "kind": "deck", "arrangement": "collection", "pieces": pieces}]})
    view = view_state(state, 1)
    expanded = expand_view(view)
    shown = expanded.state["spaces"][0]["pieces"]
    assert len(shown) == len(pieces)
    assert sorted(p["private_kind"] for p in shown if p.get("private_kind")) == sorted(
        p["private_kind"] for p in pieces if p["owner"] == 1)
    # Every expanded index maps back into the view's list.
    for index in range(len(shown)):
        back = expanded.to_view_action({"type": "piece_click", "space_id": "deck", "index": index})
        assert 0 <= back["index"] < len(view["spaces"][0]["pieces"])
