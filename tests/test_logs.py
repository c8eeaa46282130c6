"""Logging setup (:mod:`tablehost.logs`): a second ``configure`` reaches every logger.

A command configures logs more than once in one process (the CLI's own setup, then ``serve``
or ``simulate``), and tests capture events with ``structlog.testing.capture_logs()`` after
another test ran a command in-process: loggers used under the first configuration must follow
the later one.
"""

from __future__ import annotations

import io

import orjson
import pytest
import structlog
from structlog.testing import capture_logs

from tablehost import logs


def test_a_logger_used_before_a_reconfiguration_follows_the_new_one() -> None:
    first, second = io.StringIO(), io.StringIO()
    log = structlog.get_logger("tablehost.test_logs")
    logs.configure(level="info", stream=first)
    log.info("logs.first", n=1)
    logs.configure(level="warning", stream=second)
    log.info("logs.filtered_out", n=2)
    log.warning("logs.second", n=3)
    assert [orjson.loads(line)["event"] for line in first.getvalue().splitlines()] == ["logs.first"]
    assert [orjson.loads(line)["event"] for line in second.getvalue().splitlines()] == ["logs.second"]


def test_capture_logs_sees_a_logger_used_under_the_command_configuration() -> None:
    # The CLI's setup logs warnings only; a server started afterwards logs at info.
    log = structlog.get_logger("tablehost.test_logs")
    logs.configure(level="warning", stream=io.StringIO(), json=False)
    log.warning("logs.before_capture")
    logs.configure(level="info", stream=io.StringIO())
    with capture_logs() as events:
        log.info("logs.captured", n=1)
    assert [(e["event"], e["n"]) for e in events] == [("logs.captured", 1)]


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        logs.configure(level="loud")


def test_enabled_follows_the_configured_level() -> None:
    logs.configure(level="warning", stream=io.StringIO())
    assert not logs.enabled("info") and not logs.enabled("debug")
    assert logs.enabled("warning") and logs.enabled("error") and logs.enabled("WARNING")
    logs.configure(level="debug", stream=io.StringIO())
    assert logs.enabled("debug") and logs.enabled("info")
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        logs.enabled("loud")
    logs.configure(level="info", stream=io.StringIO())


def test_every_logger_writes_whole_lines_to_the_one_stream_from_many_threads() -> None:
    """The writer is made once per configuration and shared: lines from threads never mix."""
    import threading

    out = io.StringIO()
    logs.configure(level="info", stream=out)

    def write(n: int) -> None:
        log = structlog.get_logger(f"tablehost.test_logs.{n}")
        for i in range(200):
            log.info("logs.line", n=n, i=i)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = [orjson.loads(line) for line in out.getvalue().splitlines()]
    assert sorted((e["n"], e["i"]) for e in lines) == [(n, i) for n in range(4) for i in range(200)]
    logs.configure(level="info", stream=io.StringIO())
