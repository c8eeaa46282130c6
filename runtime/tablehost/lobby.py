"""The lobby: a match whose seats are not all taken yet (status ``waiting``).

A :class:`PendingMatch` is what CreateMatch stores when it leaves seats open: the module,
the resolved options, the time control and the seats, some reserved with a name and some
open. :meth:`PendingMatch.take_seat` hands out open seats one at a time; the registry calls
it under the match's lock, so racing joins get distinct seats or :class:`SeatTaken`. When
the last seat is taken the registry runs the game's setup with every seat's name, and the
pending entry becomes an ordinary match.

The stored form (``to_json``) is the ``matches.setup`` column of a waiting match; it carries
``"status": "waiting"`` and no ``"setup"`` member, so the store and the registry tell it from a
started match's record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tablehost.errors import MatchError, TablehostError
from tablehost.history import RECORD_FORMAT, PlayerInfo
from tablehost.types import PlayerId

WAITING = "waiting"


class SeatTaken(MatchError):
    """JoinMatch found the chosen seat taken, no seat open, or the match already started."""

    code = "match/seat_taken"


class NoSuchSeat(TablehostError):
    """JoinMatch asked for a seat the match does not have (0, negative, past its last seat): a
    malformed request (``request/invalid``, INVALID_ARGUMENT / HTTP 400), not a taken seat."""

    code = "request/invalid"


@dataclass
class PendingSeat:
    """One seat of a waiting match.

    Attributes:
        player_id: the seat's id (1, 2, ...).
        color: its display colour.
        username: the player's name once taken; None while the seat is open.
    """

    player_id: PlayerId
    color: str
    username: str | None = None

    @property
    def open(self) -> bool:
        """Nobody holds the seat yet."""
        return self.username is None


@dataclass
class PendingMatch:
    """A match waiting for players.

    Attributes:
        match_id, module_sha256, module_name, created_at: as for a match.
        seats: every seat in seat order.
        options: the resolved options (every declared option).
        time_control: the time control's JSON form (``{}`` for none).
        bots: seats the server will play (player id -> bot name), taken at creation.
    """

    match_id: str
    module_sha256: str
    module_name: str
    created_at: str
    seats: list[PendingSeat]
    options: dict[str, Any] = field(default_factory=dict)
    time_control: dict[str, Any] = field(default_factory=dict)
    bots: dict[PlayerId, str] = field(default_factory=dict)

    @property
    def open_seats(self) -> list[PlayerId]:
        """The player ids of the open seats, in seat order."""
        return [seat.player_id for seat in self.seats if seat.open]

    @property
    def full(self) -> bool:
        """Every seat is taken."""
        return not self.open_seats

    def take_seat(self, username: str, player_id: PlayerId | None = None) -> PendingSeat:
        """Give ``username`` the seat ``player_id``, or the lowest open one.

        Does not change this object: the caller stores the join first, then calls
        :meth:`commit`.

        Returns:
            A copy of the seat with ``username`` set.

        Raises:
            NoSuchSeat: ``player_id`` is not one of the seats (1 to the seat count):
                ``"seat 0 does not exist: match m-... has seats 1 to 2"``.
            SeatTaken: the seat is taken, or no seat is open.
        """
        if player_id is None:
            if self.full:
                raise SeatTaken(f"match {self.match_id} has no open seat", match_id=self.match_id)
            player_id = self.open_seats[0]
        seat = next((s for s in self.seats if s.player_id == player_id), None)
        if seat is None:
            raise NoSuchSeat(
                f"seat {player_id} does not exist: match {self.match_id} has seats 1 to {len(self.seats)}",
                match_id=self.match_id,
            )
        if not seat.open:
            raise SeatTaken(
                f"seat {player_id} of match {self.match_id} is taken; open seats: {self.open_seats or 'none'}",
                match_id=self.match_id,
            )
        return PendingSeat(seat.player_id, seat.color, username)

    def commit(self, taken: PendingSeat) -> None:
        """Record a stored join (from :meth:`take_seat`)."""
        for seat in self.seats:
            if seat.player_id == taken.player_id:
                seat.username = taken.username

    def players(self) -> list[PlayerInfo]:
        """The seats as players (call when :attr:`full`)."""
        return [PlayerInfo(s.player_id, s.username or f"player{s.player_id}", s.color) for s in self.seats]

    def to_json(self) -> dict[str, Any]:
        """The stored form (``matches.setup`` of a waiting match)."""
        return {
            "format": RECORD_FORMAT,
            "status": WAITING,
            "match_id": self.match_id,
            "module": {"sha256": self.module_sha256, "name": self.module_name},
            "seats": [{"player_id": s.player_id, "color": s.color, "username": s.username} for s in self.seats],
            "options": self.options,
            "time_control": self.time_control,
            "bots": {str(pid): name for pid, name in sorted(self.bots.items())},
            "created_at": self.created_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PendingMatch:
        """Inverse of :meth:`to_json`. Raises ``KeyError``/``TypeError`` on a malformed dict."""
        return cls(
            match_id=str(data["match_id"]),
            module_sha256=str(data["module"]["sha256"]),
            module_name=str(data["module"].get("name", "")),
            created_at=str(data["created_at"]),
            seats=[PendingSeat(int(s["player_id"]), str(s["color"]), s.get("username")) for s in data["seats"]],
            options=dict(data.get("options") or {}),
            time_control=dict(data.get("time_control") or {}),
            bots={int(pid): str(name) for pid, name in (data.get("bots") or {}).items()},
        )


def is_pending(stored: dict[str, Any]) -> bool:
    """Whether a stored ``matches.setup`` value is a waiting match (not a started one's record)."""
    return stored.get("status") == WAITING and "setup" not in stored
