"""Durable modules, matches, seat tokens and the append-only move journal.

Two backends share one schema (:mod:`tablehost.store.base`):

- :class:`~tablehost.store.sqlite.SqliteStore`, the embedded default: SQLite in a data
  directory, one server process (``tablehost serve --data DIR`` or ``--store sqlite:DIR``);
- :class:`~tablehost.store.postgresql.PostgresStore`: one PostgreSQL database shared by any
  number of server processes on any number of hosts (``--store postgresql://...``).

:func:`open_store` picks one from a ``--store`` value. Errors: :mod:`tablehost.store.errors`.
"""

from __future__ import annotations

from pathlib import Path

from tablehost.store.base import (
    POSTGRESQL,
    SCHEMA,
    SQLITE,
    Claim,
    Journal,
    MatchStore,
    SeatRow,
    StoredModule,
)
from tablehost.store.errors import (
    DataDirInUse,
    DataDirUnusable,
    StoreConflict,
    StoreError,
    StoreMissingRef,
    StoreUnavailable,
    StoreUnusable,
)
from tablehost.store.sqlite import SqliteStore

__all__ = [
    "POSTGRESQL",
    "SCHEMA",
    "SQLITE",
    "Claim",
    "DataDirInUse",
    "DataDirUnusable",
    "Journal",
    "MatchStore",
    "SeatRow",
    "SqliteStore",
    "StoreConflict",
    "StoreError",
    "StoreMissingRef",
    "StoreUnavailable",
    "StoreUnusable",
    "StoredModule",
    "open_store",
]


def open_store(spec: str | None, data_dir: Path | str, *, synchronous: str = "FULL") -> MatchStore:
    """Open the store a ``--store`` value names.

    Args:
        spec: ``None`` or ``""`` (SQLite in ``data_dir``), ``sqlite:PATH`` (SQLite in the
            directory PATH), or ``postgresql://...`` / ``postgres://...`` (a libpq URL).
        data_dir: the server's data directory (the SQLite default's place).
        synchronous: ``"FULL"`` or ``"NORMAL"``: SQLite's sync mode, or PostgreSQL's
            ``synchronous_commit`` on or off for this process (see each backend's Durability).

    Returns:
        An open store.

    Raises:
        StoreUnusable: ``spec`` names no known backend, or the URL is malformed.
        DataDirUnusable, DataDirInUse: SQLite's directory cannot be used.
        StoreUnavailable: PostgreSQL cannot be reached.
    """
    if not spec:
        return SqliteStore(data_dir, synchronous=synchronous)
    if spec.startswith("sqlite:"):
        path = spec.removeprefix("sqlite:").removeprefix("//")
        if not path:
            raise StoreUnusable("--store sqlite:PATH needs a directory after 'sqlite:'")
        return SqliteStore(path, synchronous=synchronous, chosen_by="--store")
    if spec.startswith(("postgresql://", "postgres://")):
        from tablehost.store.postgresql import PostgresStore  # psycopg loads only when asked for

        return PostgresStore(spec, synchronous=synchronous)
    raise StoreUnusable(
        f"--store {spec.split('://')[0]}...: give sqlite:DIR or postgresql://USER@HOST[:PORT]/DB"
    )
