"""Per-viewer views of a table state, and actions in view addresses (docs/architecture.md "Views").

One rule decides all hidden information: a piece's *viewer* is its owner if it
has one, else its space's owner, else nobody. A viewer is a player id, or
``None`` for a spectator, who sees only public parts.

View addresses: in an ``ordered`` space a piece keeps its index (hidden pieces
are listed in place with only their public part). In a ``collection`` space the
``v`` pieces the viewer may see come first, in state order, at view indexes
``0..v-1``; the hidden pieces follow as groups of equal public parts
(``public_kind``, ``public_state``, ``owner``) sorted by canonical JSON, group
``g`` at view index ``v+g``. Neither the view nor the actions listed in it depend
on the order of the hidden pieces, so no order leaks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from .errors import NotOffered
from .shown import shown_json
from .table import canonical_json
from .types import ActionDict, AvailableActionDict, ScoresDict, StateDict, Viewer

__all__ = ["resolve_view_action", "view_actions", "view_state", "visible_scores"]


def _piece_viewer(piece: dict[str, Any], space: dict[str, Any]) -> int | None:
    owner: int | None = piece["owner"]
    return owner if owner is not None else space["owner"]


def _public_part(piece: dict[str, Any]) -> dict[str, Any]:
    return {
        "public_kind": piece["public_kind"],
        "public_state": piece["public_state"],
        "owner": piece["owner"],
    }


@dataclass(frozen=True)
class _Layout:
    """Where each piece of a collection space appears in one viewer's view.

    Attributes:
        visible: state indexes of the pieces the viewer may see, in state order.
        groups: one entry per group of hidden pieces, in view order:
            ``(public part, state indexes of its members in state order)``.
        view_index: view index of each state index.
    """

    visible: list[int]
    groups: list[tuple[dict[str, Any], list[int]]]
    view_index: list[int]


def _layout(space: dict[str, Any], viewer: Viewer) -> _Layout:
    pieces = space["pieces"]
    visible: list[int] = []
    hidden: dict[bytes, tuple[dict[str, Any], list[int]]] = {}
    for index, piece in enumerate(pieces):
        if viewer is not None and _piece_viewer(piece, space) == viewer:
            visible.append(index)
        else:
            public = _public_part(piece)
            hidden.setdefault(canonical_json(public), (public, []))[1].append(index)
    groups = [hidden[key] for key in sorted(hidden)]
    view_index = [0] * len(pieces)
    for rank, index in enumerate(visible):
        view_index[index] = rank
    for rank, (_, members) in enumerate(groups, start=len(visible)):
        for index in members:
            view_index[index] = rank
    return _Layout(visible, groups, view_index)


def _copy(value: Any) -> Any:
    """A deep copy, so a caller may change a view without touching the state."""
    return orjson.loads(orjson.dumps(value))


# ---------------------------------------------------------------------------
# The state as one viewer sees it
# ---------------------------------------------------------------------------


def _space_view(space: dict[str, Any], viewer: Viewer) -> dict[str, Any]:
    pieces = space["pieces"]
    if space["arrangement"] == "collection":
        layout = _layout(space, viewer)
        shown = [pieces[i] for i in layout.visible]
        shown += [{**public, "count": len(members)} for public, members in layout.groups]
    else:
        shown = [
            piece if viewer is not None and _piece_viewer(piece, space) == viewer else _public_part(piece)
            for piece in pieces
        ]
    owns = viewer is not None and space["owner"] == viewer
    return {
        "space_id": space["space_id"],
        "kind": space["kind"],
        "owner": space["owner"],
        "arrangement": space["arrangement"],
        "public_state": space["public_state"],
        "private_state": space["private_state"] if owns else {},
        "pieces": shown,
    }


def view_state(state: StateDict, viewer: Viewer) -> dict[str, Any]:
    """The state with everything ``viewer`` may not see removed.

    Args:
        state: a normalised State (see :func:`tablehost.table.normalize_state`).
        viewer: a player id, or ``None`` for a spectator.

    Returns:
        A new dict of the State shape sharing nothing with ``state``:

        - ``players``: each player's ``private_state`` only for that player, ``{}`` otherwise;
        - ``spaces``: a space's ``private_state`` only for its owner, ``{}`` otherwise;
          ``ordered`` spaces list every piece in order, a piece the viewer may not see
          as only ``{"public_kind", "public_state", "owner"}``; ``collection`` spaces
          list the visible pieces (full form, state order) then one
          ``{"public_kind", "public_state", "owner", "count"}`` per group of hidden pieces,
          groups sorted by the canonical JSON of their public part;
        - ``log``: ``[{"text": ...}]``, each the viewer's own ``for_player`` line if
          there is one, else the common text;
        - ``active_player_ids`` and ``meta_data`` as they are.
    """
    own_key = None if viewer is None else str(viewer)
    view = {
        "active_player_ids": state["active_player_ids"],
        "players": [
            {
                "player_id": player["player_id"],
                "color": player["color"],
                "username": player["username"],
                "public_state": player["public_state"],
                "private_state": player["private_state"]
                if viewer is not None and player["player_id"] == viewer
                else {},
            }
            for player in state["players"]
        ],
        "spaces": [_space_view(space, viewer) for space in state["spaces"]],
        "meta_data": state["meta_data"],
        "log": [{"text": entry["for_player"].get(own_key, entry["text"])} for entry in state["log"]],
    }
    copied: dict[str, Any] = _copy(view)
    return copied


def visible_scores(scores: ScoresDict, viewer: Viewer) -> ScoresDict:
    """Scores with private points kept only for the viewer themself.

    Args:
        scores: ``{"<player id>": {"public_points": [float], "private_points": [float]}}``.
        viewer: a player id, or ``None`` for a spectator.

    Returns:
        A new dict of the same shape; every other player's ``private_points`` is ``[]``.
    """
    own_key = None if viewer is None else str(viewer)
    return {
        key: {
            "public_points": list(score.get("public_points", [])),
            "private_points": list(score.get("private_points", [])) if str(key) == own_key else [],
        }
        for key, score in scores.items()
    }


# ---------------------------------------------------------------------------
# Actions in view addresses
# ---------------------------------------------------------------------------


def _collection_click(
    action: ActionDict, spaces: dict[str, dict[str, Any]]
) -> tuple[dict[str, Any], int] | None:
    """The collection space and state index a piece_click names, or None for any other action."""
    if type(action) is not dict or action.get("type") != "piece_click":
        return None
    space_id = action.get("space_id")
    space = spaces.get(space_id) if type(space_id) is str else None
    if space is None or space["arrangement"] != "collection":
        return None
    return space, action.get("index")  # type: ignore[return-value]


def _hidden_label(space_id: str) -> str:
    return f"a hidden piece in {space_id}"


def view_actions(
    state: StateDict, viewer: Viewer, actions: list[AvailableActionDict]
) -> list[AvailableActionDict]:
    """The actions offered to ``viewer``, in view addresses.

    Piece clicks in ``ordered`` spaces, space clicks, buttons and any other action
    pass through unchanged. Piece clicks in a ``collection`` space are translated:
    a visible piece's click gets its view index (one view action per offered action);
    all offered clicks on hidden pieces of one group become ONE view action at the
    group's index, its ``label`` the common label if all agree, else
    ``"a hidden piece in <space_id>"``, its ``intent`` the common intent if all agree,
    else ``"choice"``. A collection's translated clicks are listed together, sorted
    by view index, where the first of them was offered, so neither true indexes nor
    the game's listing order of hidden pieces shows. A click on a collection index
    that holds no piece cannot be taken and is left out.

    Args:
        state: a normalised State.
        viewer: the player the actions were offered to (``None``: a spectator).
        actions: AvailableAction dicts ``{"action", "intent", "label"}`` in guest addresses.

    Returns:
        A new list of AvailableAction dicts in view addresses (sharing nothing with ``actions``).
    """
    spaces = {space["space_id"]: space for space in state["spaces"]}
    layouts: dict[str, _Layout] = {}
    # Per collection space: view index -> the offered (intent, label) pairs it stands for.
    blocks: dict[str, dict[int, list[tuple[str, str]]]] = {}
    visible_clicks: dict[str, list[tuple[int, AvailableActionDict]]] = {}
    listing: list[AvailableActionDict | str] = []  # a str marks where a space's block goes
    for offered in actions:
        click = _collection_click(offered["action"], spaces)
        if click is None:
            listing.append(offered)
            continue
        space, index = click
        space_id = space["space_id"]
        if type(index) is not int or not 0 <= index < len(space["pieces"]):
            continue
        layout = layouts.get(space_id)
        if layout is None:
            layout = layouts[space_id] = _layout(space, viewer)
        if space_id not in blocks:
            blocks[space_id], visible_clicks[space_id] = {}, []
            listing.append(space_id)
        view_index = layout.view_index[index]
        if view_index < len(layout.visible):
            translated = {**offered, "action": {**offered["action"], "index": view_index}}
            visible_clicks[space_id].append((view_index, translated))
        else:
            blocks[space_id].setdefault(view_index, []).append((offered["intent"], offered["label"]))
    result: list[AvailableActionDict] = []
    for entry in listing:
        if not isinstance(entry, str):
            result.append(entry)
            continue
        result.extend(a for _, a in sorted(visible_clicks[entry], key=lambda pair: pair[0]))
        for view_index, offers in sorted(blocks[entry].items()):
            intents = {intent for intent, _ in offers}
            labels = {label for _, label in offers}
            result.append(
                {
                    "action": {"type": "piece_click", "space_id": entry, "index": view_index},
                    "intent": intents.pop() if len(intents) == 1 else "choice",
                    "label": labels.pop() if len(labels) == 1 else _hidden_label(entry),
                }
            )
    copied: list[AvailableActionDict] = _copy(result)
    return copied


def resolve_view_action(
    state: StateDict,
    viewer: Viewer,
    view_action: ActionDict,
    offered: list[AvailableActionDict],
    pick: Callable[[int], int],
) -> ActionDict:
    """The offered guest-address action a view action stands for.

    A piece click in a ``collection`` space is translated back: a visible piece's
    view index to its state index; a group's view index to one of the group's pieces
    that were offered, ``pick(n)`` choosing among the ``n`` of them (ordered by state
    index; ``pick`` is not called when ``n`` is 1). Every other action must equal an
    offered action exactly.

    Args:
        state: the normalised State the actions were offered in.
        viewer: the player acting.
        view_action: an Action dict in view addresses (as :func:`view_actions` listed it).
        offered: AvailableAction dicts offered to ``viewer`` in guest addresses.
        pick: ``pick(n) -> k`` with ``0 <= k < n``; the caller records the randomness it uses.

    Returns:
        A copy of the offered Action dict (guest addresses).

    Raises:
        NotOffered: no offered action matches (``player_id`` and ``action`` say what was asked).
        ValueError: ``pick`` returned a value outside ``0..n-1``.
    """
    spaces = {space["space_id"]: space for space in state["spaces"]}
    click = _collection_click(view_action, spaces)
    offered_actions = [entry["action"] for entry in offered]
    if click is None:
        if view_action in offered_actions:
            return _copy(view_action)  # type: ignore[no-any-return]
        raise _not_offered(viewer, view_action)
    space, view_index = click
    layout = _layout(space, viewer)
    if type(view_index) is not int or view_index < 0:
        raise _not_offered(viewer, view_action)
    if view_index < len(layout.visible):
        members = [layout.visible[view_index]]
    elif view_index < len(layout.visible) + len(layout.groups):
        members = layout.groups[view_index - len(layout.visible)][1]
    else:
        raise _not_offered(viewer, view_action)
    candidates = [
        action
        for action in ({**view_action, "index": index} for index in members)
        if action in offered_actions
    ]
    if not candidates:
        raise _not_offered(viewer, view_action)
    chosen = 0
    if len(candidates) > 1:
        chosen = pick(len(candidates))
        if type(chosen) is not int or not 0 <= chosen < len(candidates):
            raise ValueError(f"pick({len(candidates)}) returned {chosen!r}")
    return _copy(candidates[chosen])  # type: ignore[no-any-return]


def _not_offered(viewer: Viewer, view_action: ActionDict) -> NotOffered:
    return NotOffered(
        f"the action {shown_json(view_action)} is not among those offered to player {viewer}",
        player_id=viewer,
        action=view_action,
    )
