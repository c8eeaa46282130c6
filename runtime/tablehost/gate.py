"""The gate: every guest answer checked in full before anything is journaled, applied or answered.

A module is untrusted code. Whatever it answers (setup, step, actions, game_over, scores)
passes through one :class:`Gate` per match before the match uses any of it; an answer that
does not fit the ABI (docs/abi.md) or the limits of :class:`~tablehost.limits.AnswerLimits`
raises :class:`~tablehost.errors.GuestProtocolError` (code ``guest/protocol``, gRPC
ABORTED) naming the first bad place, e.g. ``step.actions["7"][0].action.index``; the match
is then exactly as it was.

What is checked, per op (docs/abi.md "8. Ops" and "11a. What the host accepts"):

- the response is an object with every required member of the right JSON type;
- patches: exactly what :meth:`Table.check <tablehost.table.Table.check>` checks (the same
  code, so gate and table never disagree), plus every value inside them (below), owners
  and active players that are seated, log lines within ``log_line_chars_max``;
- scores: keyed by seated player ids written in decimal, each
  ``{public_points, private_points}`` of finite numbers;
- offers: keyed by seated player ids, each ``{action, intent, label}`` with an action of a
  known type naming an existing space (and, for ``piece_click``, a piece that exists after
  the patches), intent ``choice``/``confirm``/``cancel`` (``undo`` is the platform's own),
  nothing unknown (an offer is matched exactly, so an unknown member could never be played),
  none when the game is over;
- every value: JSON types only, finite numbers, strings within ``string_chars_max``,
  values nested at most ``value_depth_max`` containers;
- sizes: offers per player and in all, patches per answer and their estimated bytes, and the
  match's state bytes.

NaN and infinities: JSON has none, so orjson already refuses them on parse (``NaN``,
``1e400``); the SDK writes a non-finite score as ``null``, which the gate refuses as not a
number. Duplicate object keys: refused, see :func:`has_duplicate_keys` (parse time).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, NoReturn

import orjson

from tablehost.abi import ActionsAnswer, GameOverAnswer, ScoresAnswer, SetupAnswer, StepAnswer
from tablehost.errors import GuestProtocolError, PatchError
from tablehost.history import offers_digest as history_offers_digest
from tablehost.limits import DEFAULT_ANSWER_LIMITS, AnswerLimits
from tablehost.table import Table
from tablehost.types import PlayerId

__all__ = ["Gate", "has_duplicate_keys", "value_depth"]

OFFER_INTENTS = frozenset(("choice", "confirm", "cancel"))
"""Intents a game may offer; ``undo`` is the platform's own (platform rule 3)."""


@functools.lru_cache(maxsize=8)
def _offers_re(string_chars_max: int) -> re.Pattern[bytes]:
    """The offers list as the SDK writes it (full form, its key order, strings without escapes
    of at most ``string_chars_max`` bytes), matched in C."""
    return re.compile(_offers_list(string_chars_max, b'"[^"\\\\\\x00-\\x1f]{0,%d}"' % string_chars_max))


@functools.lru_cache(maxsize=64)
def _offer_map_re(string_chars_max: int, space_ids: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """A map of offers lists ``{"<pid>": [...], ...}`` as the SDK writes it (see :func:`_offers_re`)
    whose every ``space_id`` is one of ``space_ids`` (JSON text without escapes, sorted), matched in C.

    Player ids are only shaped here (decimal); the caller checks that they are seated."""
    spaces = b'"' + _trie(space_ids) + b'"'
    offers = _sorted_offers_list(string_chars_max, spaces)
    return re.compile(rb'\{(?:"[0-9]{1,10}":' + offers + rb'(?:,"[0-9]{1,10}":' + offers + rb")*)?\}")


def _sorted_offers_list(string_chars_max: int, space_id: bytes) -> bytes:
    """The regex of one offers list written with sorted keys (``orjson.OPT_SORT_KEYS``, the
    canonical form :func:`tablehost.history.offers_digest` hashes) whose ``space_id`` values
    match ``space_id``; strings as in :func:`_offers_re`."""
    text = b'"[^"\\\\\\x00-\\x1f]{0,%d}"' % string_chars_max
    offer = (
        rb'\{"action":\{(?:"space_id":'
        + space_id
        + rb',"type":"space_click"|"index":(?:0|[1-9][0-9]{0,9}),"space_id":'
        + space_id
        + rb',"type":"piece_click"|"button":\{"disabled":(?:true|false),"id":'
        + text
        + rb',"label":'
        + text
        + rb',"location":'
        + text
        + rb'\},"type":"button_click")\},"intent":"(?:choice|confirm|cancel)","label":'
        + text
        + rb"\}"
    )
    return rb"\[(?:" + offer + rb"(?:," + offer + rb")*)?\]"


@functools.lru_cache(maxsize=64)
def _space_checks(string_chars_max: int, space_ids: tuple[str, ...]) -> tuple[frozenset[bytes], re.Pattern[bytes]]:
    """The space ids as UTF-8 and the offers-map regex naming them (cached: every match of a game
    has the same spaces, and undo brings a new table with the same ids)."""
    plain = tuple(sorted(sid.encode() for sid in space_ids if _PLAIN_ID_RE.fullmatch(sid)))
    return frozenset(sid.encode() for sid in space_ids), _offer_map_re(string_chars_max, plain)


def _trie(words: Sequence[bytes]) -> bytes:
    """A regex matching exactly ``words`` (sorted, distinct, non-empty), factored by common prefixes:
    matching costs the length of a word, not the number of words."""
    if not words:
        return b"(?!)"
    branches: list[bytes] = []
    ends = False
    start = 0
    while start < len(words):
        word = words[start]
        if not word:
            ends = True
            start += 1
            continue
        head = word[:1]
        stop = start
        while stop < len(words) and words[stop][:1] == head:
            stop += 1
        branches.append(re.escape(head) + _trie([w[1:] for w in words[start:stop]]))
        start = stop
    if not branches:
        return b""
    body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
    return b"(?:" + body + b")?" if ends else body


_PLAIN_ID_RE = re.compile(r'[^"\\\x00-\x1f]{1,64}')
"""Space ids the offers regex names: JSON writes them as they are; 64 characters at most (longer
or escaped ids take the detailed path)."""


def _offers_list(string_chars_max: int, space_id: bytes) -> bytes:
    """The regex of one offers list whose ``space_id`` values match ``space_id``."""
    text = b'"[^"\\\\\\x00-\\x1f]{0,%d}"' % string_chars_max
    offer = (
        rb'\{"action":\{"type":"(?:space_click","space_id":'
        + space_id
        + rb'|piece_click","space_id":'
        + space_id
        + rb',"index":(?:0|[1-9][0-9]{0,9})'
        + rb'|button_click","button":\{"id":'
        + text
        + rb',"label":'
        + text
        + rb',"location":'
        + text
        + rb',"disabled":(?:true|false)\})\},"intent":"(?:choice|confirm|cancel)","label":'
        + text
        + rb"\}"
    )
    return rb"\[(?:" + offer + rb"(?:," + offer + rb")*)?\]"


_SPACE_IDS_RE = re.compile(rb'"space_id":"([^"]*)"')
_PIECES_RE = re.compile(rb'"space_id":"([^"]*)","index":([0-9]+)')
_SORTED_PIECES_RE = re.compile(rb'"index":([0-9]+),"space_id":"([^"]*)"')
_EMPTY: list[Any] = []
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1
"""Integers orjson (and the SDK's serde_json) read and write exactly."""
_finite = math.isfinite
_OFFER_KEYS = frozenset(("action", "intent", "label"))
_BUTTON_KEYS = frozenset(("id", "label", "location", "disabled"))
_SCORE_KEYS = frozenset(("public_points", "private_points"))
_SCORE_LISTS = ("public_points", "private_points")
_NODE_BYTES = 4
_PLAIN_OPS = frozenset(("remove_piece", "move_piece", "permute", "set_public_kind", "set_private_kind"))
"""Ops whose only new text is ``kind``: spaces and indexes were checked by ``Table.check``."""
_KEYED_OPS = frozenset(
    (
        "set_piece_public_state",
        "set_piece_private_state",
        "set_space_public_state",
        "set_space_private_state",
        "set_player_public_state",
        "set_player_private_state",
        "set_meta",
    )
)
"""Bytes the size estimate adds per JSON node (punctuation and short scalars)."""


CHECKED_STATE_BYTES_MAX = 256 * 1024
"""Setup states up to this many JSON bytes are remembered once checked (:class:`_CheckedStates`)."""


class _CheckedStates:
    """Setup states that passed the gate, by ``(limits, seats, state JSON bytes)``: their size
    estimate and normalised snapshot. Bounded (least recently used out), thread-safe."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[tuple[Any, ...], tuple[int, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> tuple[int, bytes] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def put(self, key: tuple[Any, ...], entry: tuple[int, bytes]) -> None:
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_CHECKED_STATES = _CheckedStates(16)


class _Bad(Exception):
    """A refusal on its way out: ``path`` is collected innermost first while unwinding."""

    __slots__ = ("path", "why")

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why
        self.path: list[str] = []


def _bad(why: str) -> NoReturn:
    raise _Bad(why)


def _key(key: str) -> str:
    return "[" + orjson.dumps(key[:40]).decode() + ("…]" if len(key) > 40 else "]")


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


class Gate:
    """The answer checks of one match: its seated players, its limits, its state size.

    Args:
        player_ids: the seated player ids in seat order.
        limits: what an answer may hold.

    Every ``check_*`` method raises :class:`GuestProtocolError` (``path`` names the first bad
    place, ``op`` the call) and changes nothing of the match; on success it returns what the
    match needs (documented per method).
    """

    __slots__ = (
        "_canonical_offers", "_ids", "_keys", "_last_offers", "_offer_map", "_space_bytes", "_table", "limits",
        "state_bytes",
    )

    def __init__(self, player_ids: Sequence[PlayerId], limits: AnswerLimits = DEFAULT_ANSWER_LIMITS) -> None:
        self.limits = limits
        self._ids = frozenset(player_ids)
        self._keys = {str(pid): pid for pid in player_ids}
        self._table: Table | None = None
        self._space_bytes: frozenset[bytes] = frozenset()
        self._offer_map: re.Pattern[bytes] | None = None
        self._last_offers = b""  # the newest offers map that passed, when it clicks no piece
        self._canonical_offers: tuple[dict[str, Any], bytes] | None = None  # the map last passed, as canonical JSON
        self.state_bytes = 0
        """Upper bound of the state's JSON bytes (exact after setup; grows by each move's estimate)."""

    # ---------------------------------------------------------------- ops

    def check_setup(self, answer: Any, player_ids: Sequence[PlayerId]) -> tuple[SetupAnswer, Table]:
        """Check a ``setup`` answer and build the starting table from it.

        Args:
            answer: the parsed response.
            player_ids: the seated ids in seat order (the state's players must be seated, each
                once, in seat order; docs/abi.md says all of them, a game may leave some out).

        Returns:
            The answer (typed) and the table after the setup patches (a normalised copy).
        """
        try:
            _object(answer)
            for name in ("rng_used", "game_over"):
                _member(answer, name, bool)
            self._printed(answer)
            labels = _member(answer, "score_labels", list)
            try:
                if len(labels) > self.limits.score_points_max:
                    _bad(f"holds {len(labels)} labels, over the limit of {self.limits.score_points_max}")
                for i, label in enumerate(labels):
                    try:
                        self._string(label)
                    except _Bad as exc:
                        exc.path.append(f"[{i}]")
                        raise
            except _Bad as exc:
                exc.path.append(".score_labels")
                raise
            state = _member(answer, "state", dict)
            try:
                size, table = self._starting_table(state, player_ids)
            except PatchError as exc:
                raise _Bad(exc.message) from None
            except _Bad as exc:
                exc.path.append(".state")
                raise
            if size > self.limits.state_bytes_max:
                raise _Bad(f"state of about {size} bytes is over the limit of {self.limits.state_bytes_max}")
            self._outcome(answer, table)
            table.apply(answer["patches"])
            self.state_bytes = len(orjson.dumps(table.state))
            if self.state_bytes > self.limits.state_bytes_max:
                _bad(
                    f"the starting state of {self.state_bytes} bytes is over the limit of "
                    f"{self.limits.state_bytes_max}"
                )
            return answer, table
        except _Bad as exc:
            _refuse("setup", exc, answer, self.limits)

    def _starting_table(self, state: dict[str, Any], player_ids: Sequence[PlayerId]) -> tuple[int, Table]:
        """:meth:`_state`'s checks and size of a setup ``state``, and its normalised table.

        Both are a pure function of the state's JSON text, the seats and the limits, so a state
        that passed before (every match of a game usually starts from the same one) is served
        from :data:`_CHECKED_STATES` by its exact JSON bytes: the same answer, without walking
        every value again. A state that does not pass is never kept.

        Raises:
            _Bad, PatchError: as :meth:`_state` and :class:`Table` do.
        """
        try:
            text = orjson.dumps(state)
        except TypeError:  # not JSON (an integer out of range): the checks name it
            text = b""
        key = (self.limits, self._ids, tuple(player_ids), text)
        kept = _CHECKED_STATES.get(key) if text else None
        if kept is not None:
            return kept[0], Table.restore(kept[1])
        size = self._state(state, player_ids)
        table = Table(state)
        if text and len(text) <= CHECKED_STATE_BYTES_MAX:
            _CHECKED_STATES.put(key, (size, table.snapshot()))
        return size, table

    def check_step(self, answer: Any, table: Table) -> StepAnswer:
        """Check a ``step`` answer against ``table``, the state the move starts from.

        Counts the move's patches into :attr:`state_bytes`.

        Returns:
            ``answer``, typed.
        """
        try:
            get = answer.get if type(answer) is dict else None
            if (
                get is None
                or type(get("rng_used")) is not bool
                or type(get("allow_undo")) is not bool
                or type(get("game_over")) is not bool
            ):  # the common answer passes these three tests inline; the calls below name a fault
                _object(answer)
                for name in ("rng_used", "allow_undo", "game_over"):
                    _member(answer, name, bool)
            if answer.get("printed") is not None:  # a dict by now; _printed checks what it holds
                self._printed(answer)
            grown = self._outcome(answer, table)
            estimate = self.state_bytes + grown
            if estimate > self.limits.state_bytes_max:
                estimate = len(orjson.dumps(table.state)) + grown
                if estimate > self.limits.state_bytes_max:
                    raise _Bad(
                        f"the patches could take the state to about {estimate} bytes, over the limit "
                        f"of {self.limits.state_bytes_max}"
                    )
            self.state_bytes = estimate
            step: StepAnswer = answer
            return step
        except _Bad as exc:
            _refuse("step", exc, answer, self.limits)

    def check_actions(self, answer: Any, table: Table) -> ActionsAnswer:
        """Check an ``actions`` answer for the state of ``table``; returns it typed."""
        try:
            _object(answer)
            self._printed(answer)
            offers = _member(answer, "actions", list)
            try:
                self._offers(offers, table, {})
            except _Bad as exc:
                exc.path.append(".actions")
                raise
            checked: ActionsAnswer = answer
            return checked
        except _Bad as exc:
            _refuse("actions", exc, answer, self.limits)

    def check_game_over(self, answer: Any) -> GameOverAnswer:
        """Check a ``game_over`` answer (``{"game_over", "scores"}``); returns it typed."""
        try:
            _object(answer)
            self._printed(answer)
            _member(answer, "game_over", bool)
            self._scores(_member(answer, "scores", dict))
            checked: GameOverAnswer = answer
            return checked
        except _Bad as exc:
            _refuse("game_over", exc, answer, self.limits)

    def check_scores(self, answer: Any) -> ScoresAnswer:
        """Check a ``scores`` answer (``{"scores"}``); returns it typed."""
        try:
            _object(answer)
            self._printed(answer)
            self._scores(_member(answer, "scores", dict))
            checked: ScoresAnswer = answer
            return checked
        except _Bad as exc:
            _refuse("scores", exc, answer, self.limits)

    # ---------------------------------------------------------------- parts

    def _outcome(self, answer: dict[str, Any], table: Table) -> int:
        """Patches, scores and offers of a setup or step answer; returns the patches' estimate."""
        # Each member's type tested inline; _member names a fault.
        patches = answer.get("patches")
        if type(patches) is not list:
            patches = _member(answer, "patches", list)
        try:
            lengths, grown = self._patches(patches, table)
        except _Bad as exc:
            exc.path.append(".patches")
            raise
        scores = answer.get("scores")
        self._scores(scores if type(scores) is dict else _member(answer, "scores", dict))
        actions = answer.get("actions")
        if type(actions) is not dict:
            actions = _member(answer, "actions", dict)
        try:
            self._actions(actions, table, lengths, answer["game_over"])
        except _Bad as exc:
            exc.path.append(".actions")
            raise
        return grown

    def _printed(self, answer: dict[str, Any]) -> None:
        printed = answer.get("printed")
        if printed is not None:
            if type(printed) is not str:
                raise _with(_Bad(f"must be a string, got {_kind(printed)}"), ".printed")
            if len(printed) > self.limits.printed_chars_max:
                raise _with(
                    _Bad(
                        f"holds {len(printed)} characters, over the limit of {self.limits.printed_chars_max}"
                    ),
                    ".printed",
                )

    def _patches(self, patches: list[Any], table: Table) -> tuple[dict[str, int], int]:
        limits = self.limits
        if len(patches) > limits.patches_max:
            _bad(f"holds {len(patches)} patches, over the limit of {limits.patches_max}")
        try:
            lengths = table.check(patches)
        except PatchError as exc:
            index = exc.patch_index or 0
            raise _with(_Bad(exc.message.split(": ", 1)[-1]), f"[{index}]") from None
        size = _NODE_BYTES * 4 * len(patches)
        text_max = limits.string_chars_max
        for i, patch in enumerate(patches):
            op = patch["op"]
            if op in _PLAIN_OPS:
                kind = patch.get("kind")
                if type(kind) is str and len(kind) > text_max:
                    raise _with(
                        _with(_Bad(f"holds {len(kind)} characters, over the limit of {text_max}"), ".kind"),
                        f"[{i}]",
                    )
                continue
            try:
                size += self._patch_values(op, patch)
            except _Bad as exc:
                exc.path.append(f"[{i}]")
                raise
        if size > limits.patch_bytes_max:
            _bad(f"hold about {size} bytes, over the limit of {limits.patch_bytes_max}")
        return lengths, size

    def _patch_values(self, op: str, patch: dict[str, Any]) -> int:
        """Checks of one patch beyond :meth:`Table.check`: its values, ids and sizes; returns its bytes."""
        limits = self.limits
        if op == "add_piece" or op == "insert_piece":  # the most frequent ops first
            try:
                return self._piece(patch["piece"])
            except _Bad as exc:
                exc.path.append(".piece")
                raise
        if op == "log":
            try:
                return self._log_entry(patch["entry"])
            except _Bad as exc:
                exc.path.append(".entry")
                raise
        if op == "set_active_players":
            ids = patch["player_ids"]
            seated = self._ids
            for k, pid in enumerate(ids):
                if type(pid) is not int or pid not in seated:
                    raise _with(_Bad(f"player {pid} is not seated"), f".player_ids[{k}]")
            if len(ids) > 1 and len(set(ids)) != len(ids):
                raise _with(_Bad("names a player twice"), ".player_ids")
            return len(ids) * _NODE_BYTES
        if op in _KEYED_OPS:
            key = patch["key"]
            if len(key) > limits.string_chars_max:
                raise _with(
                    _Bad(f"holds {len(key)} characters, over the limit of {limits.string_chars_max}"), ".key"
                )
            value = patch["value"]
            kind = type(value)
            if kind is str:
                if len(value) > limits.string_chars_max:
                    raise _with(
                        _Bad(f"holds {len(value)} characters, over the limit of {limits.string_chars_max}"),
                        ".value",
                    )
                return len(key) + len(value)
            if kind is bool or value is None or (kind is int and _INT_MIN <= value <= _INT_MAX):
                return len(key)
            try:
                return len(key) + self._value(value, limits.value_depth_max)
            except _Bad as exc:
                exc.path.append(".value")
                raise
        if op == "set_piece_owner" or op == "set_space_owner":
            self._owner(patch.get("owner"), ".owner")
            return 0
        return 0  # pragma: no cover - Table.check knows every op

    def _owner(self, owner: Any, where: str) -> None:
        if owner is not None and (type(owner) is not int or owner not in self._ids):
            raise _with(_Bad(f"player {owner!r} is not seated"), where)

    def _piece(self, piece: dict[str, Any]) -> int:
        owner = piece.get("owner")
        if owner is not None and (type(owner) is not int or owner not in self._ids):
            raise _with(_Bad(f"player {owner!r} is not seated"), ".owner")
        public_kind = piece["public_kind"]
        private_kind = piece.get("private_kind")
        limit = self.limits.string_chars_max
        size = _NODE_BYTES * 5 + len(public_kind)
        if len(public_kind) > limit:  # a str: Table.check, or the caller of a setup state's, saw to it
            raise _with(_Bad(f"holds {len(public_kind)} characters, over the limit of {limit}"), ".public_kind")
        if type(private_kind) is str:
            if len(private_kind) > limit:
                raise _with(
                    _Bad(f"holds {len(private_kind)} characters, over the limit of {limit}"), ".private_kind"
                )
            size += len(private_kind)
        public, private = piece.get("public_state"), piece.get("private_state")
        if public or private:  # empty or absent maps add nothing (the common piece)
            for name, mapping in (("public_state", public), ("private_state", private)):
                if mapping:
                    try:
                        size += self._value(mapping, self.limits.value_depth_max + 1)
                    except _Bad as exc:
                        exc.path.append("." + name)
                        raise
        return size

    def _log_entry(self, entry: dict[str, Any]) -> int:
        limit = self.limits.log_line_chars_max
        text = entry.get("text") or ""
        if len(text) > limit:
            raise _with(_Bad(f"holds {len(text)} characters, over the log line limit of {limit}"), ".text")
        size = len(text) + _NODE_BYTES * 2
        lines = entry.get("for_player") or {}
        for key, line in lines.items():
            if key not in self._keys:
                raise _with(_Bad("is not a seated player id in decimal"), f".for_player{_key(key)}")
            if len(line) > limit:
                raise _with(
                    _Bad(f"holds {len(line)} characters, over the log line limit of {limit}"),
                    f".for_player{_key(key)}",
                )
            size += len(line) + len(key) + _NODE_BYTES
        return size

    def _state(self, state: dict[str, Any], player_ids: Sequence[PlayerId]) -> int:
        """Values, strings and ids of a full setup state; returns its estimated bytes."""
        depth = self.limits.value_depth_max + 1
        size = 0
        players = state.get("players") or []
        if type(players) is not list:
            raise _with(_Bad(f"must be an array, got {_kind(players)}"), ".players")
        seen = [p.get("player_id") if type(p) is dict else None for p in players]
        order = {pid: rank for rank, pid in enumerate(player_ids)}
        ranks = [order.get(pid) if type(pid) is int else None for pid in seen]
        if None in ranks or ranks != sorted(set(ranks)):  # type: ignore[type-var]
            raise _with(
                _Bad(f"must be seated players {list(player_ids)}, each once, in seat order; got {seen}"),
                ".players",
            )
        active = state.get("active_player_ids") or []
        if type(active) is list:
            for k, pid in enumerate(active):
                if type(pid) is not int or pid not in self._ids:
                    raise _with(_Bad(f"player {pid!r} is not seated"), f".active_player_ids[{k}]")
        for i, player in enumerate(players):
            for name in ("public_state", "private_state"):
                try:
                    size += self._value(player.get(name) or {}, depth)
                except _Bad as exc:
                    exc.path += ["." + name, f".players[{i}]"]
                    raise
        spaces = state.get("spaces") or []
        if type(spaces) is not list:
            raise _with(_Bad(f"must be an array, got {_kind(spaces)}"), ".spaces")
        for i, space in enumerate(spaces):
            try:
                if type(space) is not dict:
                    _bad(f"must be an object, got {_kind(space)}")
                for name in ("space_id", "kind"):
                    text = space.get(name)
                    if type(text) is str and len(text) > self.limits.string_chars_max:
                        raise _with(
                            _Bad(
                                f"holds {len(text)} characters, over the limit of "
                                f"{self.limits.string_chars_max}"
                            ),
                            "." + name,
                        )
                self._owner(space.get("owner"), ".owner")
                for name in ("public_state", "private_state"):
                    mapping = space.get(name)
                    if not mapping:  # absent, null or empty: nothing to check
                        size += 2
                        continue
                    try:
                        size += self._value(mapping, depth)
                    except _Bad as exc:
                        exc.path.append("." + name)
                        raise
                pieces = space.get("pieces") or []
                if type(pieces) is list:
                    for k, piece in enumerate(pieces):
                        if type(piece) is dict and type(piece.get("public_kind")) is str:
                            try:
                                size += self._piece(piece)
                            except _Bad as exc:
                                exc.path.append(f".pieces[{k}]")
                                raise
            except _Bad as exc:
                exc.path.append(f".spaces[{i}]")
                raise
        try:
            size += self._value(state.get("meta_data") or {}, depth)
        except _Bad as exc:
            exc.path.append(".meta_data")
            raise
        log = state.get("log") or []
        if type(log) is list:
            for i, entry in enumerate(log):
                if (
                    type(entry) is dict
                    and type(entry.get("text", "")) is str
                    and type(entry.get("for_player") or {}) is dict
                ):
                    try:
                        size += self._log_entry(entry)
                    except _Bad as exc:
                        exc.path.append(f".log[{i}]")
                        raise
        return size

    def _scores(self, scores: dict[str, Any]) -> None:
        limit = self.limits.score_points_max
        keys = self._keys
        for key, score in scores.items():  # fast path; the detailed one below names a fault
            if key not in keys or type(score) is not dict or not score.keys() <= _SCORE_KEYS:
                break
            public, private = score.get("public_points", _EMPTY), score.get("private_points", _EMPTY)
            if (
                type(public) is not list
                or type(private) is not list
                or len(public) > limit
                or len(private) > limit
            ):
                break
            bad = False
            for points in (public, private):  # plain loops: a generator per list costs more than the check
                for p in points:
                    if type(p) is not float or not _finite(p):
                        bad = True
                        break
            if bad:
                break
        else:
            return
        try:
            limit = self.limits.score_points_max
            for key, score in scores.items():
                try:
                    if key not in self._keys:
                        _bad("is not a seated player id in decimal")
                    if type(score) is not dict:
                        _bad(f"must be an object {{public_points, private_points}}, got {_kind(score)}")
                    if not score.keys() <= _SCORE_KEYS:
                        _bad(f"has unknown members {sorted(score.keys() - _SCORE_KEYS)}")
                    for name in _SCORE_LISTS:
                        points = score.get(name, [])
                        try:
                            if type(points) is not list:
                                _bad(f"must be an array of numbers, got {_kind(points)}")
                            if len(points) > limit:
                                _bad(f"holds {len(points)} numbers, over the limit of {limit}")
                            for k, point in enumerate(points):
                                kind = type(point)
                                if (
                                    (kind is not float and kind is not int)
                                    or not math.isfinite(point)
                                    or (kind is int and not _INT_MIN <= point <= _INT_MAX)
                                ):
                                    raise _with(
                                        _Bad(
                                            f"must be a finite number, got {_kind(point)} {_show(point)[:40]}"
                                        ),
                                        f"[{k}]",
                                    )
                        except _Bad as exc:
                            exc.path.append("." + name)
                            raise
                except _Bad as exc:
                    exc.path.append(_key(key))
                    raise
        except _Bad as exc:
            exc.path.append(".scores")
            raise

    def _see_table(self, table: Table) -> None:
        """Take ``table``'s space ids for the offers checks (they never change; a new table comes with undo)."""
        if table is not self._table:
            self._table = table
            self._space_bytes, self._offer_map = _space_checks(self.limits.string_chars_max, tuple(table._spaces))
            self._last_offers = b""

    def _all_offers(self, actions: dict[str, Any], table: Table, lengths: dict[str, int], over: bool) -> bool:
        """The fast path of :meth:`_actions`: True when every player's offers pass as the SDK writes
        them, judged by one regex over the map's JSON (space ids included) and the piece indexes;
        False sends the map through the detailed checks, which accept or name the fault.

        An offers map equal to the previous one that passed on this table, and that clicks no
        piece (piece indexes depend on the patches), passes without the regex.
        """
        keys = self._keys
        limits = self.limits
        per_player = limits.offers_per_player_max
        total = 0
        for key, offers in actions.items():
            if key not in keys or type(offers) is not list:
                return False
            count = len(offers)
            if count > per_player or (over and count):
                return False
            total += count
        if total > limits.offers_total_max:
            return False
        if table is not self._table:
            self._see_table(table)
        try:
            encoded = orjson.dumps(actions, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # not JSON (an integer out of range): the detailed path names it
            return False
        if encoded != self._last_offers:
            assert self._offer_map is not None
            if self._offer_map.fullmatch(encoded) is None:
                return False
            if b'"piece_click"' in encoded:
                spaces = table._spaces
                for index, space in _SORTED_PIECES_RE.findall(encoded):
                    space_id = space.decode()
                    length = lengths.get(space_id)
                    if length is None:
                        length = len(spaces[space_id]["pieces"])
                    if int(index) >= length:
                        return False
            else:
                self._last_offers = encoded
        self._canonical_offers = (actions, encoded)
        return True

    def offers_digest(self, actions: dict[str, Any]) -> str:
        """:func:`tablehost.history.offers_digest` of a checked answer's ``actions`` map, empty lists
        dropped (what a match journals): the canonical JSON the offers check wrote is hashed
        again when ``actions`` is the map it checked last and holds no empty list.

        Returns:
            64 hex digits.
        """
        kept = self._canonical_offers
        if kept is not None and kept[0] is actions and all(actions.values()):
            return hashlib.sha256(kept[1]).hexdigest()
        return history_offers_digest({pid: acts for pid, acts in actions.items() if acts})

    def _actions(self, actions: dict[str, Any], table: Table, lengths: dict[str, int], over: bool) -> None:
        if self._all_offers(actions, table, lengths, over):
            return
        total = 0
        for key, offers in actions.items():
            try:
                if key not in self._keys:
                    _bad("is not a seated player id in decimal")
                if type(offers) is not list:
                    _bad(f"must be an array of offers, got {_kind(offers)}")
                if over and offers:
                    _bad("offers actions although the game is over")
                total += len(offers)
                if total > self.limits.offers_total_max:
                    _bad(f"brings the offers to {total}, over the limit of {self.limits.offers_total_max}")
                self._offers(offers, table, lengths)
            except _Bad as exc:
                exc.path.append(_key(key))
                raise

    def _offers(self, offers: list[Any], table: Table, lengths: dict[str, int]) -> None:
        limit = self.limits.string_chars_max
        if len(offers) > self.limits.offers_per_player_max:
            _bad(f"holds {len(offers)} offers, over the limit of {self.limits.offers_per_player_max}")
        # Fast path: the offers as the SDK writes them, matched by one regex over their JSON;
        # then the named spaces and piece indexes. Anything else takes the detailed path below.
        try:
            encoded = orjson.dumps(offers)
        except TypeError:  # not JSON (an integer out of range): the detailed path names it
            encoded = b""
        if _offers_re(limit).fullmatch(encoded):
            self._see_table(table)
            if self._space_bytes.issuperset(_SPACE_IDS_RE.findall(encoded)):
                if b'"piece_click"' not in encoded:
                    return
                spaces = table._spaces
                for space, index in _PIECES_RE.findall(encoded):
                    space_id = space.decode()
                    length = lengths.get(space_id)
                    if length is None:
                        length = len(spaces[space_id]["pieces"])
                    if int(index) >= length:
                        break
                else:
                    return
        spaces = table._spaces
        for offer in offers:
            if (
                type(offer) is not dict
                or not offer.keys() <= _OFFER_KEYS
                or type(offer.get("intent")) is not str
                or offer["intent"] not in OFFER_INTENTS
            ):
                break
            label = offer.get("label", "")
            action = offer.get("action")
            if type(label) is not str or len(label) > limit or type(action) is not dict:
                break
            kind = action.get("type")
            space_id = action.get("space_id")
            if kind == "space_click":
                if len(action) != 2 or type(space_id) is not str or space_id not in spaces:
                    break
            elif kind == "piece_click":
                index = action.get("index")
                if (
                    len(action) != 3
                    or type(space_id) is not str
                    or space_id not in spaces
                    or type(index) is not int
                ):
                    break
                length = lengths.get(space_id)
                if length is None:
                    length = len(spaces[space_id]["pieces"])
                if not 0 <= index < length:
                    break
            else:
                break
        else:
            return
        for i, offer in enumerate(offers):
            try:
                if type(offer) is not dict:
                    _bad(f"must be an object {{action, intent, label}}, got {_kind(offer)}")
                if not offer.keys() <= _OFFER_KEYS:
                    _bad(f"has unknown members {sorted(offer.keys() - _OFFER_KEYS)}")
                intent = offer.get("intent")
                if type(intent) is not str or intent not in OFFER_INTENTS:
                    if intent == "undo":
                        raise _with(_Bad("is undo, which only the platform offers"), ".intent")
                    raise _with(
                        _Bad(f"must be one of choice, confirm, cancel, got {_show(intent)[:40]}"),
                        ".intent",
                    )
                label = offer.get("label", "")
                if type(label) is not str or len(label) > limit:
                    raise _with(_Bad(_text_problem(label, limit)), ".label")
                action = offer.get("action")
                try:
                    _action(action, table, lengths, limit)
                except _Bad as exc:
                    exc.path.append(".action")
                    raise
            except _Bad as exc:
                exc.path.append(f"[{i}]")
                raise

    def _string(self, text: Any) -> None:
        if type(text) is not str or len(text) > self.limits.string_chars_max:
            _bad(_text_problem(text, self.limits.string_chars_max))

    def _value(self, value: Any, depth: int) -> int:
        """Check one JSON value nested at most ``depth`` containers; return its estimated bytes."""
        kind = type(value)
        if kind is str:
            if len(value) > self.limits.string_chars_max:
                _bad(f"holds {len(value)} characters, over the limit of {self.limits.string_chars_max}")
            return len(value) + 2
        if kind is bool or value is None:
            return _NODE_BYTES
        if kind is int:
            if not _INT_MIN <= value <= _INT_MAX:
                _bad(f"is an integer outside the 64-bit range JSON readers share: {value}")
            return _NODE_BYTES
        if kind is float:
            if not math.isfinite(value):
                _bad(f"must be a finite number, got {value!r}")
            return _NODE_BYTES
        if kind is dict:
            if depth <= 0:
                _bad(f"is nested deeper than {self.limits.value_depth_max} levels")
            size = 2
            limit = self.limits.string_chars_max
            for key, item in value.items():
                # Fast path: a short string key with a scalar that passes (the sizes below are
                # what the detailed path adds); anything else goes through it.
                if type(key) is str and len(key) <= limit:
                    scalar = type(item)
                    if scalar is str:
                        if len(item) <= limit:
                            size += len(key) + len(item) + 5
                            continue
                    elif scalar is bool or item is None:
                        size += len(key) + 3 + _NODE_BYTES
                        continue
                    elif scalar is int:
                        if _INT_MIN <= item <= _INT_MAX:
                            size += len(key) + 3 + _NODE_BYTES
                            continue
                    elif scalar is float and _finite(item):
                        size += len(key) + 3 + _NODE_BYTES
                        continue
                try:
                    if type(key) is not str:
                        _bad(f"has a key that is not a string: {key!r}")
                    size += len(key) + 3 + self._value(item, depth - 1)
                    if len(key) > self.limits.string_chars_max:
                        _bad(
                            f"has a key of {len(key)} characters, over the limit of "
                            f"{self.limits.string_chars_max}"
                        )
                except _Bad as exc:
                    exc.path.append(_key(str(key)))
                    raise
            return size
        if kind is list:
            if depth <= 0:
                _bad(f"is nested deeper than {self.limits.value_depth_max} levels")
            size = 2
            limit = self.limits.string_chars_max
            for i, item in enumerate(value):
                scalar = type(item)  # fast path as for objects
                if scalar is str:
                    if len(item) <= limit:
                        size += len(item) + 3
                        continue
                elif scalar is bool or item is None:
                    size += _NODE_BYTES + 1
                    continue
                elif scalar is int:
                    if _INT_MIN <= item <= _INT_MAX:
                        size += _NODE_BYTES + 1
                        continue
                elif scalar is float and _finite(item):
                    size += _NODE_BYTES + 1
                    continue
                try:
                    size += self._value(item, depth - 1) + 1
                except _Bad as exc:
                    exc.path.append(f"[{i}]")
                    raise
            return size
        _bad(f"is not a JSON value ({kind.__name__})")


def _show(value: Any) -> str:
    """A value as JSON for a refusal message (``repr`` when it is not JSON); callers cut it short."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


def _with(exc: _Bad, segment: str) -> _Bad:
    exc.path.append(segment)
    return exc


def _text_problem(text: Any, limit: int) -> str:
    if type(text) is not str:
        return f"must be a string, got {_kind(text)}"
    return f"holds {len(text)} characters, over the limit of {limit}"


def _object(answer: Any) -> None:
    if type(answer) is not dict:
        _bad(f"the answer must be a JSON object, got {_kind(answer)}")


def _member(answer: dict[str, Any], name: str, kind: type) -> Any:
    value = answer.get(name)
    if type(value) is not kind:
        raise _with(
            _Bad(f"must be {_kind(kind())}, got {_kind(value) if name in answer else 'nothing'}"), "." + name
        )
    return value


def _action(action: Any, table: Table, lengths: dict[str, int], limit: int) -> None:
    if type(action) is not dict:
        _bad(f"must be an object, got {_kind(action)}")
    kind = action.get("type")
    if kind == "space_click":
        _known(action, _SPACE_CLICK_KEYS)
        _space_id(action, table)
    elif kind == "piece_click":
        _known(action, _PIECE_CLICK_KEYS)
        space_id = _space_id(action, table)
        index = action.get("index")
        length = lengths.get(space_id)
        if length is None:
            length = table.length(space_id) or 0
        if type(index) is not int or not 0 <= index < length:
            raise _with(
                _Bad(
                    f"{_show(index)[:40]} names no piece of space "
                    f"{space_id!r} ({length} pieces after the patches)"
                ),
                ".index",
            )
    elif kind == "button_click":
        _known(action, _BUTTON_CLICK_KEYS)
        button = action.get("button")
        if type(button) is not dict:
            raise _with(_Bad(f"must be an object, got {_kind(button)}"), ".button")
        if not button.keys() <= _BUTTON_KEYS:
            raise _with(_Bad(f"has unknown members {sorted(button.keys() - _BUTTON_KEYS)}"), ".button")
        for name in ("id", "label", "location"):
            text = button.get(name, "")
            if type(text) is not str or len(text) > limit or (name == "id" and name not in button):
                why = "is missing" if name not in button else _text_problem(text, limit)
                raise _with(_with(_Bad(why), "." + name), ".button")
        if type(button.get("disabled", False)) is not bool:
            raise _with(_with(_Bad("must be a boolean"), ".disabled"), ".button")
    else:
        raise _with(
            _Bad(f"must be space_click, piece_click or button_click, got {_show(kind)[:40]}"),
            ".type",
        )


_SPACE_CLICK_KEYS = frozenset(("type", "space_id"))
_PIECE_CLICK_KEYS = frozenset(("type", "space_id", "index"))
_BUTTON_CLICK_KEYS = frozenset(("type", "button"))


def _known(action: dict[str, Any], keys: frozenset[str]) -> None:
    unknown = action.keys() - keys
    if unknown:
        _bad(
            f"has unknown members {sorted(unknown)} (an offer is matched exactly, so it could never be played)"
        )


def _space_id(action: dict[str, Any], table: Table) -> str:
    space_id = action.get("space_id")
    if type(space_id) is not str or table.length(space_id) is None:
        raise _with(_Bad(f"{_show(space_id)[:60]} names no space"), ".space_id")
    return space_id


def _refuse(op: str, exc: _Bad, answer: Any, limits: AnswerLimits) -> NoReturn:
    """Raise the ``guest/protocol`` refusal of ``answer`` to ``op`` at ``exc``'s path, carrying
    what the answer printed (for the admin and the author, as a trap's output is) when its
    ``printed`` is a string within ``limits.printed_chars_max``."""
    path = op + "".join(reversed(exc.path))
    printed = answer.get("printed") if type(answer) is dict else None
    if type(printed) is not str or len(printed) > limits.printed_chars_max:
        printed = ""
    raise GuestProtocolError(
        f"guest {op} answer refused at {path}: {exc.why}", op=op, path=path, printed=printed
    ) from None


# ---------------------------------------------------------------- parse time


def has_duplicate_keys(raw: bytes, parsed: Any) -> bool:
    """Whether the JSON text ``raw`` (which orjson parsed into ``parsed``) repeats a key in an object.

    orjson keeps the last of repeated keys silently, so a module could answer one thing to a
    reader that keeps the first and another to us; the host refuses such answers. Fast path:
    when re-encoding ``parsed`` gives ``raw`` back byte for byte (the SDK writes compact JSON in
    the order orjson keeps), nothing was dropped. Otherwise the slow path parses again with
    :mod:`json`, watching every object's pairs.

    Args:
        raw: the response bytes as the guest wrote them.
        parsed: ``orjson.loads(raw)``.

    Returns:
        True when some object holds a key twice.
    """
    if orjson.dumps(parsed) == raw:
        return False
    duplicate = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal duplicate
        result = dict(items)
        if len(result) != len(items):
            duplicate = True
        return result

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return False  # orjson accepted it; json's own limits are not the module's fault
    return duplicate


def value_depth(value: Any) -> int:
    """Containers nested in a JSON value: 0 for a scalar, ``1 + max(children)`` otherwise (iterative)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if type(item) is dict:
            stack.extend((child, depth + 1) for child in item.values())
        elif type(item) is list:
            stack.extend((child, depth + 1) for child in item)
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
    return deepest
