"""Match clocks: a time control per match, kept by the server, persisted with every move.

Two time controls (docs in README "Clocks"):

- **per move**: a seat has ``per_move_ms`` for each turn; its clock is set to that when it
  becomes active and again when its turn ends;
- **Fischer**: each seat starts with ``main_ms``; the time it spends while active is taken off,
  and ``increment_ms`` is added when its turn ends (once, however many clicks the turn took).

An undo journals no clocks: they are rebuilt from the newest move not taken back, so the time
the undone moves earned is gone and the seats to move are charged from then on (the registry's
``_stored_clocks``).

Every seat in ``active_player_ids`` has its clock running (all of them in a simultaneous
phase), except the *untimed* seats: a match's server bot seats, whose effort is bounded by
their iterations and the per-decision budget, and whose wait behind other matches' searches is
the server's delay, not the seat's. An untimed seat's time never changes (no charge, no
increment), so it never times out. Which seats are untimed is not journaled: every process
reads it off the stored match (its ``bots``), so clocks rebuilt from the stored moves agree
everywhere. A seat whose running clock reaches 0 times out; the registry applies the policy
(``forfeit``: the match ends, result ``timeout``; ``zombie``: the host plays for the seat).

Durability: each journaled move and undo carries the clocks right after it
(``{"at_ms", "remaining": {"<pid>": ms}}``, ``at_ms`` wall-clock milliseconds since the Unix
epoch), so a restarted server knows every seat's time as of the last change. Downtime policy:
**time while the server is down is charged to nobody.** The server writes a heartbeat
(:class:`Heartbeat`, one small file, once a second); on restart a running clock is charged
from the last change up to the last heartbeat, and runs on from the restart. A seat thus
loses at most the one second between heartbeats beyond what it really used, and gains the
downtime only. Several processes on one PostgreSQL database: a process's heartbeat cannot
tell whether the others were serving, so there a match's clocks are restored from its stored
moves charged up to now (:meth:`Clocks.restore` with ``charged_until_ms`` = now), the same in
every process; time while every process is down is charged. A match that ended early
(timeout, resign, abort) journals the ending's time, not clocks: its clocks are charged up to
that time (:meth:`Clocks.at_end`), wherever and whenever it is loaded again.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tablehost.types import PlayerId

POLICIES = ("forfeit", "zombie")
HEARTBEAT_FILENAME = "heartbeat"
HEARTBEAT_INTERVAL_S = 1.0
MAX_CLOCK_SECONDS = 365 * 24 * 3600
"""Longest time or increment ``--clock`` takes, seconds (a year: beyond any correspondence game)."""
MIN_CLOCK_SECONDS = 1
"""Shortest main or per-move time ``--clock`` and CreateMatch take, seconds: ``--clock 0.001``
ended the match on time at the first view. An increment may be smaller (``0`` is none)."""


def now_ms() -> int:
    """Wall-clock milliseconds since the Unix epoch."""
    return int(time.time() * 1000)


def iso_to_ms(text: Any) -> int | None:
    """Wall ms of an ISO 8601 time with a zone (a record's ``at``), or None when it is not one."""
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        return None
    return int(moment.timestamp() * 1000)


@dataclass(frozen=True)
class TimeControl:
    """A match's time control; all zero means none.

    Attributes:
        main_ms: each seat's main time (Fischer), milliseconds.
        increment_ms: added after each of a seat's moves (Fischer), milliseconds.
        per_move_ms: a fixed limit per move instead of main time, milliseconds.
        on_timeout: ``"forfeit"`` or ``"zombie"``.
    """

    main_ms: int = 0
    increment_ms: int = 0
    per_move_ms: int = 0
    on_timeout: str = "forfeit"

    def __post_init__(self) -> None:
        if min(self.main_ms, self.increment_ms, self.per_move_ms) < 0:
            raise ValueError("clock times are milliseconds >= 0")
        if self.main_ms and self.per_move_ms:
            raise ValueError("a time control is per move or main time + increment, not both")
        if self.increment_ms and not self.main_ms:
            raise ValueError("an increment needs main time")
        if self.on_timeout not in POLICIES:
            raise ValueError(f"on_timeout must be forfeit or zombie, not {self.on_timeout!r}")

    @property
    def enabled(self) -> bool:
        """There is a clock."""
        return bool(self.main_ms or self.per_move_ms)

    @property
    def starting_ms(self) -> int:
        """A seat's time at the start (and, per move, at each turn)."""
        return self.per_move_ms or self.main_ms

    def to_json(self) -> dict[str, Any]:
        """``{}`` for none, else every field."""
        if not self.enabled:
            return {}
        return {
            "main_ms": self.main_ms,
            "increment_ms": self.increment_ms,
            "per_move_ms": self.per_move_ms,
            "on_timeout": self.on_timeout,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> TimeControl:
        """Inverse of :meth:`to_json`. Raises ``ValueError`` on bad values."""
        data = data or {}
        return cls(
            int(data.get("main_ms", 0)),
            int(data.get("increment_ms", 0)),
            int(data.get("per_move_ms", 0)),
            str(data.get("on_timeout", "forfeit")),
        )

    @classmethod
    def parse(cls, text: str, on_timeout: str = "forfeit") -> TimeControl:
        """``"SECONDS"`` (per move) or ``"SECONDS+INCREMENT"`` (Fischer), as the CLI's ``--clock``.

        Args:
            text: ``"20"`` (20 s per move) or ``"300+5"`` (5 minutes each, 5 s more per move).
            on_timeout: ``"forfeit"`` or ``"zombie"``.

        Returns:
            The time control (milliseconds, rounded).

        Raises:
            ValueError: not of that form, a time below :data:`MIN_CLOCK_SECONDS` (1 s), a
                negative increment, not a finite number, or above :data:`MAX_CLOCK_SECONDS`.
        """
        main, plus, increment = text.partition("+")
        if not text.isascii() or "_" in text:  # float() takes "１０" and "1_0"
            raise ValueError(f"--clock {text[:40]!r} is not SECONDS or SECONDS+INCREMENT in ASCII digits")
        try:
            seconds = float(main)
            extra = float(increment) if plus else 0.0
        except ValueError:
            raise ValueError(f"--clock {text!r} is not SECONDS or SECONDS+INCREMENT") from None
        if not (math.isfinite(seconds) and math.isfinite(extra)) or seconds <= 0 or extra < 0:
            raise ValueError(f"--clock {text!r}: the time must be > 0 and the increment >= 0")
        if seconds < MIN_CLOCK_SECONDS:
            raise ValueError(f"--clock {text!r}: the time is at least {MIN_CLOCK_SECONDS} second")
        if max(seconds, extra) > MAX_CLOCK_SECONDS:
            raise ValueError(f"--clock {text!r}: at most {MAX_CLOCK_SECONDS} seconds (a year)")
        if plus:
            return cls(main_ms=round(seconds * 1000), increment_ms=round(extra * 1000), on_timeout=on_timeout)
        return cls(per_move_ms=round(seconds * 1000), on_timeout=on_timeout)


@dataclass
class Clocks:
    """Every seat's remaining time as of ``since_ms``, and whose clocks run.

    Attributes:
        control: the time control.
        remaining: player id -> milliseconds left at ``since_ms``.
        running: the seats whose clocks run (the active seats that are not ``untimed``).
        since_ms: wall-clock ms of the last change.
        untimed: the seats whose clocks never run (a match's server bot seats); their time
            stays as it is, never charged and never given an increment.
    """

    control: TimeControl
    remaining: dict[PlayerId, int]
    running: list[PlayerId] = field(default_factory=list)
    since_ms: int = 0
    untimed: frozenset[PlayerId] = frozenset()

    @classmethod
    def start(
        cls,
        control: TimeControl,
        player_ids: list[PlayerId],
        active: list[PlayerId],
        at_ms: int,
        untimed: Iterable[PlayerId] = (),
    ) -> Clocks:
        """Clocks at the start of a match: everyone at :attr:`TimeControl.starting_ms`.

        Args:
            player_ids: every seat.
            active: the seats to move first.
            at_ms: the start's wall ms.
            untimed: the seats whose clocks never run (server bot seats).
        """
        never = frozenset(untimed)
        remaining = {pid: control.starting_ms for pid in player_ids}
        return cls(control, remaining, _timed(active, never), at_ms, never)

    def left_ms(self, player_id: PlayerId, at_ms: int) -> int:
        """``player_id``'s time at ``at_ms`` (negative once it ran out)."""
        left = self.remaining[player_id]
        if player_id in self.running:
            left -= max(0, at_ms - self.since_ms)
        return left

    def expired(self, at_ms: int) -> list[PlayerId]:
        """The running seats whose time is up at ``at_ms``, in seat order of ``running``."""
        return [pid for pid in self.running if self.left_ms(pid, at_ms) <= 0]

    def next_deadline_ms(self) -> int | None:
        """When the first running clock reaches 0 (wall ms), or None when none runs."""
        if not self.running:
            return None
        return self.since_ms + min(self.remaining[pid] for pid in self.running)

    def after(self, mover: PlayerId | None, active_after: list[PlayerId], at_ms: int) -> Clocks:
        """The clocks after a change at ``at_ms`` (a move by ``mover``, or an undo when None).

        Running seats are charged the time since the last change (never below 0); a mover whose
        turn this move ended (it is not in ``active_after``) gets the increment (Fischer) or a
        fresh ``per_move_ms``, once per turn: a move of several clicks (``choice`` actions) earns
        no time per click, and a mover still to move keeps its clock running. A seat that becomes
        active under a per-move control starts a fresh ``per_move_ms``. An :attr:`untimed` seat's
        time is left as it is, and its clock does not run after.
        """
        control = self.control
        remaining = {pid: max(0, self.left_ms(pid, at_ms)) for pid in self.remaining}
        turn_ended = mover is not None and mover not in active_after
        if turn_ended and mover in remaining and mover not in self.untimed:
            if control.per_move_ms:
                remaining[mover] = control.per_move_ms
            else:
                remaining[mover] += control.increment_ms
        running_after = _timed(active_after, self.untimed)
        if control.per_move_ms:
            for pid in running_after:
                if pid not in self.running and pid in remaining:
                    remaining[pid] = control.per_move_ms
        return Clocks(control, remaining, running_after, at_ms, self.untimed)

    def to_json(self) -> dict[str, Any]:
        """The journaled form ``{"at_ms", "remaining": {"<pid>": ms}}``."""
        return {"at_ms": self.since_ms, "remaining": {str(pid): ms for pid, ms in self.remaining.items()}}

    @classmethod
    def restore(
        cls,
        control: TimeControl,
        saved: dict[str, Any],
        active: list[PlayerId],
        charged_until_ms: int,
        now: int,
        untimed: Iterable[PlayerId] = (),
    ) -> Clocks:
        """Clocks after a restart (the downtime policy of the module docstring).

        Args:
            saved: the newest journaled ``{"at_ms", "remaining"}``.
            active: the active seats of the current state.
            charged_until_ms: the last heartbeat before the stop (time up to it is charged).
            now: the restart's wall ms.
            untimed: the seats whose clocks never run (the stored match's server bot seats):
                never charged, never running.

        Raises:
            KeyError, TypeError, ValueError, AttributeError: ``saved`` is not of the journaled form.
        """
        never = frozenset(untimed)
        running = _timed(active, never)
        at_ms = int(saved["at_ms"])
        remaining = {int(pid): int(ms) for pid, ms in saved["remaining"].items()}
        used = max(0, min(charged_until_ms, now) - at_ms)
        for pid in running:
            if pid in remaining:
                remaining[pid] = max(0, remaining[pid] - used)
        return cls(control, remaining, running, now, never)

    @classmethod
    def at_end(
        cls,
        control: TimeControl,
        saved: dict[str, Any],
        active: list[PlayerId],
        ended_ms: int,
        untimed: Iterable[PlayerId] = (),
    ) -> Clocks:
        """The stopped clocks of a match that ended early (timeout, resign, abort), rebuilt from
        its stored moves: the seats that were to move are charged from the newest saved clocks
        up to the end, as the process that ended it charged them (a seat that timed out shows 0).

        Args:
            saved: the newest journaled ``{"at_ms", "remaining"}`` (or the start's).
            active: the seats that were to move when the match ended.
            ended_ms: the ending's wall ms.
            untimed: the seats whose clocks never run (server bot seats): never charged.

        Raises:
            KeyError, TypeError, ValueError, AttributeError: ``saved`` is not of the journaled form.
        """
        return cls.restore(control, saved, active, ended_ms, ended_ms, untimed).after(None, [], ended_ms)

    def view(self, at_ms: int) -> list[dict[str, Any]]:
        """``[{"player_id", "remaining_ms", "running"}]`` at ``at_ms``, in player id order."""
        return [
            {
                "player_id": pid,
                "remaining_ms": max(0, self.left_ms(pid, at_ms)),
                "running": pid in self.running,
            }
            for pid in sorted(self.remaining)
        ]


def _timed(active: Iterable[PlayerId], untimed: Collection[PlayerId]) -> list[PlayerId]:
    """The seats of ``active`` whose clocks run: those not in ``untimed``, in ``active``'s order."""
    return [pid for pid in active if pid not in untimed]


class Heartbeat:
    """The server's "still alive at" mark: a file holding wall ms, rewritten once a second.

    Args:
        data_dir: the data directory.
    """

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / HEARTBEAT_FILENAME
        self._last = 0.0

    def read(self) -> int | None:
        """The last beat (wall ms), or None when there is none."""
        try:
            return int(self.path.read_text().strip())
        except (OSError, ValueError):
            return None

    def beat(self, force: bool = False) -> None:
        """Write the current time, at most once per :data:`HEARTBEAT_INTERVAL_S` unless ``force``."""
        now = time.monotonic()
        if not force and now - self._last < HEARTBEAT_INTERVAL_S:
            return
        self._last = now
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(str(now_ms()))
        os.replace(temporary, self.path)
