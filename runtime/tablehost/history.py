"""What a match's history holds: seats, accepted moves and the result after each version.

Shared by :mod:`tablehost.match` (which writes the history) and :mod:`tablehost.record`
(which stores and replays it), so neither imports the other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

import orjson

from tablehost.errors import BudgetExceeded, GuestError, TablehostError
from tablehost.types import ActionDict, PlayerId, Seed

__all__ = [
    "RECORD_FORMAT",
    "RECORD_FORMAT_1",
    "FailureRecord",
    "MoveRecord",
    "Outcome",
    "PlayerInfo",
    "SetupRecord",
    "build_record",
    "keep_printed",
    "offers_digest",
]

RECORD_FORMAT = "tablehost.record/2"
"""The record format this host writes: format 1 plus each version's result (``outcome``) and
what the game printed (``printed``). See docs/architecture.md "Records"."""

RECORD_FORMAT_1 = "tablehost.record/1"
"""The older format, still read: it kept no results, so replay cannot compare them."""


def offers_digest(
    actions: Mapping[str, Sequence[Any]] | Mapping[int, Sequence[Any]],
) -> str:
    """The sha256 (hex) of the offers per player, as canonical JSON (keys sorted, ids as strings).

    Args:
        actions: the offers of every player who has any, keyed by player id (int or decimal).

    Returns:
        64 hex digits; equal offers give equal digests whatever their key types.
    """
    canonical = orjson.dumps(
        {str(pid): offers for pid, offers in actions.items()},
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
    )
    return hashlib.sha256(canonical).hexdigest()


def keep_printed(printed: Any, limit: int) -> str:
    """The newest ``limit`` characters of what a call printed (``""`` for none), marked when cut."""
    if type(printed) is not str or not printed:
        return ""
    if len(printed) <= limit:
        return printed
    return "[…earlier output dropped]\n" + printed[-limit:]


def keep_message(message: str, limit: int) -> str:
    """The first ``limit`` characters of a failure's message, marked when cut."""
    return message if len(message) <= limit else message[:limit] + " […truncated]"


class Outcome(TypedDict):
    """The result of the state after a version, as journaled (record format 2).

    Keys:
        scores: ``{"<pid>": {"public_points": [float], "private_points": [float]}}``.
        game_over: no action is accepted any more.
        offers_sha256: :func:`offers_digest` of the offers of that state.
        ranks: ``{"<pid>": rank}`` the game sent with ``game_over`` (only then, and only for a
            game whose result rule is ``ranks``; :mod:`tablehost.results`).
    """

    scores: dict[str, Any]
    game_over: bool
    offers_sha256: str
    ranks: NotRequired[dict[str, Any]]


class SetupRecord(TypedDict, total=False):
    """The ``setup`` member of a record.

    Keys:
        seed: the setup seed (u64).
        state: the state the game's config built (as the guest wrote it).
        patches: the patches prepare made.
        rng_used: the setup drew randomness.
        score_labels: names of the score columns.
        outcome: the :class:`Outcome` of the starting state (format 2; absent in format 1).
        printed: what setup printed, bounded (format 2; may be absent).
        options: the match's resolved options (ABI v1.1), when not empty.
    """

    seed: int
    state: dict[str, Any]
    patches: list[dict[str, Any]]
    rng_used: bool
    score_labels: list[str]
    outcome: Outcome
    printed: str
    options: dict[str, Any]


@dataclass(frozen=True)
class PlayerInfo:
    """One seat of a match.

    Attributes:
        player_id: the id the game sees (u32, unique in the match).
        username: display name.
        color: display colour, e.g. ``"#c0392b"``.
    """

    player_id: PlayerId
    username: str
    color: str

    def to_json(self) -> dict[str, Any]:
        """Return ``{"player_id", "username", "color"}`` as sent to the guest's ``setup``."""
        return {"player_id": self.player_id, "username": self.username, "color": self.color}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlayerInfo:
        """Inverse of :meth:`to_json`. Raises ``KeyError``/``TypeError`` on a malformed dict."""
        return cls(int(data["player_id"]), str(data["username"]), str(data["color"]))


@dataclass
class MoveRecord:
    """One accepted move, as the history and the record keep it.

    Attributes:
        seq: the match version right after this move (1-based).
        player_id: who moved.
        action: the action as the guest saw it (guest addresses).
        seed: the 64-bit seed the move ran with.
        patches: the patches the move produced, in order.
        rng_used: the game drew randomness (the move can never be undone).
        allow_undo: the game called ``allow_undo``.
        at: UTC timestamp (ISO 8601).
        view_action: the action in the mover's view addresses, when it came through a view.
        picked: the host chose among indistinguishable hidden pieces at random (counts as randomness).
        undone: the move was taken back; ``undo_seq`` is the version of that undo.
        outcome: scores, game over and the offers' digest after the move (None: a format-1
            record, which did not keep them).
        printed: what the game printed during the move, bounded (admin only; not compared).
        by_host: the host played this move for an absent seat (a timeout under the ``zombie``
            policy, or a resigned seat under the ``continue`` rule).
        clocks: every seat's clock right after the move (:meth:`tablehost.clocks.Clocks.to_json`),
            or None when the match has no clock.
    """

    seq: int
    player_id: PlayerId
    action: ActionDict
    seed: Seed
    patches: list[dict[str, Any]]
    rng_used: bool
    allow_undo: bool
    at: str
    view_action: ActionDict | None = None
    picked: bool = False
    undone: bool = False
    undo_seq: int | None = None
    outcome: Outcome | None = None
    printed: str = ""
    by_host: bool = False
    clocks: dict[str, Any] | None = None
    revealed: bool = field(default=False, compare=False)
    """Set by the match when it applies the move (not recorded: recomputed on resume)."""

    @property
    def undoable(self) -> bool:
        """True when the move itself permits undo: allowed by the game and no randomness drawn."""
        return self.allow_undo and not self.rng_used and not self.picked

    def to_json(self) -> dict[str, Any]:
        """Return the record form documented in docs/architecture.md (the journal payload too)."""
        data: dict[str, Any] = {
            "seq": self.seq,
            "player_id": self.player_id,
            "action": self.action,
            "view_action": self.view_action,
            "seed": self.seed,
            "patches": self.patches,
            "rng_used": self.rng_used,
            "allow_undo": self.allow_undo,
            "picked": self.picked,
            "undone": self.undone,
            "undo_seq": self.undo_seq,
            "at": self.at,
        }
        if self.outcome is not None:
            data["outcome"] = self.outcome
        if self.printed:
            data["printed"] = self.printed
        if self.by_host:
            data["by_host"] = True
        if self.clocks is not None:
            data["clocks"] = self.clocks
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MoveRecord:
        """Inverse of :meth:`to_json`. Raises ``KeyError``/``TypeError`` on a malformed dict."""
        return cls(
            seq=int(data["seq"]),
            player_id=int(data["player_id"]),
            action=data["action"],
            seed=int(data["seed"]),
            patches=list(data["patches"]),
            rng_used=bool(data["rng_used"]),
            allow_undo=bool(data["allow_undo"]),
            at=str(data.get("at", "")),
            view_action=data.get("view_action"),
            picked=bool(data.get("picked", False)),
            undone=bool(data.get("undone", False)),
            undo_seq=data.get("undo_seq"),
            outcome=data.get("outcome"),
            printed=str(data.get("printed") or ""),
            by_host=bool(data.get("by_host", False)),
            clocks=data.get("clocks"),
        )


@dataclass(frozen=True)
class FailureRecord:
    """How a game played by bots failed after setup: the record's ``failure`` member.

    The match stays as it was before the failure (platform rule 2): the record holds the
    moves accepted before it, and this says what went wrong next, in the fields of the
    server's ``guest.call_failed`` log entry (``code``, ``op``, ``budget``, ``message``,
    ``printed``) and, for the move that failed, those of a :class:`MoveRecord`.

    Attributes:
        version: the match version the failure happened at (``replay --at VERSION`` shows
            the state the failed move was tried on); equal to the record's version.
        code: the error's stable code (``guest/panic``, ``guest/budget``, ``match/stuck``...).
        message: the error's message, at most ``limit`` characters (:func:`keep_message`).
        op: the guest call that failed (``step``, ``search``...), ``""`` when none did.
        budget: for ``guest/budget``, the budget that ran out (``fuel``, ``wall_ms``...), else None.
        printed: what the game printed during the failed call, the newest ``limit`` characters
            (:func:`keep_printed`); ``""`` for nothing.
        move: the move that failed, ``{"player_id", "action", "view_action", "seed", "picked"}``
            (guest addresses, as :meth:`MoveRecord.to_json` names them), or None when the game
            failed outside a move (a search bot's ``search`` call, or no one offered anything).
        at: UTC timestamp (ISO 8601) of the failure.
    """

    version: int
    code: str
    message: str
    op: str = ""
    budget: str | None = None
    printed: str = ""
    move: dict[str, Any] | None = None
    at: str = ""

    @classmethod
    def of(
        cls, exc: TablehostError, version: int, move: dict[str, Any] | None, *, limit: int, at: str = ""
    ) -> FailureRecord:
        """The failure ``exc`` at ``version`` while ``move`` (or no move) was tried.

        Args:
            exc: the error the game failed with.
            version: the match version it failed at.
            move: the move tried, as :attr:`move` describes it, or None.
            limit: characters kept of the message and of what the game printed
                (:attr:`tablehost.limits.AnswerLimits.printed_kept_chars`).
            at: the UTC timestamp to record.
        """
        return cls(
            version=version,
            code=exc.code,
            message=keep_message(exc.message, limit),
            op=exc.op if isinstance(exc, GuestError) else "",
            budget=exc.budget if isinstance(exc, BudgetExceeded) else None,
            printed=keep_printed(exc.printed, limit) if isinstance(exc, GuestError) else "",
            move=move,
            at=at,
        )

    def same_failure(self, other: FailureRecord) -> bool:
        """Whether ``other`` is this failure again: the same code, op and budget and, but for a
        budget (whose message names the budget's size, which replay may widen), the same message."""
        if (self.code, self.op, self.budget) != (other.code, other.op, other.budget):
            return False
        return self.code == "guest/budget" or self.message == other.message

    def describe(self) -> str:
        """One line for people: ``"guest/panic: step exploded (step of player 2's move at version
        1)"``, or ``"... (search at version 3, outside a move)"``. It holds module text: escape
        it before printing (:func:`tablehost.terminal.escape_controls`)."""
        if self.move is not None:
            where = f"player {self.move['player_id']}'s move at version {self.version}"
            where = f"{self.op} of {where}" if self.op else where
        else:
            where = f"{self.op + ' ' if self.op else ''}at version {self.version}, outside a move"
        return f"{self.code}: {self.message} ({where})"

    def to_json(self) -> dict[str, Any]:
        """The record's ``failure`` member; ``printed`` is absent when empty (as a move's)."""
        data: dict[str, Any] = {
            "version": self.version,
            "code": self.code,
            "message": self.message,
            "op": self.op,
            "budget": self.budget,
            "move": self.move,
            "at": self.at,
        }
        if self.printed:
            data["printed"] = self.printed
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FailureRecord:
        """Inverse of :meth:`to_json` (checked by :func:`tablehost.record.parse_record`).
        Raises ``KeyError``/``TypeError`` on a malformed dict."""
        return cls(
            version=int(data["version"]),
            code=str(data["code"]),
            message=str(data["message"]),
            op=str(data.get("op") or ""),
            budget=data.get("budget"),
            printed=str(data.get("printed") or ""),
            move=data.get("move"),
            at=str(data.get("at") or ""),
        )


def build_record(
    *,
    match_id: str,
    module_sha256: str,
    module_name: str,
    players: list[PlayerInfo],
    setup: SetupRecord,
    moves: list[MoveRecord],
    created_at: str,
) -> dict[str, Any]:
    """The match record of docs/architecture.md (format :data:`RECORD_FORMAT`): everything replay needs.

    Returns:
        ``{"format", "match_id", "module": {"sha256", "name"}, "players", "setup", "moves",
        "created_at"}`` (moves in their :meth:`MoveRecord.to_json` form).
    """
    return {
        "format": RECORD_FORMAT,
        "match_id": match_id,
        "module": {"sha256": module_sha256, "name": module_name},
        "players": [p.to_json() for p in players],
        "setup": setup,
        "moves": [m.to_json() for m in moves],
        "created_at": created_at,
    }
