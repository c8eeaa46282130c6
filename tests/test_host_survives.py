"""A hostile module is refused and the same host keeps playing other matches to the end."""

from __future__ import annotations

from pathlib import Path

import pytest
import wasmtime

from fixtures_guest import PLAYERS, cache_dir, guest_wasm, load_guest, wat_module  # noqa: F401
from tablehost.bots import RandomBot
from tablehost.errors import (
    BudgetExceeded,
    GuestError,
    GuestPanic,
    GuestProtocolError,
    GuestTrap,
    ModuleError,
)
from tablehost.guest import GuestPool, check_instantiates
from tablehost.history import PlayerInfo
from tablehost.limits import DEFAULT_LIMITS, Limits
from tablehost.match import Match
from tablehost.module import load_module

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
TIC_TAC_TOE = DIST / "tic_tac_toe.wasm"

HOSTILE: list[tuple[str, Limits, type[GuestError]]] = [
    ("hostile_loop", DEFAULT_LIMITS.tightened(wall_ms=100, fuel_per_call=20_000_000), BudgetExceeded),
    ("hostile_grow", DEFAULT_LIMITS.tightened(memory_bytes=8 * 1024 * 1024), BudgetExceeded),
    ("hostile_recurse", DEFAULT_LIMITS, BudgetExceeded),
    ("hostile_big_response", DEFAULT_LIMITS, BudgetExceeded),
    ("hostile_panic", DEFAULT_LIMITS, GuestPanic),
    ("hostile_trap", DEFAULT_LIMITS, GuestTrap),
    ("hostile_garbage", DEFAULT_LIMITS, GuestProtocolError),
]


@pytest.mark.skipif(not TIC_TAC_TOE.exists(), reason="run `make games` to build the sample games")
def test_hostile_guests_never_take_down_a_running_match(cache_dir: Path) -> None:  # noqa: F811
    game = load_module(TIC_TAC_TOE.read_bytes(), cache_dir=cache_dir)
    match = Match.start(
        GuestPool(game), [PlayerInfo(1, "ann", "#c00"), PlayerInfo(2, "bob", "#00c")], match_id="calm", seed=5
    )
    bot = RandomBot(3)

    def one_move() -> None:
        player = match.active_player_ids[0]
        match.submit(player, bot.choose(match.actions_for(player))["action"])

    with pytest.raises(ModuleError, match="wasi_snapshot_preview1"):
        load_module(wat_module("wasi_import"), cache_dir=cache_dir)
    for variant, limits, error in HOSTILE:
        hostile = GuestPool(load_guest(variant, cache_dir, limits), limits)
        hostile.setup(PLAYERS, 1, "h:0")
        with pytest.raises(error):
            hostile.step("h:0", dict, "h:1", 1, {"type": "space_click", "space_id": "a"}, 7)
        hostile.close()
        if not match.game_over:
            one_move()
    while not match.game_over:
        one_move()
    assert match.game_over and match.scores


def test_a_start_function_that_never_returns_is_refused_up_front(cache_dir: Path) -> None:  # noqa: F811
    text = (Path(__file__).parent / "wat" / "echo_guest.wat").read_text().rstrip()
    assert text.endswith(")")
    spinning = text[:-1] + "\n  (func $spin (loop $again (br $again)))\n  (start $spin))\n"
    limits = DEFAULT_LIMITS.tightened(wall_ms=100, fuel_per_call=5_000_000)
    module = load_module(bytes(wasmtime.wat2wasm(spinning)), limits=limits, cache_dir=cache_dir)
    with pytest.raises(ModuleError, match="cannot be instantiated"):
        check_instantiates(module, limits)
    check_instantiates(load_module(guest_wasm(), cache_dir=cache_dir))  # a sound module passes
