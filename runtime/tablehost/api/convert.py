"""Proto messages of ``tablehost.v1`` ↔ the JSON-shaped dicts of docs/abi.md.

Used in both directions: the servicer turns domain dicts into messages, the client turns
messages back into dicts a program can use and send again. Free-form maps travel as
``google.protobuf.Struct`` whose numbers are doubles; on the way back an integral number
becomes an ``int`` again (so ``3`` stays ``3``; ``3.0`` also reads ``3``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict

from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api.faults import InvalidRequest
from tablehost.api.validation import action_type_problem

INTENTS = {
    "choice": pb.INTENT_CHOICE,
    "confirm": pb.INTENT_CONFIRM,
    "cancel": pb.INTENT_CANCEL,
    "undo": pb.INTENT_UNDO,
}
INTENT_NAMES = {value: name for name, value in INTENTS.items()} | {pb.INTENT_UNSPECIFIED: "choice"}
ARRANGEMENTS = {"ordered": pb.ARRANGEMENT_ORDERED, "collection": pb.ARRANGEMENT_COLLECTION}
ARRANGEMENT_NAMES = {value: name for name, value in ARRANGEMENTS.items()} | {
    pb.ARRANGEMENT_UNSPECIFIED: "ordered"
}


# ---------------------------------------------------------------- free-form maps


def to_struct(data: dict[str, Any] | None) -> struct_pb2.Struct:
    """A JSON object as a Struct (numbers become doubles)."""
    struct = struct_pb2.Struct()
    if data:
        struct.update(data)
    return struct


_STRUCT_WIRE: dict[bytes, bytes] = {}
"""Serialized Structs by the sorted JSON of their source map. Boards repeat the same small maps
(a cell's ``{"column", "row"}``) in every view, and ``Struct.update`` runs in Python."""
_STRUCT_WIRE_MAX = 4096


def _fill_struct(target: struct_pb2.Struct, data: dict[str, Any]) -> None:
    """Set the empty Struct ``target`` to ``data``, as ``target.update(data)`` would, via the cache."""
    # Keys are exact for JSON: 1, 1.0 and true differ. (orjson writes NaN as null, but table
    # maps come from JSON, which has no NaN.)
    try:
        key = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # not plain JSON (an integer over 64 bits): the slow path converts it
        target.update(data)
        return
    wire = _STRUCT_WIRE.get(key)
    if wire is None:
        built = struct_pb2.Struct()
        built.update(data)
        wire = built.SerializeToString(deterministic=True)
        if len(_STRUCT_WIRE) >= _STRUCT_WIRE_MAX:
            _STRUCT_WIRE.clear()
        _STRUCT_WIRE[key] = wire
    target.MergeFromString(wire)


def from_struct(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as a JSON object, integral numbers as ``int``."""
    return _ints(MessageToDict(struct))  # type: ignore[no-any-return]


def _ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_ints(item) for item in value]
    return value


EXACT_INTEGER_LIMIT = 2**53
"""A double holds every integer up to this magnitude exactly, and no wider range of them."""


def integers_from_struct(struct: struct_pb2.Struct, path: str) -> dict[str, Any]:
    """A request's Struct as a JSON object whose every number is an ``int``, or a refusal.

    Struct numbers are doubles on the wire, so a client's integer arrives as a double. Where
    the host expects only integers (game options), an integral double within ±2**53 is read as
    that ``int``; any other number (fractional, NaN, infinite, or too large to be an exact
    integer, such as a 10**23 sent as ``1e+23``) is refused here instead of reaching the game.

    Args:
        struct: the Struct as received.
        path: its field name in the request (``"options"``), the start of paths in messages.

    Returns:
        The JSON object (strings, bools, nulls, lists and objects as sent; numbers as ``int``).

    Raises:
        InvalidRequest: a number is not such an integer; the message names its path
            (``options.size``, ``options.seats[2]``) and the double as it was sent.
    """
    return {key: _integer_value(value, f"{path}.{key}") for key, value in struct.fields.items()}


def _integer_value(value: struct_pb2.Value, path: str) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        if not (number.is_integer() and abs(number) <= EXACT_INTEGER_LIMIT):
            raise InvalidRequest(
                f"{path} is {number!r} as sent (a protobuf double): it must be an integer within "
                f"±2^53, the range a double holds exactly"
            )
        return int(number)
    if kind == "struct_value":
        return integers_from_struct(value.struct_value, path)
    if kind == "list_value":
        return [_integer_value(item, f"{path}[{index}]") for index, item in enumerate(value.list_value.values)]
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    return None  # null_value, or no kind set (read as null, as MessageToDict does)


# ---------------------------------------------------------------- actions


def action_to_proto(action: dict[str, Any]) -> pb.Action:
    """An ABI action dict (``space_click``/``piece_click``/``button_click``) as a message.

    Raises:
        InvalidRequest: no ``type``, or an unknown one
            (:func:`~tablehost.api.validation.action_type_problem` says which).
    """
    message = pb.Action()
    _fill_action(message, action)
    return message


def _fill_action(message: pb.Action, action: dict[str, Any]) -> None:
    """Set the empty ``message`` to ``action`` in place (see :func:`action_to_proto`)."""
    kind = action.get("type")
    if kind == "space_click":
        message.space_click.SetInParent()
        message.space_click.space_id = action["space_id"]
    elif kind == "piece_click":
        message.piece_click.SetInParent()
        message.piece_click.space_id = action["space_id"]
        message.piece_click.index = action["index"]
    elif kind == "button_click":
        button = action.get("button") or {}
        out = message.button_click
        out.SetInParent()
        out.id = button.get("id", "")
        out.label = button.get("label", "")
        out.location = button.get("location", "")
        out.disabled = bool(button.get("disabled", False))
    else:
        raise InvalidRequest(action_type_problem(action) or "unknown action type")


def action_from_proto(action: pb.Action) -> dict[str, Any]:
    """A message as an ABI action dict (buttons with all four fields).

    Raises:
        InvalidRequest: no kind set, or an empty space id.
    """
    kind = action.WhichOneof("kind")
    if kind == "space_click":
        if not action.space_click.space_id:
            raise InvalidRequest("space_click needs a space_id")
        return {"type": "space_click", "space_id": action.space_click.space_id}
    if kind == "piece_click":
        if not action.piece_click.space_id:
            raise InvalidRequest("piece_click needs a space_id")
        return {
            "type": "piece_click",
            "space_id": action.piece_click.space_id,
            "index": action.piece_click.index,
        }
    if kind == "button_click":
        b = action.button_click
        return {
            "type": "button_click",
            "button": {"id": b.id, "label": b.label, "location": b.location, "disabled": b.disabled},
        }
    raise InvalidRequest("the action has no kind: set space_click, piece_click or button_click")


def available_to_proto(offer: dict[str, Any]) -> pb.AvailableAction:
    """An AvailableAction dict ``{action, intent, label}`` as a message."""
    message = pb.AvailableAction()
    _fill_available(message, offer)
    return message


def _fill_available(message: pb.AvailableAction, offer: dict[str, Any]) -> None:
    message.intent = INTENTS.get(offer.get("intent", "choice"), pb.INTENT_CHOICE)
    message.label = offer.get("label", "")
    _fill_action(message.action, offer["action"])


def available_from_proto(offer: pb.AvailableAction) -> dict[str, Any]:
    """A message as an AvailableAction dict."""
    return {
        "action": action_from_proto(offer.action),
        "intent": INTENT_NAMES[offer.intent],
        "label": offer.label,
    }


# ---------------------------------------------------------------- table state


def _fill_piece(message: pb.Piece, piece: dict[str, Any]) -> None:
    message.public_kind = piece.get("public_kind", "")
    if piece.get("public_state"):
        _fill_struct(message.public_state, piece["public_state"])
    if piece.get("private_kind") is not None:
        message.private_kind = piece["private_kind"]
    if piece.get("private_state"):
        _fill_struct(message.private_state, piece["private_state"])
    if piece.get("owner") is not None:
        message.owner = piece["owner"]
    if piece.get("count") is not None:
        message.count = piece["count"]


def _piece_from_proto(piece: pb.Piece) -> dict[str, Any]:
    data: dict[str, Any] = {
        "public_kind": piece.public_kind,
        "public_state": from_struct(piece.public_state),
        "private_kind": piece.private_kind if piece.HasField("private_kind") else None,
        "private_state": from_struct(piece.private_state),
        "owner": piece.owner if piece.HasField("owner") else None,
    }
    if piece.HasField("count"):
        data["count"] = piece.count
    return data


def state_to_proto(state: dict[str, Any]) -> pb.TableState:
    """A view of a State (view.view_state's output) as a message.

    Built in place with ``add()`` and only non-empty maps set: this runs for every view served.
    """
    message = pb.TableState()
    _fill_state(message, state)
    return message


def _fill_state(message: pb.TableState, state: dict[str, Any]) -> None:
    """Set the empty ``message`` to ``state`` in place (see :func:`state_to_proto`)."""
    message.active_player_ids.extend(state.get("active_player_ids", []))
    for player in state.get("players", []):
        _fill_player(message.players.add(), player)
    spaces = state.get("spaces", [])
    if spaces:
        # One merge of every space's cached wire form (a move changes few spaces of a view).
        message.MergeFromString(b"".join([_space_entry(space) for space in spaces]))
    if state.get("meta_data"):
        _fill_struct(message.meta_data, state["meta_data"])
    for entry in state.get("log", []):
        message.log.add(text=entry.get("text", ""))


_RECORDS: dict[bytes, bytes] = {}
"""Wire records (tag, length, serialized message) of viewed spaces (``TableState.spaces``) and
offers (``MatchView.actions``), by the record's tag and the sorted JSON of what it encodes. A
move changes a few spaces and offers; every view of every version before and after it encoded
all the others again, each costing about as much Python as the whole rest of the view."""
_RECORDS_MAX_BYTES = 16 * 1024 * 1024
"""Bytes of keys and records :data:`_RECORDS` holds before it starts over."""
_records_bytes = 0
_SPACES_TAG = b"\x1a"
"""``TableState.spaces`` (field 3) as a length-delimited record (wire type 2)."""
_ACTIONS_TAG = b"\x2a"
"""``MatchView.actions`` (field 5) as a length-delimited record (wire type 2)."""


def _record(tag: bytes, value: dict[str, Any], message_type: Any, fill: Callable[[Any, dict[str, Any]], None]) -> bytes:
    """The wire record (``tag``, length, ``message_type`` filled by ``fill`` from ``value``) of one
    value, built once per distinct value.

    The key is the value itself (a viewed space is what its viewer may see, nothing more), so
    a record is a pure function of content its reader is entitled to; ``1``, ``1.0`` and
    ``true`` differ.

    Raises:
        InvalidRequest: what ``fill`` raises (an offer of an unknown action type).
    """
    global _records_bytes
    try:
        key: bytes | None = tag + orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # not plain JSON (an integer over 64 bits): built, never cached
        key = None
    record = _RECORDS.get(key) if key is not None else None
    if record is None:
        built = message_type()
        fill(built, value)
        wire = built.SerializeToString()
        record = tag + _varint(len(wire)) + wire
        if key is not None:
            if _records_bytes > _RECORDS_MAX_BYTES:
                _RECORDS.clear()
                _records_bytes = 0
            _RECORDS[key] = record
            _records_bytes += len(key) + len(record)
    return record


def _space_entry(space: dict[str, Any]) -> bytes:
    """The ``TableState.spaces`` record of one viewed space (:func:`_record`)."""
    return _record(_SPACES_TAG, space, pb.Space, _fill_space)


def _varint(value: int) -> bytes:
    """``value`` (>= 0) as a protobuf base-128 varint."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _fill_space(out: pb.Space, space: dict[str, Any]) -> None:
    out.space_id = space["space_id"]
    out.kind = space.get("kind", "")
    out.arrangement = ARRANGEMENTS.get(space.get("arrangement", "ordered"), pb.ARRANGEMENT_ORDERED)
    if space.get("owner") is not None:
        out.owner = space["owner"]
    if space.get("public_state"):
        _fill_struct(out.public_state, space["public_state"])
    if space.get("private_state"):
        _fill_struct(out.private_state, space["private_state"])
    for piece in space.get("pieces", []):
        _fill_piece(out.pieces.add(), piece)


def _space_from_proto(s: pb.Space) -> dict[str, Any]:
    return {
        "space_id": s.space_id,
        "kind": s.kind,
        "owner": s.owner if s.HasField("owner") else None,
        "arrangement": ARRANGEMENT_NAMES[s.arrangement],
        "public_state": from_struct(s.public_state),
        "private_state": from_struct(s.private_state),
        "pieces": [_piece_from_proto(p) for p in s.pieces],
    }


def delta_to_proto(delta: dict[str, Any], base_version: int, message: pb.ViewDelta) -> None:
    """Fill ``message`` from a :func:`tablehost.view_delta.diff_views` delta."""
    message.base_version = base_version
    for space in delta["spaces"]:
        _fill_space(message.spaces.add(), space)
    for player in delta["players"]:
        _fill_player(message.players.add(), player)
    if "meta_data" in delta:
        message.meta_data.SetInParent()
        if delta["meta_data"]:
            _fill_struct(message.meta_data, delta["meta_data"])
    message.log_dropped = delta["log_dropped"]
    for entry in delta["log_appended"]:
        message.log_appended.add(text=entry.get("text", ""))
    message.active_player_ids.extend(delta["active_player_ids"])


def delta_from_proto(message: pb.ViewDelta) -> dict[str, Any]:
    """A ViewDelta message as the dict :func:`tablehost.view_delta.apply_delta` takes."""
    delta: dict[str, Any] = {
        "spaces": [_space_from_proto(s) for s in message.spaces],
        "players": [player_from_proto(p) for p in message.players],
        "log_dropped": message.log_dropped,
        "log_appended": [{"text": entry.text} for entry in message.log_appended],
        "active_player_ids": list(message.active_player_ids),
    }
    if message.HasField("meta_data"):
        delta["meta_data"] = from_struct(message.meta_data)
    return delta


def state_from_proto(state: pb.TableState) -> dict[str, Any]:
    """A TableState message as a view dict (the shape of view.view_state's output)."""
    return {
        "active_player_ids": list(state.active_player_ids),
        "players": [player_from_proto(p) for p in state.players],
        "spaces": [_space_from_proto(s) for s in state.spaces],
        "meta_data": from_struct(state.meta_data),
        "log": [{"text": entry.text} for entry in state.log],
    }


def _fill_player(message: pb.Player, player: dict[str, Any]) -> None:
    message.player_id = player["player_id"]
    message.username = player.get("username", "")
    message.color = player.get("color", "")
    if player.get("public_state"):
        _fill_struct(message.public_state, player["public_state"])
    if player.get("private_state"):
        _fill_struct(message.private_state, player["private_state"])


def player_to_proto(player: Any) -> pb.Player:
    """A player dict (or a ``PlayerInfo``) as a message."""
    if not isinstance(player, dict):
        player = {"player_id": player.player_id, "username": player.username, "color": player.color}
    message = pb.Player()
    _fill_player(message, player)
    return message


def player_from_proto(player: pb.Player) -> dict[str, Any]:
    """A Player message as a dict."""
    return {
        "player_id": player.player_id,
        "username": player.username,
        "color": player.color,
        "public_state": from_struct(player.public_state),
        "private_state": from_struct(player.private_state),
    }


# ---------------------------------------------------------------- views


def view_to_proto(
    match_id: str, viewer: int | None, view: Any, score_labels: list[str], *, with_state: bool = True
) -> pb.MatchView:
    """A ``match.MatchView`` as a message.

    Args:
        match_id: the match.
        viewer: the player id the view is for, ``None`` for the spectator view.
        view: the ``MatchView`` (state, actions, scores keyed by decimal player id, ...).
        score_labels: names of the score columns.
        with_state: false leaves ``state`` out (a delta carries the table instead).
    """
    message = pb.MatchView(
        match_id=match_id,
        version=view.version,
        score_labels=score_labels,
        active_player_ids=view.active_player_ids,
        game_over=view.game_over,
    )
    if with_state:
        _fill_state(message.state, view.state)
    if view.actions:
        # One merge of every offer's cached wire form (offers repeat across versions and matches).
        message.MergeFromString(b"".join([_record(_ACTIONS_TAG, offer, pb.AvailableAction, _fill_available)
                                          for offer in view.actions]))
    if viewer is not None:
        message.viewer = viewer
    message.status = STATUSES.get(getattr(view, "status", "active"), pb.MATCH_STATUS_ACTIVE)
    if getattr(view, "result", None) is not None:
        result_to_proto(view.result, message.result)
    for player_id, score in view.scores.items():
        message.scores[int(player_id)].CopyFrom(
            pb.Score(
                public_points=score.get("public_points", []),
                private_points=score.get("private_points", []),
            )
        )
    return message


def view_from_proto(view: pb.MatchView) -> dict[str, Any]:
    """A MatchView message as a dict.

    Returns:
        ``{"match_id", "viewer" (int or None), "version", "state", "actions", "scores"
        (keyed by decimal player id, like the ABI), "score_labels", "active_player_ids",
        "game_over", "status", "result", "clocks", "time_control", "connected_player_ids",
        "zombie_player_ids", "open_seats"}``; actions are ABI dicts that can be submitted as
        they are. A message carrying a delta also has ``"delta"`` (with ``"base_version"``)
        and ``"state": None``; :meth:`tablehost.client.TablehostClient.watch` applies it.
    """
    extra: dict[str, Any] = {}
    if view.HasField("delta"):
        extra["delta"] = delta_from_proto(view.delta) | {"base_version": view.delta.base_version}
    return extra | {
        "match_id": view.match_id,
        "viewer": view.viewer if view.HasField("viewer") else None,
        "version": view.version,
        "state": None if view.HasField("delta") else state_from_proto(view.state),
        "actions": [available_from_proto(a) for a in view.actions],
        "scores": {
            str(pid): {"public_points": list(s.public_points), "private_points": list(s.private_points)}
            for pid, s in sorted(view.scores.items())
        },
        "score_labels": list(view.score_labels),
        "active_player_ids": list(view.active_player_ids),
        "game_over": view.game_over,
        "status": STATUS_NAMES.get(view.status, "active"),
        "result": result_from_proto(view.result) if view.HasField("result") else None,
        "clocks": [
            {"player_id": c.player_id, "remaining_ms": c.remaining_ms, "running": c.running} for c in view.clocks
        ],
        "time_control": time_control_from_proto(view.time_control),
        "connected_player_ids": list(view.connected_player_ids),
        "zombie_player_ids": list(view.zombie_player_ids),
        "open_seats": list(view.open_seats),
    }


# ---------------------------------------------------------------- lifecycle: status, result, clocks, metadata

STATUSES = {
    "waiting": pb.MATCH_STATUS_WAITING,
    "active": pb.MATCH_STATUS_ACTIVE,
    "finished": pb.MATCH_STATUS_FINISHED,
    "aborted": pb.MATCH_STATUS_ABORTED,
}
STATUS_NAMES = {value: name for name, value in STATUSES.items()} | {pb.MATCH_STATUS_UNSPECIFIED: "active"}
END_REASONS = {
    "normal": pb.END_REASON_NORMAL,
    "resigned": pb.END_REASON_RESIGNED,
    "timeout": pb.END_REASON_TIMEOUT,
    "aborted": pb.END_REASON_ABORTED,
}
END_REASON_NAMES = {value: name for name, value in END_REASONS.items()}
POLICIES = {"forfeit": pb.TIMEOUT_POLICY_FORFEIT, "zombie": pb.TIMEOUT_POLICY_ZOMBIE}
POLICY_NAMES = {value: name for name, value in POLICIES.items()} | {pb.TIMEOUT_POLICY_UNSPECIFIED: "forfeit"}
RESULT_RULES = {
    "highest_score": pb.RESULT_RULE_HIGHEST_SCORE,
    "lowest_score": pb.RESULT_RULE_LOWEST_SCORE,
    "ranks": pb.RESULT_RULE_RANKS,
}
RESIGN_RULES = {"ends": pb.RESIGN_RULE_ENDS, "continue": pb.RESIGN_RULE_CONTINUE}
OPTION_TYPES = {"integer": pb.OPTION_TYPE_INTEGER, "boolean": pb.OPTION_TYPE_BOOLEAN, "choice": pb.OPTION_TYPE_CHOICE}


def result_to_proto(result: Any, message: pb.MatchResult) -> None:
    """Fill ``message`` from a :class:`tablehost.results.MatchResult`."""
    for player_id, rank in result.ranks.items():
        message.ranks.add(player_id=player_id, rank=rank)
    message.winners.extend(result.winners)
    message.ended_by = END_REASONS[result.ended_by]
    if result.player_id is not None:
        message.player_id = result.player_id


def result_from_proto(message: pb.MatchResult) -> dict[str, Any]:
    """A MatchResult message as ``{"ranks": {"<pid>": rank}, "winners", "ended_by", "player_id"}``."""
    return {
        "ranks": {str(r.player_id): r.rank for r in message.ranks},
        "winners": list(message.winners),
        "ended_by": END_REASON_NAMES.get(message.ended_by, "normal"),
        "player_id": message.player_id if message.HasField("player_id") else None,
    }


def time_control_to_proto(data: dict[str, Any], message: pb.TimeControl) -> None:
    """Fill ``message`` from a time control's JSON form (``{}``: leave it empty)."""
    if not data:
        return
    message.main_ms = int(data.get("main_ms", 0))
    message.increment_ms = int(data.get("increment_ms", 0))
    message.per_move_ms = int(data.get("per_move_ms", 0))
    message.on_timeout = POLICIES.get(str(data.get("on_timeout", "forfeit")), pb.TIMEOUT_POLICY_FORFEIT)


def time_control_from_proto(message: pb.TimeControl) -> dict[str, Any]:
    """A TimeControl message as its JSON form (``{}`` when no clock)."""
    if not (message.main_ms or message.per_move_ms):
        return {}
    return {
        "main_ms": message.main_ms,
        "increment_ms": message.increment_ms,
        "per_move_ms": message.per_move_ms,
        "on_timeout": POLICY_NAMES.get(message.on_timeout, "forfeit"),
    }


def add_view_extras(message: pb.MatchView, extras: dict[str, Any]) -> None:
    """Set the fields that change without a new version (clocks, presence, zombies, open seats)."""
    for clock in extras.get("clocks", ()):
        message.clocks.add(player_id=clock["player_id"], remaining_ms=clock["remaining_ms"], running=clock["running"])
    time_control_to_proto(extras.get("time_control") or {}, message.time_control)
    message.connected_player_ids.extend(extras.get("connected", ()))
    message.zombie_player_ids.extend(extras.get("zombies", ()))
    message.open_seats.extend(extras.get("open_seats", ()))


def metadata_to_proto(metadata: Any, message: pb.GameMetadata) -> None:
    """Fill ``message`` from a :class:`tablehost.metadata.GameMetadata`."""
    message.min_players = metadata.min_players
    message.max_players = metadata.max_players
    message.description = metadata.description
    message.hidden_information = metadata.hidden_information
    message.result = RESULT_RULES[metadata.result]
    message.resign = RESIGN_RULES[metadata.resign]
    message.declared = metadata.declared
    for option in metadata.options:
        out = message.options.add(name=option.name, description=option.description, type=OPTION_TYPES[option.type])
        _set_value(out.default_value, option.default)
        if option.type == "integer":
            out.min, out.max = int(option.minimum), int(option.maximum)
        out.values.extend(option.values)


def _set_value(target: struct_pb2.Value, value: Any) -> None:
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, (int, float)):
        target.number_value = float(value)
    else:
        target.string_value = str(value)


def metadata_from_proto(message: pb.GameMetadata) -> dict[str, Any]:
    """A GameMetadata message as the JSON form of docs/abi.md "metadata" (plus ``declared``)."""
    names = {value: name for name, value in OPTION_TYPES.items()}
    options = []
    for option in message.options:
        kind = names.get(option.type, "choice")
        entry: dict[str, Any] = {"name": option.name, "type": kind, "description": option.description,
                                 "default": _ints(MessageToDict(option.default_value))}
        if kind == "integer":
            entry["min"], entry["max"] = option.min, option.max
        if kind == "choice":
            entry["values"] = list(option.values)
        options.append(entry)
    rules = {value: name for name, value in RESULT_RULES.items()}
    resigns = {value: name for name, value in RESIGN_RULES.items()}
    return {
        "min_players": message.min_players,
        "max_players": message.max_players,
        "description": message.description,
        "hidden_information": message.hidden_information,
        "result": rules.get(message.result, "highest_score"),
        "resign": resigns.get(message.resign, "ends"),
        "options": options,
        "declared": message.declared,
    }
