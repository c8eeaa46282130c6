"""Shared fixtures: a throwaway PostgreSQL cluster for the store and multi-process tests.

The cluster is made once per test session with ``initdb`` and ``pg_ctl`` in a temporary folder
(Debian's ``postgresql`` package; ``.ci/run`` installs it), listens on a free loopback port,
and is stopped and deleted at the end. Each test that asks for :func:`postgres_url` gets a
database of its own. As root the cluster runs as the ``postgres`` user (PostgreSQL refuses
root). Without the binaries the PostgreSQL tests skip with the reason, except under CI
(``CI`` set), where they fail: CI must never pass by skipping them.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

pytest_plugins = ["browser_support"]  # the browser tests' session-wide chromium and web table

PG_USER = "tablehost"


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _runner() -> tuple[list[str], int | None]:
    """The command prefix that runs PostgreSQL's tools as a non-root user, and that user's uid."""
    if os.geteuid() != 0:
        return [], None
    try:
        uid = pwd.getpwnam("postgres").pw_uid
    except KeyError:
        pytest.fail("running as root and there is no 'postgres' user to run PostgreSQL as")
    return ["runuser", "-u", "postgres", "--"], uid


class PostgresCluster:
    """A running throwaway cluster; :meth:`new_database` hands out empty databases.

    Args:
        fsync: flush to disk as a real deployment does (benchmarks); the tests turn it off,
            since they kill servers, never the database.
    """

    def __init__(self, *, fsync: bool = False) -> None:
        initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
        if initdb is None or pg_ctl is None:
            reason = "PostgreSQL's initdb/pg_ctl are not installed (apt-get install postgresql)"
            if os.environ.get("CI"):
                pytest.fail(f"{reason}; CI must run the PostgreSQL tests")
            pytest.skip(reason)
        prefix, uid = _runner()
        self.root = Path(tempfile.mkdtemp(prefix="tablehost-pg-"))
        if uid is not None:
            os.chown(self.root, uid, -1)
        self.data = self.root / "data"
        self.port = _free_port()
        self.pg_ctl, self.prefix = pg_ctl, prefix
        subprocess.run(
            [*prefix, initdb, "-D", str(self.data), "-U", PG_USER, "-A", "trust", "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
        )
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync={'on' if fsync else 'off'} "
            "-c max_connections=300 -c shared_buffers=32MB"
        )
        subprocess.run(
            [
                *prefix,
                pg_ctl,
                "-D",
                str(self.data),
                "-l",
                str(self.root / "log"),
                "-o",
                options,
                "-w",
                "start",
            ],
            check=True,
            capture_output=True,
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{PG_USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def postmaster_pid(self) -> int:
        """The cluster's main process id (its children are the database's processes)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        subprocess.run(
            [*self.prefix, self.pg_ctl, "-D", str(self.data), "-m", "immediate", "stop"],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """A libpq URL of an empty database of its own on the session's cluster."""
    return postgres_cluster.new_database()


@pytest.fixture(autouse=True)
def _structlog_as_before() -> Iterator[None]:
    """Put structlog's configuration back after each test: a test that runs a command in-process
    (``cli.main``, ``serve``) configures logging for the whole process (level ``warning`` for the
    CLI), which would hide the info events a later test captures."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)
