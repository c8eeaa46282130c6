"""Per-token request rate limits: a token bucket per bearer token.

Every ``tablehost.v1`` request (a WatchMatch counts once, when it opens) takes one token from
its bearer token's bucket; an empty bucket refuses the request with RESOURCE_EXHAUSTED
(``request/rate_limited``) and says in the ``retry-after-ms`` trailing metadata when one
token will be back. The defaults are far above what a person or the bundled bots and benches
send (a saturated tic-tac-toe match sends a few hundred requests per second per seat), and
stop one token from taking a server's whole capacity. Open watch streams are capped per token
apart from this (:mod:`tablehost.api.watch_slots`).

A request with no token, or one the server does not know, has no bucket of its own (each
random token would get a fresh one), so failed authentications are limited per peer address
instead (:class:`AuthFailureLimiter`): beyond :data:`DEFAULT_AUTH_FAILURES_PER_S` a second
sustained (:data:`DEFAULT_AUTH_FAILURE_BURST` at once), a request from that address whose token
this process does not know is refused with RESOURCE_EXHAUSTED and ``retry-after-ms`` before its
token is looked up (no store query, no UNAUTHENTICATED), while the tokens the process knows keep
being served from that address (clients behind one proxy or NAT are not locked out by one of
them). Health checks and reflection are not ``tablehost.v1`` methods: never limited.

Both transports share one :class:`RequestGate` (``serve`` makes it): a token's requests over
gRPC and over the HTTP API (``serve --http``) come out of the same bucket, and an address's
failed authentications are counted together.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from tablehost.api.auth import Principal, hash_token
from tablehost.api.faults import RateLimited, Unauthenticated

DEFAULT_REQUESTS_PER_S = 2000.0
"""Sustained requests per second one token may send."""
DEFAULT_BURST = 4000
"""Requests one token may send at once after a quiet spell (the bucket's size)."""
MAX_TRACKED_TOKENS = 100_000
"""Buckets kept at most; full buckets are forgotten first (they carry no state)."""
DEFAULT_AUTH_FAILURES_PER_S = 10.0
"""Failed authentications (no token, an unknown one) per second one peer address may cause, sustained."""
DEFAULT_AUTH_FAILURE_BURST = 100
"""Failed authentications one peer address may cause at once after a quiet spell."""
MAX_TRACKED_PEERS = 100_000
"""Peer addresses whose failures are remembered at most; the longest-known go first."""


@dataclass(frozen=True)
class RateLimits:
    """The per-token request budget.

    Attributes:
        requests_per_s: sustained requests per second per token; 0 turns the limit off.
        burst: the most requests a token may send at once (>= 1).
        auth_failures_per_s: sustained failed authentications per second per peer address
            (:class:`AuthFailureLimiter`); 0 turns that limit off.
        auth_failure_burst: the most failed authentications a peer address may cause at once (>= 1).
    """

    requests_per_s: float = DEFAULT_REQUESTS_PER_S
    burst: int = DEFAULT_BURST
    auth_failures_per_s: float = DEFAULT_AUTH_FAILURES_PER_S
    auth_failure_burst: int = DEFAULT_AUTH_FAILURE_BURST

    def __post_init__(self) -> None:
        rates = (self.requests_per_s, self.auth_failures_per_s)
        bursts = (self.burst, self.auth_failure_burst)
        if not all(math.isfinite(rate) and rate >= 0 for rate in rates) or min(bursts) < 1:
            raise ValueError(f"rate limits need finite rates >= 0 and bursts >= 1, got {self}")


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


def peer_address(peer: str) -> str:
    """The address whose failed authentications are counted together, from grpc's ``context.peer()``.

    Args:
        peer: ``ipv4:10.0.0.7:53512``, ``ipv6:[2001:db8::1]:53512`` (brackets possibly
            percent-encoded), ``unix:/path`` ...

    Returns:
        ``ipv4:10.0.0.7`` (the port dropped: each connection has its own), ``ipv6:2001:db8::/64``
        (an IPv6 host usually holds a whole /64), or the scheme alone for anything else (every
        client on a unix socket shares one count).
    """
    scheme, _, rest = peer.partition(":")
    host = urllib.parse.unquote(rest).rpartition(":")[0].strip("[]")
    if scheme in ("ipv4", "ipv6") and host:
        return address_key(host)
    return scheme


def address_key(host: str) -> str:
    """The key an IP address's failed authentications are counted under, whichever transport
    they came by: ``ipv4:10.0.0.7``, or the /64 of an IPv6 address (``ipv6:2001:db8::/64``).

    Args:
        host: an IPv4 or IPv6 address (``10.0.0.7``, ``2001:db8::1``), no port or brackets.
    """
    if ":" not in host:
        return f"ipv4:{host}"
    try:
        return f"ipv6:{ipaddress.IPv6Network(f'{host}/64', strict=False)}"
    except ValueError:
        return f"ipv6:{host}"


class AuthFailureLimiter:
    """Failed authentications per peer address: a token bucket per address; thread-safe.

    A failure takes one from its address's bucket (:meth:`failed`); :meth:`over` says whether an
    address has none left and for how long. When no failure was counted for longer than a full
    bucket takes to refill, :attr:`tracking` is false and a request pays nothing for this limit
    (not even ``context.peer()``).

    Args:
        per_s: sustained failures per second per address; 0 turns the limit off.
        burst: failures an address may cause at once (>= 1).
        clock: seconds, monotonic (tests pass a fake).
    """

    def __init__(self, per_s: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_s = per_s
        self.burst = burst
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}  # address -> (failures left, at)
        self._quiet_at = -math.inf  # from then on every bucket is full again

    @property
    def tracking(self) -> bool:
        """A failure was counted recently enough that some address may be over its budget."""
        if not self._buckets:
            return False
        if self._clock() < self._quiet_at:
            return True
        with self._lock:  # every bucket has refilled: forget them all
            if self._clock() >= self._quiet_at:
                self._buckets.clear()
        return False

    def _left(self, address: str, now: float) -> float:
        left, at = self._buckets.get(address, (float(self.burst), now))
        return min(float(self.burst), left + (now - at) * self.per_s)

    def over(self, address: str) -> int | None:
        """Milliseconds until ``address`` may fail once more; None while it has failures left."""
        if self.per_s == 0 or address not in self._buckets:
            return None
        left = self._left(address, self._clock())
        if left >= 1.0:
            return None
        return max(1, math.ceil((1.0 - left) / self.per_s * 1000))

    def failed(self, address: str) -> None:
        """Count one failed authentication of ``address``."""
        if self.per_s == 0:
            return
        now = self._clock()
        with self._lock:
            self._buckets[address] = (max(0.0, self._left(address, now) - 1.0), now)
            self._quiet_at = max(self._quiet_at, now + self.burst / self.per_s)
            while len(self._buckets) > MAX_TRACKED_PEERS:
                del self._buckets[next(iter(self._buckets))]  # the address known longest

    def refusal(self, address: str, wait_ms: int) -> RateLimited:
        """The error for a request of ``address`` while it is over (:meth:`over`'s ``wait_ms``)."""
        return RateLimited(
            f"too many requests from {address} failed authentication (more than {self.per_s:g} per second, "
            f"burst {self.burst}); retry in {wait_ms} ms with a token this server knows",
            retry_after_ms=wait_ms,
            kind="auth",
        )


class _Tokens(Protocol):
    """What :meth:`RequestGate.authenticate` asks of the registry."""

    def authenticate(self, token: str, *, token_sha256: str | None = None) -> Principal: ...

    def known_principal(self, token_sha256: str) -> Principal | None: ...


class RequestGate:
    """The per-token request limit and the per-address failed-authentication limit of one
    server process, shared by its gRPC methods and its HTTP API; thread-safe.

    Args:
        limits: the budgets (default :class:`RateLimits`).

    Attributes:
        requests: the per-token buckets (:class:`RateLimiter`).
        auth_failures: the per-address failure buckets (:class:`AuthFailureLimiter`).
    """

    def __init__(self, limits: RateLimits | None = None) -> None:
        limits = limits or RateLimits()
        self.limits = limits
        self.requests = RateLimiter(limits)
        self.auth_failures = AuthFailureLimiter(limits.auth_failures_per_s, limits.auth_failure_burst)

    def authenticate(self, tokens: _Tokens, read_token: Callable[[], str], peer: Callable[[], str]) -> Principal:
        """The principal of a request's bearer token, within the token's rate and its address's
        failed-authentication limit.

        Args:
            tokens: resolves tokens (the registry).
            read_token: the request's bearer token; raises ``Unauthenticated`` when it has none.
            peer: the request's peer address key (:func:`peer_address`, or the HTTP client's
                host); called only when a failure is counted or looked up.

        Raises:
            Unauthenticated: no token or an unknown one (counted against the address).
            RateLimited: the token is over its rate; or the address is over its failures and the
                token is not one this process knows (``kind="auth"``; not looked up).
        """
        failures = self.auth_failures
        address, over_ms = None, None
        if failures.tracking:  # a failure was counted lately: is this address over its budget?
            address = peer()
            over_ms = failures.over(address)
        try:
            token = read_token()
        except Unauthenticated:
            if address is not None and over_ms is not None:
                raise failures.refusal(address, over_ms) from None
            failures.failed(address or peer())
            raise
        token_sha256 = hash_token(token)
        if address is not None and over_ms is not None:
            known = tokens.known_principal(token_sha256)
            if known is None:
                raise failures.refusal(address, over_ms)
            self.requests.take(token_sha256)
            return known
        self.requests.take(token_sha256)  # before the lookup, which may ask a shared store
        try:
            return tokens.authenticate(token, token_sha256=token_sha256)
        except Unauthenticated:
            failures.failed(address or peer())
            raise
