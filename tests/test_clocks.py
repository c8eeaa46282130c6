"""Match clocks (:mod:`tablehost.clocks`): charging, restore, and the clocks of an early end."""

from __future__ import annotations

import pytest

from tablehost.clocks import Clocks, TimeControl, iso_to_ms

FISCHER = TimeControl(main_ms=5000, increment_ms=1000)


def test_a_move_charges_the_mover_and_adds_the_increment() -> None:
    clocks = Clocks.start(FISCHER, [1, 2], [1], at_ms=1_000)
    after = clocks.after(1, [2], at_ms=2_500)
    assert after.remaining == {1: 5000 - 1500 + 1000, 2: 5000} and after.running == [2]
    assert after.expired(2_500 + 5000) == [2] and after.expired(2_500 + 4999) == []


@pytest.mark.parametrize(("ended_after_ms", "left"), [(5_030, 0), (1_200, 3_800)])
def test_an_early_end_charges_the_seats_to_move_up_to_the_end(ended_after_ms: int, left: int) -> None:
    # A timeout (a tick after the time ran out) leaves 0; a resignation what was left then.
    saved = Clocks.start(FISCHER, [1, 2], [1], at_ms=10_000).to_json()
    ended = Clocks.at_end(FISCHER, saved, [1], 10_000 + ended_after_ms)
    assert ended.remaining == {1: left, 2: 5000} and ended.running == []
    assert ended.view(10_000_000) == [
        {"player_id": 1, "remaining_ms": left, "running": False},
        {"player_id": 2, "remaining_ms": 5000, "running": False},
    ]


def test_an_untimed_seat_is_never_charged_nor_given_an_increment() -> None:
    # Seat 2 a server bot: active with seat 1 (a simultaneous phase), yet only seat 1's clock runs.
    clocks = Clocks.start(FISCHER, [1, 2], [1, 2], at_ms=1_000, untimed=[2])
    assert clocks.running == [1] and clocks.next_deadline_ms() == 6_000
    after_bot = clocks.after(2, [1, 2], at_ms=2_000)
    assert after_bot.remaining == {1: 4000, 2: 5000} and after_bot.running == [1]
    assert after_bot.expired(1_000_000) == [1]
    saved = after_bot.after(1, [2], at_ms=3_000).to_json()  # only the bot to move: nothing runs
    restored = Clocks.restore(FISCHER, saved, [2], 60_000, 60_000, untimed=[2])
    assert restored.remaining == {1: 4000, 2: 5000} and restored.running == [] and restored.expired(10**9) == []
    ended = Clocks.at_end(FISCHER, saved, [2], 60_000, untimed=[2])
    assert [c["remaining_ms"] for c in ended.view(60_000)] == [4000, 5000]


def test_the_increment_comes_once_a_turn_not_per_click() -> None:
    # Seat 1 picks a man (a choice: still to move), then moves it (its turn ends).
    clocks = Clocks.start(FISCHER, [1, 2], [1], at_ms=0)
    picked = clocks.after(1, [1], at_ms=1_000)
    assert picked.remaining == {1: 4000, 2: 5000} and picked.running == [1], "no increment for a click"
    moved = picked.after(1, [2], at_ms=1_500)
    assert moved.remaining == {1: 3500 + 1000, 2: 5000} and moved.running == [2]
    per_move = TimeControl(per_move_ms=8000)
    held = Clocks.start(per_move, [1, 2], [1], at_ms=0).after(1, [1], at_ms=6_000)
    assert held.remaining[1] == 2000, "a click does not start the move's time afresh"


def test_iso_times_of_records_become_wall_ms() -> None:
    assert iso_to_ms("1970-01-01T00:00:01.500000+00:00") == 1500
    assert (
        iso_to_ms("2026-11-30T22:31:50.646067+00:00") == 1_796_077_910_646
    )  # date -u -d 2026-11-30T22:31:50Z +%s
    assert iso_to_ms("2026-11-30T22:31:50") is None  # no zone: not a record's time
    assert iso_to_ms("yesterday") is None and iso_to_ms(None) is None
