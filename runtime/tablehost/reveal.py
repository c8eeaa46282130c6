"""Did a move show anyone something that was hidden from them? (decides undo, platform rule 3)

The games' own rule is only "do not allow undo on a move that reveals something"; the host
enforces it as well. Rather than judging patch ops one by one, the answer is derived from
the viewer rule itself (a piece's viewer is its owner, else its space's owner, else
nobody; DESIGN.md "Views"), comparing the state before the move with the state after it:

a move **reveals** when some viewer (a seated player, or the spectator) sees a private
part after it that it did not see before, or when a piece that hides something shows a
public face (``public_kind``, ``public_state``) that no such piece showed before (a card
turned face up).

The private parts a viewer sees are counted as a multiset of
``(public_kind, private_kind, private_state)`` of the pieces it views, the private state
entries of the spaces it owns, its own private state entries, and the log lines written for
it (``for_player``). So a draw into a hand, a piece given to a player, an owner set to none
(the space's owner now sees it), a move into an owned space, a space changing hands, a new
private value, a private log line all reveal; a move among one viewer's own spaces, a
shuffle, a removal, or any change nobody can see more of does not. Intermediate states
inside one move are never shown to anyone, so only before and after count.

Cost: O(state) for each undoable move (others are never judged).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import orjson

from tablehost.types import PlayerId, StateDict, Viewer

__all__ = ["has_private_part", "hidden_faces", "private_parts", "reveals", "viewer_of"]

Piece = dict[str, Any]
Space = dict[str, Any]


def has_private_part(piece: Piece) -> bool:
    """True when the piece hides anything: a private kind or a non-empty private state."""
    return piece.get("private_kind") is not None or bool(piece.get("private_state"))


def viewer_of(space: Space, piece: Piece) -> int | None:
    """The one viewer of a piece: its owner if it has one, else its space's owner, else nobody."""
    owner = piece.get("owner")
    return owner if owner is not None else space.get("owner")


def _canon(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def private_parts(state: StateDict, viewer: Viewer) -> Counter[tuple[Any, ...]]:
    """Every private part ``viewer`` sees in a normalised ``state``, as a multiset.

    Args:
        state: a normalised State.
        viewer: a player id, or None for the spectator (who sees no private part).

    Returns:
        A Counter of ``("piece", public_kind, private_kind, private_state JSON)``,
        ``("space", space_id, key, value JSON)``, ``("player", key, value JSON)`` and
        ``("log", line)`` items.
    """
    seen: Counter[tuple[Any, ...]] = Counter()
    if viewer is None:
        return seen
    for space in state["spaces"]:
        owner = space["owner"]
        if owner == viewer:
            for key, value in space["private_state"].items():
                seen[("space", space["space_id"], key, _canon(value))] += 1
        for piece in space["pieces"]:
            piece_viewer = piece["owner"] if piece["owner"] is not None else owner
            if piece_viewer == viewer and has_private_part(piece):
                seen[("piece", piece["public_kind"], piece["private_kind"], _canon(piece["private_state"]))] += 1
    for player in state["players"]:
        if player["player_id"] == viewer:
            for key, value in player["private_state"].items():
                seen[("player", key, _canon(value))] += 1
    own = str(viewer)
    for entry in state["log"]:
        line = entry["for_player"].get(own)
        if line is not None:
            seen[("log", line)] += 1
    return seen


def hidden_faces(state: StateDict) -> set[tuple[str, bytes]]:
    """The public faces ``(public_kind, public_state JSON)`` of every piece that hides something."""
    return {
        (piece["public_kind"], _canon(piece["public_state"]))
        for space in state["spaces"]
        for piece in space["pieces"]
        if has_private_part(piece)
    }


def reveals(before: StateDict, after: StateDict, player_ids: Iterable[PlayerId]) -> bool:
    """True when going from ``before`` to ``after`` shows someone something hidden (module docstring).

    Args:
        before, after: normalised States of one match (not modified).
        player_ids: the seated players (every possible viewer besides the spectator).
    """
    if hidden_faces(after) - hidden_faces(before):
        return True
    for viewer in player_ids:
        gained = private_parts(after, viewer)
        gained.subtract(private_parts(before, viewer))
        if any(count > 0 for count in gained.values()):
            return True
    return False
