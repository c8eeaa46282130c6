"""Bots that choose among the actions a match offers.

A bot sees only what its player is offered (guest or view addresses alike) and never takes
the platform's undo, so a bot game always moves forward.

Names: ``random``, ``first``, and the search bots ``mcts:N`` and ``ismcts:N`` (N iterations a
decision), which run inside the guest on the seat's view (:class:`SearchBot`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from tablehost.rng import Rng
from tablehost.types import AvailableActionDict, PlayerId, StateDict

if TYPE_CHECKING:
    from tablehost.guest import GuestPool


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
        candidates: Sequence[AvailableActionDict]
        for action in offered:  # a bot game offers no undo: then the offers are the candidates, uncopied
            if action.get("intent") == "undo":
                candidates = [a for a in offered if a.get("intent") != "undo"]
                break
        else:
            candidates = offered
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


class SearchBot:
    """Searches inside the guest (MCTS or ISMCTS) on its seat's view for each decision.

    It is handed the seat's view (``tablehost.view.view_state``) and the actions offered in
    view addresses, never the state, so two states that differ only in what the seat may not
    see give the same decisions. Each decision's search seed is the next draw of the bot's own
    SplitMix64 stream.

    Args:
        algorithm: ``"mcts"`` (perfect information) or ``"ismcts"`` (hidden information; the
            game must implement ``sample_hidden``).
        iterations: search iterations per decision, >= 1.
        seed: seeds the bot's stream (None: 0).
    """

    def __init__(self, algorithm: str, iterations: int, seed: int | None = None) -> None:
        if iterations < 1:
            raise ValueError(f"a search bot needs at least 1 iteration, got {iterations}")
        self.name = f"{algorithm}:{iterations}"
        self.algorithm = algorithm
        self.iterations = iterations
        self._rng = Rng((seed or 0) & (2**64 - 1))

    def choose(self, offered: Sequence[AvailableActionDict]) -> AvailableActionDict:
        """Not available: a search bot needs the view (use :meth:`choose_in_view`)."""
        raise TypeError(f"bot {self.name} decides from a view: call choose_in_view")

    def choose_in_view(
        self,
        pool: GuestPool,
        view: StateDict,
        offered: Sequence[AvailableActionDict],
        player_id: PlayerId,
        cancelled: Callable[[], bool] | None = None,
    ) -> AvailableActionDict:
        """Search ``player_id``'s decision on ``view``; return one element of ``offered``.

        Args:
            pool: the game module's instances (the search runs in one of them).
            view: the seat's view.
            offered: the seat's offered actions in view addresses.
            player_id: the seat.
            cancelled: polled while the search runs; True stops it (``GuestCancelled``).

        Raises:
            GuestError: the search failed or answered something not offered (``guest/protocol``),
                or was cancelled (``GuestCancelled``).
        """
        from tablehost.inguest import search

        return search(
            pool,
            view,
            player_id,
            offered,
            algorithm=self.algorithm,
            iterations=self.iterations,
            seed=self._rng.next_u64(),
            cancelled=cancelled,
        )


BOTS: dict[str, type[RandomBot | FirstBot]] = {"random": RandomBot, "first": FirstBot}
SEARCH_BOTS = ("mcts", "ismcts")
"""Bot names taking ``:ITERATIONS``."""

KNOWN = "random, first, mcts:N, ismcts:N"

MAX_ITERATIONS = 10_000_000
"""The most iterations a search bot asks for per decision (the SDK's own cap, ``MAX_ITERATIONS``
in sdk/rust/src/dispatch_search.rs)."""


def _split(name: str) -> tuple[str, int | None]:
    """Split a bot name into its kind and iterations.

    Args:
        name: ``"random"``, ``"first"``, ``"mcts:N"`` or ``"ismcts:N"`` (as the CLI's ``--bots``
            and ``--bot``, and CreateMatch's ``server_bots``, give it).

    Returns:
        ``"mcts:200"`` -> ``("mcts", 200)``; ``"random"`` -> ``("random", None)``.

    Raises:
        ValueError: an unknown kind, a search bot without iterations, or iterations that are not
            ASCII digits ``0-9`` from 1 to :data:`MAX_ITERATIONS` (``mcts:１０`` made a bot
            recorded under that name: Python's ``int`` reads fullwidth digits).
    """
    base, colon, count = name.partition(":")
    if not colon:
        if base in BOTS:
            return base, None
        if base in SEARCH_BOTS:
            raise ValueError(f"bot {name!r} needs its iterations, e.g. {base}:200")
        raise ValueError(f"unknown bot {name!r}; known bots: {KNOWN}")
    if base not in SEARCH_BOTS:
        raise ValueError(f"unknown bot {name!r}; known bots: {KNOWN}")
    if not (count.isascii() and count.isdigit()) or not 1 <= int(count) <= MAX_ITERATIONS:
        raise ValueError(
            f"bot {name[:100]!r}: the iterations must be a whole number from 1 to {MAX_ITERATIONS} "
            "in ASCII digits 0-9"
        )
    return base, int(count)


def is_search_bot(name: str) -> bool:
    """Whether ``name`` names a :class:`SearchBot` (``mcts:N``, ``ismcts:N``)."""
    return _split(name)[1] is not None


def make_bot(name: str, seed: int | None = None) -> Bot | SearchBot:
    """Build a bot by name (``random``, ``first``, ``mcts:N``, ``ismcts:N``).

    Raises:
        ValueError: an unknown bot name (the message lists the known ones) or bad iterations.
    """
    base, iterations = _split(name)
    if iterations is not None:
        return SearchBot(base, iterations, seed)
    return BOTS[base](seed)


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
        _split(name)
    return names
