"""Run slots (issue 9): at most N guest calls run at once, granted round robin across modules with
struggling modules last, and a module whose calls keep failing gets one call at a time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from fixtures_guest import ACTION, PLAYERS, cache_dir, load_guest  # noqa: F401  (fixture)
from tablehost.errors import BudgetExceeded, GuestError, ModuleBusy
from tablehost.guest import GuestPool
from tablehost.guest.pool import CallTiming
from tablehost.guest.scheduler import SLOTS_ENV, RunSlots, default_slots
from tablehost.limits import DEFAULT_LIMITS, Limits


def _wait_until(predicate: object, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


def _queue(slots: RunSlots, owner: str, order: list[str], label: str, *, struggling: bool = False) -> threading.Thread:
    """Start a thread that waits for a slot of ``owner``, notes ``label`` when granted, and gives it back."""

    def run() -> None:
        slots.acquire(owner, struggling=struggling, timeout_s=5.0)
        order.append(label)
        slots.release(owner)

    before = slots.waiting
    thread = threading.Thread(target=run)
    thread.start()
    _wait_until(lambda: slots.waiting == before + 1)  # queued in this order
    return thread


def test_free_slots_go_round_robin_across_modules() -> None:
    slots = RunSlots(1)
    slots.acquire("holder", timeout_s=1.0)
    order: list[str] = []
    threads = [_queue(slots, "a", order, "a1"), _queue(slots, "a", order, "a2"), _queue(slots, "a", order, "a3"),
               _queue(slots, "b", order, "b1")]
    slots.release("holder")
    for thread in threads:
        thread.join()
    assert order == ["a1", "b1", "a2", "a3"]  # b does not wait behind all of a's calls
    assert slots.running == 0 and slots.waiting == 0


def test_a_struggling_module_waits_behind_modules_in_good_standing() -> None:
    slots = RunSlots(1)
    slots.acquire("holder", timeout_s=1.0)
    order: list[str] = []
    threads = [_queue(slots, "bad", order, "bad", struggling=True), _queue(slots, "good", order, "good")]
    slots.release("holder")
    for thread in threads:
        thread.join()
    assert order == ["good", "bad"]


def test_a_call_waits_at_most_its_timeout_for_a_slot() -> None:
    slots = RunSlots(1)
    slots.acquire("holder", timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(ModuleBusy):
        slots.acquire("late", timeout_s=0.05)
    assert 0.04 <= time.monotonic() - started < 2.0
    assert slots.waiting == 0
    slots.release("holder")
    assert slots.acquire("late", timeout_s=0.05) == 0.0  # the slot is free again


def test_evict_refuses_a_modules_waiters_at_once() -> None:
    slots = RunSlots(1)
    slots.acquire("bad", timeout_s=1.0)  # one call of "bad" runs
    refused: list[BaseException] = []

    def wait() -> None:
        try:
            slots.acquire("bad", timeout_s=30.0)
        except ModuleBusy as exc:
            refused.append(exc)

    threads = [threading.Thread(target=wait) for _ in range(3)]
    for thread in threads:
        thread.start()
    _wait_until(lambda: slots.waiting == 3)
    started = time.monotonic()
    assert slots.evict("bad", keep=1) == 3  # the running call is the one it keeps
    for thread in threads:
        thread.join()
    assert len(refused) == 3 and time.monotonic() - started < 2.0
    assert slots.waiting == 0 and slots.running == 1


def test_the_slot_count_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SLOTS_ENV, "3")
    assert default_slots() == 3
    monkeypatch.setenv(SLOTS_ENV, "0")
    with pytest.raises(ValueError, match=SLOTS_ENV):
        default_slots()
    monkeypatch.delenv(SLOTS_ENV)
    assert default_slots() >= 1


class _CountingSlots(RunSlots):
    """Run slots that remember the most calls running at once."""

    def __init__(self, slots: int) -> None:
        super().__init__(slots)
        self.most = 0

    def acquire(self, owner: object, *, struggling: bool = False, timeout_s: float) -> float:  # type: ignore[override]
        waited = super().acquire(owner, struggling=struggling, timeout_s=timeout_s)  # type: ignore[arg-type]
        self.most = max(self.most, self.running)
        return waited


def test_looping_guests_of_four_modules_run_one_slot_at_a_time(cache_dir: Path) -> None:  # noqa: F811
    slots = _CountingSlots(1)
    limits = Limits(fuel_per_call=5_000_000, quarantine_after=10**6)
    pools = [GuestPool(load_guest("hostile_loop_always", cache_dir / str(i), limits), limits, run_slots=slots)
             for i in range(4)]
    timings: list[CallTiming] = []
    for pool in pools:
        pool.observer = timings.append

    def loop(pool: GuestPool, name: str) -> None:
        for index in range(3):
            with pytest.raises(GuestError):
                pool.setup(PLAYERS, 1, f"{name}-{index}:0")

    threads = [threading.Thread(target=loop, args=(pools[i % 4], f"m{i}")) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert slots.most == 1 and slots.running == 0
    ran = [t for t in timings if t.run_ms > 0 and t.failed]
    assert ran and all(t.cpu_ms <= t.run_ms + 1.0 for t in ran)


def test_a_module_whose_calls_keep_failing_gets_one_call_at_a_time(cache_dir: Path) -> None:  # noqa: F811
    limits = Limits(wall_ms=2_000, fuel_per_call=DEFAULT_LIMITS.fuel_per_call * 20, quarantine_after=10**6)
    pool = GuestPool(load_guest("hostile_loop_always", cache_dir, limits), limits, run_slots=RunSlots(4))
    with pytest.raises(BudgetExceeded):
        pool.setup(PLAYERS, 1, "first:0")  # its first failure: it now struggles

    outcome: list[BaseException] = []

    def slow_call() -> None:
        try:
            pool.setup(PLAYERS, 1, "slow:0")
        except GuestError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=slow_call)
    thread.start()
    _wait_until(lambda: pool.instance_count == 1)
    started = time.monotonic()
    with pytest.raises(ModuleBusy, match="one call at a time"):
        pool.setup(PLAYERS, 1, "second:0")  # refused at once, not after its own budget
    assert time.monotonic() - started < 0.5
    thread.join()
    assert isinstance(outcome[0], BudgetExceeded)


def test_one_success_ends_struggling(cache_dir: Path) -> None:  # noqa: F811
    pool = GuestPool(load_guest("hostile_trap", cache_dir), Limits(quarantine_after=10**6), run_slots=RunSlots(2))
    pool.setup(PLAYERS, 1, "m:0")
    with pytest.raises(GuestError):
        pool.step("m:0", dict, "m:1", 1, ACTION, 5)
    assert pool._failures_in_a_row == 1
    pool.setup(PLAYERS, 1, "n:0")
    assert pool._failures_in_a_row == 0


def test_a_struggling_module_waits_only_briefly_for_a_run_slot(cache_dir: Path) -> None:  # noqa: F811
    slots = RunSlots(1)
    limits = Limits(fuel_per_call=5_000_000, quarantine_after=10**6)
    pool = GuestPool(load_guest("hostile_loop_always", cache_dir, limits), limits, run_slots=slots)
    with pytest.raises(BudgetExceeded):
        pool.setup(PLAYERS, 1, "first:0")  # it now struggles
    slots.acquire("an honest module", timeout_s=1.0)  # every run slot is taken
    started = time.monotonic()
    with pytest.raises(ModuleBusy):
        pool.setup(PLAYERS, 1, "second:0")
    assert time.monotonic() - started < 1.0  # not the 5 s queue_ms of a module in good standing
    slots.release("an honest module")
    assert pool.instance_count == 0  # the refused call gave its module slot back


def test_a_new_module_has_one_call_in_flight_until_one_succeeds(cache_dir: Path) -> None:  # noqa: F811
    limits = Limits(quarantine_after=10**6)
    pool = GuestPool(load_guest(None, cache_dir, limits), limits, run_slots=RunSlots(4))
    first, _ = pool._acquire("a")  # white box: the first call of a new module is in flight
    second: list[object] = []
    waiter = threading.Thread(target=lambda: second.append(pool._acquire("b")))
    waiter.start()
    time.sleep(0.3)  # longer than wall_ms: it waits for the first call's outcome, not for a slot timeout
    assert not second and waiter.is_alive()
    pool._release_unstarted(first)
    waiter.join(5.0)
    assert second  # let in once the slot came back
    pool._release_unstarted(second[0][0])  # type: ignore[index]
    pool.setup(PLAYERS, 1, "ok:0")  # a success: now several calls may be in flight
    held = [pool._acquire(f"m{i}")[0] for i in range(limits.instances_per_module)]
    assert len(held) == limits.instances_per_module
    for guest in held:
        pool._release_unstarted(guest)
