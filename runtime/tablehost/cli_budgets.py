"""The budget options every command that runs guests shares, and the one place they become :class:`Limits`.

``--wall-ms``, ``--fuel``, ``--memory-mib`` and ``--stack-kib`` (and ``--wall-factor`` where a
command replays), each also read from an environment variable (``TABLEHOST_WALL_MS``...). An
option beats its variable, a variable beats the default (:data:`~tablehost.limits.DEFAULT_LIMITS`).
``TABLEHOST_GUEST_SLOTS`` (guest calls running at once, default one per core) is checked here too.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import replace

from tablehost.guest.scheduler import default_slots
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

_HELP = {
    "wall_ms": "ms of guest CPU time per move (liveness guard; fuel decides)",
    "fuel": "fuel units (about one per wasm instruction) per move",
    "memory_mib": "linear memory per instance, MiB",
    "stack_kib": "wasm stack, KiB (a host thread's native stack is sized to fit it)",
    "wall_factor": "replay and resume multiply --wall-ms by this",
}


def add_budget_options(parser: argparse.ArgumentParser, *, replaying: bool = False) -> None:
    """Add the budget options to ``parser`` (``--wall-factor`` too when ``replaying``)."""
    group = parser.add_argument_group("budgets (also from TABLEHOST_WALL_MS, _FUEL, _MEMORY_MIB, _STACK_KIB)")
    for dest, (flag, env, _, field) in BUDGET_OPTIONS.items():
        if dest == "wall_factor" and not replaying:
            continue
        default = getattr(DEFAULT_LIMITS, field) // BUDGET_OPTIONS[dest][2]
        group.add_argument(flag, dest=dest, type=int, default=None, metavar="N",
                           help=f"{_HELP[dest]} (default ${env} or {default})")


def limits_from_args(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Limits:
    """The :class:`Limits` the options and environment ask for, over the defaults.

    Args:
        args: parsed arguments; a missing or ``None`` option falls back to its variable.
        environ: the environment (default ``os.environ``).

    Returns:
        The limits in force.

    Raises:
        SystemExit: a value is not a positive integer (the message names the option or variable).
    """
    environ = os.environ if environ is None else environ
    fields: dict[str, int] = {}
    for dest, (flag, env, unit, field) in BUDGET_OPTIONS.items():
        value = getattr(args, dest, None)
        source = flag
        if value is None and environ.get(env):
            source = env
            try:
                value = int(environ[env])
            except ValueError:
                raise SystemExit(f"tablehost: {env} must be an integer, got {environ[env]!r}") from None
        if value is None:
            continue
        if value <= 0:
            raise SystemExit(f"tablehost: {source} must be positive, got {value}")
        fields[field] = value * unit
    try:
        default_slots()  # read at import; a bad value is bad input like a bad budget
    except ValueError as exc:
        raise SystemExit(f"tablehost: {exc}") from None
    return replace(DEFAULT_LIMITS, **fields)


def describe_limits(limits: Limits) -> dict[str, int]:
    """The budgets in force as ``{name: value}`` with units in the names (``inspect`` prints these)."""
    return {
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
