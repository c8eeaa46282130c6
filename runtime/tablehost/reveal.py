"""Did a move show anyone something that was hidden from them? (decides undo, platform rule 3)

The games' own rule is only "do not allow undo on a move that reveals something"; the host
enforces it as well. Rather than judging patch ops one by one, the answer is derived from
the viewer rule itself (a piece's viewer is its owner, else its space's owner, else
nobody; docs/architecture.md "Views"), comparing the state before the move with the state after it:

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

Cost: :func:`reveals` is O(state); a match judges each undoable move (others are never
judged) with :class:`RevealCheck` instead, which reads only what the move's patches touch
(their spaces, players and log lines) and gives the same answer: the private parts of
everything else are equal before and after, so they cancel out of the multiset difference.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from tablehost import table as table_module
from tablehost.types import PatchDict, PlayerId, StateDict, Viewer

__all__ = ["RevealCheck", "has_private_part", "hidden_faces", "private_parts", "reveals", "viewer_of"]

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
    _count_parts(seen, viewer, state["spaces"], state["players"], state["log"])
    return seen


def _count_parts(
    seen: Counter[tuple[Any, ...]],
    viewer: PlayerId,
    spaces: Iterable[Space],
    players: Iterable[dict[str, Any]],
    log: Iterable[dict[str, Any]],
) -> None:
    """Add to ``seen`` the private parts ``viewer`` sees in these spaces, players and log entries."""
    for space in spaces:
        owner = space["owner"]
        if owner == viewer:
            for key, value in space["private_state"].items():
                seen[("space", space["space_id"], key, _canon(value))] += 1
        for piece in space["pieces"]:
            piece_viewer = piece["owner"] if piece["owner"] is not None else owner
            if piece_viewer == viewer and has_private_part(piece):
                seen[("piece", piece["public_kind"], piece["private_kind"], _canon(piece["private_state"]))] += 1
    for player in players:
        if player["player_id"] == viewer:
            for key, value in player["private_state"].items():
                seen[("player", key, _canon(value))] += 1
    own = str(viewer)
    for entry in log:
        line = entry["for_player"].get(own)
        if line is not None:
            seen[("log", line)] += 1


def hidden_faces(state: StateDict) -> set[tuple[str, bytes]]:
    """The public faces ``(public_kind, public_state JSON)`` of every piece that hides something."""
    return _faces(state["spaces"])


def _faces(spaces: Iterable[Space]) -> set[tuple[str, bytes]]:
    return {
        (piece["public_kind"], _canon(piece["public_state"]))
        for space in spaces
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


_SPACE_FIELDS = {
    "add_piece": ("space_id",),
    "insert_piece": ("space_id",),
    "remove_piece": ("space_id",),
    "move_piece": ("from", "to"),
    "permute": ("space_id",),
    "set_public_kind": ("space_id",),
    "set_private_kind": ("space_id",),
    "set_piece_owner": ("space_id",),
    "set_piece_public_state": ("space_id",),
    "set_piece_private_state": ("space_id",),
    "set_space_owner": ("space_id",),
    "set_space_public_state": ("space_id",),
    "set_space_private_state": ("space_id",),
}
"""Patch ops that change a space, and the fields naming the spaces they change."""
_PLAYER_OPS = frozenset(("set_player_public_state", "set_player_private_state"))
_NO_PRIVATE_OPS = frozenset(("set_active_players", "set_meta"))
"""Ops that change nothing any viewer rule reads."""


def _parts_by_viewer(
    viewers: Sequence[PlayerId],
    spaces: Iterable[Space],
    players: Iterable[dict[str, Any]],
    log: Iterable[dict[str, Any]],
) -> dict[PlayerId, list[tuple[Any, ...]]]:
    """The private parts each of ``viewers`` sees in these spaces, players and log entries, in
    one pass (the items of :func:`private_parts`; viewers who see none are left out)."""
    found: dict[PlayerId, list[tuple[Any, ...]]] = {}
    seated = set(viewers)
    for space in spaces:
        owner = space["owner"]
        if owner in seated and space["private_state"]:
            parts = found.setdefault(owner, [])
            for key, value in space["private_state"].items():
                parts.append(("space", space["space_id"], key, _canon(value)))
        for piece in space["pieces"]:
            if piece["private_kind"] is None and not piece["private_state"]:
                continue
            viewer = piece["owner"] if piece["owner"] is not None else owner
            if viewer in seated:
                found.setdefault(viewer, []).append(
                    ("piece", piece["public_kind"], piece["private_kind"], _canon(piece["private_state"]))
                )
    for player in players:
        viewer = player["player_id"]
        if viewer in seated and player["private_state"]:
            parts = found.setdefault(viewer, [])
            for key, value in player["private_state"].items():
                parts.append(("player", key, _canon(value)))
    if log:
        by_key = {str(viewer): viewer for viewer in seated}
        for entry in log:
            for key, line in entry["for_player"].items():
                viewer = by_key.get(key)
                if viewer is not None:
                    found.setdefault(viewer, []).append(("log", line))
    return found


class RevealCheck:
    """:func:`reveals` for one patch list, reading only what the patches touch.

    Build it on the table *before* the patches apply (:meth:`before`), apply them, then ask
    :meth:`revealed` of the table after. Equal to ``reveals(before, after, player_ids)``:

    - private parts (a multiset per viewer): untouched spaces and players hold the same parts
      before and after, and the log loses only its oldest entries (:data:`~tablehost.table.LOG_CAP`)
      and gains the appended ones, so the difference is (touched after + appended lines) minus
      (touched before + dropped lines);
    - hidden faces (a set): a face of a touched space after the move is new only if no touched
      space showed it before and no untouched space shows it (untouched spaces did not change).
    """

    __slots__ = ("_faces", "_log_added", "_parts", "_player_ids", "_players", "_spaces")

    def __init__(self, spaces: list[str], players: list[int], log_added: int, player_ids: Sequence[PlayerId]) -> None:
        self._spaces = spaces
        self._players = players
        self._log_added = log_added
        self._player_ids = player_ids
        self._faces: set[tuple[str, bytes]] = set()
        self._parts: dict[PlayerId, list[tuple[Any, ...]]] = {}

    @classmethod
    def before(cls, table: Any, patches: Iterable[PatchDict], player_ids: Sequence[PlayerId]) -> RevealCheck | None:
        """The check of ``patches``, with what they may change read from ``table`` now.

        Args:
            table: the match's table before the patches (a :class:`~tablehost.table.Table`; read only).
            patches: the patches about to apply.
            player_ids: the seated players (every viewer but the spectator, who sees no private part).

        Returns:
            The check; None when a patch is not one it can read (unknown op, missing space): the
            caller then compares whole states (and the apply refuses a patch that does not fit).
        """
        spaces: dict[str, None] = {}
        players: dict[int, None] = {}
        log_added = 0
        try:
            for patch in patches:
                op = patch["op"]
                fields = _SPACE_FIELDS.get(op)
                if fields is not None:
                    for name in fields:
                        spaces[patch[name]] = None
                elif op == "log":
                    log_added += 1
                elif op in _PLAYER_OPS:
                    players[patch["player_id"]] = None
                elif op not in _NO_PRIVATE_OPS:
                    return None
            touched = [table.space(space_id) for space_id in spaces]
            people = [table.player(player_id) for player_id in players]
        except (KeyError, TypeError):
            return None
        check = cls(list(spaces), list(players), log_added, list(player_ids))
        log = table.state["log"]
        dropped = min(len(log), max(0, len(log) + log_added - table_module.LOG_CAP))
        check._faces = _faces(touched)
        check._parts = _parts_by_viewer(check._player_ids, touched, people, log[:dropped])
        return check

    def revealed(self, table: Any) -> bool:
        """Whether the patches, now applied to ``table``, showed someone something hidden."""
        touched = [table.space(space_id) for space_id in self._spaces]
        faces = _faces(touched) - self._faces
        if faces:
            named = set(self._spaces)
            if faces - _faces(space for space in table.state["spaces"] if space["space_id"] not in named):
                return True
        people = [table.player(player_id) for player_id in self._players]
        log = table.state["log"]
        appended = log[len(log) - min(self._log_added, len(log)):] if self._log_added else []
        for viewer, parts in _parts_by_viewer(self._player_ids, touched, people, appended).items():
            earlier = self._parts.get(viewer)
            if not earlier or Counter(parts) - Counter(earlier):  # a part seen more often now
                return True
        return False
