"""Caps on open WatchMatch streams, so watchers cannot take every request thread.

The sync grpc server gives each open stream a worker thread for its whole life. Without a
cap one token opening ``max_workers`` streams leaves no thread for anybody's moves.
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
        total: the most streams open at once on the server.
        per_token: the most streams one token may hold at once.
    """

    def __init__(self, total: int, per_token: int = WATCHES_PER_TOKEN) -> None:
        self.total = total
        self.per_token = per_token
        self._lock = threading.Lock()
        self._open: Counter[Hashable] = Counter()
        self._count = 0

    @property
    def open(self) -> int:
        """Streams open now."""
        return self._count

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
                    "may hold); close one first"
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
