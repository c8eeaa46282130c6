"""The guest protocol of ABI v1 (docs/abi.md "Ops"): op codes, response parsing, guest error objects.

Pure data handling, no wasmtime: a response's bytes become a dict here, a guest's ``error``
object becomes a typed error, and each op's response is shape-checked before a match sees it.
"""

from __future__ import annotations

from typing import Any

import orjson

from tablehost.errors import GuestProtocolError

OP_SETUP, OP_ACTIONS, OP_STEP, OP_SCORES, OP_GAME_OVER = 1, 2, 3, 4, 5
OP_PLAYOUT, OP_SEARCH = 7, 8
"""ABI v1.1 ops (docs/abi.md "playout", "search"); their answers are checked by :mod:`tablehost.inguest`."""
OP_NAMES = {OP_SETUP: "setup", OP_ACTIONS: "actions", OP_STEP: "step", OP_SCORES: "scores", OP_GAME_OVER: "game_over",
            OP_PLAYOUT: "playout", OP_SEARCH: "search"}

SDK_REF_CACHE_SIZE = 16
"""Entries of the SDK's state cache (docs/abi.md "State references"); mirrored per instance."""

_RESPONSE_SHAPES: dict[int, dict[str, type]] = {
    OP_SETUP: {"state": dict, "patches": list, "rng_used": bool, "score_labels": list,
               "scores": dict, "game_over": bool, "actions": dict},
    OP_ACTIONS: {"actions": list},
    OP_STEP: {"patches": list, "rng_used": bool, "allow_undo": bool, "scores": dict,
              "game_over": bool, "actions": dict},
    OP_SCORES: {"scores": dict},
    OP_GAME_OVER: {"game_over": bool, "scores": dict},
}
"""Required top-level keys of each op's response and their JSON types (docs/abi.md "Ops")."""


class StateMiss(Exception):
    """The instance does not hold the ``state_ref`` it was sent; resend with the full state."""


def parse_response(raw: bytes, op_name: str) -> dict[str, Any]:
    """Parse a response's bytes: a UTF-8 JSON object whose ``printed``, if any, is a string.

    Raises:
        GuestProtocolError: the bytes are not such an object.
    """
    try:
        response = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise GuestProtocolError(f"guest {op_name} answered with invalid JSON or UTF-8: {exc}", op=op_name) from exc
    if not isinstance(response, dict):
        raise GuestProtocolError(f"guest {op_name} answered with a JSON {type(response).__name__}, not an object",
                                 op=op_name)
    printed = response.get("printed", "")
    if not isinstance(printed, str):
        raise GuestProtocolError(f"guest {op_name} answered with a non-string 'printed'", op=op_name)
    return response


def raise_guest_error(error: Any, response: dict[str, Any], op_name: str, *, by_ref: bool) -> None:
    """Raise what a response's ``error`` object ``{code, message}`` means (docs/abi.md "Errors").

    Args:
        by_ref: the request carried a ``state_ref`` (only then is ``state_miss`` legitimate).

    Raises:
        StateMiss: ``state_miss`` to a request by reference.
        GuestProtocolError: any other error object, or a malformed one.
    """
    printed = response.get("printed", "")
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        raise GuestProtocolError(f"guest {op_name} answered with a malformed error object", op=op_name,
                                 printed=printed)
    code, text = error["code"], error.get("message", "")
    if code == "state_miss" and by_ref:
        raise StateMiss(op_name)
    if code == "state_miss":
        raise GuestProtocolError(f"guest {op_name} answered state_miss to a request carrying the full state",
                                 op=op_name, guest_code=code, printed=printed)
    raise GuestProtocolError(f"guest {op_name} refused the request: {code}: {text}", op=op_name,
                             guest_code=code, printed=printed)


def _check_shape(op: int, response: dict[str, Any], op_name: str, *, want_state: bool) -> None:
    """Check the response's top-level keys, and every offered action and score entry.

    A match stores offers and scores as the guest sent them, so anything malformed must be
    refused here, before any state changes (docs/abi.md "Ops").
    """
    for key, kind in _RESPONSE_SHAPES.get(op, {}).items():
        if not isinstance(response.get(key), kind):
            _malformed(response, op_name, f"lacks {key!r} of type {kind.__name__}")
    if want_state and not isinstance(response.get("state"), dict):
        _malformed(response, op_name, "lacks 'state' of type dict")
    actions = response.get("actions")
    if op == OP_ACTIONS:
        _check_offers(actions, response, op_name)
    elif isinstance(actions, dict):
        for offers in actions.values():
            _check_offers(offers, response, op_name)
    scores = response.get("scores")
    if isinstance(scores, dict):
        for score in scores.values():
            if not isinstance(score, dict) or not isinstance(score.get("public_points", []), list):
                _malformed(response, op_name, "has a score that is not {public_points, private_points}")


_INTENTS = frozenset(("choice", "confirm", "cancel", "undo"))


def _check_offers(offers: Any, response: dict[str, Any], op_name: str) -> None:
    # Exact type checks (JSON gives plain dicts, lists and strs): this runs for every offer of every move.
    if type(offers) is not list:
        _malformed(response, op_name, "has an action list that is not a list")
    for offer in offers:
        if (
            type(offer) is not dict
            or type(offer.get("action")) is not dict
            or offer.get("intent") not in _INTENTS
            or type(offer.get("label", "")) is not str
        ):
            _malformed(response, op_name, "offers an action that is not {action, intent, label}")


def _malformed(response: dict[str, Any], op_name: str, what: str) -> None:
    raise GuestProtocolError(f"guest {op_name} response {what}", op=op_name, printed=response.get("printed", ""))
