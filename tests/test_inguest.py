"""Playouts and search inside the guest (ABI v1.1 ``playout`` and ``search``, tablehost.inguest).

Covers: determinism of playouts and of in-guest simulations whatever the workers and batches,
playouts from a state, the search bots in ``play_game`` (view only, never the state), the
property that a search decides the same for two states a seat cannot tell apart, the clear
errors (ismcts without a sampler, mcts on hidden information), and hostile answers.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures_guest import PLAYERS, cache_dir, load_guest  # noqa: F401 - fixture
from tablehost import inguest
from tablehost.bots import SearchBot, make_bot, parse_bot_list
from tablehost.errors import GuestProtocolError
from tablehost.guest import OP_PLAYOUT, GuestPool
from tablehost.module import load_module
from tablehost.selfplay import default_players, play_game
from tablehost.simulate import simulate
from tablehost.view import view_actions, view_state

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
_modules: dict[str, Any] = {}


def pool_for(name: str) -> GuestPool:
    """A pool of the sample game ``name``. Its wall clock is generous: fuel decides, and these
    tests must not fail because a shared machine is slow."""
    if name not in _modules:
        _modules[name] = load_module((DIST / f"{name}.wasm").read_bytes(), name=name)
    return GuestPool(_modules[name], dataclasses.replace(_modules[name].limits, wall_ms=60_000))


def seats(count: int) -> list[dict[str, Any]]:
    return [p.to_json() for p in default_players(count)]


# ---------------------------------------------------------------- playouts


@pytest.mark.parametrize(("name", "players"), [("tic_tac_toe", 2), ("reversi", 2), ("checkers", 2),
                                               ("dominoes", 3), ("hearts", 4)])
def test_playouts_finish_and_repeat_exactly(name: str, players: int) -> None:
    pool = pool_for(name)
    seeds = [11, 12, 13]
    first = inguest.playouts(pool, seeds, ["random"], players=seats(players))
    again = inguest.playouts(pool, list(reversed(seeds)), ["random"], players=seats(players))
    assert first == list(reversed(again)), "a game depends on its own seed only"
    assert all(game.game_over and game.cut is None and game.plies > 0 for game in first)
    assert len({game.plies for game in first} | {str(game.scores) for game in first}) > 1


def test_first_policy_is_deterministic_and_differs_from_random() -> None:
    pool = pool_for("reversi")
    firsts = inguest.playouts(pool, [1, 2], ["first"], players=seats(2))
    randoms = inguest.playouts(pool, [1, 2], ["random"], players=seats(2))
    assert firsts[0].plies == firsts[1].plies and firsts[0].scores == firsts[1].scores
    assert randoms[0] != randoms[1]


def test_a_playout_cut_at_max_plies_says_so() -> None:
    [game] = inguest.playouts(pool_for("checkers"), [5], ["random"], players=seats(2), max_plies=7)
    assert (game.plies, game.game_over, game.cut) == (7, False, "max_plies")


def test_playouts_from_a_state_start_there() -> None:
    pool = pool_for("tic_tac_toe")
    match = play_game(pool, ["first", "first"], 3, max_plies=4).match
    games = inguest.playouts(pool, [1, 2, 3, 4], ["first"], state_ref=match.state_ref, get_state=lambda: match.state)
    # first/first from here: X takes the top row's last cell next... every game is the same and short.
    assert len({(g.plies, str(g.scores)) for g in games}) == 1
    assert all(g.game_over and g.plies <= 5 for g in games)


def test_in_guest_simulation_is_the_same_for_any_workers_and_batches() -> None:
    module = DIST / "reversi.wasm"

    def run(**options: Any) -> dict[str, Any]:
        summary = simulate(module, ["random", "random"], 99, 40, in_guest=True, **options).to_json()
        for timing in ("moves_per_second", "games_per_second", "seconds"):
            summary.pop(timing)
        return summary

    one = run(batch_size=40)
    assert one == run(batch_size=7)
    assert one == run(batch_size=5, workers=2)
    assert sum(one["wins"]) + one["draws"] == 40 and not one["failures"]


def test_in_guest_simulation_refuses_search_bots() -> None:
    with pytest.raises(ValueError, match="in-guest"):
        simulate(DIST / "reversi.wasm", ["mcts:10", "random"], 1, 2, in_guest=True)


# ---------------------------------------------------------------- bots and search


def test_bot_names() -> None:
    assert parse_bot_list("mcts:20,random", 2) == ["mcts:20", "random"]
    assert isinstance(make_bot("ismcts:5", 1), SearchBot)
    for bad in ("mcts", "mcts:0", "mcts:x", "uct:5", "random:3"):
        with pytest.raises(ValueError):
            parse_bot_list(bad, 2)


def test_mcts_takes_a_win_and_blocks_a_loss_in_tic_tac_toe() -> None:
    pool = pool_for("tic_tac_toe")
    # X on a1, b1 (row 1); O on a2, b2. X to move: c1 wins.
    match = play_game(pool, ["first", "first"], 1, max_plies=0).match
    for action in ("a1", "a2", "b1", "b2"):
        mover = match.active_player_ids[0]
        match.submit(mover, {"type": "space_click", "space_id": action})
    mover = match.active_player_ids[0]
    view = match.view(mover)
    choice = SearchBot("mcts", 300, 4).choose_in_view(pool, view.state, view.actions, mover)
    assert choice["action"] == {"type": "space_click", "space_id": "c1"}


def test_search_bot_games_repeat_exactly_and_mcts_beats_random() -> None:
    pool = pool_for("tic_tac_toe")
    results = [play_game(pool, ["mcts:200", "random"], seed, max_plies=20) for seed in range(6)]
    again = play_game(pool, ["mcts:200", "random"], 3, max_plies=20)
    assert again.match.record()["moves"][-1]["patches"] == results[3].match.record()["moves"][-1]["patches"]
    assert all(r.finished and 1 not in r.winners or r.draw for r in results), "mcts never loses"


def test_ismcts_without_a_sampler_is_a_clear_error() -> None:
    pool = pool_for("reversi")
    match = play_game(pool, ["first", "first"], 1, max_plies=0).match
    mover = match.active_player_ids[0]
    view = match.view(mover)
    with pytest.raises(GuestProtocolError) as caught:
        SearchBot("ismcts", 10, 1).choose_in_view(pool, view.state, view.actions, mover)
    assert caught.value.guest_code == "no_sampler" and "sample_hidden" in str(caught.value)


def test_mcts_on_a_hidden_information_game_is_a_clear_error() -> None:
    pool = pool_for("hearts")
    match = play_game(pool, ["first"] * 4, 1, max_plies=0).match
    mover = match.active_player_ids[0]
    view = match.view(mover)
    with pytest.raises(GuestProtocolError) as caught:
        SearchBot("mcts", 10, 1).choose_in_view(pool, view.state, view.actions, mover)
    assert caught.value.guest_code == "hidden_information"


@pytest.mark.parametrize(("name", "bots"), [("hearts", ["ismcts:10", "random", "random", "random"]),
                                            ("dominoes", ["ismcts:30", "random", "random"]),
                                            ("spades", ["random", "ismcts:10", "random", "random"]),
                                            ("holdem", ["ismcts:10", "random", "random"]),
                                            ("risk", ["ismcts:5", "random", "random"])])
def test_search_bots_are_handed_only_their_seats_view(
    name: str, bots: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[dict[str, Any], int]] = []
    real = inguest.search

    def spy(pool: GuestPool, view: dict[str, Any], player_id: int, *args: Any, **kwargs: Any) -> Any:
        seen.append((view, player_id))
        return real(pool, view, player_id, *args, **kwargs)

    monkeypatch.setattr(inguest, "search", spy)
    pool = pool_for(name)
    result = play_game(pool, bots, 8, max_plies=25, via_views=True)
    assert result.plies == 25 or result.finished
    assert seen, "the search bot moved"
    hidden_groups = 0
    for view, player_id in seen:
        for space in view["spaces"]:
            for piece in space["pieces"]:
                viewer = piece.get("owner") if piece.get("owner") is not None else space.get("owner")
                assert piece.get("private_kind") is None or viewer == player_id
                hidden_groups += "count" in piece
    assert hidden_groups, "the views held hidden groups"


def scramble_hidden_from(state: dict[str, Any], seat: int, shuffle: Any) -> dict[str, Any]:
    """``state`` with the faces of the pieces hidden from ``seat`` dealt among them again."""
    import orjson

    copy = orjson.loads(orjson.dumps(state))
    hidden = []
    for space in copy["spaces"]:
        for piece in space["pieces"]:
            viewer = piece.get("owner") if piece.get("owner") is not None else space.get("owner")
            if piece.get("private_kind") is not None and viewer != seat:
                hidden.append(piece)
    faces = [piece["private_kind"] for piece in hidden]
    shuffle.shuffle(faces)
    for piece, face in zip(hidden, faces):
        piece["private_kind"] = face
    return copy


def _decides_alike(name: str, players: int, seed: int, plies: int, shuffle: Any) -> None:
    """A seat's search decides the same on the real state and on one whose hidden faces were dealt
    again among the pieces hidden from it (everything else, its view included, is the same)."""
    pool = pool_for(name)
    match = play_game(pool, ["random"] * players, seed, max_plies=plies).match
    if match.game_over:
        return
    seat = match.active_player_ids[0]
    state = match.state
    other = scramble_hidden_from(state, seat, shuffle)
    offered = match.actions_for(seat)
    if not any(a.get("intent") in ("choice", "confirm") for a in offered):
        return
    view, other_view = view_state(state, seat), view_state(other, seat)
    assert view == other_view
    actions = view_actions(state, seat, offered)
    assert actions == view_actions(other, seat, offered)
    first = SearchBot("ismcts", 10, seed).choose_in_view(pool, view, actions, seat)
    second = SearchBot("ismcts", 10, seed).choose_in_view(pool, other_view, actions, seat)
    assert first == second


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), plies=st.integers(0, 40), shuffle=st.randoms(use_true_random=False))
def test_decisions_ignore_what_the_seat_may_not_see(seed: int, plies: int, shuffle: Any) -> None:
    _decides_alike("hearts", 4, seed, plies, shuffle)


@pytest.mark.parametrize(("name", "players"), [("dominoes", 2), ("holdem", 3), ("spades", 4)])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), plies=st.integers(0, 30), shuffle=st.randoms(use_true_random=False))
def test_decisions_ignore_what_the_seat_may_not_see_in_other_games(
    name: str, players: int, seed: int, plies: int, shuffle: Any
) -> None:
    _decides_alike(name, players, seed, plies, shuffle)


# ---------------------------------------------------------------- hostile answers


class ScriptedPool:
    """A pool whose ``run_scaled`` answers what the test scripted (the checks under test)."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer

    def run_scaled(self, op: int, fields: dict[str, Any], **_: Any) -> dict[str, Any]:
        return self.answer


GOOD_GAME = {"plies": 3, "game_over": True, "cut": None,
             "scores": {"1": {"public_points": [1.0], "private_points": []},
                        "2": {"public_points": [0.0], "private_points": []}}}

BAD_PLAYOUTS = {
    "no games": {},
    "games not a list": {"games": {"0": GOOD_GAME}},
    "one game too many": {"games": [GOOD_GAME, GOOD_GAME]},
    "negative plies": {"games": [{**GOOD_GAME, "plies": -1}]},
    "plies over the cap": {"games": [{**GOOD_GAME, "plies": 11}]},
    "bool plies": {"games": [{**GOOD_GAME, "plies": True}]},
    "over yet cut": {"games": [{**GOOD_GAME, "cut": "stuck"}]},
    "not over, not cut": {"games": [{**GOOD_GAME, "game_over": False}]},
    "unknown cut": {"games": [{**GOOD_GAME, "game_over": False, "cut": "bored"}]},
    "cut early at max_plies": {"games": [{**GOOD_GAME, "game_over": False, "cut": "max_plies"}]},
    "a seat missing": {"games": [{**GOOD_GAME, "scores": {"1": GOOD_GAME["scores"]["1"]}}]},  # type: ignore[index]
    "a stranger scored": {"games": [{**GOOD_GAME, "scores": {**GOOD_GAME["scores"], "9": {}}}]},  # type: ignore[dict-item]
    "points not numbers": {"games": [{**GOOD_GAME, "scores": {"1": {"public_points": ["1"]}, "2": {}}}]},
    "infinite points": {"games": [{**GOOD_GAME, "scores": {"1": {"public_points": [1e400]}, "2": {}}}]},
    "ranks of a game not over": {"games": [{**GOOD_GAME, "game_over": False, "cut": "max_plies", "plies": 10,
                                            "ranks": {"1": 1, "2": 2}}]},
    "ranks missing a seat": {"games": [{**GOOD_GAME, "ranks": {"1": 1}}]},
    "a rank past the seats": {"games": [{**GOOD_GAME, "ranks": {"1": 1, "2": 3}}]},
    "ranks not an object": {"games": [{**GOOD_GAME, "ranks": [1, 2]}]},
}


def test_a_good_playout_answer_is_taken() -> None:
    games = inguest.playouts(ScriptedPool({"games": [GOOD_GAME]}), [1], ["random"], players=PLAYERS,  # type: ignore[arg-type]
                             max_plies=10)
    assert games == [inguest.PlayoutGame(3, True, None, GOOD_GAME["scores"])]  # type: ignore[arg-type]
    ranked = {**GOOD_GAME, "ranks": {"1": 2, "2": 1}}
    games = inguest.playouts(ScriptedPool({"games": [ranked]}), [1], ["random"], players=PLAYERS,  # type: ignore[arg-type]
                             max_plies=10)
    assert games[0].ranks == {1: 2, 2: 1}


@pytest.mark.parametrize("case", sorted(BAD_PLAYOUTS))
def test_a_bad_playout_answer_is_refused(case: str) -> None:
    with pytest.raises(GuestProtocolError, match="guest playout answer"):
        inguest.playouts(ScriptedPool(BAD_PLAYOUTS[case]), [1], ["random"], players=PLAYERS,  # type: ignore[arg-type]
                         max_plies=10)


OFFERED = [{"action": {"type": "space_click", "space_id": "a"}, "intent": "confirm", "label": "a"},
           {"action": {"type": "space_click", "space_id": "b"}, "intent": "confirm", "label": "b"}]
GOOD_SEARCH = {"action": OFFERED[1], "visits": 4, "iterations": 10}

BAD_SEARCHES = {
    "no action": {"visits": 4, "iterations": 10},
    "action not offered": {**GOOD_SEARCH, "action": {**OFFERED[0], "action": {"type": "space_click", "space_id": "z"}}},
    "other iterations": {**GOOD_SEARCH, "iterations": 11},
    "visits over iterations": {**GOOD_SEARCH, "visits": 11},
    "visits not a count": {**GOOD_SEARCH, "visits": 1.5},
    "action not an object": {**GOOD_SEARCH, "action": "b"},
}


def test_a_good_search_answer_names_the_offer() -> None:
    pool = ScriptedPool(GOOD_SEARCH)
    chosen = inguest.search(pool, {}, 1, OFFERED, algorithm="mcts", iterations=10, seed=1)  # type: ignore[arg-type]
    assert chosen is OFFERED[1]


@pytest.mark.parametrize("case", sorted(BAD_SEARCHES))
def test_a_bad_search_answer_is_refused(case: str) -> None:
    with pytest.raises(GuestProtocolError, match="guest search answer"):
        inguest.search(ScriptedPool(BAD_SEARCHES[case]), {}, 1, OFFERED,  # type: ignore[arg-type]
                       algorithm="mcts", iterations=10, seed=1)


def test_hostile_answers_through_a_real_guest_are_refusals(cache_dir: Path) -> None:  # noqa: F811
    pool = GuestPool(load_guest("hostile_mirror", cache_dir))
    # The guest answers our own request: no "games" in it.
    with pytest.raises(GuestProtocolError, match="exactly 1 games"):
        inguest.playouts(pool, [1], ["random"], players=PLAYERS)
    with pytest.raises(GuestProtocolError, match="lacks an action"):
        inguest.search(pool, {"players": []}, 1, OFFERED, algorithm="mcts", iterations=3, seed=1)
    # And a bad answer crafted into the request comes back refused, not used.
    bad = pool.run_scaled(OP_PLAYOUT, BAD_PLAYOUTS["over yet cut"], scale=2)
    with pytest.raises(GuestProtocolError):
        inguest.check_playout_answer(bad, 1, ["1", "2"], 10)


def test_a_failing_batch_pins_each_failure_to_its_seed(cache_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    from fixtures_guest import guest_wasm

    module = tmp_path / "mirror.wasm"
    module.write_bytes(guest_wasm("hostile_mirror"))
    summary = simulate(module, ["random", "random"], 5, 3, in_guest=True, batch_size=2)
    assert summary.games == 3 and [f["game"] for f in summary.failures] == [0, 1, 2]
    assert all("guest/protocol" in f["error"] for f in summary.failures)


def test_playout_budget_grows_with_the_games() -> None:
    pool = pool_for("reversi")
    tight = dataclasses.replace(pool.limits, fuel_per_call=2_000)
    small = GuestPool(pool.module, tight)
    from tablehost.errors import BudgetExceeded

    with pytest.raises(BudgetExceeded) as caught:
        inguest.playouts(small, [1, 2, 3], ["random"], players=seats(2))
    assert f"{3 * inguest.MOVE_BUDGETS_PER_GAME * 2_000} fuel" in str(caught.value)


# ---------------------------------------------------------------- compact states against host-driven play


def host_driven_playout(pool: GuestPool, seed: int, max_plies: int) -> tuple[int, bool, dict[str, Any]]:
    """The ``playout`` op's procedure (docs/abi.md 8.2, one active player at a time) driven from
    the host, a guest call per move: setup seed, then per move ``below(candidates)`` and the move
    seed, all from ``Rng(seed)``. Returns (plies, game over, scores)."""
    from tablehost.match import Match
    from tablehost.rng import Rng

    rng = Rng(seed)
    match = Match.start(pool, default_players(2), match_id="host-driven", seed=rng.next_u64())
    plies = 0
    while not match.game_over and plies < max_plies:
        [mover] = match.state["active_player_ids"]
        candidates = [a for a in match.actions_for(mover) if a["intent"] in ("choice", "confirm")]
        if not candidates:
            break
        pick = candidates[rng.below(len(candidates))]
        match.submit(mover, pick["action"], seed=rng.next_u64())
        plies += 1
    return plies, match.game_over, match.scores


@pytest.mark.parametrize("name", ["reversi", "checkers"])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64 - 1), max_plies=st.sampled_from([5, 40, 10_000]))
def test_in_guest_playouts_on_compact_states_equal_host_driven_play(name: str, seed: int, max_plies: int) -> None:
    """Reversi and checkers play their in-guest games on compact states (docs/abi.md 8.4); the
    same seed played move by move through the host's ordinary path gives the same game."""
    pool = pool_for(name)
    [game] = inguest.playouts(pool, [seed], ["random"], players=seats(2), max_plies=max_plies)
    plies, over, scores = host_driven_playout(pool, seed, max_plies)
    assert (game.plies, game.game_over) == (plies, over)
    assert game.scores == scores


def test_reversi_simd_routines_play_like_the_table_over_many_games() -> None:
    """Reversi's compact placements and flips run as wasm SIMD only in the module (its native
    tests run the same steps on two u64s), so the module itself is checked here: 40 whole games
    from setup in one playout call equal the same seeds played move by move through the host."""
    pool = pool_for("reversi")
    seeds = [seed * 0x9E37_79B9_7F4A_7C15 % 2**64 for seed in range(1, 41)]
    games = inguest.playouts(pool, seeds, ["random"], players=seats(2), max_plies=10_000)
    for seed, game in zip(seeds, games):
        assert (game.plies, game.game_over, game.scores) == host_driven_playout(pool, seed, 10_000), seed
    assert sum(game.plies for game in games) > 40 * 50
