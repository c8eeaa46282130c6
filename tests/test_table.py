"""The table mirror (runtime/tablehost/table.py): normal form, patch semantics, atomicity, snapshots."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import bad_patches, patch_lists, states, states_with_patches
from tablehost.errors import PatchError
from tablehost.table import (
    LOG_CAP,
    PATCH_OPS,
    Table,
    apply_patch,
    apply_patches,
    canonical_json,
    normalize_state,
)

PIECE = {"public_kind": "x", "public_state": {}, "private_kind": None, "private_state": {}, "owner": None}


def piece(kind: str, **fields: Any) -> dict[str, Any]:
    return {**PIECE, "public_kind": kind, **fields}


def two_spaces(a: list[str], b: list[str]) -> Table:
    return Table(
        {
            "players": [{"player_id": 1}, {"player_id": 2}],
            "spaces": [
                {"space_id": "a", "pieces": [{"public_kind": k} for k in a]},
                {"space_id": "b", "pieces": [{"public_kind": k} for k in b]},
            ],
        }
    )


def kinds(table: Table, space_id: str) -> list[str]:
    return [p["public_kind"] for p in table.space(space_id)["pieces"]]


# --- A plain reference model of docs/abi.md "Patches", written for clarity, not speed ---


def reference_apply(state: dict[str, Any], patch: dict[str, Any]) -> None:
    spaces = {s["space_id"]: s for s in state["spaces"]}
    players = {p["player_id"]: p for p in state["players"]}
    op = patch["op"]

    def put(mapping: dict[str, Any], key: str, value: Any) -> None:
        if value is None:
            mapping.pop(key, None)
        else:
            mapping[key] = copy.deepcopy(value)

    def full(p: dict[str, Any]) -> dict[str, Any]:
        return normalize_state({"spaces": [{"space_id": "_", "pieces": [p]}]})["spaces"][0]["pieces"][0]

    if op == "add_piece":
        spaces[patch["space_id"]]["pieces"].append(full(patch["piece"]))
    elif op == "insert_piece":
        spaces[patch["space_id"]]["pieces"].insert(patch["index"], full(patch["piece"]))
    elif op == "remove_piece":
        del spaces[patch["space_id"]]["pieces"][patch["index"]]
    elif op == "move_piece":
        moved = spaces[patch["from"]]["pieces"].pop(patch["index"])
        target = spaces[patch["to"]]["pieces"]
        if patch.get("to_index") is None:
            target.append(moved)
        else:
            target.insert(patch["to_index"], moved)
    elif op == "permute":
        old = spaces[patch["space_id"]]["pieces"]
        spaces[patch["space_id"]]["pieces"] = [old[k] for k in patch["order"]]
    elif op in ("set_public_kind", "set_private_kind"):
        spaces[patch["space_id"]]["pieces"][patch["index"]][op[4:]] = patch["kind"]
    elif op == "set_piece_owner":
        spaces[patch["space_id"]]["pieces"][patch["index"]]["owner"] = patch["owner"]
    elif op.startswith("set_piece_"):
        put(spaces[patch["space_id"]]["pieces"][patch["index"]][op[10:]], patch["key"], patch["value"])
    elif op == "set_space_owner":
        spaces[patch["space_id"]]["owner"] = patch["owner"]
    elif op.startswith("set_space_"):
        put(spaces[patch["space_id"]][op[10:]], patch["key"], patch["value"])
    elif op.startswith("set_player_"):
        put(players[patch["player_id"]][op[11:]], patch["key"], patch["value"])
    elif op == "set_active_players":
        state["active_player_ids"] = list(patch["player_ids"])
    elif op == "set_meta":
        put(state["meta_data"], patch["key"], patch["value"])
    elif op == "log":
        state["log"] = (state["log"] + [{"for_player": {}, **copy.deepcopy(patch["entry"])}])[-LOG_CAP:]
    else:
        raise AssertionError(op)


# --- Properties ---


@settings(max_examples=200, deadline=None)  # a loaded machine once took 300 ms for one example
@given(states_with_patches())
def test_patches_agree_with_the_reference_model(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    state, patches = case
    expected = copy.deepcopy(state)
    for patch in patches:
        reference_apply(expected, patch)
    table = Table(state)
    table.apply(patches)
    assert canonical_json(table.state) == canonical_json(expected)


@settings(max_examples=100)
@given(states_with_patches())
def test_one_by_one_equals_all_at_once(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    state, patches = case
    together, single = Table(state), Table(state)
    together.apply(patches)
    for patch in patches:
        single.apply_patch(patch)
    assert together.canonical_json() == single.canonical_json()


@settings(max_examples=120)
@given(st.data())
def test_a_failing_patch_list_leaves_the_state_unchanged(data: st.DataObject) -> None:
    state, patches = data.draw(states_with_patches())
    table = Table(state)
    before = table.snapshot()
    # The bad patch is judged against the state after the valid ones before it.
    after_valid = table.copy()
    after_valid.apply(patches)
    bad = data.draw(bad_patches(after_valid.state))
    with pytest.raises(PatchError) as caught:
        table.apply([*patches, bad])
    assert caught.value.patch_index == len(patches)
    assert table.snapshot() == before
    with pytest.raises(PatchError):
        after_valid.apply_patch(bad)


@given(states_with_patches())
def test_the_state_never_aliases_a_patch(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    state, patches = case
    table = Table(state)
    table.apply(patches)
    after = table.canonical_json()
    for patch in patches:  # history is kept; scribbling on it must not reach the state
        for field in ("piece", "value", "entry"):
            if isinstance(patch.get(field), dict):
                patch[field]["scribble"] = 1
        if isinstance(patch.get("player_ids"), list):
            patch["player_ids"].append(77)
    assert table.canonical_json() == after


@given(states_with_patches())
def test_snapshot_round_trip_and_copy(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    state, patches = case
    table = Table(state)
    table.apply(patches)
    restored = Table.from_snapshot(table.snapshot())
    assert restored.canonical_json() == table.canonical_json()
    clone = table.copy()
    clone.apply([{"op": "set_meta", "key": "only_in_clone", "value": 1}])
    assert "only_in_clone" not in table.state["meta_data"]


@given(states())
def test_normalize_is_idempotent_and_copies(state: dict[str, Any]) -> None:
    again = normalize_state(state)
    assert again == state
    again["spaces"][0]["public_state"]["x"] = 1
    assert "x" not in state["spaces"][0]["public_state"]


# --- Examples of each rule ---


def test_normalize_fills_the_documented_defaults() -> None:
    state = normalize_state(
        {
            "players": [{"player_id": 1, "username": "ann", "color": "#d33"}],
            "spaces": [{"space_id": "board", "kind": "board", "pieces": [{"public_kind": "x"}]}],
            "log": [{"text": "hi"}],
        }
    )
    assert state == {
        "active_player_ids": [],
        "players": [
            {"player_id": 1, "color": "#d33", "username": "ann", "public_state": {}, "private_state": {}}
        ],
        "spaces": [
            {
                "space_id": "board",
                "kind": "board",
                "owner": None,
                "arrangement": "ordered",
                "public_state": {},
                "private_state": {},
                "pieces": [PIECE],
            }
        ],
        "meta_data": {},
        "log": [{"text": "hi", "for_player": {}}],
    }


@pytest.mark.parametrize(
    "bad",
    [
        {"spaces": [{"space_id": "a"}, {"space_id": "a"}]},
        {"players": [{"player_id": 1}, {"player_id": 1}]},
        {"spaces": [{"space_id": "a", "arrangement": "heap"}]},
        {"spaces": [{"space_id": "a", "pieces": [{"public_kind": 3}]}]},
        {"players": [{"player_id": -1}]},
        {"active_player_ids": ["1"]},
        [],
    ],
)
def test_normalize_refuses_malformed_states(bad: Any) -> None:
    with pytest.raises(PatchError):
        normalize_state(bad)


def test_move_without_to_index_appends() -> None:
    table = two_spaces(["a0", "a1"], ["b0"])
    table.apply_patch({"op": "move_piece", "from": "a", "index": 0, "to": "b"})
    assert (kinds(table, "a"), kinds(table, "b")) == (["a1"], ["b0", "a0"])


def test_move_with_to_index_inserts_there() -> None:
    table = two_spaces(["a0", "a1"], ["b0", "b1"])
    table.apply_patch({"op": "move_piece", "from": "a", "index": 1, "to": "b", "to_index": 1})
    assert (kinds(table, "a"), kinds(table, "b")) == (["a0"], ["b0", "a1", "b1"])


def test_same_space_move_counts_to_index_after_the_removal() -> None:
    table = two_spaces(["p0", "p1", "p2", "p3"], [])
    table.apply_patch({"op": "move_piece", "from": "a", "index": 0, "to": "a", "to_index": 3})
    assert kinds(table, "a") == ["p1", "p2", "p3", "p0"]
    with pytest.raises(PatchError):  # 4 would be past the end once the piece is out
        table.apply_patch({"op": "move_piece", "from": "a", "index": 0, "to": "a", "to_index": 4})
    table.apply_patch({"op": "move_piece", "from": "a", "index": 3, "to": "a"})
    assert kinds(table, "a") == ["p1", "p2", "p3", "p0"]


def test_permute_takes_new_k_from_old_order_k() -> None:
    table = two_spaces(["p0", "p1", "p2"], [])
    table.apply_patch({"op": "permute", "space_id": "a", "order": [2, 0, 1]})
    assert kinds(table, "a") == ["p2", "p0", "p1"]


def test_null_removes_a_key_everywhere() -> None:
    table = two_spaces(["p0"], [])
    sets = [
        ("set_piece_public_state", {"space_id": "a", "index": 0}),
        ("set_piece_private_state", {"space_id": "a", "index": 0}),
        ("set_space_public_state", {"space_id": "a"}),
        ("set_space_private_state", {"space_id": "a"}),
        ("set_player_public_state", {"player_id": 1}),
        ("set_player_private_state", {"player_id": 2}),
        ("set_meta", {}),
    ]
    table.apply([{"op": op, **where, "key": "k", "value": [1]} for op, where in sets])
    snapshot = table.snapshot()
    assert snapshot.count(b'"k":[1]') == len(sets)
    table.apply([{"op": op, **where, "key": "k", "value": None} for op, where in sets])
    assert b'"k"' not in table.snapshot()


def test_log_keeps_the_newest_entries() -> None:
    table = two_spaces([], [])
    table.apply([{"op": "log", "entry": {"text": str(n)}} for n in range(LOG_CAP + 7)])
    log = table.state["log"]
    assert len(log) == LOG_CAP
    assert (log[0]["text"], log[-1]["text"]) == ("7", str(LOG_CAP + 6))


def test_a_list_is_checked_against_the_lengths_its_own_patches_make() -> None:
    table = two_spaces([], [])
    table.apply(
        [
            {"op": "add_piece", "space_id": "a", "piece": {"public_kind": "p0"}},
            {"op": "insert_piece", "space_id": "a", "index": 1, "piece": {"public_kind": "p1"}},
            {"op": "move_piece", "from": "a", "index": 1, "to": "b", "to_index": 0},
            {"op": "set_public_kind", "space_id": "b", "index": 0, "kind": "moved"},
        ]
    )
    assert (kinds(table, "a"), kinds(table, "b")) == (["p0"], ["moved"])
    with pytest.raises(PatchError) as caught:
        table.apply(
            [
                {"op": "remove_piece", "space_id": "b", "index": 0},
                {"op": "remove_piece", "space_id": "b", "index": 0},
            ]
        )
    assert caught.value.patch_index == 1
    assert kinds(table, "b") == ["moved"]


def test_module_functions_work_on_a_plain_state() -> None:
    state = two_spaces(["p0"], []).state
    apply_patch(state, {"op": "set_public_kind", "space_id": "a", "index": 0, "kind": "q"})
    apply_patches(state, [{"op": "move_piece", "from": "a", "index": 0, "to": "b"}])
    assert state["spaces"][1]["pieces"][0]["public_kind"] == "q"
    with pytest.raises(PatchError):
        apply_patches(
            state,
            [
                {"op": "remove_piece", "space_id": "b", "index": 0},
                {"op": "remove_piece", "space_id": "b", "index": 0},
            ],
        )
    assert len(state["spaces"][1]["pieces"]) == 1


def test_every_documented_op_is_known() -> None:
    assert PATCH_OPS == {
        "add_piece", "insert_piece", "remove_piece", "move_piece", "permute", "set_public_kind",
        "set_private_kind", "set_piece_owner", "set_piece_public_state", "set_piece_private_state",
        "set_space_owner", "set_space_public_state", "set_space_private_state",
        "set_player_public_state", "set_player_private_state", "set_active_players", "set_meta", "log",
    }  # fmt: skip


def test_snapshot_is_orjson_of_the_state_and_bad_bytes_are_refused() -> None:
    table = two_spaces(["p0"], [])
    assert orjson.loads(table.snapshot()) == table.state
    with pytest.raises(PatchError):
        Table.from_snapshot(b"{not json")


@settings(max_examples=200, deadline=None)
@given(states_with_patches())
def test_apply_after_check_commits_what_check_prepared(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    """check() keeps its prepared steps for an apply() of the same list: the result is exactly a
    plain apply's, the patches are not aliased by the state, and the kept steps are used once."""
    state, patches = case
    plain, reused = Table(state), Table(state)
    plain.apply(patches)
    kept = orjson.dumps(patches)
    reused.check(patches)
    reused.apply(patches)
    assert reused.canonical_json() == plain.canonical_json()
    assert orjson.dumps(patches) == kept
    for space in reused.state["spaces"]:  # nothing of the patches lives in the state
        for piece in space["pieces"]:
            assert all(piece is not p.get("piece") for p in patches)
    # A second apply of the same list prepares again against the state as it is now.
    try:
        plain.apply(patches)
        expected: bytes | type[PatchError] = plain.canonical_json()
    except PatchError:
        expected = PatchError
    try:
        reused.apply(patches)
        got: bytes | type[PatchError] = reused.canonical_json()
    except PatchError:
        got = PatchError
    assert got == expected


def test_kept_steps_serve_only_the_list_that_was_checked() -> None:
    """Another list, or any change in between, prepares afresh (the kept steps are stale)."""
    state = {"spaces": [{"space_id": "a", "pieces": [{"public_kind": "x"}]}, {"space_id": "b"}]}
    move = [{"op": "move_piece", "from": "a", "index": 0, "to": "b"}]
    table = Table(state)
    table.check(move)
    table.apply([{"op": "set_public_kind", "space_id": "a", "index": 0, "kind": "y"}])
    assert table.space("a")["pieces"][0]["public_kind"] == "y" and table.length("b") == 0
    table.check(move)
    table.apply_patch({"op": "move_piece", "from": "a", "index": 0, "to": "b"})
    with pytest.raises(PatchError):
        table.apply(move)  # space a is empty now: the kept steps were dropped, the patch refused
    assert table.length("a") == 0 and table.length("b") == 1


# ---------------------------------------------------------------- fast paths equal the full normalisation

_odd = st.none() | st.booleans() | st.integers(-1, 2**32) | st.text(max_size=2) | st.just(1.5)
_maps = st.none() | st.just({}) | st.dictionaries(st.sampled_from(["k", ""]), _odd, max_size=2) | _odd | st.just([])
_field_values = {
    "public_kind": _odd,
    "public_state": _maps,
    "private_kind": _odd,
    "private_state": _maps,
    "owner": _odd | st.sampled_from([0, 7, 2**32 - 1, 2**32]),
    "extra": _odd,
}
_loose_pieces = st.fixed_dictionaries({}, optional=_field_values) | _odd | st.just([])
_loose_entries = (
    st.fixed_dictionaries(
        {}, optional={"text": _odd | st.just("seat1 moves"), "for_player": _maps | st.just({"1": "x"})}
    )
    | _odd
)


def _outcome(normalize: Any, value: Any) -> Any:
    """What a normaliser gives for ``value``: its result, or the message it refused with."""
    try:
        return normalize(value)
    except PatchError as exc:
        return ("refused", exc.message)


@settings(max_examples=400, deadline=None)
@given(_loose_pieces)
def test_the_new_piece_fast_path_equals_the_full_normalisation(piece: Any) -> None:
    """Whatever a patch holds as its piece: the same piece (a fresh copy) or the same refusal."""
    from tablehost.table import _new_piece, _normalize_piece

    fast, full = _outcome(_new_piece, piece), _outcome(_normalize_piece, piece)
    assert fast == full
    if isinstance(fast, dict) and isinstance(piece, dict):
        assert fast["public_state"] is not piece.get("public_state")
        assert fast["private_state"] is not piece.get("private_state")


@settings(max_examples=300, deadline=None)
@given(_loose_entries)
def test_the_log_entry_fast_path_equals_the_full_normalisation(entry: Any) -> None:
    from tablehost.table import _new_log_entry, _normalize_log_entry

    fast, full = _outcome(_new_log_entry, entry), _outcome(_normalize_log_entry, entry)
    assert fast == full
    if isinstance(fast, dict) and isinstance(entry, dict):
        assert fast["for_player"] is not entry.get("for_player")


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["set_public_kind", "set_private_kind", "set_piece_owner"]),
    st.sampled_from(["a", "b", "z", None, 3]),
    _odd | st.sampled_from([0, 1, 2]),
    _odd | st.sampled_from(["y", 1]),
    st.booleans(),
)
def test_piece_field_patches_are_refused_exactly_by_the_rule(
    op: str, space_id: Any, index: Any, value: Any, after_a_removal: bool
) -> None:
    """The inlined space and index checks of set_public_kind, set_private_kind and set_piece_owner:
    accepted exactly when the space exists, the index names a piece as of this patch, and the new
    value has its type; a refusal names what the general checks name."""
    table = Table({"spaces": [{"space_id": "a", "pieces": [{"public_kind": "x"}, {"public_kind": "x"}]},
                              {"space_id": "b"}]})
    name = "owner" if op == "set_piece_owner" else "kind"
    patch = {"op": op, "space_id": space_id, "index": index, name: value}
    patches = ([{"op": "remove_piece", "space_id": "a", "index": 0}] if after_a_removal else []) + [patch]
    length = {"a": 1 if after_a_removal else 2, "b": 0}.get(space_id) if type(space_id) is str else None
    if op == "set_public_kind":
        value_ok = type(value) is str
    elif op == "set_private_kind":
        value_ok = value is None or type(value) is str
    else:
        value_ok = value is None or (type(value) is int and 0 <= value <= 0xFFFFFFFF)
    try:
        table.check(patches)
        refusal = None
    except PatchError as exc:
        refusal = exc.message
    if length is None:
        assert refusal is not None and "no space" in refusal
    elif type(index) is not int or not 0 <= index < length:
        wording = "has no pieces" if length == 0 else "outside"  # an empty space names no range
        assert refusal is not None and "index" in refusal and wording in refusal
    elif not value_ok:
        assert refusal is not None and f"{name} must be" in refusal
    else:
        assert refusal is None
        table.apply(patches)
        field = {"set_public_kind": "public_kind", "set_private_kind": "private_kind"}.get(op, "owner")
        assert table.space(space_id)["pieces"][index][field] == value


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_refused_list_names_the_patch_its_op_and_the_fault(data: st.DataObject) -> None:
    """check and apply refuse a list with ``patch <i>: <op>: <fault>`` (what the patch alone is
    refused with), ``patch_index`` i, whichever way the patch is prepared."""
    from tablehost.table import _prepare

    state = data.draw(states())
    good = data.draw(patch_lists(state, max_size=3))
    table = Table(state)
    after = Table(state)
    after.apply(good)
    bad = data.draw(bad_patches(after.state))  # refused by the state the patches before it leave
    try:
        _prepare(after, bad, {})
        raise AssertionError("the bad patch was prepared")
    except PatchError as alone:
        expected = f"patch {len(good)}: {alone.message}"
    for run in (table.check, table.apply):
        with pytest.raises(PatchError) as refused:
            run([*good, bad])
        assert refused.value.message == expected
        assert refused.value.patch_index == len(good)
    assert table.canonical_json() == Table(state).canonical_json()


@pytest.mark.parametrize(
    "patch",
    [
        {"op": "remove_piece", "space_id": "b", "index": 5},
        {"op": "move_piece", "from": "b", "index": 0, "to": "a"},
        {"op": "set_public_kind", "space_id": "b", "index": 0, "kind": "y"},
    ],
)
def test_a_patch_on_an_empty_space_says_the_space_has_no_pieces(patch: dict[str, Any]) -> None:
    table = two_spaces(["a0"], [])
    with pytest.raises(PatchError) as caught:
        table.apply_patch(patch)
    assert caught.value.message.endswith(f"index {patch['index']}: the space has no pieces")
    assert "0..-1" not in caught.value.message
    with pytest.raises(PatchError) as outside:  # a space with pieces still names its range
        table.apply_patch({"op": "remove_piece", "space_id": "a", "index": 5})
    assert "index 5 is outside 0..0 of the space" in outside.value.message
