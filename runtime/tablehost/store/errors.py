"""The store's own errors: no ``sqlite3`` or ``psycopg`` exception reaches a caller.

Each backend translates its driver's exceptions in one place (``sqlite.driver_errors``,
``postgresql.driver_errors``) into this tree, always ``raise ... from exc``::

    TablehostError
    └── StoreError              store/error         any other failure of the database
        ├── StoreUnusable       store/unusable      the store cannot be opened (bad path, URL, schema)
        │   └── DataDirUnusable store/unusable      the SQLite data directory is a file or unwritable
        │       └── DataDirInUse store/in_use       another process holds the SQLite data directory
        ├── StoreUnavailable    store/unavailable   the database cannot be reached now (retry later)
        ├── StoreConflict       store/conflict      a row with this key exists (a version already stored)
        └── StoreMissingRef     store/missing_ref   the row names a match or module that is not stored

An unknown match asked of the store is :class:`tablehost.errors.UnknownMatch`.
"""

from __future__ import annotations

from tablehost.errors import TablehostError


class StoreError(TablehostError):
    """The database failed in a way none of the subclasses names."""

    code = "store/error"


class StoreUnusable(StoreError):
    """The store cannot be opened: a malformed ``--store``, a database written by a newer schema."""

    code = "store/unusable"


class DataDirUnusable(StoreUnusable):
    """The data directory cannot be created or opened (a file of that name, no permission)."""

    code = "store/unusable"


class DataDirInUse(DataDirUnusable):
    """Another process (another server) holds the SQLite data directory's lock."""

    code = "store/in_use"


class StoreUnavailable(StoreError):
    """The database cannot be reached now (connection refused or lost); nothing was stored.

    Attributes:
        retry_after_ms: the retry hint a client is given (gRPC ``retry-after-ms``, HTTP
            ``Retry-After``): about how often the server checks the database again.
    """

    code = "store/unavailable"
    retry_after_ms = 1000


class StoreConflict(StoreError):
    """A row with this key is stored already: a duplicated match version, match id or token."""

    code = "store/conflict"


class StoreMissingRef(StoreError):
    """The row names a match or module the store does not hold."""

    code = "store/missing_ref"


STORE_REASONS: dict[str, str] = {
    "store/unavailable": "the server cannot reach its database just now; nothing changed, retry shortly",
    "store/conflict": "another server process changed this match at the same time; nothing changed, retry",
}
"""What a player or spectator is told of a store failure, by code: the driver's own message names
the database's host, port and tables, which only the admin and the server log get."""
STORE_REASON_OTHER = "the server's database failed on this request; nothing changed"


def store_reason(code: str) -> str:
    """The fixed reason a caller who is not the admin gets for the store failure ``code``."""
    return STORE_REASONS.get(code, STORE_REASON_OTHER)

