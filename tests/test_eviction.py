"""Eviction of finished and idle matches from a server's memory (``MatchRegistry.evict_idle``).

An evicted match is loaded again from the store on its next request, exactly as after a restart:
its views, version, log, record and list summary must equal those of a twin that was never
evicted, after any sequence of moves, undos, resignations and aborts with evictions between
them. A match a request or watch stream uses, or whose clock runs, is never evicted.
"""

from __future__ import annotations

import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablehost.api.auth import ADMIN, Principal
from tablehost.api.metrics import Metrics
from tablehost.api.registry import WAKE_LEAD_MS, MatchRegistry
from tablehost.clocks import TimeControl
from tablehost.errors import StaleVersion, TablehostError
from tablehost.store.sqlite import DB_FILENAME

DIST = Path(__file__).resolve().parents[1] / "sample_games" / "dist"
VIEWERS = (1, 2, None)


def module_bytes(game: str) -> bytes:
    path = DIST / f"{game}.wasm"
    if not path.exists():
        pytest.skip(f"{path} is not built (make games)")
    return path.read_bytes()


def principal(match_id: str, viewer: int | None) -> Principal:
    return Principal("spectator", match_id) if viewer is None else Principal("seat", match_id, viewer)


def without_times(value: Any) -> Any:
    """``value`` with the wall-clock stamps (``at``) left out: the twins move at different times."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k != "at"}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def twin_of(reg: MatchRegistry) -> MatchRegistry:
    """A registry (never evicting) on a copy of ``reg``'s SQLite database as it is now."""
    folder = Path(tempfile.mkdtemp(prefix="tablehost-evict-twin-"))
    source = sqlite3.connect(reg.data_dir / DB_FILENAME)
    copy = sqlite3.connect(folder / DB_FILENAME)
    source.backup(copy)
    source.close()
    copy.close()
    return MatchRegistry(folder, synchronous="NORMAL", evict_after_s=None)


def observed(reg: MatchRegistry, match_id: str) -> dict[str, Any]:
    """Everything a client can see of a match, minus wall-clock stamps."""
    seen: dict[str, Any] = {}
    for viewer in VIEWERS:
        served = reg.view(principal(match_id, viewer), match_id)
        seen[f"view {viewer}"] = (served.view, served.score_labels, served.extras)
        seen[f"log {viewer}"] = reg.log_history(principal(match_id, viewer), match_id, 0, 10_000)
    record = without_times(reg.record(ADMIN, match_id))
    for move in record.get("moves", []):
        move.pop("seed", None)  # drawn afresh per move by each twin's host (the games here use none)
    seen["record"] = record
    summary = [s for s in reg.list_matches(ADMIN) if s["match_id"] == match_id]
    seen["summary"] = without_times(summary)
    return seen


def play(reg: MatchRegistry, match_id: str, op: str, pick: int) -> None:
    """One change on the match (a refused one changes nothing)."""
    with reg._using(ADMIN, match_id) as live:
        match = live.match
        if match.game_over:
            return
        mover = match.active_player_ids[0]
        version = match.version
    seat = Principal("seat", match_id, mover)
    try:
        if op == "move":
            served = reg.view(seat, match_id)
            offered = [a for a in served.view.actions if a["intent"] != "undo"]
            reg.submit(seat, match_id, offered[pick % len(offered)]["action"], served.view.version)
        elif op == "undo":
            reg.undo(seat, match_id, version)
        elif op == "resign":
            reg.resign(seat, match_id)
        else:
            reg.abort(ADMIN, match_id)
    except TablehostError:
        pass


operations = st.lists(
    st.tuples(
        st.sampled_from(["move", "move", "move", "move", "undo", "resign", "abort"]),
        st.integers(0, 40),
        st.booleans(),  # evict after this change
    ),
    max_size=12,
)


# Checkers offers undo (a selected piece may be put back); tic-tac-toe never does.
@pytest.mark.parametrize("game", ["tic_tac_toe", "checkers"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations)
def test_an_evicted_match_reloads_exactly_as_a_never_evicted_twin(
    game: str, ops: list[tuple[str, int, bool]]
) -> None:
    reg = MatchRegistry(tempfile.mkdtemp(prefix="tablehost-evict-"), synchronous="NORMAL", evict_after_s=0)
    twin = None
    try:
        module = reg.upload_module(ADMIN, module_bytes(game), game).sha256
        match_id = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
        twin = twin_of(reg)
        assert reg.evict_idle() == 1 and match_id not in reg._matches
        for op, pick, evict in ops:
            play(reg, match_id, op, pick)
            play(twin, match_id, op, pick)
            if evict:
                assert reg.evict_idle() == 1
                assert match_id not in reg._matches
            assert observed(reg, match_id) == observed(twin, match_id)
        assert twin.evict_idle() == 0  # the twin never evicts
    finally:
        reg.close()
        if twin is not None:
            twin.close()


@pytest.fixture
def ttt_registry(tmp_path: Path) -> tuple[MatchRegistry, str, Metrics]:
    metrics = Metrics()
    reg = MatchRegistry(tmp_path, synchronous="NORMAL", evict_after_s=60, metrics=metrics)
    module = reg.upload_module(ADMIN, module_bytes("tic_tac_toe"), "ttt").sha256
    yield reg, module, metrics
    reg.close()


def finish(reg: MatchRegistry, match_id: str) -> None:
    reg.resign(Principal("seat", match_id, 1), match_id)


def test_only_matches_idle_longer_than_evict_after_leave_and_metrics_count_them(
    ttt_registry: tuple[MatchRegistry, str, Metrics],
) -> None:
    reg, module, metrics = ttt_registry
    old = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
    finish(reg, old)
    fresh = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
    reg._matches[old].used_at -= 61
    assert reg.evict_idle() == 1
    assert old not in reg._matches and fresh in reg._matches
    assert metrics.registry.get_sample_value("tablehost_evictions_total", {"reason": "over"}) == 1
    assert metrics.registry.get_sample_value("tablehost_matches_in_memory") == 1
    # A request for the evicted match loads it again (and counts as a use).
    assert reg.view(Principal("spectator", old), old).view.game_over
    assert metrics.registry.get_sample_value("tablehost_matches_in_memory") == 2
    assert reg.evict_idle() == 0


def test_a_match_in_a_request_or_followed_by_a_watch_stream_is_never_evicted(
    ttt_registry: tuple[MatchRegistry, str, Metrics],
) -> None:
    reg, module, _ = ttt_registry
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
    later = 10_000.0 + reg._matches[match_id].used_at
    with reg._using(ADMIN, match_id):  # a request in progress
        assert reg.evict_idle(now=later) == 0
    spectator = reg.watch(Principal("spectator", match_id), match_id, lambda: True)
    next(spectator)  # the stream is open
    assert reg.evict_idle(now=later) == 0 and match_id in reg._matches
    seat = reg.watch(Principal("seat", match_id, 2), match_id, lambda: True)
    next(seat)
    spectator.close()
    assert reg.evict_idle(now=later) == 0  # the seat's stream still follows it
    seat.close()
    assert reg.evict_idle(now=later) == 1


def test_a_request_racing_eviction_never_acts_on_a_dropped_copy(
    ttt_registry: tuple[MatchRegistry, str, Metrics],
) -> None:
    """Moves from threads while eviction runs in a loop: every accepted move lands in the one
    copy in memory (a move on a dropped copy would be lost to the next reader or conflict)."""
    reg, module, _ = ttt_registry
    reg.evict_after_s = 0
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
    stop = threading.Event()

    def evict() -> None:
        while not stop.is_set():
            reg.evict_idle()

    evictor = threading.Thread(target=evict)
    evictor.start()
    accepted = 0
    try:
        for _ in range(9):
            with reg._using(ADMIN, match_id) as live:
                if live.match.game_over:
                    break
                mover = live.match.active_player_ids[0]
            seat = Principal("seat", match_id, mover)
            served = reg.view(seat, match_id)
            reg.submit(seat, match_id, served.view.actions[0]["action"], served.view.version)
            accepted += 1
    finally:
        stop.set()
        evictor.join()
    assert reg.view(Principal("spectator", match_id), match_id).view.version == accepted


def test_a_timed_match_stays_while_its_timeout_is_near_and_leaves_once_over(
    ttt_registry: tuple[MatchRegistry, str, Metrics],
) -> None:
    reg, module, _ = ttt_registry
    control = TimeControl(main_ms=WAKE_LEAD_MS, on_timeout="forfeit")  # nearer than the wake lead
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")], time_control=control).match_id
    live = reg._matches[match_id]
    assert reg.evict_idle(now=live.used_at + 10_000) == 0
    before = reg.view(Principal("seat", match_id, 2), match_id)
    finish(reg, match_id)
    over = reg.view(Principal("seat", match_id, 2), match_id)
    assert over.view.game_over and before.extras["clocks"]
    assert reg.evict_idle(now=reg._matches[match_id].used_at + 10_000) == 1
    again = reg.view(Principal("seat", match_id, 2), match_id)
    assert (again.view, again.extras) == (over.view, over.extras)  # stopped clocks, as stored


@pytest.mark.parametrize("policy", ["forfeit", "zombie"])
def test_an_abandoned_timed_match_leaves_memory_and_is_back_before_its_timeout(
    ttt_registry: tuple[MatchRegistry, str, Metrics], policy: str
) -> None:
    reg, module, metrics = ttt_registry
    control = TimeControl(main_ms=600_000, on_timeout=policy)
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")], time_control=control).match_id
    play(reg, match_id, "move", 0)  # ann moved; bob's clock runs, then nobody comes back
    clocks = reg._matches[match_id].clocks
    assert clocks is not None
    timeout_at = clocks.since_ms + clocks.remaining[2]
    assert reg.evict_idle(now=reg._matches[match_id].used_at + 61) == 1
    assert match_id not in reg._matches and reg._wake_at[match_id] == timeout_at
    assert metrics.registry.get_sample_value("tablehost_evictions_total", {"reason": "timed"}) == 1
    # A request loads it with the very clocks it left with.
    with reg._using(ADMIN, match_id) as live:
        assert live.clocks is not None and live.clocks.view(timeout_at - 1) == clocks.view(timeout_at - 1)
    assert match_id not in reg._wake_at
    assert reg.evict_idle(now=reg._matches[match_id].used_at + 61) == 1
    assert reg.wake_timed(now=timeout_at - WAKE_LEAD_MS - 1) == 0 and match_id not in reg._matches
    assert reg.wake_timed(now=timeout_at - WAKE_LEAD_MS) == 1 and match_id in reg._matches
    reg.tick_clocks(at_ms=timeout_at)
    served = reg.view(Principal("spectator", match_id), match_id)
    if policy == "forfeit":
        assert served.view.result is not None and served.view.result.ended_by == "timeout"
    else:  # the host plays for bob from his timeout on
        assert served.view.version >= 2 and 2 in reg._matches[match_id].zombies


def test_a_timed_match_is_kept_when_a_reload_would_rebuild_other_clocks(
    ttt_registry: tuple[MatchRegistry, str, Metrics],
) -> None:
    """Clocks changed without a journaled move (as an undo that hands the turn back does) would
    not come back from the store: such a match stays; so does one with an unjournaled absent seat."""
    reg, module, _ = ttt_registry
    control = TimeControl(main_ms=600_000)
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")], time_control=control).match_id
    live = reg._matches[match_id]
    journaled = live.clocks
    assert journaled is not None
    live.clocks = journaled.after(None, [2], journaled.since_ms + 5_000)  # bob's clock, not stored
    assert reg.evict_idle(now=live.used_at + 61) == 0
    live.clocks = journaled
    live.zombies = {2}  # timed out, but the host has not moved for bob yet: not in the store
    assert reg.evict_idle(now=live.used_at + 61) == 0
    live.zombies = set()
    assert reg.evict_idle(now=live.used_at + 61) == 1


def test_a_running_clock_still_times_out_on_time_with_eviction_on(
    ttt_registry: tuple[MatchRegistry, str, Metrics],
) -> None:
    reg, module, _ = ttt_registry
    reg.evict_after_s = 0
    control = TimeControl(main_ms=1_000, on_timeout="forfeit")
    match_id = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")], time_control=control).match_id
    started = reg._matches[match_id].clocks
    assert started is not None
    reg.evict_idle()
    assert match_id in reg._matches
    reg.tick_clocks(at_ms=10**15)  # far past ann's 1 s: the timeout is applied, then it may go
    assert reg._matches[match_id].match.game_over
    assert reg.evict_idle() == 1
    result = reg.view(Principal("spectator", match_id), match_id).view.result
    assert result is not None and result.ended_by == "timeout"


def test_max_live_matches_drops_the_least_recently_used_evictable_ones_first(tmp_path: Path) -> None:
    reg = MatchRegistry(tmp_path, synchronous="NORMAL", evict_after_s=None, max_live_matches=2)
    try:
        module = reg.upload_module(ADMIN, module_bytes("tic_tac_toe"), "ttt").sha256
        ids = [reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id for _ in range(4)]
        for match_id in ids:
            finish(reg, match_id)
        reg.view(Principal("spectator", ids[0]), ids[0])  # now the most recently used
        with reg._using(ADMIN, ids[1]):  # in use: kept even though it is old
            assert reg.evict_idle() == 2
        assert set(reg._matches) == {ids[0], ids[1]}
        listed = {s["match_id"]: s for s in reg.list_matches(ADMIN)}
        assert set(listed) == set(ids) and all(s["game_over"] for s in listed.values())
    finally:
        reg.close()


def test_a_waiting_match_in_the_lobby_is_not_evicted_and_starts_normally(
    ttt_registry: tuple[MatchRegistry, str, Metrics],
) -> None:
    reg, module, _ = ttt_registry
    reg.evict_after_s = 0
    created = reg.create_match(ADMIN, module, [("ann", ""), ("", "", True)])
    reg.evict_idle()
    spectator = Principal("spectator", created.match_id)
    _, token, status = reg.join(spectator, created.match_id, "bob")
    assert status == "active" and reg.authenticate(token).player_id == 2
    assert reg.evict_idle() == 1
    # Joining a started, evicted match: "already started", not "unknown".
    from tablehost.lobby import SeatTaken

    with pytest.raises(SeatTaken):
        reg.join(spectator, created.match_id, "cy")


def test_on_a_shared_store_an_evicted_match_is_served_by_another_process_and_reloaded_here(
    tmp_path: Path, postgres_url: str
) -> None:
    """Eviction releases nothing to release: another registry on the database moves the match;
    this one reloads it on its next request, and the version check still refuses a stale move."""
    first = MatchRegistry(tmp_path / "a", store=postgres_url, evict_after_s=0)
    second = MatchRegistry(tmp_path / "b", store=postgres_url, evict_after_s=None)
    try:
        module = first.upload_module(ADMIN, module_bytes("tic_tac_toe"), "ttt").sha256
        match_id = first.create_match(ADMIN, module, [("ann", ""), ("bob", "")]).match_id
        ann, bob = Principal("seat", match_id, 1), Principal("seat", match_id, 2)

        def move(reg: MatchRegistry, seat: Principal) -> None:
            served = reg.view(seat, match_id)
            reg.submit(seat, match_id, served.view.actions[0]["action"], served.view.version)

        stale = first.view(ann, match_id)
        assert first.evict_idle() == 1
        move(second, ann)
        move(second, bob)
        with pytest.raises(StaleVersion):  # reloaded at version 2: the stale version is refused
            first.submit(ann, match_id, stale.view.actions[-1]["action"], stale.view.version)
        assert first.view(ann, match_id).view == second.view(ann, match_id).view
        assert first.evict_idle() == 1
        listed = [s for s in first.list_matches(ADMIN) if s["match_id"] == match_id]
        assert listed[0]["version"] == 2 and match_id not in first._matches  # the evicted summary
        move(second, ann)
        deadline = time.monotonic() + 10
        while first.store.latest_version(match_id) != 3 and time.monotonic() < deadline:
            time.sleep(0.01)  # the first process hears of the move (NOTIFY) shortly after its commit
        listed = [s for s in first.list_matches(ADMIN) if s["match_id"] == match_id]
        assert listed[0]["version"] == 3  # a newer stored version than the evicted summary: reloaded
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("flags", [("--evict-after", "-1"), ("--max-live-matches", "0")])
def test_serve_refuses_a_negative_evict_after_or_an_empty_bound(tmp_path: Path, flags: tuple[str, str]) -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "tablehost", "serve", "--data", str(tmp_path / "data"), *flags],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 2 and f"tablehost: {flags[0]} must be" in result.stderr
    assert not (tmp_path / "data").exists()


def test_a_tick_visits_only_the_timed_matches_and_follows_eviction_and_reload(
    ttt_registry: tuple[MatchRegistry, str, Metrics],
) -> None:
    """``tick_clocks`` walks ``_ticking`` (timed, bots, absent seats), not every match in memory:
    an untimed match never enters it, a timed one enters when created or loaded again and
    leaves when evicted, and its timeout is still applied by a tick."""
    reg, module, _ = ttt_registry
    seats = [("ann", ""), ("bob", "")]
    untimed = reg.create_match(ADMIN, module, seats).match_id
    control = TimeControl(main_ms=600_000, on_timeout="forfeit")
    timed = reg.create_match(ADMIN, module, seats, time_control=control).match_id
    ended = reg.create_match(ADMIN, module, seats, time_control=control).match_id
    assert set(reg._ticking) == {timed, ended}
    finish(reg, ended)
    finish(reg, untimed)
    # All three leave (the timed one as abandoned: its timeout is far), and the index with them.
    assert reg.evict_idle(now=reg._matches[ended].used_at + 10_000) == 3
    assert reg._ticking == {} and reg._matches == {}
    for match_id in (untimed, timed, ended):  # loaded again: the timed ones with their clocks
        reg.view(Principal("spectator", match_id), match_id)
    assert set(reg._ticking) == {timed, ended}
    clocks = reg._matches[timed].clocks
    assert clocks is not None
    assert reg.tick_clocks(at_ms=clocks.since_ms + clocks.remaining[1]) == 1  # ann's clock ran out
    result = reg.view(Principal("spectator", timed), timed).view.result
    assert result is not None and result.ended_by == "timeout"
    assert reg.view(Principal("spectator", untimed), untimed).view.result.ended_by == "resigned"  # type: ignore[union-attr]


def test_authenticate_takes_the_hash_the_interceptor_computed(
    ttt_registry: tuple[MatchRegistry, str, Metrics],
) -> None:
    """``authenticate(token, token_sha256=...)`` answers as ``authenticate(token)`` (one hash per
    request instead of two); an unknown token is refused either way."""
    from tablehost.api.auth import hash_token
    from tablehost.api.faults import Unauthenticated

    reg, module, _ = ttt_registry
    created = reg.create_match(ADMIN, module, [("ann", ""), ("bob", "")])
    for player, token in created.seats:
        assert reg.authenticate(token, token_sha256=hash_token(token)) == reg.authenticate(token)
        assert reg.authenticate(token).player_id == player.player_id
    with pytest.raises(Unauthenticated):
        reg.authenticate("ths_unknown", token_sha256=hash_token("ths_unknown"))
