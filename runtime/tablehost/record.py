"""Match records: reading them, resuming a match from one, and replay.

A record (format ``tablehost.record/2``, docs/architecture.md) holds the module's sha256,
the players, the setup seed and result, and every move with its seed, patches and the
result after it (scores, game over, a digest of the offers). Replay re-executes setup and
every move in a fresh guest with the recorded seeds and reports the first version whose
patches or result differ; :func:`state_at` rebuilds the state at any version from the
patches alone, without running the game.

A record written by ``tablehost play --record`` for a game that failed holds the moves
accepted before the failure and a ``failure`` member (:class:`~tablehost.history.FailureRecord`);
replay re-executes the move that failed and reports whether it fails the same way.

Format 1 records (``tablehost.record/1``, which kept no results) are still read: they
resume (results asked of the guest, as before) and replay, and replay says that it could
not compare results (:attr:`ReplayResult.results_compared` is false).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from tablehost.errors import GuestError, MatchError, MatchOver, RecordError, TablehostError
from tablehost.history import (
    RECORD_FORMAT,
    RECORD_FORMAT_1,
    FailureRecord,
    MoveRecord,
    Outcome,
    PlayerInfo,
    SetupRecord,
)
from tablehost.match import Journal, Match
from tablehost.metadata import GameMetadata, read_metadata
from tablehost.results import END_REASONS
from tablehost.table import Table, apply_patches, canonical_json, normalize_state
from tablehost.types import PlayerId, StateDict, Viewer
from tablehost.view import view_state

if TYPE_CHECKING:  # the pool is used through its methods only (tests use a Python fake)
    from tablehost.guest import GuestPool


@dataclass
class ParsedRecord:
    """A validated record.

    Attributes:
        match_id, module_sha256, module_name, created_at: as recorded.
        players: the seats in seat order.
        setup: ``{"seed", "state", "patches", "rng_used", "score_labels", "outcome"?, "printed"?,
            "options"?}``.
        moves: every move ever accepted, undone ones included, in ``seq`` order.
        ending: how the match ended early (``{"seq", "ended_by", "player_id", "at"}``), or None.
        format: the record's format (:data:`RECORD_FORMAT` or :data:`RECORD_FORMAT_1`).
        failure: how the game failed after its last event (a ``play --record`` of a failed
            game), or None.
    """

    match_id: str
    module_sha256: str
    module_name: str
    players: list[PlayerInfo]
    setup: SetupRecord
    moves: list[MoveRecord]
    created_at: str
    ending: dict[str, Any] | None = None
    time_control: dict[str, Any] = field(default_factory=dict)
    bots: dict[PlayerId, str] = field(default_factory=dict)
    """Seats the server plays itself: player id -> bot name."""
    resignations: list[dict[str, Any]] = field(default_factory=list)
    """Seats that resigned while the others played on (resign rule ``continue``):
    ``[{"seq", "player_id", "at"}]``, each taking one version."""
    format: str = RECORD_FORMAT
    failure: FailureRecord | None = None
    result: dict[str, Any] | None = None
    """The result the record was written with (``{"ranks", "winners", "ended_by",
    "player_id"}``), or None when it has none (the match had not ended)."""

    @property
    def has_results(self) -> bool:
        """The record kept every version's result (format 2); format 1 did not."""
        return self.format == RECORD_FORMAT

    @property
    def version(self) -> int:
        """The version after the last event: moves plus undos, plus one for an early ending."""
        return self.move_version + (1 if self.ending is not None else 0)

    @property
    def move_version(self) -> int:
        """The version after the last move, undo or resignation."""
        return len(self.moves) + sum(1 for m in self.moves if m.undone) + len(self.resignations)

    def events(self) -> Iterator[tuple[str, Any]]:
        """Yield ``("move", m)``, ``("undo", m)`` (MoveRecords) and ``("resign", {"seq",
        "player_id", "at"})`` in version order (1, 2, ...)."""
        by_version: dict[int, tuple[str, Any]] = {int(r["seq"]): ("resign", r) for r in self.resignations}
        for move in self.moves:
            by_version[move.seq] = ("move", move)
            if move.undone:
                if move.undo_seq is None:
                    raise RecordError(f"move {move.seq} is undone but has no undo_seq")
                by_version[move.undo_seq] = ("undo", move)
        for version in range(1, self.move_version + 1):
            if version not in by_version:
                raise RecordError(f"the record has no event for version {version}")
            yield by_version[version]


def parse_record(data: dict[str, Any] | bytes | str) -> ParsedRecord:
    """Validate a record given as a dict or JSON text.

    Raises:
        RecordError: not JSON, an unknown format, or a missing or malformed field; the
            message names the field (``moves[3].seed``) and what was expected.
    """
    if isinstance(data, (bytes, str)):
        try:
            data = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise RecordError(f"the record is not JSON: {exc}") from exc
    record = _expect(data, dict, "the record")
    form = record.get("format")
    if form not in (RECORD_FORMAT, RECORD_FORMAT_1):
        raise RecordError(
            f"unknown record format {form!r}; this host reads {RECORD_FORMAT!r} and {RECORD_FORMAT_1!r}"
        )
    with_results = form == RECORD_FORMAT
    module = _field(record, "module", dict)
    players = [
        PlayerInfo.from_json(_player(p, f"players[{i}]"))
        for i, p in enumerate(_field(record, "players", list))
    ]
    ids = [p.player_id for p in players]
    if not players or len(set(ids)) != len(ids):
        raise RecordError("players must be a non-empty list with unique player ids")
    setup = _field(record, "setup", dict)
    _seed(_field(setup, "seed", int, "setup"), "setup.seed")
    _field(setup, "state", dict, "setup")
    _field(setup, "patches", list, "setup")
    if with_results:
        _outcome(_field(setup, "outcome", dict, "setup"), "setup.outcome")
    moves = []
    for i, raw in enumerate(_field(record, "moves", list)):
        where = f"moves[{i}]"
        move = _expect(raw, dict, where)
        for key, kind in (
            ("seq", int),
            ("player_id", int),
            ("seed", int),
            ("action", dict),
            ("patches", list),
            ("rng_used", bool),
            ("allow_undo", bool),
        ):
            _field(move, key, kind, where)
        _seed(move["seed"], f"{where}.seed")
        if move["player_id"] not in ids:
            raise RecordError(f"{where}.player_id {move['player_id']} is not one of the players {ids}")
        if with_results:
            _outcome(_field(move, "outcome", dict, where), f"{where}.outcome")
        moves.append(MoveRecord.from_json(move))
    ending = record.get("ending")
    if ending is not None:
        _expect(ending, dict, "ending")
        _field(ending, "seq", int, "ending")
        if ending.get("ended_by") not in ("resigned", "timeout", "aborted"):
            raise RecordError(f"ending.ended_by {ending.get('ended_by')!r} is not resigned, timeout or aborted")
        _ending_seat(ending, ids)
        _partners(ending, ids, "ending")
    options = setup.get("options", {})
    _expect(options, dict, "setup.options")
    resignations = _expect(record.get("resignations", []), list, "resignations")
    for i, item in enumerate(resignations):
        _field(_expect(item, dict, f"resignations[{i}]"), "seq", int, f"resignations[{i}]")
        if _field(item, "player_id", int, f"resignations[{i}]") not in ids:
            raise RecordError(f"resignations[{i}].player_id is not one of the players {ids}")
        _partners(item, ids, f"resignations[{i}]")
    bots = _parse_bots(record.get("bots", {}), ids)
    failure = _failure(record.get("failure"), ids, ending is not None)
    result = _result(record.get("result"), ids)
    if failure is not None and result is not None:
        raise RecordError("a record with a failure holds no result: the game failed before it ended")
    parsed = ParsedRecord(
        match_id=str(_field(record, "match_id", str)),
        module_sha256=str(_field(module, "sha256", str, "module")),
        module_name=str(module.get("name", "")),
        players=players,
        setup=setup,
        moves=sorted(moves, key=lambda m: m.seq),
        created_at=str(record.get("created_at", "")),
        ending=ending,
        time_control=dict(_expect(record.get("time_control", {}), dict, "time_control")),
        bots=bots,
        resignations=list(resignations),
        format=form,
        failure=failure,
        result=result,
    )
    if failure is not None and failure.version != parsed.version:
        raise RecordError(f"failure.version {failure.version} is not the record's version {parsed.version}")
    return parsed


def _ending_seat(ending: dict[str, Any], ids: list[int]) -> None:
    """An ending's ``player_id`` checked as :meth:`Match.end` journals it: the seated player that
    resigned or timed out, null for an abort (the admin's, no seat's)."""
    ended_by, player = ending["ended_by"], ending.get("player_id")
    if ended_by == "aborted" and player is not None:
        raise RecordError("ending.player_id must be null for an abort (the admin aborts, no seat)")
    if ended_by != "aborted" and (type(player) is not int or player not in ids):
        did = "timed out" if ended_by == "timeout" else "resigned"
        raise RecordError(f"ending.player_id must name the seat that {did}, one of the players {ids}")


def _partners(event: dict[str, Any], ids: list[int], where: str) -> None:
    """An ending's or resignation's ``partners`` checked when present: a list of distinct
    seated ids, without the seat itself (absent in events journaled before partners were)."""
    if "partners" not in event:
        return
    partners = _expect(event["partners"], list, f"{where}.partners")
    for pid in partners:
        if isinstance(pid, bool) or not isinstance(pid, int) or pid not in ids or pid == event.get("player_id"):
            raise RecordError(f"{where}.partners names {str(pid)[:20]}, not another of the players {ids}")
    if len(set(partners)) != len(partners):
        raise RecordError(f"{where}.partners names a seat twice")


def _result(raw: Any, ids: list[int]) -> dict[str, Any] | None:
    """The record's ``result`` checked in shape (None when absent): ``ranks`` keyed by seated
    ids, ``winners`` a list, ``ended_by`` a string. Replay compares it with its own result."""
    if raw is None:
        return None
    result = _expect(raw, dict, "result")
    ranks = _field(result, "ranks", dict, "result")
    seated = {str(pid) for pid in ids}
    for key, rank in ranks.items():
        if key not in seated:
            raise RecordError(f"result.ranks names a seat that is not one of the players {ids}: {key[:20]!r}")
        _expect(rank, int, f"result.ranks.{key}")
    for i, winner in enumerate(_field(result, "winners", list, "result")):
        if _expect(winner, int, f"result.winners[{i}]") not in ids:
            raise RecordError(f"result.winners[{i}] {winner} is not one of the players {ids}")
    if _field(result, "ended_by", str, "result") not in END_REASONS:
        raise RecordError(f"result.ended_by {result['ended_by'][:40]!r} is not one of {', '.join(END_REASONS)}")
    if result.get("player_id") is not None:
        _expect(result["player_id"], int, "result.player_id")
    return dict(result)


def _failure(raw: Any, ids: list[int], ended: bool) -> FailureRecord | None:
    """The record's ``failure`` member checked (None when absent): the fields of
    :class:`FailureRecord`, its ``move`` None or a move of a seated player with a 64-bit seed."""
    if raw is None:
        return None
    if ended:
        raise RecordError("a record with an ending holds no failure: the match ended before anything failed")
    failure = _expect(raw, dict, "failure")
    _field(failure, "version", int, "failure")
    _field(failure, "code", str, "failure")
    _field(failure, "message", str, "failure")
    for key in ("op", "printed", "at"):
        _expect(failure.get(key, ""), str, f"failure.{key}")
    if failure.get("budget") is not None:
        _expect(failure["budget"], str, "failure.budget")
    move = failure.get("move")
    if move is not None:
        _expect(move, dict, "failure.move")
        if _field(move, "player_id", int, "failure.move") not in ids:
            raise RecordError(f"failure.move.player_id {move['player_id']} is not one of the players {ids}")
        _field(move, "action", dict, "failure.move")
        _seed(_field(move, "seed", int, "failure.move"), "failure.move.seed")
        _expect(move.get("picked", False), bool, "failure.move.picked")
        if move.get("view_action") is not None:
            _expect(move["view_action"], dict, "failure.move.view_action")
    return FailureRecord.from_json(failure)


def _parse_bots(raw: Any, ids: list[int]) -> dict[PlayerId, str]:
    """The record's ``bots`` (``{"<pid>": name}``): every key a seated id, every name a known bot."""
    from tablehost.bots import make_bot

    bots: dict[PlayerId, str] = {}
    for key, name in _expect(raw, dict, "bots").items():
        if not (isinstance(key, str) and key.isdigit() and int(key) in ids):
            raise RecordError(f"bots names {str(key)[:20]!r}, not one of the players {ids}")
        if not isinstance(name, str):
            raise RecordError(f"bots.{key} must be a JSON string")
        try:
            make_bot(name)
        except ValueError as exc:
            raise RecordError(f"bots.{key}: {exc}") from exc
        bots[int(key)] = name
    return bots


def _outcome(outcome: dict[str, Any], where: str) -> Outcome:
    _field(outcome, "scores", dict, where)
    _field(outcome, "game_over", bool, where)
    _field(outcome, "offers_sha256", str, where)
    return outcome  # type: ignore[return-value]


def resume_match(
    pool: GuestPool,
    record: dict[str, Any] | ParsedRecord,
    journal: Journal | None = None,
    metadata: GameMetadata | None = None,
) -> Match:
    """Rebuild a live match from its record (see :meth:`Match.restore`); ``metadata`` is the
    module's checked metadata (asked of the module when None).

    Raises:
        RecordError: the record is malformed, or the module's offers differ from the record.
        PatchError: a recorded patch does not fit (a corrupted record).
        GuestError: the guest failed answering for the current state.
    """
    parsed = record if isinstance(record, ParsedRecord) else parse_record(record)
    if metadata is None:
        metadata = read_metadata(pool)
    return Match.restore(
        pool,
        match_id=parsed.match_id,
        module_sha256=parsed.module_sha256,
        module_name=parsed.module_name,
        players=parsed.players,
        setup=parsed.setup,
        created_at=parsed.created_at,
        events=parsed.events(),
        journal=journal,
        metadata=metadata,
        time_control=parsed.time_control,
        ending=parsed.ending,
        bots=parsed.bots,
    )


def _expect(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RecordError(f"{where} must be a JSON {_JSON_NAMES[kind]}, got {type(value).__name__}")
    return value


def _field(obj: dict[str, Any], key: str, kind: type, where: str = "") -> Any:
    path = f"{where}.{key}" if where else key
    if key not in obj:
        raise RecordError(f"the record lacks {path}")
    return _expect(obj[key], kind, path)


def _seed(value: int, where: str) -> None:
    if not 0 <= value < 2**64:
        raise RecordError(f"{where} {value} is not a 64-bit unsigned seed")


def _player(value: Any, where: str) -> dict[str, Any]:
    player = _expect(value, dict, where)
    pid = _field(player, "player_id", int, where)
    if not 0 <= pid < 2**32:
        raise RecordError(f"{where}.player_id {pid} is not an unsigned 32-bit id")
    return player


_JSON_NAMES = {dict: "object", list: "array", int: "integer", str: "string", bool: "boolean"}


def load_record(path: str | Path) -> ParsedRecord:
    """Read and validate a record file. Raises ``RecordError`` (also for an unreadable file)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise RecordError(f"cannot read record {path}: {exc.strerror}") from exc
    return parse_record(raw)


def state_at(record: ParsedRecord, version: int | None = None) -> StateDict:
    """Rebuild the state after ``version`` events (default: the last) from patches alone.

    Raises:
        RecordError: ``version`` is out of range (0..record.version) or the events are inconsistent.
        PatchError: a recorded patch does not fit.
    """
    last = record.version if version is None else version
    if not 0 <= last <= record.version:
        raise RecordError(f"version {last} is out of range 0..{record.version}")
    last = min(last, record.move_version)  # an ending changes no state
    state = normalize_state(orjson.loads(orjson.dumps(record.setup["state"])))
    apply_patches(state, record.setup["patches"])
    table = Table(state)
    starts: dict[int, bytes] = {}
    for number, (kind, move) in enumerate(record.events(), start=1):
        if number > last:
            break
        if kind == "resign":
            continue
        if kind == "move":
            if move.undone:
                starts[move.seq] = table.snapshot()
            table.apply(move.patches)
        else:
            table = Table.from_snapshot(starts.pop(move.seq))
    return table.state


def view_at(record: ParsedRecord, version: int | None, viewer: Viewer) -> dict[str, Any]:
    """The view ``viewer`` (player id or None for a spectator) had after ``version`` events."""
    return view_state(state_at(record, version), viewer)


@dataclass
class ReplayResult:
    """The outcome of :func:`replay`.

    Attributes:
        ok: every event reproduced exactly.
        events: how many events were re-executed successfully.
        first_difference: the version of the first event that differed, or None.
        detail: a sentence describing the difference.
        final_state: the state replay ended in.
        results_compared: scores, game over and offers were compared too (false for a
            format-1 record, which kept no results).
        result_checked: the record's top-level ``result`` was compared with the replayed
            match's result (false when the record has none).
        failure_rerun: for a record with a ``failure``, the move that failed was re-executed
            and failed the same way (:meth:`FailureRecord.same_failure`), or, for a game that
            offered no one anything, it is stuck again; false when the failure happened outside
            a move (a search bot's ``search``), which replay does not run. False for a record
            without a failure.
    """

    ok: bool
    events: int
    first_difference: int | None = None
    detail: str = ""
    final_state: StateDict = field(default_factory=dict)
    results_compared: bool = True
    failure_rerun: bool = False
    result_checked: bool = False


def replay(record: ParsedRecord, pool: GuestPool) -> ReplayResult:
    """Re-execute ``record`` in ``pool`` (use a fresh pool) with its recorded seeds.

    Every answer passes the gate as in live play. Setup must reproduce the recorded config
    state, prepare patches and result; each move must be offered again and reproduce its
    patches, ``rng_used``, ``allow_undo`` and result (scores, game over, the offers' digest);
    each undo must be allowed again. A format-1 record kept no results: they are not
    compared (``results_compared`` false). A resignation or early ending is applied again (an
    ending by resignation through :meth:`Match.resign`: the module's resign rule must make it
    end the match; none after game over); the partners journaled with it must be the ones the game's teams give its seat then (one
    journaled without partners, before the host ranked partners together, is applied as it was:
    its seat alone). The result the record was written with (``result``), when it has one, must
    be the one replay derives. A record's ``failure`` must happen again after the
    last event (:func:`_replay_failure`): its version is then the one reported on a difference.

    Raises:
        RecordError: the record is inconsistent in itself.
    """
    compared = record.has_results
    try:
        match = Match.start(
            pool,
            record.players,
            match_id=f"replay-{record.match_id}",
            module_sha256=record.module_sha256,
            seed=int(record.setup["seed"]),
            options=record.setup.get("options") or None,
            metadata=read_metadata(pool),
        )
        match.time_control = dict(record.time_control)
    except GuestError as exc:
        return ReplayResult(False, 0, 0, f"setup failed in the guest: {exc}", results_compared=compared)
    if canonical_json(match.setup["state"]) != canonical_json(record.setup["state"]):
        return ReplayResult(False, 0, 0, "setup produced a different config state", results_compared=compared)
    if canonical_json(match.setup["patches"]) != canonical_json(record.setup["patches"]):
        return ReplayResult(
            False, 0, 0, "setup produced different prepare patches", results_compared=compared
        )
    if compared:
        differs = _outcome_difference(match.setup["outcome"], record.setup["outcome"])
        if differs:
            return ReplayResult(
                False, 0, 0, f"setup produced a different {differs}", results_compared=compared
            )
    done = 0
    for kind, move in record.events():
        version = done + 1
        try:
            if kind == "resign":
                differs = _partners_difference(match, move, f"the resignation at version {version}")
                if differs:
                    return ReplayResult(False, done, version, differs, match.state, compared)
                match.resign(move["player_id"], partners=move.get("partners", []))
                done += 1
                continue
            if kind == "undo":
                match.undo(move.player_id)
                done += 1
                continue
            again = match.submit(
                move.player_id, move.action, seed=move.seed, picked=move.picked, by_host=move.by_host
            )
        except (MatchError, TablehostError) as exc:
            return ReplayResult(
                False, done, version, f"{kind} {move.seq} was refused: {exc}", match.state, compared
            )
        for name in ("patches", "rng_used", "allow_undo"):
            if canonical_json(getattr(again, name)) != canonical_json(getattr(move, name)):
                return ReplayResult(
                    False, done, version, f"move {move.seq} produced different {name}", match.state, compared
                )
        if compared and again.outcome is not None and move.outcome is not None:
            differs = _outcome_difference(again.outcome, move.outcome)
            if differs:
                return ReplayResult(
                    False,
                    done,
                    version,
                    f"move {move.seq} produced a different {differs}",
                    match.state,
                    compared,
                )
        done += 1
    if record.ending is not None:
        ending = record.ending
        if ending["seq"] != done + 1:
            return ReplayResult(
                False, done, done + 1, f"the ending is at version {ending['seq']}, not {done + 1}", match.state, compared
            )
        differs = _partners_difference(match, ending, "the ending")
        if differs:
            return ReplayResult(False, done, done + 1, differs, match.state, compared)
        differs = _replay_ending(match, ending)
        if differs:
            return ReplayResult(False, done, done + 1, differs, match.state, compared)
        done += 1
    differs = _result_difference(match, record)
    if differs:
        return ReplayResult(False, done, done, differs, match.state, compared)
    checked = record.result is not None
    if record.failure is None:
        return ReplayResult(True, done, final_state=match.state, results_compared=compared, result_checked=checked)
    differs = _replay_failure(match, record.failure)
    if differs:
        return ReplayResult(False, done, done + 1, differs, match.state, compared)
    rerun = record.failure.move is not None or record.failure.code == "match/stuck"
    return ReplayResult(True, done, final_state=match.state, results_compared=compared, failure_rerun=rerun)


def _replay_failure(match: Match, failure: FailureRecord) -> str:
    """Re-execute a record's ``failure`` on ``match`` (replayed up to it).

    The move that failed is submitted again with its seed; it must fail the same way
    (:meth:`FailureRecord.same_failure`). A ``match/stuck`` outside a move must find the game
    stuck again: not over, no active player offered anything. Any other failure outside a move
    (a search bot's call) is not re-run.

    Returns:
        ``""`` when the failure happened again (or was not re-run), else a sentence saying how
        replay differed.
    """
    if failure.move is None:
        if failure.code != "match/stuck":
            return ""
        active = match.state["active_player_ids"]
        offered = [pid for pid in active if any(a.get("intent") != "undo" for a in match.actions_for(pid))]
        if match.game_over or offered:
            return f"the game was stuck at version {failure.version}, but replay offers players {offered} an action"
        return ""
    tried = failure.move
    try:
        match.submit(
            int(tried["player_id"]),
            tried["action"],
            seed=int(tried["seed"]),
            view_action=tried.get("view_action"),
            picked=bool(tried.get("picked", False)),
        )
    except TablehostError as exc:
        again = FailureRecord.of(exc, match.version, tried, limit=match.gate.limits.printed_kept_chars)
        if failure.same_failure(again):
            return ""
        hint = ""
        if failure.budget == "wall_ms":
            hint = " (a wall_ms budget depends on the machine; replay widens the wall clock, fuel decides)"
        elif failure.budget is not None:
            hint = " (replay with the budgets the game was played with, e.g. the same --fuel)"
        return (
            f"the move that failed at version {failure.version} failed differently: recorded "
            f"{failure.code} {failure.message[:500]!r}, replay {again.code} {again.message[:500]!r}{hint}"
        )
    hint = " (a wall_ms budget depends on the machine; replay widens the wall clock)" if failure.budget == "wall_ms" else ""
    return f"the move that failed at version {failure.version} ({failure.code}) was accepted on replay{hint}"


def _replay_ending(match: Match, ending: dict[str, Any]) -> str:
    """Apply a record's ``ending`` to ``match`` (replayed up to it) as the server made it: a
    resignation through :meth:`Match.resign`, so the module's resign rule must make it end the
    match; a timeout or an abort through :meth:`Match.end`. The journaled partners are used as
    they are (:func:`_partners_difference` checked them).

    Returns:
        ``""`` when the ending applies, else a sentence saying why it does not (the game was
        over already, the resign rule lets the others play on, the seat could not resign).
    """
    ended_by, player = ending["ended_by"], ending.get("player_id")
    partners = ending.get("partners", [])
    if match.game_over:
        return "the record ends the match early, but replay found the game over already"
    try:
        if ended_by == "resigned":
            taken = match.resign(int(ending["player_id"]), partners=partners)
            if "ended_by" not in taken:
                return (
                    f"the record ends the match by player {player}'s resignation, but the game's resign rule "
                    "lets the others play on (a resignation, not an ending)"
                )
        else:
            match.end(ended_by, player, partners=partners)
    except MatchOver:
        return "the record ends the match early, but replay found the game over already"
    except TablehostError as exc:
        return f"the record's ending ({ended_by}) at version {ending['seq']} was refused: {exc}"
    return ""


def _partners_difference(match: Match, event: dict[str, Any], what: str) -> str:
    """How the partners ``match`` gives a recorded resignation's or ending's seat now differ
    from the ones the record journaled with it, or ``""`` (also when the record journaled none:
    it was written before partners were, and its seat is ranked alone, as it was then)."""
    if "partners" not in event or event.get("player_id") is None:
        return ""
    again = match.partners_of(int(event["player_id"]))
    if sorted(again) != sorted(event["partners"]):
        return (
            f"{what} of player {event['player_id']} journaled partners {event['partners']}, "
            f"but the game's teams give {again}"
        )
    return ""


def _result_difference(match: Match, record: ParsedRecord) -> str:
    """How the result replay derived differs from the one the record was written with, or
    ``""`` (also when the record has none)."""
    if record.result is None:
        return ""
    again = match.result
    if again is None:
        return (
            f"the record has a result ({record.result['ended_by']}), but the replayed match has not ended: "
            f"the game is not over after its {match.version} events"
        )
    derived = again.to_json()
    if canonical_json(derived) != canonical_json(record.result):
        hint = ""
        if derived["ended_by"] != record.result["ended_by"]:
            events = f"its ending says {record.ending['ended_by']}" if record.ending is not None else "it has no ending"
            hint = (
                f" (the record's result says ended_by {record.result['ended_by']}, its events end it "
                f"{derived['ended_by']}: a resignation, timeout or abort is recorded as the record's ending, "
                f"and {events})"
            )
        return (
            f"the result differs: replay ranks {canonical_json(derived)[:300].decode()}, "
            f"the record {canonical_json(record.result)[:300].decode()}{hint}"
        )
    return ""


def _outcome_difference(again: Outcome, recorded: Outcome) -> str:
    """Which part of a result differs (``"scores"``, ``"game over"``, ``"offers"``), or ``""``."""
    if canonical_json(again["scores"]) != canonical_json(recorded["scores"]):
        return (
            f"scores ({canonical_json(again['scores'])[:200].decode()} instead of "
            f"{canonical_json(recorded['scores'])[:200].decode()})"
        )
    if again["game_over"] != recorded["game_over"]:
        return f"game over ({again['game_over']} instead of {recorded['game_over']})"
    if again["offers_sha256"] != recorded["offers_sha256"]:
        return "offers (their digest differs)"
    return ""
