"""Bots (bots.py): what a random bot picks depends only on the non-undo offers and its seed."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablehost.bots import FirstBot, RandomBot

UNDO = {"action": {"type": "button_click", "button": {"id": "tablehost.undo"}}, "intent": "undo", "label": "Undo"}


def offer(n: int) -> dict[str, Any]:
    return {"action": {"type": "space_click", "space_id": f"s{n}"}, "intent": "choice", "label": str(n)}


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**64 - 1), st.lists(st.integers(1, 6), min_size=1, max_size=8), st.integers(0, 6))
def test_a_random_bot_ignores_undo_wherever_it_is_offered(seed: int, sizes: list[int], at: int) -> None:
    """The same picks, in the same order, from offers with an undo among them as without it."""
    plain, with_undo = RandomBot(seed), RandomBot(seed)
    for size in sizes:
        offers = [offer(n) for n in range(size)]
        mixed = [*offers[:at], UNDO, *offers[at:]]
        picked = plain.choose(offers)
        assert picked in offers
        assert with_undo.choose(mixed) == picked


def test_bots_refuse_when_only_undo_is_offered() -> None:
    for bot in (RandomBot(1), FirstBot()):
        with pytest.raises(ValueError, match="no action"):
            bot.choose([UNDO])
        with pytest.raises(ValueError, match="no action"):
            bot.choose([])
