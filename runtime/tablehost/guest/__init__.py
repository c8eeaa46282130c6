"""Guest calls under budgets, in three modules along the seams of the pipeline:

- :mod:`tablehost.guest.protocol`: op codes, response parsing, guest error objects (no wasmtime);
- :mod:`tablehost.guest.instance`: :class:`Guest`, one instance under budgets, and the one
  translation of wasmtime failures into typed errors;
- :mod:`tablehost.guest.pool`: :class:`GuestPool`, the instances of one module.
"""

from __future__ import annotations

from tablehost.guest.instance import BUDGET_BY_TRAP, Guest, WasmErrors, check_instantiates, classify_failure
from tablehost.guest.pool import GuestPool
from tablehost.guest.protocol import (
    OP_ACTIONS,
    OP_GAME_OVER,
    OP_METADATA,
    OP_NAMES,
    OP_PLAYOUT,
    OP_SCORES,
    OP_SEARCH,
    OP_SETUP,
    OP_STEP,
    SDK_REF_CACHE_SIZE,
    StateMiss,
)

__all__ = [
    "BUDGET_BY_TRAP",
    "OP_ACTIONS",
    "OP_GAME_OVER",
    "OP_METADATA",
    "OP_NAMES",
    "OP_PLAYOUT",
    "OP_SCORES",
    "OP_SEARCH",
    "OP_SETUP",
    "OP_STEP",
    "SDK_REF_CACHE_SIZE",
    "Guest",
    "GuestPool",
    "StateMiss",
    "WasmErrors",
    "check_instantiates",
    "classify_failure",
]
