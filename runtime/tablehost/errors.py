"""The one exception tree of tablehost.

Every error the host raises derives from :class:`TablehostError` and carries a
stable string ``code`` (``"area/reason"``) that the API maps to a gRPC status::

    TablehostError
    ├── ModuleError                 module/invalid    bytes are not a usable ABI v1 module
    ├── GuestError                  guest/*           one guest call failed; its instance is discarded
    │   ├── GuestPanic              guest/panic       the game panicked (message + printed)
    │   ├── GuestTrap               guest/trap        a wasm trap that was not a panic
    │   ├── BudgetExceeded          guest/budget      a budget ran out (``budget`` names which)
    │   ├── GuestProtocolError      guest/protocol    a malformed or oversized response
    │   ├── ModuleQuarantined       module/quarantined  calls kept failing: no calls for a while
    │   └── ModuleBusy              module/busy       every call slot of the module stayed taken
    ├── PatchError                  table/bad_patch   a patch does not fit the state
    ├── RecordError                 record/invalid    a match record cannot be read or replayed
    └── MatchError                  match/*           a platform rule refused a request
        ├── UnknownMatch            match/unknown
        ├── MatchOver               match/over
        ├── NotYourTurn             match/not_your_turn
        ├── StaleVersion            match/stale_version
        ├── NotOffered              match/not_offered
        ├── StuckGame               match/stuck
        └── UndoRefused             match/undo_refused
"""

from __future__ import annotations

from typing import Any


class TablehostError(Exception):
    """Root of every tablehost error.

    Args:
        message: a sentence a person can act on.
        **fields: context such as ``match_id``, ``player_id``, ``budget``;
            kept in :attr:`fields` and as attributes.
    """

    code = "tablehost/error"

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields
        for key, value in fields.items():
            setattr(self, key, value)

    def __str__(self) -> str:
        return self.message


class ModuleError(TablehostError):
    """The bytes are not a valid ABI v1 module (missing export, an import, too large, not wasm)."""

    code = "module/invalid"


class GuestError(TablehostError):
    """A guest call failed. ``printed`` holds what the game printed (may be empty);
    ``op`` names the call (``setup``, ``step``, ... or ``instantiate``/``alloc``)."""

    code = "guest/error"
    printed: str = ""
    op: str = ""


class GuestPanic(GuestError):
    """The game panicked; ``message`` is the panic message."""

    code = "guest/panic"


class GuestTrap(GuestError):
    """The guest trapped without a panic message (``trap`` names the wasm trap)."""

    code = "guest/trap"
    trap: str = ""


class BudgetExceeded(GuestError):
    """A budget ran out. ``budget`` is one of ``wall_ms``, ``fuel``, ``memory``, ``stack``, ``response``."""

    code = "guest/budget"
    budget: str = ""


class GuestProtocolError(GuestError):
    """The guest answered with something that is not a valid ABI v1 response."""

    code = "guest/protocol"
    guest_code: str | None = None
    """The guest's own error code when it answered ``{"error": {"code": ...}}``, else ``None``."""


class ModuleQuarantined(GuestError):
    """The module's calls kept failing (budgets, traps, panics), so it gets no calls for a while.

    ``retry_after_ms`` says when calls are accepted again (milliseconds from the refusal).
    """

    code = "module/quarantined"
    retry_after_ms: int = 0


class ModuleBusy(GuestError):
    """Every one of the module's concurrent-call slots stayed taken for a whole wall-clock budget."""

    code = "module/busy"


class RecordError(TablehostError):
    """A match record is malformed, or its replay could not run."""

    code = "record/invalid"


class MatchError(TablehostError):
    """A platform rule refused the request; the match is unchanged."""

    code = "match/error"


class UnknownMatch(MatchError):
    """No match with this id."""

    code = "match/unknown"


class MatchOver(MatchError):
    """The game is over; no action is accepted (platform rule 4)."""

    code = "match/over"


class NotYourTurn(MatchError):
    """The player is not in ``active_player_ids`` (platform rule 1)."""

    code = "match/not_your_turn"


class StaleVersion(MatchError):
    """The client's version is not the match's current version."""

    code = "match/stale_version"


class NotOffered(MatchError):
    """The action is not among those offered to the player in the current state (platform rule 1)."""

    code = "match/not_offered"


class StuckGame(MatchError):
    """Nobody can act although the game is not over: the module offers no action to any active player."""

    code = "match/stuck"


class UndoRefused(MatchError):
    """Undo is not allowed now (platform rule 3); the message says which part of the rule refused it."""

    code = "match/undo_refused"


class PatchError(TablehostError):
    """A patch cannot be applied to the state (unknown space, index out of range, bad op)."""

    code = "table/bad_patch"
