"""The result of a finished match: each seat's rank, the winners, and how it ended.

Ranks follow standard competition ranking ("1224"): a seat's rank is one more than the
number of seats strictly ahead of it, so tied seats share a rank and the next rank is
skipped. The ordering comes from the module's declared result rule
(:data:`tablehost.metadata.RESULT_RULES`):

- ``highest_score`` / ``lowest_score``: by each seat's first public score;
- ``ranks``: the ranks the game itself sent with ``game_over`` (checked by :func:`check_ranks`).

A match that ends early (a seat resigned or timed out under the ``forfeit`` policy) ranks
that seat last, together with its partners, and the others by the same rule among themselves
on the scores at that moment, as game over would have ranked them (under the ``ranks`` rule the
game sends ranks only with game over, so the others share first place). A partnership rises
and falls together: a game declares its partnerships in ``meta_data["teams"]``
(:func:`declared_teams`), and the partners of a seat that gives up are journaled with its
resignation or ending (``"partners"``, :func:`journaled_partners`), so a resume or a replay
ranks from what was journaled. An ending or resignation journaled before partners were
(no ``"partners"`` member) ranks its seat alone, as it was ranked then. An aborted match has
no ranks and no winners.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tablehost.errors import GuestProtocolError
from tablehost.types import PlayerId

END_REASONS = ("normal", "resigned", "timeout", "aborted")
"""How a match ended: game over by the rules; a seat resigned; a seat's clock ran out under the
``forfeit`` policy; the admin aborted it."""

TEAMS_KEY = "teams"
"""``meta_data`` key of a partnership game: lists of 0-based seat indexes playing together
(spades: ``[[0, 2], [1, 3]]``)."""


@dataclass(frozen=True)
class MatchResult:
    """The result of a finished or aborted match.

    Attributes:
        ranks: player id -> rank (1 = first; ties share a rank); empty when aborted.
        winners: the player ids ranked first, in seat order; empty when aborted.
        ended_by: one of :data:`END_REASONS`.
        player_id: the seat that resigned or timed out (None otherwise).
    """

    ranks: dict[PlayerId, int] = field(default_factory=dict)
    winners: list[PlayerId] = field(default_factory=list)
    ended_by: str = "normal"
    player_id: PlayerId | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"ranks": {"<pid>": rank}, "winners": [pid], "ended_by", "player_id"}``."""
        return {
            "ranks": {str(pid): rank for pid, rank in self.ranks.items()},
            "winners": list(self.winners),
            "ended_by": self.ended_by,
            "player_id": self.player_id,
        }


def competition_ranks(keys: dict[PlayerId, float]) -> dict[PlayerId, int]:
    """Rank seats by ``keys`` (smaller key = better): 1 + the number of seats with a smaller key."""
    return {pid: 1 + sum(1 for other in keys.values() if other < key) for pid, key in keys.items()}


def first_scores(scores: dict[str, Any], player_ids: Sequence[PlayerId]) -> dict[PlayerId, float] | None:
    """Each seat's first public score, or None when a seat has none (the game keeps no score)."""
    firsts: dict[PlayerId, float] = {}
    for pid in player_ids:
        points = (scores.get(str(pid)) or {}).get("public_points") or []
        if not points or not isinstance(points[0], (int, float)):
            return None
        firsts[pid] = float(points[0])
    return firsts


def declared_teams(meta_data: Mapping[str, Any], seat_count: int) -> list[list[int]]:
    """The partnerships a game declares in its state's ``meta_data["teams"]``, as seat indexes.

    The value comes from the game (untrusted) and may change with any move, so it is read
    whole or not at all: it must be a list of lists of 0-based seat indexes (integers, not
    booleans, below ``seat_count``), each seat in at most one list. Anything else declares no
    partnership; the host never refuses a move over it.

    Args:
        meta_data: the state's ``meta_data``.
        seat_count: how many seats the match has.

    Returns:
        The teams with their seats as given (empty lists dropped); ``[]`` when the game
        declares none or the value is malformed.
    """
    value = meta_data.get(TEAMS_KEY)
    if not isinstance(value, list):
        return []
    teams: list[list[int]] = []
    seen: set[int] = set()
    for team in value:
        if not isinstance(team, list):
            return []
        for seat in team:
            if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < seat_count or seat in seen:
                return []
            seen.add(seat)
        if team:
            teams.append(list(team))
    return teams


def declared_partners(
    meta_data: Mapping[str, Any], player_ids: Sequence[PlayerId], player_id: PlayerId
) -> list[PlayerId]:
    """The seats that play together with ``player_id`` by the teams the game declares now.

    Args:
        meta_data: the state's ``meta_data`` (see :func:`declared_teams`).
        player_ids: the seats in seat order (seat index i is ``player_ids[i]``).
        player_id: a seated id.

    Returns:
        Its partners' player ids in seat order, without ``player_id``; ``[]`` when it plays
        alone (no team, or none declared).
    """
    for team in declared_teams(meta_data, len(player_ids)):
        members = [player_ids[seat] for seat in sorted(team)]
        if player_id in members:
            return [pid for pid in members if pid != player_id]
    return []


def journaled_partners(events: Iterable[Mapping[str, Any] | None]) -> dict[PlayerId, list[PlayerId]]:
    """The partners journaled with each resignation or ending, for :func:`compute_result`.

    Args:
        events: resignations (``{"seq", "player_id", "partners"?, "at"}``) and an ending
            (``{"seq", "ended_by", "player_id", "partners"?, "at"}``); None entries are skipped.

    Returns:
        player id -> the partners journaled with it. An event without ``"partners"`` (journaled
        before partners were) adds nothing: its seat ranks alone, as it did when it happened.
    """
    found: dict[PlayerId, list[PlayerId]] = {}
    for event in events:
        if event is not None and event.get("player_id") is not None and "partners" in event:
            found[int(event["player_id"])] = [int(pid) for pid in event["partners"]]
    return found


def check_ranks(raw: Any, player_ids: Sequence[PlayerId]) -> dict[PlayerId, int]:
    """Check the ``ranks`` a game sent with ``game_over`` and return them keyed by int id.

    Args:
        raw: the response member: ``{"<pid>": rank}``.
        player_ids: the seated ids.

    Returns:
        player id -> rank.

    Raises:
        GuestProtocolError: not an object, a key that is not a seated id, a seat missing, or a
            rank that is not an integer in 1..len(player_ids).
    """
    if not isinstance(raw, dict):
        raise GuestProtocolError("the game's ranks are not an object keyed by player id", op="ranks")
    seated = {str(pid): pid for pid in player_ids}
    if set(raw) != set(seated):
        raise GuestProtocolError(
            f"the game's ranks name seats {sorted(raw)[:8]}, not exactly the seated {sorted(seated)}", op="ranks"
        )
    ranks: dict[PlayerId, int] = {}
    for key, rank in raw.items():
        if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= len(player_ids):
            raise GuestProtocolError(
                f"the game's rank for player {key} is {str(rank)[:20]}, not an integer 1..{len(player_ids)}",
                op="ranks",
            )
        ranks[seated[key]] = rank
    return ranks


def compute_result(
    player_ids: Sequence[PlayerId],
    rule: str,
    scores: dict[str, Any],
    game_ranks: dict[PlayerId, int] | None,
    *,
    ended_by: str = "normal",
    player_id: PlayerId | None = None,
    resigned: Sequence[PlayerId] = (),
    partners: Mapping[PlayerId, Sequence[PlayerId]] | None = None,
) -> MatchResult:
    """The result of a match that ended.

    Args:
        player_ids: the seats in seat order.
        rule: the module's result rule.
        scores: the final scores (``{"<pid>": {"public_points": [...]}}``).
        game_ranks: the game's own ranks (rule ``ranks``, normal end), else None.
        ended_by: one of :data:`END_REASONS`.
        player_id: the seat that resigned or timed out.
        resigned: seats that resigned earlier while the others played on, in order; they rank
            behind every other seat, the first to resign last.
        partners: for a seat that resigned or timed out, the seats that fall with it
            (:func:`journaled_partners`); they share its rank. A seat already fallen with an
            earlier one keeps that earlier place. Ids that are not seated are ignored.

    Returns:
        The result; with no usable ordering (no scores, no ranks) every seat shares rank 1.
    """
    if ended_by == "aborted":
        return MatchResult(ended_by="aborted")
    early = [pid for pid in resigned if pid != player_id]
    if player_id is not None and ended_by in ("resigned", "timeout"):
        early.append(player_id)
    seated = set(player_ids)
    fallen: list[list[PlayerId]] = []  # in the order they gave up: a seat with its partners
    out: set[PlayerId] = set()
    for pid in early:
        side = [m for m in [pid, *(partners or {}).get(pid, ())] if m in seated and m not in out]
        if side:
            fallen.append(side)
            out.update(side)
    others = [pid for pid in player_ids if pid not in out]
    if ended_by == "normal" and rule == "ranks" and game_ranks is not None:
        ranks = competition_ranks({pid: float(game_ranks[pid]) for pid in others})
    else:
        firsts = first_scores(scores, others) if rule != "ranks" else None
        if firsts is None:
            ranks = {pid: 1 for pid in others}
        else:
            sign = -1.0 if rule == "highest_score" else 1.0
            ranks = competition_ranks({pid: sign * value for pid, value in firsts.items()})
    place = len(others) + 1
    for side in reversed(fallen):  # the last to give up ranks just behind the others
        for pid in side:
            ranks[pid] = place
        place += len(side)
    ordered = {pid: ranks[pid] for pid in player_ids if pid in ranks}
    winners = [pid for pid in player_ids if ordered.get(pid) == 1]
    return MatchResult(ordered, winners, ended_by, player_id)
