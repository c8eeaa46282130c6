"""The server bots' thinking lanes (tablehost.api.bot_thinker): a quick kind of decision never
waits behind a long search, one decision per match is queued, and a failing one stops nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog.testing

from tablehost.api.bot_thinker import KEPT_DURATIONS, QUICK_DECISION_S, BotThinker


def blocking(started: threading.Event, release: threading.Event, done: list[str], name: str) -> Callable[[], None]:
    """A decision that starts, waits for ``release``, then notes ``name`` in ``done``."""

    def think() -> None:
        started.set()
        release.wait(timeout=10)
        done.append(name)
    return think


def test_a_quick_decision_runs_while_a_long_search_holds_the_long_lane() -> None:
    thinker = BotThinker()
    started, release, done = threading.Event(), threading.Event(), list[str]()
    ran_quick, ran_unknown = threading.Event(), threading.Event()
    try:
        assert thinker.ask("risk", blocking(started, release, done, "risk"))
        assert started.wait(timeout=5)
        assert thinker.ask("ttt", ran_quick.set, quick=True)
        assert ran_quick.wait(timeout=5), "the quick lane did not wait for the long search"
        assert thinker.ask("other", ran_unknown.set)  # an unknown kind queues behind it
        assert not ran_unknown.wait(timeout=0.2) and thinker.busy_with("other")
        release.set()
        assert ran_unknown.wait(timeout=5) and done == ["risk"]
    finally:
        release.set()
        thinker.close()


def test_one_decision_per_match_is_queued_and_a_running_one_does_not_count() -> None:
    thinker = BotThinker()
    started, release, done = threading.Event(), threading.Event(), list[str]()
    try:
        assert thinker.ask("m", blocking(started, release, done, "first"))
        assert started.wait(timeout=5)
        assert thinker.busy_with("m")
        assert thinker.ask("m", lambda: done.append("second"))  # the running one searched an older version
        assert not thinker.ask("m", lambda: done.append("third"))  # one queued already
        assert not thinker.ask("m", lambda: done.append("third"), quick=True)  # in either lane
        release.set()
        for _ in range(500):
            if not thinker.busy_with("m"):
                break
            threading.Event().wait(0.01)
        assert done == ["first", "second"]
    finally:
        release.set()
        thinker.close()


def test_a_failing_decision_is_logged_and_the_lane_goes_on() -> None:
    thinker = BotThinker()
    ran = threading.Event()

    def fails() -> None:
        raise RuntimeError("a bug in one decision")

    try:
        with structlog.testing.capture_logs() as logs:
            assert thinker.ask("bad", fails)
            assert thinker.ask("good", ran.set)
            assert ran.wait(timeout=5)
        assert [e["match_id"] for e in logs if e["event"] == "bot.think_failed"] == ["bad"]
    finally:
        thinker.close()


def test_a_closed_thinker_takes_nothing_and_drops_what_was_queued() -> None:
    thinker = BotThinker()
    started, release, done = threading.Event(), threading.Event(), list[str]()
    assert thinker.ask("a", blocking(started, release, done, "a"))
    assert started.wait(timeout=5)
    assert thinker.ask("b", lambda: done.append("b"))
    thinker.close()
    release.set()
    assert not thinker.ask("c", lambda: done.append("c"))
    threading.Event().wait(0.2)
    assert done == ["a"] and not thinker.busy_with("b")


def test_a_kind_is_quick_only_while_its_recent_decisions_all_were() -> None:
    thinker = BotThinker()
    kind = ("sha", "mcts:300")
    assert not thinker.is_quick(kind), "an unknown kind goes to the long lane"
    thinker.took(kind, QUICK_DECISION_S / 10)
    assert thinker.is_quick(kind)
    thinker.took(kind, QUICK_DECISION_S * 4)
    assert not thinker.is_quick(kind)
    for _ in range(KEPT_DURATIONS - 1):
        thinker.took(kind, QUICK_DECISION_S / 10)
    assert not thinker.is_quick(kind), "the slow one is still among the kept"
    thinker.took(kind, QUICK_DECISION_S / 10)
    assert thinker.is_quick(kind)
    assert not thinker.is_quick(("sha", "mcts:5000"))
