"""What a module declares about its game (ABI v1.1 op ``metadata``, docs/abi.md "metadata").

A module whose marker ``tablehost_abi_v1()`` returns 1 or more answers op 6 with
``{"metadata": {...}}``; an older module gets :data:`DEFAULT_METADATA`. The answer comes
from untrusted code, so :func:`parse_metadata` checks every member before the host uses
it; anything malformed refuses the module (``guest/protocol``).

The host then uses the metadata to refuse a match before any guest call:
:func:`check_player_count` and :func:`resolve_options` raise :class:`SetupRefused`
(``setup/invalid``, INVALID_ARGUMENT on the API) naming the count or option at fault.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from tablehost.errors import GuestProtocolError, TablehostError
from tablehost.shown import shown_value

MIN_ABI_MINOR_FOR_METADATA = 1
"""The ABI v1 minor version that introduced op 6 ``metadata`` and setup's ``options``."""

RESULT_RULES = ("highest_score", "lowest_score", "ranks")
"""How a finished match is ranked: by the first public score (highest or lowest first), or by
the ``ranks`` the game returns with ``game_over``."""

RESIGN_RULES = ("ends", "continue")
"""What a resignation does: the match ends, or the others play on while the host plays the
resigned seat (its rank is last either way)."""

OPTION_TYPES = ("integer", "boolean", "choice")

MAX_PLAYERS = 64
"""The most seats the host gives a match (the API's ``MAX_SEATS``)."""
MAX_OPTIONS = 32
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 2000
MAX_CHOICES = 64
INTEGER_LIMIT = 2**53
"""Integers beyond this lose precision in clients that read JSON as doubles."""


class SetupRefused(TablehostError):
    """A match asked for something its module does not declare: a player count outside the
    range, an unknown option, or an option value the option does not allow. Nothing is stored."""

    code = "setup/invalid"

    def __init__(self, message: str, *, players: int | None = None, option: str | None = None) -> None:
        """``players``: the refused player count; ``option``: the refused option's name."""
        super().__init__(message)
        self.players = players
        self.option = option


@dataclass(frozen=True)
class OptionSpec:
    """One declared option (variant).

    Attributes:
        name: the option's key (1..64 characters).
        type: ``"integer"``, ``"boolean"`` or ``"choice"``.
        default: the value used when a match does not choose one (allowed by the option).
        description: one line for people choosing it.
        minimum, maximum: an integer option's inclusive range.
        values: a choice option's allowed strings.
    """

    name: str
    type: str
    default: Any
    description: str = ""
    minimum: int | None = None
    maximum: int | None = None
    values: tuple[str, ...] = ()

    def allows(self, value: Any) -> bool:
        """Whether ``value`` (a JSON value) is allowed for this option."""
        if self.type == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)  # a Struct carries numbers as doubles
            return (
                isinstance(value, int)
                and not isinstance(value, bool)
                and self.minimum is not None
                and self.maximum is not None
                and self.minimum <= value <= self.maximum
            )
        if self.type == "boolean":
            return isinstance(value, bool)
        return isinstance(value, str) and value in self.values

    def allowed_text(self) -> str:
        """What the option allows, for messages: ``"an integer 20..500"``, ``"true or false"``..."""
        if self.type == "integer":
            return f"an integer {self.minimum}..{self.maximum}"
        if self.type == "boolean":
            return "true or false"
        return "one of " + ", ".join(shown_value(v) for v in self.values)

    def to_json(self) -> dict[str, Any]:
        """The wire form (docs/abi.md "metadata")."""
        out: dict[str, Any] = {"name": self.name, "type": self.type, "default": self.default,
                               "description": self.description}
        if self.type == "integer":
            out["min"], out["max"] = self.minimum, self.maximum
        if self.type == "choice":
            out["values"] = list(self.values)
        return out


@dataclass(frozen=True)
class GameMetadata:
    """A module's declaration about its game.

    Attributes:
        min_players, max_players: the seat range, 1 <= min <= max <= 64.
        description: a short description (may be empty).
        hidden_information: some parts of the table are hidden from some viewers.
        result: one of :data:`RESULT_RULES`.
        resign: one of :data:`RESIGN_RULES`.
        options: the declared options, in declaration order.
        declared: false for :data:`DEFAULT_METADATA` given to a module without op 6.
    """

    min_players: int = 1
    max_players: int = MAX_PLAYERS
    description: str = ""
    hidden_information: bool = False
    result: str = "highest_score"
    resign: str = "ends"
    options: tuple[OptionSpec, ...] = field(default_factory=tuple)
    declared: bool = True

    def option(self, name: str) -> OptionSpec | None:
        """The declared option called ``name``, or None."""
        return next((o for o in self.options if o.name == name), None)

    def to_json(self) -> dict[str, Any]:
        """The wire form, plus ``declared``."""
        return {
            "min_players": self.min_players,
            "max_players": self.max_players,
            "description": self.description,
            "hidden_information": self.hidden_information,
            "result": self.result,
            "resign": self.resign,
            "options": [o.to_json() for o in self.options],
            "declared": self.declared,
        }


DEFAULT_METADATA = GameMetadata(declared=False)
"""What a module of ABI minor 0 (no op 6) is taken to declare: 1 to 64 players, highest score
wins, resigning ends the match, no options."""


def _fail(what: str) -> GuestProtocolError:
    return GuestProtocolError(f"the module's metadata {what}", op="metadata")


def _text(raw: dict[str, Any], key: str, limit: int, where: str, *, required: bool = False) -> str:
    value = raw.get(key, None if required else "")
    if not isinstance(value, str):
        raise _fail(f"{where}{key} is not a string")
    if len(value) > limit:
        raise _fail(f"{where}{key} is over {limit} characters")
    return value


def _integer(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > INTEGER_LIMIT:
        raise _fail(f"{what} is not an integer within ±2^53")
    return value


def parse_metadata(response: Any) -> GameMetadata:
    """Check a module's op-6 answer ``{"metadata": {...}}`` in full and return it.

    Args:
        response: the parsed response object.

    Returns:
        The metadata, ``declared`` true.

    Raises:
        GuestProtocolError: any member missing, of the wrong type, out of range, a repeated
            option name, or a default the option does not allow; the message names it.
    """
    if not isinstance(response, dict) or not isinstance(response.get("metadata"), dict):
        raise _fail("answer lacks a 'metadata' object")
    raw: dict[str, Any] = response["metadata"]
    low = _integer(raw.get("min_players", 1), "min_players")
    high = _integer(raw.get("max_players", MAX_PLAYERS), "max_players")
    if not 1 <= low <= high <= MAX_PLAYERS:
        raise _fail(f"player range {low}..{high} is not within 1..{MAX_PLAYERS} with min <= max")
    hidden = raw.get("hidden_information", False)
    if not isinstance(hidden, bool):
        raise _fail("hidden_information is not a boolean")
    result = raw.get("result", "highest_score")
    if result not in RESULT_RULES:
        raise _fail(f"result {str(result)[:40]!r} is not one of {', '.join(RESULT_RULES)}")
    resign = raw.get("resign", "ends")
    if resign not in RESIGN_RULES:
        raise _fail(f"resign {str(resign)[:40]!r} is not one of {', '.join(RESIGN_RULES)}")
    options_raw = raw.get("options", [])
    if not isinstance(options_raw, list) or len(options_raw) > MAX_OPTIONS:
        raise _fail(f"options is not a list of at most {MAX_OPTIONS}")
    options: list[OptionSpec] = []
    for index, item in enumerate(options_raw):
        option = _parse_option(item, f"options[{index}].")
        if any(o.name == option.name for o in options):
            raise _fail(f"declares option {option.name!r} twice")
        options.append(option)
    return GameMetadata(
        min_players=low,
        max_players=high,
        description=_text(raw, "description", MAX_DESCRIPTION_CHARS, ""),
        hidden_information=hidden,
        result=str(result),
        resign=str(resign),
        options=tuple(options),
    )


def _parse_option(item: Any, where: str) -> OptionSpec:
    if not isinstance(item, dict):
        raise _fail(f"{where[:-1]} is not an object")
    name = _text(item, "name", MAX_NAME_CHARS, where, required=True)
    if not name:
        raise _fail(f"{where}name is empty")
    kind = item.get("type")
    if kind not in OPTION_TYPES:
        raise _fail(f"{where}type {str(kind)[:40]!r} is not one of {', '.join(OPTION_TYPES)}")
    description = _text(item, "description", MAX_DESCRIPTION_CHARS, where)
    if "default" not in item:
        raise _fail(f"{where}default is missing")
    if kind == "integer":
        low = _integer(item.get("min"), f"{where}min")
        high = _integer(item.get("max"), f"{where}max")
        if low > high:
            raise _fail(f"{where}min {low} is over max {high}")
        option = OptionSpec(name, "integer", item["default"], description, minimum=low, maximum=high)
    elif kind == "choice":
        values = item.get("values")
        if (
            not isinstance(values, list)
            or not 1 <= len(values) <= MAX_CHOICES
            or not all(isinstance(v, str) and len(v) <= MAX_NAME_CHARS for v in values)
            or len(set(values)) != len(values)
        ):
            raise _fail(f"{where}values is not a list of 1..{MAX_CHOICES} distinct short strings")
        option = OptionSpec(name, "choice", item["default"], description, values=tuple(values))
    else:
        option = OptionSpec(name, "boolean", item["default"], description)
    if not option.allows(option.default):
        raise _fail(f"{where}default {shown_value(option.default)} is not {option.allowed_text()}")
    return option


def read_metadata(pool: Any) -> GameMetadata:
    """The checked metadata of a pool's module: :data:`DEFAULT_METADATA` for a module of ABI
    minor 0 (or a test fake without a ``metadata`` call).

    Raises:
        GuestError: the op failed or answered malformed metadata.
    """
    ask = getattr(pool, "metadata", None)
    raw = ask() if ask is not None else None
    return parse_metadata(raw) if raw is not None else DEFAULT_METADATA


def check_player_count(metadata: GameMetadata, count: int) -> None:
    """Refuse a seat count outside the declared range.

    Raises:
        SetupRefused: naming the count and the range.
    """
    if not metadata.min_players <= count <= metadata.max_players:
        span = (
            f"exactly {metadata.min_players}"
            if metadata.min_players == metadata.max_players
            else f"{metadata.min_players} to {metadata.max_players}"
        )
        raise SetupRefused(f"this game seats {span} players, not {count}", players=count)


def resolve_options(metadata: GameMetadata, given: dict[str, Any]) -> dict[str, Any]:
    """The options a match plays with: ``given`` checked, every other declared option's default.

    Args:
        given: option name -> JSON value (integers may arrive as integral floats).

    Returns:
        name -> value for every declared option, in declaration order (integers as ``int``).

    Raises:
        SetupRefused: an option the module does not declare, or a value it does not allow.
    """
    for name, value in given.items():
        spec = metadata.option(name)
        if spec is None:
            known = ", ".join(o.name for o in metadata.options) or "none"
            raise SetupRefused(f"unknown option {name!r} (this game's options: {known})", option=name)
        if not spec.allows(value):  # the value as JSON: "7" (a string) is not 7, null is not "None"
            raise SetupRefused(f"option {name!r} must be {spec.allowed_text()}, not {shown_value(value)}", option=name)
    resolved: dict[str, Any] = {}
    for spec in metadata.options:
        value = given.get(spec.name, spec.default)
        if spec.type == "integer" and isinstance(value, float):
            value = int(value) if math.isfinite(value) else value
        resolved[spec.name] = value
    return resolved
