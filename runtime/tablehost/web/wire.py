"""The JSON shapes of the HTTP API, and errors as HTTP statuses.

A view on the wire (``GET /api/matches/{id}/view``, each push event, the answer to a move)::

    {"match_id": str, "viewer": int | null, "version": int, "game_over": bool,
     "active_player_ids": [int], "state": <view of docs/architecture.md view.py>,
     "actions": [AvailableAction in view addresses], "scores": {"<pid>": Score},
     "score_labels": [str], "players": [{"player_id", "username", "color"}]}

Exactly what :meth:`MatchRegistry.view` serves the token, nothing more: ``state``, ``actions``
and ``scores`` are the :class:`~tablehost.match.MatchView` built for that viewer.
"""

from __future__ import annotations

from typing import Any

from tablehost.api.faults import InvalidRequest
from tablehost.api.registry import CreatedMatch, ServedView
from tablehost.api.validation import (
    ACTION_FIELDS,
    BUTTON_FIELDS,
    action_type_problem,
    unknown_action_keys,
    unknown_keys,
)
from tablehost.client import MAX_PIECE_INDEX
from tablehost.errors import TablehostError
from tablehost.store.errors import StoreError, store_reason

MAX_SPACE_ID_CHARS = 256
"""Longest ``space_id`` (and button field) an HTTP action may carry, characters."""

HTTP_STATUS_BY_AREA: dict[str, int] = {
    "request": 400,
    "setup": 400,
    "module": 404,
    "auth": 403,
    "match": 409,
    "guest": 409,
    "table": 409,
    "response": 413,
}
"""The HTTP status of an error code's area (the part before ``/``); exceptions in :data:`HTTP_STATUS_BY_CODE`."""

HTTP_STATUS_BY_CODE: dict[str, int] = {
    "auth/unauthenticated": 401,
    "match/unknown": 404,
    "module/invalid": 400,
    "module/busy": 503,
    "module/quarantined": 503,
    "request/too_many_watchers": 429,
    "request/unknown_route": 404,
    "request/method_not_allowed": 405,
    "request/rate_limited": 429,
    "store/unusable": 503,
    "store/in_use": 503,
    "store/unavailable": 503,
    "store/conflict": 409,
}


def http_status(code: str) -> int:
    """The HTTP status for a host error code such as ``"match/not_offered"`` (500 when unknown)."""
    if code in HTTP_STATUS_BY_CODE:
        return HTTP_STATUS_BY_CODE[code]
    return HTTP_STATUS_BY_AREA.get(code.split("/", 1)[0], 500)


def action_from_json(action: Any) -> dict[str, Any]:
    """An HTTP request's ``action`` as the ABI action it names, in the same shape gRPC's
    ``Action`` message gives (:func:`tablehost.api.convert.action_from_proto`): only the keys
    of its type, each of its type (docs/abi.md).

    JSON, unlike the gRPC message, can carry anything: an unknown key, a list 1,000 deep in
    a field (which the refusal's ``repr`` then recursed into: a 500). No message here repeats
    the value sent, but for the first characters of an unknown type or key.

    Args:
        action: the ``action`` member of the JSON body.

    Returns:
        ``{"type": "space_click", "space_id"}``, ``{"type": "piece_click", "space_id", "index"}``
        or ``{"type": "button_click", "button": {"id", "label", "location", "disabled"}}``.

    Raises:
        InvalidRequest: not an object, no type or an unknown one
            (:func:`~tablehost.api.validation.action_type_problem`), a missing or unknown key, a value of
            the wrong type, a string over :data:`MAX_SPACE_ID_CHARS`, an index outside
            0..2^32-1.
    """
    if not isinstance(action, dict):
        raise InvalidRequest("send {'action': Action, 'version': int}; an action is an object")
    wrong = action_type_problem(action) or unknown_action_keys(action)  # keys once the type is known
    if wrong is not None:
        raise InvalidRequest(wrong)
    kind: str = action["type"]
    fields = ACTION_FIELDS[kind]
    normal: dict[str, Any] = {"type": kind}
    for name, expected in fields.items():
        value = action.get(name)
        if expected is dict:
            normal[name] = _button(value)
            continue
        if not isinstance(value, expected) or isinstance(value, bool):
            raise InvalidRequest(f"a {kind} needs {name!r}, a {expected.__name__}")
        if isinstance(value, str) and not 0 < len(value) <= MAX_SPACE_ID_CHARS:
            raise InvalidRequest(f"a {kind}'s {name!r} has 1 to {MAX_SPACE_ID_CHARS} characters")
        if isinstance(value, int) and not 0 <= value <= MAX_PIECE_INDEX:
            raise InvalidRequest(f"a piece index is 0 to {MAX_PIECE_INDEX}")
        normal[name] = value
    return normal


def _button(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidRequest("a button_click needs 'button', an object")
    button: dict[str, Any] = {}
    for name, expected in BUTTON_FIELDS.items():
        field = value.get(name, expected())
        if not isinstance(field, expected) or (expected is not bool and isinstance(field, bool)):
            raise InvalidRequest(f"a button's {name!r} is a {expected.__name__}")
        if isinstance(field, str) and len(field) > MAX_SPACE_ID_CHARS:
            raise InvalidRequest(f"a button's {name!r} has at most {MAX_SPACE_ID_CHARS} characters")
        button[name] = field
    return button


def only_keys(value: dict[str, Any], keys: tuple[str, ...], what: str) -> None:
    """Refuse a JSON object with keys outside ``keys`` (HTTP bodies; gRPC messages cannot have them).

    Raises:
        InvalidRequest: what :func:`~tablehost.api.validation.unknown_keys` says is wrong.
    """
    wrong = unknown_keys(value, keys, what)
    if wrong is not None:
        raise InvalidRequest(wrong)


def error_body(exc: TablehostError, *, admin: bool = False) -> dict[str, Any]:
    """``{"error": {"code", "message"}}`` for a refusal.

    A guest failure's message (a panic text, what the game printed) may mention hidden parts
    of the table, so players and spectators get only its code; the admin (``admin=True``)
    gets the message too, and the server log keeps everything (platform rule 2, docs/architecture.md).
    So is a store failure's: the database driver's text names the database's host and port.
    """
    message = exc.message
    if not admin and (exc.code.startswith("guest/") or exc.code == "table/bad_patch"):
        message = "the game failed on this request; nothing changed (details are in the server log)"
    elif not admin and isinstance(exc, StoreError):  # the driver's text names the database
        message = store_reason(exc.code)
    return {"error": {"code": exc.code, "message": message}}


def view_json(served: ServedView) -> dict[str, Any]:
    """The wire form of a served view (memoised on the view: one build per viewer and version).

    When the registry serves them (the match lifecycle), the view's ``result`` and the served
    extras of the moment (``clocks`` as ``[{"player_id", "remaining_ms", "running"}]``,
    ``open_seats``, ...) are added as members of the same names; the page shows them.
    """
    body = served.wire.get("json")
    if body is None:
        body = served.wire["json"] = _view_body(served)
    extras: dict[str, Any] = getattr(served, "extras", None) or {}
    return {**body, **extras} if extras else body


def _view_body(served: ServedView) -> dict[str, Any]:
    view = served.view
    body = {
        "match_id": served.match_id,
        "viewer": served.viewer,
        "version": view.version,
        "game_over": view.game_over,
        "active_player_ids": list(view.active_player_ids),
        "state": view.state,
        "actions": view.actions,
        "scores": view.scores,
        "score_labels": served.score_labels,
    }
    result = getattr(view, "result", None)
    if result is not None:  # a MatchResult: its JSON form has string player ids as keys
        body["result"] = result.to_json() if hasattr(result, "to_json") else result
    return body


def created_json(created: CreatedMatch) -> dict[str, Any]:
    """What ``POST /api/matches`` answers the admin: the match id, a token per seated seat, the
    spectator token, and the player ids of the seats left open (taken later by a join)."""
    return {
        "match_id": created.match_id,
        "seats": [
            {"player_id": p.player_id, "username": p.username, "color": p.color, "token": token}
            for p, token in created.seats
        ],
        "spectator_token": created.spectator_token,
        "score_labels": created.score_labels,
        "open_seats": list(created.open_seats),
    }


def summary_json(summary: dict[str, Any]) -> dict[str, Any]:
    """A match summary of :meth:`MatchRegistry.list_matches` with its players as plain objects."""
    players = [
        {"player_id": p.player_id, "username": p.username, "color": p.color} for p in summary["players"]
    ]
    result = summary.get("result")
    if result is not None and hasattr(result, "to_json"):  # a MatchResult: string player ids as keys
        return {**summary, "players": players, "result": result.to_json()}
    return {**summary, "players": players}
