"""The authoritative table state in Python, and patches applied with the SDK's semantics.

A state is the JSON form of docs/abi.md, always held in the full ("normalised")
form: every optional field present. Patches are applied in two phases so that a
bad patch never leaves a half-applied state behind:

1. *prepare*: check the patch against the state (space and player exist, indexes
   in range as of that patch, value types) and build a ready-to-run step; all
   copying of JSON values happens here, so nothing the patch holds is aliased by
   the state later on;
2. *commit*: run the steps; they only insert, pop and assign, and cannot fail.

For a list of patches every patch is prepared first, tracking how each one
changes the length of its spaces, so the whole list commits or nothing does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import orjson

from .errors import PatchError
from .types import JSON, PatchDict, StateDict

__all__ = ["LOG_CAP", "Table", "apply_patch", "apply_patches", "canonical_json", "normalize_state"]

LOG_CAP = 500
"""How many log entries a state keeps; older ones are dropped (platform rule 5)."""

_Step = tuple[Callable[..., Any], tuple[Any, ...]]
_Lengths = dict[str, int]
_SCALARS = (str, int, float, bool, type(None))
T = TypeVar("T")


def canonical_json(value: JSON) -> bytes:
    """Serialise a JSON value with sorted keys: two states are equal iff these bytes are.

    Args:
        value: any JSON-shaped value (dicts with str keys, lists, str, int, float, bool, None).

    Returns:
        UTF-8 JSON bytes, keys sorted, no whitespace.

    Raises:
        TypeError: the value is not JSON-shaped (orjson.JSONEncodeError is a TypeError).
    """
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


# ---------------------------------------------------------------------------
# Copying and checking JSON values
# ---------------------------------------------------------------------------


# Error messages name the field only; callers add where it was on the way out
# (see _each and _prepare), so the happy path builds no strings.


def _copy_json(value: JSON, field: str) -> JSON:
    """A deep copy of a JSON value (scalars are immutable and returned as they are)."""
    if type(value) in _SCALARS:
        return value
    try:
        return orjson.loads(orjson.dumps(value))
    except (TypeError, ValueError) as exc:
        raise PatchError(f"{field} is not a JSON value: {exc}") from exc


def _map(value: JSON, field: str) -> dict[str, JSON]:
    """A JSON object as it is; an omitted or null map is the empty map."""
    if value is None:
        return {}
    if type(value) is not dict:
        raise PatchError(f"{field} must be a JSON object, got {type(value).__name__}")
    return value


def _copy_map(value: JSON, field: str) -> dict[str, JSON]:
    """A deep copy of a JSON object; an omitted or null map is the empty map."""
    value = _map(value, field)
    if not value:
        return {}
    copied: dict[str, JSON] = _copy_json(value, field)
    return copied


def _is_player_id(value: Any) -> bool:
    return type(value) is int and 0 <= value <= 0xFFFFFFFF


def _owner(value: Any, field: str) -> int | None:
    if value is None or _is_player_id(value):
        return value  # type: ignore[no-any-return]
    raise PatchError(f"{field} must be a player id (u32) or null, got {value!r}")


def _text(value: Any, field: str) -> str:
    if type(value) is not str:
        raise PatchError(f"{field} must be a string, got {value!r}")
    return value


def _optional_text(value: Any, field: str) -> str | None:
    return None if value is None else _text(value, field)


def _object(value: Any, what: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise PatchError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def _each(items: Any, normalize: Callable[[Any], T], label: str) -> list[T]:
    """``normalize`` applied to each item of a list; errors say which item."""
    if type(items) is not list:
        raise PatchError(f"{label} must be a list")
    result = []
    for i, item in enumerate(items):
        try:
            result.append(normalize(item))
        except PatchError as exc:
            raise PatchError(f"{label}[{i}]: {exc.message}") from None
    return result


def _normalize_piece(
    piece: Any, as_map: Callable[[JSON, str], dict[str, JSON]] = _copy_map
) -> dict[str, JSON]:
    """A full-form Piece whose maps come through ``as_map`` (a copy unless told otherwise).

    Raises PatchError when the piece is malformed.
    """
    piece = _object(piece, "a piece")
    return {
        "public_kind": _text(piece.get("public_kind"), "public_kind"),
        "public_state": as_map(piece.get("public_state"), "public_state"),
        "private_kind": _optional_text(piece.get("private_kind"), "private_kind"),
        "private_state": as_map(piece.get("private_state"), "private_state"),
        "owner": _owner(piece.get("owner"), "owner"),
    }


def _new_piece(piece: Any) -> dict[str, JSON]:
    """:func:`_normalize_piece` (copying) of a piece in a patch; the same result or the same error.

    Fast path: a piece whose maps are empty or absent (what the sample games add) is built
    straight away; any other takes :func:`_normalize_piece`.
    """
    if type(piece) is dict:
        kind = piece.get("public_kind")
        public = piece.get("public_state")
        private = piece.get("private_state")
        private_kind = piece.get("private_kind")
        owner = piece.get("owner")
        if (
            type(kind) is str
            and (public is None or (type(public) is dict and not public))
            and (private is None or (type(private) is dict and not private))
            and (private_kind is None or type(private_kind) is str)
            and (owner is None or (type(owner) is int and 0 <= owner <= 0xFFFFFFFF))
        ):
            return {
                "public_kind": kind,
                "public_state": {},
                "private_kind": private_kind,
                "private_state": {},
                "owner": owner,
            }
    return _normalize_piece(piece)


def _fresh_piece(piece: Any) -> dict[str, JSON]:
    return _normalize_piece(piece, _map)


def _new_log_entry(entry: Any) -> dict[str, JSON]:
    """:func:`_normalize_log_entry`; the same result or the same error.

    Fast path: a line without per-player lines (the common one) is built straight away.
    """
    if type(entry) is dict:
        text = entry.get("text")
        lines = entry.get("for_player")
        if type(text) is str and (lines is None or (type(lines) is dict and not lines)):
            return {"text": text, "for_player": {}}
    return _normalize_log_entry(entry)


def _normalize_log_entry(entry: Any) -> dict[str, JSON]:
    """A new full-form LogEntry ``{"text", "for_player": {"<pid>": text}}``."""
    entry = _object(entry, "a log entry")
    lines = _map(entry.get("for_player"), "for_player")
    for key, line in lines.items():
        if type(line) is not str:
            raise PatchError(f"for_player[{key!r}] must be a string, got {line!r}")
    return {"text": _text(entry.get("text"), "text"), "for_player": {str(k): v for k, v in lines.items()}}


def _normalize_space(space: Any) -> dict[str, JSON]:
    space = _object(space, "a space")
    space_id = _text(space.get("space_id"), "space_id")
    arrangement = space.get("arrangement") or "ordered"
    if arrangement not in ("ordered", "collection"):
        raise PatchError(f"arrangement must be 'ordered' or 'collection', got {arrangement!r}")
    return {
        "space_id": space_id,
        "kind": _text(space.get("kind", ""), "kind"),
        "owner": _owner(space.get("owner"), "owner"),
        "arrangement": arrangement,
        "public_state": _map(space.get("public_state"), "public_state"),
        "private_state": _map(space.get("private_state"), "private_state"),
        "pieces": _each(space.get("pieces") or [], _fresh_piece, f"space {space_id!r} pieces"),
    }


def _normalize_player(player: Any) -> dict[str, JSON]:
    player = _object(player, "a player")
    player_id = player.get("player_id")
    if not _is_player_id(player_id):
        raise PatchError(f"player_id must be a u32, got {player_id!r}")
    return {
        "player_id": player_id,
        "color": _text(player.get("color", ""), "color"),
        "username": _text(player.get("username", ""), "username"),
        "public_state": _map(player.get("public_state"), "public_state"),
        "private_state": _map(player.get("private_state"), "private_state"),
    }


def _player_ids(value: Any, field: str) -> list[int]:
    if type(value) is list:
        for v in value:  # a plain loop: no generator and no call per id
            if type(v) is not int or not 0 <= v <= 0xFFFFFFFF:
                break
        else:
            return list(value)
    raise PatchError(f"{field} must be a list of player ids, got {value!r}")


def normalize_state(state: dict[str, Any]) -> StateDict:
    """Bring a State in either JSON form (docs/abi.md "Common JSON") to the full form.

    Args:
        state: a State dict as a guest or a record wrote it; omitted fields take their
            defaults (``{}``, ``[]``, ``null``, ``"ordered"``); ``color``, ``username``
            and a space's ``kind`` default to ``""``.

    Returns:
        A new State dict sharing nothing with ``state``: ``active_player_ids``,
        ``players`` (each with ``player_id, color, username, public_state, private_state``),
        ``spaces`` (each with ``space_id, kind, owner, arrangement, public_state,
        private_state, pieces``; each piece with ``public_kind, public_state,
        private_kind, private_state, owner``), ``meta_data`` and ``log`` (each entry
        ``{"text", "for_player"}``; only the newest ``LOG_CAP`` are kept).

    Raises:
        PatchError: a field has the wrong type, or two spaces (or players) share an id.
    """
    if type(state) is not dict:
        raise PatchError(f"a state must be a JSON object, got {type(state).__name__}")
    # One deep copy up front (int keys become strings); the parts below are then fresh.
    try:
        state = orjson.loads(orjson.dumps(state, option=orjson.OPT_NON_STR_KEYS))
    except (TypeError, ValueError) as exc:
        raise PatchError(f"the state is not JSON: {exc}") from exc
    log = state.get("log") or []
    normal = {
        "active_player_ids": _player_ids(state.get("active_player_ids") or [], "active_player_ids"),
        "players": _each(state.get("players") or [], _normalize_player, "players"),
        "spaces": _each(state.get("spaces") or [], _normalize_space, "spaces"),
        "meta_data": _map(state.get("meta_data"), "meta_data"),
        "log": _each(log[-LOG_CAP:] if type(log) is list else log, _new_log_entry, "log"),
    }
    Table._adopt(normal)  # checks that ids are unique
    return normal


# ---------------------------------------------------------------------------
# Commit steps: plain mutations that cannot fail once prepared
# ---------------------------------------------------------------------------


def _commit_move(source: list[Any], index: int, target: list[Any], to_index: int | None) -> None:
    piece = source.pop(index)
    if to_index is None:
        target.append(piece)
    else:
        target.insert(to_index, piece)


def _commit_permute(pieces: list[Any], order: tuple[int, ...]) -> None:
    pieces[:] = [pieces[k] for k in order]


def _commit_piece_field(pieces: list[Any], index: int, field: str, value: JSON) -> None:
    pieces[index][field] = value


def _commit_piece_state(pieces: list[Any], index: int, field: str, key: str, value: JSON) -> None:
    _commit_key(pieces[index][field], key, value)


def _commit_key(mapping: dict[str, JSON], key: str, value: JSON) -> None:
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def _commit_log(log: list[Any], entry: dict[str, JSON]) -> None:
    log.append(entry)
    if len(log) > LOG_CAP:
        del log[: len(log) - LOG_CAP]


# ---------------------------------------------------------------------------
# Prepare steps: one per op; each checks its patch and returns the commit step
# ---------------------------------------------------------------------------


def _space(table: Table, patch: PatchDict, field: str, lengths: _Lengths) -> tuple[str, dict[str, Any], int]:
    """The space named by ``patch[field]`` and its length as of this patch."""
    space_id: Any = patch.get(field)
    space = table._spaces.get(space_id) if type(space_id) is str else None
    if space is None:
        raise PatchError(f"no space {space_id!r}")
    length = lengths.get(space_id)
    if length is None:
        length = len(space["pieces"])
    return space_id, space, length


def _index(patch: PatchDict, field: str, bound: int) -> int:
    """``patch[field]`` checked to lie in ``0 .. bound-1``.

    Args:
        patch: the patch being prepared.
        field: the member holding the index (``index``, ``to_index``).
        bound: how many indexes the space has for this patch (0: the space has no pieces).

    Returns:
        The index.

    Raises:
        PatchError: not an int in range: ``index 5 is outside 0..2 of the space``, or for an
            empty space (``bound`` 0) ``index 5: the space has no pieces``.
    """
    index = patch.get(field)
    if type(index) is not int or not 0 <= index < bound:
        if bound <= 0:
            raise PatchError(f"{field} {index!r}: the space has no pieces")
        raise PatchError(f"{field} {index!r} is outside 0..{bound - 1} of the space")
    return index


def _key(patch: PatchDict) -> str:
    key = patch.get("key")
    if type(key) is not str:
        raise PatchError(f"key must be a string, got {key!r}")
    return key


def _value(patch: PatchDict) -> JSON:
    if "value" not in patch:
        raise PatchError("value is missing (use null to remove a key)")
    return _copy_json(patch["value"], "value")


def _player(table: Table, patch: PatchDict) -> dict[str, Any]:
    player_id = patch.get("player_id")
    player = table._players.get(player_id) if type(player_id) is int else None
    if player is None:
        raise PatchError(f"no player {player_id!r}")
    return player


def _prep_add_piece(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
    space_id, space, length = _space(table, patch, "space_id", lengths)
    piece = _new_piece(patch.get("piece"))
    lengths[space_id] = length + 1
    return space["pieces"].append, (piece,)


def _prep_insert_piece(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
    space_id, space, length = _space(table, patch, "space_id", lengths)
    index = _index(patch, "index", length + 1)
    piece = _new_piece(patch.get("piece"))
    lengths[space_id] = length + 1
    return space["pieces"].insert, (index, piece)


def _prep_remove_piece(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
    space_id, space, length = _space(table, patch, "space_id", lengths)
    index = _index(patch, "index", length)
    lengths[space_id] = length - 1
    return space["pieces"].pop, (index,)


def _prep_move_piece(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
    source_id, source, source_length = _space(table, patch, "from", lengths)
    index = _index(patch, "index", source_length)
    lengths[source_id] = source_length - 1  # to_index counts after the removal
    target_id, target, target_length = _space(table, patch, "to", lengths)
    to_index = patch.get("to_index")
    if to_index is not None:
        to_index = _index(patch, "to_index", target_length + 1)
    lengths[target_id] = target_length + 1
    return _commit_move, (source["pieces"], index, target["pieces"], to_index)


def _prep_permute(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
    _, space, length = _space(table, patch, "space_id", lengths)
    order = patch.get("order")
    if (
        type(order) is not list
        or len(order) != length
        or not all(type(k) is int for k in order)
        or sorted(order) != list(range(length))
    ):
        raise PatchError(f"order must be a permutation of 0..{length - 1}, got {order!r}")
    return _commit_permute, (space["pieces"], tuple(order))


def _piece_field_preparer(field: str, check: Callable[[Any, str], JSON]) -> Callable[..., _Step]:
    value_field = "owner" if field == "owner" else "kind"  # the patch's name for the new value

    def prepare(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
        # _space and _index inlined (the most frequent ops: a reversi move turns discs over);
        # any fault goes through them, so the error is theirs.
        space_id: Any = patch.get("space_id")
        space = table._spaces.get(space_id) if type(space_id) is str else None
        index = patch.get("index")
        if space is not None and type(index) is int:
            length = lengths.get(space_id)
            pieces = space["pieces"]
            if 0 <= index < (len(pieces) if length is None else length):
                return _commit_piece_field, (pieces, index, field, check(patch.get(value_field), value_field))
        _, space, length = _space(table, patch, "space_id", lengths)
        index = _index(patch, "index", length)
        value = check(patch.get(value_field), value_field)
        return _commit_piece_field, (space["pieces"], index, field, value)

    return prepare


def _piece_state_preparer(field: str) -> Callable[..., _Step]:
    def prepare(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
        _, space, length = _space(table, patch, "space_id", lengths)
        index = _index(patch, "index", length)
        return _commit_piece_state, (space["pieces"], index, field, _key(patch), _value(patch))

    return prepare


def _prep_set_space_owner(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
    _, space, _ = _space(table, patch, "space_id", lengths)
    return space.__setitem__, ("owner", _owner(patch.get("owner"), "owner"))


def _space_state_preparer(field: str) -> Callable[..., _Step]:
    def prepare(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
        _, space, _ = _space(table, patch, "space_id", lengths)
        return _commit_key, (space[field], _key(patch), _value(patch))

    return prepare


def _player_state_preparer(field: str) -> Callable[..., _Step]:
    def prepare(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
        return _commit_key, (_player(table, patch)[field], _key(patch), _value(patch))

    return prepare


def _prep_set_active_players(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
    ids = _player_ids(patch.get("player_ids"), "player_ids")
    return table.state.__setitem__, ("active_player_ids", ids)


def _prep_set_meta(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
    return _commit_key, (table.state["meta_data"], _key(patch), _value(patch))


def _prep_log(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
    return _commit_log, (table.state["log"], _new_log_entry(patch.get("entry")))


_PREPARERS: dict[str, Callable[[Table, PatchDict, _Lengths], _Step]] = {
    "add_piece": _prep_add_piece,
    "insert_piece": _prep_insert_piece,
    "remove_piece": _prep_remove_piece,
    "move_piece": _prep_move_piece,
    "permute": _prep_permute,
    "set_public_kind": _piece_field_preparer("public_kind", _text),
    "set_private_kind": _piece_field_preparer("private_kind", _optional_text),
    "set_piece_owner": _piece_field_preparer("owner", _owner),
    "set_piece_public_state": _piece_state_preparer("public_state"),
    "set_piece_private_state": _piece_state_preparer("private_state"),
    "set_space_owner": _prep_set_space_owner,
    "set_space_public_state": _space_state_preparer("public_state"),
    "set_space_private_state": _space_state_preparer("private_state"),
    "set_player_public_state": _player_state_preparer("public_state"),
    "set_player_private_state": _player_state_preparer("private_state"),
    "set_active_players": _prep_set_active_players,
    "set_meta": _prep_set_meta,
    "log": _prep_log,
}
PATCH_OPS = frozenset(_PREPARERS)
"""Every patch op of docs/abi.md."""


def _prepare(table: Table, patch: PatchDict, lengths: _Lengths) -> _Step:
    try:
        prepare = _PREPARERS[patch["op"]]
    except (KeyError, TypeError):
        op = patch.get("op") if type(patch) is dict else patch
        raise PatchError(f"unknown patch op {op!r}") from None
    try:
        return prepare(table, patch, lengths)
    except PatchError as exc:
        raise PatchError(f"{patch['op']}: {exc.message}", op=patch["op"]) from None


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------


class Table:
    """The authoritative mirror of one match's state, indexed by space id and player id.

    ``Table(state)`` normalises (and so copies) ``state``; the table owns the result
    at :attr:`state`. Change it only through :meth:`apply`, which keeps the indexes
    right; reading it is fine.

    Args:
        state: a State dict in either JSON form.

    Raises:
        PatchError: the state is malformed (see :func:`normalize_state`).
    """

    __slots__ = ("_checked", "_players", "_spaces", "state")

    state: StateDict
    _spaces: dict[str, dict[str, Any]]
    _players: dict[int, dict[str, Any]]

    def __init__(self, state: dict[str, Any]) -> None:
        self._bind(normalize_state(state))

    @classmethod
    def _trusted(cls, state: StateDict) -> Table:
        """A table over an already normalised state, without copying it."""
        table = cls.__new__(cls)
        table._bind(state)
        return table

    @staticmethod
    def _adopt(state: StateDict) -> tuple[dict[str, dict[str, Any]], dict[int, dict[str, Any]]]:
        spaces = {space["space_id"]: space for space in state["spaces"]}
        if len(spaces) != len(state["spaces"]):
            raise PatchError("two spaces share a space_id")
        players = {player["player_id"]: player for player in state["players"]}
        if len(players) != len(state["players"]):
            raise PatchError("two players share a player_id")
        return spaces, players

    def _bind(self, state: StateDict) -> None:
        self.state = state
        self._spaces, self._players = Table._adopt(state)
        self._checked: tuple[list[PatchDict], list[_Step]] | None = None

    def apply(self, patches: Iterable[PatchDict]) -> None:
        """Apply patches in order, all or none.

        Args:
            patches: Patch dicts of docs/abi.md; each is read, never kept or changed.

        Raises:
            PatchError: a patch does not fit the state as it would be after the ones
                before it; ``patch_index`` says which. The state is then unchanged.
        """
        checked, self._checked = self._checked, None
        if checked is not None and checked[0] is patches:
            steps = checked[1]  # prepared by check() on this very state: commit them
        else:
            lengths: _Lengths = {}
            steps = []
            try:
                for patch in patches:
                    steps.append(_prepare(self, patch, lengths))
            except PatchError as exc:
                raise PatchError(f"patch {len(steps)}: {exc.message}", patch_index=len(steps)) from exc
        for commit, args in steps:
            commit(*args)

    def check(self, patches: Iterable[PatchDict]) -> dict[str, int]:
        """Raise exactly what :meth:`apply` would raise for ``patches``, changing nothing.

        Lets a caller make a change durable between checking and applying it, knowing the
        apply cannot fail (the match journals a move this way). The checked steps are kept: a
        following :meth:`apply` of the same list object (nothing applied in between, the list
        not changed) commits them instead of preparing the patches again.

        Returns:
            The number of pieces each space the patches touch would hold afterwards, by
            space id (spaces not listed keep their length); the gate checks offered piece
            indexes against it.

        Raises:
            PatchError: as :meth:`apply`.
        """
        self._checked = None
        lengths: _Lengths = {}
        steps: list[_Step] = []
        for index, patch in enumerate(patches):
            try:
                steps.append(_prepare(self, patch, lengths))
            except PatchError as exc:
                raise PatchError(f"patch {index}: {exc.message}", patch_index=index) from exc
        if type(patches) is list:
            self._checked = (patches, steps)
        return lengths

    def length(self, space_id: str) -> int | None:
        """How many pieces the space holds now, or None when there is no such space."""
        space = self._spaces.get(space_id)
        return None if space is None else len(space["pieces"])

    def apply_patch(self, patch: PatchDict) -> None:
        """Apply one patch (see :meth:`apply`). Raises PatchError; the state is then unchanged."""
        self._checked = None
        commit, args = _prepare(self, patch, {})
        commit(*args)

    def space(self, space_id: str) -> dict[str, Any]:
        """The live Space dict with this id (read it; change it through :meth:`apply`).

        Raises:
            KeyError: no space has this id.
        """
        return self._spaces[space_id]

    def player(self, player_id: int) -> dict[str, Any]:
        """The live Player dict with this id. Raises KeyError when there is none."""
        return self._players[player_id]

    def snapshot(self) -> bytes:
        """The state as orjson bytes (not key-sorted; use :func:`canonical_json` to compare)."""
        return orjson.dumps(self.state)

    @classmethod
    def from_snapshot(cls, data: bytes) -> Table:
        """A table from :meth:`snapshot` bytes (or any State JSON).

        Raises:
            PatchError: the bytes are not JSON or not a State.
        """
        try:
            state = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise PatchError(f"snapshot is not JSON: {exc}") from exc
        return cls(state)

    @classmethod
    def restore(cls, snapshot: bytes) -> Table:
        """A table from this host's own :meth:`snapshot` bytes, trusted as normalised (undo's fast path).

        Raises:
            orjson.JSONDecodeError: the bytes are not JSON (never for our own snapshots).
        """
        return cls._trusted(orjson.loads(snapshot))

    def copy(self) -> Table:
        """An independent table with an equal state (a deep copy)."""
        return Table._trusted(orjson.loads(orjson.dumps(self.state)))

    def canonical_json(self) -> bytes:
        """:func:`canonical_json` of the state."""
        return canonical_json(self.state)


def apply_patch(state: StateDict, patch: PatchDict) -> None:
    """Apply one patch to a normalised state in place.

    Builds a space index per call; a match should keep a :class:`Table` instead.

    Raises:
        PatchError: the patch does not fit; the state is unchanged.
    """
    Table._trusted(state).apply_patch(patch)


def apply_patches(state: StateDict, patches: Iterable[PatchDict]) -> None:
    """Apply patches in order to a normalised state in place, all or none.

    Raises:
        PatchError: a patch does not fit (``patch_index`` says which); the state is unchanged.
    """
    Table._trusted(state).apply(patches)
