"""structlog configuration: one JSON object per line, with the request context merged in.

Events carry stable dotted names (``api.request``, ``guest.call_failed``, ``match.resumed``);
the API interceptor binds the request context (method, match_id, seat, version) through
contextvars, so no caller passes it by hand.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO, cast

import structlog

_level = logging.INFO
"""The lowest level :func:`configure` was last told to write (a ``logging`` level number)."""
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def configure(*, level: str = "info", stream: TextIO | None = None, json: bool = True) -> None:
    """Configure structlog process-wide; a later call replaces the earlier one for every logger.

    Loggers are not cached on first use: a cached logger keeps the processors, level and stream
    of the configuration it was first used under, so a command that configures again (``serve``
    after the CLI's own setup, ``simulate``) or a test's ``structlog.testing.capture_logs()``
    would never reach the loggers used before. Assembling a logger per call costs about 1.6 µs
    (measured on this machine), small beside rendering the JSON line; the one writer (a
    ``PrintLogger``, which locks its stream per line) is made here once, not per assembly.
    Assembly happens even for a level that is off: a caller on a per-request path checks
    :func:`enabled` first.

    Args:
        level: the lowest level written (``debug``, ``info``, ``warning``, ``error``).
        stream: where lines go; standard error by default (standard output stays for the
            command's own messages).
        json: JSON lines (default) or structlog's console renderer for people.

    Raises:
        ValueError: an unknown level name.
    """
    number = logging.getLevelNamesMapping().get(level.upper())
    if number is None:
        raise ValueError(f"unknown log level {level!r}")
    global _level
    _level = number
    writer = structlog.PrintLogger(stream or cast(TextIO, _CurrentStderr()))

    def shared_writer(*args: Any) -> structlog.PrintLogger:
        del args  # the logger's name: one stream for all
        return writer

    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(number),
        logger_factory=shared_writer,
        cache_logger_on_first_use=False,
    )


def enabled(level: str) -> bool:
    """Whether lines of ``level`` (``debug``, ``info``, ``warning``, ``error``) are written under
    the last :func:`configure` (before any, ``info`` and up). A per-request path asks this before
    ``log.info(...)``: a call at a level that is off still assembles a logger and its arguments
    (several microseconds on a request that takes a few hundred).

    Raises:
        ValueError: an unknown level name.
    """
    number = _LEVELS.get(level) or logging.getLevelNamesMapping().get(level.upper())
    if number is None:
        raise ValueError(f"unknown log level {level!r}")
    return number >= _level


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the time of each write.

    Binding the stream object itself would keep writing to a stderr that was since replaced and
    closed (a test runner's capture, a daemon's redirect).
    """

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()
