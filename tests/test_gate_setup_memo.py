"""The gate's memo of checked setup states (``tablehost.gate._CHECKED_STATES``): a state served
from it gives exactly what the full checks give, and nothing that failed, or was checked under
other limits or seats, is ever served from it."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import states
from tablehost import gate as gate_module
from tablehost.errors import GuestProtocolError
from tablehost.gate import Gate
from tablehost.limits import AnswerLimits


def _answer(state: dict[str, Any]) -> dict[str, Any]:
    ids = [p["player_id"] for p in state["players"]]
    return {
        "state": state,
        "patches": [],
        "rng_used": False,
        "score_labels": ["Points"],
        "scores": {str(pid): {"public_points": [0.0], "private_points": []} for pid in ids},
        "game_over": False,
        "actions": {},
    }


def _check(state: dict[str, Any], limits: AnswerLimits | None = None) -> tuple[bytes, int]:
    """(the starting table's canonical JSON, the gate's state bytes) of a fresh gate's check."""
    ids = [p["player_id"] for p in state["players"]]
    gate = Gate(ids, limits) if limits is not None else Gate(ids)
    _, table = gate.check_setup(copy.deepcopy(_answer(state)), ids)
    return table.canonical_json(), gate.state_bytes


@pytest.fixture(autouse=True)
def _empty_memo() -> None:
    gate_module._CHECKED_STATES.clear()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states())
def test_a_remembered_state_gives_what_the_full_checks_give(state: dict[str, Any]) -> None:
    gate_module._CHECKED_STATES.clear()
    full = _check(state)  # the full checks (and the state is remembered)
    remembered = _check(state)  # served from the memo
    assert remembered == full
    gate_module._CHECKED_STATES.clear()
    assert _check(state) == full


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states(), st.data())
def test_the_table_served_from_the_memo_is_a_fresh_copy(state: dict[str, Any], data: st.DataObject) -> None:
    ids = [p["player_id"] for p in state["players"]]
    first = Gate(ids).check_setup(_answer(copy.deepcopy(state)), ids)[1]
    second = Gate(ids).check_setup(_answer(copy.deepcopy(state)), ids)[1]
    first.state["meta_data"]["changed"] = data.draw(st.integers())  # one match changing its table
    assert "changed" not in second.state["meta_data"]


def test_a_refused_state_is_never_remembered() -> None:
    deep: Any = "leaf"
    for _ in range(AnswerLimits().value_depth_max + 2):
        deep = {"k": deep}
    state = {"players": [{"player_id": 1}], "spaces": [], "meta_data": {"deep": deep}}
    for _ in range(2):
        with pytest.raises(GuestProtocolError, match="nested deeper"):
            _check(state)


def test_tighter_limits_check_a_remembered_state_again() -> None:
    state = {"players": [{"player_id": 1}], "spaces": [], "meta_data": {"name": "x" * 50}}
    _check(state)  # passes, and is remembered, under the default limits
    with pytest.raises(GuestProtocolError, match="over the limit of 40"):
        _check(state, AnswerLimits(string_chars_max=40))


def test_other_seats_check_a_remembered_state_again() -> None:
    state = {"players": [{"player_id": 1}], "spaces": [{"space_id": "s", "owner": 2}]}
    gate = Gate([1, 2])
    gate.check_setup(_answer(state) | {"scores": {}}, [1, 2])  # seat 2 owns the space: passes
    with pytest.raises(GuestProtocolError, match="player 2 is not seated"):
        Gate([1]).check_setup(_answer(state) | {"scores": {}}, [1])


def test_large_states_are_not_remembered() -> None:
    filler = "y" * 1000
    state = {
        "players": [{"player_id": 1}],
        "spaces": [],
        "meta_data": {f"k{i}": filler for i in range(gate_module.CHECKED_STATE_BYTES_MAX // 1000 + 1)},
    }
    assert len(orjson.dumps(state)) > gate_module.CHECKED_STATE_BYTES_MAX
    _check(state)
    assert gate_module._CHECKED_STATES.get((AnswerLimits(), frozenset([1]), (1,), orjson.dumps(state))) is None
