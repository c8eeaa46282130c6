"""Hypothesis strategies for table states, patches and actions (shared by the test suites).

Every private string a generated state holds (private kinds, private states of
pieces, spaces and players, per-player log lines) is a unique *marker* such as
``ZQ00042Q``: fixed width and delimited, so no marker is a substring of another
and a leak test can search serialized bytes for it. Public strings never look
like markers.

Main entry points:

- ``states()``: a normalised State (dict);
- ``patch_lists(state)``: a list of patches valid in sequence on ``state``;
- ``states_with_patches()``: both at once;
- ``bad_patches(state)``: one patch that does not fit ``state``;
- ``offered_piece_clicks(state, viewer)``: AvailableActions a game might offer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from tablehost.table import normalize_state

MARKER_RE = re.compile(rb"ZQ\d{5}Q")
PUBLIC_KINDS = ["card", "tile", "disc"]
PUBLIC_FACES: list[dict[str, Any]] = [{}, {"face": "up"}, {"face": 1}]

Draw = Callable[[st.SearchStrategy[Any]], Any]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(alphabet="abcxyz ", max_size=6),
)
json_values = st.recursive(
    json_scalars.filter(lambda v: v is not None),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["k", "n", "v"]), inner, max_size=3),
    ),
    max_leaves=5,
)
"""Non-null JSON values (null means "remove the key" in a patch)."""

state_keys = st.sampled_from(["score", "turn", "face", "n"])


class Markers:
    """A source of unique marker strings ``ZQnnnnnQ`` for one generated example."""

    def __init__(self, start: int = 0) -> None:
        self.next = start

    def __call__(self) -> str:
        self.next += 1
        return f"ZQ{self.next:05d}Q"


def _maybe_secret(draw: Draw, markers: Markers) -> dict[str, Any]:
    return {"secret": markers()} if draw(st.booleans()) else {}


def _piece(draw: Draw, markers: Markers, player_ids: list[int]) -> dict[str, Any]:
    return {
        "public_kind": draw(st.sampled_from(PUBLIC_KINDS)),
        "public_state": dict(draw(st.sampled_from(PUBLIC_FACES))),
        "private_kind": markers() if draw(st.booleans()) else None,
        "private_state": _maybe_secret(draw, markers),
        "owner": draw(st.sampled_from([None, None, *player_ids])),
    }


@st.composite
def pieces(
    draw: Draw, markers: Markers | None = None, player_ids: tuple[int, ...] = (1, 2)
) -> dict[str, Any]:
    """One full-form Piece; its private strings are markers."""
    return _piece(draw, markers or Markers(50_000), list(player_ids))


def _log_entry(draw: Draw, markers: Markers, player_ids: list[int], n: int) -> dict[str, Any]:
    readers = draw(st.lists(st.sampled_from(player_ids), unique=True, max_size=2)) if player_ids else []
    return {"text": f"line {n}", "for_player": {str(p): markers() for p in readers}}


@st.composite
def states(
    draw: Draw,
    *,
    max_players: int = 4,
    max_spaces: int = 5,
    max_pieces: int = 6,
    max_log: int = 4,
) -> dict[str, Any]:
    """A normalised State whose every private string is a unique marker.

    Args:
        max_players: players get ids ``1..n`` with ``1 <= n <= max_players``.
        max_spaces: spaces ``s0, s1, ...`` (at least one), each ordered or a collection,
            owned by nobody or a player.
        max_pieces: pieces per space.
        max_log: log entries, each with per-player lines for some players.
    """
    markers = Markers()
    player_ids = list(range(1, draw(st.integers(1, max_players)) + 1))
    players = [
        {
            "player_id": pid,
            "username": f"p{pid}",
            "color": "#000",
            "public_state": draw(st.sampled_from([{}, {"score": pid}])),
            "private_state": _maybe_secret(draw, markers),
        }
        for pid in player_ids
    ]
    spaces = []
    for i in range(draw(st.integers(1, max_spaces))):
        spaces.append(
            {
                "space_id": f"s{i}",
                "kind": draw(st.sampled_from(["hand", "pile", "board"])),
                "owner": draw(st.sampled_from([None, *player_ids])),
                "arrangement": draw(st.sampled_from(["ordered", "collection"])),
                "public_state": draw(st.sampled_from([{}, {"open": True}])),
                "private_state": _maybe_secret(draw, markers),
                "pieces": [
                    _piece(draw, markers, player_ids) for _ in range(draw(st.integers(0, max_pieces)))
                ],
            }
        )
    log = [_log_entry(draw, markers, player_ids, n) for n in range(draw(st.integers(0, max_log)))]
    active = draw(st.lists(st.sampled_from(player_ids), unique=True, max_size=len(player_ids)))
    state = {
        "active_player_ids": active,
        "players": players,
        "spaces": spaces,
        "meta_data": draw(st.sampled_from([{}, {"round": 1}])),
        "log": log,
    }
    return normalize_state(state)


PATCH_OPS = [
    "add_piece", "insert_piece", "remove_piece", "move_piece", "permute",
    "set_public_kind", "set_private_kind", "set_piece_owner",
    "set_piece_public_state", "set_piece_private_state",
    "set_space_owner", "set_space_public_state", "set_space_private_state",
    "set_player_public_state", "set_player_private_state",
    "set_active_players", "set_meta", "log",
]  # fmt: skip


def _state_value(draw: Draw) -> Any:
    """A value for a ``set_*_state`` patch: sometimes null (remove the key)."""
    return draw(st.one_of(st.none(), json_values))


def _one_patch(
    draw: Draw, lengths: dict[str, int], player_ids: list[int], markers: Markers
) -> dict[str, Any]:
    space_ids = sorted(lengths)
    op = draw(st.sampled_from(PATCH_OPS))
    owners = st.sampled_from([None, *player_ids])
    if op in ("add_piece", "insert_piece"):
        sid = draw(st.sampled_from(space_ids))
        patch: dict[str, Any] = {"op": op, "space_id": sid, "piece": _piece(draw, markers, player_ids)}
        if op == "insert_piece":
            patch["index"] = draw(st.integers(0, lengths[sid]))
        lengths[sid] += 1
        return patch
    if op == "move_piece":
        sources = [s for s in space_ids if lengths[s]]
        if not sources:
            return {"op": "set_meta", "key": "n", "value": 1}
        src = draw(st.sampled_from(sources))
        dst = draw(st.sampled_from(space_ids))
        patch = {"op": op, "from": src, "index": draw(st.integers(0, lengths[src] - 1)), "to": dst}
        lengths[src] -= 1
        if draw(st.booleans()):
            patch["to_index"] = draw(st.integers(0, lengths[dst]))
        elif draw(st.booleans()):
            patch["to_index"] = None
        lengths[dst] += 1
        return patch
    if op == "set_space_owner":
        return {"op": op, "space_id": draw(st.sampled_from(space_ids)), "owner": draw(owners)}
    if op in ("set_space_public_state", "set_space_private_state"):
        value = markers() if op.endswith("private_state") and draw(st.booleans()) else _state_value(draw)
        return {
            "op": op,
            "space_id": draw(st.sampled_from(space_ids)),
            "key": draw(state_keys),
            "value": value,
        }
    if op in ("set_player_public_state", "set_player_private_state"):
        value = markers() if op.endswith("private_state") and draw(st.booleans()) else _state_value(draw)
        return {
            "op": op,
            "player_id": draw(st.sampled_from(player_ids)),
            "key": draw(state_keys),
            "value": value,
        }
    if op == "set_active_players":
        return {"op": op, "player_ids": draw(st.lists(st.sampled_from(player_ids), unique=True))}
    if op == "set_meta":
        return {"op": op, "key": draw(state_keys), "value": _state_value(draw)}
    if op == "log":
        return {"op": op, "entry": _log_entry(draw, markers, player_ids, draw(st.integers(0, 99)))}
    # The remaining ops address an existing piece (permute: an existing space).
    sid = draw(st.sampled_from(space_ids))
    if op == "permute":
        return {"op": op, "space_id": sid, "order": draw(st.permutations(range(lengths[sid])))}
    if not lengths[sid]:  # nothing to address: add a piece instead
        lengths[sid] += 1
        return {"op": "add_piece", "space_id": sid, "piece": _piece(draw, markers, player_ids)}
    patch = {"op": op, "space_id": sid, "index": draw(st.integers(0, lengths[sid] - 1))}
    if op == "remove_piece":
        lengths[sid] -= 1
    elif op == "set_public_kind":
        patch["kind"] = draw(st.sampled_from(PUBLIC_KINDS))
    elif op == "set_private_kind":
        patch["kind"] = markers() if draw(st.booleans()) else None
    elif op == "set_piece_owner":
        patch["owner"] = draw(owners)
    else:  # set_piece_public_state / set_piece_private_state
        patch["key"] = draw(state_keys)
        patch["value"] = (
            markers() if op.endswith("private_state") and draw(st.booleans()) else _state_value(draw)
        )
    return patch


@st.composite
def patch_lists(draw: Draw, state: dict[str, Any], *, max_size: int = 12) -> list[dict[str, Any]]:
    """Patches that apply one after another to ``state`` without error.

    Private values the patches introduce are markers numbered from 20000 up, so they
    never repeat a marker of a state from :func:`states`.
    """
    lengths = {space["space_id"]: len(space["pieces"]) for space in state["spaces"]}
    player_ids = [player["player_id"] for player in state["players"]]
    markers = Markers(20_000)
    return [_one_patch(draw, lengths, player_ids, markers) for _ in range(draw(st.integers(0, max_size)))]


@st.composite
def states_with_patches(draw: Draw, **state_options: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A state from :func:`states` and a list from :func:`patch_lists` for it."""
    state = draw(states(**state_options))
    return state, draw(patch_lists(state))


@st.composite
def bad_patches(draw: Draw, state: dict[str, Any]) -> dict[str, Any]:
    """One patch that must be refused by ``state`` as it is (each kind of mistake)."""
    lengths = {space["space_id"]: len(space["pieces"]) for space in state["spaces"]}
    sid = draw(st.sampled_from(sorted(lengths)))
    n = lengths[sid]
    return draw(
        st.sampled_from(
            [
                {"op": "explode", "space_id": sid},
                {"no_op": True},
                {"op": "add_piece", "space_id": "nowhere", "piece": {"public_kind": "card"}},
                {"op": "add_piece", "space_id": sid, "piece": {"public_state": {}}},
                {"op": "add_piece", "space_id": sid, "piece": {"public_kind": "x", "owner": "me"}},
                {"op": "insert_piece", "space_id": sid, "index": n + 1, "piece": {"public_kind": "x"}},
                {"op": "remove_piece", "space_id": sid, "index": n},
                {"op": "remove_piece", "space_id": sid, "index": -1},
                {"op": "remove_piece", "space_id": sid, "index": True},
                {"op": "move_piece", "from": sid, "index": n, "to": sid},
                {"op": "move_piece", "from": sid, "index": 0, "to": "nowhere"},
                {"op": "permute", "space_id": sid, "order": list(range(n + 1))},
                {"op": "permute", "space_id": sid, "order": [0] * (n + 1)},
                {"op": "set_public_kind", "space_id": sid, "index": n, "kind": "x"},
                {"op": "set_private_kind", "space_id": sid, "index": 0, "kind": 7},
                {"op": "set_piece_owner", "space_id": sid, "index": n, "owner": 1},
                {"op": "set_piece_public_state", "space_id": sid, "index": n, "key": "k", "value": 1},
                {"op": "set_space_owner", "space_id": sid, "owner": -2},
                {"op": "set_space_public_state", "space_id": sid, "key": 3, "value": 1},
                {"op": "set_space_private_state", "space_id": sid, "key": "k"},
                {"op": "set_player_public_state", "player_id": 999, "key": "k", "value": 1},
                {"op": "set_player_private_state", "player_id": "1", "key": "k", "value": 1},
                {"op": "set_active_players", "player_ids": "1"},
                {"op": "set_meta", "key": "k", "value": {1, 2}},
                {"op": "log", "entry": {"for_player": {}}},
            ]
        )
    )


def viewer_of(piece: dict[str, Any], space: dict[str, Any]) -> int | None:
    """The one player who may see a piece's private part (docs/architecture.md "Views")."""
    return piece["owner"] if piece["owner"] is not None else space["owner"]


@st.composite
def offered_piece_clicks(draw: Draw, state: dict[str, Any]) -> list[dict[str, Any]]:
    """AvailableActions a game might offer: clicks on some pieces, a space click, a button."""
    offered: list[dict[str, Any]] = []
    for space in state["spaces"]:
        for index in range(len(space["pieces"])):
            if draw(st.booleans()):
                label = draw(st.sampled_from(["Play", "Take", f"Pick {space['space_id']}"]))
                action = {"type": "piece_click", "space_id": space["space_id"], "index": index}
                offered.append({"action": action, "intent": "choice", "label": label})
    if draw(st.booleans()):
        space_id = state["spaces"][0]["space_id"]
        offered.append(
            {"action": {"type": "space_click", "space_id": space_id}, "intent": "choice", "label": "Here"}
        )
    if draw(st.booleans()):
        button = {"id": "pass", "label": "Pass", "location": "", "disabled": False}
        offered.append(
            {"action": {"type": "button_click", "button": button}, "intent": "confirm", "label": "Pass"}
        )
    return list(draw(st.permutations(offered)))  # games list actions in any order
