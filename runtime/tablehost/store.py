"""``MatchStore``: durable modules, matches, seats and the append-only move journal.

The embedded default is SQLite in a data directory. The schema and every
statement live in this file, written in portable SQL (``VARCHAR``, ``BIGINT``,
``TEXT``, one dialect-specific name: the byte-string type) so the same tables
run on PostgreSQL; the ``?`` placeholders become ``%s`` there.

Durability: the database runs in WAL mode with ``synchronous=FULL`` by default,
so a committed move survives a power cut, not just a killed process (about
0.4 ms per commit measured on these machines). ``synchronous="NORMAL"`` with WAL
still survives a killed process (the WAL is in the OS page cache) but may lose
the newest commits on power loss; it costs about 0.02 ms per commit.

Each :meth:`MatchStore.append` / :meth:`MatchStore.create_match` commits before it
returns: the match's journal hook calls it before a change becomes visible, so
a move acknowledged to a client is on disk.

Group commit: journal writes of concurrent callers share one transaction, so one
fsync covers many moves. A caller queues its statements, then takes the
connection lock; whoever holds the lock commits everything queued so far (its
own entry and the entries queued while the previous transaction was being
synced) in one ``BEGIN IMMEDIATE … COMMIT``, each entry inside its own
``SAVEPOINT`` so a failing entry is rolled back alone and fails only its caller.
A caller whose entry another thread committed finds it done when it gets the
lock and returns; nobody returns before the transaction holding its entry has
committed. Entries commit in the order they were queued.

Thread-safety: one connection guarded by one lock (SQLite admits one writer at
a time anyway); every public method may be called from any thread.

One process per data directory: the store holds an exclusive ``flock`` on
``DATA/tablehost.lock`` while open (a second server would keep its own copy of
every match in memory and fork their histories). The directory is mode 0700 and
the database files 0600: they hold every match's hidden state.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tablehost.errors import RecordError, TablehostError

DB_FILENAME = "tablehost.sqlite3"
LOCK_FILENAME = "tablehost.lock"
DIR_MODE = 0o700
FILE_MODE = 0o600
SCHEMA_VERSION = 1


class DataDirUnusable(TablehostError):
    """The data directory cannot be created or opened (a file of that name, no permission)."""

    code = "store/unusable"


class DataDirInUse(DataDirUnusable):
    """Another process (another server) holds the data directory's lock."""

    code = "store/in_use"


@dataclass(frozen=True)
class Dialect:
    """The few words that differ between SQL databases.

    Attributes:
        blob_type: the column type of raw bytes.
        placeholder: the DB-API parameter marker.
    """

    blob_type: str
    placeholder: str

    def sql(self, statement: str) -> str:
        """Return ``statement`` (written with ``?`` markers and ``{blob}``) in this dialect."""
        return statement.replace("{blob}", self.blob_type).replace("?", self.placeholder)


SQLITE = Dialect(blob_type="BLOB", placeholder="?")
POSTGRESQL = Dialect(blob_type="BYTEA", placeholder="%s")

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS schema_info (
        schema_version INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS modules (
        sha256      VARCHAR(64)  PRIMARY KEY,
        name        VARCHAR(200) NOT NULL,
        size_bytes  BIGINT       NOT NULL,
        exports     TEXT         NOT NULL,
        data        {blob}       NOT NULL,
        uploaded_at VARCHAR(40)  NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS matches (
        match_id      VARCHAR(64) PRIMARY KEY,
        module_sha256 VARCHAR(64) NOT NULL REFERENCES modules (sha256),
        setup         TEXT        NOT NULL,
        created_at    VARCHAR(40) NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS seats (
        token_sha256 VARCHAR(64) PRIMARY KEY,
        match_id     VARCHAR(64) NOT NULL REFERENCES matches (match_id),
        player_id    BIGINT
    )""",
    """CREATE TABLE IF NOT EXISTS moves (
        match_id VARCHAR(64) NOT NULL REFERENCES matches (match_id),
        version  BIGINT      NOT NULL,
        kind     VARCHAR(16) NOT NULL,
        payload  TEXT        NOT NULL,
        PRIMARY KEY (match_id, version)
    )""",
)
"""The tables. ``seats.player_id`` is NULL for a spectator token. ``moves`` is
append-only: a move row keyed by its ``seq``, an undo row keyed by its ``undo_seq``
(both are match versions, so the key also refuses a duplicated move)."""

INSERT_MODULE = (
    "INSERT INTO modules (sha256, name, size_bytes, exports, data, uploaded_at) VALUES (?, ?, ?, ?, ?, ?)"
)
SELECT_MODULE = "SELECT sha256, name, size_bytes, exports, uploaded_at, data FROM modules WHERE sha256 = ?"
SELECT_MODULES = (
    "SELECT sha256, name, size_bytes, exports, uploaded_at FROM modules ORDER BY uploaded_at, sha256"
)
INSERT_MATCH = "INSERT INTO matches (match_id, module_sha256, setup, created_at) VALUES (?, ?, ?, ?)"
INSERT_SEAT = "INSERT INTO seats (token_sha256, match_id, player_id) VALUES (?, ?, ?)"
INSERT_MOVE = "INSERT INTO moves (match_id, version, kind, payload) VALUES (?, ?, ?, ?)"
SELECT_MATCHES = "SELECT match_id, setup FROM matches ORDER BY created_at, match_id"
SELECT_MATCH = "SELECT match_id, setup FROM matches WHERE match_id = ?"
SELECT_MOVES = "SELECT kind, payload FROM moves WHERE match_id = ? ORDER BY version"
SELECT_SEATS = "SELECT token_sha256, match_id, player_id FROM seats"
SELECT_SCHEMA = "SELECT schema_version FROM schema_info"
INSERT_SCHEMA = "INSERT INTO schema_info (schema_version) VALUES (?)"


@dataclass(frozen=True)
class StoredModule:
    """A module row.

    Attributes:
        sha256: lowercase hex sha256 of ``data`` (the module id).
        name: the name given at first upload.
        size_bytes: ``len(data)``.
        exports: the module's export names, sorted.
        uploaded_at: RFC 3339 UTC timestamp of the first upload.
        data: the module bytes; ``b""`` when listed without them.
        newly_stored: true only in :meth:`MatchStore.put_module`'s answer when this call
            stored the bytes (false: they were stored before, under ``name``).
    """

    sha256: str
    name: str
    size_bytes: int
    exports: list[str]
    uploaded_at: str
    data: bytes = b""
    newly_stored: bool = False


@dataclass(frozen=True)
class SeatRow:
    """A token of a match, stored only as its hash.

    Attributes:
        token_sha256: lowercase hex sha256 of the bearer token.
        match_id: the match the token belongs to.
        player_id: the seat it acts for, or ``None`` for the spectator token.
    """

    token_sha256: str
    match_id: str
    player_id: int | None


@dataclass
class _Entry:
    """One caller's statements, committed all together or not at all.

    Attributes:
        statements: ``(sql, params)`` pairs already in the store's dialect.
        done: set (under the connection lock) once its transaction ended.
        error: why the entry was not stored, ``None`` once committed.
    """

    statements: list[tuple[str, tuple[Any, ...]]]
    done: bool = False
    error: BaseException | None = field(default=None)


Journal = Callable[[str, dict[str, Any]], None]
"""The ``journal(kind, payload)`` hook of ``Match`` (docs/architecture.md)."""


class MatchStore:
    """Durable storage of one host: modules, matches, seat tokens and moves.

    Args:
        data_dir: directory of the database file (created if missing).
        synchronous: ``"FULL"`` (default: durable across power loss) or ``"NORMAL"``
            (durable across a killed process only); see the module docstring.

    Raises:
        ValueError: an unknown ``synchronous`` mode.
        DataDirUnusable: ``data_dir`` is a file or cannot be created or written.
        DataDirInUse: another process has this data directory open.
        RecordError: the database was written by a newer schema version.
    """

    def __init__(self, data_dir: Path | str, *, synchronous: str = "FULL") -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, got {synchronous!r}")
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / DB_FILENAME
        self._lock_fd = _lock_data_dir(self.data_dir)
        self._dialect = SQLITE
        self._lock = threading.Lock()
        self._queued: deque[_Entry] = deque()
        self.transactions = 0
        """Write transactions committed by the group-commit path (a counter for benchmarks)."""
        self.entries = 0
        """Entries those transactions stored; ``entries / transactions`` is the mean group size."""
        # SQLite gives the -wal and -shm files the mode of the database file.
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE))
        os.chmod(self.path, FILE_MODE)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._create_schema()

    # ------------------------------------------------------------ plumbing

    def _create_schema(self) -> None:
        with self._transaction() as db:
            for statement in SCHEMA:
                db.execute(self._dialect.sql(statement))
            row = db.execute(self._dialect.sql(SELECT_SCHEMA)).fetchone()
            if row is None:
                db.execute(self._dialect.sql(INSERT_SCHEMA), (SCHEMA_VERSION,))
            elif row[0] > SCHEMA_VERSION:
                raise RecordError(
                    f"{self.path} has schema version {row[0]}; this tablehost reads up to {SCHEMA_VERSION}"
                )

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the store lock; committed on success, rolled back on error."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        """Commit ``statements`` (one entry) in a group transaction; return once it is durable.

        Raises:
            sqlite3.Error: the entry's statements failed (only this entry was rolled back) or
                the group's COMMIT failed (no entry of the group was stored).
        """
        entry = _Entry([(self._dialect.sql(sql), params) for sql, params in statements])
        self._queued.append(entry)
        with self._lock:
            if not entry.done:
                self._commit_queued()
        if entry.error is not None:
            raise entry.error

    def _commit_queued(self) -> None:
        """Commit every queued entry in one transaction; call with the lock held."""
        group: list[_Entry] = []
        while self._queued:
            group.append(self._queued.popleft())
        db = self._db
        # A lone entry needs no savepoint: rolling back the transaction rolls back just it.
        alone = len(group) == 1
        try:
            db.execute("BEGIN IMMEDIATE")
            for entry in group:
                if not alone:
                    db.execute("SAVEPOINT entry")
                try:
                    for sql, params in entry.statements:
                        db.execute(sql, params)
                except Exception as exc:  # noqa: BLE001 - handed to the entry's own caller
                    entry.error = exc
                    if alone:
                        db.execute("ROLLBACK")
                        return
                    db.execute("ROLLBACK TO entry")
                if not alone:
                    db.execute("RELEASE entry")
            db.execute("COMMIT")
            self.transactions += 1
            self.entries += sum(1 for entry in group if entry.error is None)
        except BaseException as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            for entry in group:
                if entry.error is None:
                    entry.error = _copy_error(exc)
            raise
        finally:
            for entry in group:
                entry.done = True

    def _query(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._db.execute(self._dialect.sql(statement), params).fetchall())

    def close(self) -> None:
        """Close the connection and release the data directory; the store is unusable afterwards."""
        with self._lock:
            self._db.close()
            if self._lock_fd >= 0:
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = -1

    # ------------------------------------------------------------ modules

    def put_module(
        self, sha256: str, name: str, data: bytes, exports: list[str], uploaded_at: str
    ) -> StoredModule:
        """Store module bytes unless a module with this sha256 exists.

        Args:
            sha256: lowercase hex sha256 of ``data`` (the caller computed and validated it).
            name: the module's name.
            data: the module bytes.
            exports: the export names.
            uploaded_at: RFC 3339 UTC timestamp.

        Returns:
            The stored module without bytes: ``newly_stored`` true when this call stored it,
            else the earlier one (its first name kept).
        """
        with self._transaction() as db:
            row = db.execute(self._dialect.sql(SELECT_MODULE), (sha256,)).fetchone()
            if row is None:
                db.execute(
                    self._dialect.sql(INSERT_MODULE),
                    (sha256, name, len(data), orjson.dumps(sorted(exports)).decode(), data, uploaded_at),
                )
                return StoredModule(sha256, name, len(data), sorted(exports), uploaded_at, newly_stored=True)
        return _module_from_row(row[:5])

    def get_module(self, sha256: str) -> StoredModule | None:
        """The module with this id, bytes included, or ``None``."""
        rows = self._query(SELECT_MODULE, (sha256,))
        if not rows:
            return None
        return _module_from_row(rows[0][:5], data=bytes(rows[0][5]))

    def list_modules(self) -> list[StoredModule]:
        """Every module without its bytes, oldest first."""
        return [_module_from_row(row) for row in self._query(SELECT_MODULES)]

    # ------------------------------------------------------------ matches

    def create_match(self, setup_record: dict[str, Any], seats: list[SeatRow]) -> None:
        """Store a new match and its tokens in one transaction (the journal's ``"setup"`` entry).

        Args:
            setup_record: the record of docs/architecture.md without moves; needs ``match_id``,
                ``module.sha256`` and ``created_at``.
            seats: the match's token hashes (seats and spectator).

        Raises:
            sqlite3.IntegrityError: the match id or a token hash exists, or the module is unknown.
        """
        match_id = setup_record["match_id"]
        record = {key: value for key, value in setup_record.items() if key != "moves"}
        match_row = (
            match_id,
            record["module"]["sha256"],
            orjson.dumps(record).decode(),
            record["created_at"],
        )
        self._write(
            [(INSERT_MATCH, match_row)]
            + [(INSERT_SEAT, (seat.token_sha256, match_id, seat.player_id)) for seat in seats]
        )

    def append(self, match_id: str, kind: str, payload: dict[str, Any]) -> None:
        """Append one journal entry and commit before returning.

        Args:
            match_id: the match.
            kind: ``"move"`` (payload is a move dict with ``seq``) or ``"undo"`` (payload
                ``{"seq", "undo_seq", "at"}``).
            payload: the journal payload as the match emitted it.

        Raises:
            ValueError: an unknown kind.
            sqlite3.IntegrityError: this version of the match is already stored (a duplicated
                move) or the match is unknown.
        """
        if kind == "move":
            version = payload["seq"]
        elif kind == "undo":
            version = payload["undo_seq"]
        else:
            raise ValueError(f"unknown journal kind {kind!r}")
        self._write([(INSERT_MOVE, (match_id, version, kind, orjson.dumps(payload).decode()))])

    def journal_for(self, match_id: str | None, seats: list[SeatRow] | None = None) -> Journal:
        """The ``journal`` hook of one match.

        Args:
            match_id: the match id; ``None`` to take it from the setup record.
            seats: the tokens stored with the ``"setup"`` entry (new matches only).

        Returns:
            ``journal(kind, payload)``: ``"setup"`` calls :meth:`create_match`, the rest :meth:`append`.
        """

        def journal(kind: str, payload: dict[str, Any]) -> None:
            if kind == "setup":
                self.create_match(payload, seats or [])
            else:
                self.append(match_id or payload["match_id"], kind, payload)

        return journal

    def load_record(self, match_id: str) -> dict[str, Any]:
        """Rebuild one match's record (format ``tablehost.record/2``) from its setup and journal.

        Raises:
            KeyError: no such match.
            RecordError: an undo entry names a move that is not stored.
        """
        rows = self._query(SELECT_MATCH, (match_id,))
        if not rows:
            raise KeyError(match_id)
        return self._rebuild(rows[0][1], self._query(SELECT_MOVES, (match_id,)))

    def load_records(self) -> Iterator[dict[str, Any]]:
        """Every match's record, oldest match first (see :meth:`load_record`)."""
        for match_id, _setup in self._query(SELECT_MATCHES):
            yield self.load_record(match_id)

    def load_seats(self) -> list[SeatRow]:
        """Every stored token hash."""
        return [SeatRow(token, match_id, pid) for token, match_id, pid in self._query(SELECT_SEATS)]

    @staticmethod
    def _rebuild(setup_json: str, journal_rows: list[tuple[Any, ...]]) -> dict[str, Any]:
        record: dict[str, Any] = orjson.loads(setup_json)
        moves: list[dict[str, Any]] = []
        by_seq: dict[int, dict[str, Any]] = {}
        for kind, payload_json in journal_rows:
            payload = orjson.loads(payload_json)
            if kind == "move":
                move = {**payload, "undone": False, "undo_seq": None}
                moves.append(move)
                by_seq[move["seq"]] = move
            else:
                undone = by_seq.get(payload["seq"])
                if undone is None:
                    raise RecordError(
                        f"match {record.get('match_id')}: undo of move {payload['seq']} which is not stored"
                    )
                undone["undone"] = True
                undone["undo_seq"] = payload["undo_seq"]
        record["moves"] = moves
        return record


def _lock_data_dir(data_dir: Path) -> int:
    """Create ``data_dir`` (mode 0700) and take its exclusive lock; returns the lock file's descriptor.

    Raises:
        DataDirUnusable: not a directory, or it cannot be created or written.
        DataDirInUse: another process holds the lock.
    """
    try:
        data_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        os.chmod(data_dir, DIR_MODE)
        fd = os.open(data_dir / LOCK_FILENAME, os.O_RDWR | os.O_CREAT, FILE_MODE)
    except FileExistsError:
        raise DataDirUnusable(f"cannot use {data_dir} as the data directory: it is a file") from None
    except OSError as exc:
        raise DataDirUnusable(f"cannot use {data_dir} as the data directory: {exc.strerror or exc}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DataDirInUse(
            f"the data directory {data_dir.resolve()} is in use by another tablehost server; stop it "
            "or pass another --data"
        ) from None
    return fd


def _copy_error(exc: BaseException) -> BaseException:
    """A fresh exception like ``exc`` for one more caller (one object raised in many threads
    would share and overwrite its traceback)."""
    try:
        return type(exc)(*exc.args)
    except Exception:  # noqa: BLE001 - an exception type with an unusual constructor
        return RuntimeError(f"the group commit failed: {exc!r}")


def _module_from_row(row: tuple[Any, ...], data: bytes = b"") -> StoredModule:
    sha256, name, size_bytes, exports_json, uploaded_at = row
    return StoredModule(sha256, name, int(size_bytes), list(orjson.loads(exports_json)), uploaded_at, data)
