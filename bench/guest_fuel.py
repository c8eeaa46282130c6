"""Wasm instructions (wasmtime fuel) per guest op for each sample game.

Fuel counts the wasm instructions a call executes, so unlike wall-clock figures it does not
depend on how loaded the machine is: the same module and seeds always give the same numbers.
Each game is played by seeded random moves through the raw ABI (docs/abi.md), one instance per
game, every move by ``state_ref`` as the host sends it; after every move the read ops
(``actions`` for each active player, ``scores``, ``game_over``) are measured by ``state_ref``
too, and every eighth move is replayed once more from the full ``state`` (the ``state_miss``
path, ``step (state)``). Prints the mean fuel per call of each op and the module size.

Usage: PYTHONPATH=runtime python bench/guest_fuel.py [--games N] [--seed S] [--dist DIR] [--json] [GAME ...]
"""

from __future__ import annotations

import argparse
import json
import random
import struct
from collections import defaultdict
from pathlib import Path
from typing import Any

import wasmtime

from tablehost.table import Table

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
SEATS = {"tic_tac_toe": 2, "reversi": 2, "checkers": 2, "dominoes": 4, "hearts": 4, "backgammon": 2, "spades": 4, "holdem": 6, "risk": 4}
OPS = {"setup": 1, "actions": 2, "step": 3, "scores": 4, "game_over": 5}
FUEL = 10**15
"""Fuel given to every call: far more than any call uses, so ``FUEL - remaining`` is its cost."""
REQUEST_BUFFER_BYTES = 1 << 20
MAX_PLIES = 2000
STATE_STEP_EVERY = 8


class FuelMeter:
    """One instance of a game module whose calls report the fuel (wasm instructions) they used.

    Args:
        engine: an engine with ``consume_fuel`` on.
        module: the compiled game module.
    """

    def __init__(self, engine: wasmtime.Engine, module: wasmtime.Module) -> None:
        self.store = wasmtime.Store(engine)
        self.store.set_fuel(FUEL)
        exports = wasmtime.Instance(self.store, module, []).exports(self.store)
        self.memory: Any = exports["memory"]
        self._call: Any = exports["tablehost_call"]
        self.buffer = exports["tablehost_alloc"](self.store, REQUEST_BUFFER_BYTES)  # type: ignore[operator]

    def call(self, op: str, request: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """Run ``op`` on ``request``; return (the parsed response, fuel units the call used).

        Raises:
            RuntimeError: the guest answered with an error object.
            wasmtime.Trap: the guest trapped.
        """
        payload = json.dumps(request, separators=(",", ":")).encode()
        assert len(payload) <= REQUEST_BUFFER_BYTES, "request larger than the benchmark's buffer"
        self.memory.write(self.store, payload, self.buffer)
        self.store.set_fuel(FUEL)
        packed = self._call(self.store, OPS[op], self.buffer, len(payload))
        used = FUEL - self.store.get_fuel()
        unsigned = struct.unpack("<Q", struct.pack("<q", packed))[0]
        pointer, length = unsigned >> 32, unsigned & 0xFFFF_FFFF
        response = json.loads(self.memory.read(self.store, pointer, pointer + length))
        if "error" in response:
            raise RuntimeError(f"{op} answered {response['error']}")
        return response, used


def play(meter: FuelMeter, seats: int, seed: int, fuel: dict[str, list[int]]) -> None:
    """Play one game of random moves, appending each call's fuel to ``fuel[op name]``."""
    choose = random.Random(seed)
    players = [{"player_id": pid, "username": f"p{pid}", "color": ""} for pid in range(1, seats + 1)]
    response, used = meter.call("setup", {"players": players, "seed": seed, "next_ref": "v0"})
    fuel["setup"].append(used)
    mirror = Table(response["state"])  # the host's copy, for the full-state step
    mirror.apply(response["patches"])
    for ply in range(MAX_PLIES):
        offered = {pid: actions for pid, actions in response["actions"].items() if actions}
        if response["game_over"] or not offered:
            return
        ref = f"v{ply}"
        for pid in offered:
            fuel["actions"].append(meter.call("actions", {"state_ref": ref, "player_id": int(pid)})[1])
        fuel["scores"].append(meter.call("scores", {"state_ref": ref})[1])
        fuel["game_over"].append(meter.call("game_over", {"state_ref": ref})[1])
        pid = choose.choice(sorted(offered))
        move = {"player_id": int(pid), "action": choose.choice(offered[pid])["action"],
                "seed": choose.getrandbits(64)}
        if ply % STATE_STEP_EVERY == 0:
            # Cached under a ref never read again, so `ref` stays cached for the real move.
            fuel["step (state)"].append(meter.call("step", {"state": mirror.state, "next_ref": "x", **move})[1])
        response, used = meter.call("step", {"state_ref": ref, "next_ref": f"v{ply + 1}", **move})
        fuel["step"].append(used)
        mirror.apply(response["patches"])


def measure(path: Path, seats: int, games: int, seed: int) -> dict[str, float]:
    """Mean fuel per call of each op over ``games`` seeded games of the module at ``path``."""
    config = wasmtime.Config()
    config.consume_fuel = True
    engine = wasmtime.Engine(config)
    module = wasmtime.Module(engine, path.read_bytes())
    fuel: dict[str, list[int]] = defaultdict(list)
    for game in range(games):
        play(FuelMeter(engine, module), seats, seed + game, fuel)
    return {op: sum(values) / len(values) for op, values in fuel.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", help="sample games to run (default: every .wasm in --dist)")
    parser.add_argument("--games", dest="count", type=int, default=5, help="games per module (default 5)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game (default 1)")
    parser.add_argument("--dist", type=Path, default=DIST, help="folder of <game>.wasm (default sample_games/dist)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    names = args.games or sorted(p.stem for p in args.dist.glob("*.wasm"))
    results = {}
    for name in names:
        path = args.dist / f"{name}.wasm"
        results[name] = {"bytes": path.stat().st_size,
                         **measure(path, SEATS.get(name, 2), args.count, args.seed)}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    columns = ["setup", "step", "step (state)", "actions", "scores", "game_over"]
    print("mean fuel (wasm instructions) per call")
    print(f"{'game':12s} {'bytes':>7s} " + " ".join(f"{c:>12s}" for c in columns))
    for name, row in results.items():
        print(f"{name:12s} {row['bytes']:7d} " + " ".join(f"{row.get(c, 0):12.0f}" for c in columns))


if __name__ == "__main__":
    main()
