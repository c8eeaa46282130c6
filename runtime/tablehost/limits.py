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
        instances_per_module: size of a module's instance pool.
    """

    wall_ms: int = 250
    fuel_per_call: int = 200_000_000
    memory_bytes: int = 32 * MiB
    stack_bytes: int = 512 * KiB
    module_bytes: int = 16 * MiB
    response_bytes: int = 4 * MiB
    instances_per_module: int = 4

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


DEFAULT_LIMITS = Limits()
