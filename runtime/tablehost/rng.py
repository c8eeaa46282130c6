"""SplitMix64, the one random generator shared by the SDK and the host (docs/abi.md "Rng").

The host never re-implements a game's randomness; this copy exists so tests and
replay tools can check the SDK against shared vectors (``schemas/rng_vectors.json``)
and so the host can make its own recorded picks (for example which of several
indistinguishable hidden pieces a view click means).
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import TypeVar

__all__ = ["Rng"]

_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB

T = TypeVar("T")


class Rng:
    """A SplitMix64 stream, bit-for-bit the SDK's.

    Args:
        seed: the 64-bit seed, ``0 <= seed < 2**64``.

    Raises:
        ValueError: the seed is not an int in that range.

    Attributes:
        used: ``True`` once any value has been drawn (the guest's ``rng_used``).
    """

    __slots__ = ("_state", "used")

    def __init__(self, seed: int) -> None:
        if type(seed) is not int or not 0 <= seed <= _MASK64:
            raise ValueError(f"seed must be an int in 0..2**64-1, got {seed!r}")
        self._state = seed
        self.used = False

    def next_u64(self) -> int:
        """Draw the next raw value.

        Returns:
            An int in ``0 .. 2**64-1``.
        """
        self.used = True
        self._state = (self._state + _GAMMA) & _MASK64
        z = self._state
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK64
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Draw a uniform int in ``0 .. n-1`` without modulo bias (rejection sampling).

        Args:
            n: the number of outcomes, ``1 <= n < 2**64``.

        Returns:
            An int in ``0 .. n-1``. Consumes one or more raw values (exactly like the SDK).

        Raises:
            ValueError: ``n`` is out of range.
        """
        if type(n) is not int or not 1 <= n <= _MASK64:
            raise ValueError(f"below(n) needs 1 <= n < 2**64, got {n!r}")
        threshold = ((1 << 64) - n) % n
        while True:
            x = self.next_u64()
            if x >= threshold:
                return x % n

    def roll(self, sides: int) -> int:
        """Roll a die with ``sides`` faces.

        Args:
            sides: number of faces, ``>= 1``.

        Returns:
            An int in ``1 .. sides``.

        Raises:
            ValueError: ``sides`` is out of range.
        """
        return self.below(sides) + 1

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Shuffle ``items`` in place with the SDK's Fisher-Yates order of draws.

        For ``i`` from ``len-1`` down to ``1``: ``j = below(i+1)``, swap ``i`` and ``j``.
        An empty or one-item list draws nothing.

        Args:
            items: any mutable sequence; reordered in place.
        """
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
