"""Per-token request rate limits: a token bucket per bearer token.

Every ``tablehost.v1`` request (a WatchMatch counts once, when it opens) takes one token from
its bearer token's bucket; an empty bucket refuses the request with RESOURCE_EXHAUSTED
(``request/rate_limited``) and says in the ``retry-after-ms`` trailing metadata when one
token will be back. The defaults are far above what a person or the bundled bots and benches
send (a saturated tic-tac-toe match sends a few hundred requests per second per seat), and
stop one token from taking a server's whole capacity. Open watch streams are capped per token
apart from this (:mod:`tablehost.api.watch_slots`).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

from tablehost.api.faults import RateLimited

DEFAULT_REQUESTS_PER_S = 2000.0
"""Sustained requests per second one token may send."""
DEFAULT_BURST = 4000
"""Requests one token may send at once after a quiet spell (the bucket's size)."""
MAX_TRACKED_TOKENS = 100_000
"""Buckets kept at most; full buckets are forgotten first (they carry no state)."""


@dataclass(frozen=True)
class RateLimits:
    """The per-token request budget.

    Attributes:
        requests_per_s: sustained requests per second per token; 0 turns the limit off.
        burst: the most requests a token may send at once (>= 1).
    """

    requests_per_s: float = DEFAULT_REQUESTS_PER_S
    burst: int = DEFAULT_BURST

    def __post_init__(self) -> None:
        if self.requests_per_s < 0 or self.burst < 1:
            raise ValueError(f"rate limits need requests_per_s >= 0 and burst >= 1, got {self}")


class RateLimiter:
    """Token buckets keyed by a token's hash; thread-safe.

    Args:
        limits: the budget of every token.
        clock: seconds, monotonic (tests pass a fake).
    """

    def __init__(self, limits: RateLimits, clock: object = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)

    def take(self, key: str) -> None:
        """Take one request from ``key``'s bucket.

        Raises:
            RateLimited: the bucket is empty; ``retry_after_ms`` says when one request is back.
        """
        rate = self.limits.requests_per_s
        if rate == 0:
            return
        now = self._clock()  # type: ignore[operator]
        burst = float(self.limits.burst)
        with self._lock:
            tokens, at = self._buckets.get(key, (burst, now))
            tokens = min(burst, tokens + (now - at) * rate)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                wait_ms = max(1, math.ceil((1.0 - tokens) / rate * 1000))
                raise RateLimited(
                    f"this token sent more than {rate:g} requests per second (burst {self.limits.burst}); "
                    f"retry in {wait_ms} ms",
                    retry_after_ms=wait_ms,
                )
            self._buckets[key] = (tokens - 1.0, now)
            if len(self._buckets) > MAX_TRACKED_TOKENS:
                self._forget_full(now)

    def _forget_full(self, now: float) -> None:
        rate, burst = self.limits.requests_per_s, float(self.limits.burst)
        for key, (tokens, at) in list(self._buckets.items()):
            if tokens + (now - at) * rate >= burst:
                del self._buckets[key]
