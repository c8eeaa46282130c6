"""The allowed range of every numeric command-line option, and the one check that refuses the rest.

A value outside its range is bad input (exit status 2) with one line naming the option (or
environment variable), the range and the value given. The upper bounds keep a typo or a script
from asking for an absurd allocation (a million worker processes, ten to the twenty games kept
in memory) or a number a lower layer would wrap (wasmtime takes fuel and epoch deadlines as
u64; ctypes would pass a larger number on silently cut).

The budget options' ranges (``--wall-ms`` ...) are in :data:`tablehost.cli_budgets.BUDGET_RANGES`.
"""

from __future__ import annotations

import math
import re

MAX_GAMES = 10_000_000
"""``simulate --games``: every outcome is kept until the summary (about 360 bytes each: 3.6 GB
at this cap)."""

MAX_CHECK_GAMES = 100_000
"""``check --games`` and ``serve --check-uploads``: each game re-runs every call in a fresh
instance."""

MAX_PLIES = 1_000_000
"""``--max-plies``: the match's history grows with every ply (no sample game needs 10,000)."""

MAX_REQUEST_THREADS = 4096
"""``serve --max-workers``: each request thread has a native stack sized for the wasm stack."""

MAX_PROCESSES = 64
"""``serve --processes``: more server processes than this on one machine only thrash."""

MAX_WATCHES_PER_TOKEN = 1024
"""``serve --watches-per-token``: each open stream holds a request thread."""

MAX_RATE_PER_S = 1_000_000.0
"""``serve --rate-limit``: requests per second one token may send (0 turns the limit off)."""

MAX_RATE_BURST = 1_000_000
"""``serve --rate-burst``: requests one token may send at once."""

MAX_GIVE_UP_S = 7 * 24 * 3600.0
"""``bots --timeout``: seconds without a change before the bots give up (a week)."""

MAX_RECONNECT_FOR_S = 7 * 24 * 3600.0
"""``bots`` and ``watch`` ``--reconnect-for``: seconds a lost server is retried (a week)."""

MAX_EVICT_AFTER_S = 30 * 24 * 3600.0
"""``serve --evict-after``: seconds an unused match stays in memory (0 never evicts; 30 days)."""

MAX_LIVE_MATCHES = 10_000_000
"""``serve --max-live-matches``: started matches kept in memory."""
MIN_SWITCH_INTERVAL_MS = 0.05
MAX_SWITCH_INTERVAL_MS = 100.0
"""``serve --switch-interval-ms``: the interpreter's thread switch interval, ms."""


def require_in_range(option: str, value: float, least: float, most: float, unit: str = "") -> None:
    """Refuse ``value`` unless ``least <= value <= most`` (and finite).

    Args:
        option: the option or environment variable, as the user wrote it (``--games``).
        value: the value given.
        least, most: the range, both included.
        unit: shown after the range (``" MiB"``), or nothing.

    Raises:
        SystemExit: ``"tablehost: OPTION must be LEAST to MOST[ UNIT], got VALUE"`` (the CLI
            prints it and exits with status 2); for ``nan``, ``inf`` or ``-inf`` followed by
            ``" (not a finite number)"``.
    """
    finite = isinstance(value, int) or math.isfinite(value)  # an int may be too large for a float
    if not (finite and least <= value <= most):
        raise SystemExit(
            f"tablehost: {option} must be {_number(least)} to {_number(most)}{unit}, got {value}"
            + ("" if finite else " (not a finite number)")
        )


NUMBER_ARGUMENT = re.compile(r"-(?:(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|inf(?:inity)?|nan)\Z", re.IGNORECASE)
"""What an option's value may look like when it starts with ``-``: a negative number, with an
exponent (``-1e3``) or not, or ``-inf`` / ``-infinity`` / ``-nan`` (what ``float`` reads).
argparse's own pattern knows only ``-5`` and ``-.5``, so ``--switch-interval-ms -inf`` was
"expected one argument": :class:`tablehost.cli.OneLineParser` uses this one, and the value then
reaches the option's range check (:func:`require_in_range`). No option of ours looks like this."""


_INTEGER_TEXT = re.compile(r"-?[0-9]+\Z")
_DECIMAL_TEXT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z|-?(?:inf(?:inity)?|nan)\Z", re.IGNORECASE)


def parse_int(text: str) -> int:
    """The one reading of an integer the commands take (options, ``--option`` values,
    environment variables): ASCII digits ``0-9``, a leading ``-`` allowed, nothing else.

    Python's ``int`` also reads ``1_000``, ``+7``, ``' 7 '`` and other scripts' digits (``٣``);
    a value written so is refused, never read as another number.

    Raises:
        ValueError: ``text`` is anything else (argparse then says ``invalid int value``).
    """
    if not _INTEGER_TEXT.match(text):
        raise ValueError(f"not an integer in ASCII digits 0-9: {text[:40]!r}")
    return int(text)


def parse_decimal(text: str) -> float:
    """A number with a fraction or exponent as the commands read it: ASCII digits, an optional
    leading ``-``, ``.`` and ``e``; or ``inf``, ``infinity``, ``nan`` (refused later by every
    range, saying so). No ``_``, ``+`` sign or spaces, as :func:`parse_int`.

    Raises:
        ValueError: ``text`` is anything else.
    """
    if not _DECIMAL_TEXT.match(text):
        raise ValueError(f"not a number in ASCII digits 0-9: {text[:40]!r}")
    return float(text)


def _number(value: float) -> str:
    """``4096``, ``1000000`` or ``0.5``: whole numbers without a fraction."""
    return str(int(value)) if float(value).is_integer() else str(value)
