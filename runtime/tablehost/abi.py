"""The guest's answers as types (docs/abi.md "8. Ops"): what an answer holds once the gate passed it.

A raw answer is ``Any`` until :class:`tablehost.gate.Gate` has checked it; each ``check_*``
method returns it as one of these, so code after the gate reads typed members.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "ActionsAnswer",
    "GameOverAnswer",
    "Offer",
    "Score",
    "ScoresAnswer",
    "SetupAnswer",
    "StepAnswer",
]


class Score(TypedDict):
    """One player's points, lined up with ``score_labels`` (finite doubles)."""

    public_points: NotRequired[list[float]]
    private_points: NotRequired[list[float]]


class Offer(TypedDict):
    """An AvailableAction a game offers: ``action`` of one of the three types, never intent ``undo``."""

    action: dict[str, Any]
    intent: Literal["choice", "confirm", "cancel"]
    label: NotRequired[str]


class SetupAnswer(TypedDict):
    """The answer of op 1 ``setup``."""

    state: dict[str, Any]
    patches: list[dict[str, Any]]
    rng_used: bool
    score_labels: list[str]
    scores: dict[str, Score]
    game_over: bool
    actions: dict[str, list[Offer]]
    printed: NotRequired[str]


class StepAnswer(TypedDict):
    """The answer of op 3 ``step`` (``state`` only when the request asked ``want_state``)."""

    patches: list[dict[str, Any]]
    rng_used: bool
    allow_undo: bool
    scores: dict[str, Score]
    game_over: bool
    actions: dict[str, list[Offer]]
    state: NotRequired[dict[str, Any]]
    printed: NotRequired[str]


class ActionsAnswer(TypedDict):
    """The answer of op 2 ``actions``."""

    actions: list[Offer]
    printed: NotRequired[str]


class GameOverAnswer(TypedDict):
    """The answer of op 5 ``game_over``."""

    game_over: bool
    scores: dict[str, Score]
    printed: NotRequired[str]


class ScoresAnswer(TypedDict):
    """The answer of op 4 ``scores``."""

    scores: dict[str, Score]
    printed: NotRequired[str]
