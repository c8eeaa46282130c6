"""MatchStore: modules, matches, tokens and the move journal, on its own (no guest)."""

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablehost.errors import RecordError
from tablehost.store import POSTGRESQL, SCHEMA, DataDirInUse, DataDirUnusable, MatchStore, SeatRow

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


@pytest.fixture
def store(tmp_path: Path) -> MatchStore:
    s = MatchStore(tmp_path)
    s.put_module("a" * 64, "ttt", b"\0asm", ["memory"], "2026-11-29T21:00:00Z")
    return s


def test_module_upload_is_idempotent_and_keeps_first_name(store: MatchStore) -> None:
    again = store.put_module("a" * 64, "other name", b"\0asm", ["memory"], "2027-01-01T00:00:00Z")
    assert again.name == "ttt" and not again.newly_stored
    assert store.put_module("b" * 64, "new", b"\0asm2", [], "2027-01-01T00:00:00Z").newly_stored
    assert again.uploaded_at == "2026-11-29T21:00:00Z"
    assert [m.sha256 for m in store.list_modules()] == ["a" * 64, "b" * 64]
    stored = store.get_module("a" * 64)
    assert stored is not None and stored.data == b"\0asm" and stored.size_bytes == 4
    assert store.get_module("c" * 64) is None


def test_setup_then_moves_round_trip_through_a_reopened_store(tmp_path: Path, store: MatchStore) -> None:
    seats = [SeatRow("1" * 64, "m-1", 1), SeatRow("2" * 64, "m-1", None)]
    journal = store.journal_for("m-1", seats)
    journal("setup", setup_record())
    journal("move", move(1))
    journal("move", move(2))
    journal("undo", {"seq": 2, "undo_seq": 3, "at": "2026-11-29T21:00:02.000000Z"})
    store.close()

    reopened = MatchStore(tmp_path)
    record = reopened.load_record("m-1")
    assert record["setup"]["seed"] == 2**64 - 1  # 64-bit seeds survive exactly
    assert [(m["seq"], m["undone"], m["undo_seq"]) for m in record["moves"]] == [
        (1, False, None),
        (2, True, 3),
    ]
    assert record["moves"][0]["seed"] == 2**63 + 1
    assert set(reopened.load_seats()) == set(seats)
    assert [r["match_id"] for r in reopened.load_records()] == ["m-1"]


def test_a_duplicated_version_is_refused_and_nothing_is_written(store: MatchStore) -> None:
    store.create_match(setup_record(), [])
    store.append("m-1", "move", move(1))
    with pytest.raises(sqlite3.IntegrityError):
        store.append("m-1", "move", move(1, player_id=2))
    assert [m["player_id"] for m in store.load_record("m-1")["moves"]] == [1]


def test_a_move_of_an_unknown_match_is_refused(store: MatchStore) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.append("m-nope", "move", move(1))


def test_a_match_of_an_unknown_module_is_refused_with_its_tokens(store: MatchStore) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.create_match(setup_record(sha256="f" * 64), [SeatRow("3" * 64, "m-1", 1)])
    assert store.load_seats() == []
    with pytest.raises(KeyError):
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
        MatchStore(tmp_path / "other", synchronous="OFF")


def test_concurrent_appends_are_each_committed_before_they_return(tmp_path: Path, store: MatchStore) -> None:
    lanes, moves_per_lane = 6, 20
    for lane in range(lanes):
        store.create_match(setup_record(f"m-{lane}"), [])
    failures: list[str] = []

    def play(lane: int) -> None:
        # A second connection sees only committed rows: "returned" must imply "committed".
        reader = sqlite3.connect(tmp_path / "tablehost.sqlite3")
        for seq in range(1, moves_per_lane + 1):
            store.append(f"m-{lane}", "move", move(seq, player_id=lane))
            row = reader.execute(
                "SELECT version FROM moves WHERE match_id = ? AND version = ?", (f"m-{lane}", seq)
            ).fetchone()
            if row is None:
                failures.append(f"m-{lane} move {seq} returned before it was committed")
        reader.close()

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
    assert store.entries == lanes * (moves_per_lane + 1)
    assert store.transactions <= store.entries


def queue_as_one_group(store: MatchStore, calls: list[Callable[[], None]]) -> list[BaseException | None]:
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


def test_a_failing_entry_fails_only_its_caller_and_the_group_keeps_queue_order(store: MatchStore) -> None:
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
        "IntegrityError",
        "IntegrityError",
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


def test_a_failed_match_creation_in_a_group_leaves_none_of_its_rows(store: MatchStore) -> None:
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
    assert isinstance(outcomes[0], sqlite3.IntegrityError) and outcomes[1] is None
    with pytest.raises(KeyError):
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


@settings(max_examples=40, deadline=None)
@given(steps=histories)
def test_record_rebuilt_from_the_journal_matches_the_history(
    tmp_path_factory: Any, steps: list[bool]
) -> None:
    store = MatchStore(tmp_path_factory.mktemp("db"))
    store.put_module("a" * 64, "ttt", b"\0asm", [], "t")
    store.create_match(setup_record(), [])
    version, live, expected = 0, [], []
    for new_move in steps:
        if new_move or not live:
            version += 1
            store.append("m-1", "move", move(version))
            live.append(version)
            expected.append([version, False, None])
        else:
            undone = live.pop()
            version += 1
            store.append("m-1", "undo", {"seq": undone, "undo_seq": version, "at": "t"})
            expected[[e[0] for e in expected].index(undone)][1:] = [True, version]
    moves = store.load_record("m-1")["moves"]
    assert [[m["seq"], m["undone"], m["undo_seq"]] for m in moves] == expected
    assert len(moves) + sum(m["undone"] for m in moves) == version
    store.close()


WRITER = """
import sys
from tablehost.store import MatchStore
sys.path.insert(0, sys.argv[2])
from test_store import move, setup_record
store = MatchStore(sys.argv[1])
store.put_module("a" * 64, "ttt", b"\\0asm", [], "t")
store.create_match(setup_record(), [])
seq = 0
while True:
    seq += 1
    store.append("m-1", "move", move(seq))
    print(seq, flush=True)
"""


def test_every_acknowledged_append_survives_sigkill(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(RUNTIME)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path), str(Path(__file__).parent)],
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
    seqs = [m["seq"] for m in MatchStore(tmp_path).load_record("m-1")["moves"]]
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(seqs) >= acknowledged


def test_a_second_store_on_the_same_directory_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    first = MatchStore(tmp_path)
    with pytest.raises(DataDirInUse, match=re.escape(str(tmp_path.resolve()))):
        MatchStore(tmp_path)
    first.close()
    MatchStore(tmp_path).close()


def test_a_data_directory_that_is_a_file_or_under_a_file_is_refused(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("not a directory")
    for path in (a_file, a_file / "below"):
        with pytest.raises(DataDirUnusable, match="cannot use .* as the data directory"):
            MatchStore(path)


def test_the_directory_and_database_files_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = MatchStore(data)
    store.put_module("a" * 64, "ttt", b"\0asm", [], "t")  # the WAL exists once written
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    files = [p for p in data.iterdir() if p.name.startswith("tablehost")]
    assert {p.name for p in files} >= {"tablehost.sqlite3", "tablehost.sqlite3-wal", "tablehost.lock"}
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o600 for p in files}
    store.close()
