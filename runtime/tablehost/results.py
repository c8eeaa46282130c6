"""The result of a finished match: each seat's rank, the winners, and how it ended.

Ranks follow standard competition ranking ("1224"): a seat's rank is one more than the
number of seats strictly ahead of it, so tied seats share a rank and the next rank is
skipped. The ordering comes from the module's declared result rule
(:data:`tablehost.metadata.RESULT_RULES`):

- ``highest_score`` / ``lowest_score``: by each seat's first public score;
- ``ranks``: the ranks the game itself sent with ``game_over`` (checked by :func:`check_ranks`).

A match that ends early (a seat resigned or timed out under the ``forfeit`` policy) ranks
that seat last and the others by the same rule among themselves (by score so far; under the
``ranks`` rule, the others share first place). An aborted match has no ranks and no winners.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tablehost.errors import GuestProtocolError
from tablehost.types import PlayerId

END_REASONS = ("normal", "resigned", "timeout", "aborted")
"""How a match ended: game over by the rules; a seat resigned; a seat's clock ran out under the
``forfeit`` policy; the admin aborted it."""


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

    Returns:
        The result; with no usable ordering (no scores, no ranks) every seat shares rank 1.
    """
    if ended_by == "aborted":
        return MatchResult(ended_by="aborted")
    early = [pid for pid in resigned if pid != player_id]
    if player_id is not None and ended_by in ("resigned", "timeout"):
        early.append(player_id)
    others = [pid for pid in player_ids if pid not in early]
    if ended_by == "normal" and rule == "ranks" and game_ranks is not None:
        ranks = competition_ranks({pid: float(game_ranks[pid]) for pid in others})
    else:
        firsts = first_scores(scores, others) if rule != "ranks" else None
        if firsts is None:
            ranks = {pid: 1 for pid in others}
        else:
            sign = -1.0 if rule == "highest_score" else 1.0
            ranks = competition_ranks({pid: sign * value for pid, value in firsts.items()})
    for place, pid in enumerate(reversed(early)):  # the last to give up ranks just behind the others
        ranks[pid] = len(others) + 1 + place
    ordered = {pid: ranks[pid] for pid in player_ids if pid in ranks}
    winners = [pid for pid in player_ids if ordered.get(pid) == 1]
    return MatchResult(ordered, winners, ended_by, player_id)
