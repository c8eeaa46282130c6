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
        ├── MatchWaiting            match/waiting      open seats: no game runs until the last is taken
        ├── NeverStarted            match/never_started  aborted while waiting: no game, no record
        ├── NotYourTurn             match/not_your_turn
        ├── StaleVersion            match/stale_version
        ├── NotOffered              match/not_offered
        ├── StuckGame               match/stuck
        └── UndoRefused             match/undo_refused
            └── NothingToUndo       match/nothing_to_undo
"""

from __future__ import annotations

from typing import Any


class TablehostError(Exception):
    """Root of every tablehost error.

    Args:
        message: a sentence a person can act on.
        match_id: the match concerned, when there is one.
        player_id: the player concerned, when there is one.

    Subclasses add their own typed context (``budget``, ``op``, ``printed``...), each a
    keyword argument and an attribute of the same name.
    """

    code = "tablehost/error"

    def __init__(self, message: str, *, match_id: str | None = None, player_id: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.match_id = match_id
        self.player_id = player_id

    def __str__(self) -> str:
        return self.message


class ModuleError(TablehostError):
    """The bytes are not a valid ABI v1 module (missing export, an import, too large, not wasm).

    Attributes:
        budget: the budget the module exceeds (``module_bytes``, ``memory``...), when that is why.
        sha256: the module's sha256, when known.
    """

    code = "module/invalid"

    def __init__(self, message: str, *, budget: str | None = None, sha256: str | None = None) -> None:
        super().__init__(message)
        self.budget = budget
        self.sha256 = sha256


class GuestError(TablehostError):
    """A guest call failed; its instance is discarded.

    Attributes:
        op: the call (``setup``, ``step``, ... or ``instantiate``/``alloc``).
        printed: what the game printed during the call (may be empty); for the admin only.
    """

    code = "guest/error"

    def __init__(
        self,
        message: str,
        *,
        op: str = "",
        printed: str = "",
        match_id: str | None = None,
        player_id: int | None = None,
    ) -> None:
        super().__init__(message, match_id=match_id, player_id=player_id)
        self.op = op
        self.printed = printed


class GuestPanic(GuestError):
    """The game panicked; ``message`` is the panic message."""

    code = "guest/panic"


class GuestTrap(GuestError):
    """The guest trapped without a panic message. ``trap`` names the wasm trap."""

    code = "guest/trap"

    def __init__(self, message: str, *, trap: str = "", op: str = "", printed: str = "") -> None:
        super().__init__(message, op=op, printed=printed)
        self.trap = trap


class GuestCancelled(GuestError):
    """The host stopped the call before it ended (its ``cancelled`` check said so: the match a
    server bot searched for is over, or the server is stopping). Not the module's failure: it
    counts toward neither struggling nor quarantine; the instance is discarded all the same."""

    code = "guest/cancelled"


class BudgetExceeded(GuestError):
    """A budget ran out.

    Attributes:
        budget: one of ``wall_ms``, ``fuel``, ``memory``, ``stack``, ``response``.
        trap: the wasm trap that showed it, when one did.
    """

    code = "guest/budget"

    def __init__(
        self, message: str, *, budget: str = "", trap: str | None = None, op: str = "", printed: str = ""
    ) -> None:
        super().__init__(message, op=op, printed=printed)
        self.budget = budget
        self.trap = trap


class GuestProtocolError(GuestError):
    """The guest answered something that is not a valid ABI v1 response, or over a limit.

    Attributes:
        guest_code: the guest's own error code when it answered ``{"error": {"code": ...}}``.
        path: the first bad place of a refused answer, e.g. ``step.actions["7"][0].action.index``.
    """

    code = "guest/protocol"

    def __init__(
        self,
        message: str,
        *,
        guest_code: str | None = None,
        path: str | None = None,
        op: str = "",
        printed: str = "",
        match_id: str | None = None,
    ) -> None:
        super().__init__(message, op=op, printed=printed, match_id=match_id)
        self.guest_code = guest_code
        self.path = path


class ModuleQuarantined(GuestError):
    """The module's calls kept failing (budgets, traps, panics), so it gets no calls for a while.

    ``retry_after_ms`` says when calls are accepted again (milliseconds from the refusal).
    """

    code = "module/quarantined"

    def __init__(self, message: str, *, retry_after_ms: int = 0) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


class ModuleBusy(GuestError):
    """Every one of the module's concurrent-call slots stayed taken for a whole wall-clock budget."""

    code = "module/busy"


class RecordError(TablehostError):
    """A match record is malformed, or its replay could not run."""

    code = "record/invalid"


class MatchError(TablehostError):
    """A platform rule (docs/architecture.md "Platform rules") refused the request; nothing changed."""

    code = "match/error"


class UnknownMatch(MatchError):
    """No match with this id."""

    code = "match/unknown"


class MatchOver(MatchError):
    """The game is over; no action is accepted (platform rule 4)."""

    code = "match/over"


class MatchWaiting(MatchError):
    """The match waits for players to take its open seats: no game runs yet, so no move, undo,
    resignation or record can be had (the lobby, :mod:`tablehost.lobby`).

    Attributes:
        open_seats: the player ids of the open seats, in seat order.
    """

    code = "match/waiting"

    def __init__(self, message: str, *, match_id: str, open_seats: list[int]) -> None:
        super().__init__(message, match_id=match_id)
        self.open_seats = list(open_seats)


class NeverStarted(MatchError):
    """The match was aborted while it waited for players: no game was ever set up, so it has no
    record (docs/architecture.md "Records": a record begins with the game's setup)."""

    code = "match/never_started"


class NotYourTurn(MatchError):
    """The player is not in ``active_player_ids`` (platform rule 1)."""

    code = "match/not_your_turn"


class StaleVersion(MatchError):
    """The client's version is not the match's current version.

    Attributes:
        expected_version: the version the client saw.
        version: the match's version.
    """

    code = "match/stale_version"

    def __init__(self, message: str, *, match_id: str, expected_version: int, version: int) -> None:
        super().__init__(message, match_id=match_id)
        self.expected_version = expected_version
        self.version = version


class NotOffered(MatchError):
    """The action is not among those offered to the player in the current state (platform rule 1).

    Attributes:
        action: the action that was refused, as the client sent it, when known.
    """

    code = "match/not_offered"

    def __init__(
        self,
        message: str,
        *,
        match_id: str | None = None,
        player_id: int | None = None,
        action: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, match_id=match_id, player_id=player_id)
        self.action = action


class StuckGame(MatchError):
    """Nobody can act although the game is not over: the module offers no action to any active player."""

    code = "match/stuck"


class UndoRefused(MatchError):
    """Undo is not allowed now (platform rule 3); the message says which part of the rule refused it."""

    code = "match/undo_refused"


class NothingToUndo(UndoRefused):
    """Undo was asked for but no move is in force: none was played yet, or all were taken back."""

    code = "match/nothing_to_undo"


class PatchError(TablehostError):
    """A patch cannot be applied to the state (unknown space, index out of range, bad op).

    Attributes:
        op: the patch's op, when known.
        patch_index: the position of the patch in its list, when applying a list.
    """

    code = "table/bad_patch"

    def __init__(self, message: str, *, op: str | None = None, patch_index: int | None = None) -> None:
        super().__init__(message)
        self.op = op
        self.patch_index = patch_index
