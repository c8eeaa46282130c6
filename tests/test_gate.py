"""The gate (gate.py): random malformed answers never change a match, never become INTERNAL."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import grpc
import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scripted_guest import MOVE, SETUP, STEP
from tablehost.api.interceptors import status_for
from tablehost.errors import GuestProtocolError, TablehostError
from tablehost.gate import Gate, has_duplicate_keys, value_depth
from tablehost.history import PlayerInfo
from tablehost.limits import AnswerLimits
from tablehost.match import Match
from tablehost.table import Table

SEATS = [PlayerInfo(1, "ann", "#d33"), PlayerInfo(2, "bob", "#33d")]


class ScriptedPool:
    """The GuestPool calls Match makes, answering :data:`SETUP` and a given step answer."""

    def __init__(self, step: Any) -> None:
        self.step_answer = step

    def setup(self, players: Any, seed: int, next_ref: str) -> Any:
        return copy.deepcopy(SETUP)

    def step(self, *args: Any, **kwargs: Any) -> Any:
        return copy.deepcopy(self.step_answer)

    def discard_ref(self, ref: str) -> None:
        pass


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a member or item inside ``value``."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


junk = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
DELETE = object()


@st.composite
def malformed_steps(draw: st.DrawFn) -> Any:
    step = copy.deepcopy(STEP)
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(step) or [()]))
        if not where:
            return draw(junk)
        parent = step
        try:
            for key in where[:-1]:
                parent = parent[key]
            replacement = draw(st.sampled_from([DELETE, None]) | junk)
            if replacement is DELETE and isinstance(parent, dict):
                del parent[where[-1]]
            else:
                parent[where[-1]] = None if replacement is DELETE else replacement
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed this path
    return step


def frozen(match: Match) -> bytes:
    return orjson.dumps(
        [match.state, [m.to_json() for m in match.history], match.version, match.scores, match.game_over,
         {str(p): match.actions_for(p) for p in (1, 2)}],
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
    )  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(malformed_steps())
def test_random_malformed_answers_never_change_a_match_nor_become_internal(step: Any) -> None:
    match = Match.start(ScriptedPool(step), SEATS, match_id="p", seed=1)  # type: ignore[arg-type]
    before = frozen(match)
    try:
        match.submit(1, MOVE)
    except TablehostError as exc:
        assert status_for(exc.code) != grpc.StatusCode.INTERNAL
        assert frozen(match) == before
        return
    # The mutation left a valid answer: it applied, and everything about it is JSON the API can carry.
    assert match.version == 1
    orjson.dumps(match.record())
    for viewer in (None, 1, 2):
        match.view(viewer)


def test_an_offer_past_64_bits_is_refused_not_a_crash() -> None:
    # Found by the random test above: orjson cannot write such an integer (the fast path's dump).
    for offer in (-(2**63) - 1, 2**64):
        step = copy.deepcopy(STEP)
        step["actions"] = {"2": [offer]}
        with pytest.raises(GuestProtocolError):
            Gate([1, 2]).check_step(step, Table(SETUP["state"]))


def test_a_python_nan_or_infinity_is_refused() -> None:
    table = Table(SETUP["state"])
    for bad in (float("nan"), float("inf")):
        step = copy.deepcopy(STEP)
        step["scores"]["1"]["public_points"] = [bad]
        with pytest.raises(GuestProtocolError, match=r'step\.scores\["1"\]\.public_points\[0\]'):
            Gate([1, 2]).check_step(step, table)
        step = copy.deepcopy(STEP)
        step["patches"].insert(0, {"op": "set_meta", "key": "k", "value": [bad]})
        with pytest.raises(GuestProtocolError, match=r"step\.patches\[0\]\.value\[0\]"):
            Gate([1, 2]).check_step(step, table)


def test_the_depth_limit_is_exact() -> None:
    limits = AnswerLimits()
    table = Table(SETUP["state"])

    def meta(depth: int) -> dict[str, Any]:
        value: Any = 1
        for _ in range(depth):
            value = [value]
        assert value_depth(value) == depth
        return dict(copy.deepcopy(STEP), patches=[{"op": "set_meta", "key": "k", "value": value}])

    Gate([1, 2], limits).check_step(meta(limits.value_depth_max), table)
    with pytest.raises(GuestProtocolError, match="nested deeper than 16"):
        Gate([1, 2], limits).check_step(meta(limits.value_depth_max + 1), table)


def test_the_state_size_limit_counts_every_move() -> None:
    limits = AnswerLimits(state_bytes_max=20_000)
    table = Table(SETUP["state"])
    gate = Gate([1, 2], limits)
    gate.state_bytes = len(table.snapshot())
    grow = dict(copy.deepcopy(STEP), patches=[{"op": "set_meta", "key": "k", "value": "v" * 4000}])
    with pytest.raises(GuestProtocolError, match="over the limit of 20000"):
        for key in range(10):
            grow["patches"][0]["key"] = f"k{key}"
            gate.check_step(grow, table)
            table.apply(grow["patches"])


@pytest.mark.parametrize(
    ("raw", "repeated"),
    [
        (b'{"a":1,"b":2}', False),
        (b'{"a":1,"a":2}', True),
        (b'{"a": {"b": 1, "b": 1}}', True),  # not compact: the slow path decides
        (b'{"a": "x:y", "b": [1, 2]}', False),
        (b'{"a":1,"\\u0061":2}', True),  # the same key, escaped
    ],
)
def test_repeated_keys_are_found(raw: bytes, repeated: bool) -> None:
    assert has_duplicate_keys(raw, orjson.loads(raw)) is repeated
    assert has_duplicate_keys(raw, orjson.loads(raw)) is (len(json.loads(raw)) > 0 and repeated)


# ---------------------------------------------------------------- the offers fast path

OFFER_TABLE = Table(
    {
        "spaces": [
            {"space_id": "a1", "pieces": [{"public_kind": "x"}]},
            {"space_id": "a10"},
            {"space_id": "b", "pieces": [{"public_kind": "x"}, {"public_kind": "y"}]},
            {"space_id": 'quo"te'},  # JSON escapes it: never in the regex, the detailed path decides
            {"space_id": "é" * 70},  # longer than the regex names
        ]
    }
)
offer_space_ids = st.sampled_from(["a1", "a10", "a", "b", "a100", 'quo"te', "é" * 70, "", "zz"])
offer_actions = st.one_of(
    st.builds(lambda s: {"type": "space_click", "space_id": s}, offer_space_ids),
    st.builds(lambda s, i: {"type": "piece_click", "space_id": s, "index": i}, offer_space_ids, st.integers(-1, 3)),
    st.builds(
        lambda i, d: {"type": "button_click", "button": {"id": i, "label": "L", "location": "", "disabled": d}},
        st.sampled_from(["ok", 'q"', ""]),
        st.booleans(),
    ),
    junk,
)
offers_lists = st.lists(
    st.fixed_dictionaries(
        {"action": offer_actions, "intent": st.sampled_from(["choice", "confirm", "cancel", "undo"]),
         "label": st.sampled_from(["", "x", "\n"])}
    ) | junk,
    max_size=4,
)


def offers_verdict(gate: Gate, actions: Any, lengths: dict[str, int], over: bool) -> str:
    try:
        gate.check_step({**STEP_SHAPE, "actions": actions, "game_over": over}, OFFER_TABLE)
    except GuestProtocolError as exc:
        return exc.path or "refused"
    return "passed"


STEP_SHAPE = {"patches": [], "rng_used": False, "allow_undo": False, "scores": {}, "game_over": False}


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["1", "2", "3", "01"]), offers_lists, max_size=3), st.booleans())
def test_the_offers_fast_path_agrees_with_the_detailed_checks(actions: Any, over: bool) -> None:
    """Whatever the offers map, the fast paths (one regex over the map, then per list) accept
    exactly what the detailed checks accept, and refuse at the same place."""
    import tablehost.gate as gate_module

    fast = offers_verdict(Gate([1, 2]), actions, {}, over)
    detailed_gate = DetailedGate([1, 2])
    saved = gate_module._offers_re
    gate_module._offers_re = lambda limit: re_never  # type: ignore[assignment]
    try:
        detailed = offers_verdict(detailed_gate, actions, {}, over)
    finally:
        gate_module._offers_re = saved  # type: ignore[assignment]
    assert fast == detailed


re_never = __import__("re").compile(b"(?!)")


class DetailedGate(Gate):
    """A gate whose map-level offers fast path never takes (the per-list one is disabled apart)."""

    __slots__ = ()

    def _all_offers(self, *args: Any) -> bool:
        return False


def test_a_repeated_offers_map_is_still_checked_against_piece_counts() -> None:
    """The map kept as passed is only one that clicks no piece: a piece click is checked anew
    against the pieces after each answer's patches."""
    gate = Gate([1, 2])
    click = {"2": [{"action": {"type": "piece_click", "space_id": "a1", "index": 0}, "intent": "choice", "label": ""}]}
    gate.check_step({**STEP_SHAPE, "actions": click}, OFFER_TABLE)
    remove = {"op": "remove_piece", "space_id": "a1", "index": 0}
    with pytest.raises(GuestProtocolError, match=r"names no piece"):
        gate.check_step({**STEP_SHAPE, "patches": [remove], "actions": click}, OFFER_TABLE)
    space = {"2": [{"action": {"type": "space_click", "space_id": "a10"}, "intent": "choice", "label": ""}]}
    gate.check_step({**STEP_SHAPE, "actions": space}, OFFER_TABLE)
    gate.check_step({**STEP_SHAPE, "actions": space}, OFFER_TABLE)  # the kept map
    with pytest.raises(GuestProtocolError, match=r"names no space"):
        gate.check_step({**STEP_SHAPE, "actions": {"2": [{**space["2"][0], "action": {
            "type": "space_click", "space_id": "a100"}}]}}, OFFER_TABLE)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["1", "2", "3", "01"]), offers_lists, max_size=3), st.booleans())
def test_the_gate_digest_of_passed_offers_is_the_records_digest(actions: Any, shuffle: bool) -> None:
    """Whatever the map (any member order, empty lists, the fast or the detailed path), the digest
    the gate gives for offers it passed is history.offers_digest of the non-empty lists."""
    from tablehost.history import offers_digest

    if shuffle:  # the same offers with their members in another order
        actions = {k: [dict(reversed(list(o.items()))) if isinstance(o, dict) else o for o in v]
                   for k, v in reversed(list(actions.items()))}
    gate = Gate([1, 2])
    try:
        gate.check_step({**STEP_SHAPE, "actions": actions}, OFFER_TABLE)
    except GuestProtocolError:
        return
    assert gate.offers_digest(actions) == offers_digest({k: v for k, v in actions.items() if v})
    other = copy.deepcopy(actions)  # an equal map that is not the one checked: computed afresh
    assert gate.offers_digest(other) == offers_digest({k: v for k, v in other.items() if v})


# ---------------------------------------------------------------- fast paths equal the full checks

def _scores_allowed(scores: dict[str, Any], limit: int) -> bool:
    """The score rule of docs/abi.md, written out plainly: seated ids, known lists, finite numbers."""
    for key, score in scores.items():
        if key not in ("1", "2") or type(score) is not dict or not set(score) <= {"public_points", "private_points"}:
            return False
        for name in ("public_points", "private_points"):
            points = score.get(name, [])
            if type(points) is not list or len(points) > limit:
                return False
            for point in points:
                if type(point) is float:
                    if math.isnan(point) or math.isinf(point):
                        return False
                elif type(point) is not int or not -(2**63) <= point <= 2**64 - 1:
                    return False
    return True


score_point = (
    st.floats() | st.integers(-(2**65), 2**65) | st.booleans() | st.none() | st.text(max_size=2)
    | st.sampled_from([0.0, 3.0, -1.5, 1e308])
)
score_lists = st.lists(score_point, max_size=3) | st.lists(st.just(1.0), min_size=64, max_size=66) | junk
one_score = st.dictionaries(st.sampled_from(["public_points", "private_points", "points"]), score_lists, max_size=3)


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["1", "2"]), one_score, max_size=2)
    | st.dictionaries(st.sampled_from(["1", "2", "3", "01"]), one_score | junk, max_size=3)
)
@example({"1": {"public_points": [float("nan")]}})
@example({"2": {"private_points": [3.0, float("-inf")]}})
@example({"1": {"public_points": [True]}})
def test_the_scores_fast_path_accepts_exactly_what_the_rule_allows(scores: dict[str, Any]) -> None:
    gate = Gate([1, 2])
    try:
        gate.check_scores({"scores": scores})
        accepted = True
    except GuestProtocolError:
        accepted = False
    assert accepted == _scores_allowed(scores, gate.limits.score_points_max)


flag = st.booleans() | st.none() | st.integers(0, 1) | st.text(max_size=1) | st.just(DELETE)


@settings(max_examples=200, deadline=None)
@given(flag, flag, flag)
def test_the_step_flags_fast_path_refuses_every_non_boolean(rng_used: Any, allow_undo: Any, game_over: Any) -> None:
    step = copy.deepcopy(STEP)
    for name, value in (("rng_used", rng_used), ("allow_undo", allow_undo), ("game_over", game_over)):
        if value is DELETE:
            del step[name]
        else:
            step[name] = value
    flags_ok = all(type(v) is bool for v in (rng_used, allow_undo, game_over))
    try:
        Gate([1, 2]).check_step(step, Table(SETUP["state"]))
        accepted = True
    except GuestProtocolError as exc:
        accepted = False
        if not flags_ok:  # the fault is named, as the detailed checks name it
            assert any(f".{name}" in str(exc) for name in ("rng_used", "allow_undo", "game_over"))
    # STEP offers an action, so a finished game refuses it too (offers after game over).
    assert accepted == (flags_ok and game_over is False)


# ---------------------------------------------------------------- patch values

_LONG = "k" * (AnswerLimits().string_chars_max + 1)


@pytest.mark.parametrize(
    ("patch", "path"),
    [
        ({"piece": {"public_kind": _LONG}}, "step.patches[0].piece.public_kind"),
        ({"piece": {"public_kind": "x", "private_kind": _LONG}}, "step.patches[0].piece.private_kind"),
        ({"piece": {"public_kind": "x", "public_state": {"v": [float("nan")]}}}, "step.patches[0].piece.public_state"),
        ({"piece": {"public_kind": "x", "private_state": {"v": _LONG}}}, "step.patches[0].piece.private_state"),
        ({"piece": {"public_kind": "x", "owner": 3}}, "step.patches[0].piece.owner"),
        ({"piece": {"public_kind": "x", "private_kind": "y", "public_state": {"v": 1}, "owner": 2}}, None),
        ({"piece": {"public_kind": "x" * AnswerLimits().string_chars_max}}, None),
    ],
)
def test_a_pieces_values_are_checked_where_they_are(patch: dict[str, Any], path: str | None) -> None:
    step = copy.deepcopy(STEP)
    step["patches"][0].update(patch)
    try:
        Gate([1, 2]).check_step(step, Table(SETUP["state"]))
        refused = None
    except GuestProtocolError as exc:
        refused = exc.path
    assert (refused or "").startswith(path or "") and (refused is None) == (path is None)


@pytest.mark.parametrize(
    ("ids", "path"),
    [([2], None), ([], None), ([1, 2], None), ([2, 1], None), ([2, 2], "step.patches[2].player_ids"),
     ([1, 3], "step.patches[2].player_ids[1]"), ([True], "step.patches[2]")],
)
def test_active_players_must_be_seated_once_each(ids: list[Any], path: str | None) -> None:
    step = copy.deepcopy(STEP)
    step["patches"][2]["player_ids"] = ids
    try:
        Gate([1, 2]).check_step(step, Table(SETUP["state"]))
        refused = None
    except GuestProtocolError as exc:
        refused = exc.path
    assert refused == path
