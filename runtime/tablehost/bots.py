"""Bots that choose among the actions a match offers.

A bot sees only what its player is offered (guest or view addresses alike) and never takes
the platform's undo, so a bot game always moves forward.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from tablehost.types import AvailableActionDict


class Bot(Protocol):
    """Anything that picks one of the offered actions."""

    name: str

    def choose(self, offered: Sequence[AvailableActionDict]) -> AvailableActionDict:
        """Return one element of ``offered`` (non-empty)."""
        ...


class RandomBot:
    """Picks uniformly among the offered actions, undo excluded.

    Args:
        seed: seeds the bot's own ``random.Random``; the same seed and offers give the same picks.
    """

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    def choose(self, offered: Sequence[AvailableActionDict]) -> AvailableActionDict:
        """Return a uniformly chosen non-undo action.

        Raises:
            ValueError: nothing but undo (or nothing at all) is offered.
        """
        candidates = [a for a in offered if a.get("intent") != "undo"]
        if not candidates:
            raise ValueError("no action to choose from")
        return candidates[self._random.randrange(len(candidates))]


class FirstBot:
    """Always picks the first offered non-undo action: deterministic, for tests and baselines."""

    name = "first"

    def __init__(self, seed: int | None = None) -> None:
        del seed

    def choose(self, offered: Sequence[AvailableActionDict]) -> AvailableActionDict:
        """Return the first non-undo action. Raises ``ValueError`` when there is none."""
        for action in offered:
            if action.get("intent") != "undo":
                return action
        raise ValueError("no action to choose from")


BOTS: dict[str, type[RandomBot | FirstBot]] = {"random": RandomBot, "first": FirstBot}


def make_bot(name: str, seed: int | None = None) -> Bot:
    """Build a bot by name (``random`` or ``first``).

    Raises:
        ValueError: an unknown bot name (the message lists the known ones).
    """
    try:
        return BOTS[name](seed)
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; known bots: {', '.join(sorted(BOTS))}") from None


MAX_PLAYERS = 64
"""The most seats a local match may have (the server's ``MAX_SEATS`` is the same)."""


def parse_bot_list(spec: str, players: int) -> list[str]:
    """Parse ``"random,first"`` into one bot name per seat.

    A single name is used for every seat. Raises ``ValueError`` for a count that does not
    match ``players`` or an unknown name.
    """
    if not 1 <= players <= MAX_PLAYERS:
        raise ValueError(f"a match has 1 to {MAX_PLAYERS} players, got {players}")
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if len(names) == 1:
        names = names * players
    if len(names) != players:
        raise ValueError(f"{len(names)} bots given for {players} players")
    for name in names:
        if name not in BOTS:
            raise ValueError(f"unknown bot {name!r}; known bots: {', '.join(sorted(BOTS))}")
    return names
