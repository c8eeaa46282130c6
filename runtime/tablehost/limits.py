"""Budgets for guest calls and modules (DESIGN.md "Budgets")."""

from __future__ import annotations

from dataclasses import dataclass, replace

MiB = 1024 * 1024
KiB = 1024


@dataclass(frozen=True)
class Limits:
    """Per-call and per-module budgets. All configurable per server; ``tightened`` per module.

    Attributes:
        wall_ms: wall-clock milliseconds per guest call (epoch deadline).
        fuel_per_call: wasmtime fuel units (about one per wasm instruction) per call.
        memory_bytes: linear-memory cap per instance, bytes.
        stack_bytes: wasm stack cap (``max_wasm_stack``), bytes.
        module_bytes: largest accepted module, bytes.
        response_bytes: largest accepted response, bytes.
        instances_per_module: size of a module's instance pool, which is also its cap on
            concurrent calls (a call waits at most ``wall_ms`` for a free slot).
        replay_wall_factor: ``wall_ms`` is multiplied by this for replay and resume, where fuel
            alone decides (a recorded move must replay on a busy machine).
        liveness_factor: ``wall_ms`` is counted in CPU time of the guest's thread; a call that
            waits for a core is stopped anyway after ``wall_ms * liveness_factor`` of wall-clock
            time (the hard liveness cap).
        quarantine_after: failed calls (budget, trap, panic, protocol) within 10 s after which a
            module is quarantined.
        quarantine_ms: first quarantine, milliseconds; doubles while failures continue (up to
            64 times), back to this after 10 s without a quarantine.
        compile_ms: wall-clock milliseconds an upload's validation and compilation may take.
        compile_memory_bytes: address space of the process that compiles an upload, bytes.

    Fuel decides whether a call is accepted (it is deterministic); ``wall_ms`` only guards
    liveness. One move's calls (a ``state_miss`` resend and buffer allocations included) share
    one ``fuel_per_call`` and one ``wall_ms``.
    """

    wall_ms: int = 250
    fuel_per_call: int = 50_000_000
    memory_bytes: int = 32 * MiB
    stack_bytes: int = 512 * KiB
    module_bytes: int = 16 * MiB
    response_bytes: int = 4 * MiB
    instances_per_module: int = 4
    replay_wall_factor: int = 10
    liveness_factor: int = 4
    quarantine_after: int = 8
    quarantine_ms: int = 2_000
    compile_ms: int = 20_000
    compile_memory_bytes: int = 2048 * MiB

    def tightened(self, **smaller: int) -> Limits:
        """Return a copy where each given budget is ``min(current, given)``; never loosens.

        Raises:
            ValueError: an unknown budget name or a non-positive value.
        """
        fields = {}
        for name, value in smaller.items():
            if not hasattr(self, name):
                raise ValueError(f"unknown budget {name!r}")
            if value <= 0:
                raise ValueError(f"budget {name} must be positive, got {value}")
            fields[name] = min(getattr(self, name), value)
        return replace(self, **fields)

    def for_replay(self) -> Limits:
        """A copy whose ``wall_ms`` is widened by ``replay_wall_factor`` (fuel unchanged: it decides)."""
        return replace(self, wall_ms=self.wall_ms * self.replay_wall_factor)


DEFAULT_LIMITS = Limits()
