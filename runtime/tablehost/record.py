"""Match records and replay.

A record (format ``tablehost.record/1``, docs/architecture.md) holds the module's sha256,
the players, the setup seed and result, and every move with its seed and patches. Replay
re-executes setup and every move in a fresh guest with the recorded seeds and reports the
first move whose result differs; :func:`state_at` rebuilds the state at any version from the
patches alone, without running the game.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from tablehost.errors import GuestError, MatchError, RecordError, TablehostError
from tablehost.match import RECORD_FORMAT, Match, MoveRecord, PlayerInfo
from tablehost.metadata import read_metadata
from tablehost.table import Table, apply_patches, canonical_json, normalize_state
from tablehost.types import StateDict, Viewer
from tablehost.view import view_state

if TYPE_CHECKING:  # the pool is used through its methods only (tests use a Python fake)
    from tablehost.guest import GuestPool


@dataclass
class ParsedRecord:
    """A validated record.

    Attributes:
        match_id, module_sha256, module_name, created_at: as recorded.
        players: the seats in seat order.
        setup: ``{"seed", "state", "patches", "rng_used", "score_labels", "options"?}``.
        moves: every move ever accepted, undone ones included, in ``seq`` order.
        ending: how the match ended early (``{"seq", "ended_by", "player_id", "at"}``), or None.
    """

    match_id: str
    module_sha256: str
    module_name: str
    players: list[PlayerInfo]
    setup: dict[str, Any]
    moves: list[MoveRecord]
    created_at: str
    ending: dict[str, Any] | None = None
    time_control: dict[str, Any] = field(default_factory=dict)
    resignations: list[dict[str, Any]] = field(default_factory=list)
    """Seats that resigned while the others played on (resign rule ``continue``):
    ``[{"seq", "player_id", "at"}]``, each taking one version."""

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
    if record.get("format") != RECORD_FORMAT:
        raise RecordError(f"unknown record format {record.get('format')!r}; expected {RECORD_FORMAT!r}")
    module = _field(record, "module", dict)
    players = [PlayerInfo.from_json(_player(p, f"players[{i}]")) for i, p in enumerate(_field(record, "players", list))]
    ids = [p.player_id for p in players]
    if not players or len(set(ids)) != len(ids):
        raise RecordError("players must be a non-empty list with unique player ids")
    setup = _field(record, "setup", dict)
    _seed(_field(setup, "seed", int, "setup"), "setup.seed")
    _field(setup, "state", dict, "setup")
    _field(setup, "patches", list, "setup")
    moves = []
    for i, raw in enumerate(_field(record, "moves", list)):
        where = f"moves[{i}]"
        move = _expect(raw, dict, where)
        for key, kind in (("seq", int), ("player_id", int), ("seed", int), ("action", dict), ("patches", list),
                          ("rng_used", bool), ("allow_undo", bool)):
            _field(move, key, kind, where)
        _seed(move["seed"], f"{where}.seed")
        if move["player_id"] not in ids:
            raise RecordError(f"{where}.player_id {move['player_id']} is not one of the players {ids}")
        moves.append(MoveRecord.from_json(move))
    ending = record.get("ending")
    if ending is not None:
        _expect(ending, dict, "ending")
        _field(ending, "seq", int, "ending")
        if ending.get("ended_by") not in ("resigned", "timeout", "aborted"):
            raise RecordError(f"ending.ended_by {ending.get('ended_by')!r} is not resigned, timeout or aborted")
    options = setup.get("options", {})
    _expect(options, dict, "setup.options")
    resignations = _expect(record.get("resignations", []), list, "resignations")
    for i, item in enumerate(resignations):
        _field(_expect(item, dict, f"resignations[{i}]"), "seq", int, f"resignations[{i}]")
        if _field(item, "player_id", int, f"resignations[{i}]") not in ids:
            raise RecordError(f"resignations[{i}].player_id is not one of the players {ids}")
    return ParsedRecord(
        match_id=str(_field(record, "match_id", str)),
        module_sha256=str(_field(module, "sha256", str, "module")),
        module_name=str(module.get("name", "")),
        players=players,
        setup=setup,
        moves=sorted(moves, key=lambda m: m.seq),
        created_at=str(record.get("created_at", "")),
        ending=ending,
        time_control=dict(_expect(record.get("time_control", {}), dict, "time_control")),
        resignations=list(resignations),
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
    """

    ok: bool
    events: int
    first_difference: int | None = None
    detail: str = ""
    final_state: StateDict = field(default_factory=dict)


def replay(record: ParsedRecord, pool: GuestPool) -> ReplayResult:
    """Re-execute ``record`` in ``pool`` (use a fresh pool) with its recorded seeds.

    Setup must reproduce the recorded config state and prepare patches; each move must be
    offered again and reproduce its patches, ``rng_used`` and ``allow_undo``; each undo must
    be allowed again.

    Raises:
        RecordError: the record is inconsistent in itself.
    """
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
        return ReplayResult(False, 0, 0, f"setup failed in the guest: {exc}")
    if canonical_json(match.setup["state"]) != canonical_json(record.setup["state"]):
        return ReplayResult(False, 0, 0, "setup produced a different config state")
    if canonical_json(match.setup["patches"]) != canonical_json(record.setup["patches"]):
        return ReplayResult(False, 0, 0, "setup produced different prepare patches")
    done = 0
    for kind, move in record.events():
        version = done + 1
        try:
            if kind == "resign":
                match.resign(move["player_id"])
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
            return ReplayResult(False, done, version, f"{kind} {move.seq} was refused: {exc}", match.state)
        for name in ("patches", "rng_used", "allow_undo"):
            if canonical_json(getattr(again, name)) != canonical_json(getattr(move, name)):
                return ReplayResult(False, done, version, f"move {move.seq} produced different {name}", match.state)
        done += 1
    if record.ending is not None:
        if record.ending["seq"] != done + 1:
            return ReplayResult(False, done, done + 1, f"the ending is at version {record.ending['seq']}, not {done + 1}")
        done += 1
    return ReplayResult(True, done, final_state=match.state)
