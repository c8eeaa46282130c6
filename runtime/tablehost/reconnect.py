"""Riding out a lost server: which failures are outages, the backoff, and what the user is told.

The long-running client commands (``tablehost bots``, ``tablehost watch``) hold a session
with the server: a WatchMatch stream, and for a bot the moves it submits. When the server goes
away mid-session (restarted, or one process of several behind a load balancer gone), the
session says so once on stderr, tries again after a backoff (0.5 s, doubling, at most 5 s, or
longer when the server asked for it with ``retry-after-ms``), and on success says so and goes
on from the server's current view. After ``--reconnect-for`` seconds of failed attempts it gives
up with the failure of before. A session the server never answered (a mistyped address, no
server started) fails at once, as does every failure that is not an outage (a refusal such as
PERMISSION_DENIED, NOT_FOUND, INVALID_ARGUMENT, a refused move).

A bot never repeats a move across an outage: it decides again on the first view after
reconnecting. A move submitted just before the server died may still have been stored; the
new view shows it, and a move chosen on an older view could not land anyway (SubmitAction
refuses an ``expected_version`` that is not the current one, ``match/stale_version``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from tablehost.client import ApiError, ServerUnreachable

DEFAULT_RECONNECT_FOR_S = 60.0
"""``--reconnect-for``'s default: seconds a lost session keeps trying (0: give up at once)."""

OUTAGE_CODES = frozenset({"store/unavailable"})
"""Host error codes that mean "this server cannot serve now, try again", not a refusal."""


def is_outage(exc: ApiError) -> bool:
    """Whether ``exc`` says the server is gone or cannot serve for now (worth retrying).

    Args:
        exc: a client failure (:class:`~tablehost.client.ApiError`).

    Returns:
        True for no answer at all (:class:`~tablehost.client.ServerUnreachable`: gRPC
        UNAVAILABLE without a host code, a broken stream included) and for the codes of
        :data:`OUTAGE_CODES` (``store/unavailable``); False for every refusal, the client's own
        deadline and ``module/quarantined`` (an answer about the game, not the server).
    """
    return isinstance(exc, ServerUnreachable) or exc.code in OUTAGE_CODES


def outage_reason(exc: ApiError | None) -> str:
    """A few words for the stderr line that reports the loss: what was seen.

    Args:
        exc: the failure, or None when the watch stream ended before game over (a server that
            stops cleanly ends its streams).
    """
    if exc is None:
        return "the server ended the watch stream"
    if exc.code is not None:
        return exc.code
    return "no answer"


@dataclass(frozen=True)
class Backoff:
    """Waits between reconnection attempts.

    Attributes:
        first_s: the wait before the first attempt, seconds (> 0).
        cap_s: the longest wait, seconds (>= ``first_s``); each wait doubles the one before
            until it reaches this.

    Raises:
        ValueError: a wait that is not a positive finite number, or ``cap_s < first_s``.
    """

    first_s: float = 0.5
    cap_s: float = 5.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.first_s) and math.isfinite(self.cap_s) and 0 < self.first_s <= self.cap_s):
            raise ValueError(
                f"a backoff waits 0 < first_s <= cap_s seconds, got {self.first_s} and {self.cap_s}"
            )

    def delay_s(self, attempt: int) -> float:
        """The wait before attempt number ``attempt`` (0 for the first), seconds."""
        return min(self.cap_s, self.first_s * 2.0 ** min(attempt, 64))


DEFAULT_BACKOFF = Backoff()


class Session:
    """Whether one client session retries after a failure, and its stderr lines about it.

    The caller reports every view it receives (:meth:`answered`) and, after a failure, asks
    :meth:`retry`, which waits the backoff and says whether to connect again. One outage runs
    from the first failed call after a view to the next view; it gets one "lost" line, one
    "reconnected" line, and at most ``reconnect_for_s`` seconds.

    Args:
        who: what the session is, in the lines it writes (``"tablehost watch: match m-1"``);
            the caller may change :attr:`who` once it knows more (a bot's seat).
        address: the server's ``host:port``, named in the lines.
        reconnect_for_s: seconds an outage may last before :meth:`retry` gives up (0: it
            always gives up, the behaviour before reconnection existed).
        say: writes one line for the user (stderr).
        backoff: the waits between attempts.
        wait: sleeps the given seconds and returns True when the session must stop instead
            (``threading.Event.wait``); default: sleeps, never stops.
        clock: monotonic seconds (tests pass a fake one).

    Raises:
        ValueError: ``reconnect_for_s`` negative or not finite.
    """

    def __init__(
        self,
        who: str,
        address: str,
        reconnect_for_s: float,
        say: Callable[[str], None],
        *,
        backoff: Backoff = DEFAULT_BACKOFF,
        wait: Callable[[float], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not (math.isfinite(reconnect_for_s) and reconnect_for_s >= 0):
            raise ValueError(f"reconnect_for_s is 0 or more seconds, got {reconnect_for_s}")
        self.who = who
        self.address = address
        self.reconnect_for_s = reconnect_for_s
        self._say = say
        self._backoff = backoff
        self._wait = wait or _sleep
        self._clock = clock
        self.established = False
        """True once the server answered this session with a view: only then does it retry."""
        self._lost_at: float | None = None
        self._attempts = 0

    @property
    def in_outage(self) -> bool:
        """True from a failure :meth:`retry` chose to ride out until the next :meth:`answered`."""
        return self._lost_at is not None

    def answered(self, version: int) -> None:
        """Note a view from the server; after an outage, say that the session is back.

        Args:
            version: the view's match version (named in the "reconnected" line).
        """
        self.established = True
        if self._lost_at is None:
            return
        down_s = self._clock() - self._lost_at
        self._lost_at = None
        self._attempts = 0
        self._say(
            f"{self.who}: reconnected to {self.address} after {down_s:.1f} s; continuing from version {version}"
        )

    def retry(self, exc: ApiError | None) -> bool:
        """After a failure, wait before the next attempt; whether to make it.

        Args:
            exc: the failure, or None when the watch stream ended before game over.

        Returns:
            True after waiting the backoff (or the server's ``retry-after-ms`` when longer, but
            never past the outage's end): connect again. False at once when the session never
            had a view, ``exc`` is not an outage (:func:`is_outage`), ``reconnect_for_s`` is 0,
            the outage has lasted ``reconnect_for_s`` seconds, or ``wait`` said stop: the
            caller gives up as it did before reconnection existed. The first True of an
            outage says on stderr that the server was lost and for how long the session retries.
        """
        if not self.established or self.reconnect_for_s <= 0:
            return False
        if exc is not None and not is_outage(exc):
            return False
        now = self._clock()
        if self._lost_at is None:
            self._lost_at = now
            self._attempts = 0
            self._say(
                f"{self.who}: lost the server at {self.address} ({outage_reason(exc)}); retrying for up to "
                f"{self.reconnect_for_s:g} s"
            )
        remaining_s = self._lost_at + self.reconnect_for_s - now
        if remaining_s <= 0:
            return False
        delay_s = self._backoff.delay_s(self._attempts)
        if exc is not None and exc.retry_after_ms is not None:
            delay_s = max(delay_s, exc.retry_after_ms / 1000.0)
        self._attempts += 1
        return not self._wait(min(delay_s, remaining_s))


def _sleep(seconds: float) -> bool:
    time.sleep(seconds)
    return False
