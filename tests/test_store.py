"""The stores: modules, matches, tokens and the move journal, on their own (no guest).

Every behaviour both backends promise runs on SQLite and on PostgreSQL (the ``backend``
fixture; PostgreSQL is a throwaway cluster, tests/conftest.py). SQLite's own parts (the data
directory, its lock and modes, group commit) follow.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablehost.errors import RecordError, UnknownMatch
from tablehost.store import (
    POSTGRESQL,
    SCHEMA,
    DataDirInUse,
    DataDirUnusable,
    MatchStore,
    SeatRow,
    SqliteStore,
    StoreConflict,
    StoreMissingRef,
    StoreUnavailable,
    StoreUnusable,
    open_store,
)
from tablehost.store.wal_checkpoint import WRITER_CHECKPOINT_PAGES

RUNTIME = Path(__file__).resolve().parents[1] / "runtime"


def setup_record(match_id: str = "m-1", sha256: str = "a" * 64) -> dict[str, Any]:
    return {
        "format": "tablehost.record/2",
        "match_id": match_id,
        "module": {"sha256": sha256, "name": "ttt"},
        "players": [{"player_id": 1, "username": "ann", "color": "#111"}],
        "setup": {
            "seed": 2**64 - 1,
            "state": {"spaces": []},
            "patches": [],
            "rng_used": False,
            "score_labels": ["Points"],
        },
        "moves": [],
        "created_at": "2026-11-29T21:00:00.000000Z",
    }


def move(seq: int, player_id: int = 1) -> dict[str, Any]:
    return {
        "seq": seq,
        "player_id": player_id,
        "action": {"type": "space_click", "space_id": f"s{seq}"},
        "view_action": None,
        "seed": 2**63 + seq,
        "patches": [{"op": "set_meta", "key": "k", "value": seq}],
        "rng_used": False,
        "allow_undo": True,
        "undone": False,
        "undo_seq": None,
        "at": "2026-11-29T21:00:01.000000Z",
    }


class Backend:
    """Where a test's store lives: ``spec`` opens it again (a restart) with :meth:`open`."""

    def __init__(self, name: str, spec: str, tmp_path: Path) -> None:
        self.name, self.spec, self.tmp_path = name, spec, tmp_path
        self.opened: list[MatchStore] = []

    def open(self) -> MatchStore:
        store = open_store(self.spec, self.tmp_path / "data")
        self.opened.append(store)
        return store

    def committed_version(self, match_id: str) -> int:
        """The newest version another connection sees (only committed rows)."""
        sql = "SELECT COALESCE(MAX(version), 0) FROM moves WHERE match_id = "
        if self.name == "sqlite":
            with sqlite3.connect(self.tmp_path / "data" / "tablehost.sqlite3") as reader:
                return int(reader.execute(sql + "?", (match_id,)).fetchone()[0])
        import psycopg

        with psycopg.connect(self.spec) as reader:
            row = reader.execute(sql + "%s", (match_id,)).fetchone()
            assert row is not None
            return int(row[0])


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    spec = (
        f"sqlite:{tmp_path / 'data'}"
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    opened = Backend(request.param, spec, tmp_path)
    yield opened
    for store in opened.opened:
        store.close()


@pytest.fixture
def store(backend: Backend) -> MatchStore:
    s = backend.open()
    s.put_module("a" * 64, "ttt", b"\0asm", ["memory"], "2026-11-29T21:00:00Z")
    return s


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path)
    s.put_module("a" * 64, "ttt", b"\0asm", ["memory"], "2026-11-29T21:00:00Z")
    yield s
    s.close()


def test_module_upload_is_idempotent_and_keeps_first_name(store: MatchStore) -> None:
    again = store.put_module("a" * 64, "other name", b"\0asm", ["memory"], "2027-01-01T00:00:00Z")
    assert again.name == "ttt" and not again.newly_stored
    assert store.put_module("b" * 64, "new", b"\0asm2", [], "2027-01-01T00:00:00Z").newly_stored
    assert again.uploaded_at == "2026-11-29T21:00:00Z"
    assert [m.sha256 for m in store.list_modules()] == ["a" * 64, "b" * 64]
    stored = store.get_module("a" * 64)
    assert stored is not None and stored.data == b"\0asm" and stored.size_bytes == 4
    assert store.get_module("c" * 64) is None


def test_setup_then_moves_round_trip_through_a_reopened_store(backend: Backend, store: MatchStore) -> None:
    seats = [SeatRow("1" * 64, "m-1", 1), SeatRow("2" * 64, "m-1", None)]
    journal = store.journal_for("m-1", seats)
    journal("setup", setup_record())
    journal("move", move(1))
    journal("move", move(2))
    journal("undo", {"seq": 2, "undo_seq": 3, "at": "2026-11-29T21:00:02.000000Z"})
    store.close()

    reopened = backend.open()
    record = reopened.load_record("m-1")
    assert record["setup"]["seed"] == 2**64 - 1  # 64-bit seeds survive exactly
    assert [(m["seq"], m["undone"], m["undo_seq"]) for m in record["moves"]] == [
        (1, False, None),
        (2, True, 3),
    ]
    assert record["moves"][0]["seed"] == 2**63 + 1
    assert set(reopened.load_seats()) == set(seats)
    assert [r["match_id"] for r in reopened.load_records()] == ["m-1"]


def test_a_waiting_match_its_joins_and_its_start_round_trip(backend: Backend, store: MatchStore) -> None:
    pending = {"match_id": "m-1", "status": "waiting", "module": {"sha256": "a" * 64, "name": "ttt"},
               "created_at": "2026-11-29T21:00:00.000000Z", "seats": [1, 2]}
    store.create_pending(pending, [SeatRow("1" * 64, "m-1", 1), SeatRow("0" * 64, "m-1", None)])
    store.update_pending("m-1", {**pending, "seats": [1]}, [SeatRow("2" * 64, "m-1", 2)])
    assert store.load_record("m-1")["seats"] == [1] and store.load_record("m-1")["moves"] == []
    with pytest.raises(StoreConflict):  # a token hash taken twice: nothing of that join is stored
        store.update_pending("m-1", {**pending, "seats": []}, [SeatRow("2" * 64, "m-1", 2)])
    assert store.load_record("m-1")["seats"] == [1]
    store.update_pending("m-1", {**setup_record(), "moves": [move(1)]}, [])  # the last join: moves dropped
    store.append("m-1", "move", move(1))
    store.append("m-1", "resign", {"seq": 2, "player_id": 1, "at": "2026-11-29T21:00:02.000000Z"})
    store.append("m-1", "end", {"seq": 3, "ended_by": "aborted", "player_id": None, "at": "2026-11-29T21:00:03Z"})
    with pytest.raises(StoreConflict):  # one version, one entry, whatever its kind
        store.append("m-1", "end", {"seq": 3, "ended_by": "aborted", "player_id": None, "at": "x"})
    store.close()
    record = backend.open().load_record("m-1")
    assert "status" not in record and [m["seq"] for m in record["moves"]] == [1]
    assert record["resignations"] == [{"seq": 2, "player_id": 1, "at": "2026-11-29T21:00:02.000000Z"}]
    assert record["ending"]["ended_by"] == "aborted" and record["ending"]["seq"] == 3


def test_a_duplicated_version_is_refused_and_nothing_is_written(store: MatchStore) -> None:
    store.create_match(setup_record(), [])
    store.append("m-1", "move", move(1))
    with pytest.raises(StoreConflict):
        store.append("m-1", "move", move(1, player_id=2))
    assert [m["player_id"] for m in store.load_record("m-1")["moves"]] == [1]


def test_a_move_of_an_unknown_match_is_refused(store: MatchStore) -> None:
    with pytest.raises(StoreMissingRef):
        store.append("m-nope", "move", move(1))


def test_a_match_of_an_unknown_module_is_refused_with_its_tokens(store: MatchStore) -> None:
    with pytest.raises(StoreMissingRef):
        store.create_match(setup_record(sha256="f" * 64), [SeatRow("3" * 64, "m-1", 1)])
    assert store.load_seats() == []
    with pytest.raises(UnknownMatch):
        store.load_record("m-1")


def test_an_undo_of_a_move_that_is_not_stored_is_reported(store: MatchStore) -> None:
    store.create_match(setup_record(), [])
    store.append("m-1", "undo", {"seq": 7, "undo_seq": 1, "at": "x"})
    with pytest.raises(RecordError, match="undo of move 7"):
        store.load_record("m-1")


def test_unknown_journal_kind_and_sync_mode_are_refused(tmp_path: Path, store: MatchStore) -> None:
    with pytest.raises(ValueError):
        store.append("m-1", "teleport", {})
    with pytest.raises(ValueError):
        SqliteStore(tmp_path / "other", synchronous="OFF")


def test_an_unknown_store_kind_is_refused_with_the_forms_it_takes(tmp_path: Path) -> None:
    with pytest.raises(StoreUnusable, match="sqlite:DIR or postgresql://"):
        open_store("mysql://x/y", tmp_path)


def test_tokens_are_found_by_hash_and_admin_tokens_are_shared(store: MatchStore) -> None:
    store.create_match(setup_record(), [SeatRow("5" * 64, "m-1", 1), SeatRow("6" * 64, "m-1", None)])
    assert store.find_seat("5" * 64) == SeatRow("5" * 64, "m-1", 1)
    assert store.find_seat("6" * 64) == SeatRow("6" * 64, "m-1", None)
    assert store.find_seat("7" * 64) is None
    assert not store.is_admin_token("8" * 64)
    store.add_admin_token("8" * 64, "t")
    store.add_admin_token("8" * 64, "t")  # a restarted server registers it again
    assert store.is_admin_token("8" * 64)


def test_a_claim_sees_the_stored_version_and_its_journal_commits(backend: Backend, store: MatchStore) -> None:
    store.create_match(setup_record(), [])
    store.append("m-1", "move", move(1))
    with store.claim("m-1") as claim:
        if store.shared:
            assert claim.version == 1
        assert [m["seq"] for m in claim.load_record()["moves"]] == [1]
        claim.journal("move", move(2))
        assert backend.committed_version("m-1") == 2  # committed before the journal returned
    with store.claim("m-1") as claim, pytest.raises(StoreConflict):
        claim.journal("move", move(2, player_id=9))
    assert [m["player_id"] for m in store.load_record("m-1")["moves"]] == [1, 1]


def test_entries_after_the_first_in_one_claim_are_each_committed(backend: Backend, store: MatchStore) -> None:
    """A move and the host moves after it (a zombie seat) journal through one claim: the first
    commit ends the hold, the next entries commit one by one, and a failing one changes nothing
    (the connection goes back to the pool clean). Each committed entry, by either path, is told
    to ``on_journaled`` once (the server's count of stored moves); a refused one is not."""
    seen: list[tuple[str, str, int]] = []
    store.on_journaled = lambda match_id, kind, payload: seen.append((match_id, kind, payload["seq"]))
    store.create_match(setup_record(), [])
    with store.claim("m-1") as claim:
        claim.journal("move", move(1))
        claim.journal("move", move(2, player_id=2))
        assert backend.committed_version("m-1") == 2
        with pytest.raises(StoreConflict):
            claim.journal("move", move(2, player_id=9))
        claim.journal("move", move(3))
    for stored in range(3, 6):  # every pooled connection still works, outside any transaction
        with store.claim("m-1") as claim:
            if store.shared:
                assert claim.version == stored
        store.append("m-1", "move", move(stored + 1))
    assert [m["seq"] for m in store.load_record("m-1")["moves"]] == [1, 2, 3, 4, 5, 6]
    assert seen == [("m-1", "move", seq) for seq in range(1, 7)]


def test_concurrent_appends_are_each_committed_before_they_return(
    backend: Backend, store: MatchStore
) -> None:
    lanes, moves_per_lane = 6, 20
    entries_before = store.entries
    for lane in range(lanes):
        store.create_match(setup_record(f"m-{lane}"), [])
    failures: list[str] = []

    def play(lane: int) -> None:
        # A second connection sees only committed rows: "returned" must imply "committed".
        for seq in range(1, moves_per_lane + 1):
            store.append(f"m-{lane}", "move", move(seq, player_id=lane))
            if backend.committed_version(f"m-{lane}") < seq:
                failures.append(f"m-{lane} move {seq} returned before it was committed")

    threads = [threading.Thread(target=play, args=(lane,)) for lane in range(lanes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for lane in range(lanes):
        stored = store.load_record(f"m-{lane}")["moves"]
        assert [(m["seq"], m["player_id"]) for m in stored] == [
            (s, lane) for s in range(1, moves_per_lane + 1)
        ]
    assert store.entries - entries_before == lanes * (moves_per_lane + 1)
    assert store.transactions <= store.entries


def queue_as_one_group(store: SqliteStore, calls: list[Callable[[], None]]) -> list[BaseException | None]:
    """Run ``calls`` in threads, each queued in this order while the store is busy, so the
    first caller to get the connection commits all of them in one transaction; return each
    call's error (``None`` when it succeeded)."""
    outcomes: list[BaseException | None] = [None] * len(calls)

    def run(index: int) -> None:
        try:
            calls[index]()
        except BaseException as exc:  # noqa: BLE001 - collected for the assertions
            outcomes[index] = exc

    threads = []
    with store._lock:  # the store is "busy syncing": every caller queues and waits
        for index in range(len(calls)):
            thread = threading.Thread(target=run, args=(index,))
            thread.start()
            threads.append(thread)
            deadline = time.monotonic() + 5
            while len(store._queued) <= index and time.monotonic() < deadline:
                time.sleep(0.001)
    for thread in threads:
        thread.join()
    return outcomes


def test_a_failing_entry_fails_only_its_caller_and_the_group_keeps_queue_order(
    sqlite_store: SqliteStore,
) -> None:
    store = sqlite_store
    store.create_match(setup_record("m-1"), [])
    store.create_match(setup_record("m-2"), [])
    transactions = store.transactions
    outcomes = queue_as_one_group(
        store,
        [
            lambda: store.append("m-1", "move", move(1, player_id=1)),
            lambda: store.append("m-1", "move", move(1, player_id=2)),  # the same version again
            lambda: store.append("m-nope", "move", move(1)),  # unknown match
            lambda: store.append("m-1", "move", move(2, player_id=1)),
            lambda: store.create_match(setup_record("m-3"), [SeatRow("3" * 64, "m-3", 1)]),
            lambda: store.append("m-2", "move", move(1, player_id=1)),
        ],
    )
    assert [type(error).__name__ if error else None for error in outcomes] == [
        None,
        "StoreConflict",
        "StoreMissingRef",
        None,
        None,
        None,
    ]
    assert store.transactions == transactions + 1
    # Queue order: the first of the two version-1 moves won.
    assert [(m["seq"], m["player_id"]) for m in store.load_record("m-1")["moves"]] == [(1, 1), (2, 1)]
    assert [m["seq"] for m in store.load_record("m-2")["moves"]] == [1]
    assert store.load_record("m-3")["moves"] == []
    assert SeatRow("3" * 64, "m-3", 1) in store.load_seats()


def test_a_failed_match_creation_in_a_group_leaves_none_of_its_rows(sqlite_store: SqliteStore) -> None:
    store = sqlite_store
    store.create_match(setup_record("m-1"), [])
    outcomes = queue_as_one_group(
        store,
        [
            # The second seat row repeats the first token: the whole entry must go, match row included.
            lambda: store.create_match(
                setup_record("m-2"), [SeatRow("4" * 64, "m-2", 1), SeatRow("4" * 64, "m-2", 2)]
            ),
            lambda: store.append("m-1", "move", move(1)),
        ],
    )
    assert isinstance(outcomes[0], StoreConflict) and outcomes[1] is None
    with pytest.raises(UnknownMatch):
        store.load_record("m-2")
    assert store.load_seats() == []
    assert [m["seq"] for m in store.load_record("m-1")["moves"]] == [1]


def test_schema_uses_only_portable_types() -> None:
    column = re.compile(r"^\s+([a-z_0-9]+)\s+([A-Z]+|\{blob\})", re.MULTILINE)
    types = {match[1] for statement in SCHEMA for match in column.findall(statement)}
    assert types == {"VARCHAR", "BIGINT", "TEXT", "INTEGER", "{blob}"}
    assert "BYTEA" in POSTGRESQL.sql(SCHEMA[1]) and "%s" in POSTGRESQL.sql("VALUES (?)")


# A history is a list of steps: True = a new move, False = undo the newest move not yet undone.
histories = st.lists(st.booleans(), max_size=30)


# The store is shared by the examples on purpose: each example uses a match of its own.
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=histories)
def test_record_rebuilt_from_the_journal_matches_the_history(store: MatchStore, steps: list[bool]) -> None:
    match_id = "m-" + uuid.uuid4().hex  # one store serves every example
    store.create_match(setup_record(match_id), [])
    version, live, expected = 0, [], []
    for new_move in steps:
        if new_move or not live:
            version += 1
            store.append(match_id, "move", move(version))
            live.append(version)
            expected.append([version, False, None])
        else:
            undone = live.pop()
            version += 1
            store.append(match_id, "undo", {"seq": undone, "undo_seq": version, "at": "t"})
            expected[[e[0] for e in expected].index(undone)][1:] = [True, version]
    moves = store.load_record(match_id)["moves"]
    assert [[m["seq"], m["undone"], m["undo_seq"]] for m in moves] == expected
    assert len(moves) + sum(m["undone"] for m in moves) == version


WRITER = """
import sys
from tablehost.store import open_store
sys.path.insert(0, sys.argv[2])
from test_store import move, setup_record
store = open_store(sys.argv[1], "unused")
store.put_module("a" * 64, "ttt", b"\\0asm", [], "t")
store.create_match(setup_record(), [])
seq = 0
while True:
    seq += 1
    store.append("m-1", "move", move(seq))
    print(seq, flush=True)
"""


def test_every_acknowledged_append_survives_sigkill(backend: Backend) -> None:
    env = {**os.environ, "PYTHONPATH": str(RUNTIME)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, backend.spec, str(Path(__file__).parent)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    acknowledged = 0
    for line in proc.stdout:
        acknowledged = int(line)
        if acknowledged >= 40:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    seqs = [m["seq"] for m in backend.open().load_record("m-1")["moves"]]
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(seqs) >= acknowledged


def test_wal_checkpoints_run_on_their_own_thread_not_in_the_writers_commit(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path, checkpoint_every=10)
    store.put_module("a" * 64, "ttt", b"\0asm", [], "t")
    store.create_match(setup_record(), [])
    for seq in range(1, 31):
        store.append("m-1", "move", move(seq))
    deadline = time.monotonic() + 10
    while store._checkpointer.checkpoints == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store._checkpointer.checkpoints > 0
    # The writer would checkpoint only past WRITER_CHECKPOINT_PAGES: far beyond 30 moves.
    assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == WRITER_CHECKPOINT_PAGES
    # The database file alone (no WAL) holds the checkpointed moves.
    alone = tmp_path / "alone.sqlite3"
    alone.write_bytes((tmp_path / "tablehost.sqlite3").read_bytes())
    with sqlite3.connect(alone) as copy:
        assert copy.execute("SELECT COUNT(*) FROM moves").fetchone()[0] >= 10
    store.close()


CHECKPOINTING_WRITER = """
import sys
from tablehost.store import SqliteStore
sys.path.insert(0, sys.argv[2])
from test_store import move, setup_record
store = SqliteStore(sys.argv[1], synchronous=sys.argv[3], checkpoint_every=2)
store.put_module("a" * 64, "ttt", b"\\0asm", [], "t")
store.create_match(setup_record(), [])
seq = 0
while True:
    seq += 1
    store.append("m-1", "move", move(seq))
    print(seq, store._checkpointer.checkpoints, flush=True)
"""


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
def test_every_acknowledged_append_survives_sigkill_amid_background_checkpoints(
    tmp_path: Path, synchronous: str
) -> None:
    env = {**os.environ, "PYTHONPATH": str(RUNTIME)}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHECKPOINTING_WRITER, str(tmp_path), str(Path(__file__).parent), synchronous],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    acknowledged = checkpoints = 0
    for line in proc.stdout:
        acknowledged, checkpoints = map(int, line.split())
        if acknowledged >= 300:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert checkpoints > 0  # the kill came while checkpoints were being made
    store = SqliteStore(tmp_path)
    seqs = [m["seq"] for m in store.load_record("m-1")["moves"]]
    store.close()
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(seqs) >= acknowledged


def test_a_second_store_on_the_same_directory_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    first = SqliteStore(tmp_path)
    with pytest.raises(DataDirInUse, match=re.escape(str(tmp_path.resolve()))):
        SqliteStore(tmp_path)
    first.close()
    SqliteStore(tmp_path).close()


def test_a_data_directory_that_is_a_file_or_under_a_file_is_refused(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("not a directory")
    for path in (a_file, a_file / "below"):
        with pytest.raises(DataDirUnusable, match="cannot use .* as the data directory"):
            SqliteStore(path)


def test_the_directory_and_database_files_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = SqliteStore(data)
    store.put_module("a" * 64, "ttt", b"\0asm", [], "t")  # the WAL exists once written
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    files = [p for p in data.iterdir() if p.name.startswith("tablehost")]
    assert {p.name for p in files} >= {"tablehost.sqlite3", "tablehost.sqlite3-wal", "tablehost.lock"}
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o600 for p in files}
    store.close()


def test_a_claim_on_postgresql_waits_for_another_process_and_then_sees_its_move(postgres_url: str) -> None:
    """Two stores on one database stand for two server processes."""
    first, second = open_store(postgres_url, "unused"), open_store(postgres_url, "unused")
    try:
        first.put_module("a" * 64, "ttt", b"\0asm", [], "t")
        first.create_match(setup_record(), [])
        heard: list[tuple[str, int]] = []
        second.subscribe(lambda match_id, version: heard.append((match_id, version)))
        second_claimed = threading.Event()
        seen_by_second: list[int | None] = []

        def claim_second() -> None:
            with second.claim("m-1") as claim:
                second_claimed.set()
                seen_by_second.append(claim.version)

        with first.claim("m-1") as claim:
            assert claim.version == 0
            waiter = threading.Thread(target=claim_second)
            waiter.start()
            assert not second_claimed.wait(0.5)  # held by the first "process"
            claim.journal("move", move(1))  # commits, which ends the hold
            assert second_claimed.wait(5)
        waiter.join()
        assert seen_by_second == [1]
        deadline = time.monotonic() + 5
        while second.latest_version("m-1") != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert second.latest_version("m-1") == 1 and ("m-1", 1) in heard
    finally:
        first.close()
        second.close()


def test_a_killed_process_frees_its_hold_on_a_match_at_once(postgres_url: str) -> None:
    holder = """
import sys, time
from tablehost.store import open_store
store = open_store(sys.argv[1], "unused")
with store.claim("m-1"):
    print("held", flush=True)
    time.sleep(60)
"""
    store = open_store(postgres_url, "unused")
    try:
        store.put_module("a" * 64, "ttt", b"\0asm", [], "t")
        store.create_match(setup_record(), [])
        env = {**os.environ, "PYTHONPATH": str(RUNTIME)}
        proc = subprocess.Popen(
            [sys.executable, "-c", holder, postgres_url], stdout=subprocess.PIPE, text=True, env=env
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        started = time.monotonic()
        with store.claim("m-1") as claim:
            assert claim.version == 0
        assert time.monotonic() - started < 2.0
    finally:
        store.close()


def test_a_hung_process_loses_its_hold_after_the_hold_timeout(postgres_url: str) -> None:
    from tablehost.store.postgresql import HOLD_TIMEOUT_MS

    holder = """
import os, signal, sys
from tablehost.store import open_store
store = open_store(sys.argv[1], "unused")
with store.claim("m-1"):
    print("held", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)  # hangs holding the match, as a frozen server would
"""
    store = open_store(postgres_url, "unused")
    env = {**os.environ, "PYTHONPATH": str(RUNTIME)}
    proc = subprocess.Popen(
        [sys.executable, "-c", holder, postgres_url], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        store.put_module("a" * 64, "ttt", b"\0asm", [], "t")
        store.create_match(setup_record(), [])
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        started = time.monotonic()
        with store.claim("m-1") as claim:
            claim.journal("move", move(1))
        waited = time.monotonic() - started
        assert HOLD_TIMEOUT_MS / 1000 - 1 <= waited <= HOLD_TIMEOUT_MS / 1000 + 5
        assert [m["seq"] for m in store.load_record("m-1")["moves"]] == [1]
    finally:
        proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
        store.close()


def test_store_specs_and_urls_for_people(tmp_path: Path) -> None:
    from tablehost.store.postgresql import redact

    store = open_store(f"sqlite:{tmp_path / 'elsewhere'}", tmp_path / "data")
    try:
        assert store.description == f"sqlite:{(tmp_path / 'elsewhere' / 'tablehost.sqlite3').resolve()}"
        assert (tmp_path / "elsewhere" / "tablehost.sqlite3").exists() and not (tmp_path / "data").exists()
    finally:
        store.close()
    with pytest.raises(StoreUnusable, match="needs a directory"):
        open_store("sqlite:", tmp_path)
    assert redact("postgresql://ann:secret@db.example:5433/games") == "postgresql://ann@db.example:5433/games"
    assert "secret" not in redact("host=db password=secret dbname=games")


def test_a_request_waits_for_a_held_match_only_so_long(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tablehost.store import postgresql

    # A short wait for this test only; the server waits LOCK_WAIT_MS.
    monkeypatch.setattr(postgresql, "SESSION_OPTIONS", postgresql.SESSION_OPTIONS + " -c lock_timeout=300")
    holder, waiter = open_store(postgres_url, "unused"), open_store(postgres_url, "unused")
    try:
        holder.put_module("a" * 64, "ttt", b"\0asm", [], "t")
        holder.create_match(setup_record(), [])
        with holder.claim("m-1"):
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match="held this match too long"), waiter.claim("m-1"):
                pass
            assert time.monotonic() - started < 5
        with waiter.claim("m-1") as claim:  # free again once the holder is done
            assert claim.version == 0
    finally:
        holder.close()
        waiter.close()


def test_postgresql_commits_are_flushed_unless_the_operator_chooses_normal(postgres_url: str) -> None:
    """``--sync full`` (the default) forces ``synchronous_commit=on`` whatever the database's
    default; ``--sync normal`` turns it off for this process's sessions only, and says so."""
    from tablehost.store.postgresql import PostgresStore

    def setting(store: PostgresStore) -> str:
        return str(store._query("SHOW synchronous_commit")[0][0])

    with psycopg_connect(postgres_url) as admin:  # a database whose own default is "off"
        dbname = admin.info.dbname
        admin.execute(f"ALTER DATABASE {dbname} SET synchronous_commit = off")
    try:
        full, normal = open_store(postgres_url, "unused"), open_store(postgres_url, "unused", synchronous="NORMAL")
        try:
            assert setting(full) == "on" and "sync normal" not in full.description
            assert setting(normal) == "off" and normal.description.endswith("(sync normal)")
            # The journal path (its own connection state) keeps the setting too.
            full.put_module("a" * 64, "ttt", b"\0asm", [], "t")
            full.create_match(setup_record(), [])
            with full.claim("m-1") as claim:
                claim.journal("move", move(1))
            assert setting(full) == "on"
        finally:
            full.close()
            normal.close()
    finally:
        with psycopg_connect(postgres_url) as admin:
            admin.execute(f"ALTER DATABASE {dbname} RESET synchronous_commit")
    with pytest.raises(ValueError, match="FULL or NORMAL"):
        PostgresStore(postgres_url, synchronous="OFF")


def psycopg_connect(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True)


def test_postgresql_sessions_say_which_process_holds_them(postgres_url: str) -> None:
    """PostgreSQL connections carried no ``application_name``: ``pg_stat_activity`` could not
    say which server process held a session (or a match's lock). Now ``tablehost-<pid>``; a name
    the URL gives is kept."""
    store = open_store(postgres_url, "unused")
    try:
        mine = f"tablehost-{os.getpid()}"
        assert store._query("SELECT current_setting('application_name')") == [(mine,)]
        sessions = store._query(
            "SELECT application_name FROM pg_stat_activity WHERE datname = current_database()"
        )
        assert sessions.count((mine,)) >= 2, sessions  # the pooled session and the listener
    finally:
        store.close()
    named = open_store(f"{postgres_url}?application_name=blue", "unused")
    try:
        assert named._query("SELECT current_setting('application_name')") == [("blue",)]
    finally:
        named.close()
