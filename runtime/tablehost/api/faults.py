"""Errors of the API layer, beside the domain tree of :mod:`tablehost.errors`.

Each has a stable ``code`` that :data:`tablehost.api.interceptors.STATUS_BY_CODE` maps to a
gRPC status::

    TablehostError
    ├── InvalidRequest      request/invalid          a malformed request
    ├── UnknownModule       module/unknown           no module with this id
    ├── Unauthenticated     auth/unauthenticated     no token, or a token the server does not know
    └── PermissionDenied    auth/permission_denied   a known token used beyond its rights
"""

from __future__ import annotations

from tablehost.errors import TablehostError


class InvalidRequest(TablehostError):
    """The request is malformed (a missing field, an action of no kind, options given)."""

    code = "request/invalid"


class UnknownModule(TablehostError):
    """No stored module has this id."""

    code = "module/unknown"


class Unauthenticated(TablehostError):
    """No ``authorization: Bearer`` token, or one the server does not know."""

    code = "auth/unauthenticated"


class PermissionDenied(TablehostError):
    """The token is known but may not do this (another seat, spectator acting, record too early)."""

    code = "auth/permission_denied"
