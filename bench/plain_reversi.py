"""A plain hand-written Python reversi: the yardstick host-driven play is compared against.

Nothing clever on purpose (no bitboards, no tables): a 64-square list, every empty square
tried in the eight directions on every move, the way a person would first write it. Same
rules as sample_games/reversi (standard reversi: a placement must turn over at least one
disc; a player without one passes; the game ends when neither can place) and the same
policy as the ``random`` bot (uniform over the legal placements).

Usage (as a library): ``random_game(seed) -> moves played`` (a pass is not a move).
"""

from __future__ import annotations

import random

EMPTY, DARK, LIGHT = 0, 1, -1
_STEPS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]


def start_board() -> list[int]:
    """The opening position: 64 squares row by row, d4/e5 light and e4/d5 dark."""
    board = [EMPTY] * 64
    board[3 * 8 + 3] = board[4 * 8 + 4] = LIGHT
    board[3 * 8 + 4] = board[4 * 8 + 3] = DARK
    return board


def turned_over(board: list[int], square: int, player: int) -> list[int]:
    """The squares a disc of ``player`` placed on empty ``square`` (0..63) turns over (may be empty)."""
    row, col = divmod(square, 8)
    turned: list[int] = []
    for dr, dc in _STEPS:
        r, c = row + dr, col + dc
        run: list[int] = []
        while 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == -player:
            run.append(r * 8 + c)
            r, c = r + dr, c + dc
        if run and 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == player:
            turned.extend(run)
    return turned


def legal_moves(board: list[int], player: int) -> list[tuple[int, list[int]]]:
    """``(square, squares turned over)`` of every legal placement of ``player``, squares ascending."""
    moves = []
    for square in range(64):
        if board[square] == EMPTY:
            turned = turned_over(board, square, player)
            if turned:
                moves.append((square, turned))
    return moves


def random_game(seed: int) -> int:
    """Play one game with uniformly random placements for both sides; return the placements made."""
    rng = random.Random(seed)
    board = start_board()
    player, placed, passes = DARK, 0, 0
    while passes < 2:
        moves = legal_moves(board, player)
        if moves:
            square, turned = moves[rng.randrange(len(moves))]
            board[square] = player
            for other in turned:
                board[other] = player
            placed += 1
            passes = 0
        else:
            passes += 1
        player = -player
    return placed
