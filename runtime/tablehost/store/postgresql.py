"""``PostgresStore``: one PostgreSQL database shared by any number of server processes.

Same tables and guarantees as SQLite (:mod:`tablehost.store.base`): each write commits before
it returns, tokens are stored only as hashes.

Durability (``synchronous``, ``serve --sync``): ``"FULL"`` (the default) sets
``synchronous_commit=on`` for this process's sessions, whatever the database's default: a
reply means the move's WAL record is flushed to the database server's disk. ``"NORMAL"`` sets
``synchronous_commit=off``: a commit returns before that flush, so a crash of the database
server or its machine may lose the newest acknowledged moves (PostgreSQL flushes within
3 x ``wal_writer_delay``, 600 ms by default); a killed or failed-over tablehost process still
loses nothing, and the database is never corrupted. It is the same trade as SQLite's NORMAL.
The server's own ``fsync`` and ``synchronous_commit`` settings are the operator's; ``fsync=off``
on the database server loses the durability of both modes.

Several processes:

- **A move is one round trip, and the version key decides.** :meth:`PostgresStore.append`
  sends ``SELECT pg_advisory_xact_lock(k); INSERT INTO moves ...; SELECT pg_notify(...)`` as
  one simple query (one implicit transaction, committed before the reply). The
  ``(match_id, version)`` key stores an entry only when its version is new: versions are
  dense (each entry is the match's version + 1), so of two processes moving the same match
  from the same version exactly one is stored, and a process whose copy is behind the
  database (a version it has not heard of yet) gets :class:`StoreConflict` with nothing
  stored; the registry then catches up and redoes the request under the hold below.
- **The hold, for the redo and the rare paths.** :meth:`PostgresStore.claim` takes the
  transaction-level advisory lock of the match (``pg_advisory_xact_lock``), then reads the
  newest stored version. The request runs under that lock and its first journal entry commits
  the transaction, which frees the lock. Every :meth:`append` takes the same lock inside its
  own transaction, so no entry lands while another process holds the match: a redo under the
  hold cannot conflict again. (Without the lock in :meth:`append` the key would still refuse
  duplicates, but a hold would no longer keep others out, and a redo could lose again.) A
  process that dies frees its locks with its connections; a process that hangs inside a
  transaction loses them after ``idle_in_transaction_session_timeout`` (:data:`HOLD_TIMEOUT_MS`),
  and TCP keepalives end the session of a vanished host.
- **Every change heard everywhere.** Each journal entry sends ``NOTIFY tablehost_moves`` with
  ``"<match_id> <version>"`` in its transaction (delivered when it commits). One listening
  connection per process records the newest version per match (:meth:`latest_version`) and
  calls the subscribers (the server wakes that match's watchers).

Connections come from a small pool (:class:`_Pool`); every public method may be called from
any thread. Each connection names its process (:func:`application_name`, ``tablehost-<pid>``)
unless the URL or ``PGAPPNAME`` names one, so ``pg_stat_activity`` and ``pg_locks`` say which
server process holds a session or a match's lock (``server.started`` logs the pid).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import structlog
from psycopg import errors as pg_errors

from tablehost.errors import RecordError, UnknownMatch
from tablehost.store.base import (
    INSERT_SCHEMA,
    POSTGRESQL,
    SCHEMA,
    SCHEMA_VERSION,
    SELECT_MATCH,
    SELECT_MOVES,
    SELECT_SCHEMA,
    SELECT_VERSION,
    Claim,
    MatchStore,
    Statements,
    rebuild_record,
)
from tablehost.store.errors import (
    StoreConflict,
    StoreError,
    StoreMissingRef,
    StoreUnavailable,
    StoreUnusable,
)

log = structlog.get_logger(__name__)

CHANNEL = "tablehost_moves"
"""The NOTIFY channel of stored versions; payload ``"<match_id> <version>"``."""
RETURNS_CHANNEL = "tablehost_returns"
"""The NOTIFY channel of seats that came back; payload ``"<match_id> <player_id> <version>"``."""
HOLD_TIMEOUT_MS = 5000
"""A session idle inside a transaction this long is ended by the server, freeing its match locks."""
LOCK_WAIT_MS = 3 * HOLD_TIMEOUT_MS
"""A request waits at most this long for a match another process holds, then fails as unavailable
(a hold outlives :data:`HOLD_TIMEOUT_MS` only if the database did not end the holder's session)."""
POOL_SIZE = 32
"""Connections per process: requests that hold a match, plus reads."""
POOL_WAIT_S = 10.0
"""A caller waits this long for a free connection before the store reports itself unavailable."""
CONNECT_TIMEOUT_S = 5
LISTEN_POLL_S = 1.0
SCHEMA_LOCK_KEY = 0x7461626C65
"""Advisory lock key serialising schema creation when several servers start at once."""
NOT_FLUSHED = " -c synchronous_commit=off"
"""Added to :data:`SESSION_OPTIONS` under ``synchronous="NORMAL"`` (the later setting wins)."""
SESSION_OPTIONS = (
    # A commit returns once durable, whatever the database's default: a reply means stored.
    "-c synchronous_commit=on "
    f"-c idle_in_transaction_session_timeout={HOLD_TIMEOUT_MS} -c lock_timeout={LOCK_WAIT_MS} "
    "-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=2"
)


def translate(exc: psycopg.Error) -> StoreError:
    """Our error for a ``psycopg`` error (the one mapping of this backend)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, pg_errors.UniqueViolation):
        return StoreConflict(f"a row with this key is stored already ({text})")
    if isinstance(exc, pg_errors.ForeignKeyViolation):
        return StoreMissingRef(f"the row names a match or module that is not stored ({text})")
    if isinstance(exc, pg_errors.LockNotAvailable):
        return StoreUnavailable(f"another server held this match too long; try again ({text})")
    if isinstance(
        exc, psycopg.OperationalError | pg_errors.AdminShutdown | pg_errors.IdleInTransactionSessionTimeout
    ):
        return StoreUnavailable(f"the PostgreSQL database cannot be reached: {text}")
    return StoreError(f"PostgreSQL failed: {text}")


@contextmanager
def driver_errors() -> Iterator[None]:
    """Raise :func:`translate`'s error ``from`` any ``psycopg.Error`` inside the block."""
    try:
        yield
    except psycopg.Error as exc:
        raise translate(exc) from exc


def lock_key(match_id: str) -> int:
    """The advisory lock key of a match: the first 8 bytes of its id's sha256, as a signed bigint."""
    return int.from_bytes(hashlib.sha256(match_id.encode()).digest()[:8], "big", signed=True)


SEARCH_LOCK_PREFIX = "bot-search "
"""Prefixed to a match id for the key of its server-bot search lock (:meth:`PostgresStore.searching`),
which is then never the match's own hold (:func:`lock_key` of the bare id)."""


def application_name() -> str:
    """The ``application_name`` of this process's database sessions: ``tablehost-<pid>`` (the
    pid of the process asking, so a ``serve --processes`` child names itself)."""
    return f"tablehost-{os.getpid()}"


def redact(url: str) -> str:
    """``url`` without its password, for logs and messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        return "postgresql://(unparsable)"
    host = info.get("host", "localhost")
    port = f":{info['port']}" if info.get("port") else ""
    user = f"{info['user']}@" if info.get("user") else ""
    return f"postgresql://{user}{host}{port}/{info.get('dbname', '')}"


def _note_of(params: tuple[Any, ...]) -> str:
    """The NOTIFY payload of a journal entry's ``INSERT`` parameters: ``"<match_id> <version>"``."""
    return f"{params[0]} {params[1]}"


@contextmanager
def _autocommit(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Run the block with ``conn`` in autocommit (the block sends its own ``BEGIN``/``COMMIT``);
    a transaction the block left open is rolled back, and the connection is put back as the
    pool hands them out (autocommit off). A broken connection is left to the pool to drop."""
    conn.autocommit = True
    try:
        yield
    finally:
        try:
            if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.execute("ROLLBACK")
            if not conn.closed:
                conn.autocommit = False
        except psycopg.Error:
            conn.close()  # never handed out again in an unknown state: the pool drops it


def _end_failed(conn: psycopg.Connection[Any]) -> None:
    """Roll back ``conn``'s failed transaction (autocommit connection) so its locks go at once;
    a connection that cannot is closed (the pool drops it)."""
    try:
        if not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
            conn.execute("ROLLBACK")
    except psycopg.Error:
        conn.close()


class _Pool:
    """Up to ``size`` connections (autocommit off), handed out one caller at a time.

    A connection that failed is closed rather than handed out again.
    """

    def __init__(self, url: str, size: int, *, durable: bool = True) -> None:
        self.url = url
        self.size = size
        self.durable = durable
        self._idle: list[psycopg.Connection[Any]] = []
        self._open = 0
        self._cond = threading.Condition()
        self._closed = False

    def connect(self, *, autocommit: bool = False) -> psycopg.Connection[Any]:
        """A new connection with this server's session options and :func:`application_name`.

        Raises:
            StoreUnavailable: the database cannot be reached (or another :func:`translate` error).
        """
        info = psycopg.conninfo.conninfo_to_dict(self.url)
        # The URL's own ``options`` (e.g. a search_path) come first; ours are added to them.
        given = info.get("options", "")
        named = info.get("application_name") or os.environ.get("PGAPPNAME")
        with driver_errors():
            return psycopg.connect(
                self.url if named else psycopg.conninfo.make_conninfo(self.url, application_name=application_name()),
                autocommit=autocommit,
                connect_timeout=CONNECT_TIMEOUT_S,
                options=f"{given} {SESSION_OPTIONS}{'' if self.durable else NOT_FLUSHED}".strip(),
            )

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection outside any transaction; rolled back (and dropped if broken) afterwards."""
        conn = self._take()
        try:
            yield conn
        except BaseException:
            self._give_back(conn, failed=True)
            raise
        self._give_back(conn, failed=False)

    def _take(self) -> psycopg.Connection[Any]:
        deadline = time.monotonic() + POOL_WAIT_S
        with self._cond:
            while True:
                if self._closed:
                    raise StoreUnavailable("the store is closed")
                if self._idle:
                    return self._idle.pop()
                if self._open < self.size:
                    self._open += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreUnavailable(
                        f"all {self.size} database connections of this server stayed busy for {POOL_WAIT_S:g} s"
                    )
                self._cond.wait(left)
        try:
            return self.connect()
        except BaseException:
            with self._cond:
                self._open -= 1
                self._cond.notify()
            raise

    def _give_back(self, conn: psycopg.Connection[Any], *, failed: bool) -> None:
        try:
            if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.rollback()
        except psycopg.Error:
            failed = True
        broken = conn.closed or (
            failed and conn.info.transaction_status == psycopg.pq.TransactionStatus.UNKNOWN
        )
        with self._cond:
            if broken or self._closed:
                self._open -= 1
                conn.close()
            else:
                self._idle.append(conn)
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            for conn in self._idle:
                conn.close()
            self._open -= len(self._idle)
            self._idle.clear()
            self._cond.notify_all()


class PostgresStore(MatchStore):
    """The store on a PostgreSQL database (``--store postgresql://USER@HOST/DB``).

    Args:
        url: a libpq connection URL or ``key=value`` string.
        pool_size: connections this process opens at most (plus one for LISTEN).
        synchronous: ``"FULL"`` (default) or ``"NORMAL"``: see Durability in the module docstring.

    Raises:
        ValueError: an unknown ``synchronous`` mode.
        StoreUnavailable: the database cannot be reached.
        StoreUnusable: the URL is malformed.
        RecordError: the database was written by a newer schema version.
    """

    shared = True

    def __init__(self, url: str, *, pool_size: int = POOL_SIZE, synchronous: str = "FULL") -> None:
        super().__init__()
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, not {synchronous!r}")
        try:
            psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.Error as exc:
            raise StoreUnusable(f"malformed PostgreSQL URL {redact(url)}: {exc}") from exc
        self.description = redact(url)
        self._dialect = POSTGRESQL
        self._pool = _Pool(url, pool_size, durable=synchronous == "FULL")
        self.description += "" if synchronous == "FULL" else " (sync normal)"
        self._latest: dict[str, int] = {}
        self._latest_lock = threading.Lock()
        self._subscribers: list[Callable[[str, int], None]] = []
        self._return_subscribers: list[Callable[[str, int, int], None]] = []
        self._closing = threading.Event()
        self._search_conn: psycopg.Connection[Any] | None = None  # holds the search locks
        self._search_lock = threading.Lock()
        self._create_schema()
        self._listening = threading.Event()
        self._listener = threading.Thread(target=self._listen, name="tablehost-pg-listen", daemon=True)
        self._listener.start()
        self._listening.wait(CONNECT_TIMEOUT_S)

    def _create_schema(self) -> None:
        with self._pool.connection() as conn, driver_errors():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK_KEY,))
            for statement in SCHEMA:
                conn.execute(self._dialect.sql(statement))  # type: ignore[arg-type]
            row = conn.execute(SELECT_SCHEMA).fetchone()
            if row is None:
                conn.execute(self._dialect.sql(INSERT_SCHEMA), (SCHEMA_VERSION,))  # type: ignore[arg-type]
            elif row[0] > SCHEMA_VERSION:
                raise RecordError(
                    f"{self.description} has schema version {row[0]}; this tablehost reads up to "
                    f"{SCHEMA_VERSION}"
                )
            conn.commit()

    # ------------------------------------------------------------ the backend's part

    def _write(self, statements: Statements) -> list[int]:
        started = time.perf_counter()
        with self._pool.connection() as conn, driver_errors():
            counts = [conn.execute(self._dialect.sql(sql), params).rowcount for sql, params in statements]  # type: ignore[arg-type]
            conn.commit()
        self._timed_commit(started, 1)
        return counts

    def _query(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._pool.connection() as conn, driver_errors():
            rows = conn.execute(self._dialect.sql(statement), params).fetchall()  # type: ignore[arg-type]
            conn.rollback()
            return rows

    def append(self, match_id: str, kind: str, payload: dict[str, Any]) -> None:
        """Store one journal entry without holding the match first: one round trip.

        The entry's transaction takes the match's advisory lock (so it waits while another
        process holds the match through :meth:`claim`, and never lands inside that hold),
        inserts the entry, queues its ``NOTIFY`` and commits: one simple query, one implicit
        transaction. The ``(match_id, version)`` key decides between processes: the entry is
        stored only when its version is new, so a caller whose copy of the match is behind the
        database gets :class:`StoreConflict` and nothing is stored (it catches up and redoes
        the request under :meth:`claim`, ``MatchRegistry.submit``).

        Args, Raises: as :meth:`MatchStore.append` (``StoreConflict``: another process stored
        this version first; ``StoreUnavailable``: the database cannot be reached, or another
        process held the match longer than :data:`LOCK_WAIT_MS`).
        """
        sql, params = self.move_statement(match_id, kind, payload)
        started = time.perf_counter()
        with self._pool.connection() as conn, driver_errors(), _autocommit(conn):
            psycopg.ClientCursor(conn).execute(
                self._journal_sql(sql, locked=True), (lock_key(match_id), *params, CHANNEL, _note_of(params))
            )
        self._timed_commit(started, 1)
        self._journaled(match_id, kind, payload)

    def _journal_sql(self, insert: str, *, commit: bool = False, locked: bool = False) -> str:
        """The journal entry's ``INSERT``, its ``NOTIFY`` (sent when the transaction commits)
        and, inside a hold, the ``COMMIT`` that ends the hold: one simple query, one round trip.
        ``locked``: first take the match's advisory lock (parameter 1: :func:`lock_key`) in the
        query's own implicit transaction (:meth:`append`).

        Sent with client-side parameters (``psycopg.ClientCursor``): the server's extended
        protocol takes one statement per message. No pipeline mode here or in :meth:`claim`:
        after one, PostgreSQL 15 did not apply ``idle_in_transaction_session_timeout`` to the
        session (measured), and that timeout is what frees the matches of a hung process.
        """
        return (
            ("SELECT pg_advisory_xact_lock(%s); " if locked else "")
            + self._dialect.sql(insert)
            + "; SELECT pg_notify(%s, %s)"
            + ("; COMMIT" if commit else "")
        )

    @contextmanager
    def claim(self, match_id: str) -> Iterator[Claim]:
        """Hold ``match_id`` (its advisory lock) for one request; see the module docstring.

        The slow, sure path (a move normally goes through :meth:`append`, one round trip):
        two round trips in all for a move: one opens the transaction, takes the lock and reads
        the version; the claim's journal writes the entry, announces it and commits (which
        frees the lock). Entries after the first go through :meth:`append`. A first entry that
        fails rolls back at once (freeing the lock); a request that journals nothing rolls back
        when the block exits (one more round trip).

        Raises:
            StoreUnavailable: the database cannot be reached (nothing held).
        """
        with self._pool.connection() as conn, _autocommit(conn):
            cursor = psycopg.ClientCursor(conn)
            with driver_errors():
                # The version is read by a statement of its own: its snapshot is taken once the
                # lock is held (READ COMMITTED takes one per statement).
                cursor.execute(
                    "BEGIN; SELECT pg_advisory_xact_lock(%s); " + self._dialect.sql(SELECT_VERSION),
                    (lock_key(match_id), match_id),
                )
                while cursor.nextset():
                    pass
                row = cursor.fetchone()
            version = int(row[0]) if row else 0

            held = [True]

            def journal(kind: str, payload: dict[str, Any]) -> None:
                if not held[0]:  # the hold ended with the first entry: the next ones as any entry
                    self.append(match_id, kind, payload)
                    return
                sql, params = self.move_statement(match_id, kind, payload)
                started = time.perf_counter()
                held[0] = False  # committed or failed, the transaction (and the hold) ends here
                with driver_errors():
                    try:
                        cursor.execute(self._journal_sql(sql, commit=True), (*params, CHANNEL, _note_of(params)))
                    except psycopg.Error:
                        _end_failed(conn)  # frees the hold now, not when the block exits
                        raise
                self._timed_commit(started, 1)
                self._journaled(match_id, kind, payload)

            def load_record() -> dict[str, Any]:
                with driver_errors():
                    return self._record_from(cursor, match_id)

            yield Claim(version, journal, load_record)

    def load_record(self, match_id: str) -> dict[str, Any]:
        """As :meth:`MatchStore.load_record`, in one round trip (:meth:`_record_from`); a process
        catching up with another's move reads the match this way.

        Raises:
            UnknownMatch: no such match.
            RecordError: an undo entry names a move that is not stored.
            StoreUnavailable: the database cannot be reached.
        """
        with self._pool.connection() as conn, driver_errors(), _autocommit(conn):
            return self._record_from(psycopg.ClientCursor(conn), match_id)

    def _record_from(self, cursor: psycopg.ClientCursor[Any], match_id: str) -> dict[str, Any]:
        """The match's setup and journal read by one simple query of two statements (one round
        trip, in the cursor's transaction if one is open, else in one implicit transaction), as
        a record. Raises UnknownMatch, RecordError (and ``psycopg.Error``)."""
        cursor.execute(
            self._dialect.sql(SELECT_MATCH) + "; " + self._dialect.sql(SELECT_MOVES), (match_id, match_id)
        )
        rows = cursor.fetchall()
        if not cursor.nextset():
            raise StoreError("PostgreSQL answered one result for the record's two statements")
        moves = cursor.fetchall()
        if not rows:
            raise UnknownMatch(f"no match {match_id}", match_id=match_id)
        return rebuild_record(rows[0][1], moves)

    def ping(self) -> None:
        self._query("SELECT 1")

    def latest_version(self, match_id: str) -> int | None:
        with self._latest_lock:
            return self._latest.get(match_id)

    def subscribe(self, callback: Callable[[str, int], None]) -> None:
        self._subscribers.append(callback)

    def announce_return(self, match_id: str, player_id: int, version: int) -> None:
        try:
            with self._pool.connection() as conn, driver_errors():
                conn.execute("SELECT pg_notify(%s, %s)", (RETURNS_CHANNEL, f"{match_id} {player_id} {version}"))
                conn.commit()  # a notification is sent when its transaction commits
        except StoreError as exc:
            log.warning("store.announce_failed", match_id=match_id, error=str(exc))

    def subscribe_returns(self, callback: Callable[[str, int, int], None]) -> None:
        self._return_subscribers.append(callback)

    @contextmanager
    def searching(self, match_id: str) -> Iterator[bool]:
        """The match's search lock: a session-level advisory lock, tried without waiting on a
        connection of its own (outside the pool), released when the block ends.

        A process that dies frees it with its connection, so another one takes the decision at
        its next tick. A connection lost meanwhile frees it early: another process may then
        search the same decision, and the later one is refused as stale when it plays.

        Yields:
            False while another process holds it (this one must not search).

        Raises:
            StoreUnavailable: the database cannot be reached (nothing taken).
        """
        key = lock_key(SEARCH_LOCK_PREFIX + match_id)
        with self._search_lock:
            conn = self._search_connection()
            try:
                taken = bool(conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0])  # type: ignore[index]
            except psycopg.Error as exc:
                self._drop_search_connection()
                raise translate(exc) from exc
        try:
            yield taken
        finally:
            if taken:
                with self._search_lock:
                    if self._search_conn is conn:
                        try:
                            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                        except psycopg.Error:  # the session is gone, and its locks with it
                            self._drop_search_connection()

    def _search_connection(self) -> psycopg.Connection[Any]:
        """The connection holding this process's search locks (opened on first use); call
        under ``_search_lock``."""
        if self._search_conn is None or self._search_conn.closed:
            if self._closing.is_set():
                raise StoreUnavailable("the store is closed")
            self._search_conn = self._pool.connect(autocommit=True)
        return self._search_conn

    def _drop_search_connection(self) -> None:
        if self._search_conn is not None:
            self._search_conn.close()
        self._search_conn = None

    def close(self) -> None:
        """Stop listening and close every connection; the store is unusable afterwards."""
        self._closing.set()
        with self._search_lock:
            self._drop_search_connection()
        self._pool.close()
        self._listener.join(timeout=LISTEN_POLL_S * 3)

    # ------------------------------------------------------------ notifications

    def _listen(self) -> None:
        """Follow ``CHANNEL`` until closed; after a lost connection, reconnect and re-read versions."""
        backoff = 0.1
        while not self._closing.is_set():
            try:
                conn = self._pool.connect(autocommit=True)
            except StoreError as exc:
                log.warning("store.listen_failed", error=str(exc))
                self._listening.set()
                self._closing.wait(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            backoff = 0.1
            try:
                with conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    conn.execute(f"LISTEN {RETURNS_CHANNEL}")
                    self._resync(conn)
                    self._listening.set()
                    while not self._closing.is_set():
                        for note in conn.notifies(timeout=LISTEN_POLL_S):
                            if note.channel == RETURNS_CHANNEL:
                                self._heard_return(note.payload)
                            else:
                                self._heard(note.payload)
            except psycopg.Error as exc:
                if not self._closing.is_set():
                    log.warning("store.listen_lost", error=str(exc).strip())

    def _resync(self, conn: psycopg.Connection[Any]) -> None:
        """Re-read every match's newest version (notifications may have been missed meanwhile)."""
        rows = conn.execute("SELECT match_id, MAX(version) FROM moves GROUP BY match_id").fetchall()
        for match_id, version in rows:
            self._note(str(match_id), int(version))

    def _heard(self, payload: str) -> None:
        match_id, _, version = payload.rpartition(" ")
        try:
            self._note(match_id, int(version))
        except ValueError:
            log.warning("store.bad_notification", payload=payload[:200])

    def _heard_return(self, payload: str) -> None:
        try:
            match_id, player_id, version = payload.rsplit(" ", 2)
            heard = (match_id, int(player_id), int(version))
        except ValueError:
            log.warning("store.bad_notification", payload=payload[:200])
            return
        for callback in self._return_subscribers:
            try:
                callback(*heard)
            except Exception:
                log.exception("store.subscriber_failed", match_id=match_id)

    def _note(self, match_id: str, version: int) -> None:
        with self._latest_lock:
            if version <= self._latest.get(match_id, -1):
                return
            self._latest[match_id] = version
        for callback in self._subscribers:
            try:
                callback(match_id, version)
            except Exception:
                log.exception("store.subscriber_failed", match_id=match_id)
