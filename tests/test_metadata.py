"""Game metadata (ABI v1.1 op 6): the host's checks of a module's answer, option resolution,
seat counts, and hostile guests whose metadata or ranks are malformed (tests/wat echo guest
with a spliced hook that answers chosen ops with chosen JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import wasmtime
from hypothesis import given
from hypothesis import strategies as st

from fixtures_guest import WAT_DIR, cache_dir  # noqa: F401 - the fixture
from tablehost.api.auth import ADMIN
from tablehost.api.registry import MatchRegistry
from tablehost.errors import GuestProtocolError, ModuleError
from tablehost.guest import GuestPool
from tablehost.match import Match, PlayerInfo
from tablehost.metadata import (
    DEFAULT_METADATA,
    SetupRefused,
    check_player_count,
    parse_metadata,
    resolve_options,
)
from tablehost.module import load_module

HEARTS = Path(__file__).resolve().parents[1] / "sample_games" / "dist" / "hearts.wasm"

GOOD = {
    "min_players": 2,
    "max_players": 4,
    "description": "a test game",
    "hidden_information": True,
    "result": "lowest_score",
    "resign": "ends",
    "options": [
        {"name": "target", "type": "integer", "default": 100, "min": 20, "max": 500, "description": ""},
        {"name": "deck", "type": "choice", "default": "full", "values": ["full", "short"]},
        {"name": "jokers", "type": "boolean", "default": False},
    ],
}


def scripted_guest(answers: dict[int, Any], *, minor: int = 1) -> bytes:
    """The echo guest with marker ``minor`` whose op ``n`` answers ``answers[n]`` (JSON) verbatim."""
    text = (WAT_DIR / "echo_guest.wat").read_text()
    marker = '(func (export "tablehost_abi_v1") (result i32) (i32.const 0))'
    assert marker in text
    text = text.replace(marker, f'(func (export "tablehost_abi_v1") (result i32) (i32.const {minor}))')
    hook = """  (func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
    (i64.const 0))"""
    body, data = "(i64.const 0)", ""
    for index, (op, answer) in enumerate(sorted(answers.items())):
        address = 16384 + index * 4096
        raw = answer if isinstance(answer, bytes) else orjson.dumps(answer)
        assert len(raw) < 4000
        escaped = raw.decode().replace("\\", "\\\\").replace('"', '\\"')
        data += f'  (data (i32.const {address}) "{escaped}\\00")\n'
        body = (
            f"(if (result i64) (i32.eq (local.get $op) (i32.const {op})) "
            f"(then (call $packed_cstr (i32.const {address}))) (else {body}))"
        )
    replacement = data + f"  (func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)\n    {body})"
    assert hook in text
    return bytes(wasmtime.wat2wasm(text.replace(hook, replacement)))


def pool_for(wasm: bytes, cache: Path) -> GuestPool:
    return GuestPool(load_module(wasm, cache_dir=cache, name="scripted"))


# ------------------------------------------------------------------ parsing


def test_a_well_formed_answer_is_read_in_full() -> None:
    metadata = parse_metadata({"metadata": GOOD})
    assert (metadata.min_players, metadata.max_players) == (2, 4)
    assert metadata.result == "lowest_score" and metadata.hidden_information
    assert [o.name for o in metadata.options] == ["target", "deck", "jokers"]
    assert metadata.option("deck").values == ("full", "short")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"min_players": 0}, "player range"),
        ({"min_players": 5}, "player range"),
        ({"max_players": 65}, "player range"),
        ({"min_players": "2"}, "min_players"),
        ({"hidden_information": "yes"}, "hidden_information"),
        ({"result": "most_cards"}, "result"),
        ({"resign": "never"}, "resign"),
        ({"description": 7}, "description"),
        ({"description": "x" * 2001}, "description"),
        ({"options": {}}, "options"),
        ({"options": [1]}, "options[0]"),
        ({"options": [{"name": "a", "type": "float", "default": 1}]}, "options[0].type"),
        ({"options": [{"name": "", "type": "boolean", "default": True}]}, "options[0].name"),
        ({"options": [{"name": "a", "type": "boolean"}]}, "options[0].default"),
        ({"options": [{"name": "a", "type": "boolean", "default": 1}]}, "options[0].default"),
        ({"options": [{"name": "a", "type": "integer", "default": 5, "min": 6, "max": 9}]}, "options[0].default"),
        ({"options": [{"name": "a", "type": "integer", "default": 5, "min": 9, "max": 6}]}, "options[0].min"),
        ({"options": [{"name": "a", "type": "integer", "default": 5, "min": 0}]}, "options[0].max"),
        ({"options": [{"name": "a", "type": "integer", "default": 5, "min": 0, "max": 2**60}]}, "options[0].max"),
        ({"options": [{"name": "a", "type": "choice", "default": "x", "values": []}]}, "options[0].values"),
        ({"options": [{"name": "a", "type": "choice", "default": "x", "values": ["y", "y"]}]}, "options[0].values"),
        ({"options": [{"name": "a", "type": "choice", "default": "z", "values": ["x"]}]}, "options[0].default"),
        ({"options": [{"name": "a", "type": "boolean", "default": True}] * 2}, "twice"),
    ],
)
def test_a_malformed_answer_is_refused_naming_the_member(change: dict[str, Any], named: str) -> None:
    with pytest.raises(GuestProtocolError, match="metadata") as refused:
        parse_metadata({"metadata": GOOD | change})
    assert named in str(refused.value)


@pytest.mark.parametrize("answer", [None, [], {"metadata": []}, {"meta": {}}, "metadata"])
def test_an_answer_without_a_metadata_object_is_refused(answer: Any) -> None:
    with pytest.raises(GuestProtocolError):
        parse_metadata(answer)


# ------------------------------------------------------------------ seats and options


def test_player_counts_outside_the_range_are_refused_naming_the_count() -> None:
    metadata = parse_metadata({"metadata": GOOD})
    for count in (2, 3, 4):
        check_player_count(metadata, count)
    for count in (1, 5):
        with pytest.raises(SetupRefused, match=f"2 to 4 players, not {count}"):
            check_player_count(metadata, count)


def test_options_resolve_with_defaults_and_refuse_what_is_not_declared() -> None:
    metadata = parse_metadata({"metadata": GOOD})
    assert resolve_options(metadata, {}) == {"target": 100, "deck": "full", "jokers": False}
    assert resolve_options(metadata, {"target": 30.0, "jokers": True})["target"] == 30
    with pytest.raises(SetupRefused, match="unknown option 'colour'"):
        resolve_options(metadata, {"colour": "red"})
    with pytest.raises(SetupRefused, match="option 'target' must be an integer 20..500, not 10"):
        resolve_options(metadata, {"target": 10})
    with pytest.raises(SetupRefused, match="option 'deck' must be one of"):
        resolve_options(metadata, {"deck": "tiny"})
    with pytest.raises(SetupRefused, match="option 'jokers' must be true or false"):
        resolve_options(metadata, {"jokers": "yes"})
    with pytest.raises(SetupRefused, match="must be an integer"):
        resolve_options(metadata, {"target": 30.5})


@given(st.dictionaries(st.sampled_from(["target", "deck", "jokers", "other"]), st.one_of(
    st.integers(-10, 1000), st.booleans(), st.sampled_from(["full", "short", "tiny"]))))
def test_resolved_options_are_always_allowed_and_complete(given_options: dict[str, Any]) -> None:
    metadata = parse_metadata({"metadata": GOOD})
    try:
        resolved = resolve_options(metadata, given_options)
    except SetupRefused:
        return
    assert set(resolved) == {"target", "deck", "jokers"}
    assert all(metadata.option(name).allows(value) for name, value in resolved.items())  # type: ignore[union-attr]


# ------------------------------------------------------------------ hostile guests


def test_a_minor_zero_module_gets_the_defaults(cache_dir: Path) -> None:  # noqa: F811
    pool = pool_for(scripted_guest({}, minor=0), cache_dir)
    assert pool.metadata() is None
    assert DEFAULT_METADATA.min_players == 1 and DEFAULT_METADATA.options == ()


@pytest.mark.parametrize(
    "answer",
    [b"not json", {"metadata": GOOD | {"max_players": 99}}, {"metadata": GOOD | {"options": [{"name": 1}]}}],
    ids=["garbage", "range", "option"],
)
def test_upload_refuses_a_module_with_malformed_metadata_and_stores_nothing(
    tmp_path: Path, answer: Any
) -> None:
    registry = MatchRegistry(tmp_path / "data")
    try:
        with pytest.raises(ModuleError, match="metadata"):
            registry.upload_module(ADMIN, scripted_guest({6: answer}), "hostile")
        assert registry.list_modules(ADMIN) == []
    finally:
        registry.close()


STATE = {
    "active_player_ids": [1],
    "players": [{"player_id": 1}, {"player_id": 2}],
    "spaces": [{"space_id": "a", "kind": "cell"}],
    "meta_data": {},
    "log": [],
}
OFFER = {"action": {"type": "space_click", "space_id": "a"}, "intent": "confirm", "label": "a"}
SCORES = {"1": {"public_points": [1.0]}, "2": {"public_points": [0.0]}}
SETUP = {"state": STATE, "patches": [], "rng_used": False, "score_labels": ["P"], "scores": SCORES,
         "game_over": False, "actions": {"1": [OFFER]}}
RANKS_META = {"metadata": {"min_players": 2, "max_players": 2, "result": "ranks"}}


def _step(ranks: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {"patches": [{"op": "set_active_players", "player_ids": []}], "rng_used": False,
                              "allow_undo": False, "scores": SCORES, "game_over": True, "actions": {}}
    if ranks is not None:
        answer["ranks"] = ranks
    return answer


@pytest.mark.parametrize(
    "ranks",
    [None, [1, 2], {"1": 1}, {"1": 1, "3": 2}, {"1": 0, "2": 1}, {"1": 1, "2": 3}, {"1": "1", "2": 2},
     {"1": True, "2": 2}],
    ids=["missing", "list", "a-seat-missing", "unseated", "zero", "too-high", "string", "bool"],
)
def test_malformed_ranks_refuse_the_move_and_change_nothing(cache_dir: Path, ranks: Any) -> None:  # noqa: F811
    pool = pool_for(scripted_guest({1: SETUP, 3: _step(ranks), 6: RANKS_META}), cache_dir)
    metadata = parse_metadata(pool.metadata())
    players = [PlayerInfo(1, "ann", "#000"), PlayerInfo(2, "bob", "#fff")]
    match = Match.start(pool, players, match_id="m", metadata=metadata)
    before = match.record()
    with pytest.raises(GuestProtocolError, match="rank"):
        match.submit(1, OFFER["action"])
    assert match.record() == before
    assert match.version == 0 and not match.game_over


def test_ranks_the_game_returns_make_the_result(cache_dir: Path) -> None:  # noqa: F811
    pool = pool_for(scripted_guest({1: SETUP, 3: _step({"1": 2, "2": 1}), 6: RANKS_META}), cache_dir)
    players = [PlayerInfo(1, "ann", "#000"), PlayerInfo(2, "bob", "#fff")]
    match = Match.start(pool, players, match_id="m", metadata=parse_metadata(pool.metadata()))
    match.submit(1, OFFER["action"])
    result = match.result
    assert result is not None
    assert result.ranks == {1: 2, 2: 1} and result.winners == [2], "the game's ranks, not the scores"


def test_create_match_refuses_counts_and_options_before_any_guest_call(tmp_path: Path) -> None:
    registry = MatchRegistry(tmp_path / "data")
    try:
        module = registry.upload_module(ADMIN, HEARTS.read_bytes(), "hearts")
        pool = registry._pool(module.sha256)
        instances = pool.instance_count
        with pytest.raises(SetupRefused, match="exactly 4 players, not 3"):
            registry.create_match(ADMIN, module.sha256, [("", "")] * 3)
        with pytest.raises(SetupRefused, match="target_score"):
            registry.create_match(ADMIN, module.sha256, [("", "")] * 4, {"target_score": 5})
        with pytest.raises(SetupRefused, match="unknown option 'speed'"):
            registry.create_match(ADMIN, module.sha256, [("", "")] * 4, {"speed": 2})
        assert registry.list_matches(ADMIN) == []
        assert list(registry.store.load_records()) == []
        assert pool.instance_count == instances, "no instance was started for a refused match"
    finally:
        registry.close()


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"target": "70"}, 'option \'target\' must be an integer 20..500, not "70"'),  # looked in range as 70
        ({"target": None}, "option 'target' must be an integer 20..500, not null"),  # read `not None`
        ({"target": True}, "option 'target' must be an integer 20..500, not true"),
        ({"jokers": "False"}, 'option \'jokers\' must be true or false, not "False"'),
        ({"deck": "tiny"}, 'option \'deck\' must be one of "full", "short", not "tiny"'),
        ({"deck": ["full"]}, 'option \'deck\' must be one of "full", "short", not a list'),
    ],
)
def test_a_refused_option_value_is_shown_as_json(given: dict[str, Any], said: str) -> None:
    with pytest.raises(SetupRefused) as refused:
        resolve_options(parse_metadata({"metadata": GOOD}), given)
    assert str(refused.value) == said
