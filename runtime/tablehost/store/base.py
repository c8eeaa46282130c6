"""What every store backend shares: the schema, the statements, the rows, and :class:`MatchStore`.

The schema and every statement are written once, in portable SQL (``VARCHAR``, ``BIGINT``,
``TEXT``, ``INTEGER`` and one dialect-specific name, the byte-string type); a backend's
:class:`Dialect` turns the ``?`` placeholders and ``{blob}`` into its own words. A backend adds a
table or column by adding it here, so SQLite and PostgreSQL never drift apart.

A backend implements five things: :meth:`MatchStore._write` (commit a group of statements
before returning), :meth:`MatchStore._query`, :meth:`MatchStore.claim` (serve one match alone
for one request), :meth:`MatchStore.ping` and :meth:`MatchStore.close`. The rest (modules,
matches, tokens, the journal, rebuilding records) lives here once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

import orjson
import structlog

from tablehost.errors import RecordError, UnknownMatch

log = structlog.get_logger(__name__)

SCHEMA_VERSION = 1


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
    """CREATE TABLE IF NOT EXISTS admin_tokens (
        token_sha256 VARCHAR(64) PRIMARY KEY,
        created_at   VARCHAR(40) NOT NULL
    )""",
)
"""The tables. ``seats.player_id`` is NULL for a spectator token. ``moves`` is append-only: a
move row keyed by its ``seq``, an undo row keyed by its ``undo_seq`` (both are match versions,
so the key also refuses a duplicated move, from this process or another). ``admin_tokens``
holds the hash of every server's admin token, so any process on a shared database accepts it."""

INSERT_MODULE = (
    "INSERT INTO modules (sha256, name, size_bytes, exports, data, uploaded_at) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (sha256) DO NOTHING"
)
SELECT_MODULE = "SELECT sha256, name, size_bytes, exports, uploaded_at, data FROM modules WHERE sha256 = ?"
SELECT_MODULES = (
    "SELECT sha256, name, size_bytes, exports, uploaded_at FROM modules ORDER BY uploaded_at, sha256"
)
INSERT_MATCH = "INSERT INTO matches (match_id, module_sha256, setup, created_at) VALUES (?, ?, ?, ?)"
INSERT_SEAT = "INSERT INTO seats (token_sha256, match_id, player_id) VALUES (?, ?, ?)"
UPDATE_MATCH_SETUP = "UPDATE matches SET setup = ? WHERE match_id = ?"
INSERT_MOVE = "INSERT INTO moves (match_id, version, kind, payload) VALUES (?, ?, ?, ?)"
SELECT_MATCH_IDS = "SELECT match_id FROM matches ORDER BY created_at, match_id"
SELECT_MATCH = "SELECT match_id, setup FROM matches WHERE match_id = ?"
SELECT_MOVES = "SELECT kind, payload FROM moves WHERE match_id = ? ORDER BY version"
SELECT_VERSION = "SELECT COALESCE(MAX(version), 0) FROM moves WHERE match_id = ?"
SELECT_SEATS = "SELECT token_sha256, match_id, player_id FROM seats"
SELECT_SEAT = "SELECT token_sha256, match_id, player_id FROM seats WHERE token_sha256 = ?"
INSERT_ADMIN = "INSERT INTO admin_tokens (token_sha256, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING"
SELECT_ADMIN = "SELECT token_sha256 FROM admin_tokens WHERE token_sha256 = ?"
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


Journal = Callable[[str, dict[str, Any]], None]
"""The ``journal(kind, payload)`` hook of ``Match`` (docs/architecture.md)."""

Statements = list[tuple[str, tuple[Any, ...]]]
"""``(sql, params)`` pairs written with ``?`` markers (the store turns them into its dialect)."""


@dataclass
class Claim:
    """One request's hold on one match (:meth:`MatchStore.claim`).

    Attributes:
        version: the match's newest stored version (moves + undos) once the hold was taken;
            ``None`` when only this process writes the store (it already knows).
        journal: the hook the match writes through while the hold lasts; it commits before it
            returns (and with PostgreSQL ends the hold: later entries are written as by
            :meth:`MatchStore.append`).
        load_record: rebuild the match's record as stored now (when ``version`` is newer than
            the copy in memory: another process moved).
    """

    version: int | None
    journal: Journal
    load_record: Callable[[], dict[str, Any]]


def version_of(kind: str, payload: dict[str, Any]) -> int:
    """The match version a journal entry creates: a move's ``seq``, an undo's ``undo_seq``,
    an early ending's (``end``) or a resignation's (``resign``) ``seq``.

    Raises:
        ValueError: an unknown kind.
    """
    if kind == "move":
        return int(payload["seq"])
    if kind == "undo":
        return int(payload["undo_seq"])
    if kind in ("end", "resign"):
        return int(payload["seq"])
    raise ValueError(f"unknown journal kind {kind!r}")


class MatchStore:
    """Durable storage of modules, matches, seat tokens and moves; a backend subclasses it.

    Attributes:
        shared: true when several processes may use the database at once (PostgreSQL); the
            server then takes :meth:`claim` per request and follows :meth:`subscribe`.
        description: where the data lives, for people (no password).
        transactions: write transactions committed (a counter for benchmarks).
        entries: journal entries those transactions stored.
        on_commit: called with each write transaction's duration in seconds (metrics).
        on_journaled: called as ``on_journaled(match_id, kind, payload)`` after each journal
            entry (a move, undo, resignation or early ending; not a new match's setup) is
            committed, by whichever path wrote it (:meth:`append`, a :meth:`claim`'s journal):
            how the server counts every stored move (metrics). Its failure is logged, never raised.
    """

    shared = False
    description = ""

    def __init__(self) -> None:
        self.transactions = 0
        self.entries = 0
        self.on_commit: Callable[[float], None] | None = None
        self.on_journaled: Callable[[str, str, dict[str, Any]], None] | None = None

    # ------------------------------------------------------------ the backend's part

    def _write(self, statements: Statements) -> list[int]:
        """Commit ``statements`` in one transaction; return each one's row count once durable.

        Raises:
            StoreConflict, StoreMissingRef: a statement broke a key (nothing of it is stored).
            StoreUnavailable: the database cannot be reached.
        """
        raise NotImplementedError

    def _query(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of one read statement. Raises :class:`StoreUnavailable`."""
        raise NotImplementedError

    def claim(self, match_id: str) -> AbstractContextManager[Claim]:
        """Hold ``match_id`` for one request: no other process changes it until the hold ends.

        The hold ends when the claim's journal commits or the ``with`` block exits.

        Raises:
            StoreUnavailable: the database cannot be reached.
        """
        raise NotImplementedError

    def ping(self) -> None:
        """Check the database answers. Raises :class:`StoreUnavailable` when it does not."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the database; the store is unusable afterwards."""
        raise NotImplementedError

    def latest_version(self, match_id: str) -> int | None:
        """The newest version of ``match_id`` this process heard of from others, or ``None``."""
        del match_id
        return None

    def subscribe(self, callback: Callable[[str, int], None]) -> None:
        """Call ``callback(match_id, version)`` after any process stores a version (shared stores)."""
        del callback

    def announce_return(self, match_id: str, player_id: int, version: int) -> None:
        """Tell the other processes that seat ``player_id`` of ``match_id`` came back at
        ``version`` (the host stops playing for it); nothing on a store of one process.

        Best effort, like the return itself (a restart forgets it too): never raises.
        """
        del match_id, player_id, version

    def subscribe_returns(self, callback: Callable[[str, int, int], None]) -> None:
        """Call ``callback(match_id, player_id, version)`` when another process announces a seat
        came back (:meth:`announce_return`; shared stores)."""
        del callback

    @contextmanager
    def searching(self, match_id: str) -> Iterator[bool]:
        """Take the right to search a server bot's decision in ``match_id`` for the block.

        Yields whether this process has it. A store of one process (SQLite) always yields True:
        its bot thinker asks one search per match at a time already. A shared store yields False
        while another process holds it, so two processes never search the same decision.

        Raises:
            StoreUnavailable: the database cannot be reached (nothing taken).
        """
        del match_id
        yield True

    def _timed_commit(self, started: float, entries: int) -> None:
        self.transactions += 1
        self.entries += entries
        if self.on_commit is not None:
            self.on_commit(time.perf_counter() - started)

    def _journaled(self, match_id: str, kind: str, payload: dict[str, Any]) -> None:
        """Tell :attr:`on_journaled` of one committed journal entry (a backend calls it right
        after the commit). An observer that raises is logged (``store.observer_failed``): the
        entry is stored, and the request that wrote it must not fail for a count."""
        observer = self.on_journaled
        if observer is None:
            return
        try:
            observer(match_id, kind, payload)
        except Exception as exc:  # noqa: BLE001 - a metric's bug must not turn a stored move into a failure
            log.error("store.observer_failed", match_id=match_id, kind=kind, error=repr(exc)[:200])

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
        exports_json = orjson.dumps(sorted(exports)).decode()
        (inserted,) = self._write(
            [(INSERT_MODULE, (sha256, name, len(data), exports_json, data, uploaded_at))]
        )
        if inserted == 1:
            return StoredModule(sha256, name, len(data), sorted(exports), uploaded_at, newly_stored=True)
        row = self._query(SELECT_MODULE, (sha256,))[0]
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
            StoreConflict: the match id or a token hash is stored already.
            StoreMissingRef: the module is unknown.
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

    def create_pending(self, pending: dict[str, Any], seats: list[SeatRow]) -> None:
        """Store a waiting match (the lobby's form, :mod:`tablehost.lobby`) and its first tokens.

        Args:
            pending: ``PendingMatch.to_json()``; needs ``match_id``, ``module.sha256``, ``created_at``.
            seats: the tokens of its reserved seats and its spectator token.

        Raises:
            StoreConflict: the match id or a token hash is stored already.
            StoreMissingRef: the module is unknown.
        """
        match_id = pending["match_id"]
        row = (match_id, pending["module"]["sha256"], orjson.dumps(pending).decode(), pending["created_at"])
        self._write(
            [(INSERT_MATCH, row)]
            + [(INSERT_SEAT, (seat.token_sha256, match_id, seat.player_id)) for seat in seats]
        )

    def update_pending(self, match_id: str, stored: dict[str, Any], seats: list[SeatRow]) -> None:
        """A join: store the match's new form and the new seat tokens in one transaction.

        Args:
            match_id: the match.
            stored: the new ``matches.setup`` value: the waiting form after the join, or, for the
                join that filled the last seat, the started match's record without moves.
            seats: the tokens handed out by this join.

        Raises:
            StoreConflict: a token hash is stored already (nothing of the join is stored).
        """
        record = {key: value for key, value in stored.items() if key != "moves"}
        self._write(
            [(INSERT_SEAT, (seat.token_sha256, match_id, seat.player_id)) for seat in seats]
            + [(UPDATE_MATCH_SETUP, (orjson.dumps(record).decode(), match_id))]
        )

    def append(self, match_id: str, kind: str, payload: dict[str, Any]) -> None:
        """Append one journal entry and commit before returning.

        Args:
            match_id: the match.
            kind: ``"move"`` (payload is a move dict with ``seq``), ``"undo"`` (payload
                ``{"seq", "undo_seq", "at"}``), ``"end"`` (an early ending ``{"seq", "ended_by",
                "player_id", "at"}``) or ``"resign"`` (one seat leaving, ``{"seq", ...}``).
            payload: the journal payload as the match emitted it.

        On a shared store the entry waits while another process holds the match
        (:meth:`claim`) and never lands inside that hold; with a version key and dense versions
        (each entry is the match's version + 1) a writer whose copy of the match is behind the
        database gets ``StoreConflict`` and nothing is stored: that is how a shared store's
        caller learns it must catch up (``MatchRegistry._changed``).

        Raises:
            ValueError: an unknown kind.
            StoreConflict: this version of the match is stored already (a duplicated move, or
                another process's move at this version); nothing stored.
            StoreMissingRef: the match is unknown.
            StoreUnavailable: the database cannot be reached.
        """
        self._write([self.move_statement(match_id, kind, payload)])
        self._journaled(match_id, kind, payload)

    @staticmethod
    def move_statement(match_id: str, kind: str, payload: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
        """The ``INSERT`` of one journal entry. Raises ``ValueError`` for an unknown kind."""
        return INSERT_MOVE, (match_id, version_of(kind, payload), kind, orjson.dumps(payload).decode())

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

    def stored_version(self, match_id: str) -> int:
        """The newest stored version of ``match_id`` (0: no move yet, or no such match)."""
        return int(self._query(SELECT_VERSION, (match_id,))[0][0])

    def load_record(self, match_id: str) -> dict[str, Any]:
        """Rebuild one match's record (format ``tablehost.record/1``) from its setup and journal.

        Raises:
            UnknownMatch: no such match.
            RecordError: an undo entry names a move that is not stored.
        """
        rows = self._query(SELECT_MATCH, (match_id,))
        if not rows:
            raise UnknownMatch(f"no match {match_id}", match_id=match_id)
        return rebuild_record(rows[0][1], self._query(SELECT_MOVES, (match_id,)))

    def match_ids(self) -> list[str]:
        """Every stored match id, oldest match first."""
        return [row[0] for row in self._query(SELECT_MATCH_IDS)]

    def load_records(self) -> Iterator[dict[str, Any]]:
        """Every match's record, oldest match first (see :meth:`load_record`)."""
        for match_id in self.match_ids():
            yield self.load_record(match_id)

    # ------------------------------------------------------------ tokens

    def load_seats(self) -> list[SeatRow]:
        """Every stored seat and spectator token hash."""
        return [SeatRow(token, match_id, pid) for token, match_id, pid in self._query(SELECT_SEATS)]

    def find_seat(self, token_sha256: str) -> SeatRow | None:
        """The seat or spectator token with this hash, or ``None``."""
        rows = self._query(SELECT_SEAT, (token_sha256,))
        return SeatRow(*rows[0]) if rows else None

    def add_admin_token(self, token_sha256: str, created_at: str) -> None:
        """Register an admin token's hash (kept if already there)."""
        self._write([(INSERT_ADMIN, (token_sha256, created_at))])

    def is_admin_token(self, token_sha256: str) -> bool:
        """Whether any server on this database registered this admin token hash."""
        return bool(self._query(SELECT_ADMIN, (token_sha256,)))


def rebuild_record(setup_json: str, journal_rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    """A match record from its stored setup and ``(kind, payload)`` journal rows in version order.

    Raises:
        RecordError: an undo entry names a move that is not stored.
    """
    record: dict[str, Any] = orjson.loads(setup_json)
    moves: list[dict[str, Any]] = []
    by_seq: dict[int, dict[str, Any]] = {}
    for kind, payload_json in journal_rows:
        payload = orjson.loads(payload_json)
        if kind == "move":
            move = {**payload, "undone": False, "undo_seq": None}
            moves.append(move)
            by_seq[move["seq"]] = move
        elif kind == "end":
            record["ending"] = payload
        elif kind == "resign":
            record.setdefault("resignations", []).append(payload)
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


def _module_from_row(row: tuple[Any, ...], data: bytes = b"") -> StoredModule:
    sha256, name, size_bytes, exports_json, uploaded_at = row
    return StoredModule(sha256, name, int(size_bytes), list(orjson.loads(exports_json)), uploaded_at, data)
