"""``WalCheckpointer``: SQLite's WAL checkpoints on a thread of their own, off the request path.

SQLite in WAL mode appends every commit to the ``-wal`` file and copies the pages back into
the database file in a checkpoint. By default the commit that takes the WAL past 1,000 pages
runs that checkpoint itself, inside the store's lock, with an fsync of the WAL and of the
database file: measured with ``bench/latency_trace.py`` (tic-tac-toe, 100 paced matches,
``synchronous=NORMAL``), one commit in about 300 took 5 to 10 ms instead of 0.2, and every
move queued behind it waited as long (16 of the run's 4,578 moves, a third of its requests
over 5 ms once collections were short).

Here the writer's connection checkpoints only as a safety net (:data:`WRITER_CHECKPOINT_PAGES`,
should this thread fall far behind), and this thread runs ``PRAGMA wal_checkpoint(PASSIVE)``
on its own connection after every :data:`CHECKPOINT_EVERY_COMMITS` commits, or
:data:`CHECKPOINT_IDLE_S` after the last commit. A passive checkpoint takes no lock a writer
needs: commits go on while it copies pages, and the next commit after a complete one starts
the WAL again from its beginning. The ``sqlite3`` module releases the interpreter lock while
the checkpoint runs, so its copying and fsyncs cost the request threads nothing.

Durability is unchanged: a commit is as durable as before when it returns (``FULL``: the WAL
is synced in the commit; ``NORMAL``: the WAL survives a killed process); a checkpoint only
moves committed pages into the database file, and SQLite recovers from a process killed in the
middle of one (the WAL still holds every page; it is reset only after a complete checkpoint).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

CHECKPOINT_EVERY_COMMITS = 200
"""Commits between two checkpoints: a move writes 2 to 4 WAL pages, so the WAL stays under about
800 pages (3 MiB), below SQLite's own 1,000-page trigger."""
CHECKPOINT_IDLE_S = 1.0
"""Seconds after which pending commits are checkpointed even if fewer than the above came."""
WRITER_CHECKPOINT_PAGES = 20_000
"""The writer connection's ``wal_autocheckpoint`` (pages, 80 MiB at 4 KiB): only if this thread
cannot keep up does a commit checkpoint inside the request, as SQLite does by default."""


class WalCheckpointer:
    """A daemon thread that checkpoints one SQLite database in WAL mode.

    Args:
        path: the database file (already in WAL mode).
        synchronous: ``"FULL"`` or ``"NORMAL"``, the writer's mode (a checkpoint syncs the WAL
            before copying and the database file after, in both).
        every_commits: commits that wake the thread (:data:`CHECKPOINT_EVERY_COMMITS`).
        idle_s: seconds after which fewer pending commits are checkpointed too.

    Attributes:
        checkpoints: passes that found committed pages in the WAL and left them all in the
            database file.

    Raises:
        sqlite3.Error: the database cannot be opened.
    """

    def __init__(
        self,
        path: Path,
        synchronous: str,
        *,
        every_commits: int = CHECKPOINT_EVERY_COMMITS,
        idle_s: float = CHECKPOINT_IDLE_S,
    ) -> None:
        self.every_commits = every_commits
        self.idle_s = idle_s
        self.checkpoints = 0
        self._pending = 0
        self._stopping = False
        self._wake = threading.Event()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        self._thread = threading.Thread(target=self._run, name="tablehost-checkpoint", daemon=True)
        self._thread.start()

    def committed(self) -> None:
        """Count one commit of the writer (call after it returns); wakes the thread every
        :attr:`every_commits`. Cheap: no lock (a lost count only delays a checkpoint)."""
        self._pending += 1
        if self._pending >= self.every_commits:
            self._wake.set()

    def close(self) -> None:
        """Run a last checkpoint of what is pending, stop the thread and close its connection."""
        self._stopping = True
        self._wake.set()
        self._thread.join(timeout=30)
        self._db.close()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.idle_s)
            self._wake.clear()
            if self._pending:
                self._pending = 0
                self._checkpoint()
            if self._stopping:
                return

    def _checkpoint(self) -> None:
        try:
            row = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:  # the writer's safety net checkpoints meanwhile
            log.warning("store.checkpoint_failed", error=str(exc))
            return
        busy, wal_pages, copied = row
        if not busy and wal_pages > 0 and copied == wal_pages:
            self.checkpoints += 1
