"""Micro-benchmark of host-side patch application (runtime/tablehost/table.py).

Prints microseconds per patch for
- a typical reversi move (as sample_games/reversi writes it): a disc added, three
  turned, active players, a log line;
- a card-game move on a ~6 KB state: a card moved from a hand to a trick (ordered
  to ordered), a piece state set, a private log line, active players;
and, for reference, the cost of the full-copy alternative (``Table.copy``).

Run: ``PYTHONPATH=runtime python3 bench/table_patch.py``
"""

from __future__ import annotations

import timeit
from typing import Any

from tablehost.table import Table


def reversi_state() -> dict[str, Any]:
    """An 8x8 board of one space per square, with the four starting discs."""
    spaces = [{"space_id": f"{c}{r}", "kind": "square"} for r in range(1, 9) for c in "abcdefgh"]
    for name, colour in (("d4", "white"), ("e5", "white"), ("d5", "black"), ("e4", "black")):
        next(s for s in spaces if s["space_id"] == name)["pieces"] = [{"public_kind": colour}]
    return {
        "active_player_ids": [1],
        "players": [{"player_id": 1, "username": "a"}, {"player_id": 2, "username": "b"}],
        "spaces": spaces,
    }


def reversi_move(turn: int) -> list[dict[str, Any]]:
    colour = "black" if turn % 2 == 0 else "white"
    square = f"{'abcdefgh'[turn % 8]}{1 + turn // 8 % 8}"
    return [
        {"op": "add_piece", "space_id": square, "piece": {"public_kind": colour}},
        {"op": "set_public_kind", "space_id": "d4", "index": 0, "kind": colour},
        {"op": "set_public_kind", "space_id": "e5", "index": 0, "kind": colour},
        {"op": "set_public_kind", "space_id": "d5", "index": 0, "kind": colour},
        {"op": "set_active_players", "player_ids": [2 - turn % 2]},
        {"op": "log", "entry": {"text": f"player {1 + turn % 2} played c4"}},
    ]


def card_state() -> dict[str, Any]:
    """Four hands of 13 cards with private kinds and states, a trick, a score board."""
    suits, ranks = "CDHS", "23456789TJQKA"
    hands = []
    for seat in range(4):
        cards = [
            {
                "public_kind": "card",
                "private_kind": f"{ranks[i]}{suits[seat]}",
                "private_state": {"suit": suits[seat], "rank": i + 2},
                "owner": seat + 1,
            }
            for i in range(13)
        ]
        hands.append(
            {
                "space_id": f"hand-{seat + 1}",
                "kind": "hand",
                "owner": seat + 1,
                "arrangement": "collection",
                "pieces": cards,
            }
        )
    spaces = hands + [
        {"space_id": "trick", "kind": "trick", "pieces": []},
        {"space_id": "taken", "kind": "pile", "arrangement": "collection", "pieces": []},
    ]
    players = [
        {
            "player_id": p,
            "username": f"player{p}",
            "color": "#123456",
            "public_state": {"points": 0, "round_points": 0},
            "private_state": {"passed": []},
        }
        for p in range(1, 5)
    ]
    log = [{"text": f"move {i}", "for_player": {"1": f"you saw card {i}"}} for i in range(4)]
    return {
        "active_player_ids": [1],
        "players": players,
        "spaces": spaces,
        "meta_data": {"round": 1, "passing": "left", "hearts_broken": False},
        "log": log,
    }


def card_move(turn: int) -> list[dict[str, Any]]:
    """Play a card into the trick and send it back (so the state stays the same size)."""
    seat = turn % 4 + 1
    return [
        {"op": "move_piece", "from": f"hand-{seat}", "index": 3, "to": "trick"},
        {"op": "set_piece_public_state", "space_id": "trick", "index": 0, "key": "led", "value": True},
        {"op": "set_public_kind", "space_id": "trick", "index": 0, "kind": "card"},
        {"op": "move_piece", "from": "trick", "index": 0, "to": f"hand-{seat}", "to_index": 3},
        {"op": "set_active_players", "player_ids": [seat % 4 + 1]},
        {"op": "log", "entry": {"text": "a card was played", "for_player": {str(seat): "you played"}}},
    ]


def per_patch_us(table: Table, moves: list[list[dict[str, Any]]], repeat: int) -> float:
    patches = sum(len(m) for m in moves)

    def run() -> None:
        for move in moves:
            table.apply(move)

    best = min(timeit.repeat(run, number=repeat, repeat=5))
    return best / (repeat * patches) * 1e6


def main() -> None:
    reversi = Table(reversi_state())
    reversi_moves = [reversi_move(t) for t in range(60)]
    print(
        f"reversi move ({len(reversi_moves[0])} patches): "
        f"{per_patch_us(reversi, reversi_moves, 50):.2f} µs/patch"
    )

    cards = Table(card_state())
    size = len(cards.snapshot())
    card_moves = [card_move(t) for t in range(52)]
    print(
        f"card game, {size / 1024:.1f} KB state ({len(card_moves[0])} patches/move): "
        f"{per_patch_us(cards, card_moves, 50):.2f} µs/patch"
    )

    copy_us = min(timeit.repeat(cards.copy, number=1000, repeat=5)) / 1000 * 1e6
    print(f"for reference, a deep copy of the card state: {copy_us:.1f} µs")


if __name__ == "__main__":
    main()
