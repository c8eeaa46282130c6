"""Errors of the API layer, beside the domain tree of :mod:`tablehost.errors`.

Each has a stable ``code`` that :data:`tablehost.api.interceptors.STATUS_BY_CODE` maps to a
gRPC status::

    TablehostError
    ├── InvalidRequest      request/invalid          a malformed request
    ├── UnknownModule       module/unknown           no module with this id
    ├── Unauthenticated     auth/unauthenticated     no token, or a token the server does not know
    ├── PermissionDenied    auth/permission_denied   a known token used beyond its rights
    ├── TooManyWatchers     request/too_many_watchers the token or the server has all its watch streams open
    ├── RateLimited         request/rate_limited     the token sent more requests per second than allowed,
    │                                                or its address failed authentication too often
    ├── ResponseTooLarge    response/too_large       the answer is over the server's message size limit
    ├── UnknownRoute        request/unknown_route    HTTP only: no API endpoint has the path
    └── MethodNotAllowed    request/method_not_allowed HTTP only: the path's endpoints take other methods
"""

from __future__ import annotations

from tablehost.errors import TablehostError


class InvalidRequest(TablehostError):
    """The request is malformed (a missing field, an action of no kind, options given)."""

    code = "request/invalid"


class UnknownModule(TablehostError):
    """No stored module has this id (``module_id``)."""

    code = "module/unknown"

    def __init__(self, message: str, *, module_id: str) -> None:
        super().__init__(message)
        self.module_id = module_id


class Unauthenticated(TablehostError):
    """No ``authorization: Bearer`` token, or one the server does not know."""

    code = "auth/unauthenticated"


class PermissionDenied(TablehostError):
    """The token is known but may not do this (another seat, spectator acting, record too early)."""

    code = "auth/permission_denied"


class TooManyWatchers(TablehostError):
    """A WatchMatch beyond the per-token or server-wide cap of open watch streams.

    ``retry_after_ms`` is the client's hint (sent as ``retry-after-ms`` trailing metadata).
    """

    code = "request/too_many_watchers"
    retry_after_ms: int = 1000


class RateLimited(TablehostError):
    """A request beyond its token's rate, or from an address with too many failed
    authentications (:mod:`tablehost.api.rate_limit`).

    ``retry_after_ms``: milliseconds until one more request is allowed. ``kind``: which limit,
    ``"request"`` (the token's) or ``"auth"`` (the address's failures): the label of
    ``tablehost_rate_limited_total``.
    """

    code = "request/rate_limited"
    retry_after_ms: int = 1000

    def __init__(self, message: str, *, retry_after_ms: int = 1000, kind: str = "request") -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms
        self.kind = kind


class ResponseTooLarge(TablehostError):
    """The response would exceed the server's send limit (:data:`~tablehost.api.validation.MAX_RESPONSE_BYTES`)."""

    code = "response/too_large"


class UnknownRoute(TablehostError):
    """No HTTP API endpoint has the request's path (HTTP 404; :func:`tablehost.web.routes.unrouted`)."""

    code = "request/unknown_route"


class MethodNotAllowed(TablehostError):
    """An HTTP API endpoint's path asked with a method it does not take (HTTP 405, ``Allow`` sent)."""

    code = "request/method_not_allowed"
