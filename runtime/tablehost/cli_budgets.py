"""The budget options every command that runs guests shares, and the one place they become :class:`Limits`.

``--wall-ms``, ``--fuel``, ``--memory-mib`` and ``--stack-kib`` (and ``--wall-factor`` where a
command replays), each also read from an environment variable (``TABLEHOST_WALL_MS``...). An
option beats its variable, a variable beats the default (:data:`~tablehost.limits.DEFAULT_LIMITS`).

``--guest-slots`` (``TABLEHOST_GUEST_SLOTS``) is not a per-call budget but the process's cap on
guest calls running at once (:mod:`tablehost.guest.scheduler`, default one per core); it is read,
checked and applied here too, so every command that runs guests takes it the same way.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import replace

from tablehost.cli_ranges import parse_int, require_in_range
from tablehost.guest.scheduler import RUN_SLOTS, SLOTS_ENV, default_slots
from tablehost.limits import DEFAULT_LIMITS, KiB, Limits, MiB

BUDGET_OPTIONS: dict[str, tuple[str, str, int, str]] = {
    # dest: (option, environment variable, multiplier to the Limits field's unit, Limits field)
    "wall_ms": ("--wall-ms", "TABLEHOST_WALL_MS", 1, "wall_ms"),
    "fuel": ("--fuel", "TABLEHOST_FUEL", 1, "fuel_per_call"),
    "memory_mib": ("--memory-mib", "TABLEHOST_MEMORY_MIB", MiB, "memory_bytes"),
    "stack_kib": ("--stack-kib", "TABLEHOST_STACK_KIB", KiB, "stack_bytes"),
    "wall_factor": ("--wall-factor", "TABLEHOST_WALL_FACTOR", 1, "replay_wall_factor"),
}
"""Each budget option: its flag, its environment variable, its unit in bytes (or 1), its Limits field."""

BUDGET_RANGES: dict[str, tuple[int, int, str]] = {
    # dest: (least, most, unit shown), in the option's own unit
    # an hour per move: beyond it the wall clock guards nothing (and the epoch deadline is a u64)
    "wall_ms": (1, 3_600_000, " ms"),
    # wasmtime's fuel is a u64 that must stay below 2**63; a larger number would wrap around
    "fuel": (1, 2**63 - 1, " fuel"),
    # a wasm32 memory is at most 65,536 pages of 64 KiB
    "memory_mib": (1, 4096, " MiB"),
    # wasmtime refuses (aborting the process) a max_wasm_stack above its async stack size, 2 MiB
    "stack_kib": (1, 2048, " KiB"),
    # the replay wall clock is --wall-ms times this
    "wall_factor": (1, 1000, ""),
}
"""The values each budget option takes (both ends included), in the option's own unit."""

GUEST_SLOTS_MAX = 1024
"""The most run slots ``--guest-slots`` takes: each running guest call holds a thread."""

SLOTS_OPTION = "--guest-slots"
"""The option that sizes the process's run slots (environment variable ``TABLEHOST_GUEST_SLOTS``)."""

_HELP = {
    "wall_ms": "ms of guest CPU time per move (liveness guard; fuel decides)",
    "fuel": "fuel units (about one per wasm instruction) per move",
    "memory_mib": "linear memory per instance, MiB",
    "stack_kib": "wasm stack, KiB (a host thread's native stack is sized to fit it)",
    "wall_factor": "replay and resume multiply --wall-ms by this",
}


def add_budget_options(parser: argparse.ArgumentParser, *, replaying: bool = False) -> None:
    """Add the budget options to ``parser`` (``--wall-factor`` too when ``replaying``)."""
    group = parser.add_argument_group(
        "budgets (also from TABLEHOST_WALL_MS, _FUEL, _MEMORY_MIB, _STACK_KIB, _GUEST_SLOTS)"
    )
    for dest, (flag, env, _, field) in BUDGET_OPTIONS.items():
        if dest == "wall_factor" and not replaying:
            continue
        default = getattr(DEFAULT_LIMITS, field) // BUDGET_OPTIONS[dest][2]
        least, most, _ = BUDGET_RANGES[dest]
        group.add_argument(
            flag,
            dest=dest,
            type=int,
            default=None,
            metavar="N",
            help=f"{_HELP[dest]}, {least} to {most} (default ${env} or {default})",
        )
    group.add_argument(
        SLOTS_OPTION,
        dest="guest_slots",
        type=int,
        default=None,
        metavar="N",
        help=f"guest calls running at once in this process, fairly shared by modules, "
        f"1 to {GUEST_SLOTS_MAX} (default ${SLOTS_ENV} or one per core)",
    )


def budget_argv(args: argparse.Namespace) -> list[str]:
    """The budget options given in ``args`` as command-line words, to hand on to a child process.

    Returns:
        ``[flag, value, ...]`` for every budget option (``--guest-slots`` included) that was given.
    """
    argv: list[str] = []
    for dest, flag in [
        *((dest, option[0]) for dest, option in BUDGET_OPTIONS.items()),
        ("guest_slots", SLOTS_OPTION),
    ]:
        value = getattr(args, dest, None)
        if value is not None:
            argv += [flag, str(value)]
    return argv


def guest_slots_from_args(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> int:
    """The run slots the option or environment asks for, else the default (one per core).

    Args:
        args: parsed arguments; a missing or ``None`` ``guest_slots`` falls back to the variable.
        environ: the environment (default ``os.environ``).

    Returns:
        Guest calls that may run at once in this process (>= 1).

    Raises:
        SystemExit: the value is not an integer from 1 to :data:`GUEST_SLOTS_MAX` (the message
            names the option or variable).
    """
    environ = os.environ if environ is None else environ
    value = getattr(args, "guest_slots", None)
    if value is not None:
        require_in_range(SLOTS_OPTION, value, 1, GUEST_SLOTS_MAX)
        return int(value)
    text = environ.get(SLOTS_ENV, "")
    if not text.strip():
        return default_slots({})  # no variable: one slot per usable core
    try:
        slots = parse_int(text)
    except ValueError:
        raise SystemExit(f"tablehost: {SLOTS_ENV} must be an integer in ASCII digits 0-9, got {text[:40]!r}") from None
    require_in_range(SLOTS_ENV, slots, 1, GUEST_SLOTS_MAX)
    return slots


def limits_from_args(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Limits:
    """The :class:`Limits` the options and environment ask for, over the defaults; also sizes the run slots.

    With the real environment (``environ`` None), the process's
    :data:`~tablehost.guest.scheduler.RUN_SLOTS` are resized to :func:`guest_slots_from_args`
    and, when ``--guest-slots`` was given, ``$TABLEHOST_GUEST_SLOTS`` is set to match, so worker processes started later
    (``simulate --workers``, ``serve --processes``) get the same number each.

    Args:
        args: parsed arguments; a missing or ``None`` option falls back to its variable.
        environ: the environment (default ``os.environ``); a mapping given here is only read.

    Returns:
        The limits in force.

    Raises:
        SystemExit: a value is not an integer within its :data:`BUDGET_RANGES` entry (the
            message names the option or variable and the range).
    """
    applying = environ is None
    environ = os.environ if environ is None else environ
    fields: dict[str, int] = {}
    for dest, (flag, env, unit, field) in BUDGET_OPTIONS.items():
        value = getattr(args, dest, None)
        source = flag
        if value is None and environ.get(env):
            source = env
            try:
                value = parse_int(environ[env])
            except ValueError:
                raise SystemExit(f"tablehost: {env} must be an integer, got {environ[env]!r}") from None
        if value is None:
            continue
        least, most, shown = BUDGET_RANGES[dest]
        require_in_range(source, value, least, most, shown)
        fields[field] = value * unit
    slots = guest_slots_from_args(args, environ)  # a bad value is bad input like a bad budget
    if applying:
        RUN_SLOTS.resize(slots)
        if getattr(args, "guest_slots", None) is not None:
            os.environ[SLOTS_ENV] = str(slots)
    return replace(DEFAULT_LIMITS, **fields)


def describe_limits(limits: Limits, guest_slots: int | None = None) -> dict[str, int]:
    """The budgets in force as ``{name: value}`` with units in the names (``inspect`` prints these).

    Args:
        limits: the per-call budgets.
        guest_slots: the process's run slots (default: :data:`~tablehost.guest.scheduler.RUN_SLOTS`' size).
    """
    return {
        "guest_slots": RUN_SLOTS.slots if guest_slots is None else guest_slots,
        "wall_ms": limits.wall_ms,
        "fuel_per_call": limits.fuel_per_call,
        "memory_bytes": limits.memory_bytes,
        "stack_bytes": limits.stack_bytes,
        "module_bytes": limits.module_bytes,
        "response_bytes": limits.response_bytes,
        "instances_per_module": limits.instances_per_module,
        "queue_ms": limits.queue_ms,
        "replay_wall_factor": limits.replay_wall_factor,
        "liveness_factor": limits.liveness_factor,
        "quarantine_after": limits.quarantine_after,
        "quarantine_ms": limits.quarantine_ms,
        "compile_ms": limits.compile_ms,
        "compile_memory_bytes": limits.compile_memory_bytes,
    }
