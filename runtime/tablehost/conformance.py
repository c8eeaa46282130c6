"""``tablehost check``: the conformance report a game author runs before uploading.

Seeded random games are played on the host as a server would play them (each match on its own
warm instance, states passed by reference); every guest call is recorded with the full state
it applied to. Then every call is run again in a fresh instance of its own, from the full
state, and the answers are compared key for key (patches, scores, game over, offers, the SDK's
state). A module that keeps anything between calls besides its state cache (a counter, a
``HashMap`` whose iteration order depends on history, leftovers of an earlier request) answers
differently and is reported with the first difference. At setup and after every move every
viewer's view is checked for private parts it may not see (:func:`hidden_kind_places`: a hidden
kind as a whole value or key, or as a whole word of a log line or an action's label), and each
leak says where it was served and at which version. A leak that persists (the same viewer
served the same kind at the same path at later versions) is reported once per game, at the
version it first appeared, with the last version it was still served at and at how many
versions. Budget use per op (fuel, wall-clock time, memory) comes from the fresh-instance runs.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import orjson

from tablehost._stacks import on_big_stack
from tablehost.errors import GuestError, TablehostError
from tablehost.guest import OP_ACTIONS, OP_GAME_OVER, OP_NAMES, OP_SCORES, OP_SETUP, OP_STEP, Guest, GuestPool
from tablehost.limits import Limits
from tablehost.match import Match, MoveRecord
from tablehost.metadata import read_metadata, resolve_options
from tablehost.module import GameModule
from tablehost.rng import Rng
from tablehost.selfplay import play_game
from tablehost.types import StateDict

MAX_DIFFERENCES = 20
"""Differences kept in a report (the first one matters most)."""


@dataclass(frozen=True)
class Difference:
    """A call whose answer in a fresh instance differs from its answer during play.

    Attributes:
        game: game number (0-based); ``seed`` its seed (``play --seed`` replays it).
        call: the call's number within its game (0 = setup).
        op: the op name.
        path: where the answers first differ, e.g. ``"patches[2].value"``.
        played: the value during play at ``path`` (JSON text, cut to 200 characters).
        fresh: the value in the fresh instance at ``path`` (same form).
    """

    game: int
    seed: int
    call: int
    op: str
    path: str
    played: str
    fresh: str


@dataclass
class LeakPlace:
    """Where a viewer was served a hidden kind.

    Attributes:
        path: the JSON path in what the viewer was served: ``state.spaces[3].public_state.face``
            (a whole string value), ``state.meta_data.queen_of_spades`` (a key: the path ends
            with it), ``state.log[2].text`` or ``actions[0].label`` (a whole word of free text),
            ``scores...``. Paths index the view as served (view indexes, the viewer's log lines).
        kind: the hidden ``private_kind`` found there.
        last_version: in a :class:`CheckReport`, the last version of the game at which the
            viewer was still served ``kind`` at ``path`` (the leak's own ``version`` when only
            then); None as :func:`hidden_kind_places` returns it (one view, no history).
        versions: in a report, at how many of the versions checked (setup, then after every
            move) the viewer was served ``kind`` at ``path``, from the leak's ``version`` to
            ``last_version`` (fewer than the versions between them when it went away and came
            back); 1 from :func:`hidden_kind_places`.
    """

    path: str
    kind: str
    last_version: int | None = None
    versions: int = 1


@dataclass(frozen=True)
class Leak:
    """Private kinds a viewer was served although it may not see them, first served at one version.

    In a :class:`CheckReport` each distinct leak (the same viewer served the same kind at the
    same path) is said once per game: at the version it first appeared, its place saying how
    long it persisted (:attr:`LeakPlace.last_version`, :attr:`LeakPlace.versions`). A version
    that only serves leaks said before adds no :class:`Leak`.

    Attributes:
        game, seed: the game; ``version``: the match version the view reflects, 0 at setup
            (before the first move), else the version after the move.
        viewer: the player id, or ``None`` for a spectator.
        kinds: the hidden ``private_kind`` values first served at ``version`` (the places new
            at this version), sorted.
        places: where each was found (:class:`LeakPlace`), the first :data:`MAX_LEAK_PLACES`.
    """

    game: int
    seed: int
    version: int
    viewer: int | None
    kinds: list[str]
    places: list[LeakPlace] = field(default_factory=list)


MAX_LEAK_PLACES = 20
"""Places kept per :class:`Leak` (a kind leaked in every piece of a space is said once per piece)."""

LeakKey = tuple[int | None, str, str]
"""What makes a leak distinct within a game: ``(viewer, path, kind)``."""


@dataclass(frozen=True)
class OpBudget:
    """Budget use of one op over all its fresh-instance runs.

    Attributes:
        op: the op name; ``calls``: how many ran.
        fuel_max, fuel_mean: fuel units per call.
        wall_ms_max, wall_ms_mean: wall-clock milliseconds per call.
        memory_bytes_max: the largest linear memory after a call, bytes.
    """

    op: str
    calls: int
    fuel_max: int
    fuel_mean: float
    wall_ms_max: float
    wall_ms_mean: float
    memory_bytes_max: int


@dataclass
class CheckReport:
    """What ``tablehost check`` found.

    Attributes:
        module: the module's name; ``sha256`` its digest.
        games, seed, players: what was played (game *i* has seed ``Rng(seed)`` output *i*).
        options: the options given (``check --option``), every other declared option at its
            default; empty for none.
        calls: guest calls recorded and re-run.
        differences: the first :data:`MAX_DIFFERENCES` differing calls; ``difference_count`` all.
        leaks: every distinct leak found, once per game at the version it first appeared
            (:class:`Leak`; how long each place persisted is in its :class:`LeakPlace`).
        failures: ``"game G (seed S): code: message"`` for every game that failed to play.
        budgets: per op name.
    """

    module: str
    sha256: str
    games: int
    seed: int
    players: int
    calls: int = 0
    difference_count: int = 0
    differences: list[Difference] = field(default_factory=list)
    leaks: list[Leak] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    budgets: dict[str, OpBudget] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No difference, no leak and no failure."""
        return not (self.difference_count or self.leaks or self.failures)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-ready dict (``check --json``)."""
        return {**asdict(self), "ok": self.ok}


class _RecordingPool:
    """A :class:`GuestPool` stand-in: each call is delegated, then run again in a fresh instance and compared.

    The fresh run happens before the answer is returned, so the state it is given is exactly
    the one the played call applied to (the match has not applied the answer yet).
    """

    def __init__(
        self, pool: GuestPool, module: GameModule, game: int, game_seed: int, report: CheckReport,
        stats: dict[str, list[tuple[int, float, int]]],
    ) -> None:
        self.pool = pool
        self.limits = pool.limits
        self._module = module
        self._game = game
        self._game_seed = game_seed
        self._report = report
        self._stats = stats
        self._number = 0

    def discard_ref(self, state_ref: str) -> None:
        self.pool.discard_ref(state_ref)

    def metadata(self) -> dict[str, Any] | None:
        """The module's metadata answer (:meth:`GuestPool.metadata`, asked once per pool): the
        games are played with the module's declared options, player range and result rule."""
        return self.pool.metadata()

    def setup(
        self, players: list[dict[str, Any]], seed: int, next_ref: str, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        answer = self.pool.setup(players, seed, next_ref, options)
        request: dict[str, Any] = {"players": players, "seed": seed, "next_ref": next_ref}
        if options:
            request["options"] = options  # as GuestPool.setup sends them
        self._compare(OP_SETUP, request, answer)
        return answer

    def step(
        self, state_ref: str, get_state: Callable[[], StateDict], next_ref: str, player_id: int,
        action: dict[str, Any], seed: int, *, want_state: bool = False,
    ) -> dict[str, Any]:
        answer = self.pool.step(state_ref, get_state, next_ref, player_id, action, seed, want_state=want_state)
        fields: dict[str, Any] = {"next_ref": next_ref, "player_id": player_id, "action": action, "seed": seed}
        if want_state:
            fields["want_state"] = True
        self._compare(OP_STEP, {"state": get_state(), **fields}, answer)
        return answer

    def actions(self, state_ref: str, get_state: Callable[[], StateDict], player_id: int) -> list[Any]:
        actions = self.pool.actions(state_ref, get_state, player_id)
        self._compare(OP_ACTIONS, {"state": get_state(), "player_id": player_id}, {"actions": actions})
        return actions

    def scores(self, state_ref: str, get_state: Callable[[], StateDict]) -> dict[str, Any]:
        answer = self.pool.scores(state_ref, get_state)
        self._compare(OP_SCORES, {"state": get_state()}, answer)
        return answer

    def game_over(self, state_ref: str, get_state: Callable[[], StateDict]) -> dict[str, Any]:
        answer = self.pool.game_over(state_ref, get_state)
        self._compare(OP_GAME_OVER, {"state": get_state()}, answer)
        return answer

    def _compare(self, op: int, request: dict[str, Any], played: dict[str, Any]) -> None:
        """Run ``request`` in a fresh instance; count its budget use; record a difference from ``played``."""
        op_name = OP_NAMES[op]
        number, self._number = self._number, self._number + 1
        guest = Guest(self._module, self.limits)
        try:
            fresh = guest.call(op, request)
        except GuestError as exc:
            fresh = {"error": f"{exc.code}: {exc}"}
        if guest.last_stats is not None:
            last = guest.last_stats
            self._stats.setdefault(op_name, []).append((last.fuel, last.wall_ms, last.memory_bytes))
        if op == OP_ACTIONS and "actions" in fresh:
            fresh = {"actions": fresh["actions"]}
        report = self._report
        report.calls += 1
        difference = first_difference(_comparable(played), _comparable(fresh))
        if difference is None:
            return
        report.difference_count += 1
        if len(report.differences) < MAX_DIFFERENCES:
            path, was, now = difference
            report.differences.append(Difference(self._game, self._game_seed, number, op_name, path, was, now))


def check_module(
    module: GameModule,
    *,
    games: int = 10,
    seed: int = 1,
    players: int = 2,
    max_plies: int = 2_000,
    limits: Limits | None = None,
    quarantine: bool = False,
    options: dict[str, Any] | None = None,
) -> CheckReport:
    """Play ``games`` seeded random games, re-run every call in a fresh instance, look for leaks.

    Args:
        module: the compiled module.
        games: games to play (>= 1); game *i* is seeded with output *i* of ``Rng(seed)``.
        seed: the check's seed (0 <= seed < 2**64).
        players: seats per game (bots choose at random among the offered actions).
        max_plies: a game still running after this many moves is cut off (not a failure).
        limits: budgets (default the module's).
        quarantine: let the pool quarantine the module after repeated failures (a server's
            upload check: later games then fail at once as ``module/quarantined``). False (the
            default, ``tablehost check``): every game reports its own failure.
        options: game options by name for every game (checked against the module's declared
            options before the first game; defaults for the rest).

    Returns:
        The :class:`CheckReport`.

    Raises:
        ValueError: ``games`` or ``players`` below 1.
        SetupRefused: an option the module does not declare, or a value it does not allow.
        GuestError: the module's ``metadata`` op failed while ``options`` were checked.
    """
    if games < 1 or players < 1:
        raise ValueError(f"games and players must be at least 1 (got {games} games, {players} players)")
    limits = limits or module.limits
    return on_big_stack(
        limits.stack_bytes, lambda: _check(module, games, seed, players, max_plies, limits, quarantine, options or {})
    )


def _check(
    module: GameModule, games: int, seed: int, players: int, max_plies: int, limits: Limits, quarantine: bool,
    options: dict[str, Any],
) -> CheckReport:
    report = CheckReport(module.name, module.sha256, games, seed, players)
    stats: dict[str, list[tuple[int, float, int]]] = {}
    rng = Rng(seed)
    pool = GuestPool(module, limits, quarantine=quarantine)
    try:
        if options:  # refused before any game, not once per game as a failure
            report.options = resolve_options(read_metadata(pool), options)
        for game in range(games):
            game_seed = rng.next_u64()
            recorder = _RecordingPool(pool, module, game, game_seed, report, stats)
            seen: dict[LeakKey, LeakPlace | None] = {}  # this game's leaks so far (None: past the cap)
            record_leaks = partial(_record_leaks, report, game, game_seed, seen)

            try:  # the recorder stands in for the pool: it delegates, then re-runs in a fresh instance
                play_game(
                    recorder,  # type: ignore[arg-type]
                    ["random"] * players,
                    game_seed,
                    match_id=f"check-{game}",
                    max_plies=max_plies,
                    module_sha256=module.sha256,
                    check_mirror=True,
                    on_move=record_leaks,
                    on_start=partial(record_leaks, move=None),  # leaks at setup
                    options=options,
                )
            except TablehostError as exc:
                report.failures.append(f"game {game} (seed {game_seed}): {exc.code}: {exc}")
    finally:
        pool.close()
    report.budgets = {op: _summarise(op, runs) for op, runs in sorted(stats.items())}
    return report


def _record_leaks(
    report: CheckReport,
    game: int,
    game_seed: int,
    seen: dict[LeakKey, LeakPlace | None],
    match: Match,
    move: MoveRecord | None,
) -> None:
    """Add a :class:`Leak` to ``report`` for every viewer (spectator first) served a hidden kind
    now (after ``move``, or at setup when it is None) at a place not served before in this game;
    a place served before only extends its :class:`LeakPlace` (``last_version``, ``versions``).

    Args:
        seen: this game's leaks so far by :data:`LeakKey`, updated here; None for a place past
            :data:`MAX_LEAK_PLACES` of its leak (not reported, never reported again).
    """
    version = match.version
    for viewer in [None, *(p.player_id for p in match.players)]:
        fresh: list[LeakPlace] = []
        for place in hidden_kind_places(match, viewer, move):
            key = (viewer, place.path, place.kind)
            if key not in seen:
                place = LeakPlace(place.path, place.kind, last_version=version)
                seen[key] = place if len(fresh) < MAX_LEAK_PLACES else None
                fresh.append(place)
                continue
            earlier = seen[key]
            if earlier is not None and earlier.last_version != version:  # persists: said once, counted
                earlier.last_version = version
                earlier.versions += 1
        if fresh:
            kinds = sorted({place.kind for place in fresh})
            report.leaks.append(Leak(game, game_seed, version, viewer, kinds, fresh[:MAX_LEAK_PLACES]))


def first_difference(left: Any, right: Any) -> tuple[str, str, str] | None:
    """The first place two JSON values differ: ``(path, left at path, right at path)``, or None.

    Values are equal when their canonical JSON is (so ``1`` and ``1.0`` differ). Dict keys are
    visited in sorted order, lists index by index; values are shown as JSON text cut to 200
    characters.
    """
    if orjson.dumps(left, option=orjson.OPT_SORT_KEYS) == orjson.dumps(right, option=orjson.OPT_SORT_KEYS):
        return None
    return _difference(left, right, "")


def _difference(left: Any, right: Any, path: str) -> tuple[str, str, str] | None:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right)):
            where = f"{path}.{key}" if path else str(key)
            if key not in left or key not in right:
                return where, _short(left.get(key, "<absent>")), _short(right.get(key, "<absent>"))
            found = _difference(left[key], right[key], where)
            if found is not None:
                return found
        return None
    if isinstance(left, list) and isinstance(right, list):
        for index, (a, b) in enumerate(zip(left, right)):
            found = _difference(a, b, f"{path}[{index}]")
            if found is not None:
                return found
        if len(left) != len(right):
            return f"{path}.length", str(len(left)), str(len(right))
        return None
    if type(left) is not type(right) or left != right:
        return path or "(answer)", _short(left), _short(right)
    return None


def hidden_kinds_served(match: Match, viewer: int | None, move: MoveRecord | None = None) -> list[str]:
    """Private kinds hidden from ``viewer`` that appear in what ``viewer`` is served now.

    :func:`hidden_kind_places` says where (and gives the rule); this is the set of kinds found.

    Args:
        match: the match after ``move`` (or at setup).
        viewer: a player id, or ``None`` for a spectator.
        move: the move just applied, if any.

    Returns:
        The leaked kinds, sorted; empty when nothing leaked.
    """
    return sorted({place.kind for place in hidden_kind_places(match, viewer, move)})


def hidden_kind_places(match: Match, viewer: int | None, move: MoveRecord | None = None) -> list[LeakPlace]:
    """Where a private kind hidden from ``viewer`` appears in what ``viewer`` is served now.

    A kind counts as hidden when some piece carries it privately and ``viewer`` is not that
    piece's viewer (docs/architecture.md "Views"), and no piece the viewer may see shows it
    (publicly or privately). The view's state, actions and scores are searched; of the log,
    only the lines ``move`` wrote (older lines are history: a card played face up may be dealt
    face down again), skipping kinds the move itself turned face up. With no ``move`` at
    version 0 (setup) every log line is setup's and is searched; with no ``move`` later, none.

    The rule is structural, so a kind that is only part of another string is no leak (card
    ``2b`` in colour ``#c0392b``, ``ace`` in ``space_click``):

    - a kind leaks where it is a whole string value, or a whole object key, anywhere in the
      state (but the log), the actions and the scores;
    - free text (a log line's ``text`` and an offered action's ``label``) is prose that names
      things, e.g. ``"seat1 plays 2b"``: there a kind of two or more characters leaks as a
      whole word, i.e. not preceded or followed by a letter, digit or ``_`` (``plays 2b.``
      leaks ``2b``, ``#c0392b`` does not). A one-character kind is matched only as a whole
      value (as a word of prose, ``a`` or ``I`` says nothing).

    Matching is case-sensitive.

    Args:
        match: the match after ``move`` (or at setup).
        viewer: a player id, or ``None`` for a spectator.
        move: the move just applied, if any.

    Returns:
        Each place a hidden kind was found, in the order the view is walked (state, log,
        actions, scores); empty when nothing leaked.
    """
    state = match.state
    visible: set[str] = set()
    hidden: set[str] = set()
    for space in state["spaces"]:
        for piece in space["pieces"]:
            visible.add(piece["public_kind"])
            kind = piece.get("private_kind")
            if kind is None:
                continue
            owner = piece["owner"] if piece.get("owner") is not None else space.get("owner")
            (visible if viewer is not None and owner == viewer else hidden).add(kind)
    secret = hidden - visible
    if not secret:
        return []
    served = match.view(viewer)
    if move is not None:
        patches = move.patches
        written = sum(1 for p in patches if p["op"] == "log")
    else:
        patches = match.setup["patches"] if match.version == 0 else []
        written = len(served.state["log"]) if match.version == 0 else 0
    turned_up = {p["kind"] for p in patches if p["op"] == "set_public_kind"}
    places: list[LeakPlace] = []
    words = _WordFinder(secret)
    shown = {k: v for k, v in served.state.items() if k != "log"}
    _find_whole(shown, "state", secret, places)
    log = served.state["log"]
    first = max(0, len(log) - written)  # the lines this move (or setup) wrote are the last ones
    in_log = _WordFinder(secret - turned_up)
    for index in range(first, len(log)):
        path = f"state.log[{index}].text"
        places.extend(LeakPlace(path, kind) for kind in in_log.kinds_in(log[index]["text"]))
    for index, offered in enumerate(served.actions):
        path = f"actions[{index}]"
        for key, value in offered.items():
            if key == "label" and isinstance(value, str):
                places.extend(LeakPlace(f"{path}.label", kind) for kind in words.kinds_in(value))
            else:
                if key in secret:
                    places.append(LeakPlace(f"{path}.{key}", key))
                _find_whole(value, f"{path}.{key}", secret, places)
    _find_whole(served.scores, "scores", secret, places)
    return places


def _find_whole(value: Any, path: str, secret: set[str], places: list[LeakPlace]) -> None:
    """Append a :class:`LeakPlace` for each string value or object key under ``value`` that is a kind of ``secret``."""
    if isinstance(value, str):
        if value in secret:
            places.append(LeakPlace(path, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}"
            if key in secret:
                places.append(LeakPlace(where, key))
            _find_whole(item, where, secret, places)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _find_whole(item, f"{path}[{index}]", secret, places)


class _WordFinder:
    """The kinds of two or more characters that occur as whole words of a free text (see
    :func:`hidden_kind_places`)."""

    def __init__(self, kinds: set[str]) -> None:
        self._kinds = kinds
        self._patterns = [
            (kind, re.compile(rf"(?<!\w){re.escape(kind)}(?!\w)")) for kind in sorted(kinds) if len(kind) >= 2
        ]

    def kinds_in(self, text: str) -> list[str]:
        """The kinds in ``text``: each of two or more characters found as a whole word, sorted;
        a one-character kind only when it is the whole text."""
        if len(text) == 1:
            return [text] if text in self._kinds else []
        return [kind for kind, pattern in self._patterns if kind in text and pattern.search(text)]


def describe_viewer(viewer: int | None) -> str:
    """``"spectator"`` for ``None``, else ``"player 2"``."""
    return "spectator" if viewer is None else f"player {viewer}"


def describe_leak(leak: Leak, places: int = 3) -> str:
    """One line for people about ``leak``: which game and version, who, which kinds and where.

    Args:
        leak: the leak.
        places: how many of its places to name (the rest are counted).

    Returns:
        ``"game 0 (seed 5) at setup: spectator was served hidden kind 'queen_of_spades' at
        state.meta_data.peek"``; after a move ``at version 3``; a place still served later
        ``... at state.meta_data.peek (served until version 9: 10 versions)``; a kind found in
        several places ``... at state.log[4].text, actions[0].label and 2 more``; several kinds
        ``... was served hidden kinds '2b' at state.log[4].text and 'ace' at actions[0].label``.
    """
    when = "at setup" if leak.version == 0 else f"at version {leak.version}"
    single = len(leak.kinds) == 1
    named = [
        (place.path if single else f"{place.kind!r} at {place.path}") + _persisted(place)
        for place in leak.places[:places]
    ]
    if len(leak.places) > places:
        named.append(f"{len(leak.places) - places} more")
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1] if named else ""
    if single:
        what = f"hidden kind {leak.kinds[0]!r}" + (f" at {listed}" if listed else "")
    else:
        what = "hidden kinds " + (listed or ", ".join(map(repr, leak.kinds)))
    return f"game {leak.game} (seed {leak.seed}) {when}: {describe_viewer(leak.viewer)} was served {what}"


def _persisted(place: LeakPlace) -> str:
    """`` (served until version 9: 10 versions)`` for a place served at more than one version, else ``""``."""
    if place.last_version is None or place.versions < 2:
        return ""
    return f" (served until version {place.last_version}: {place.versions} versions)"


def _comparable(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k != "printed"}


def _short(value: Any) -> str:
    text = orjson.dumps(value, default=str).decode()
    return text if len(text) <= 200 else text[:197] + "..."


def _summarise(op: str, runs: list[tuple[int, float, int]]) -> OpBudget:
    return OpBudget(
        op=op,
        calls=len(runs),
        fuel_max=max(r[0] for r in runs),
        fuel_mean=round(statistics.fmean(r[0] for r in runs), 1),
        wall_ms_max=round(max(r[1] for r in runs), 3),
        wall_ms_mean=round(statistics.fmean(r[1] for r in runs), 3),
        memory_bytes_max=max(r[2] for r in runs),
    )


def describe_options(options: dict[str, Any]) -> str:
    """``target_score=50, misere=true``: options as ``--option`` takes them (booleans lowercase;
    ``check`` and ``tablehost matches`` show them so)."""
    return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items())


def format_report(report: CheckReport) -> str:
    """The report as the text ``tablehost check`` prints."""
    lines = [
        (
            f"{report.module} ({report.sha256[:12]}): {report.games} games of {report.players} players, "
            f"seed {report.seed}, {report.calls} calls re-run in fresh instances"
        ),
        *([f"  options: {describe_options(report.options)}"] if report.options else []),
        f"  differences: {report.difference_count}",
    ]
    for d in report.differences[:5]:
        lines.append(f"    game {d.game} (seed {d.seed}) call {d.call} {d.op}: {d.path}: played {d.played}, "
                     f"fresh {d.fresh}")
    lines.append(f"  leaks: {len(report.leaks)}")
    lines.extend(f"    {describe_leak(leak)}" for leak in report.leaks[:5])
    lines.append(f"  failures: {len(report.failures)}")
    lines.extend(f"    {failure}" for failure in report.failures[:5])
    lines.append("  budget use per op (fresh instance, full state):")
    lines.append(f"    {'op':10s} {'calls':>6s} {'fuel max':>12s} {'fuel mean':>12s} {'ms max':>8s} {'ms mean':>8s} "
                 f"{'memory max':>12s}")
    for b in report.budgets.values():
        lines.append(f"    {b.op:10s} {b.calls:6d} {b.fuel_max:12d} {b.fuel_mean:12.0f} {b.wall_ms_max:8.2f} "
                     f"{b.wall_ms_mean:8.2f} {b.memory_bytes_max:12d}")
    lines.append("OK" if report.ok else "FAILED")
    return "\n".join(lines)
