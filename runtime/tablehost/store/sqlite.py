"""``SqliteStore``: the embedded default, SQLite in a data directory, one server process.

Durability: the database runs in WAL mode with ``synchronous=FULL`` by default, so a committed
move survives a power cut, not just a killed process (about 0.4 ms per commit measured on these
machines). ``synchronous="NORMAL"`` with WAL still survives a killed process (the WAL is in the
OS page cache) but may lose the newest commits on power loss; it costs about 0.02 ms per commit.

Each write commits before it returns: the match's journal hook calls it before a change
becomes visible, so a move acknowledged to a client is on disk.

Checkpoints: the WAL is copied back into the database file by a thread of its own
(:mod:`tablehost.store.wal_checkpoint`), not inside the commit that crosses SQLite's threshold,
so no request waits for a checkpoint's fsyncs.

Group commit: journal writes of concurrent callers share one transaction, so one fsync covers
many moves. A caller queues its statements, then takes the connection lock; whoever holds the
lock commits everything queued so far (its own entry and the entries queued while the previous
transaction was being synced) in one ``BEGIN IMMEDIATE … COMMIT``, each entry inside its own
``SAVEPOINT`` so a failing entry is rolled back alone and fails only its caller. A caller whose
entry another thread committed finds it done when it gets the lock and returns; nobody returns
before the transaction holding its entry has committed. Entries commit in the order queued.

Thread-safety: one connection guarded by one lock (SQLite admits one writer at a time anyway);
every public method may be called from any thread.

One process per data directory: the store holds an exclusive ``flock`` on
``DATA/tablehost.lock`` while open (a second server would keep its own copy of every match in
memory and fork their histories); several processes need PostgreSQL
(:mod:`tablehost.store.postgresql`). The directory is mode 0700 and the database files 0600:
they hold every match's hidden state.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablehost.errors import RecordError
from tablehost.store.base import (
    INSERT_SCHEMA,
    SCHEMA,
    SCHEMA_VERSION,
    SELECT_SCHEMA,
    SQLITE,
    Claim,
    MatchStore,
    Statements,
)
from tablehost.store.errors import (
    DataDirInUse,
    DataDirUnusable,
    StoreConflict,
    StoreError,
    StoreMissingRef,
    StoreUnavailable,
)
from tablehost.store.wal_checkpoint import CHECKPOINT_EVERY_COMMITS, WRITER_CHECKPOINT_PAGES, WalCheckpointer

DB_FILENAME = "tablehost.sqlite3"
LOCK_FILENAME = "tablehost.lock"
DIR_MODE = 0o700
FILE_MODE = 0o600


@dataclass
class _Entry:
    """One caller's statements, committed all together or not at all.

    Attributes:
        statements: ``(sql, params)`` pairs already in the store's dialect.
        done: set (under the connection lock) once its transaction ended.
        error: why the entry was not stored, ``None`` once committed.
        rowcounts: each statement's row count once committed.
    """

    statements: Statements
    done: bool = False
    error: BaseException | None = field(default=None)
    rowcounts: list[int] = field(default_factory=list)


def translate(exc: sqlite3.Error) -> StoreError:
    """Our error for a ``sqlite3`` error (the one mapping of this backend)."""
    text = str(exc)
    if isinstance(exc, sqlite3.IntegrityError):
        if "FOREIGN KEY" in text:
            return StoreMissingRef(f"the row names a match or module that is not stored ({text})")
        return StoreConflict(f"a row with this key is stored already ({text})")
    if isinstance(exc, sqlite3.OperationalError):
        return StoreUnavailable(f"the SQLite database cannot be used now: {text}")
    return StoreError(f"SQLite failed: {text}")


@contextmanager
def driver_errors() -> Iterator[None]:
    """Raise :func:`translate`'s error ``from`` any ``sqlite3.Error`` inside the block."""
    try:
        yield
    except sqlite3.Error as exc:
        raise translate(exc) from exc


class SqliteStore(MatchStore):
    """The store of one server in a data directory (``--data DIR`` or ``--store sqlite:DIR``).

    Args:
        data_dir: directory of the database file (created if missing, mode 0700).
        synchronous: ``"FULL"`` (default: durable across power loss) or ``"NORMAL"``
            (durable across a killed process only); see the module docstring.
        chosen_by: the command-line option that named ``data_dir`` (``"--data"`` or
            ``"--store"``), so an error tells the user which option to change.
        checkpoint_every: commits between two background WAL checkpoints
            (:class:`~tablehost.store.wal_checkpoint.WalCheckpointer`).

    Raises:
        ValueError: an unknown ``synchronous`` mode.
        DataDirUnusable: ``data_dir`` is a file or cannot be created or written.
        DataDirInUse: another process has this data directory open.
        RecordError: the database was written by a newer schema version.
    """

    shared = False

    def __init__(
        self,
        data_dir: Path | str,
        *,
        synchronous: str = "FULL",
        chosen_by: str = "--data",
        checkpoint_every: int = CHECKPOINT_EVERY_COMMITS,
    ) -> None:
        super().__init__()
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, got {synchronous!r}")
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / DB_FILENAME
        self.description = f"sqlite:{self.path.resolve()}"
        self._lock_fd = _lock_data_dir(self.data_dir, chosen_by)
        self._dialect = SQLITE
        self._lock = threading.Lock()
        self._queued: deque[_Entry] = deque()
        # SQLite gives the -wal and -shm files the mode of the database file.
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE))
        os.chmod(self.path, FILE_MODE)
        with driver_errors():
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.execute("PRAGMA foreign_keys=ON")
            # Checkpoints run on their own thread, not inside a request's commit.
            self._db.execute(f"PRAGMA wal_autocheckpoint={WRITER_CHECKPOINT_PAGES}")
            self._create_schema()
            self._checkpointer = WalCheckpointer(self.path, synchronous, every_commits=checkpoint_every)

    def _create_schema(self) -> None:
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in SCHEMA:
                    db.execute(self._dialect.sql(statement))
                row = db.execute(self._dialect.sql(SELECT_SCHEMA)).fetchone()
                if row is None:
                    db.execute(self._dialect.sql(INSERT_SCHEMA), (SCHEMA_VERSION,))
                elif row[0] > SCHEMA_VERSION:
                    raise RecordError(
                        f"{self.path} has schema version {row[0]}; this tablehost reads up to {SCHEMA_VERSION}"
                    )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # ------------------------------------------------------------ the backend's part

    def _write(self, statements: Statements) -> list[int]:
        entry = _Entry([(self._dialect.sql(sql), params) for sql, params in statements])
        self._queued.append(entry)
        with self._lock:
            if not entry.done:
                self._commit_queued()
        if entry.error is not None:
            if isinstance(entry.error, sqlite3.Error):
                raise translate(entry.error) from entry.error
            raise entry.error
        return entry.rowcounts

    def _commit_queued(self) -> None:
        """Commit every queued entry in one transaction; call with the lock held."""
        group: list[_Entry] = []
        while self._queued:
            group.append(self._queued.popleft())
        db = self._db
        started = time.perf_counter()
        # A lone entry needs no savepoint: rolling back the transaction rolls back just it.
        alone = len(group) == 1
        try:
            db.execute("BEGIN IMMEDIATE")
            for entry in group:
                if not alone:
                    db.execute("SAVEPOINT entry")
                try:
                    entry.rowcounts = [db.execute(sql, params).rowcount for sql, params in entry.statements]
                except Exception as exc:  # noqa: BLE001 - handed to the entry's own caller
                    entry.error = exc
                    if alone:
                        db.execute("ROLLBACK")
                        return
                    db.execute("ROLLBACK TO entry")
                if not alone:
                    db.execute("RELEASE entry")
            db.execute("COMMIT")
            self._timed_commit(started, sum(1 for entry in group if entry.error is None))
            self._checkpointer.committed()
        except BaseException as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            for entry in group:
                if entry.error is None:
                    entry.error = translate(exc) if isinstance(exc, sqlite3.Error) else exc
            if not isinstance(exc, sqlite3.Error):
                raise
        finally:
            for entry in group:
                entry.done = True

    def _query(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock, driver_errors():
            return list(self._db.execute(self._dialect.sql(statement), params).fetchall())

    @contextmanager
    def claim(self, match_id: str) -> Iterator[Claim]:
        """Nothing to hold: this process is the only writer (the data directory's lock)."""
        yield Claim(None, self.journal_for(match_id), lambda: self.load_record(match_id))

    def ping(self) -> None:
        self._query("SELECT 1")

    def close(self) -> None:
        """Close the connection and release the data directory; the store is unusable afterwards."""
        self._checkpointer.close()
        with self._lock:
            self._db.close()
            if self._lock_fd >= 0:
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = -1


def _lock_data_dir(data_dir: Path, chosen_by: str = "--data") -> int:
    """Create ``data_dir`` (mode 0700) and take its exclusive lock; returns the lock file's descriptor.

    ``chosen_by`` is the option that named the directory (``--data`` or ``--store``): the
    in-use error suggests changing that one.

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
        other = "--store sqlite:DIR" if chosen_by == "--store" else "--data DIR"
        raise DataDirInUse(
            f"the data directory {data_dir.resolve()} (from {chosen_by}) is in use by another tablehost server; "
            f"stop it, pass another {other}, or run several servers on one PostgreSQL database "
            "(--store postgresql://...)"
        ) from None
    return fd
