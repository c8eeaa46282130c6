"""Real ABI v1 traffic of the committed sample modules against schemas/*.schema.json.

A minimal raw driver (no budgets, no pool: this checks the wire format, not
the host) plays seeded random games through `tablehost_call` and validates
every request, response, state, patch and offered action, plus the error and
panic paths, against the published JSON Schemas (docs/abi.md).
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
import wasmtime
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from wasmtime._instance import InstanceExports

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "schemas"
DIST = ROOT / "sample_games" / "dist"
BASE = "https://tablehost.dev/schemas/abi-v1/"

OP_SETUP, OP_ACTIONS, OP_STEP, OP_SCORES, OP_GAME_OVER = 1, 2, 3, 4, 5

SAMPLE_MODULES = sorted(DIST.glob("*.wasm"))


def _registry() -> Registry:
    resources = []
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        document = json.loads(path.read_text())
        resources.append((document["$id"], Resource.from_contents(document)))
    return Registry().with_resources(resources)


REGISTRY = _registry()


def validator(name: str) -> Draft202012Validator:
    """A validator for `<file>.schema.json` or `messages.schema.json#/$defs/<Name>`."""
    if name.endswith(".schema.json"):
        schema: dict[str, Any] = {"$ref": BASE + name}
    else:
        schema = {"$ref": BASE + "messages.schema.json#/$defs/" + name}
    return Draft202012Validator(schema, registry=REGISTRY)


def check(name: str, instance: Any) -> None:
    """Raise `jsonschema.ValidationError` when `instance` does not match schema `name`."""
    validator(name).validate(instance)


ENGINE = wasmtime.Engine()
_COMPILED: dict[Path, wasmtime.Module] = {}


def compiled(path: Path) -> wasmtime.Module:
    """The module at `path`, compiled once per test session."""
    if path not in _COMPILED:
        _COMPILED[path] = wasmtime.Module(ENGINE, path.read_bytes())
    return _COMPILED[path]


def _func(exports: InstanceExports, name: str) -> wasmtime.Func:
    item = exports[name]
    assert isinstance(item, wasmtime.Func), name
    return item


def _parse(response: bytes) -> dict[str, Any]:
    parsed = json.loads(response)
    assert isinstance(parsed, dict)
    return parsed


class RawGuest:
    """One instance of a module, driven through the bare ABI exports."""

    def __init__(self, module: wasmtime.Module) -> None:
        self.store = wasmtime.Store(ENGINE)
        instance = wasmtime.Instance(self.store, module, [])
        exports = instance.exports(self.store)
        memory = exports["memory"]
        assert isinstance(memory, wasmtime.Memory)
        self.memory = memory
        self._alloc = _func(exports, "tablehost_alloc")
        self._dealloc = _func(exports, "tablehost_dealloc")
        self._call = _func(exports, "tablehost_call")
        self._panic_message = _func(exports, "tablehost_panic_message")

    def _read_packed(self, packed: int) -> bytes:
        packed &= 0xFFFF_FFFF_FFFF_FFFF
        ptr, length = packed >> 32, packed & 0xFFFF_FFFF
        return bytes(self.memory.read(self.store, ptr, ptr + length))

    def call_raw(self, op: int, request: bytes) -> dict[str, Any]:
        """Send `request` bytes for `op`; returns the parsed response. Traps propagate."""
        ptr = self._alloc(self.store, len(request))
        assert ptr != 0
        self.memory.write(self.store, request, ptr)
        try:
            packed = self._call(self.store, op, ptr, len(request))
        finally:
            self._dealloc(self.store, ptr, len(request))
        return _parse(self._read_packed(packed))

    def call(self, op: int, request: dict[str, Any]) -> dict[str, Any]:
        return self.call_raw(op, json.dumps(request).encode())

    def panic_report(self) -> dict[str, Any]:
        return _parse(self._read_packed(self._panic_message(self.store)))


def players(count: int) -> list[dict[str, Any]]:
    return [{"player_id": 10 + i, "username": f"p{i}", "color": "#000"} for i in range(count)]


def guest_for(path: Path) -> RawGuest:
    return RawGuest(compiled(path))


def start(path: Path, seed: int, next_ref: str) -> tuple[RawGuest, dict[str, Any]]:
    """A fresh instance with a match set up: tries 2, 4 then 3 players, since
    each sample game accepts its own player count (a wrong one panics)."""
    for count in (2, 4, 3):
        guest = guest_for(path)
        request = {"players": players(count), "seed": seed, "next_ref": next_ref}
        check("SetupRequest", request)
        try:
            return guest, guest.call(OP_SETUP, request)
        except wasmtime.Trap:
            continue
    raise AssertionError(f"{path.name} accepted none of 2, 4 or 3 players")


def check_offered(actions: dict[str, list[dict[str, Any]]]) -> None:
    for offered in actions.values():
        for available in offered:
            check("available_action.schema.json", available)


def play_random(path: Path, seed: int, max_moves: int) -> int:
    """Play up to `max_moves` random offered moves, validating all traffic; returns moves made."""
    rng = random.Random(seed)
    guest, setup = start(path, seed, "ref-0")
    check("SetupResponse", setup)
    check("state.schema.json", setup["state"])
    for patch in setup["patches"]:
        check("patch.schema.json", patch)
    check_offered(setup["actions"])
    actions, game_over = setup["actions"], setup["game_over"]
    moves = 0
    while not game_over and moves < max_moves:
        choices = [(int(pid), a["action"]) for pid, offered in actions.items() for a in offered]
        if not choices:
            break
        player_id, action = rng.choice(choices)
        check("action.schema.json", action)
        request = {
            "state_ref": f"ref-{moves}",
            "next_ref": f"ref-{moves + 1}",
            "player_id": player_id,
            "action": action,
            "seed": rng.getrandbits(64),
            "want_state": moves % 5 == 0,
        }
        check("StepRequest", request)
        response = guest.call(OP_STEP, request)
        check("StepResponse", response)
        for patch in response["patches"]:
            check("patch.schema.json", patch)
        if "state" in response:
            check("state.schema.json", response["state"])
        check_offered(response["actions"])
        actions, game_over = response["actions"], response["game_over"]
        moves += 1
    final_ref = {"state_ref": f"ref-{moves}"}
    check("ScoresRequest", final_ref)
    check("ScoresResponse", guest.call(OP_SCORES, final_ref))
    check("GameOverResponse", guest.call(OP_GAME_OVER, final_ref))
    return moves


@pytest.mark.parametrize("path", SAMPLE_MODULES, ids=lambda p: p.stem)
def test_random_playout_traffic_matches_the_schemas(path: Path) -> None:
    assert play_random(path, seed=1, max_moves=40) > 0


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**64 - 1))
def test_tic_tac_toe_games_to_the_end_match_the_schemas(seed: int) -> None:
    assert play_random(DIST / "tic_tac_toe.wasm", seed=seed, max_moves=9) >= 5


@pytest.fixture
def ttt() -> RawGuest:
    return guest_for(DIST / "tic_tac_toe.wasm")


def _setup_ttt(guest: RawGuest, next_ref: str = "r0") -> dict[str, Any]:
    return guest.call(OP_SETUP, {"players": players(2), "seed": 5, "next_ref": next_ref})


def test_actions_by_ref_and_by_state_agree(ttt: RawGuest) -> None:
    setup = _setup_ttt(ttt)
    by_ref = ttt.call(OP_ACTIONS, {"state_ref": "r0", "player_id": 10})
    by_state = ttt.call(OP_ACTIONS, {"state": setup["state"], "player_id": 10})
    check("ActionsResponse", by_ref)
    assert by_ref == by_state
    assert len(by_ref["actions"]) == 9


def test_a_missing_ref_answers_state_miss_and_the_resend_works(ttt: RawGuest) -> None:
    setup = _setup_ttt(ttt)
    step = {
        "state_ref": "never-cached",
        "next_ref": "r1",
        "player_id": 10,
        "action": {"type": "space_click", "space_id": "b2"},
        "seed": 0,
    }
    miss = ttt.call(OP_STEP, step)
    check("ErrorResponse", miss)
    assert miss["error"]["code"] == "state_miss"
    del step["state_ref"]
    step["state"] = setup["state"]
    check("StepResponse", ttt.call(OP_STEP, step))


@pytest.mark.parametrize(
    ("op", "request_bytes", "code"),
    [
        (OP_STEP, b"{not json", "bad_request"),
        (OP_ACTIONS, b"{}", "bad_request"),
        (OP_SCORES, b'{"state_ref": 3}', "bad_request"),
        (42, b"{}", "unknown_op"),
        (OP_ACTIONS, b'{"state_ref": "r0", "player_id": 99}', "unknown_player"),
    ],
)
def test_error_responses_match_the_schema(ttt: RawGuest, op: int, request_bytes: bytes, code: str) -> None:
    _setup_ttt(ttt)
    response = ttt.call_raw(op, request_bytes)
    check("ErrorResponse", response)
    assert response["error"]["code"] == code


def test_a_panic_traps_and_leaves_a_report_with_its_location(ttt: RawGuest) -> None:
    _setup_ttt(ttt)
    first = {
        "state_ref": "r0",
        "next_ref": "r1",
        "player_id": 10,
        "seed": 0,
        "action": {"type": "space_click", "space_id": "b2"},
    }
    ttt.call(OP_STEP, first)
    again = dict(first, state_ref="r1", next_ref="r2", player_id=11)
    with pytest.raises(wasmtime.Trap):
        ttt.call(OP_STEP, again)
    report = ttt.panic_report()
    check("PanicReport", report)
    assert "already marked" in report["message"]
    assert "sample_games/tic_tac_toe/src/lib.rs" in report["message"]
    assert "/work/" not in report["message"], "paths are remapped to the repository root"


def test_no_panic_report_before_a_panic(ttt: RawGuest) -> None:
    report = ttt.panic_report()
    check("PanicReport", report)
    assert report["message"] is None


def test_the_abi_marker_reports_minor_version_one() -> None:
    store = wasmtime.Store(ENGINE)
    instance = wasmtime.Instance(store, compiled(DIST / "tic_tac_toe.wasm"), [])
    assert _func(instance.exports(store), "tablehost_abi_v1")(store) == 1


OP_PLAYOUT, OP_SEARCH = 7, 8


@pytest.mark.parametrize("path", SAMPLE_MODULES, ids=lambda p: p.stem)
def test_playout_and_search_traffic_matches_the_schemas(path: Path) -> None:
    guest, setup = start(path, 5, "m/v0")
    seated = [{"player_id": int(pid)} for pid in setup["scores"]]
    request = {"players": seated, "seeds": [1, 2], "policies": ["random"], "max_plies": 50}
    check("PlayoutRequest", request)
    check("PlayoutResponse", guest.call(OP_PLAYOUT, request))
    from_ref = {"state_ref": "m/v0", "seeds": [3], "policies": ["first"]}
    check("PlayoutRequest", from_ref)
    check("PlayoutResponse", guest.call(OP_PLAYOUT, from_ref))
    from tablehost.table import apply_patches, normalize_state
    from tablehost.view import view_state

    mover = int(next(iter(setup["actions"])))
    state = normalize_state(setup["state"])
    apply_patches(state, setup["patches"])
    from tablehost.search_view import expand_view

    view = expand_view(view_state(state, mover)).state
    for algorithm in ("ismcts", "mcts"):
        search = {"view": view, "player_id": mover, "algorithm": algorithm, "iterations": 5, "seed": 9}
        check("SearchRequest", search)
        try:
            answer = guest.call(OP_SEARCH, search)
        except wasmtime.Trap:
            # A game that hides information but has no sample_hidden may panic running its
            # rules on a bare view: a refused decision, nothing on the wire to check.
            assert algorithm == "mcts"
            break
        check("SearchResponse" if "error" not in answer else "ErrorResponse", answer)


# Module shape (docs/abi.md section 1) and the sample games' size targets.

ABI_EXPORTS = {
    "memory",
    "tablehost_abi_v1",
    "tablehost_alloc",
    "tablehost_dealloc",
    "tablehost_call",
    "tablehost_panic_message",
}
MAX_MODULE_BYTES = 400 * 1024
MAX_INITIAL_MEMORY_BYTES = 2 * 1024 * 1024
WASM_PAGE_BYTES = 64 * 1024


def test_every_sample_game_crate_has_a_committed_module() -> None:
    crates = {p.parent.name for p in (ROOT / "sample_games").glob("*/Cargo.toml")}
    assert crates <= {p.stem for p in SAMPLE_MODULES}
    assert "tic_tac_toe" in crates


@pytest.mark.parametrize("path", SAMPLE_MODULES, ids=lambda p: p.stem)
def test_sample_module_shape_and_size(path: Path) -> None:
    module = compiled(path)
    assert list(module.imports) == []
    exports = {export.name: export.type for export in module.exports}
    assert ABI_EXPORTS <= exports.keys()
    assert path.stat().st_size <= MAX_MODULE_BYTES
    memory = exports["memory"]
    assert isinstance(memory, wasmtime.MemoryType)
    assert memory.limits.min * WASM_PAGE_BYTES <= MAX_INITIAL_MEMORY_BYTES
    call = exports["tablehost_call"]
    assert isinstance(call, wasmtime.FuncType)
    assert [str(t) for t in call.params] == ["i32", "i32", "i32"]
    assert [str(t) for t in call.results] == ["i64"]


def test_sums_file_lists_every_module() -> None:
    lines = (DIST / "SHA256SUMS").read_text().splitlines()
    expected = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}" for p in SAMPLE_MODULES]
    assert lines == expected


# ABI v1.1: op 6 metadata and setup's options.

OP_METADATA = 6


@pytest.mark.parametrize("path", SAMPLE_MODULES, ids=lambda p: p.stem)
def test_every_sample_declares_metadata_with_a_real_option(path: Path) -> None:
    guest = guest_for(path)
    request: dict[str, Any] = {}
    check("MetadataRequest", request)
    response = guest.call(OP_METADATA, request)
    check("MetadataResponse", response)
    metadata = response["metadata"]
    assert metadata["options"], f"{path.stem} declares no option"
    assert 1 <= metadata["min_players"] <= metadata["max_players"]


@pytest.mark.parametrize("path", SAMPLE_MODULES, ids=lambda p: p.stem)
def test_setup_with_every_default_option_records_them_in_meta_data(path: Path) -> None:
    metadata = guest_for(path).call(OP_METADATA, {})["metadata"]
    defaults = {option["name"]: option["default"] for option in metadata["options"]}
    request = {"players": players(metadata["min_players"]), "seed": 3, "next_ref": "r", "options": defaults}
    check("SetupRequest", request)
    response = guest_for(path).call(OP_SETUP, request)
    check("SetupResponse", response)
    assert response["state"]["meta_data"]["options"] == defaults


def test_setup_refuses_an_option_the_game_does_not_declare() -> None:
    guest = guest_for(DIST / "tic_tac_toe.wasm")
    response = guest.call(OP_SETUP, {"players": players(2), "seed": 1, "next_ref": "r", "options": {"size": 4}})
    check("ErrorResponse", response)
    assert response["error"]["code"] == "bad_request"
    assert "unknown option" in response["error"]["message"]
