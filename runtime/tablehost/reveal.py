"""Does a patch show anyone something that was hidden from them? (decides undo, platform rule 3)

The games' own rule is only "do not allow undo on a move that reveals something"; the host
enforces it as well. Each patch of an undoable move is judged against the state right before
it, so the check costs O(patches), not O(state). It is conservative: a patch reveals when
it brings private information into some player's sight, namely

- a piece with a private part (``private_kind`` or ``private_state``) gains a viewer: it is
  added, moved or given to a player who did not view it, or its space gets a new owner;
- a viewed piece gets a new private kind or private state value;
- a piece that hides a private kind changes its public kind (a card turned face up);
- an owned space's private state, or a player's private state, gets a value;
- a log line is written for one player only (``for_player``).

Removing a key (value null), moving pieces among the same viewer's spaces, and every public
change that exposes no hidden piece reveal nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tablehost.table import Table
from tablehost.types import PatchDict

Piece = dict[str, Any]
Space = dict[str, Any]


def has_private_part(piece: Piece) -> bool:
    """True when the piece hides anything: a private kind or a non-empty private state."""
    return piece.get("private_kind") is not None or bool(piece.get("private_state"))


def viewer_of(space: Space, piece: Piece) -> int | None:
    """The one viewer of a piece: its owner if it has one, else its space's owner, else nobody."""
    owner = piece.get("owner")
    return owner if owner is not None else space.get("owner")


def patch_reveals(table: Table, patch: PatchDict) -> bool:
    """True when ``patch``, applied to ``table`` as it is now, reveals something to someone.

    Args:
        table: the state right before the patch (not modified).
        patch: one Patch dict of docs/abi.md (assumed valid; :meth:`Table.apply_patch` checks).
    """
    judge = _JUDGES.get(patch["op"])
    return judge is not None and judge(table, patch)


def _added(table: Table, patch: PatchDict) -> bool:
    piece = patch["piece"]
    return has_private_part(piece) and viewer_of(table.space(patch["space_id"]), piece) is not None


def _moved(table: Table, patch: PatchDict) -> bool:
    source = table.space(patch["from"])
    piece = source["pieces"][patch["index"]]
    if not has_private_part(piece):
        return False
    after = viewer_of(table.space(patch["to"]), piece)
    return after is not None and after != viewer_of(source, piece)


def _turned_up(table: Table, patch: PatchDict) -> bool:
    piece = table.space(patch["space_id"])["pieces"][patch["index"]]
    return piece.get("private_kind") is not None and piece["public_kind"] != patch["kind"]


def _private_written(table: Table, patch: PatchDict) -> bool:
    space = table.space(patch["space_id"])
    value = patch.get("kind") if patch["op"] == "set_private_kind" else patch.get("value")
    return value is not None and viewer_of(space, space["pieces"][patch["index"]]) is not None


def _piece_given(table: Table, patch: PatchDict) -> bool:
    space = table.space(patch["space_id"])
    piece = space["pieces"][patch["index"]]
    owner = patch.get("owner")
    return has_private_part(piece) and owner is not None and owner != viewer_of(space, piece)


def _space_given(table: Table, patch: PatchDict) -> bool:
    space = table.space(patch["space_id"])
    owner = patch.get("owner")
    if owner is None or owner == space.get("owner"):
        return False
    unowned = (p for p in space["pieces"] if p.get("owner") is None)
    return bool(space.get("private_state")) or any(has_private_part(p) for p in unowned)


def _space_private(table: Table, patch: PatchDict) -> bool:
    return patch.get("value") is not None and table.space(patch["space_id"]).get("owner") is not None


def _player_private(table: Table, patch: PatchDict) -> bool:
    del table
    return patch.get("value") is not None


def _private_log(table: Table, patch: PatchDict) -> bool:
    del table
    return bool(patch["entry"].get("for_player"))


_JUDGES: dict[str, Callable[[Table, PatchDict], bool]] = {
    "add_piece": _added,
    "insert_piece": _added,
    "move_piece": _moved,
    "set_public_kind": _turned_up,
    "set_private_kind": _private_written,
    "set_piece_private_state": _private_written,
    "set_piece_owner": _piece_given,
    "set_space_owner": _space_given,
    "set_space_private_state": _space_private,
    "set_player_private_state": _player_private,
    "log": _private_log,
}
