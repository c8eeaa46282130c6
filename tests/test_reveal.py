"""What counts as a reveal for undo (reveal.py), patch by patch."""

from __future__ import annotations

from typing import Any

import pytest

from tablehost.reveal import patch_reveals
from tablehost.table import Table


def table() -> Table:
    hidden = {"public_kind": "back", "private_kind": "ace"}
    return Table(
        {
            "active_player_ids": [1],
            "players": [{"player_id": 1, "username": "a", "color": ""}, {"player_id": 2, "username": "b", "color": ""}],
            "spaces": [
                {"space_id": "deck", "kind": "deck", "arrangement": "collection", "pieces": [hidden, {"public_kind": "x"}]},
                {"space_id": "hand-1", "kind": "hand", "owner": 1, "pieces": [hidden]},
                {"space_id": "stage-1", "kind": "stage", "owner": 1},
                {"space_id": "hand-2", "kind": "hand", "owner": 2},
                {"space_id": "board", "kind": "board", "pieces": [{"public_kind": "x"}]},
            ],
        }
    )


@pytest.mark.parametrize(
    ("patch", "reveals"),
    [
        ({"op": "move_piece", "from": "deck", "index": 0, "to": "hand-1"}, True),  # a draw
        ({"op": "move_piece", "from": "deck", "index": 1, "to": "hand-1"}, False),  # nothing hidden on it
        ({"op": "move_piece", "from": "hand-1", "index": 0, "to": "stage-1"}, False),  # same viewer
        ({"op": "move_piece", "from": "hand-1", "index": 0, "to": "hand-2"}, True),  # given to player 2
        ({"op": "move_piece", "from": "hand-1", "index": 0, "to": "board"}, False),  # hidden from all
        ({"op": "set_public_kind", "space_id": "deck", "index": 0, "kind": "ace"}, True),  # turned face up
        ({"op": "set_public_kind", "space_id": "board", "index": 0, "kind": "y"}, False),
        ({"op": "set_piece_owner", "space_id": "deck", "index": 0, "owner": 2}, True),
        ({"op": "set_piece_owner", "space_id": "hand-1", "index": 0, "owner": 1}, False),
        ({"op": "set_space_owner", "space_id": "deck", "owner": 2}, True),
        ({"op": "set_space_owner", "space_id": "board", "owner": 2}, False),
        ({"op": "set_private_kind", "space_id": "hand-1", "index": 0, "kind": "king"}, True),
        ({"op": "set_private_kind", "space_id": "deck", "index": 0, "kind": "king"}, False),  # nobody views it
        ({"op": "set_piece_private_state", "space_id": "hand-1", "index": 0, "key": "k", "value": None}, False),
        ({"op": "add_piece", "space_id": "hand-2", "piece": {"public_kind": "back", "private_kind": "q"}}, True),
        ({"op": "add_piece", "space_id": "deck", "piece": {"public_kind": "back", "private_kind": "q"}}, False),
        ({"op": "set_space_private_state", "space_id": "hand-1", "key": "k", "value": 1}, True),
        ({"op": "set_player_private_state", "player_id": 1, "key": "k", "value": 1}, True),
        ({"op": "set_player_private_state", "player_id": 1, "key": "k", "value": None}, False),
        ({"op": "log", "entry": {"text": "drew", "for_player": {"1": "you drew the ace"}}}, True),
        ({"op": "log", "entry": {"text": "drew"}}, False),
        ({"op": "set_active_players", "player_ids": [2]}, False),
        ({"op": "permute", "space_id": "deck", "order": [1, 0]}, False),
    ],
)
def test_patch_reveals(patch: dict[str, Any], reveals: bool) -> None:
    assert patch_reveals(table(), patch) is reveals
