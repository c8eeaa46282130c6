"""The platform's turn rules: who may act, was it offered, a seed per move, undo, game over, history.

A :class:`Match` owns one authoritative :class:`~tablehost.table.Table` and asks a
:class:`~tablehost.guest.GuestPool` to run the game's rules. Every refusal raises a
:class:`~tablehost.errors.MatchError` (or a :class:`~tablehost.errors.GuestError`)
*before* anything changes, so a refused request leaves the match exactly as it was.

Validation order (fixed and tested): unknown match (the caller's lookup), game over,
not active, stale version, not offered, then the guest.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from tablehost.errors import (
    GuestProtocolError,
    MatchOver,
    NotOffered,
    NotYourTurn,
    PatchError,
    StaleVersion,
    UndoRefused,
)
from tablehost.reveal import patch_reveals
from tablehost.table import Table, canonical_json, normalize_state
from tablehost.types import ActionDict, AvailableActionDict, PlayerId, Seed, StateDict, Viewer
from tablehost.view import resolve_view_action, view_actions, view_state, visible_scores

if TYPE_CHECKING:  # the pool is used through its methods only (tests use a Python fake)
    from tablehost.guest import GuestPool

RECORD_FORMAT = "tablehost.record/1"

UNDO_BUTTON_ID = "tablehost.undo"
UNDO_ACTION: ActionDict = {
    "type": "button_click",
    "button": {"id": UNDO_BUTTON_ID, "label": "Undo", "location": "platform", "disabled": False},
}
"""The platform's own undo action (intent ``undo``); a game never offers it (platform rule 3)."""

Journal = Callable[[str, dict[str, Any]], None]
"""``journal(kind, payload)``: called before a change becomes visible; see docs/architecture.md."""


def utc_now() -> str:
    """Return the current UTC time as ISO 8601 with microseconds, e.g. ``2026-11-29T21:00:00.000001+00:00``."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def draw_seed() -> Seed:
    """Return a fresh 64-bit seed from :mod:`secrets` (0 <= seed < 2**64)."""
    return secrets.randbits(64)


@dataclass(frozen=True)
class PlayerInfo:
    """One seat of a match.

    Attributes:
        player_id: the id the game sees (u32, unique in the match).
        username: display name.
        color: display colour, e.g. ``"#c0392b"``.
    """

    player_id: PlayerId
    username: str
    color: str

    def to_json(self) -> dict[str, Any]:
        """Return ``{"player_id", "username", "color"}`` as sent to the guest's ``setup``."""
        return {"player_id": self.player_id, "username": self.username, "color": self.color}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlayerInfo:
        """Inverse of :meth:`to_json`. Raises ``KeyError``/``TypeError`` on a malformed dict."""
        return cls(int(data["player_id"]), str(data["username"]), str(data["color"]))


@dataclass
class MoveRecord:
    """One accepted move, as the history and the record keep it.

    Attributes:
        seq: the match version right after this move (1-based).
        player_id: who moved.
        action: the action as the guest saw it (guest addresses).
        seed: the 64-bit seed the move ran with.
        patches: the patches the move produced, in order.
        rng_used: the game drew randomness (the move can never be undone).
        allow_undo: the game called ``allow_undo``.
        at: UTC timestamp (ISO 8601).
        view_action: the action in the mover's view addresses, when it came through a view.
        picked: the host chose among indistinguishable hidden pieces at random (counts as randomness).
        undone: the move was taken back; ``undo_seq`` is the version of that undo.
    """

    seq: int
    player_id: PlayerId
    action: ActionDict
    seed: Seed
    patches: list[dict[str, Any]]
    rng_used: bool
    allow_undo: bool
    at: str
    view_action: ActionDict | None = None
    picked: bool = False
    undone: bool = False
    undo_seq: int | None = None
    revealed: bool = field(default=False, compare=False)
    """Set by the match when it applies the move (not recorded: recomputed on resume)."""

    @property
    def undoable(self) -> bool:
        """True when the move itself permits undo: allowed by the game and no randomness drawn."""
        return self.allow_undo and not self.rng_used and not self.picked

    def to_json(self) -> dict[str, Any]:
        """Return the record form documented in docs/architecture.md."""
        return {
            "seq": self.seq,
            "player_id": self.player_id,
            "action": self.action,
            "view_action": self.view_action,
            "seed": self.seed,
            "patches": self.patches,
            "rng_used": self.rng_used,
            "allow_undo": self.allow_undo,
            "picked": self.picked,
            "undone": self.undone,
            "undo_seq": self.undo_seq,
            "at": self.at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MoveRecord:
        """Inverse of :meth:`to_json`. Raises ``KeyError``/``TypeError`` on a malformed dict."""
        return cls(
            seq=int(data["seq"]),
            player_id=int(data["player_id"]),
            action=data["action"],
            seed=int(data["seed"]),
            patches=list(data["patches"]),
            rng_used=bool(data["rng_used"]),
            allow_undo=bool(data["allow_undo"]),
            at=str(data.get("at", "")),
            view_action=data.get("view_action"),
            picked=bool(data.get("picked", False)),
            undone=bool(data.get("undone", False)),
            undo_seq=data.get("undo_seq"),
        )


@dataclass(frozen=True)
class MatchView:
    """What one viewer is served at one version.

    Attributes:
        state: the view of the table (docs/architecture.md, view.py).
        actions: the viewer's available actions in view addresses (empty for spectators).
        scores: the scores the viewer may see, keyed by player id as a decimal string.
        active_player_ids: whose turn it is.
        game_over: no action is accepted any more.
        version: history length (moves + undos) this view reflects.
    """

    state: dict[str, Any]
    actions: list[AvailableActionDict]
    scores: dict[str, Any]
    active_player_ids: list[PlayerId]
    game_over: bool
    version: int


@dataclass
class _Position:
    """Everything the match knows about one state, kept for undo."""

    snapshot: bytes
    scores: dict[str, Any]
    game_over: bool
    actions: dict[int, list[AvailableActionDict]] | None


@dataclass
class Match:
    """A running match of one module. Not thread-safe: callers hold one lock per match.

    Build with :meth:`start` or :meth:`resume`, not the constructor.
    """

    match_id: str
    module_sha256: str
    module_name: str
    pool: GuestPool
    players: list[PlayerInfo]
    setup: dict[str, Any]
    table: Table
    created_at: str
    journal: Journal | None = None
    check_mirror: bool = False
    history: list[MoveRecord] = field(default_factory=list)
    scores: dict[str, Any] = field(default_factory=dict)
    game_over: bool = False
    version: int = 0
    _actions: dict[int, list[AvailableActionDict]] = field(default_factory=dict)
    _undo_chain: list[tuple[MoveRecord, _Position]] = field(default_factory=list)

    # ----------------------------------------------------------------- creation

    @classmethod
    def start(
        cls,
        pool: GuestPool,
        players: Sequence[PlayerInfo],
        *,
        match_id: str,
        module_sha256: str = "",
        module_name: str = "",
        seed: Seed | None = None,
        journal: Journal | None = None,
        check_mirror: bool = False,
    ) -> Match:
        """Seat ``players`` and run the game's ``config`` and ``prepare``.

        Args:
            pool: instances of the game module.
            players: the seats in seat order; player ids must be unique.
            match_id: a unique id; state refs sent to the guest derive from it.
            seed: the setup seed (a fresh one from :mod:`secrets` when None; fixed only in tests).
            journal: durability hook, called with ``("setup", record)`` before the match exists.
            check_mirror: ask the guest for its state after every move and compare (tests).

        Returns:
            The match at version 0.

        Raises:
            ValueError: no players, or duplicate player ids.
            GuestError: the guest failed during setup (nothing is created).
        """
        if not players:
            raise ValueError("a match needs at least one player")
        ids = [p.player_id for p in players]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate player ids in {ids}")
        setup_seed = draw_seed() if seed is None else seed
        response = pool.setup([p.to_json() for p in players], setup_seed, f"{match_id}:0")
        _require(response, ("state", "patches", "scores", "game_over", "actions"), "setup")
        setup = {
            "seed": setup_seed,
            "state": response["state"],
            "patches": response["patches"],
            "rng_used": bool(response.get("rng_used", False)),
            "score_labels": list(response.get("score_labels", [])),
        }
        table = Table(response["state"])  # normalises into a copy: the record keeps the original
        table.apply(response["patches"])
        match = cls(
            match_id=match_id,
            module_sha256=module_sha256,
            module_name=module_name,
            pool=pool,
            players=list(players),
            setup=setup,
            table=table,
            created_at=utc_now(),
            journal=journal,
            check_mirror=check_mirror,
        )
        match._take_outcome(response)
        if journal is not None:
            journal("setup", match.record())
        return match

    @classmethod
    def resume(cls, pool: GuestPool, record: dict[str, Any], journal: Journal | None = None) -> Match:
        """Rebuild a match from its record without re-running the game's moves.

        The state is the setup state plus every move's patches, with undos restoring the
        state their move started from. The current actions, scores and game over are asked
        of the guest once.

        Raises:
            RecordError: the record is malformed.
            PatchError: a recorded patch does not fit (a corrupted record).
            GuestError: the guest failed answering for the current state.
        """
        from tablehost.record import parse_record  # record imports match: avoid the cycle

        parsed = parse_record(record)
        table = Table(parsed.setup["state"])
        table.apply(parsed.setup["patches"])
        match = cls(
            match_id=parsed.match_id,
            module_sha256=parsed.module_sha256,
            module_name=parsed.module_name,
            pool=pool,
            players=parsed.players,
            setup=parsed.setup,
            table=table,
            created_at=parsed.created_at,
            journal=None,
        )
        for kind, move in parsed.events():
            if kind == "move":
                before = _Position(match.table.snapshot(), {}, False, None) if move.undoable else None
                match._commit_move(move, before)
            else:
                match._commit_undo(move)
        match._refresh_from_guest()
        match.journal = journal
        return match

    # ----------------------------------------------------------------- reading

    @property
    def state(self) -> StateDict:
        """The authoritative state (do not mutate)."""
        return self.table.state

    @property
    def active_player_ids(self) -> list[PlayerId]:
        """Players who may act now (``state.active_player_ids``)."""
        return list(self.table.state["active_player_ids"])

    @property
    def state_ref(self) -> str:
        """The reference the guest caches the current state under."""
        return f"{self.match_id}:{self.version}"

    def actions_for(self, player_id: PlayerId) -> list[AvailableActionDict]:
        """The actions ``player_id`` may take now, in guest addresses.

        Includes the platform's undo action (intent ``undo``) when :meth:`undo` would succeed.
        Empty after game over or for a player who is not active and has nothing to undo.
        """
        if self.game_over:
            return []
        offered = list(self._actions.get(player_id, ()))
        if self.can_undo(player_id):
            offered.append({"action": UNDO_ACTION, "intent": "undo", "label": "Undo"})
        return offered

    def view(self, viewer: Viewer) -> MatchView:
        """Return what ``viewer`` (a player id, or None for a spectator) may see now."""
        actions = [] if viewer is None else view_actions(self.state, viewer, self.actions_for(viewer))
        return MatchView(
            state=view_state(self.state, viewer),
            actions=actions,
            scores=visible_scores(self.scores, viewer),
            active_player_ids=self.active_player_ids,
            game_over=self.game_over,
            version=self.version,
        )

    def record(self) -> dict[str, Any]:
        """Return the match record (docs/architecture.md): everything replay needs."""
        return {
            "format": RECORD_FORMAT,
            "match_id": self.match_id,
            "module": {"sha256": self.module_sha256, "name": self.module_name},
            "players": [p.to_json() for p in self.players],
            "setup": self.setup,
            "moves": [m.to_json() for m in self.history],
            "created_at": self.created_at,
        }

    # ----------------------------------------------------------------- moves

    def submit(
        self,
        player_id: PlayerId,
        action: ActionDict,
        *,
        expected_version: int | None = None,
        seed: Seed | None = None,
        view_action: ActionDict | None = None,
        picked: bool = False,
    ) -> MoveRecord:
        """Apply ``action`` (guest addresses) for ``player_id``.

        Args:
            player_id: the acting player.
            action: exactly one of the actions offered to that player now; the platform's
                undo action is routed to :meth:`undo`.
            expected_version: the version the client saw; None skips the check.
            seed: the move's seed; None draws a fresh one (fixed only by replay and tests).
            view_action, picked: set by :meth:`submit_view_action`.

        Returns:
            The new :class:`MoveRecord` (already in :attr:`history`).

        Raises:
            MatchOver, NotYourTurn, StaleVersion, NotOffered: in that order; nothing changes.
            GuestError: the game failed; nothing changes and the instance is discarded.
            PatchError: the game produced patches that do not fit; nothing changes.
        """
        if self.game_over:
            raise MatchOver(f"match {self.match_id} is over", match_id=self.match_id)
        if action == UNDO_ACTION:
            return self.undo(player_id, expected_version=expected_version)
        self._check_turn(player_id, expected_version)
        if not any(offer["action"] == action for offer in self._actions.get(player_id, ())):
            raise NotOffered(
                f"action {orjson.dumps(action).decode()} was not offered to player {player_id}",
                match_id=self.match_id,
                player_id=player_id,
            )
        move_seed = draw_seed() if seed is None else seed
        next_ref = f"{self.match_id}:{self.version + 1}"
        response = self.pool.step(
            self.state_ref,
            lambda: self.table.state,
            next_ref,
            player_id,
            action,
            move_seed,
            want_state=self.check_mirror,
        )
        try:
            return self._accept_move(player_id, action, move_seed, response, view_action, picked)
        except BaseException:
            # Refused after the guest ran: what it cached under next_ref must never come back.
            self.pool.discard_ref(next_ref)
            raise

    def _accept_move(
        self,
        player_id: PlayerId,
        action: ActionDict,
        move_seed: Seed,
        response: dict[str, Any],
        view_action: ActionDict | None,
        picked: bool,
    ) -> MoveRecord:
        """Check, journal and apply the guest's answer to a move; raises (changing nothing) to refuse it."""
        move = MoveRecord(
            seq=self.version + 1,
            player_id=player_id,
            action=action,
            seed=move_seed,
            patches=response["patches"],
            rng_used=bool(response.get("rng_used", False)),
            allow_undo=bool(response.get("allow_undo", False)),
            at=utc_now(),
            view_action=view_action,
            picked=picked,
        )
        if self.journal is not None:
            # Check, make durable, then apply: the apply cannot fail after the check, and a
            # failed journal write leaves the match as it was.
            self.table.check(move.patches)
            self.journal("move", move.to_json())
        self._commit_move(move, self._position() if move.undoable else None)
        self._take_outcome(response)
        if self.check_mirror:
            self._compare_mirror(response)
        return move

    def submit_view_action(
        self,
        player_id: PlayerId,
        view_action: ActionDict,
        *,
        expected_version: int | None = None,
        seed: Seed | None = None,
        pick_below: Callable[[int], int] | None = None,
    ) -> MoveRecord:
        """Apply an action given in ``player_id``'s view addresses (what clients send).

        A click on a group of indistinguishable hidden pieces becomes one of the offered
        pieces of that group, picked with :mod:`secrets` (or ``pick_below(n)``, a number in
        ``0..n``, for seeded simulations); the pick is recorded and counts as randomness (the
        move cannot be undone).

        Raises:
            as :meth:`submit`; NotOffered also when the view action matches nothing offered.
        """
        if self.game_over:
            raise MatchOver(f"match {self.match_id} is over", match_id=self.match_id)
        if view_action == UNDO_ACTION:
            return self.undo(player_id, expected_version=expected_version)
        self._check_turn(player_id, expected_version)
        choices: list[int] = []

        def pick(n: int) -> int:
            choices.append(n)
            return pick_below(n) if pick_below is not None else secrets.randbelow(n)

        action = resolve_view_action(self.state, player_id, view_action, self._actions.get(player_id, []), pick)
        return self.submit(
            player_id,
            action,
            seed=seed,
            view_action=view_action,
            picked=any(n > 1 for n in choices),
        )

    # ----------------------------------------------------------------- undo

    def can_undo(self, player_id: PlayerId) -> bool:
        """True when :meth:`undo` by ``player_id`` would succeed now (O(1)).

        Platform rule 3: the newest move still in force is the player's own, the game allowed
        undo on it, it drew no randomness, nobody else has acted since, and (the host's own
        addition, see :mod:`tablehost.reveal`) it revealed nothing hidden to anyone.
        """
        if self.game_over or not self._undo_chain:
            return False
        move = self._undo_chain[-1][0]
        return move.player_id == player_id and not move.revealed

    def undo_refusal(self, player_id: PlayerId) -> str | None:
        """Why ``player_id`` may not undo now (the part of platform rule 3), or None if they may."""
        if self.can_undo(player_id):
            return None
        if self.game_over:
            return "the game is over"
        if self._undo_chain:
            move = self._undo_chain[-1][0]
            if move.revealed:
                return f"move {move.seq} revealed hidden information"
            return f"the last move was made by player {move.player_id}, not {player_id}"
        return self._why_no_chain()

    def undo(self, player_id: PlayerId, *, expected_version: int | None = None) -> MoveRecord:
        """Take back ``player_id``'s newest move; the state, log included, is restored exactly.

        Returns:
            The move taken back (now ``undone``, with ``undo_seq`` = the new version).

        Raises:
            MatchOver: the game is over.
            StaleVersion: ``expected_version`` is not the current version.
            UndoRefused: with the part of platform rule 3 that refused it.
        """
        if self.game_over:
            raise MatchOver(f"match {self.match_id} is over", match_id=self.match_id)
        self._check_version(expected_version)
        reason = self.undo_refusal(player_id)
        if reason is not None:
            raise UndoRefused(f"undo refused: {reason}", match_id=self.match_id, player_id=player_id)
        move, before = self._undo_chain[-1]
        payload = {"seq": move.seq, "undo_seq": self.version + 1, "at": utc_now()}
        if self.journal is not None:
            self.journal("undo", payload)
        self.pool.discard_ref(self.state_ref)
        self._commit_undo(move)
        if before.actions is None:
            self._refresh_from_guest()
        else:
            self.scores, self.game_over, self._actions = before.scores, before.game_over, before.actions
        return move

    # ----------------------------------------------------------------- internals

    def _check_turn(self, player_id: PlayerId, expected_version: int | None) -> None:
        """Platform rule 1 (only an active player acts), then the client's version."""
        if player_id not in self.table.state["active_player_ids"]:
            raise NotYourTurn(
                f"player {player_id} is not active (active: {self.active_player_ids})",
                match_id=self.match_id,
                player_id=player_id,
            )
        self._check_version(expected_version)

    def _check_version(self, expected_version: int | None) -> None:
        if expected_version is not None and expected_version != self.version:
            raise StaleVersion(
                f"the client saw version {expected_version}, the match is at {self.version}",
                match_id=self.match_id,
                expected_version=expected_version,
                version=self.version,
            )

    def _position(self) -> _Position:
        return _Position(self.table.snapshot(), self.scores, self.game_over, self._actions)

    def _commit_move(self, move: MoveRecord, before: _Position | None) -> None:
        """Apply a move's patches and bookkeeping (shared by live play and resume).

        An undoable move is applied patch by patch so each patch can be judged for a reveal
        against the state right before it; a bad patch restores ``before``. Other moves are
        applied all or none by :meth:`Table.apply`.

        Raises:
            PatchError: a patch does not fit; the state is as it was.
        """
        if move.undoable and before is not None:
            table = self.table
            try:
                for patch in move.patches:
                    if not move.revealed and patch_reveals(table, patch):
                        move.revealed = True
                    table.apply_patch(patch)
            except PatchError:
                self.table = Table.restore(before.snapshot)
                raise
        else:
            self.table.apply(move.patches)
        self.history.append(move)
        self.version = move.seq
        if self._undo_chain and self._undo_chain[-1][0].player_id != move.player_id:
            self._undo_chain.clear()
        if move.undoable and before is not None:
            self._undo_chain.append((move, before))
        else:
            self._undo_chain.clear()

    def _commit_undo(self, move: MoveRecord) -> None:
        if not self._undo_chain or self._undo_chain[-1][0].seq != move.seq:
            from tablehost.errors import RecordError

            raise RecordError(f"undo of move {move.seq} does not follow an undoable move")
        _, before = self._undo_chain.pop()
        self.table = Table.restore(before.snapshot)
        move.undone = True
        self.version += 1
        move.undo_seq = self.version

    def _why_no_chain(self) -> str:
        live = [m for m in self.history if not m.undone]
        if not live:
            return "there is no move to take back"
        last = live[-1]
        if last.rng_used or last.picked:
            return f"move {last.seq} drew randomness"
        if not last.allow_undo:
            return f"move {last.seq} did not allow undo"
        return f"another player acted after move {last.seq}"

    def _take_outcome(self, response: dict[str, Any]) -> None:
        self.scores = response["scores"]
        self.game_over = bool(response["game_over"])
        self._actions = {int(pid): acts for pid, acts in response["actions"].items()}

    def _refresh_from_guest(self) -> None:
        """Ask the guest for the current state's actions, scores and game over (resume, undo)."""
        get_state = lambda: self.table.state
        over = self.pool.game_over(self.state_ref, get_state)
        actions: dict[str, list[AvailableActionDict]] = {}
        if not over["game_over"]:
            for pid in self.table.state["active_player_ids"]:
                actions[str(pid)] = self.pool.actions(self.state_ref, get_state, pid)
        self._take_outcome({"scores": over["scores"], "game_over": over["game_over"], "actions": actions})

    def _compare_mirror(self, response: dict[str, Any]) -> None:
        guest_state = response.get("state")
        if guest_state is None:
            raise GuestProtocolError("step was asked for its state (want_state) but sent none")
        if canonical_json(normalize_state(guest_state)) != canonical_json(self.table.state):
            raise GuestProtocolError(
                f"host state differs from the guest's after move {self.version}",
                match_id=self.match_id,
            )


def _require(response: dict[str, Any], keys: tuple[str, ...], op: str) -> None:
    missing = [k for k in keys if k not in response]
    if missing:
        raise GuestProtocolError(f"{op} response lacks {', '.join(missing)}")
