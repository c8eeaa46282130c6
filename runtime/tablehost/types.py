"""Names for the plain values that flow through the host.

The table model itself is JSON-shaped (see ``docs/abi.md``): states, pieces,
actions and patches are ``dict`` objects exactly as the guest reads and writes them.
"""

from __future__ import annotations

from typing import Any

PlayerId = int
"""A seat's player id: an unsigned 32-bit integer chosen by the host (1, 2, ...)."""

Seed = int
"""A 64-bit unsigned seed, 0 <= seed < 2**64, drawn from :mod:`secrets` per move and for setup."""

Version = int
"""How many history entries (moves and undos) a match has: 0 right after setup, +1 for each."""

Viewer = PlayerId | None
"""Who a view is for: a player id, or ``None`` for a spectator."""

JSON = Any
StateDict = dict[str, Any]
"""A table State in the JSON form of docs/abi.md (always normalised to the full form by the host)."""

PatchDict = dict[str, Any]
ActionDict = dict[str, Any]
AvailableActionDict = dict[str, Any]
ScoresDict = dict[str, dict[str, list[float]]]

SEED_MAX = 2**64 - 1
