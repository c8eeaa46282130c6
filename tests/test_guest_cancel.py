"""A cancellable guest call (``GuestPool.run_scaled(cancelled=...)``): the host stops it mid-run,
it is not the module's failure, and a call that is not cancelled keeps its whole budget."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from fixtures_guest import cache_dir, load_guest  # noqa: F401
from tablehost.errors import BudgetExceeded, GuestCancelled
from tablehost.guest import GuestPool
from tablehost.guest.instance import CANCEL_POLL_MS
from tablehost.limits import Limits

OP_STEP = 3  # hostile_loop loops forever in it
LOOPING = Limits(wall_ms=150, fuel_per_call=10**15)
SCALE = 40  # 6 s of budget: far longer than the test waits before it cancels


def test_a_looping_call_stops_soon_after_it_is_cancelled_and_is_no_failure(cache_dir: Path) -> None:  # noqa: F811
    pool = GuestPool(load_guest("hostile_loop", cache_dir, LOOPING), LOOPING)
    stop = threading.Event()
    asked = []

    def cancelled() -> bool:
        asked.append(threading.get_ident())
        return stop.is_set()

    timer = threading.Timer(0.3, stop.set)
    timer.start()
    started = time.monotonic()
    with pytest.raises(GuestCancelled) as raised:
        pool.run_scaled(OP_STEP, {}, scale=SCALE, cancelled=cancelled)
    elapsed = time.monotonic() - started
    assert raised.value.code == "guest/cancelled" and raised.value.op == "step"
    assert elapsed < LOOPING.wall_ms * SCALE / 1000.0, "it stopped on the cancel, not at the end of its budget"
    assert len(asked) >= 0.3 * 1000 / CANCEL_POLL_MS / 2, "asked about every CANCEL_POLL_MS while it ran"
    assert pool._failures_in_a_row == 0 and not pool._failures, "a cancel counts against the module nowhere"


def test_a_call_never_cancelled_runs_to_its_budget(cache_dir: Path) -> None:  # noqa: F811
    pool = GuestPool(load_guest("hostile_loop", cache_dir, LOOPING), LOOPING)
    with pytest.raises(BudgetExceeded) as raised:
        pool.run_scaled(OP_STEP, {}, scale=2, cancelled=lambda: False)
    assert raised.value.budget == "wall_ms"
    assert pool._failures_in_a_row == 1, "running out of budget is the module's failure"
