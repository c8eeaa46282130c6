"""What a server knows of a match it does not hold in memory: its ListMatches summary, and
whether it must be held anyway (something runs in it without a request).

A server starting over a big store does not rebuild every match (:meth:`MatchRegistry.__init__
<tablehost.api.registry.MatchRegistry>`): it reads each stored record once, keeps the match's
summary (a few hundred bytes), and loads the match itself on its first request, exactly as an
evicted one. The summary of a started match is read off its record without running the game:
the result after the last event comes from the record's ``outcome`` entries (format 2,
``docs/architecture.md``), the active seats from replaying the recorded patches
(:func:`tablehost.record.state_at`). A format-1 record kept no outcomes: :func:`started_summary`
answers None and the caller loads the match.

A match must be held in memory while it is not over and either has a time control (its clocks
run: a timeout needs no request) or a seat the server moves for is to move: a server bot seat
(:mod:`tablehost.api.server_bots`) or an absent seat the host plays for (resigned under the
``continue`` rule, or whose newest own move the host played after a timeout).
"""

from __future__ import annotations

from typing import Any

from tablehost.clocks import TimeControl
from tablehost.history import Outcome
from tablehost.lobby import PendingMatch
from tablehost.match import Match
from tablehost.metadata import GameMetadata
from tablehost.record import ParsedRecord, state_at
from tablehost.results import check_ranks, compute_result, journaled_partners

LOBBY_STATUSES = ("waiting", "aborted")
"""Summary statuses of a match that never started (held, when in memory, in the lobby)."""


def live_summary(match: Match) -> dict[str, Any]:
    """The ListMatches summary of a started match in memory.

    Returns:
        ``{match_id, module_id, module_name, players: [PlayerInfo], version, game_over,
        active_player_ids, created_at, status, result (MatchResult or None), open_seats: [],
        options, time_control}`` (the time control without its ``started_at_ms`` stamp).
    """
    return {
        "match_id": match.match_id,
        "module_id": match.module_sha256,
        "module_name": match.module_name,
        "players": list(match.players),
        "version": match.version,
        "game_over": match.game_over,
        "active_player_ids": [] if match.game_over else match.active_player_ids,
        "created_at": match.created_at,
        "status": match.status,
        "result": match.result,
        "open_seats": [],
        "options": dict(match.setup.get("options") or {}),
        "time_control": _shown_time_control(match.time_control),
    }


def started_summary(parsed: ParsedRecord, metadata: GameMetadata) -> dict[str, Any] | None:
    """The summary :func:`live_summary` gives for ``parsed`` once resumed, read off the record
    alone (no guest call); None for a format-1 record (no recorded outcomes).

    Args:
        parsed: the stored record of a started match.
        metadata: its module's checked metadata (the result rule).

    Raises:
        RecordError, PatchError: the record is inconsistent (as resuming it would).
    """
    if not parsed.has_results:
        return None
    outcomes: list[Outcome] = [parsed.setup["outcome"]]
    for kind, move in parsed.events():  # as Match.restore: an undo takes its move's outcome back
        if kind == "move":
            outcomes.append(move.outcome)
        elif kind == "undo":
            outcomes.pop()
    last = outcomes[-1]
    ids = [p.player_id for p in parsed.players]
    ending = parsed.ending or {}
    by_rules = bool(last["game_over"])
    game_over = by_rules or parsed.ending is not None
    ranks = None
    if by_rules and last.get("ranks") is not None and metadata.result == "ranks":
        ranks = check_ranks(last["ranks"], ids)
    result = None
    if game_over:
        result = compute_result(
            ids, metadata.result, last["scores"], ranks,
            ended_by=ending.get("ended_by", "normal"), player_id=ending.get("player_id"),
            resigned=[int(r["player_id"]) for r in parsed.resignations],
            partners=journaled_partners([*parsed.resignations, parsed.ending]),
        )
    status = "aborted" if ending.get("ended_by") == "aborted" else ("finished" if game_over else "active")
    return {
        "match_id": parsed.match_id,
        "module_id": parsed.module_sha256,
        "module_name": parsed.module_name,
        "players": list(parsed.players),
        "version": parsed.version,
        "game_over": game_over,
        "active_player_ids": [] if game_over else list(state_at(parsed)["active_player_ids"]),
        "created_at": parsed.created_at,
        "status": status,
        "result": result,
        "open_seats": [],
        "options": dict(parsed.setup.get("options") or {}),
        "time_control": _shown_time_control(parsed.time_control),
    }


def waiting_summary(pending: PendingMatch, aborted: bool) -> dict[str, Any]:
    """The summary of a match waiting for players (``aborted``: the admin aborted it while it
    waited): version 0, no table; keys as :func:`live_summary`."""
    from tablehost.history import PlayerInfo

    return {
        "match_id": pending.match_id,
        "module_id": pending.module_sha256,
        "module_name": pending.module_name,
        "players": [PlayerInfo(s.player_id, s.username or "", s.color) for s in pending.seats],
        "version": 0,
        "game_over": aborted,
        "active_player_ids": [],
        "created_at": pending.created_at,
        "status": "aborted" if aborted else "waiting",
        "result": None,
        "open_seats": [] if aborted else pending.open_seats,
        "options": pending.options,
        "time_control": pending.time_control,
    }


def must_run(parsed: ParsedRecord, summary: dict[str, Any]) -> bool:
    """Whether the started match ``parsed`` (with its :func:`started_summary`) must be held in
    memory without a request: not over, and timed, or a server bot or absent seat is active."""
    if summary["game_over"]:
        return False
    if TimeControl.from_json(parsed.time_control).enabled:
        return True
    active = set(summary["active_player_ids"])
    if active & set(parsed.bots):
        return True
    absent = {int(r["player_id"]) for r in parsed.resignations}
    newest: dict[int, bool] = {}
    for move in parsed.moves:  # seq order: the newest own move that was not taken back wins
        if not move.undone:
            newest[move.player_id] = move.by_host
    absent |= {player_id for player_id, by_host in newest.items() if by_host}
    return bool(active & absent)


def _shown_time_control(time_control: dict[str, Any]) -> dict[str, Any]:
    """A time control as listed: without the ``started_at_ms`` stamp."""
    return {k: v for k, v in time_control.items() if k != "started_at_ms"}
