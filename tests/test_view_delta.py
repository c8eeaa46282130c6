"""View deltas (tablehost.view_delta): a delta rebuilds the newer view exactly, for random states
and patch lists seen by every viewer; shape changes fall back to a whole view."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import states_with_patches
from tablehost.table import apply_patches, normalize_state
from tablehost.view import view_state
from tablehost.view_delta import apply_delta, diff_views


@settings(max_examples=150, deadline=None)
@given(states_with_patches(), st.data())
def test_a_delta_rebuilds_the_next_view_exactly(case: tuple[dict[str, Any], list[dict[str, Any]]], data: Any) -> None:
    state, patches = case
    before = normalize_state(copy.deepcopy(state))
    after = copy.deepcopy(before)
    apply_patches(after, patches)
    ids = [p["player_id"] for p in before["players"]]
    viewer = data.draw(st.sampled_from([None, *ids]))
    old, new = view_state(before, viewer), view_state(after, viewer)
    delta = diff_views(old, new)
    assert delta is not None, "patches never add, remove or reorder spaces or players"
    assert apply_delta(old, delta) == new
    changed = {s["space_id"] for s in delta["spaces"]}
    assert changed == {o["space_id"] for o, n in zip(old["spaces"], new["spaces"]) if o != n}


def test_a_log_that_was_rewritten_is_sent_again_and_a_capped_one_as_dropped_lines() -> None:
    old = {"active_player_ids": [], "spaces": [], "players": [], "meta_data": {},
           "log": [{"text": "a"}, {"text": "b"}]}
    undone = dict(old, log=[{"text": "a"}, {"text": "c"}])
    rewritten = diff_views(old, undone)
    assert rewritten is not None and rewritten["log_dropped"] == 2, "an undone line is not kept"
    assert apply_delta(old, rewritten) == undone
    capped = dict(old, log=[{"text": "b"}, {"text": "c"}])
    delta = diff_views(old, capped)
    assert delta is not None and delta["log_dropped"] == 1 and delta["log_appended"] == [{"text": "c"}]


def test_a_space_added_or_reordered_sends_the_whole_view() -> None:
    a, b = {"space_id": "a", "pieces": []}, {"space_id": "b", "pieces": []}
    old = {"spaces": [a, b], "players": [], "meta_data": {}, "log": []}
    assert diff_views(old, dict(old, spaces=[b, a])) is None
    assert diff_views(old, dict(old, spaces=[a])) is None
