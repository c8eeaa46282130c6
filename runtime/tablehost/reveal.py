"""Did a move show anyone something that was hidden from them? (decides undo, platform rule 3).

The games' own rule is only "do not allow undo on a move that reveals something"; the host
enforces it as well, conservatively: a move reveals when, for some player, the private facts
they can see afterwards include one they could not see before (a piece's private kind or
private state coming into their view, a new key or value in their space's or their own private
state), when it writes a log line for one player only, or when it changes the public kind of a
piece that hides a private kind (turning a card face up).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from tablehost.table import apply_patch, normalize_state
from tablehost.types import PlayerId, StateDict


def private_facts(state: StateDict, player_id: PlayerId) -> Counter[bytes]:
    """Return the multiset of private facts ``player_id`` can see in ``state``.

    A fact is the canonical JSON of a private part: ``(private_kind, private_state)`` of each
    piece they view (its owner if any, else its space's owner), each key of the private state
    of spaces they own, and each key of their own private state.
    """
    facts: Counter[bytes] = Counter()
    for space in state["spaces"]:
        space_owner = space.get("owner")
        if space_owner == player_id:
            for key, value in space.get("private_state", {}).items():
                facts[orjson.dumps(["space", space["space_id"], key, value], option=orjson.OPT_SORT_KEYS)] += 1
        for piece in space["pieces"]:
            owner = piece.get("owner")
            viewer = owner if owner is not None else space_owner
            if viewer != player_id:
                continue
            kind, private = piece.get("private_kind"), piece.get("private_state") or {}
            if kind is not None or private:
                facts[orjson.dumps(["piece", kind, private], option=orjson.OPT_SORT_KEYS)] += 1
    for player in state["players"]:
        if player["player_id"] == player_id:
            for key, value in player.get("private_state", {}).items():
                facts[orjson.dumps(["player", key, value], option=orjson.OPT_SORT_KEYS)] += 1
    return facts


def reveals_anything(before: StateDict, after: StateDict, patches: list[dict[str, Any]]) -> bool:
    """True when the move that turned ``before`` into ``after`` with ``patches`` revealed anything.

    Args:
        before: the state the move started from (normalised; not modified).
        after: the state it produced.
        patches: the move's patches, in order.
    """
    for patch in patches:
        if patch["op"] == "log" and patch["entry"].get("for_player"):
            return True
    if any(p["op"] == "set_public_kind" for p in patches) and _turns_up_hidden_piece(before, patches):
        return True
    for player in after["players"]:
        pid = player["player_id"]
        if private_facts(after, pid) - private_facts(before, pid):
            return True
    return False


def _turns_up_hidden_piece(before: StateDict, patches: list[dict[str, Any]]) -> bool:
    state = normalize_state(orjson.loads(orjson.dumps(before)))
    index = {space["space_id"]: space for space in state["spaces"]}
    for patch in patches:
        if patch["op"] == "set_public_kind":
            piece = index[patch["space_id"]]["pieces"][patch["index"]]
            if piece.get("private_kind") is not None and piece["public_kind"] != patch["kind"]:
                return True
        apply_patch(state, patch)
    return False
