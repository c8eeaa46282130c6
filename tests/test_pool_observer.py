"""The guest pool's observer hook (GuestPool.observer): one CallTiming per op call, answered or
refused, and the server's Prometheus metrics filled through it."""

from __future__ import annotations

from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs

from fixtures_guest import PLAYERS, cache_dir, load_guest  # noqa: F401  (fixture)
from tablehost.api.metrics import Metrics
from tablehost.errors import BudgetExceeded, GuestError, ModuleBusy
from tablehost.guest import GuestPool
from tablehost.guest import pool as pool_module
from tablehost.guest.pool import OUTCOME_OK, CallTiming
from tablehost.guest.scheduler import RunSlots
from tablehost.limits import Limits

LIMITS = Limits(fuel_per_call=5_000_000, quarantine_after=10**6)


def test_the_observer_sees_answered_calls_budget_refusals_and_calls_refused_before_running(
    cache_dir: Path,  # noqa: F811
) -> None:
    seen: list[CallTiming] = []
    slots = RunSlots(1)
    honest = GuestPool(load_guest(None, cache_dir, LIMITS), LIMITS, run_slots=slots, observer=seen.append)
    looping = GuestPool(load_guest("hostile_loop_always", cache_dir, LIMITS), LIMITS, run_slots=slots,
                        observer=seen.append)

    honest.setup(PLAYERS, 1, "a:0")
    answered = seen[-1]
    assert (answered.module, answered.op, answered.outcome, answered.budget) == ("echo", "setup", OUTCOME_OK, None)
    assert answered.fuel > 0 and answered.run_ms > 0 and not answered.failed

    with pytest.raises(BudgetExceeded) as stopped:
        looping.setup(PLAYERS, 1, "b:0")
    refused = seen[-1]
    assert stopped.value.timing is refused  # type: ignore[attr-defined]
    assert (refused.module, refused.outcome, refused.fuel) == ("hostile_loop_always", "guest/budget", 0)
    assert refused.budget == stopped.value.budget and refused.failed and refused.run_ms > 0

    slots.acquire("someone else", timeout_s=1.0)  # the one run slot is taken
    try:
        with pytest.raises(ModuleBusy):
            looping.setup(PLAYERS, 1, "c:0")  # it struggles: refused after a short wait, never run
    finally:
        slots.release("someone else")
    busy = seen[-1]
    assert (busy.outcome, busy.run_ms, busy.cpu_ms, busy.fuel) == ("module/busy", 0.0, 0.0, 0)
    assert busy.queue_ms > 0
    assert len(seen) == 3


def test_an_observer_that_raises_changes_no_answer_and_is_logged(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    def broken(timing: CallTiming) -> None:
        raise RuntimeError("observer bug")

    pool = GuestPool(load_guest(None, cache_dir, LIMITS), LIMITS, run_slots=RunSlots(1), observer=broken)
    with capture_logs() as logs:
        # The module's logger may be cached from an earlier test's configuration: log afresh.
        monkeypatch.setattr(pool_module, "log", structlog.get_logger(pool_module.__name__))
        answer = pool.setup(PLAYERS, 1, "a:0")
    assert "state" in answer
    assert [entry["event"] for entry in logs if entry["log_level"] == "error"] == ["guest.observer_failed"]


def test_prometheus_histograms_fill_from_the_pool_observer(cache_dir: Path) -> None:  # noqa: F811
    metrics = Metrics()
    slots = RunSlots(1)
    honest = GuestPool(load_guest(None, cache_dir, LIMITS), LIMITS, run_slots=slots,
                       observer=metrics.observe_guest_call)
    looping = GuestPool(load_guest("hostile_loop_always", cache_dir, LIMITS), LIMITS, run_slots=slots,
                        observer=metrics.observe_guest_call)
    honest.setup(PLAYERS, 1, "a:0")
    honest.setup(PLAYERS, 2, "b:0")
    with pytest.raises(GuestError) as stopped:
        looping.setup(PLAYERS, 1, "c:0")

    def value(name: str, **labels: str) -> float:
        return metrics.registry.get_sample_value(name, labels) or 0.0

    assert value("tablehost_guest_call_seconds_count", module="echo", op="setup") == 2
    assert value("tablehost_guest_call_seconds_sum", module="echo", op="setup") > 0
    assert value("tablehost_guest_call_fuel_count", module="echo", op="setup") == 2
    assert value("tablehost_guest_call_fuel_sum", module="echo", op="setup") > 0
    assert value("tablehost_guest_call_seconds_count", module="hostile_loop_always", op="setup") == 1
    assert value("tablehost_guest_call_fuel_count", module="hostile_loop_always", op="setup") == 0
    budget = stopped.value.budget  # type: ignore[attr-defined]
    assert value("tablehost_budget_refusals_total", module="hostile_loop_always", budget=budget) == 1


def test_cached_metric_children_are_the_labelled_series_and_keep_label_values_apart() -> None:
    """``Metrics.child`` remembers ``labels()``' answer: the same series, one per label values."""
    metrics = Metrics()
    assert metrics.child(metrics.requests, "grpc", "GetView", "OK") is metrics.requests.labels("grpc", "GetView", "OK")
    for _ in range(3):
        metrics.count_request("GetView", "OK", 0.25)
    metrics.count_request("GetView", "NOT_FOUND", 0.5)
    metrics.count_request("SubmitAction", "OK", 1.0)
    metrics.count_journaled("move", "person")
    metrics.count_unstored("match/not_offered")
    metrics.count_unstored("match/not_offered")
    metrics.count_unstored("store/unavailable")

    def value(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(name, labels)

    assert value("tablehost_requests_total", transport="grpc", method="GetView", code="OK") == 3
    assert value("tablehost_requests_total", transport="grpc", method="GetView", code="NOT_FOUND") == 1
    assert value("tablehost_requests_total", transport="grpc", method="SubmitAction", code="OK") == 1
    assert value("tablehost_request_cpu_seconds_total", method="GetView") == 1.25
    assert value("tablehost_moves_accepted_total", kind="move", by="person") == 1
    assert value("tablehost_moves_accepted_total", kind="undo", by="person") is None
    assert value("tablehost_moves_refused_total", reason="match/not_offered") == 2
    assert value("tablehost_moves_failed_total", reason="store/unavailable") == 1
    assert value("tablehost_moves_refused_total", reason="store/unavailable") is None
    with pytest.raises(ValueError):
        metrics.child(metrics.requests, "GetView")  # one label value short, as labels() says


def test_a_search_reports_the_fuel_it_burnt_and_its_seconds_fit_the_buckets() -> None:
    """The scaled ops (``search``, ``playout``) were observed with 0 fuel, so the fuel histogram
    of a server bot's searches summed to 0; and the seconds buckets stopped at 1 s while a
    search may take a minute."""
    import dataclasses

    from tablehost.bots import SearchBot
    from tablehost.module import load_module
    from tablehost.selfplay import play_game

    dist = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
    module = load_module((dist / "tic_tac_toe.wasm").read_bytes(), name="tic_tac_toe")
    metrics = Metrics()
    pool = GuestPool(module, dataclasses.replace(module.limits, wall_ms=60_000), observer=metrics.observe_guest_call)
    match = play_game(pool, ["first", "first"], 1, max_plies=0).match
    view = match.view(match.active_player_ids[0])
    SearchBot("mcts", 50, 4).choose_in_view(pool, view.state, view.actions, match.active_player_ids[0])

    def value(name: str, **labels: str) -> float:
        return metrics.registry.get_sample_value(name, labels) or 0.0

    assert value("tablehost_guest_call_fuel_count", module="tic_tac_toe", op="search") == 1
    assert value("tablehost_guest_call_fuel_sum", module="tic_tac_toe", op="search") > 0
    buckets = [float(s.labels["le"]) for s in metrics.guest_seconds.collect()[0].samples
               if s.name.endswith("_bucket") and s.labels["le"] != "+Inf"]
    assert max(buckets) >= 60.0
