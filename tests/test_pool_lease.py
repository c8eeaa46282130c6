"""GuestPool.lease: a local bot game holds its instance and run slot, and gives them back on every exit.

What a lease must keep from the ordinary path: a budget per call (fuel, wall clock), a failure or
refusal discarding the instance, the isolation of matches (an instance serves one match), and
the same records and simulate summaries for a seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from fixtures_guest import cache_dir, offering_guest_wasm  # noqa: F401
from scripted_guest import SCORES, STEP, answer, scripted_guest
from tablehost._stacks import on_big_stack
from tablehost.errors import BudgetExceeded, GuestError, GuestProtocolError, GuestTrap
from tablehost.guest import GuestPool
from tablehost.guest.pool import CallTiming
from tablehost.guest.scheduler import RunSlots
from tablehost.history import MoveRecord, PlayerInfo
from tablehost.limits import DEFAULT_LIMITS, Limits
from tablehost.match import Match
from tablehost.module import load_module
from tablehost.selfplay import play_game
from tablehost.simulate import simulate

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
REVERSI = DIST / "reversi.wasm"
HEARTS = DIST / "hearts.wasm"
needs_games = pytest.mark.skipif(not REVERSI.exists(), reason="run `make games` to build the sample games")


def pool_of(wasm: bytes, limits: Limits = DEFAULT_LIMITS, **kwargs: Any) -> GuestPool:
    """A pool with run slots of its own (2), so other tests' calls cannot hold or take them."""
    return GuestPool(load_module(wasm, limits=limits), limits, run_slots=RunSlots(2), **kwargs)


def on_stack(pool: GuestPool, work: Any) -> Any:
    return on_big_stack(pool.limits.stack_bytes, work)


def released(pool: GuestPool) -> None:
    """Nothing is held any more: no run slot taken, no instance busy, a new lease can be had."""
    assert pool.run_slots.running == 0
    with pool.lease("probe") as held:
        assert held


def comparable(match: Match) -> bytes:
    """The match's record without its wall-clock times."""
    record = match.record()
    record.pop("created_at")
    for move in record["moves"]:
        move.pop("at")
    return orjson.dumps(record)


@needs_games
def test_a_bot_game_holds_one_instance_and_one_run_slot_until_it_ends() -> None:
    pool = pool_of(REVERSI.read_bytes())
    seen: list[tuple[int, int]] = []

    def watch(match: Match, move: MoveRecord) -> None:
        seen.append((pool.run_slots.running, pool.instantiations))

    result = on_stack(pool, lambda: play_game(pool, ["random", "random"], 5, on_move=watch))
    assert result.finished and len(seen) == result.plies == 60
    assert set(seen) == {(1, 1)}  # the slot held between moves, the setup's instance all game
    released(pool)
    assert pool.instance_count == 1  # back warm, as after an ordinary call
    pool.close()


@needs_games
def test_every_call_of_a_leased_game_gets_its_own_budget() -> None:
    fuel_cap = 600_000  # above any one reversi call (setup: about 530k), a sixth of a whole game
    timings: list[CallTiming] = []
    pool = pool_of(REVERSI.read_bytes(), DEFAULT_LIMITS.tightened(fuel_per_call=fuel_cap), observer=timings.append)
    result = on_stack(pool, lambda: play_game(pool, ["random", "random"], 9))
    assert result.finished
    assert all(t.outcome == "ok" and 0 < t.fuel <= fuel_cap for t in timings)
    assert sum(t.fuel for t in timings) > 5 * fuel_cap
    assert {t.op for t in timings} >= {"setup", "step"}
    released(pool)
    pool.close()


HOSTILE_STEPS = [
    ("hostile_loop", DEFAULT_LIMITS.tightened(wall_ms=100, fuel_per_call=20_000_000), BudgetExceeded),
    ("hostile_trap", DEFAULT_LIMITS, GuestTrap),
]


@pytest.mark.parametrize(("variant", "limits", "error"), HOSTILE_STEPS, ids=[c[0] for c in HOSTILE_STEPS])
def test_a_step_that_fails_under_a_lease_is_stopped_and_releases_everything(
    variant: str, limits: Limits, error: type[GuestError]
) -> None:
    timings: list[CallTiming] = []
    pool = pool_of(offering_guest_wasm(variant), limits, observer=timings.append)
    with pytest.raises(error) as info:
        on_stack(pool, lambda: play_game(pool, ["random", "random"], 1))
    assert getattr(info.value, "timing", None) is not None and info.value.timing.op == "step"
    assert timings[-1].op == "step" and timings[-1].failed
    if isinstance(info.value, BudgetExceeded):
        assert info.value.budget in {"fuel", "wall_ms"}
        assert timings[-1].run_ms < 5_000  # stopped by its own call's budget
    assert pool.instance_count == 0  # the failed instance is discarded
    released(pool)
    pool.close()


def test_a_refused_step_under_a_lease_discards_the_instance_and_releases_everything() -> None:
    refused = answer(STEP, scores={"x": SCORES["1"]})  # scores keyed by a non-id: the gate refuses
    pool = pool_of(scripted_guest(step=refused))
    with pytest.raises(GuestProtocolError):
        on_stack(pool, lambda: play_game(pool, ["random", "random"], 1))
    assert pool.instance_count == 0  # discard_ref dropped it: its cache holds the refused state
    released(pool)
    pool.close()


@needs_games
def test_an_interrupt_mid_game_releases_the_lease() -> None:
    pool = pool_of(REVERSI.read_bytes())

    def interrupt(match: Match, move: MoveRecord) -> None:
        if match.version == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        on_stack(pool, lambda: play_game(pool, ["random", "random"], 2, on_move=interrupt))
    released(pool)
    result = on_stack(pool, lambda: play_game(pool, ["random", "random"], 2, match_id="next"))
    assert result.finished
    pool.close()


@needs_games
def test_another_match_never_gets_the_leased_instance() -> None:
    pool = pool_of(REVERSI.read_bytes())
    seats = [PlayerInfo(1, "a", "#111"), PlayerInfo(2, "b", "#222")]

    def two_matches() -> tuple[Any, Any, int]:
        with pool.lease("a") as held:
            assert held
            first = Match.start(pool, seats, match_id="a", seed=1)
            first.submit(first.active_player_ids[0], first.actions_for(first.active_player_ids[0])[0]["action"])
            leased = next(iter(pool._busy))  # the lease holds match a's instance between its calls
            assert leased.match_key == "a"
            other = Match.start(pool, seats, match_id="b", seed=1)  # same thread, another match
            warm_b = pool._warm["b"][0]
            first.submit(first.active_player_ids[0], first.actions_for(first.active_player_ids[0])[0]["action"])
            return leased, warm_b, other.version

    leased, warm_b, _ = on_stack(pool, two_matches)
    assert warm_b is not leased and warm_b.match_key == "b"
    assert pool.instantiations == 2
    released(pool)
    pool.close()


@needs_games
@pytest.mark.parametrize(("path", "seats"), [(REVERSI, 2), (HEARTS, 4)], ids=["reversi", "hearts"])
def test_a_leased_game_records_exactly_what_the_ordinary_path_records(path: Path, seats: int) -> None:
    pool = pool_of(path.read_bytes())
    for seed in (3, 77):
        def leasing(seed: int = seed) -> Any:
            return play_game(pool, ["random"] * seats, seed, match_id=f"l{seed}")

        def ordinary(seed: int = seed) -> Any:
            with pool.lease("someone-else") as held:  # one lease per pool: the game's own yields False
                assert held
                return play_game(pool, ["random"] * seats, seed, match_id=f"l{seed}")

        leased = on_stack(pool, leasing)

        plain = on_stack(pool, ordinary)
        assert leased.plies == plain.plies > 0
        assert comparable(leased.match) == comparable(plain.match)
    pool.close()


@needs_games
def test_simulate_summary_for_a_seed_is_unchanged() -> None:
    # Measured with the runtime before leases and the bot-job collector settings (hostspeed at 82d90ed).
    summary = simulate(REVERSI, ["random", "random"], 7, 30).to_json()
    assert (summary["wins"], summary["draws"], summary["mean_ranks"], summary["plies_mean"]) == (
        [13, 15], 2, [1.5, 1.433], 60.0,
    )
