"""What the API accepts and sends: the rules for names, addresses and the message size limits.

Names end up in every view and record, so an unbounded one would make every later response
of its match too large to send; they are checked before anything is stored.
"""

from __future__ import annotations

import re

from tablehost.api.faults import InvalidRequest

USERNAME_MAX_CHARS = 64
COLOR_MAX_CHARS = 32
MODULE_NAME_MAX_CHARS = 200
"""The ``modules.name`` column is ``VARCHAR(200)`` (:mod:`tablehost.store`)."""

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""Largest message the server sends and the client receives, bytes (views, records, lists).
grpc's own default (4 MiB on receive) is below what a long match's record can reach."""

_COLOR = re.compile(r"[A-Za-z0-9#]{1,32}")
"""A colour: a short name or CSS-like ``#rgb`` / ``#rrggbb`` (which this pattern covers)."""
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
    """Return ``color`` if the API accepts it.

    Args:
        color: empty (the server picks one), ``#rgb``, ``#rrggbb`` or a short name of at most
            32 characters from ``[A-Za-z0-9#]`` (``red``, ``navy``).

    Raises:
        InvalidRequest: anything else.
    """
    if color and not _COLOR.fullmatch(color):
        raise InvalidRequest(
            f"a color is empty, #rgb, #rrggbb or a name of at most {COLOR_MAX_CHARS} letters and digits; "
            f"got {color[:40]!r}"
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
