"""Guest calls under budgets and the instance pool (tablehost.guest), against hand-written WAT guests."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import wasmtime
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures_guest import ACTION, PLAYERS, cache_dir, load_guest  # noqa: F401  (cache_dir is a fixture)
from tablehost._epoch import TICKER, EpochTicker
from tablehost.errors import BudgetExceeded, GuestError, GuestPanic, GuestProtocolError, GuestTrap
from tablehost.guest import BUDGET_BY_TRAP, SDK_REF_CACHE_SIZE, Guest, GuestPool, classify_failure
from tablehost.limits import DEFAULT_LIMITS, KiB, Limits, MiB
from tablehost.module import load_module

STATE = {"active_player_ids": [1], "players": [], "spaces": [], "meta_data": {"turn": 3}, "log": []}


class StateSource:
    """A ``get_state`` callable that counts how often the pool needed the full state."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        self.state = STATE if state is None else state
        self.calls = 0

    def __call__(self) -> dict[str, Any]:
        self.calls += 1
        return self.state


def make_pool(variant: str | None, cache: Path, limits: Limits | None = None) -> GuestPool:
    module = load_guest(variant, cache, limits or DEFAULT_LIMITS)
    return GuestPool(module, limits)


def step(pool: GuestPool, ref: str, next_ref: str, source: StateSource | None = None) -> dict[str, Any]:
    return pool.step(ref, source or StateSource(), next_ref, 1, ACTION, 2**64 - 1)


# --- a well-behaved guest ---------------------------------------------------------------------


def test_every_op_returns_the_parsed_response(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool(None, cache_dir)

    setup = pool.setup(PLAYERS, 7, "m:0")
    assert setup["echo"] == {"players": PLAYERS, "seed": 7, "next_ref": "m:0"}
    assert setup["printed"] == "setup ran\n"
    assert setup["score_labels"] == ["Points"]

    moved = pool.step("m:0", StateSource(), "m:1", 2, ACTION, 2**64 - 1, want_state=True)
    assert moved["echo"] == {
        "state_ref": "m:0", "next_ref": "m:1", "player_id": 2, "action": ACTION,
        "seed": 2**64 - 1, "want_state": True,
    }
    assert moved["patches"] == [] and isinstance(moved["state"], dict)

    assert pool.actions("m:1", StateSource(), 1) == [
        {"action": {"type": "space_click", "space_id": "a"}, "intent": "choice", "label": "a"}
    ]
    assert pool.scores("m:1", StateSource())["scores"] == {"1": {"public_points": [1.0], "private_points": []}}
    assert pool.game_over("m:1", StateSource())["game_over"] is False


def test_a_held_ref_is_sent_alone_and_moves_on_with_the_step(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool(None, cache_dir)
    pool.setup(PLAYERS, 1, "m:0")
    source = StateSource()

    first = step(pool, "m:0", "m:1", source)
    second = step(pool, "m:1", "m:2", source)
    stale = step(pool, "m:0", "m:9", source)  # m:0 was consumed by the first step

    assert "state" not in first["echo"] and first["echo"]["state_ref"] == "m:0"
    assert "state" not in second["echo"] and second["echo"]["state_ref"] == "m:1"
    assert stale["echo"]["state"] == STATE and "state_ref" not in stale["echo"]
    assert source.calls == 1


def test_an_unknown_or_discarded_ref_sends_the_full_state(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool(None, cache_dir)
    pool.setup(PLAYERS, 1, "m:0")
    source = StateSource()

    assert pool.actions("nobody:0", source, 1) and source.calls == 1
    pool.discard_ref("m:0")
    assert step(pool, "m:0", "m:1", source)["echo"]["state"] == STATE
    assert source.calls == 2


def test_state_miss_resends_the_same_request_with_the_full_state(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool("state_miss", cache_dir)
    pool.setup(PLAYERS, 1, "m:0")
    source = StateSource()

    moved = step(pool, "m:0", "m:1", source)

    assert source.calls == 1
    assert moved["echo"] == {"state": STATE, "next_ref": "m:1", "player_id": 1, "action": ACTION,
                             "seed": 2**64 - 1}
    assert pool.instance_count == 1  # a miss is not a failure
    # The pool now believes m:1 is held: the next miss is resent as well.
    assert "state" in step(pool, "m:1", "m:2", source)["echo"] and source.calls == 2


def test_state_miss_to_a_full_state_is_a_protocol_error(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool("state_miss", cache_dir)
    tricky = StateSource({"state_ref": "a key the guest mistakes for a ref"})

    with pytest.raises(GuestProtocolError, match="state_miss to a request carrying the full state") as err:
        pool.actions("unknown", tricky, 1)
    assert err.value.guest_code == "state_miss"
    assert pool.instance_count == 0


def test_the_ref_mirror_follows_the_sdk_lru(cache_dir: Path) -> None:  # noqa: F811
    guest = Guest(load_guest(None, cache_dir), DEFAULT_LIMITS)
    evicted = [ref for n in range(SDK_REF_CACHE_SIZE + 1) for ref in guest.remember(f"m:{n}")]

    assert evicted == ["m:0"]  # as the SDK's 16-entry LRU would
    guest.touch("m:1")
    assert guest.remember("m:99") == ["m:2"]


def test_an_instance_serves_one_match_and_another_match_gets_a_fresh_one(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool(None, cache_dir, DEFAULT_LIMITS.tightened(instances_per_module=1))
    source = StateSource()
    pool.setup(PLAYERS, 1, "a:0")
    pool.setup(PLAYERS, 2, "b:0")  # the only slot: a's idle instance gives way to a fresh one

    assert "state" in pool.scores("a:0", source)["echo"]  # a's cache went with its instance
    assert "state" in pool.scores("b:0", source)["echo"]  # and b's with its own
    assert pool.instantiations == 4 and pool.instance_count == 1 and source.calls == 2


def test_warm_instances_keep_more_matches_warm_than_calls_in_flight(cache_dir: Path) -> None:  # noqa: F811
    limits = DEFAULT_LIMITS.tightened(instances_per_module=2)
    pool = GuestPool(load_guest(None, cache_dir, limits), limits, warm_instances=6)
    for match in "abcdef":
        pool.setup(PLAYERS, 1, f"{match}:0")
    assert pool.instance_count == 6 and pool.instantiations == 6

    source = StateSource()
    for match in "abcdef":  # every match finds its own instance holding its state: only the ref crosses
        assert step(pool, f"{match}:0", f"{match}:1", source)["echo"]["state_ref"] == f"{match}:0"
    assert pool.instantiations == 6 and source.calls == 0

    pool.setup(PLAYERS, 1, "g:0")  # a seventh match: the least recently used one gives way
    assert pool.instance_count == 6
    step(pool, "a:1", "a:2", source)
    assert source.calls == 1 and pool.instantiations == 8


def test_warm_instances_never_lift_the_cap_on_calls_in_flight(cache_dir: Path) -> None:  # noqa: F811
    limits = DEFAULT_LIMITS.tightened(instances_per_module=2)
    pool = GuestPool(load_guest(None, cache_dir, limits), limits, warm_instances=8)
    pool.setup(PLAYERS, 1, "ok:0")  # proven: it may have instances_per_module calls in flight
    held = [pool._acquire(f"m{i}")[0] for i in range(2)]  # white box: two calls in flight
    with pytest.raises(GuestError, match="call slots taken"):
        pool._acquire("m2")
    for guest in held:
        pool._release_unstarted(guest)


def test_an_idle_match_holds_no_instance_after_keep_warm(cache_dir: Path) -> None:  # noqa: F811
    pool = GuestPool(load_guest(None, cache_dir), keep_warm_ms=50)
    pool.setup(PLAYERS, 1, "a:0")
    assert pool.instance_count == 1

    assert pool.sweep(now=time.monotonic() + 1.0) == 1
    assert pool.instance_count == 0
    assert "state" in pool.scores("a:0", StateSource())["echo"]


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=300),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=6), inner, max_size=6),
    max_leaves=60,
)))
def test_any_state_crosses_the_boundary_intact(state: dict[str, Any]) -> None:
    pool = _shared_echo_pool()
    assert pool.scores("never-held", StateSource(state))["echo"] == {"state": state}


def test_large_requests_grow_the_buffer_and_still_arrive_intact(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool(None, cache_dir)
    for size in (10, 300 * KiB, 20, 1 * MiB):
        state = {"blob": "x" * size}
        assert pool.scores("none", StateSource(state))["echo"] == {"state": state}


def test_concurrent_calls_share_a_bounded_pool(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool(None, cache_dir, DEFAULT_LIMITS.tightened(instances_per_module=2))
    failures: list[BaseException] = []

    def play(match: int) -> None:
        try:
            pool.setup(PLAYERS, match, f"t{match}:0")
            for move in range(20):
                moved = step(pool, f"t{match}:{move}", f"t{match}:{move + 1}")
                assert moved["echo"]["next_ref"] == f"t{match}:{move + 1}"
        except Exception as exc:  # noqa: BLE001  (collected and asserted below)
            failures.append(exc)

    threads = [threading.Thread(target=play, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert pool.instance_count <= 2


def test_closed_pool_refuses_calls(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool(None, cache_dir)
    pool.setup(PLAYERS, 1, "m:0")
    pool.close()
    with pytest.raises(GuestError, match="closed"):
        pool.setup(PLAYERS, 1, "m:1")
    assert pool.instance_count == 0


def test_pool_limits_cannot_change_the_engine_stack(cache_dir: Path) -> None:  # noqa: F811
    module = load_guest(None, cache_dir)
    with pytest.raises(ValueError, match="stack_bytes"):
        GuestPool(module, DEFAULT_LIMITS.tightened(stack_bytes=64 * KiB))


# --- hostile guests: each failure is typed, within budget, and the pool recovers --------------

LOOP_FOR_WALL_CLOCK = Limits(wall_ms=150, fuel_per_call=10**15)

HOSTILE = [
    # variant, op, pool limits, expected error, budget or trap
    ("hostile_loop", "step", DEFAULT_LIMITS.tightened(fuel_per_call=20_000_000), BudgetExceeded, "fuel"),
    ("hostile_loop", "step", LOOP_FOR_WALL_CLOCK, BudgetExceeded, "wall_ms"),
    ("hostile_grow", "step", DEFAULT_LIMITS, BudgetExceeded, "memory"),
    ("hostile_grow", "step", DEFAULT_LIMITS.tightened(memory_bytes=4 * MiB), BudgetExceeded, "memory"),
    ("hostile_recurse", "step", DEFAULT_LIMITS, BudgetExceeded, "stack"),
    ("hostile_big_response", "step", DEFAULT_LIMITS, BudgetExceeded, "response"),
    ("hostile_panic", "step", DEFAULT_LIMITS, GuestPanic, None),
    ("hostile_trap", "step", DEFAULT_LIMITS, GuestTrap, "integer_division_by_zero"),
    ("hostile_garbage", "step", DEFAULT_LIMITS, GuestProtocolError, "invalid JSON"),
    ("hostile_garbage", "scores", DEFAULT_LIMITS, GuestProtocolError, "outside guest memory"),
    ("hostile_garbage", "game_over", DEFAULT_LIMITS, GuestProtocolError, "invalid JSON or UTF-8"),
]


def _call(pool: GuestPool, op: str) -> Any:
    source = StateSource()
    if op == "step":
        return step(pool, "m:0", "m:1", source)
    if op == "actions":
        return pool.actions("m:0", source, 1)
    return getattr(pool, op)("m:0", source)


@pytest.mark.parametrize(
    ("variant", "op", "limits", "error", "detail"), HOSTILE,
    ids=[f"{v}-{op}-{d}" for v, op, _, _, d in HOSTILE],
)
def test_hostile_guest_is_refused_with_a_typed_error_and_the_pool_recovers(
    cache_dir: Path, variant: str, op: str, limits: Limits, error: type[GuestError], detail: str | None  # noqa: F811
) -> None:
    pool = make_pool(variant, cache_dir, limits)
    pool.setup(PLAYERS, 1, "m:0")

    started = time.monotonic()
    with pytest.raises(error) as raised:
        _call(pool, op)
    elapsed_ms = (time.monotonic() - started) * 1000

    failure = raised.value
    assert failure.op == op
    assert isinstance(failure.printed, str)
    if isinstance(failure, BudgetExceeded):
        assert failure.budget == detail
    elif isinstance(failure, GuestTrap):
        assert failure.trap == detail
        assert isinstance(failure.__cause__, wasmtime.Trap)
    elif isinstance(failure, GuestProtocolError):
        assert detail is not None and detail in str(failure)
    # wall_ms counts the guest thread's CPU time; the hard liveness cap bounds the wall clock.
    assert elapsed_ms < (limits.liveness_factor + 2) * limits.wall_ms
    assert pool.instance_count == 0  # the failed instance was thrown away

    again = pool.setup(PLAYERS, 2, "m:0")  # the same pool serves a normal call afterwards
    assert again["echo"]["seed"] == 2
    assert pool.instance_count == 1


def test_a_panic_carries_the_message_and_printed_text(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool("hostile_panic", cache_dir)
    pool.setup(PLAYERS, 1, "m:0")
    with pytest.raises(GuestPanic) as raised:
        step(pool, "m:0", "m:1")
    assert str(raised.value) == "step exploded: the board is on fire"
    assert raised.value.printed == "about to explode\n"
    assert isinstance(raised.value.__cause__, wasmtime.Trap)


def test_wall_clock_is_enforced_by_the_shared_ticker(cache_dir: Path) -> None:  # noqa: F811
    pool = make_pool("hostile_loop", cache_dir, LOOP_FOR_WALL_CLOCK)
    pool.setup(PLAYERS, 1, "m:0")
    started = time.monotonic()
    with pytest.raises(BudgetExceeded) as raised:
        step(pool, "m:0", "m:1")
    assert raised.value.budget == "wall_ms"
    assert (time.monotonic() - started) * 1000 >= LOOP_FOR_WALL_CLOCK.wall_ms  # never early


def test_tightened_response_cap_refuses_what_the_default_accepts(cache_dir: Path) -> None:  # noqa: F811
    module = load_guest(None, cache_dir)
    assert step(GuestPool(module), "m:0", "m:1")
    with pytest.raises(BudgetExceeded) as raised:
        step(GuestPool(module, module.limits.tightened(response_bytes=64)), "m:0", "m:1")
    assert raised.value.budget == "response"


def test_a_pool_memory_cap_below_the_initial_memory_refuses_instances(cache_dir: Path) -> None:  # noqa: F811
    module = load_guest(None, cache_dir)
    pool = GuestPool(module, module.limits.tightened(memory_bytes=64 * KiB))
    with pytest.raises(BudgetExceeded) as raised:
        pool.setup(PLAYERS, 1, "m:0")
    assert raised.value.budget == "memory"
    assert pool.instance_count == 0


# --- the one translation of wasmtime errors ---------------------------------------------------

RELIED_ON = {
    wasmtime.TrapCode.OUT_OF_FUEL: "fuel",
    wasmtime.TrapCode.INTERRUPT: "wall_ms",
    wasmtime.TrapCode.STACK_OVERFLOW: "stack",
}


class _CodedTrap(wasmtime.Trap):
    def __init__(self, code: wasmtime.TrapCode) -> None:
        super().__init__("synthetic trap")
        self._code = code

    @property
    def trap_code(self) -> wasmtime.TrapCode:
        return self._code


def test_every_trap_kind_we_rely_on_is_mapped_to_its_budget() -> None:
    assert {code: BUDGET_BY_TRAP[code] for code in RELIED_ON} == RELIED_ON


@pytest.mark.parametrize("code", list(wasmtime.TrapCode), ids=lambda code: code.name)
def test_every_trap_code_becomes_a_typed_guest_error(cache_dir: Path, code: wasmtime.TrapCode) -> None:  # noqa: F811
    guest = Guest(load_guest(None, cache_dir), DEFAULT_LIMITS)
    failure = classify_failure(guest, _CodedTrap(code), "step")
    if code in BUDGET_BY_TRAP:
        assert isinstance(failure, BudgetExceeded) and failure.budget == BUDGET_BY_TRAP[code]
    else:
        assert isinstance(failure, GuestTrap) and failure.trap == code.name.lower()


def test_a_plain_wasmtime_error_becomes_a_guest_trap(cache_dir: Path) -> None:  # noqa: F811
    guest = Guest(load_guest(None, cache_dir), DEFAULT_LIMITS)
    failure = classify_failure(guest, wasmtime.WasmtimeError("something odd"), "step")
    assert isinstance(failure, GuestTrap) and failure.trap == "error" and "something odd" in str(failure)


def test_deadline_ticks_cover_the_whole_budget() -> None:
    assert TICKER.deadline_ticks(250) * TICKER.tick_ms >= 250 + TICKER.tick_ms


class _CountingEngine:
    def __init__(self) -> None:
        self.epoch = 0

    def increment_epoch(self) -> None:
        self.epoch += 1


def test_the_ticker_ticks_until_the_armed_deadline_then_sleeps_and_owes_nothing_for_idle_time() -> None:
    ticker, engine = EpochTicker(tick_ms=1.0), _CountingEngine()
    ticker.register(engine)
    ticks = ticker.deadline_ticks(10)
    deadline = time.monotonic() + 5
    while not ticker.idle and time.monotonic() < deadline:
        time.sleep(0.005)
    assert ticker.idle
    assert engine.epoch >= ticks  # the armed deadline was reached
    reached = engine.epoch
    time.sleep(0.05)
    assert engine.epoch == reached  # asleep: no ticks while nothing is armed
    # Waking up restarts the clock: the 50 idle ms are not owed, so the budget is not cut short.
    assert ticker.deadline_ticks(10) <= 10 + 3


_ECHO_POOL: list[GuestPool] = []


def _shared_echo_pool() -> GuestPool:
    # Hypothesis reruns a test body many times; one pool (and cache) serves them all.
    if not _ECHO_POOL:
        import tempfile

        _ECHO_POOL.append(make_pool(None, Path(tempfile.mkdtemp(prefix="tablehost-test-"))))
    return _ECHO_POOL[0]


# --- a real sample game, once it is built ------------------------------------------------------

TIC_TAC_TOE = Path(__file__).parent.parent / "sample_games" / "dist" / "tic_tac_toe.wasm"


def _state_not_expected() -> dict[str, Any]:
    raise AssertionError("the instance holds this ref: the pool should not need the full state")


@pytest.mark.skipif(not TIC_TAC_TOE.exists(), reason="sample_games/dist/tic_tac_toe.wasm is not built yet")
def test_tic_tac_toe_plays_by_reference_and_from_full_state(cache_dir: Path) -> None:  # noqa: F811
    module = load_module(TIC_TAC_TOE.read_bytes(), cache_dir=cache_dir, name="tic_tac_toe")
    pool = GuestPool(module)
    outcome = pool.setup(PLAYERS, 12345, "ttt:0")
    ref, state = "ttt:0", outcome["state"]

    for move in range(1, 5):
        if outcome["game_over"]:
            break
        player, offered = next((int(pid), acts) for pid, acts in outcome["actions"].items() if acts)
        outcome = pool.step(ref, _state_not_expected, f"ttt:{move}", player, offered[0]["action"], move,
                            want_state=True)
        assert outcome["patches"], "every tic-tac-toe move places a mark"
        ref, state = f"ttt:{move}", outcome["state"]

    assert pool.instance_count == 1
    fresh = GuestPool(module)  # holds no refs: must be served from the full state
    assert fresh.game_over(ref, lambda: state) == pool.game_over(ref, _state_not_expected)


@pytest.mark.parametrize(
    "actions",
    [{"1": [1, 2]}, {"1": "none"}, {"1": [{"action": {}, "intent": "maybe", "label": "x"}]},
     {"1": [{"action": "click", "intent": "choice", "label": "x"}]}],
)
def test_malformed_offers_are_a_protocol_error(actions: Any) -> None:
    from tablehost.gate import Gate
    from tablehost.table import Table

    response = {"patches": [], "rng_used": False, "allow_undo": False, "scores": {}, "game_over": False,
                "actions": actions}
    table = Table({"players": [{"player_id": 1}], "spaces": [{"space_id": "a", "kind": ""}]})
    with pytest.raises(GuestProtocolError, match=r'step\.actions\["1"\]'):
        Gate([1]).check_step(response, table)


def test_only_the_wasm_call_itself_lets_other_threads_run() -> None:
    """A crossing's bookkeeping calls keep the interpreter lock (each release lets a waiting thread
    in first); the wasm call releases it, so the epoch ticker and other requests run meanwhile."""
    import ctypes

    from tablehost import _rawcall

    def keeps_lock(func: Any) -> bool:
        return bool(func._flags_ & ctypes._FUNCFLAG_PYTHONAPI)  # type: ignore[attr-defined]

    assert not keeps_lock(_rawcall._func_call_unchecked)
    for func in (_rawcall._set_fuel, _rawcall._get_fuel, _rawcall._set_epoch_deadline,
                 _rawcall._memory_data, _rawcall._memory_data_size, _rawcall.copy_in):
        assert keeps_lock(func)
    buffer = ctypes.create_string_buffer(8)
    _rawcall.copy_in(ctypes.addressof(buffer), b"tablehost", 8)
    assert buffer.raw == b"tablehos"
