"""The platform's turn rules: who may act, was it offered, a seed per move, undo, game over, history.

The numbered platform rules cited here and elsewhere are stated in docs/architecture.md,
"Platform rules".

A :class:`Match` owns one authoritative :class:`~tablehost.table.Table` and asks a
:class:`~tablehost.guest.GuestPool` to run the game's rules. Every refusal raises a
:class:`~tablehost.errors.MatchError` (or a :class:`~tablehost.errors.GuestError`)
*before* anything changes, so a refused request leaves the match exactly as it was.

Validation order (fixed and tested): unknown match (the caller's lookup), game over,
not active, stale version, not offered, then the guest.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import orjson

from tablehost.abi import SetupAnswer, StepAnswer
from tablehost.errors import (
    GuestProtocolError,
    MatchOver,
    NothingToUndo,
    NotOffered,
    NotYourTurn,
    RecordError,
    StaleVersion,
    StuckGame,
    UndoRefused,
)
from tablehost.gate import Gate
from tablehost.history import (
    MoveRecord,
    Outcome,
    PlayerInfo,
    SetupRecord,
    build_record,
    keep_printed,
    offers_digest,
)
from tablehost.limits import DEFAULT_ANSWER_LIMITS, AnswerLimits
from tablehost.metadata import DEFAULT_METADATA, GameMetadata
from tablehost.results import (
    END_REASONS,
    MatchResult,
    check_ranks,
    compute_result,
    declared_partners,
    journaled_partners,
)
from tablehost.reveal import RevealCheck, reveals
from tablehost.table import Table, canonical_json, normalize_state
from tablehost.types import ActionDict, AvailableActionDict, PlayerId, Seed, StateDict, Viewer
from tablehost.view import resolve_view_action, view_actions, view_state, visible_scores

if TYPE_CHECKING:  # the pool is used through its methods only (tests use a Python fake)
    from tablehost.guest import GuestPool

UNDO_BUTTON_ID = "tablehost.undo"
UNDO_ACTION: ActionDict = {
    "type": "button_click",
    "button": {"id": UNDO_BUTTON_ID, "label": "Undo", "location": "platform", "disabled": False},
}
"""The platform's own undo action (intent ``undo``); a game never offers it (platform rule 3)."""


def is_undo_action(action: ActionDict) -> bool:
    """Whether ``action`` asks for the platform's undo: a ``button_click`` whose button id is
    :data:`UNDO_BUTTON_ID`, whatever its label or other fields (a client may send just the id)."""
    if action == UNDO_ACTION:
        return True
    button = action.get("button") if action.get("type") == "button_click" else None
    return isinstance(button, dict) and button.get("id") == UNDO_BUTTON_ID

Journal = Callable[[str, dict[str, Any]], None]
"""``journal(kind, payload)``: called before a change becomes visible; see docs/architecture.md."""


_second_text: tuple[int, str] = (-1, "")
"""The newest whole second :func:`utc_now` formatted, and its text up to the seconds."""


def utc_now() -> str:
    """Return the current UTC time as ISO 8601 with microseconds, e.g. ``2026-11-29T21:00:00.000001+00:00``.

    The same text as ``datetime.now(UTC).isoformat(timespec="microseconds")``; the date and
    time of day are formatted once per second (this runs for every move).
    """
    global _second_text
    micros = time.time_ns() // 1000
    second, fraction = divmod(micros, 1_000_000)
    known, text = _second_text
    if second != known:
        text = datetime.fromtimestamp(second, UTC).isoformat(timespec="seconds")[:-6]
        _second_text = (second, text)
    return f"{text}.{fraction:06d}+00:00"


def draw_seed() -> Seed:
    """Return a fresh 64-bit seed from :mod:`secrets` (0 <= seed < 2**64)."""
    return secrets.randbits(64)


@dataclass(frozen=True)
class MatchView:
    """What one viewer is served at one version.

    Attributes:
        state: the view of the table (docs/architecture.md, view.py).
        actions: the viewer's available actions in view addresses (empty for spectators).
        scores: the scores the viewer may see, keyed by player id as a decimal string.
        active_player_ids: whose turn it is.
        game_over: no action is accepted any more.
        version: history length (moves, undos and the ending) this view reflects.
        status: ``"active"``, ``"finished"`` or ``"aborted"`` (the lobby adds ``"waiting"``).
        result: the result once the match ended (:class:`~tablehost.results.MatchResult`), else None.
    """

    state: dict[str, Any]
    actions: list[AvailableActionDict]
    scores: dict[str, Any]
    active_player_ids: list[PlayerId]
    game_over: bool
    version: int
    status: str = "active"
    result: MatchResult | None = None


@dataclass
class _Position:
    """Everything the match knows about one state, kept for undo.

    ``outcome`` is None only for a state rebuilt from a format-1 record (results not kept);
    ``actions`` is None for a state rebuilt from any record (offers are kept as a digest).
    """

    snapshot: bytes
    outcome: Outcome | None
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
    setup: SetupRecord
    table: Table
    created_at: str
    gate: Gate
    journal: Journal | None = None
    check_mirror: bool = False
    metadata: GameMetadata = DEFAULT_METADATA
    time_control: dict[str, Any] = field(default_factory=dict)
    """The time control's JSON form (:class:`tablehost.clocks.TimeControl`), ``{}`` for none."""
    bots: dict[PlayerId, str] = field(default_factory=dict)
    """Seats the server plays itself (:mod:`tablehost.api.server_bots`): player id -> bot name
    (``random``, ``first``, ``mcts:N``, ``ismcts:N``); recorded as ``bots``."""
    stamp_clocks: Callable[[MoveRecord, list[PlayerId]], dict[str, Any] | None] | None = None
    """Called with each new move and the active player ids it leaves, before it is journaled;
    returns the clocks recorded with it."""
    undo_enabled: bool = True
    """Keep the position before each undoable move so its player may take it back (platform
    rule 3). Off for bot games (:func:`tablehost.selfplay.play_game`), whose bots never undo:
    no state snapshot and reveal judgement per move, and undo is never offered."""
    resignations: list[dict[str, Any]] = field(default_factory=list)
    """Seats that resigned while the others play on (resign rule ``continue``), in order:
    ``{"seq", "player_id", "partners", "at"}``. The host plays for them; they rank last, with
    the ``partners`` they had when they resigned (absent in resignations journaled before
    partners were: the seat ranks alone)."""
    ending: dict[str, Any] | None = None
    """How the match ended early (resigned, timeout, aborted): ``{"seq", "ended_by", "player_id",
    "partners", "at"}`` (``partners`` for resigned and timeout: the seats that fall with it);
    None while it runs or when it ended by the rules."""
    history: list[MoveRecord] = field(default_factory=list)
    scores: dict[str, Any] = field(default_factory=dict)
    game_over: bool = False
    version: int = 0
    _actions: dict[int, list[AvailableActionDict]] = field(default_factory=dict)
    _ranks: dict[int, int] | None = None
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
        metadata: GameMetadata = DEFAULT_METADATA,
        options: dict[str, Any] | None = None,
        time_control: dict[str, Any] | None = None,
        answer_limits: AnswerLimits = DEFAULT_ANSWER_LIMITS,
        bots: dict[PlayerId, str] | None = None,
        undo: bool = True,
    ) -> Match:
        """Seat ``players`` and run the game's ``config`` and ``prepare``.

        Args:
            pool: instances of the game module.
            players: the seats in seat order; player ids must be unique.
            match_id: a unique id; state refs sent to the guest derive from it.
            seed: the setup seed (a fresh one from :mod:`secrets` when None; fixed only in tests).
            journal: durability hook, called with ``("setup", record)`` before the match exists.
            check_mirror: ask the guest for its state after every move and compare (tests).
            metadata: the module's checked metadata (the result rule and resign rule come from it).
            options: the resolved options (:func:`tablehost.metadata.resolve_options`); sent to
                ``setup`` and recorded in ``setup.options`` when not empty.
            time_control: the time control's JSON form, recorded as ``time_control``.
            answer_limits: what the gate lets through of every answer of this match.
            bots: seats the server plays (player id -> bot name), recorded as ``bots``.
            undo: keep positions for undo (:attr:`undo_enabled`; off only for bot games).

        Returns:
            The match at version 0.

        Raises:
            ValueError: no players, or duplicate player ids.
            GuestError: the guest failed during setup, or its answer did not pass the gate
                (:class:`GuestProtocolError`); nothing is created or journaled.
        """
        if not players:
            raise ValueError("a match needs at least one player")
        ids = [p.player_id for p in players]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate player ids in {ids}")
        setup_seed = draw_seed() if seed is None else seed
        gate = Gate(ids, answer_limits)
        seated = [p.to_json() for p in players]
        if options:
            answer = pool.setup(seated, setup_seed, f"{match_id}:0", options)
        else:
            answer = pool.setup(seated, setup_seed, f"{match_id}:0")
        response, table = gate.check_setup(answer, ids)  # a normalised copy: the record keeps the original
        _check_ranks(response, metadata, ids)
        setup: SetupRecord = {
            "seed": setup_seed,
            "state": response["state"],
            "patches": response["patches"],
            "rng_used": response["rng_used"],
            "score_labels": response["score_labels"],
            "outcome": _outcome_of(response, gate),
        }
        printed = keep_printed(response.get("printed"), answer_limits.printed_kept_chars)
        if printed:
            setup["printed"] = printed
        if options:
            setup["options"] = dict(options)
        match = cls(
            match_id=match_id,
            module_sha256=module_sha256,
            module_name=module_name,
            pool=pool,
            players=list(players),
            setup=setup,
            table=table,
            created_at=utc_now(),
            gate=gate,
            journal=journal,
            check_mirror=check_mirror,
            metadata=metadata,
            time_control=dict(time_control or {}),
            bots=dict(bots or {}),
            undo_enabled=undo,
        )
        match._take_outcome(response)
        _refuse_stuck(response, table.state["active_player_ids"], match_id, 0)
        if journal is not None:
            journal("setup", match.record())
        return match

    @classmethod
    def restore(
        cls,
        pool: GuestPool,
        *,
        match_id: str,
        module_sha256: str,
        module_name: str,
        players: Sequence[PlayerInfo],
        setup: SetupRecord,
        created_at: str,
        events: Iterable[tuple[str, Any]],
        journal: Journal | None = None,
        answer_limits: AnswerLimits = DEFAULT_ANSWER_LIMITS,
        metadata: GameMetadata = DEFAULT_METADATA,
        time_control: dict[str, Any] | None = None,
        ending: dict[str, Any] | None = None,
        bots: dict[PlayerId, str] | None = None,
    ) -> Match:
        """Rebuild a match from its recorded setup and events without re-running the game's moves.

        The state is the setup state plus every move's patches, with undos restoring the state
        their move started from. Scores and game over come from the record (format 2; the
        guest is never asked for a result again); only the current offers are asked of the
        guest, through the gate, and compared with the recorded digest. A format-1 record kept
        no results: then they are asked of the guest too, as before.

        Args:
            events: ``("move" | "undo", move)`` in version order (:meth:`ParsedRecord.events`).

        Raises:
            RecordError: the events are inconsistent, or the guest's offers differ from the
                recorded digest (the module is not deterministic).
            PatchError: a recorded patch does not fit (a corrupted record).
            GuestError: the guest failed answering for the current state.
        """
        ids = [p.player_id for p in players]
        table = Table(setup["state"])
        table.apply(setup["patches"])
        gate = Gate(ids, answer_limits)
        gate.state_bytes = len(table.snapshot())
        match = cls(
            match_id=match_id,
            module_sha256=module_sha256,
            module_name=module_name,
            pool=pool,
            players=list(players),
            setup=setup,
            table=table,
            created_at=created_at,
            gate=gate,
            journal=None,
            metadata=metadata,
            time_control=dict(time_control or {}),
            bots=dict(bots or {}),
        )
        outcomes: list[Outcome | None] = [setup.get("outcome")]
        for kind, move in events:
            if kind == "resign":
                match._commit_resignation(move)
            elif kind == "move":
                before = _Position(match.table.snapshot(), outcomes[-1], None) if move.undoable else None
                match._commit_move(move, before)
                outcomes.append(move.outcome)
            else:
                match._commit_undo(move)
                outcomes.pop()
        match.gate.state_bytes = len(match.table.snapshot())
        match._restore_outcome(outcomes[-1])
        if ending is not None:
            match._commit_ending(ending)
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

    @property
    def status(self) -> str:
        """``"active"`` while moves are accepted, ``"finished"`` after game over (by the rules, a
        resignation or a timeout), ``"aborted"`` after the admin aborted it."""
        if self.ending is not None and self.ending["ended_by"] == "aborted":
            return "aborted"
        return "finished" if self.game_over else "active"

    @property
    def result(self) -> MatchResult | None:
        """The result once the match ended (None while it runs); see :mod:`tablehost.results`."""
        if not self.game_over:
            return None
        ending = self.ending or {}
        return compute_result(
            [p.player_id for p in self.players],
            self.metadata.result,
            self.scores,
            self._ranks,
            ended_by=ending.get("ended_by", "normal"),
            player_id=ending.get("player_id"),
            resigned=[r["player_id"] for r in self.resignations],
            partners=journaled_partners([*self.resignations, self.ending]),
        )

    def partners_of(self, player_id: PlayerId) -> list[PlayerId]:
        """The seats that play together with ``player_id`` by the teams the game declares in the
        current state (``meta_data["teams"]``, :func:`tablehost.results.declared_teams`), in seat
        order, ``player_id`` left out; ``[]`` when it plays alone. A resignation or timeout
        journals them: they rank with the seat that gave up."""
        return declared_partners(self.state["meta_data"], self._seat_ids(), player_id)

    def view(self, viewer: Viewer) -> MatchView:
        """Return what ``viewer`` (a player id, or None for a spectator) may see now."""
        actions = [] if viewer is None else view_actions(self.state, viewer, self.actions_for(viewer))
        return MatchView(
            state=view_state(self.state, viewer),
            actions=actions,
            scores=visible_scores(self.scores, viewer),
            active_player_ids=[] if self.game_over else self.active_player_ids,
            game_over=self.game_over,
            version=self.version,
            status=self.status,
            result=self.result,
        )

    def record(self) -> dict[str, Any]:
        """The match record (:func:`tablehost.history.build_record`): everything replay needs.

        ``time_control``, ``bots``, ``resignations``, ``ending`` (how an early end happened) and
        ``result`` are added when the match has them (``result`` once it ended).
        """
        record = build_record(
            match_id=self.match_id,
            module_sha256=self.module_sha256,
            module_name=self.module_name,
            players=self.players,
            setup=self.setup,
            moves=self.history,
            created_at=self.created_at,
        )
        if self.time_control:
            record["time_control"] = dict(self.time_control)
        if self.bots:
            record["bots"] = {str(pid): name for pid, name in sorted(self.bots.items())}
        if self.resignations:
            record["resignations"] = [dict(r) for r in self.resignations]
        if self.ending is not None:
            record["ending"] = dict(self.ending)
        result = self.result
        if result is not None:
            record["result"] = result.to_json()
        return record

    # ----------------------------------------------------------------- early ends

    def resign(
        self,
        player_id: PlayerId,
        *,
        expected_version: int | None = None,
        partners: Sequence[PlayerId] | None = None,
    ) -> dict[str, Any]:
        """``player_id`` resigns, as the module's resign rule says (the version moves on by one).

        Rule ``ends`` (the default), or fewer than two other seats still playing: the match ends
        with ``ended_by = "resigned"`` and that seat last, its partners (:meth:`partners_of`)
        with it. Rule ``continue``: the others play on, the seat joins :attr:`resignations` (the
        host plays for it) and ranks last at the end, its partners as of now with it (they play
        on, but their side has lost).

        Args:
            player_id: the seat that resigns.
            expected_version: the version the caller saw; None skips the check.
            partners: the seats that fall with it. None (live play): :meth:`partners_of` now.
                Replay passes the record's own list (``[]`` for a resignation journaled before
                partners were), so the match is ranked as it was.

        Returns:
            ``{"seq", "ended_by", "player_id", "partners", "at"}`` for an ending, or ``{"seq",
            "player_id", "partners", "at"}`` for a resignation the others play on from.

        Raises:
            MatchOver: the game is over.
            NotYourTurn: ``player_id`` is not seated, or resigned already.
            StaleVersion: ``expected_version`` is not the current version.
        """
        if player_id not in {p.player_id for p in self.players}:
            raise NotYourTurn(f"player {player_id} is not seated", match_id=self.match_id, player_id=player_id)
        if player_id in self.resigned_ids:
            raise NotYourTurn(f"player {player_id} resigned already", match_id=self.match_id, player_id=player_id)
        playing = len(self.players) - len(self.resignations)
        if self.metadata.resign != "continue" or playing <= 2:
            return self.end("resigned", player_id, expected_version=expected_version, partners=partners)
        if self.game_over:
            raise MatchOver(f"match {self.match_id} is over", match_id=self.match_id)
        self._check_version(expected_version)
        resignation = {
            "seq": self.version + 1,
            "player_id": player_id,
            "partners": self.partners_of(player_id) if partners is None else list(partners),
            "at": utc_now(),
        }
        if self.journal is not None:
            self.journal("resign", resignation)
        self._commit_resignation(resignation)
        return resignation

    @property
    def resigned_ids(self) -> list[PlayerId]:
        """Seats that resigned while the others play on, in the order they resigned."""
        return [int(r["player_id"]) for r in self.resignations]

    def _commit_resignation(self, resignation: dict[str, Any]) -> None:
        if resignation.get("seq") != self.version + 1:
            from tablehost.errors import RecordError

            raise RecordError(f"the resignation {resignation} does not follow version {self.version}")
        self.resignations.append(dict(resignation))
        self._undo_chain.clear()
        self.version = int(resignation["seq"])  # the guest's next call misses this ref and gets the state

    def end(
        self,
        ended_by: str,
        player_id: PlayerId | None = None,
        *,
        expected_version: int | None = None,
        partners: Sequence[PlayerId] | None = None,
    ) -> dict[str, Any]:
        """End the match early (resign, timeout under ``forfeit``, abort); journaled first.

        Args:
            ended_by: ``"resigned"``, ``"timeout"`` or ``"aborted"``.
            player_id: the seat that resigned or timed out (None for an abort).
            expected_version: the version the caller saw; None skips the check.
            partners: as :meth:`resign`: the seats that fall with ``player_id`` (None: read
                from the game's teams now); unused for an abort.

        Returns:
            The ending ``{"seq", "ended_by", "player_id", "at"}``, with ``"partners"`` (the
            seats that fall with ``player_id``, :meth:`partners_of`) for resigned and timeout.

        Raises:
            ValueError: an unknown ``ended_by``.
            MatchOver: the game is over already.
            StaleVersion: ``expected_version`` is not the current version.
        """
        if ended_by not in END_REASONS or ended_by == "normal":
            raise ValueError(f"a match ends early by resigned, timeout or aborted, not {ended_by!r}")
        if self.game_over:
            raise MatchOver(f"match {self.match_id} is over", match_id=self.match_id)
        self._check_version(expected_version)
        ending: dict[str, Any] = {"seq": self.version + 1, "ended_by": ended_by, "player_id": player_id}
        if player_id is not None and ended_by in ("resigned", "timeout"):
            ending["partners"] = self.partners_of(player_id) if partners is None else list(partners)
        ending["at"] = utc_now()
        if self.journal is not None:
            self.journal("end", ending)
        self._commit_ending(ending)
        return ending

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
        by_host: bool = False,
    ) -> MoveRecord:
        """Apply ``action`` (guest addresses) for ``player_id``.

        Args:
            player_id: the acting player.
            action: exactly one of the actions offered to that player now; the platform's
                undo action is routed to :meth:`undo`.
            expected_version: the version the client saw; None skips the check.
            seed: the move's seed; None draws a fresh one (fixed only by replay and tests).
            view_action, picked: set by :meth:`submit_view_action`.
            by_host: the host plays this move for an absent seat (recorded as such).

        Returns:
            The new :class:`MoveRecord` (already in :attr:`history`).

        Raises:
            MatchOver, NotYourTurn, StaleVersion, NotOffered: in that order; nothing changes.
            GuestError: the game failed; nothing changes and the instance is discarded.
            PatchError: the game produced patches that do not fit; nothing changes.
        """
        if self.game_over:
            raise MatchOver(f"match {self.match_id} is over", match_id=self.match_id)
        if is_undo_action(action):
            return self.undo(player_id, expected_version=expected_version)
        self._check_turn(player_id, expected_version, by_host=by_host)
        for offer in self._actions.get(player_id, ()):  # a plain loop: no generator per move
            offered = offer["action"]
            if offered is action or offered == action:  # a bot passes the offered dict itself
                break
        else:
            raise NotOffered(
                f"action {orjson.dumps(action).decode()} was not offered to player {player_id}",
                match_id=self.match_id,
                player_id=player_id,
            )
        move_seed = draw_seed() if seed is None else seed
        next_ref = f"{self.match_id}:{self.version + 1}"
        answer = self.pool.step(
            self.state_ref,
            lambda: self.table.state,
            next_ref,
            player_id,
            action,
            move_seed,
            want_state=self.check_mirror,
        )
        try:
            return self._accept_move(player_id, action, move_seed, answer, view_action, picked, by_host)
        except BaseException:
            # Refused after the guest ran: what it cached under next_ref must never come back.
            self.pool.discard_ref(next_ref)
            raise

    def _accept_move(
        self,
        player_id: PlayerId,
        action: ActionDict,
        move_seed: Seed,
        answer: Any,
        view_action: ActionDict | None,
        picked: bool,
        by_host: bool,
    ) -> MoveRecord:
        """Gate, journal and apply the guest's answer to a move; raises (changing nothing) to refuse it."""
        response = self.gate.check_step(answer, self.table)  # also runs Table.check on the patches
        if self.metadata.result == "ranks":
            _check_ranks(response, self.metadata, self._seat_ids())
        active_after = self.table.state["active_player_ids"]
        for patch in response["patches"]:  # the last set_active_players wins (checked by the gate)
            if patch.get("op") == "set_active_players":
                active_after = patch["player_ids"]
        _refuse_stuck(response, active_after, self.match_id, self.version + 1)
        move = MoveRecord(
            seq=self.version + 1,
            player_id=player_id,
            action=action,
            seed=move_seed,
            patches=response["patches"],
            rng_used=response["rng_used"],
            allow_undo=response["allow_undo"],
            at=utc_now(),
            view_action=view_action,
            picked=picked,
            by_host=by_host,
            outcome=_outcome_of(response, self.gate),
            printed=keep_printed(response.get("printed"), self.gate.limits.printed_kept_chars),
        )
        if self.stamp_clocks is not None:
            move.clocks = self.stamp_clocks(move, active_after)
        if self.journal is not None:
            # Gate (patches checked), make durable, then apply: the apply cannot fail after
            # the check, and a failed journal write leaves the match as it was.
            self.journal("move", move.to_json())
        self._commit_move(move, self._position() if self.undo_enabled and move.undoable else None)
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
        if is_undo_action(view_action):
            return self.undo(player_id, expected_version=expected_version)
        self._check_turn(player_id, expected_version)
        action, picked = self.guest_action_for(player_id, view_action, pick_below=pick_below)
        return self.submit(player_id, action, seed=seed, view_action=view_action, picked=picked)

    def guest_action_for(
        self,
        player_id: PlayerId,
        view_action: ActionDict,
        *,
        pick_below: Callable[[int], int] | None = None,
    ) -> tuple[ActionDict, bool]:
        """The offered action (guest addresses) that ``view_action`` of ``player_id`` stands for,
        as :meth:`submit_view_action` resolves it, without submitting it.

        Args:
            player_id: the player whose view ``view_action`` addresses.
            view_action: an action in that view's addresses.
            pick_below: as :meth:`submit_view_action` (``secrets`` when None).

        Returns:
            ``(action, picked)``: the offered action, and whether the host picked among
            indistinguishable hidden pieces (pass both to :meth:`submit`, with
            ``view_action``).

        Raises:
            NotOffered: ``view_action`` matches nothing offered to ``player_id`` now.
        """
        choices: list[int] = []

        def pick(n: int) -> int:
            choices.append(n)
            return pick_below(n) if pick_below is not None else secrets.randbelow(n)

        action = resolve_view_action(self.state, player_id, view_action, self._actions.get(player_id, []), pick)
        return action, any(n > 1 for n in choices)

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
        live = self._last_live_move()
        if live is None:
            return "there is no move to take back"
        if not self.undo_enabled:
            return "this match keeps no undo (a bot game)"
        if live.player_id != player_id:
            # The same words whatever that move was: whether it revealed something or drew
            # randomness may depend on what this player cannot see.
            return "the last move was another player's"
        if self._undo_chain and self._undo_chain[-1][0] is live:
            # Whether undo is offered already tells the mover this much.
            return f"your move {live.seq} revealed hidden information"
        return self._why_no_chain(live)

    def undo(self, player_id: PlayerId, *, expected_version: int | None = None) -> MoveRecord:
        """Take back ``player_id``'s newest move; the state, log included, is restored exactly.

        Returns:
            The move taken back (now ``undone``, with ``undo_seq`` = the new version).

        Raises:
            MatchOver: the game is over.
            StaleVersion: ``expected_version`` is not the current version.
            NothingToUndo: no move is in force (none played yet, or all taken back).
            UndoRefused: with the part of platform rule 3 that refused it.
        """
        if self.game_over:
            raise MatchOver(f"match {self.match_id} is over", match_id=self.match_id)
        self._check_version(expected_version)
        reason = self.undo_refusal(player_id)
        if reason is not None:
            kind = NothingToUndo if self._last_live_move() is None else UndoRefused
            raise kind(f"undo refused: {reason}", match_id=self.match_id, player_id=player_id)
        move, before = self._undo_chain[-1]
        payload = {"seq": move.seq, "undo_seq": self.version + 1, "at": utc_now()}
        if self.journal is not None:
            self.journal("undo", payload)
        self.pool.discard_ref(self.state_ref)
        self._commit_undo(move)
        if before.actions is None:
            self._restore_outcome(before.outcome)
        else:
            assert before.outcome is not None
            self.scores, self.game_over = before.outcome["scores"], before.outcome["game_over"]
            self._actions = before.actions
        return move

    # ----------------------------------------------------------------- internals

    def _check_turn(self, player_id: PlayerId, expected_version: int | None, *, by_host: bool = False) -> None:
        """Platform rule 1 (only an active player acts; a seat that resigned while the others
        play on acts only through the host), then the client's version."""
        if not by_host and self.resignations and player_id in self.resigned_ids:
            raise NotYourTurn(
                f"player {player_id} resigned; the host plays that seat", match_id=self.match_id, player_id=player_id
            )
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

    def _seat_ids(self) -> list[PlayerId]:
        """The seated player ids in seat order."""
        return [p.player_id for p in self.players]

    def _position(self) -> _Position:
        outcome: Outcome = {"scores": self.scores, "game_over": self.game_over, "offers_sha256": ""}
        return _Position(self.table.snapshot(), outcome, self._actions)

    def _commit_move(self, move: MoveRecord, before: _Position | None) -> None:
        """Apply a move's patches and bookkeeping (shared by live play and resume).

        The patches apply all or none (:meth:`Table.apply`). An undoable move is then judged
        for a reveal by comparing the state before it with the state after it under the viewer
        rule (:class:`tablehost.reveal.RevealCheck`: only what the patches touch is read; a
        whole-state comparison of ``before.snapshot`` with :func:`tablehost.reveal.reveals`
        when the patches hold an op it does not know).

        Raises:
            PatchError: a patch does not fit; the state is as it was.
        """
        judge = before is not None and move.undoable
        check = RevealCheck.before(self.table, move.patches, self._seat_ids()) if judge else None
        self.table.apply(move.patches)
        if check is not None:
            move.revealed = check.revealed(self.table)
        elif judge:
            assert before is not None
            earlier = orjson.loads(before.snapshot)
            move.revealed = reveals(earlier, self.table.state, self._seat_ids())
        self.history.append(move)
        self.version = move.seq
        if self._undo_chain and self._undo_chain[-1][0].player_id != move.player_id:
            self._undo_chain.clear()
        if before is not None and move.undoable:
            self._undo_chain.append((move, before))
        else:
            self._undo_chain.clear()

    def _commit_undo(self, move: MoveRecord) -> None:
        if not self._undo_chain or self._undo_chain[-1][0].seq != move.seq:
            raise RecordError(f"undo of move {move.seq} does not follow an undoable move")
        _, before = self._undo_chain.pop()
        self.table = Table.restore(before.snapshot)
        move.undone = True
        self.version += 1
        move.undo_seq = self.version

    def _last_live_move(self) -> MoveRecord | None:
        for move in reversed(self.history):
            if not move.undone:
                return move
        return None

    @staticmethod
    def _why_no_chain(last: MoveRecord) -> str:
        """Why the mover's own newest move cannot come back (only what the mover knows of it)."""
        if last.rng_used or last.picked:
            return f"your move {last.seq} drew randomness"
        if not last.allow_undo:
            return f"your move {last.seq} did not allow undo"
        return f"another player acted after your move {last.seq}"

    def _commit_ending(self, ending: dict[str, Any]) -> None:
        """Apply an early end (live or on resume): nobody acts any more; the version moves on."""
        if ending.get("seq") != self.version + 1 or ending.get("ended_by") not in END_REASONS:
            from tablehost.errors import RecordError

            raise RecordError(f"the ending {ending} does not follow version {self.version}")
        self.ending = dict(ending)
        self.game_over = True
        self._actions = {}
        self._undo_chain.clear()
        self.version = int(ending["seq"])

    def _take_outcome(self, response: SetupAnswer | StepAnswer) -> None:
        """Take scores, game over, offers and ranks from an answer that passed the gate (and
        :func:`_check_ranks`)."""
        self.scores = response["scores"]
        self.game_over = response["game_over"]
        # The gate checked every list's shape; one cast of the whole map, not a call per player.
        actions = cast("dict[str, list[AvailableActionDict]]", response["actions"])
        self._actions = {int(pid): acts for pid, acts in actions.items()}
        self._ranks = self._checked_ranks(self.game_over, response.get("ranks")) if self.game_over else None

    def _checked_ranks(self, game_over: bool, ranks: Any) -> dict[int, int] | None:
        """The game's ranks when it is over and its result rule is ``ranks``, else None."""
        if game_over and ranks is not None and self.metadata.result == "ranks":
            return check_ranks(ranks, [p.player_id for p in self.players])
        return None

    def _restore_outcome(self, outcome: Outcome | None) -> None:
        """Set the current result from the record and ask the guest for the current offers only.

        With no recorded outcome (a format-1 record) the result is asked of the guest too.

        Raises:
            RecordError: the offers differ from the recorded digest.
            GuestError: the guest failed, or its answer did not pass the gate.
        """
        get_state = lambda: self.table.state
        if outcome is None:
            over = self.gate.check_game_over(self.pool.game_over(self.state_ref, get_state))
            _check_ranks(dict(over), self.metadata, [p.player_id for p in self.players])
            scores, game_over, ranks = over["scores"], over["game_over"], over.get("ranks")
        else:
            scores, game_over, ranks = outcome["scores"], outcome["game_over"], outcome.get("ranks")
        actions: dict[int, list[AvailableActionDict]] = {}
        if not game_over:
            for pid in self.table.state["active_player_ids"]:
                offers = self.pool.actions(self.state_ref, get_state, pid)
                self.gate.check_actions({"actions": offers}, self.table)
                if offers:
                    actions[pid] = offers
        recorded = outcome.get("offers_sha256") if outcome is not None else None
        if recorded and offers_digest(actions) != recorded:
            raise RecordError(
                f"match {self.match_id}: the module now offers other actions at version {self.version} "
                "than it did when the move was made (it is not deterministic)"
            )
        self.scores, self.game_over, self._actions = scores, game_over, actions
        self._ranks = self._checked_ranks(game_over, ranks)

    def _compare_mirror(self, response: StepAnswer) -> None:
        guest_state = response.get("state")
        if guest_state is None:
            raise GuestProtocolError("step was asked for its state (want_state) but sent none")
        if canonical_json(normalize_state(guest_state)) != canonical_json(self.table.state):
            raise GuestProtocolError(
                f"host state differs from the guest's after move {self.version}",
                match_id=self.match_id,
            )


def _check_ranks(response: Mapping[str, Any], metadata: GameMetadata, player_ids: list[PlayerId]) -> None:
    """A game whose result rule is ``ranks`` must send valid ranks with ``game_over``.

    Raises:
        GuestProtocolError: the ranks are missing or malformed (nothing has changed yet).
    """
    if metadata.result != "ranks" or not response.get("game_over"):
        return
    if "ranks" not in response:
        raise GuestProtocolError("the game's result rule is 'ranks' but it sent none with game_over", op="ranks")
    check_ranks(response["ranks"], player_ids)



def _refuse_stuck(response: SetupAnswer | StepAnswer, active: list[PlayerId], match_id: str, version: int) -> None:
    """Refuse an answer (nothing journaled or applied) that leaves the game not over with no
    active player offered anything: no one could ever move again.

    Args:
        response: the answer, past the gate.
        active: the active player ids the answer leaves.
        version: the version the answer would make.

    Raises:
        StuckGame: ``match/stuck``, a fault of the game.
    """
    if response["game_over"]:
        return
    actions = response["actions"]
    if not any(actions.get(str(pid)) for pid in active):
        raise StuckGame(
            f"the game is not over but offers no active player ({active}) an action at version {version}: "
            "no one could move again, so the game's answer is refused",
            match_id=match_id,
        )


def _outcome_of(response: SetupAnswer | StepAnswer, gate: Gate) -> Outcome:
    """The journaled result of an answer that passed ``gate`` (offers by digest, empty lists dropped)."""
    outcome: Outcome = {
        "scores": response["scores"],
        "game_over": response["game_over"],
        "offers_sha256": gate.offers_digest(response["actions"]),
    }
    ranks = response.get("ranks")
    if response["game_over"] and isinstance(ranks, dict):
        outcome["ranks"] = ranks
    return outcome
