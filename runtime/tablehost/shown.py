"""How a message shows a value someone gave: as JSON, the form every caller writes (``true``,
``null``, ``"7"``, ``{"type": "space_click", ...}``), never Python's (``True``, ``None``,
``'7'``), and bounded, so a huge or deeply nested value never comes back whole.

Refusals of the API, the CLI and the host's own checks (option values, actions not offered)
use these, so what a user reads can be typed back as it is shown.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

SHOWN_VALUE_CHARS = 40
"""Most characters of a caller's string a message repeats (:func:`shown_value`)."""

SHOWN_JSON_CHARS = 200
"""Most characters of a caller's JSON object a message repeats (:func:`shown_json`)."""


def shown_value(value: Any) -> str:
    """A scalar value as a message repeats it.

    Args:
        value: what the caller gave (any Python value).

    Returns:
        ``null``, ``true``/``false`` and numbers as JSON (``nan`` and ``inf`` as such, JSON has
        no word for them; an int over 128 bits as ``an int over 128 bits``: its digits may run
        to thousands); a string as a JSON string of its first :data:`SHOWN_VALUE_CHARS`
        characters, followed by ``...`` when cut (``"7"``, ``"999...9"...``); anything else
        (a list or dict may be huge or nested past the recursion limit) by its type only:
        ``a list``, ``a dict``.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return "an int over 128 bits"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # orjson writes 64 bits at most
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, float)):
        return orjson.dumps(value).decode()
    if isinstance(value, str):
        cut = "..." if len(value) > SHOWN_VALUE_CHARS else ""
        return orjson.dumps(value[:SHOWN_VALUE_CHARS]).decode() + cut
    return f"a {type(value).__name__}"


def shown_json(value: Any, limit: int = SHOWN_JSON_CHARS) -> str:
    """A value (an action, an object) as compact JSON for a message, cut to ``limit`` characters.

    Args:
        value: what the caller gave.
        limit: the most characters shown; ``...`` follows a value cut short.

    Returns:
        ``{"type":"space_click","space_id":"a1"}``; a value JSON cannot hold (a key that is not
        a string, an int beyond 64 bits, nesting deeper than orjson writes) by its type only,
        as :func:`shown_value` shows a list or dict.
    """
    try:
        text = orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError is one
        return shown_value(value) if not isinstance(value, (dict, list)) else f"a {type(value).__name__}"
    return text if len(text) <= limit else text[:limit] + "..."
