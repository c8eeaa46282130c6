"""What the gate costs per move: the answer checks of tablehost.gate on real traffic of a sample game.

Plays random games of each game through the real guest, keeps every step answer with the
state it applied to (and the raw bytes the guest wrote), then times, per move:

- ``gate``: :meth:`Gate.check_step` without the patch check it shares with the table
  (``Table.check`` ran before the gate existed, so it is not new cost; shown apart), each
  game replayed on one table as a live match keeps it;
- ``table.check``: the patch check alone;
- ``dup keys``: :func:`has_duplicate_keys` on the raw answer (parse time).

``--depth`` prints, instead, the deepest value a MatchView can carry through protobuf
(the measurement ``AnswerLimits.value_depth_max`` is chosen below).

Usage: python bench/gate_cost.py [--games N] [--depth] [GAME ...]   (default: reversi)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import orjson

from tablehost import logs
from tablehost.gate import Gate, has_duplicate_keys
from tablehost.guest import GuestPool
from tablehost.guest import instance as guest_module
from tablehost.module import load_module
from tablehost.selfplay import play_game
from tablehost.table import Table

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
SEATS = {"tic_tac_toe": 2, "reversi": 2, "checkers": 2, "dominoes": 4, "hearts": 4}


def collect(game: str, games: int) -> list[list[tuple[dict[str, Any], bytes, bytes]]]:
    """Per random game: ``(answer, raw bytes, state snapshot before)`` of every step, in order."""
    pool = GuestPool(load_module((DIST / f"{game}.wasm").read_bytes()))
    played: list[list[tuple[dict[str, Any], bytes, bytes]]] = []
    raws: list[bytes] = []
    parse = guest_module.parse_response

    def keep_raw(raw: bytes, op_name: str) -> dict[str, Any]:
        raws.append(raw)
        return parse(raw, op_name)

    original_step = GuestPool.step

    def step(self: GuestPool, state_ref: str, get_state: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        before = orjson.dumps(get_state())
        answer = original_step(self, state_ref, get_state, *args, **kwargs)
        played[-1].append((answer, raws[-1], before))
        return answer

    guest_module.parse_response = keep_raw  # type: ignore[assignment]
    GuestPool.step = step  # type: ignore[method-assign]
    try:
        for n in range(games):
            played.append([])
            play_game(pool, ["random"] * SEATS[game], n + 1)
    finally:
        guest_module.parse_response = parse  # type: ignore[assignment]
        GuestPool.step = original_step  # type: ignore[method-assign]
        pool.close()
    return [moves for moves in played if moves]


Played = list[list[tuple[dict[str, Any], bytes, bytes]]]


def per_move_us(played: Played, seats: int, rounds: int = 5) -> dict[str, float]:
    """Best-of-``rounds`` µs per move of each check, each game replayed on one table as a match does."""
    count = sum(len(moves) for moves in played)

    def replay(check: Any) -> list[float]:
        took = []
        for moves in played:
            table = Table.restore(moves[0][2])
            gate = Gate(list(range(1, seats + 1)))
            for answer, _, _ in moves:
                started = time.perf_counter()
                check(gate, answer, table)
                took.append(time.perf_counter() - started)
                table.apply(answer["patches"])
        return took

    def gate_step(gate: Gate, answer: dict[str, Any], table: Table) -> None:
        gate.state_bytes = 0
        gate.check_step(answer, table)

    def table_check(gate: Gate, answer: dict[str, Any], table: Table) -> None:
        table.check(answer["patches"])

    def dup_keys() -> list[float]:
        took = []
        for moves in played:
            for answer, raw, _ in moves:
                started = time.perf_counter()
                has_duplicate_keys(raw, answer)
                took.append(time.perf_counter() - started)
        return took

    runs = {
        "gate+table.check": lambda: replay(gate_step),
        "table.check": lambda: replay(table_check),
        "dup keys": dup_keys,
    }
    # The best of ``rounds`` for each move, summed: a busy machine's preemptions drop out.
    best = {}
    for name, run in runs.items():
        per_move = [min(times) for times in zip(*(run() for _ in range(rounds)))]
        best[name] = sum(per_move) / count * 1e6
    best["gate"] = best["gate+table.check"] - best["table.check"]
    moves = [m for game in played for m in game]
    best["fast dup path"] = sum(orjson.dumps(a) == raw for a, raw, _ in moves) / len(moves) * 100
    best["moves"] = count
    return best


def depth_ceiling() -> None:
    """The nesting (objects, arrays) at which a piece's public_state value stops fitting a MatchView."""
    from tablehost.api._pb import tablehost_pb2 as pb
    from tablehost.api.convert import view_to_proto
    from tablehost.match import MatchView

    def nest(depth: int, as_object: bool) -> Any:
        value: Any = 1
        for _ in range(depth):
            value = {"k": value} if as_object else [value]
        return value

    for as_object in (True, False):
        for depth in range(1, 200):
            piece = {
                "public_kind": "x",
                "public_state": {"v": nest(depth, as_object)},
                "private_kind": None,
                "private_state": {},
                "owner": None,
            }
            state = {
                "active_player_ids": [1],
                "players": [],
                "meta_data": {},
                "log": [],
                "spaces": [
                    {
                        "space_id": "a",
                        "kind": "",
                        "owner": None,
                        "arrangement": "ordered",
                        "public_state": {},
                        "private_state": {},
                        "pieces": [piece],
                    }
                ],
            }
            view = MatchView(state, [], {}, [1], False, 0)
            try:
                pb.MatchView.FromString(view_to_proto("m", 1, view, []).SerializeToString())
            except Exception as exc:  # noqa: BLE001 - whatever protobuf raises is the answer
                kind = "objects" if as_object else "arrays"
                print(f"a value of {depth} nested {kind} fails: {type(exc).__name__}: {str(exc)[:80]}")
                break


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", default=["reversi"])
    parser.add_argument("--games", dest="count", type=int, default=20, help="random games to record per game")
    parser.add_argument("--depth", action="store_true", help="measure the protobuf nesting ceiling instead")
    args = parser.parse_args()
    logs.configure(level="warning")
    if args.depth:
        depth_ceiling()
        return
    for game in args.games:
        cost = per_move_us(collect(game, args.count), SEATS[game])
        print(
            f"{game:12} {cost['moves']:6.0f} moves  gate {cost['gate']:6.2f} µs/move  "
            f"(+ table.check {cost['table.check']:5.2f})  dup keys {cost['dup keys']:5.2f} µs/move  "
            f"({cost['fast dup path']:.0f}% on the fast path)"
        )


if __name__ == "__main__":
    main()
