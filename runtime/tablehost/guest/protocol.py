"""The guest protocol of ABI v1 (docs/abi.md "Ops"): op codes, response parsing, guest error objects.

Pure data handling, no wasmtime: a response's bytes become a dict here (a repeated key is
refused), and a guest's ``error`` object becomes a typed error. What the response holds is
checked by the gate (:mod:`tablehost.gate`) before a match uses any of it.
"""

from __future__ import annotations

from typing import Any

import orjson

from tablehost.errors import GuestProtocolError
from tablehost.gate import has_duplicate_keys

OP_SETUP, OP_ACTIONS, OP_STEP, OP_SCORES, OP_GAME_OVER, OP_METADATA = 1, 2, 3, 4, 5, 6
OP_PLAYOUT, OP_SEARCH = 7, 8
"""Op codes of ABI v1; ``OP_METADATA``, ``OP_PLAYOUT`` and ``OP_SEARCH`` are ABI v1.1 (sent only to a module whose
marker returns >= 1; docs/abi.md "metadata", "playout", "search"). Playout and search answers are checked by
:mod:`tablehost.inguest`."""
OP_NAMES = {OP_SETUP: "setup", OP_ACTIONS: "actions", OP_STEP: "step", OP_SCORES: "scores", OP_GAME_OVER: "game_over",
            OP_METADATA: "metadata", OP_PLAYOUT: "playout", OP_SEARCH: "search"}

SDK_REF_CACHE_SIZE = 16
"""Entries of the SDK's state cache (docs/abi.md "State references"); mirrored per instance."""

class StateMiss(Exception):
    """The instance does not hold the ``state_ref`` it was sent; resend with the full state."""


def parse_response(raw: bytes, op_name: str) -> dict[str, Any]:
    """Parse a response's bytes: a UTF-8 JSON object whose ``printed``, if any, is a string.

    Raises:
        GuestProtocolError: the bytes are not such an object, or an object repeats a key.
    """
    try:
        response = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise GuestProtocolError(f"guest {op_name} answered with invalid JSON or UTF-8: {exc}", op=op_name) from exc
    if not isinstance(response, dict):
        raise GuestProtocolError(f"guest {op_name} answered with a JSON {type(response).__name__}, not an object",
                                 op=op_name)
    if has_duplicate_keys(raw, response):
        raise GuestProtocolError(f"guest {op_name} answered JSON with a key repeated in an object", op=op_name)
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
