"""What the API accepts and sends: the rules for names, addresses and the message size limits.

Names end up in every view and record, so an unbounded one would make every later response
of its match too large to send; they are checked before anything is stored.
"""

from __future__ import annotations

import re
from typing import Any

from tablehost import shown
from tablehost.api.faults import InvalidRequest

USERNAME_MAX_CHARS = 64
MODULE_NAME_MAX_CHARS = 200
"""The ``modules.name`` column is ``VARCHAR(200)`` (:mod:`tablehost.store`)."""

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""Largest message the server sends and the client receives, bytes (views, records, lists).
grpc's own default (4 MiB on receive) is below what a long match's record can reach."""

_HEX_COLOR = re.compile(r"#(?:[0-9A-Fa-f]{3,4}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})")
"""CSS's hex colours: ``#rgb``, ``#rgba``, ``#rrggbb``, ``#rrggbbaa`` (either case)."""

_CSS_COLOR_WORDS = """
aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet
brown burlywood cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue
darkcyan darkgoldenrod darkgray darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange
darkorchid darkred darksalmon darkseagreen darkslateblue darkslategray darkslategrey darkturquoise
darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue firebrick floralwhite forestgreen
fuchsia gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew hotpink indianred
indigo ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan
lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen
lightskyblue lightslategray lightslategrey lightsteelblue lightyellow lime limegreen linen magenta
maroon mediumaquamarine mediumblue mediumorchid mediumpurple mediumseagreen mediumslateblue
mediumspringgreen mediumturquoise mediumvioletred midnightblue mintcream mistyrose moccasin
navajowhite navy oldlace olive olivedrab orange orangered orchid palegoldenrod palegreen
paleturquoise palevioletred papayawhip peachpuff peru pink plum powderblue purple rebeccapurple
red rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver skyblue
slateblue slategray slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet
wheat white whitesmoke yellow yellowgreen
"""
CSS_COLOR_NAMES = frozenset(_CSS_COLOR_WORDS.split())
"""The 148 named colours of CSS Color Module Level 4, lowercase (the form the web table draws:
``render.js`` takes a lowercase name or a hex colour and ignores anything else)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def check_username(username: str) -> str:
    """Return ``username`` if it is a seat name the API accepts.

    Args:
        username: 1..64 characters, no control characters (an empty one is filled in by the
            caller before this check, so empty is refused here).

    Raises:
        InvalidRequest: empty, too long, or with a control character.
    """
    if not 1 <= len(username) <= USERNAME_MAX_CHARS:
        raise InvalidRequest(f"a username has 1 to {USERNAME_MAX_CHARS} characters, got {len(username)}")
    if _CONTROL.search(username):
        raise InvalidRequest(f"username {username[:20]!r}... contains a control character")
    return username


def check_color(color: str) -> str:
    """Return ``color`` if it is a seat colour the API accepts.

    A seat's colour reaches every view and the web table, which draws it as a CSS colour; so a
    colour is one the table can draw as given, or empty.

    Args:
        color: empty (the server picks one from its palette); a CSS hex colour ``#rgb``,
            ``#rgba``, ``#rrggbb`` or ``#rrggbbaa`` (digits of either case: ``#c0392b``,
            ``#A1B``); or one of the 148 CSS colour names in lowercase (:data:`CSS_COLOR_NAMES`:
            ``red``, ``navy``, ``rebeccapurple``).

    Returns:
        ``color`` unchanged.

    Raises:
        InvalidRequest: anything else (``#12345``, ``#gggggg``, ``Red``, ``reddish``,
            ``red; background: url(x)``), naming the forms accepted.
    """
    if color and not (_HEX_COLOR.fullmatch(color) or color in CSS_COLOR_NAMES):
        hint = " (colour names are lowercase)" if color.lower() in CSS_COLOR_NAMES else ""
        raise InvalidRequest(
            "a color is empty (the server's palette), #rgb, #rgba, #rrggbb, #rrggbbaa or a CSS colour "
            f"name such as red or navy{hint}; got {color[:40]!r}"
        )
    return color


def check_module_name(name: str) -> str:
    """Return ``name`` if it is a module name the API accepts.

    Args:
        name: at most 200 characters, no control characters; empty means a default name.

    Raises:
        InvalidRequest: too long or with a control character.
    """
    if len(name) > MODULE_NAME_MAX_CHARS:
        raise InvalidRequest(f"a module name has at most {MODULE_NAME_MAX_CHARS} characters, got {len(name)}")
    if _CONTROL.search(name):
        raise InvalidRequest(f"module name {name[:20]!r}... contains a control character")
    return name


MAX_ID_CHARS = 256
"""Longest match or module id a request may name. The server issues 18 (``m-`` + 16 hex) and 64
(a module's sha256); a longer one is no id of ours and is refused without being echoed."""


def check_identifier(value: str, field: str) -> str:
    """Refuse a missing or overlong id at the API's edge, before any lookup echoes it.

    A 100 KB match id came back whole in PERMISSION_DENIED's message (and every log line).

    Args:
        value: the id as the request gives it.
        field: its field name (``match_id``, ``module_id``), for the message.

    Returns:
        ``value``, unchanged.

    Raises:
        InvalidRequest: empty (``"match_id is required"``), or longer than
            :data:`MAX_ID_CHARS` (``"match_id has at most 256 characters, got 100002"``, the id
            itself not repeated).
    """
    if not value:
        raise InvalidRequest(f"{field} is required")
    if len(value) > MAX_ID_CHARS:
        raise InvalidRequest(f"{field} has at most {MAX_ID_CHARS} characters, got {len(value)}")
    return value


MAX_TOKEN_CHARS = 256
"""Longest bearer token a client sends. The server issues 47 characters (``ths_`` + 43 url-safe,
``auth.new_token``); grpc refuses metadata over 8 KiB with its own error dump."""


def check_token(token: str) -> str:
    """Refuse a bearer token grpc cannot send, before any connection.

    grpc sends ``authorization`` metadata as printable ASCII only: a token with ``é``, a control
    character or a space failed as ``INTERNAL: Invalid metadata`` (after grpc printed its
    C-core dump), a 10 KB one as RESOURCE_EXHAUSTED, and the server never saw either.

    Args:
        token: the token as given (``--token``, ``$TABLEHOST_TOKEN``, a token file).

    Returns:
        ``token``, unchanged.

    Raises:
        ValueError: empty, longer than :data:`MAX_TOKEN_CHARS`, or with a character outside
            printable ASCII ``!``..``~`` (a space, a control character, anything non-ASCII);
            the message names the character's position and code point, never the token.
    """
    if not 1 <= len(token) <= MAX_TOKEN_CHARS:
        raise ValueError(
            f"a token has 1 to {MAX_TOKEN_CHARS} characters, this one has {len(token)} "
            "(the server issues 47: ths_..., thv_..., tha_...)"
        )
    for position, char in enumerate(token, 1):
        if not "!" <= char <= "~":
            raise ValueError(
                f"a token is printable ASCII without spaces; character {position} of this one is "
                f"U+{ord(char):04X}"
            )
    return token


def check_address(address: str, *, listening: bool = False) -> tuple[str, int]:
    """Split a ``host:port`` address, refusing what grpc would misread.

    grpc takes a port modulo 65536 (99999 became another port) and ``-1`` as 65535, so the
    range is checked here.

    Args:
        address: ``host:port``; an IPv6 host in brackets (``[::1]:50051``). A grpc
            ``unix:PATH`` address passes unchecked.
        listening: an address to listen on, where port 0 means "pick a free port".

    Returns:
        ``(host, port)``; ``(address, 0)`` for a ``unix:`` address.

    Raises:
        ValueError: no host, no port, a port that is not a number, or out of 1..65535
            (0..65535 when ``listening``).
    """
    if address.startswith("unix:"):
        return address, 0
    host, colon, port_text = address.rpartition(":")
    if not colon or not host or not port_text:
        raise ValueError(f"address {address!r} is not host:port (e.g. 127.0.0.1:50051)")
    if not port_text.isdigit():
        raise ValueError(f"address {address!r}: the port {port_text!r} is not a number")
    lowest = 0 if listening else 1
    port = int(port_text)
    if not lowest <= port <= 65535:
        raise ValueError(f"address {address!r}: the port must be {lowest} to 65535, got {port}")
    return host, port


def unknown_keys(value: dict[str, Any], keys: tuple[str, ...], what: str) -> str | None:
    """What is wrong with a JSON object that has keys outside ``keys`` (None when it has none).

    JSON (the HTTP API, ``tablehost act``) can carry keys that no gRPC message has; a typo must
    not pass unseen.

    Args:
        value: the object.
        keys: the keys it may have.
        what: the object, for the message (``"a seat"``, ``"a space_click"``).

    Returns:
        ``"<what> has no key 'x' (its keys: a, b)"`` (``keys`` when several), at most five named,
        each cut to 40 characters; or None.
    """
    unknown = [key for key in value if key not in keys]
    if not unknown:
        return None
    named = ", ".join(repr(str(key)[:40]) for key in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
    plural = "keys" if len(unknown) > 1 else "key"
    return f"{what} has no {plural} {named} (its keys: {', '.join(keys)})"


# ---------------------------------------------------------------- actions

ACTION_FIELDS: dict[str, dict[str, type]] = {
    "space_click": {"space_id": str},
    "piece_click": {"space_id": str, "index": int},
    "button_click": {"button": dict},
}
"""The fields each ABI action type needs (docs/abi.md), with their Python types."""
shown_value = shown.shown_value
"""How a refusal repeats a caller's value: as JSON, bounded (:func:`tablehost.shown.shown_value`)."""
BUTTON_FIELDS: dict[str, type] = {"id": str, "label": str, "location": str, "disabled": bool}
"""A button's fields (docs/abi.md), with their Python types; each may be left out."""


def action_type_problem(action: dict[str, Any]) -> str | None:
    """What is wrong with an action's ``type`` (None when it is one of :data:`ACTION_FIELDS`).

    Args:
        action: the action object, as the caller sent it.

    Returns:
        ``'the action has no "type" (one of space_click, piece_click, button_click)'`` when it is
        missing or null; ``"unknown action type 'teleport'; expected one of ..."`` for another
        string (at most :data:`tablehost.shown.SHOWN_VALUE_CHARS` of it repeated); ``'the action's "type"
        is a string such as space_click, got list'`` for any other value (never repeated); or None.
    """
    kind = action.get("type")
    if isinstance(kind, str) and kind in ACTION_FIELDS:
        return None
    types = ", ".join(ACTION_FIELDS)
    if kind is None:
        return f'the action has no "type" (one of {types})'
    if not isinstance(kind, str):
        return f'the action\'s "type" is a string such as space_click, got {type(kind).__name__}'
    return f"unknown action type {shown_value(kind)}; expected one of {types}"


def unknown_action_keys(action: dict[str, Any]) -> str | None:
    """What :func:`unknown_keys` says of an action with keys its type does not have, or of its
    button with keys a button does not have (None when neither has any).

    Every way in takes an action as a dict or JSON, which can carry a key no gRPC message has:
    a typo (``spaceid``) must be refused, not dropped.

    Args:
        action: an action whose ``type`` is one of :data:`ACTION_FIELDS` (see
            :func:`action_type_problem`).

    Returns:
        ``"a space_click has no key 'spaceid' (its keys: type, space_id)"``, ``"a button has no
        key 'colour' (its keys: id, label, location, disabled)"``, bounded as
        :func:`unknown_keys` bounds it; or None.
    """
    kind = action["type"]
    wrong = unknown_keys(action, ("type", *ACTION_FIELDS[kind]), f"a {kind}")
    if wrong is None and isinstance(action.get("button"), dict):
        wrong = unknown_keys(action["button"], tuple(BUTTON_FIELDS), "a button")
    return wrong
