"""Whether a module can sample hidden information (``Game::sample_hidden``), asked up front.

An ``ismcts:N`` bot searches states the game samples to fit its seat's view (docs/abi.md,
the ``search`` op). A module of a hidden-information game without ``sample_hidden`` refuses
every such search with the guest error ``no_sampler``; without asking first, that is found only
at the bot's first decision (a server bot then logs ``bot.search_failed`` and plays the first
offered move every turn). The metadata does not say whether the sampler exists, so the module
is asked once: a one-iteration ``ismcts`` search on the first active seat's view of a fresh
setup (seed 0). The guest checks for its sampler before anything else, so the answer tells:
``no_sampler`` means none; a decision, or any other refusal after that check (``no_action``),
means there is one. The registry caches the answer per module
(:meth:`~tablehost.api.registry.MatchRegistry.create_match`); ``tablehost play`` and
``simulate`` ask before their first game.
"""

from __future__ import annotations

from typing import Any

from tablehost.errors import GuestProtocolError, TablehostError
from tablehost.guest import GuestPool
from tablehost.inguest import search
from tablehost.match import Match
from tablehost.metadata import GameMetadata
from tablehost.selfplay import default_players
from tablehost.view import view_actions, view_state

PROBE_SEED = 0
"""The seed of the probe's setup and search (the answer must not depend on it)."""


def samples_hidden(pool: GuestPool, metadata: GameMetadata, players: int, options: dict[str, Any]) -> bool | None:
    """Whether the module of ``pool`` implements ``Game::sample_hidden``.

    Args:
        pool: the module's instances (its budgets apply to the probe's calls).
        metadata: the module's checked metadata.
        players: seats of the probe's setup (a count the module accepts).
        options: resolved options for that setup.

    Returns:
        False when the guest refused the probe's search with ``no_sampler``; True when it got
        past that check; None when the probe could not tell (the setup failed, the module
        predates the search op, a budget ran out): the caller then decides as before.
    """
    try:
        match = Match.start(pool, default_players(players), match_id="sampler-probe", seed=PROBE_SEED,
                            metadata=metadata, options=options)
        if match.game_over or not match.active_player_ids:
            return None
        seat = match.active_player_ids[0]
        offered = view_actions(match.state, seat, match.actions_for(seat))
        search(pool, view_state(match.state, seat), seat, offered, algorithm="ismcts", iterations=1,
               seed=PROBE_SEED)
    except GuestProtocolError as exc:
        code = getattr(exc, "guest_code", None)
        if code == "no_sampler":
            return False
        return True if code in ("no_action", "hidden_information") else None
    except (TablehostError, ValueError):
        return None
    return True


def no_sampler_refusal(bot: str) -> str:
    """The words refusing ``bot`` (an ``ismcts:N`` name) for a module without a sampler."""
    return (
        f"bot {bot!r}: this game's module does not implement Game::sample_hidden, which ismcts needs "
        "to sample what its seat cannot see; use random or first (or add sample_hidden to the game)"
    )
