"""Caps on open watch streams (gRPC WatchMatch, the HTTP API's event streams), so watchers
cannot take every request thread.

The sync grpc server gives each open stream a worker thread for its whole life, and the HTTP
API's event stream holds a thread of its own pool. Without a cap one token opening
``max_workers`` streams leaves no thread for anybody's moves.

One token's cap (``serve --watches-per-token``) holds over both transports: ``serve`` makes one
:class:`WatchSlots` for gRPC and hands the HTTP API its :meth:`~WatchSlots.sibling`, which counts
the same token's streams together with gRPC's and keeps a server-wide total of its own (each
transport's threads are its own), as both share one :class:`~tablehost.api.rate_limit.RequestGate`.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Hashable, Iterator
from contextlib import contextmanager

from tablehost.api.faults import TooManyWatchers

WATCHES_PER_TOKEN = 4
"""Open watch streams one token may hold (a player's client seldom needs more than one)."""


def watch_share(max_workers: int) -> int:
    """The server-wide cap of watch streams for ``max_workers`` request threads.

    Three quarters of the threads, and always at least one thread left for unary calls
    (one watcher at minimum, so a 2-thread server still streams).

    Returns:
        A count >= 1.
    """
    return max(1, min(max_workers - 1, max_workers * 3 // 4))


class WatchSlots:
    """Counts open watch streams per token and in total; thread-safe.

    Args:
        total: the most streams open at once on the server (through these slots).
        per_token: the most streams one token may hold at once (through these slots and every
            :meth:`sibling` of them together).
    """

    def __init__(self, total: int, per_token: int = WATCHES_PER_TOKEN) -> None:
        self.total = total
        self.per_token = per_token
        self._lock = threading.Lock()
        self._open: Counter[Hashable] = Counter()  # per token, shared with the siblings
        self._count = 0

    @property
    def open(self) -> int:
        """Streams open now through these slots (a sibling's are its own)."""
        return self._count

    def sibling(self, total: int) -> WatchSlots:
        """Slots for another transport's streams: the same per-token count and cap as these (a
        token's streams over both add up), a server-wide ``total`` of their own.

        Args:
            total: the most streams open at once through the sibling.

        Returns:
            The new slots; their :attr:`open` counts only their own streams.
        """
        other = WatchSlots(total, self.per_token)
        other._lock, other._open = self._lock, self._open
        return other

    @contextmanager
    def hold(self, token: Hashable) -> Iterator[None]:
        """Hold one slot for ``token`` while the ``with`` body runs.

        Args:
            token: what identifies the caller's token (its principal).

        Raises:
            TooManyWatchers: the token holds ``per_token`` streams, or the server ``total``.
        """
        with self._lock:
            if self._open[token] >= self.per_token:
                raise TooManyWatchers(
                    f"this token already has {self.per_token} watch streams open (the most one token "
                    "may hold, over gRPC and HTTP together); close one first"
                )
            if self._count >= self.total:
                raise TooManyWatchers(
                    f"the server has {self.total} watch streams open (its limit, leaving threads for "
                    "moves); try again later"
                )
            self._open[token] += 1
            self._count += 1
        try:
            yield
        finally:
            with self._lock:
                self._open[token] -= 1
                if self._open[token] == 0:
                    del self._open[token]
                self._count -= 1
