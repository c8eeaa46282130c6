"""View deltas: one viewer's table at version *n + 1* as a change of its table at version *n*.

A delta (dict form) holds the spaces and players that differ (whole, by id), the new
``meta_data`` when it changed, how many log lines dropped off the front and which were
appended, and the active player ids. :func:`diff_views` makes one, or returns ``None`` when
the two tables differ in shape (a space or player added, removed or reordered, a log that
was not only appended to, such as after an undo): the caller sends the whole view then.
:func:`apply_delta` rebuilds the newer table; ``apply_delta(old, diff_views(old, new)) == new``
for every pair it accepts (tested with hypothesis).

Both tables are view dicts (:func:`tablehost.view.view_state`'s shape), never states: a
delta holds only what its viewer may see.
"""

from __future__ import annotations

from typing import Any

MAX_LOG_SCAN = 64
"""Most appended log lines looked for; a change beyond that sends the whole view."""


def _log_change(old: list[Any], new: list[Any]) -> tuple[int, list[Any]] | None:
    """``(dropped, appended)`` with ``old[dropped:] + appended == new``, fewest appended first."""
    for appended in range(min(len(new), MAX_LOG_SCAN) + 1):
        kept = len(new) - appended
        dropped = len(old) - kept
        if dropped < 0:
            continue
        if old[dropped:] == new[:kept]:
            return dropped, new[kept:]
    return None


def diff_views(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """The delta from table ``old`` to table ``new`` (view dicts), or None to send ``new`` whole.

    Returns:
        ``{"spaces": [space], "players": [player], "meta_data": dict (only when changed),
        "log_dropped": int, "log_appended": [entry], "active_player_ids": [int]}``.
    """
    old_spaces, new_spaces = old.get("spaces", []), new.get("spaces", [])
    if [s["space_id"] for s in old_spaces] != [s["space_id"] for s in new_spaces]:
        return None
    old_players, new_players = old.get("players", []), new.get("players", [])
    if [p["player_id"] for p in old_players] != [p["player_id"] for p in new_players]:
        return None
    log = _log_change(old.get("log", []), new.get("log", []))
    if log is None:
        return None
    delta: dict[str, Any] = {
        "spaces": [n for o, n in zip(old_spaces, new_spaces) if o != n],
        "players": [n for o, n in zip(old_players, new_players) if o != n],
        "log_dropped": log[0],
        "log_appended": log[1],
        "active_player_ids": list(new.get("active_player_ids", [])),
    }
    if old.get("meta_data", {}) != new.get("meta_data", {}):
        delta["meta_data"] = new.get("meta_data", {})
    return delta


def apply_delta(old: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """The table ``delta`` turns ``old`` into (a new dict; ``old`` is not changed).

    Raises:
        ValueError: the delta names a space or player that ``old`` lacks, or drops more log
            lines than it has.
    """
    spaces = {s["space_id"]: s for s in delta.get("spaces", [])}
    players = {p["player_id"]: p for p in delta.get("players", [])}
    known_spaces = {s["space_id"] for s in old.get("spaces", [])}
    known_players = {p["player_id"] for p in old.get("players", [])}
    if not set(spaces) <= known_spaces or not set(players) <= known_players:
        raise ValueError("the delta changes a space or player the previous view does not have")
    log = list(old.get("log", []))
    dropped = int(delta.get("log_dropped", 0))
    if dropped > len(log):
        raise ValueError(f"the delta drops {dropped} log lines of {len(log)}")
    return {
        "active_player_ids": list(delta.get("active_player_ids", [])),
        "players": [players.get(p["player_id"], p) for p in old.get("players", [])],
        "spaces": [spaces.get(s["space_id"], s) for s in old.get("spaces", [])],
        "meta_data": delta["meta_data"] if "meta_data" in delta else old.get("meta_data", {}),
        "log": log[dropped:] + list(delta.get("log_appended", [])),
    }
