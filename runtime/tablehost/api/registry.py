"""The live matches of one server: modules, matches, tokens, one lock per match, change notices.

:class:`MatchRegistry` is the domain side of the API (it never imports grpc): every method
takes the caller's :class:`~tablehost.api.auth.Principal`, checks what it may do, runs the
request on the match under that match's lock, and journals through the
:class:`~tablehost.store.MatchStore` before the change becomes visible.

On a shared store (PostgreSQL, several server processes) the copy of a match in memory may be
behind the database: a move or undo is stored without holding the match first (one round trip;
the ``(match_id, version)`` key refuses it when another process stored that version), and when
the copy was behind it is redone under the store's hold on the match
(:meth:`~tablehost.store.MatchStore.claim`: no other process changes it meanwhile) on the
reloaded match (:meth:`MatchRegistry._changed`); clock ticks, resignations and aborts take the
hold up front. Reads and watch streams reload when the store
heard of a newer version (its notifications also wake this process's watchers). Matches and
tokens created by another process are loaded on first use.

Check order of a match request: the token's match (PERMISSION_DENIED for another match's
token), unknown match, the token's rights (a spectator cannot act), whether the match started
(a match waiting for its open seats refuses moves, undos, resignations and its record with
``match/waiting``; one aborted while it waited is over, ``match/over``), then the match's own
order (game over, not active, stale version, not offered, the guest).

Beside the running matches it keeps the lobby (matches waiting for players,
:mod:`tablehost.lobby`), each module's metadata (:mod:`tablehost.metadata`), the clocks of
timed matches (:mod:`tablehost.clocks`, advanced by :meth:`MatchRegistry.tick_clocks`), the
seats the host plays for (zombies), and who is connected (an open WatchMatch per seat).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import structlog

from tablehost.api.auth import ADMIN, Principal, ensure_admin_token, hash_token, new_token
from tablehost.api.bot_seats import BotSeats
from tablehost.api.bot_thinker import BotThinker
from tablehost.api.faults import InvalidRequest, PermissionDenied, Unauthenticated, UnknownModule
from tablehost.api.metrics import Metrics
from tablehost.api.server_bots import (
    BOT_MOVES_PER_CALL,
    check_bot_fits,
    check_bot_name,
    needs_sampler,
    play_bots,
)
from tablehost.api.stored_matches import (
    LOBBY_STATUSES,
    live_summary,
    must_run,
    started_summary,
    waiting_summary,
)
from tablehost.api.timekeeper import TickFailures, Timekeeper
from tablehost.api.validation import check_color, check_module_name, check_username
from tablehost.clocks import Clocks, Heartbeat, TimeControl, iso_to_ms, now_ms
from tablehost.conformance import check_module, describe_leak
from tablehost.errors import (
    GuestError,
    MatchError,
    MatchOver,
    MatchWaiting,
    ModuleError,
    NeverStarted,
    PatchError,
    RecordError,
    TablehostError,
    UnknownMatch,
)
from tablehost.guest import GuestPool, check_instantiates
from tablehost.history import MoveRecord, PlayerInfo
from tablehost.limits import DEFAULT_LIMITS, Limits
from tablehost.lobby import PendingMatch, PendingSeat, SeatTaken, is_pending
from tablehost.match import Match, MatchView
from tablehost.metadata import GameMetadata, check_player_count, parse_metadata, resolve_options
from tablehost.module import GameModule, load_module
from tablehost.record import parse_record, resume_match
from tablehost.sampler_probe import samples_hidden
from tablehost.store import Claim, MatchStore, SeatRow, StoreConflict, StoredModule, StoreError, open_store
from tablehost.view import view_actions

log = structlog.get_logger(__name__)
_T = TypeVar("_T")

MAX_SEATS = 64
PALETTE = ("#c0392b", "#2980b9", "#27ae60", "#8e44ad", "#f39c12", "#16a085", "#d35400", "#2c3e50")
WATCH_POLL_S = 0.5
"""How often a waiting watcher re-checks that its client is still there (and, on a shared store,
that the match did not move elsewhere), seconds."""
HEARD_WAIT_S = 0.05
"""How long the store's listener waits for a busy match's lock to wake its watchers, seconds."""
HOST_MOVES_PER_TICK = 200
"""Most moves the host plays for absent seats in one match per clock tick (a bound, so one
match cannot hold the timekeeper)."""
ADOPT_INTERVAL_S = 2.0
"""On a shared store, how often the timekeeper looks for matches this process does not hold in
memory yet (made or started by another process), so their clocks run here too, seconds."""
WARM_INSTANCES_PER_MODULE = 256
"""Instances of one module the server keeps alive (warm for their matches' next calls, each
dropped after ``keep_warm_ms`` idle); calls in flight stay capped at ``instances_per_module``.
With only ``instances_per_module`` (4) instances, 100 live matches each instantiated afresh and
resent their state on every move. Measured: 150-300 KiB of memory per warm instance
(tic-tac-toe, hold'em, Risk)."""
DEFAULT_EVICT_AFTER_S = 300.0
"""Seconds a finished or idle match stays in memory after its last request (``serve
--evict-after``); see :meth:`MatchRegistry.evict_idle`."""
EVICT_INTERVAL_S = 1.0
"""How often the timekeeper looks for matches to evict, seconds."""
WAKE_LEAD_MS = 10_000
"""How long before its next timeout an evicted timed match is loaded again (:meth:`MatchRegistry.wake_timed`),
ms; a timed match whose timeout is nearer than this (plus one eviction interval) is not evicted."""
EMPTY_MODULE = "the module is empty (0 bytes): send the .wasm file's bytes"
"""UploadModule's refusal of no bytes, the same over gRPC and HTTP."""
HOST_INTENTS = ("confirm", "choice")
"""The host's choice for an absent seat: the first offered action of intent ``confirm``, else
the first of intent ``choice``; never ``cancel`` or ``undo`` (so it cannot go back and forth)."""


BOT_TURN_BUDGET_S = 1.0
"""Seconds of ``random``/``first`` server bot moves one request or tick plays past the first
move; the timekeeper plays the rest, a tick at a time (:meth:`MatchRegistry._play_bots`)."""

BOT_REPLY_WAIT_S = 1.0
"""Seconds the reply to the create or last join that starts a match waits for server search
bots' first moves; the search runs on the bot thread, outside the match's lock, and a longer one
lands later (watch shows it) (:meth:`~tablehost.api.bot_seats.BotSeats.await_answer`). A move's
reply never waits for a bot: it answers once the person's own move is durable."""

LIST_WAIT_S = 0.05
"""Seconds ``ListMatches`` waits for a match another request is changing before it lists the
match as it stands (:meth:`MatchRegistry.list_matches`)."""


@dataclass
class LiveMatch:
    """A match in memory with its lock.

    Attributes:
        match: the match (not thread-safe: only touched under ``changed``).
        changed: the match's lock, notified after every change (watchers wait on it).
        views: the newest view served to each viewer (``None``: spectator), reused while the
            match is still at that version, so a viewer's view is built once per version
            however many requests and watch streams ask for it. Only touched under ``changed``.
    """

    match: Match
    changed: threading.Condition
    views: dict[int | None, ServedView] = field(default_factory=dict)
    clocks: Clocks | None = None
    """The clocks of a timed match (None without a time control)."""
    zombies: set[int] = field(default_factory=set)
    """Seats the host plays for (timed out under the ``zombie`` policy) until they come back."""
    connected: Counter[int] = field(default_factory=Counter)
    """Open WatchMatch streams per seat."""
    next_clocks: Clocks | None = None
    """The clocks stamped on the move being submitted (committed once it is accepted)."""
    returned: dict[int, int] = field(default_factory=dict)
    """Seat -> the match version at which it last came back through this process (so a seat
    that came back is not taken for absent again when the stored match is re-read)."""
    pins: int = 0
    """Requests and watch streams using the match now (never evicted while above 0); only
    touched under the registry's ``_lock``."""
    used_at: float = field(default_factory=time.monotonic)
    """When the last request or watch stream using the match ended (``time.monotonic()``, s)."""


@dataclass
class LobbyEntry:
    """A waiting match with its lock (joins run one at a time under it)."""

    pending: PendingMatch
    changed: threading.Condition
    aborted: bool = False
    pins: int = 0
    """Requests and watch streams using the entry now (never evicted while above 0); only
    touched under the registry's ``_lock``."""
    used_at: float = field(default_factory=time.monotonic)
    """When the last request or watch stream using the entry ended (``time.monotonic()``, s)."""


@dataclass(frozen=True)
class CreatedMatch:
    """What CreateMatch returns.

    Attributes:
        match_id: the new match's id.
        seats: ``(player, token)`` per seat in seat order; tokens are shown only here.
        spectator_token: the match's spectator token.
        view: the spectator view at version 0.
        score_labels: names of the score columns.
        open_seats: the seats left open for JoinMatch (1-based).
        extras: what the spectator view shows beside ``view``, as :attr:`ServedView.extras`
            (a timed match's ``clocks`` and ``time_control``); empty when there is none.
    """

    match_id: str
    seats: list[tuple[PlayerInfo, str]]
    spectator_token: str
    view: MatchView
    score_labels: list[str]
    open_seats: list[int] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ServedView:
    """A view with what a client needs besides the :class:`MatchView` itself.

    Attributes:
        match_id: the match.
        viewer: the player id the view is for, ``None`` for the spectator view.
        view: the view.
        score_labels: names of the score columns.
    """

    match_id: str
    viewer: int | None
    view: MatchView
    score_labels: list[str]
    wire: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Room for the API layer to memoise this view's wire form (the registry reuses one
    ``ServedView`` per viewer and version, so the form is built once too)."""
    extras: dict[str, Any] = field(default_factory=dict, compare=False)
    """What changes without a new version, added at serve time: ``clocks`` (``[{"player_id",
    "remaining_ms", "running"}]``), ``time_control``, ``connected`` and ``zombies`` (player ids),
    ``open_seats`` (a waiting match)."""


DEFAULT_CHECK_PLAYERS = 2
"""Seats per game of the upload check for a module that declares no player range (ABI minor 0)."""


def check_player_counts(metadata: GameMetadata, override: int | None) -> list[int]:
    """The seat counts the upload check plays: ``[override]`` when given, else every count of the
    module's declared range (``min_players..max_players``, its metadata op), else
    ``[DEFAULT_CHECK_PLAYERS]``."""
    if override is not None:
        return [override]
    if metadata.declared:
        return list(range(metadata.min_players, metadata.max_players + 1))
    return [DEFAULT_CHECK_PLAYERS]


def _require_check(module: GameModule, games: int, player_counts: list[int], limits: Limits) -> None:
    """Refuse ``module`` unless ``tablehost check`` finds no difference, leak or failure.

    ``games`` games in all, spread over ``player_counts`` in turn, at least one per count.

    Raises:
        ModuleError: with the first finding (and the seat count it was found at).
    """
    for index, players in enumerate(player_counts):
        share = max(1, games // len(player_counts) + (1 if index < games % len(player_counts) else 0))
        _require_check_at(module, share, players, limits)


def _require_check_at(module: GameModule, games: int, players: int, limits: Limits) -> None:
    # Quarantine stays on in the server: a module failing game after game stops costing calls.
    report = check_module(module, games=games, seed=1, players=players, limits=limits, quarantine=True)
    if report.ok:
        return
    if report.differences:
        first = report.differences[0]
        finding = (f"call {first.call} ({first.op}) of game {first.game} answered differently in a fresh "
                   f"instance at {first.path}: {first.played} then {first.fresh}")
    elif report.leaks:
        finding = describe_leak(report.leaks[0])
    else:
        finding = report.failures[0]
    raise ModuleError(f"the module failed tablehost check with {players} players: {finding}", sha256=module.sha256)


class MatchRegistry:
    """Every module and match of one data directory, served to authenticated principals.

    Args:
        data_dir: the server's data directory (admin token, compiled-code cache, and the SQLite
            database unless ``store`` names another).
        limits: guest budgets for every module.
        synchronous: the store's SQLite sync mode (``"FULL"`` or ``"NORMAL"``).
        check_uploads: games of ``tablehost check`` an upload must pass (0: no check).
        check_players: seats per game of that check; None: every count of the module's declared
            player range (:func:`check_player_counts`).
        store: a ``--store`` value (:func:`tablehost.store.open_store`): ``None`` for SQLite in
            ``data_dir``, ``sqlite:DIR``, or ``postgresql://...``.
        metrics: where moves, guest calls, matches and store commits are counted (none: not counted).
        evict_after_s: seconds a finished or idle match stays in memory after its last request
            (None: never evicted); see :meth:`evict_idle`.
        max_live_matches: most matches kept in memory (None: no bound); above it the least
            recently used evictable ones go first, idle or not.

    On construction the admin token is created if missing and every stored match is read once
    (:meth:`_load_at_start`): only the matches that must run without a request are resumed
    into memory (timed ones not over, and those where a server bot or an absent seat is to
    move); every other match is kept as its list summary (:mod:`tablehost.api.stored_matches`)
    and loaded on its first request, exactly as an evicted one. A match that cannot be read or
    resumed is logged (``match.resume_failed``) and left out.

    Raises:
        DataDirUnusable: ``data_dir`` is a file or cannot be created (:mod:`tablehost.store`).
        DataDirInUse: another server has ``data_dir`` open.
        StoreUnusable, StoreUnavailable: ``store`` is malformed or cannot be reached.
    """

    def __init__(
        self,
        data_dir: Path | str,
        *,
        limits: Limits = DEFAULT_LIMITS,
        synchronous: str = "FULL",
        check_uploads: int = 0,
        check_players: int | None = None,
        store: str | None = None,
        metrics: Metrics | None = None,
        evict_after_s: float | None = DEFAULT_EVICT_AFTER_S,
        max_live_matches: int | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.evict_after_s = evict_after_s
        self.max_live_matches = max_live_matches
        self.limits = limits
        self.check_uploads = check_uploads
        self.check_players = check_players
        self.metrics = metrics
        self.store: MatchStore = open_store(store, self.data_dir, synchronous=synchronous)
        if metrics is not None:
            self.store.on_commit = metrics.store_commit.observe
            self.store.on_journaled = self._count_journaled
            metrics.watch_matches(self._match_states)
            metrics.matches_in_memory.set_function(lambda: len(self._matches))
        try:
            self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.admin_token_path, admin_token = ensure_admin_token(self.data_dir)
            # Any process on a shared database accepts the admin token of any other.
            self.store.add_admin_token(hash_token(admin_token), _utc_now())
        except BaseException:
            self.store.close()
            raise
        self._lock = threading.Lock()
        self._closing = False
        self.closed = threading.Event()
        """Set once :meth:`close` ran (background checks stop then)."""
        self._pools: dict[str, GuestPool] = {}
        self._metadata: dict[str, GameMetadata] = {}
        self._samplers: dict[str, bool] = {}
        """Module -> whether it implements ``Game::sample_hidden`` (asked once, :meth:`_samples_hidden`)."""
        self._resume_pools: dict[str, GuestPool] = {}
        self._matches: dict[str, LiveMatch] = {}
        self._ticking: dict[str, LiveMatch] = {}
        """The matches of ``_matches`` :meth:`tick_clocks` may have work in: timed, with server
        bots, or with an absent seat (:meth:`_note_ticking`), so a tick costs nothing per
        untimed match in memory. A superset: an entry whose seat came back stays until eviction;
        only touched under ``_lock``."""
        self._lobby: dict[str, LobbyEntry] = {}
        self._returns: dict[str, dict[int, int]] = {}
        """Match -> seat -> version: returns announced by other processes, not yet applied."""
        self._summaries: dict[str, dict[str, Any]] = {}
        """Stored match not in memory (evicted, or not loaded since startup; started or waiting)
        -> its :meth:`list_matches` summary (so listing needs no load)."""
        self._wake_at: dict[str, int] = {}
        """Evicted timed match -> when (wall ms) its next timeout falls; :meth:`wake_timed` loads
        it again :data:`WAKE_LEAD_MS` before."""
        self._unadoptable: set[str] = set()
        """Stored matches :meth:`adopt_matches` skips: untimed, or they could not be resumed."""
        self.tick_failures = TickFailures()
        """What :meth:`tick_clocks` logs of a failed tick (a store outage once per match)."""
        self.heartbeat = Heartbeat(self.data_dir)
        self._tokens: dict[str, Principal] = {hash_token(admin_token): ADMIN}
        for seat in self.store.load_seats():
            kind = "spectator" if seat.player_id is None else "seat"
            self._tokens[seat.token_sha256] = Principal(kind, seat.match_id, seat.player_id)
        self._load_at_start()
        self.heartbeat.beat(force=True)
        self._timekeeper: Timekeeper | None = None
        self._thinker = BotThinker()
        """The lanes the server search bots' decisions run on, off the matches' locks."""
        self._bots = BotSeats(
            self._thinker,
            closing=lambda: self._closing,
            pin=self._pin,
            unpin=self._unpin,
            catch_up=self._catch_up,
            changed=self._changed,
            move=self._move_and_answers,
            searching=lambda match_id: self.store.searching(match_id),
        )
        """Asks for, runs and awaits the search bots' decisions (:mod:`tablehost.api.bot_seats`)."""

    def start_timekeeper(self) -> None:
        """Start the thread that runs the clocks (:mod:`tablehost.api.timekeeper`); idempotent."""
        if self._timekeeper is None:
            self._timekeeper = Timekeeper(self)
            self._timekeeper.start()
        self.store.subscribe(self._heard)
        self.store.subscribe_returns(self._heard_return)

    # ------------------------------------------------------------ lifecycle

    def _load_at_start(self) -> None:
        """Read every stored match once: resume those that must run without a request
        (:func:`~tablehost.api.stored_matches.must_run`: their clocks run, or the server moves
        for a seat), keep only the summary of every other one (loaded on its first request by
        :meth:`_load`). Logs ``store.loaded`` with the counts."""
        # A shared store's clocks are a function of the stored match and the time: every process
        # must charge a seat alike, so this process's own heartbeat cannot grant downtime there.
        charged_until = None if self.store.shared else self.heartbeat.read()
        for match_id in self.store.match_ids():
            try:
                record = self.store.load_record(match_id)
                if is_pending(record) or record.get("status") == "aborted":
                    self._summaries[match_id] = waiting_summary(
                        PendingMatch.from_json(record), record.get("status") == "aborted"
                    )
                    continue
                parsed = parse_record(record)
                summary = started_summary(parsed, self.metadata_of(parsed.module_sha256))
                if summary is not None and not must_run(parsed, summary):
                    self._summaries[match_id] = summary
                    continue
                live = LiveMatch(self._resume(match_id, record), threading.Condition())
            except Exception as exc:  # noqa: BLE001 - one broken match must not keep the others from being served
                log.error(
                    "match.resume_failed", match_id=match_id, error=str(exc), error_type=type(exc).__name__
                )
                continue
            self._resume_clocks(live, record, charged_until)
            self._matches[match_id] = live
            self._note_ticking(live)
        if self._matches or self._summaries:
            log.info("store.loaded", in_memory=len(self._matches), summaries=len(self._summaries))

    def _hold_waiting(self, record: dict[str, Any]) -> bool:
        """Keep a waiting (or aborted while waiting) match in the lobby; false for a started one."""
        if not (is_pending(record) or record.get("status") == "aborted"):
            return False
        match_id = record["match_id"]
        entry = LobbyEntry(PendingMatch.from_json(record), threading.Condition())
        entry.aborted = record.get("status") == "aborted"
        with self._lock:
            self._lobby.setdefault(match_id, entry)
            self._summaries.pop(match_id, None)
        log.info("match.resumed", match_id=match_id, status="aborted" if entry.aborted else "waiting")
        return True
    def _resume(self, match_id: str, record: dict[str, Any] | None = None) -> Match:
        """The match rebuilt from its stored record (``record`` when the caller read it already).

        Raises:
            UnknownMatch: not stored.
            RecordError, PatchError, GuestError: the record cannot be resumed.
        """
        if record is None:
            record = self.store.load_record(match_id)
        sha256 = record["module"]["sha256"]
        pool = self._pool(sha256)
        # Resuming asks the guest about states it answered before: fuel decides, and the wall
        # clock is widened (a restart or catch-up on a busy machine must not lose a match for
        # time alone); moves from then on run under the live budgets.
        with self._lock:
            resume_pool = self._resume_pools.get(sha256)
            if resume_pool is None:
                resume_pool = self._resume_pools[sha256] = GuestPool(pool.module, pool.limits.for_replay())
        match = resume_match(resume_pool, record, journal=self.store.journal_for(match_id), metadata=self.metadata_of(sha256))
        match.pool = pool
        log.info("match.resumed", match_id=match_id, version=match.version, game_over=match.game_over)
        return match

    def _heard(self, match_id: str, version: int) -> None:
        """Another process (or this one) stored ``version`` of ``match_id``: wake its watchers."""
        live = self._matches.get(match_id)
        if live is None or live.match.version >= version:
            return
        # Never wait long on a busy match: this thread hears every match's changes, and the
        # match's watchers re-check every WATCH_POLL_S anyway.
        if live.changed.acquire(timeout=HEARD_WAIT_S):
            try:
                live.changed.notify_all()
            finally:
                live.changed.release()

    def _heard_return(self, match_id: str, player_id: int, version: int) -> None:
        """Seat ``player_id`` of ``match_id`` came back at ``version`` through another process;
        noted here (the listener never waits for a match) and applied by :meth:`_take_returns`."""
        with self._lock:
            seats = self._returns.setdefault(match_id, {})
            seats[player_id] = max(version, seats.get(player_id, -1))

    def _take_returns(self, live: LiveMatch) -> None:
        """Apply the returns other processes announced for ``live``: a seat that came back after
        the host's newest move for it is no longer absent. Call under ``live.changed``."""
        with self._lock:
            heard = self._returns.pop(live.match.match_id, None)
        if not heard:
            return
        resigned = live.match.resigned_ids
        for player_id, version in heard.items():
            live.returned[player_id] = max(version, live.returned.get(player_id, -1))
            if player_id in live.zombies and player_id not in resigned:
                hosted = [m.seq for m in live.match.history if m.player_id == player_id and m.by_host and not m.undone]
                if not hosted or version >= hosted[-1]:  # not timed out again since it came back
                    live.zombies.discard(player_id)

    def _derive_zombies(self, live: LiveMatch) -> None:
        """Set ``live.zombies`` from the stored moves (:meth:`_stored_zombies`)."""
        live.zombies = self._stored_zombies(live)

    @staticmethod
    def _stored_zombies(live: LiveMatch) -> set[int]:
        """Absent seats from the stored moves: those that resigned, and those whose newest own
        move the host played, unless the seat came back since (``live.returned``)."""
        match = live.match
        zombies = set(match.resigned_ids)
        for player in match.players:
            own = [m for m in match.history if m.player_id == player.player_id and not m.undone]
            if own and own[-1].by_host and live.returned.get(player.player_id, -1) >= own[-1].seq:
                continue
            if own and own[-1].by_host:
                zombies.add(player.player_id)
        return zombies

    def _catch_up(self, live: LiveMatch, claim: Claim | None = None) -> None:
        """Reload ``live`` when the store holds a newer version; call under ``live.changed``.

        With a ``claim`` the stored version is exact (read under the match's hold); without,
        it is the newest one this process heard of.
        """
        match_id = live.match.match_id
        if claim is not None:
            if claim.version is None or claim.version == live.match.version:
                return
            record = claim.load_record()
        else:
            latest = self.store.latest_version(match_id)
            if latest is None or latest <= live.match.version:
                return
            record = self.store.load_record(match_id)
        self._replace(live, record)

    def _replace(self, live: LiveMatch, record: dict[str, Any]) -> None:
        """Rebuild ``live`` from ``record`` (the stored match, newer than the copy in memory);
        call under ``live.changed``."""
        previous = live.match.version
        live.match = self._resume(live.match.match_id, record)
        live.views.clear()
        # Another process changed the match: its clocks and absent seats are the stored ones,
        # charged up to now (that process was serving it meanwhile).
        self._resume_clocks(live, record, None)
        with self._lock:
            self._note_ticking(live)
        log.info("match.caught_up", match_id=live.match.match_id, version_before=previous, version=live.match.version)

    def _changed(self, live: LiveMatch, change: Callable[[], _T]) -> _T | None:
        """Run ``change`` (one request's change of ``live``, journaled through ``live.match``'s
        journal) so that it applies to the match as stored; call under ``live.changed``.

        One process on its store (SQLite): ``change()`` as it is. A shared store (PostgreSQL,
        several processes): first without holding the match, on the copy in memory caught up
        with the versions heard of (each entry one round trip, ``MatchStore.append``, whose
        ``(match_id, version)`` key stores it only when its version is new). When that copy was
        behind the database after all:

        - ``change``'s first entry is refused by the key (``StoreConflict``, nothing stored):
          under the store's hold (:meth:`_held`: the stored match is reloaded, no other process
          can write) ``change`` runs again, and is applied or refused as the stored match
          decides (``StaleVersion``, ``MatchOver``, ``NotYourTurn``, ...).
        - ``change`` was refused before it stored anything (any ``TablehostError`` but a
          ``StoreError``): the refusal stands when the stored version read under the hold is
          the copy's; otherwise ``change`` runs again on the stored match, as above.
        - a later entry of the same request (a host or bot move after the caller's) is refused
          by the key: the entries before it are stored and stand; the match is reloaded (another
          process made the next move) and ``None`` is returned.

        Returns:
            ``change()``'s answer; ``None`` in the last case.

        Raises:
            What ``change`` raises to refuse (nothing changed, in memory or stored);
            StoreUnavailable: the store could not be reached (nothing changed in memory).
        """
        if not self.store.shared:
            return change()
        self._catch_up(live)  # versions heard of (NOTIFY); exact only under the hold
        before = live.match.version
        refusal: TablehostError | None = None
        try:
            return self._stored_change(live, change, before)
        except StoreConflict:
            pass  # nothing of it stored: the copy was behind
        except StoreError:
            raise
        except TablehostError as exc:
            if live.match.version != before:
                raise
            refusal = exc
        log.info("match.redo", match_id=live.match.match_id, version=before, refused=refusal is not None)
        with self._held(live):
            if refusal is not None and live.match.version == before:
                raise refusal  # judged on the stored match after all
            return self._stored_change(live, change, live.match.version)

    def _stored_change(self, live: LiveMatch, change: Callable[[], _T], before: int) -> _T | None:
        """``change()``; after a conflict on a later entry of the request (the version went past
        ``before``: its first entries are stored), the stored match reloaded and ``None``."""
        try:
            return change()
        except StoreConflict:
            if live.match.version == before:
                raise
            log.info("match.later_entry_conflict", match_id=live.match.match_id, version=live.match.version)
            self._replace(live, self.store.load_record(live.match.match_id))
            return None

    @contextmanager
    def _held(self, live: LiveMatch) -> Iterator[None]:
        """Hold the match in the store for one change; call under ``live.changed``.

        Catches up with a newer stored version first, and journals through the hold (on
        PostgreSQL its transaction); afterwards the match journals through the store again.

        Raises:
            StoreUnavailable: the store cannot be reached (nothing changed).
        """
        match_id = live.match.match_id
        with self.store.claim(match_id) as claim:
            self._catch_up(live, claim)
            live.match.journal = claim.journal
            try:
                yield
            finally:
                live.match.journal = self.store.journal_for(match_id)

    def _resume_clocks(self, live: LiveMatch, record: dict[str, Any], charged_until: int | None) -> None:
        """Set a match's clocks and zombies from its stored moves (after a restart: the downtime
        policy of :mod:`tablehost.clocks`; ``charged_until`` None charges the running seats up to
        now, as when another process served the match meanwhile). A match that ended early has
        its clocks as they were at the end (:meth:`~tablehost.clocks.Clocks.at_end`). Its server
        bot seats' clocks never run (:attr:`~tablehost.clocks.Clocks.untimed`).

        Zombies are the seats whose newest own move the host played (unless the seat came back
        through this process since) and the seats that resigned.
        """
        del record  # the match rebuilt from it holds what is needed
        match = live.match
        control = TimeControl.from_json(match.time_control)
        with self._lock:
            heard = self._returns.pop(match.match_id, {})
        for player_id, version in heard.items():
            live.returned[player_id] = max(version, live.returned.get(player_id, -1))
        self._derive_zombies(live)
        live.clocks = None
        if not control.enabled:
            return
        saved = _stored_clocks(match, control)
        ended_ms = iso_to_ms((match.ending or {}).get("at"))
        bot_seats = match.bots.keys()  # read off the stored match, so every process stops the same clocks
        if ended_ms is not None:  # ended early: the seats to move are charged up to the end
            live.clocks = Clocks.at_end(control, saved, match.active_player_ids, ended_ms, untimed=bot_seats)
        else:
            now = now_ms()
            active = [] if match.game_over else match.active_player_ids
            live.clocks = Clocks.restore(control, saved, active, charged_until or now, now, untimed=bot_seats)
        self._install_stamp(live)

    def close_watchers(self) -> None:
        """Wake every watcher so its stream ends (before stopping the server); no new watch waits."""
        self._closing = True
        for live in list(self._matches.values()):
            with live.changed:
                live.changed.notify_all()
        for entry in list(self._lobby.values()):
            with entry.changed:
                entry.changed.notify_all()

    def close(self, *, report: bool = True) -> None:
        """End the watchers, close the guest pools and the store; the registry is unusable afterwards.

        Args:
            report: log ``store.closed`` with the store's commit counts; ``False`` for a server
                start that was refused (its one line is all the user should read).
        """
        self.close_watchers()
        if self._timekeeper is not None:
            self._timekeeper.stop()
        self._thinker.close()
        self.closed.set()
        for pool in [*self._pools.values(), *self._resume_pools.values()]:
            pool.close()
        # entries / transactions: how many journal entries each fsync carried on average.
        if report:
            log.info("store.closed", transactions=self.store.transactions, entries=self.store.entries)
        self.store.close()

    def authenticate(self, token: str, *, token_sha256: str | None = None) -> Principal:
        """Return the principal of a bearer token.

        Args:
            token: the bearer token as sent.
            token_sha256: ``hash_token(token)`` when the caller computed it already (the request
                interceptor hashes it for the rate limit first); hashed here otherwise.

        Raises:
            Unauthenticated: the token is unknown.
        """
        if token_sha256 is None:
            token_sha256 = hash_token(token)
        principal = self._tokens.get(token_sha256)
        if principal is None and self.store.shared:
            principal = self._stored_principal(token_sha256)
        if principal is None:
            raise Unauthenticated("unknown token")
        return principal

    def known_principal(self, token_sha256: str) -> Principal | None:
        """The principal of a token this process knows already (never asks the store), or None.

        The request wrapper serves such tokens from an address over its failed-authentication
        limit (:class:`~tablehost.api.rate_limit.AuthFailureLimiter`) without a store query.
        """
        return self._tokens.get(token_sha256)

    def _stored_principal(self, token_sha256: str) -> Principal | None:
        """The principal of a token another process created (shared stores), remembered once found."""
        seat = self.store.find_seat(token_sha256)
        if seat is not None:
            kind = "spectator" if seat.player_id is None else "seat"
            principal: Principal | None = Principal(kind, seat.match_id, seat.player_id)
        elif self.store.is_admin_token(token_sha256):
            principal = ADMIN
        else:
            return None
        with self._lock:
            self._tokens[token_sha256] = principal  # type: ignore[assignment]
        return principal

    # ------------------------------------------------------------ modules

    def _pool(self, sha256: str) -> GuestPool:
        with self._lock:
            pool = self._pools.get(sha256)
        if pool is not None:
            return pool
        stored = self.store.get_module(sha256)
        if stored is None:
            raise UnknownModule(
                f"no module {sha256}; upload it first (tablehost upload FILE)", module_id=sha256
            )
        module = load_module(
            stored.data, limits=self.limits, cache_dir=self.data_dir / "cache", name=stored.name
        )
        observer = None if self.metrics is None else self.metrics.observe_guest_call
        fresh = GuestPool(module, self.limits, observer=observer, warm_instances=WARM_INSTANCES_PER_MODULE)
        with self._lock:
            return self._pools.setdefault(sha256, fresh)

    def metadata_of(self, sha256: str) -> GameMetadata:
        """The checked metadata of a stored module (asked of the module once, then kept).

        Raises:
            UnknownModule: no such module.
            GuestError: the module's ``metadata`` op failed or answered malformed metadata.
        """
        with self._lock:
            known = self._metadata.get(sha256)
        if known is not None:
            return known
        raw = self._pool(sha256).metadata()
        metadata = parse_metadata(raw) if raw is not None else GameMetadata(declared=False)
        with self._lock:
            return self._metadata.setdefault(sha256, metadata)

    def _samples_hidden(self, sha256: str, metadata: GameMetadata, players: int, options: dict[str, Any]) -> bool | None:
        """Whether the module implements ``Game::sample_hidden`` (:mod:`tablehost.sampler_probe`),
        asked once per module and kept (an answer of "cannot tell" is asked again next time)."""
        with self._lock:
            known = self._samplers.get(sha256)
        if known is not None:
            return known
        answer = samples_hidden(self._pool(sha256), metadata, players, options)
        log.info("module.sampler_probed", module_id=sha256, samples_hidden=answer)
        if answer is not None:
            with self._lock:
                self._samplers[sha256] = answer
        return answer

    def upload_module(self, principal: Principal, data: bytes, name: str) -> StoredModule:
        """Validate, compile and store a module (admin only); identical bytes return the stored module.

        Returns:
            The stored module; ``newly_stored`` false when the bytes were stored before (the
            first name is kept, ``name`` ignored, ``module.already_stored`` logged).

        Raises:
            PermissionDenied: not the admin token.
            InvalidRequest: no bytes (:data:`EMPTY_MODULE`), or the name is over 200 characters
                or has a control character.
            ModuleError: not a valid ABI v1 module, its validation and compilation went over
                ``compile_ms`` or ``compile_memory_bytes`` (they run in a capped child process),
                or (``check_uploads``) it failed ``tablehost check``.
        """
        _require_admin(principal, "upload modules")
        if not data:  # one wording over gRPC and HTTP (the validator would say "not wasm")
            raise InvalidRequest(EMPTY_MODULE)
        check_module_name(name)
        module = load_module(
            data, limits=self.limits, cache_dir=self.data_dir / "cache", name=name or None, isolated=True
        )
        check_instantiates(module, self.limits)  # a start function that loops or traps is refused here
        try:  # malformed metadata refuses the module before it is stored
            raw = GuestPool(module, self.limits).metadata()
            metadata = parse_metadata(raw) if raw is not None else GameMetadata(declared=False)
        except GuestError as exc:
            raise ModuleError(f"the module's metadata cannot be read: {exc}") from exc
        if self.check_uploads:
            counts = check_player_counts(metadata, self.check_players)
            _require_check(module, self.check_uploads, counts, self.limits)
        with self._lock:
            self._metadata.setdefault(module.sha256, metadata)
        stored = self.store.put_module(
            module.sha256, name or f"module-{module.sha256[:12]}", data, module.info.exports, _utc_now()
        )
        if stored.newly_stored:
            log.info(
                "module.uploaded", module_id=stored.sha256, name=stored.name, size_bytes=stored.size_bytes
            )
        else:
            log.info(
                "module.already_stored", module_id=stored.sha256, name=stored.name, ignored_name=name or None
            )
        return stored

    def list_modules(self, principal: Principal) -> list[StoredModule]:
        """Every stored module, oldest first (any valid token)."""
        del principal
        return self.store.list_modules()

    def get_module(self, principal: Principal, module_id: str) -> StoredModule:
        """One stored module without its bytes. Raises :class:`UnknownModule`."""
        del principal
        stored = self.store.get_module(module_id)
        if stored is None:
            raise UnknownModule(f"no module {module_id}", module_id=module_id)
        return StoredModule(stored.sha256, stored.name, stored.size_bytes, stored.exports, stored.uploaded_at)

    # ------------------------------------------------------------ matches

    def create_match(
        self,
        principal: Principal,
        module_id: str,
        seats: list[tuple[str, str]] | list[tuple[str, str, bool]] | list[tuple[str, str, bool, str]],
        options: dict[str, Any] | None = None,
        time_control: TimeControl | None = None,
    ) -> CreatedMatch:
        """Create a match (admin only): one seat per ``(username, color)``, ``(username, color,
        open)`` or ``(username, color, open, bot)``; blanks get defaults. With no open seat the
        game starts now; otherwise the match waits in the lobby for :meth:`join`. A seat with a
        ``bot`` name is played by the server on its own view (:mod:`tablehost.api.server_bots`)
        and gets no token (its entry in the result's seats has token ``""``).

        Args:
            options: option name -> value, checked against the module's metadata.
            time_control: the clocks (None or disabled: none).

        Returns:
            The match id, a token per seated seat, the spectator token, the first spectator
            view (status ``waiting`` with no table while seats are open) and the open seats.

        Raises:
            PermissionDenied: not the admin token.
            InvalidRequest: no seats or more than :data:`MAX_SEATS`, a username or color the API
                does not accept (:mod:`tablehost.api.validation`), an unknown bot name, a bot
                or a username on an open seat.
            UnknownModule: no such module.
            SetupRefused: a seat count outside the module's range, or an option it does not
                declare or allow; raised before any game code runs, nothing stored.
            GuestError: the game failed during setup (nothing is stored).
        """
        _require_admin(principal, "create matches")
        if not 1 <= len(seats) <= MAX_SEATS:
            raise InvalidRequest(f"a match needs 1 to {MAX_SEATS} seats, got {len(seats)}")
        specs = [(seat[0], seat[1], bool(seat[2]) if len(seat) > 2 else False) for seat in seats]
        bots: dict[int, str] = {}
        for n, seat in enumerate(seats, start=1):
            bot = str(seat[3]) if len(seat) > 3 else ""  # type: ignore[misc]
            if bot:
                if specs[n - 1][2]:
                    raise InvalidRequest(f"seat {n} is open: a bot seat is taken by the server, not left open")
                bots[n] = check_bot_name(bot)
        for n, (username, color, open_seat) in enumerate(specs, start=1):
            if username and open_seat:  # it would be dropped: the name is the joiner's
                raise InvalidRequest(f"seat {n} is open: its name comes from whoever joins it, so give it none")
            if username:
                check_username(username)
            check_color(color)
        metadata = self.metadata_of(module_id)  # UnknownModule first
        check_player_count(metadata, len(specs))
        resolved = resolve_options(metadata, options or {})
        for name in bots.values():
            samples = None
            if needs_sampler(name, metadata.hidden_information):
                samples = self._samples_hidden(module_id, metadata, len(specs), resolved)
            check_bot_fits(name, metadata.hidden_information, samples)
        control = time_control or TimeControl()
        stored = self.store.get_module(module_id)
        assert stored is not None
        match_id = "m-" + secrets.token_hex(8)
        colors = [color or PALETTE[(n - 1) % len(PALETTE)] for n, (_, color, _) in enumerate(specs, start=1)]
        spectator_token = new_token("spectator")
        spectator_row = SeatRow(hash_token(spectator_token), match_id, None)
        if any(open_seat for _, _, open_seat in specs):
            return self._create_pending(
                match_id, stored, specs, colors, resolved, control, spectator_token, spectator_row, bots
            )
        players = [
            PlayerInfo(n, specs[n - 1][0] or (f"bot{n}" if n in bots else f"player{n}"), colors[n - 1])
            for n in range(1, len(specs) + 1)
        ]
        tokens = ["" if p.player_id in bots else new_token("seat") for p in players]
        rows = [SeatRow(hash_token(t), match_id, p.player_id) for p, t in zip(players, tokens) if t]
        rows.append(spectator_row)
        live = self._start(match_id, stored, players, resolved, control, self.store.journal_for(match_id, rows), bots)
        self._register(rows, match_id)
        self._move_bots(live)
        log.info("match.created", match_id=match_id, module_id=module_id, seats=len(players))
        if live.match.setup.get("printed"):
            log.info("guest.printed", match_id=match_id, seq=0, printed=live.match.setup["printed"])
        with live.changed:
            served = self._served(live, None)
        return CreatedMatch(
            match_id,
            list(zip(players, tokens)),
            spectator_token,
            served.view,
            served.score_labels,
            extras=served.extras,
        )

    def _create_pending(
        self,
        match_id: str,
        stored: StoredModule,
        specs: list[tuple[str, str, bool]],
        colors: list[str],
        options: dict[str, Any],
        control: TimeControl,
        spectator_token: str,
        spectator_row: SeatRow,
        bots: dict[int, str],
    ) -> CreatedMatch:
        seats = [
            PendingSeat(n, colors[n - 1], None if open_seat else (username or (f"bot{n}" if n in bots else f"player{n}")))
            for n, (username, _, open_seat) in enumerate(specs, start=1)
        ]
        pending = PendingMatch(match_id, stored.sha256, stored.name, _utc_now(), seats, options, control.to_json(),
                               bots)
        tokens = {seat.player_id: new_token("seat") for seat in seats if not seat.open and seat.player_id not in bots}
        rows = [SeatRow(hash_token(t), match_id, pid) for pid, t in tokens.items()] + [spectator_row]
        self.store.create_pending(pending.to_json(), rows)
        with self._lock:
            self._lobby[match_id] = LobbyEntry(pending, threading.Condition())
        self._register(rows, match_id)
        log.info("match.created", match_id=match_id, module_id=stored.sha256, seats=len(seats),
                 open_seats=len(pending.open_seats))
        seated = [(PlayerInfo(s.player_id, s.username or "", s.color), tokens.get(s.player_id, ""))
                  for s in seats if not s.open]
        return CreatedMatch(match_id, seated, spectator_token, _waiting_view(pending), [], pending.open_seats)

    def _start(
        self,
        match_id: str,
        stored: StoredModule,
        players: list[PlayerInfo],
        options: dict[str, Any],
        control: TimeControl,
        journal: Callable[[str, dict[str, Any]], None],
        bots: dict[int, str] | None = None,
    ) -> LiveMatch:
        """Run the game's setup and serve the match (journaled through ``journal``); ``bots`` are
        the seats the server plays (player id -> bot name), whose clocks never run."""
        started_ms = now_ms()
        time_control = control.to_json()
        if control.enabled:
            time_control["started_at_ms"] = started_ms
        match = Match.start(
            self._pool(stored.sha256),
            players,
            match_id=match_id,
            module_sha256=stored.sha256,
            module_name=stored.name,
            journal=journal,
            metadata=self.metadata_of(stored.sha256),
            options=options,
            time_control=time_control,
            bots=bots,
        )
        live = LiveMatch(match, threading.Condition())
        if control.enabled:
            active = [] if match.game_over else match.active_player_ids
            ids = [p.player_id for p in players]
            live.clocks = Clocks.start(control, ids, active, started_ms, untimed=match.bots.keys())
            self._install_stamp(live)
        with self._lock:
            self._matches[match_id] = live
            self._note_ticking(live)
        return live

    def _install_stamp(self, live: LiveMatch) -> None:
        """Make every move of ``live`` carry the clocks right after it."""

        def stamp(move: MoveRecord, active: list[int]) -> dict[str, Any] | None:
            if live.clocks is None:
                return None
            live.next_clocks = live.clocks.after(move.player_id, list(active), now_ms())
            return live.next_clocks.to_json()

        live.match.stamp_clocks = stamp

    def _register(self, rows: list[SeatRow], match_id: str) -> None:
        with self._lock:
            for row in rows:
                kind = "spectator" if row.player_id is None else "seat"
                self._tokens[row.token_sha256] = Principal(kind, match_id, row.player_id)

    # ------------------------------------------------------------ lobby

    def join(
        self, principal: Principal, match_id: str, username: str, color: str = "", player_id: int | None = None
    ) -> tuple[PlayerInfo, str, str]:
        """Take an open seat of a waiting match; the join that fills the last seat starts the game.

        Args:
            principal: the admin, or the match's spectator token (the invitation).
            username: the seat's display name (checked like every name).
            color: a display colour; empty keeps the seat's.
            player_id: the seat wanted; None for the lowest open one.

        Returns:
            ``(player, token, status)``: the seat, its token (shown once), and ``"waiting"`` or,
            after the last seat, the started match's status.

        Raises:
            PermissionDenied: a seat token, or another match's token.
            UnknownMatch: no such match.
            SeatTaken: the seat is taken, no seat is open, or the match already started.
            InvalidRequest: a bad name or colour; ``NoSuchSeat`` (:mod:`tablehost.lobby`, code
                ``request/invalid``) for a ``player_id`` outside the match's seats.
            GuestError: the game's setup failed on the last join (the seat stays open).
        """
        if principal.kind == "seat" or (principal.match_id is not None and principal.match_id != match_id):
            raise PermissionDenied(
                "join with the admin token or this match's spectator token (its invitation)", match_id=match_id
            )
        check_username(username)
        check_color(color)
        with self._lobby_using(match_id) as entry:
            if entry is None:
                if match_id in self._matches or self._load(match_id) is not None:  # evicted or another process's
                    raise SeatTaken(f"match {match_id} has already started: every seat is taken", match_id=match_id)
                raise UnknownMatch(f"no match {match_id}", match_id=match_id)
            player, token, status, started = self._join_waiting(entry, match_id, username, color, player_id)
        if started is not None:  # outside the lobby's claim: the moves take the match's own hold
            self._move_bots(started)
        log.info("match.joined", match_id=match_id, player_id=player.player_id, status=status)
        return player, token, status

    def _join_waiting(
        self, entry: LobbyEntry, match_id: str, username: str, color: str, player_id: int | None
    ) -> tuple[PlayerInfo, str, str, LiveMatch | None]:
        """Take a seat of the (pinned) waiting ``entry`` for :meth:`join`; returns the seat, its
        token, the status after, and the started match when this join filled the last seat."""
        started: LiveMatch | None = None
        # The claim holds the match in a shared store (another process's join waits), and the
        # waiting form is re-read under it; on SQLite this process is the only writer.
        with entry.changed, self.store.claim(match_id) as claim:
            if self.store.shared:
                record = claim.load_record()
                if is_pending(record) or record.get("status") == "aborted":
                    entry.pending = PendingMatch.from_json(record)
                    entry.aborted = record.get("status") == "aborted"
                else:
                    with self._lock:
                        self._lobby.pop(match_id, None)
            if entry.aborted or match_id not in self._lobby:
                state = "was aborted" if entry.aborted else "has already started"
                raise SeatTaken(f"match {match_id} {state}", match_id=match_id)
            pending = entry.pending
            taken = pending.take_seat(username, player_id)
            if color:
                taken.color = color
            token = new_token("seat")
            row = SeatRow(hash_token(token), match_id, taken.player_id)
            player = PlayerInfo(taken.player_id, username, taken.color)
            if len(pending.open_seats) > 1:
                after = PendingMatch.from_json(pending.to_json())
                after.commit(taken)
                self.store.update_pending(match_id, after.to_json(), [row])
                pending.commit(taken)
                status = "waiting"
            else:
                players = [player if p.player_id == taken.player_id else p for p in pending.players()]
                stored = self.store.get_module(pending.module_sha256)
                if stored is None:
                    raise UnknownMatch(f"the module of match {match_id} is gone", match_id=match_id)

                def journal(kind: str, payload: dict[str, Any]) -> None:
                    if kind == "setup":
                        self.store.update_pending(match_id, payload, [row])
                    else:
                        self.store.append(match_id, kind, payload)

                live = self._start(
                    match_id, stored, players, pending.options, TimeControl.from_json(pending.time_control), journal,
                    pending.bots,
                )
                pending.commit(taken)
                with self._lock:
                    self._lobby.pop(match_id, None)
                started = live
                status = live.match.status
            self._register([row], match_id)
            entry.changed.notify_all()
        return player, token, status, started

    def abort(self, principal: Principal, match_id: str) -> ServedView:
        """End a match at once, result ``aborted`` (admin only); a waiting match stops waiting.

        Raises:
            PermissionDenied: not the admin token.
            UnknownMatch: no such match.
            MatchOver: the match is over already (a waiting one: aborted already).
        """
        _require_admin(principal, "abort matches")
        with self._lobby_using(match_id, reread=False) as entry:
            if entry is not None:
                with entry.changed:
                    if match_id in self._lobby and not entry.aborted:
                        stored = entry.pending.to_json() | {"status": "aborted"}
                        self.store.update_pending(match_id, stored, [])
                        entry.aborted = True
                        entry.changed.notify_all()
                        log.info("match.aborted", match_id=match_id, status="waiting")
                        return self._pending_served(entry, None)
        with self._using(principal, match_id) as live, live.changed, self._held(live):
            self._stop_clocks(live, live.match.end("aborted"))
            live.changed.notify_all()
            log.info("match.aborted", match_id=match_id, version=live.match.version)
            return self._served(live, None)

    def resign(self, principal: Principal, match_id: str) -> ServedView:
        """The caller's seat resigns: the match ends, result ``resigned``, that seat last; or, under
        the module's resign rule ``continue`` with two or more others still playing, the others
        play on while the host plays this seat (it ranks last at the end).

        Raises:
            PermissionDenied: not a seat token.
            MatchWaiting: the match waits for its open seats (it has not started).
            MatchOver: the match is over already (or was aborted before it started).
        """
        with self._using(principal, match_id, acting=True) as live:
            player_id = _require_seat(principal)
            with live.changed, self._held(live):
                outcome = live.match.resign(player_id)
                if live.match.game_over:
                    self._stop_clocks(live, outcome)
                else:  # resign rule "continue": the others play on, the host plays this seat
                    live.zombies.add(player_id)
                    with self._lock:
                        self._note_ticking(live)
                    self._play_for_absent(live)
                live.changed.notify_all()
                log.info("match.resigned", match_id=match_id, player_id=player_id)
                return self._served(live, player_id)

    def _stop_clocks(self, live: LiveMatch, ending: dict[str, Any]) -> None:
        """Stop ``live``'s clocks at ``ending``'s time (its ``at``), as a reload or restart rebuilds
        them (:meth:`tablehost.clocks.Clocks.at_end`): an evicted match shows the same clocks."""
        if live.clocks is not None:
            ended_ms = iso_to_ms(ending.get("at"))
            live.clocks = live.clocks.after(None, [], now_ms() if ended_ms is None else ended_ms)

    # ------------------------------------------------------------ clocks and absent seats

    def tick_clocks(self, at_ms: int | None = None) -> int:
        """Apply timeouts and play for absent seats in every timed or zombie-seated match.

        A running clock at 0 times its seat out: under ``forfeit`` the match ends (result
        ``timeout``, that seat last); under ``zombie`` the host plays for the seat, one move
        each time it is active (:data:`HOST_INTENTS`), recorded with ``by_host``, until the seat
        comes back (a GetView or WatchMatch with its token). Called by the server's timekeeper
        a few times a second; also beats the heartbeat.

        Several processes on a shared store: each ticks every match it holds in memory (and
        adopts those it does not, :meth:`adopt_matches`). A match is held in the store only when
        something is due by its clocks as this process knows them; under the hold the stored
        match is re-read first (clocks included), so a timeout or host move that another process
        applied already is not applied twice.

        Only the matches that may have such work are visited (:attr:`_ticking`: timed, with
        server bots or an absent seat), so the untimed matches in memory cost a tick nothing.

        Returns:
            How many matches changed.
        """
        self.heartbeat.beat()
        now = now_ms() if at_ms is None else at_ms
        changed = 0
        for live in list(self._ticking.values()):
            if live.clocks is None and not live.zombies and not live.match.bots:
                continue
            with live.changed:
                if self.store.shared:
                    self._catch_up(live)  # versions heard from other processes
                    self._take_returns(live)
                if live.match.game_over or not self._due(live, now):
                    continue
                try:
                    with self._held(live):
                        moved = self._apply_timeouts(live, now) | self._play_for_absent(live)
                        moved |= self._play_bots(live)
                except TablehostError as exc:  # a failing game must not stop the other matches' clocks
                    self.tick_failures.failed(live.match.match_id, exc)
                    moved = True
                else:
                    self.tick_failures.succeeded(live.match.match_id)
                if moved:
                    changed += 1
                    live.changed.notify_all()
        return changed

    def _note_ticking(self, live: LiveMatch) -> None:
        """Put ``live`` in :attr:`_ticking` when a tick may have work in it: it has clocks,
        server bots or an absent seat. Call under ``_lock`` wherever one of these can start
        (a match put in memory, caught up, a seat resigning and played for); a timeout adds
        an absent seat only to a timed match, which is there already."""
        if live.clocks is not None or live.zombies or live.match.bots:
            self._ticking[live.match.match_id] = live

    def _due(self, live: LiveMatch, now: int) -> bool:
        """Whether a tick has something to do in ``live``: a running clock of a seat that is
        not absent ran out, an absent seat is active, or a server bot seat is to move. Call under
        ``live.changed``."""
        if live.clocks is not None and any(p not in live.zombies for p in live.clocks.expired(now)):
            return True
        if any(p in live.zombies for p in live.match.active_player_ids):
            return True
        return self._bots.due(live)

    def evict_idle(self, now: float | None = None) -> int:
        """Drop from memory the matches no one is using: after :attr:`evict_after_s` without a
        request, or the least recently used first while more than :attr:`max_live_matches` are
        in memory. The next request loads an evicted match from the store exactly as after a
        restart (:meth:`_load`). Called by the timekeeper every :data:`EVICT_INTERVAL_S`.

        Never evicted: a match a request or watch stream is using (pinned by :meth:`_using`),
        a seat connected, a match whose lock is busy, and a match not over that the timekeeper
        has work for now: a running clock at 0, an absent seat the host can move for, or a
        server bot to move.

        A timed match not over (an abandoned one: nobody connected or asking, its clocks
        running down) is evicted only when all of this holds: the store is not shared (another
        process could move it and bring its next timeout forward unseen), reloading it rebuilds
        exactly the clocks and absent seats in memory (:meth:`_reloads_alike`: not after an
        undo, whose clocks are not journaled), and its next timeout of a present seat is more
        than :data:`WAKE_LEAD_MS` plus one interval away. Its timeout is remembered and
        :meth:`wake_timed` (run first here) loads it :data:`WAKE_LEAD_MS` before, so the
        timekeeper applies the timeout on time, as if it had stayed. A timed match whose only
        running clocks are absent seats' with nothing the host can play has no timeout to wait
        for: it stays out until a request.

        A waiting match (or one aborted while it waited) leaves the lobby after
        :attr:`evict_after_s` without a request or watch stream (:meth:`_lobby_using` pins it),
        its summary kept for listing; the next request, join or abort loads it again from the
        store. Lobby entries are not counted against :attr:`max_live_matches`.
        On a shared store this process holds no lasting lease on a match (a change takes the
        match's hold for its own transaction only, :meth:`_held`), so nothing is released:
        another process serves an evicted match as any other, under the same version check.

        Args:
            now: ``time.monotonic()`` to judge idleness by (tests); None for now.

        Returns:
            How many matches were evicted.
        """
        self.wake_timed()
        if self.evict_after_s is None and self.max_live_matches is None:
            return 0
        now = time.monotonic() if now is None else now
        with self._lock:
            by_use = list(self._matches.items())
            waiting = list(self._lobby.items())
        excess = len(by_use) - self.max_live_matches if self.max_live_matches is not None else 0
        if excess > 0:  # least recently used first; only an excess needs the order (and the sort)
            by_use.sort(key=lambda item: item[1].used_at)
        evicted = 0
        for match_id, entry in waiting:
            idle = self.evict_after_s is not None and now - entry.used_at >= self.evict_after_s
            if idle and self._evict_waiting(match_id, entry):
                evicted += 1
                if self.metrics is not None:
                    self.metrics.evictions.labels("waiting").inc()
        for match_id, live in by_use:
            stale = self.evict_after_s is not None and now - live.used_at >= self.evict_after_s
            if not (stale or excess > 0) or live.pins:
                continue
            reason = self._evict(match_id, live)
            if reason is not None:
                evicted += 1
                excess -= 1
                if self.metrics is not None:
                    self.metrics.evictions.labels(reason).inc()
        return evicted

    def _evict(self, match_id: str, live: LiveMatch) -> str | None:
        """Drop ``live`` if nothing uses it (see :meth:`evict_idle`); returns why (``over`` or
        ``idle``) or None when it stays."""
        if not live.changed.acquire(blocking=False):
            return None  # a request is in it
        try:
            match = live.match
            if live.connected:
                return None
            wake_at: int | None = None
            if not match.game_over:
                now = now_ms()
                if self._due(live, now):
                    return None
                if live.clocks is not None:
                    if not self._reloads_alike(live, now):
                        return None
                    wake_at = self._next_timeout_ms(live)
                    if wake_at is not None and wake_at - now <= WAKE_LEAD_MS + EVICT_INTERVAL_S * 1000:
                        return None  # its timeout is near: it stays for the timekeeper
            summary = live_summary(match)
            with self._lock:
                if live.pins or self._matches.get(match_id) is not live:
                    return None
                del self._matches[match_id]
                self._ticking.pop(match_id, None)
                self._summaries[match_id] = summary
                if wake_at is not None:
                    self._wake_at[match_id] = wake_at
                if live.returned:  # seats that came back through here, applied again on reload
                    seats = self._returns.setdefault(match_id, {})
                    for player_id, version in live.returned.items():
                        seats[player_id] = max(version, seats.get(player_id, -1))
            reason = "over" if match.game_over else ("timed" if live.clocks is not None else "idle")
            log.info("match.evicted", match_id=match_id, version=match.version, reason=reason, wake_at_ms=wake_at)
            return reason
        finally:
            live.changed.release()

    def _reloads_alike(self, live: LiveMatch, now: int) -> bool:
        """Whether loading the timed match ``live`` from the store now rebuilds what is in memory:
        its absent seats (:meth:`_stored_zombies`) and its clocks (:meth:`_resume_clocks`: the
        newest journaled clocks of a move not undone, charged up to now). Not so after a timeout
        the host has not played a move for yet. Call under ``live.changed``."""
        if self.store.shared or live.clocks is None or live.zombies != self._stored_zombies(live):
            return False
        match = live.match
        saved = _stored_clocks(match, live.clocks.control)
        rebuilt = Clocks.restore(
            live.clocks.control, saved, match.active_player_ids, now, now, untimed=match.bots.keys()
        )
        later = now + 3_600_000
        return all(rebuilt.view(at) == live.clocks.view(at) for at in (now, later))

    @staticmethod
    def _next_timeout_ms(live: LiveMatch) -> int | None:
        """When the first running clock of a seat that is not absent reaches 0 (wall ms), or None
        when none runs (an absent seat's clock times nothing out)."""
        clocks = live.clocks
        if clocks is None:
            return None
        due = [clocks.since_ms + clocks.remaining[p] for p in clocks.running if p not in live.zombies]
        return min(due) if due else None

    def wake_timed(self, now: int | None = None) -> int:
        """Load again the evicted timed matches whose next timeout is within
        :data:`WAKE_LEAD_MS` (wall ms ``now``, default now), so the timekeeper applies it on time
        exactly as if they had stayed. Called with :meth:`evict_idle`.

        Returns:
            How many were loaded.
        """
        now = now_ms() if now is None else now
        with self._lock:
            due = [match_id for match_id, at in self._wake_at.items() if at - now <= WAKE_LEAD_MS]
        woken = 0
        for match_id in due:
            try:
                if self._load(match_id) is not None:
                    woken += 1
            except TablehostError as exc:  # logged; tried again next time unless it is gone
                log.error("match.wake_failed", match_id=match_id, code=exc.code, error=str(exc))
                if isinstance(exc, UnknownMatch):
                    with self._lock:
                        self._wake_at.pop(match_id, None)
        return woken

    def _evict_waiting(self, match_id: str, entry: LobbyEntry) -> bool:
        """Drop the lobby entry ``entry`` unless a request or watch stream uses it; its summary
        stays for listing. Returns whether it was dropped."""
        if not entry.changed.acquire(blocking=False):
            return False  # a join or abort is in it
        try:
            summary = waiting_summary(entry.pending, entry.aborted)
            with self._lock:
                if entry.pins or self._lobby.get(match_id) is not entry:
                    return False
                del self._lobby[match_id]
                self._summaries[match_id] = summary
            log.info("match.evicted", match_id=match_id, version=0, reason="waiting")
            return True
        finally:
            entry.changed.release()

    def adopt_matches(self) -> int:
        """On a shared store, take into memory the timed matches this process does not hold
        (created, or started from the lobby, by another process), so their clocks run here too
        and survive that process's death. Called by the timekeeper every
        :data:`ADOPT_INTERVAL_S`; nothing to do on a store of one process. A match without a
        time control is only read once (and loaded when a request asks for it): resuming every
        match in every process costs a guest call each (measured: +1 ms of CPU per move at 200
        new matches on two processes).

        Returns:
            How many matches were taken in (a waiting match stays in the lobby).

        Raises:
            StoreError: the store cannot be reached.
        """
        if not self.store.shared:
            return 0
        adopted = 0
        for match_id in list(self._lobby):
            self._lobby_entry(match_id)  # re-read: started or aborted elsewhere leaves the lobby
        with self._lock:
            waiting = [m for m, summary in self._summaries.items() if summary["status"] in LOBBY_STATUSES]
        for match_id in waiting:  # evicted from the lobby here: its summary re-read likewise
            self._refresh_waiting_summary(match_id)
        for match_id in self.store.match_ids():
            if (match_id in self._matches or match_id in self._lobby or match_id in self._unadoptable
                    or match_id in self._summaries):  # evicted here: over, or idle without a clock
                continue
            try:
                record = self.store.load_record(match_id)
                if not (is_pending(record) or TimeControl.from_json(record.get("time_control")).enabled):
                    self._unadoptable.add(match_id)  # no clock to run here
                    continue
                if self._load(match_id, record) is not None:
                    adopted += 1
            except UnknownMatch:
                continue
            except StoreError:
                raise
            except Exception as exc:  # noqa: BLE001 - one broken match must not keep the others out
                self._unadoptable.add(match_id)  # logged once, not every interval
                log.error("match.adopt_failed", match_id=match_id, error=str(exc), error_type=type(exc).__name__)
        return adopted

    def _refresh_waiting_summary(self, match_id: str) -> None:
        """Re-read the summary of a waiting match that is not in the lobby here (shared store):
        seats taken through another process show; once started (or gone) the summary is
        dropped, so the match is adopted or loaded like any other."""
        try:
            record = self.store.load_record(match_id)
        except UnknownMatch:
            record = None
        with self._lock:
            if self._summaries.get(match_id, {}).get("status") not in LOBBY_STATUSES:
                return  # loaded into the lobby meanwhile
            if record is not None and (is_pending(record) or record.get("status") == "aborted"):
                self._summaries[match_id] = waiting_summary(
                    PendingMatch.from_json(record), record.get("status") == "aborted"
                )
            else:
                del self._summaries[match_id]

    def _apply_timeouts(self, live: LiveMatch, now: int) -> bool:
        if live.clocks is None:
            return False
        match = live.match
        for player_id in live.clocks.expired(now):
            if player_id in live.zombies:
                continue
            if live.clocks.control.on_timeout == "forfeit":
                self._stop_clocks(live, match.end("timeout", player_id))
                log.info("clock.timeout", match_id=match.match_id, player_id=player_id, policy="forfeit")
                return True
            live.zombies.add(player_id)
            log.info("clock.timeout", match_id=match.match_id, player_id=player_id, policy="zombie")
        return False

    def _play_for_absent(self, live: LiveMatch) -> bool:
        self._take_returns(live)
        match = live.match
        moved = False
        for _ in range(HOST_MOVES_PER_TICK):
            if match.game_over or not live.zombies:
                break
            choice = None
            for player_id in match.active_player_ids:
                if player_id in live.zombies:
                    choice = _host_choice(match.actions_for(player_id))
                    if choice is not None:
                        break
            if choice is None:
                break
            live.match.submit(player_id, choice["action"], by_host=True)
            self._commit_clocks(live)
            moved = True
        return moved

    def _play_bots(self, live: LiveMatch, budget_s: float | None = None) -> bool:
        """Play ``live``'s ``random`` and ``first`` bot seats while one is to move: at least one
        move, then more while ``budget_s`` seconds (default :data:`BOT_TURN_BUDGET_S`) have not
        passed (at most :data:`~tablehost.api.server_bots.BOT_MOVES_PER_CALL`); the rest at the
        next tick. A search bot to move is asked of the bot thread (:meth:`BotSeats.ask`), never
        searched here. Call under ``live.changed`` and the match's hold. Returns whether a move
        was made.

        The budget keeps a long game of bots from holding the request of the person who moved,
        and the timekeeper's other matches. A bot move the game fails on is not raised: the moves
        before it (the person's, in a request) stand, and the seat waits (:meth:`BotSeats.failed`)."""
        if not live.match.bots or self._bots.backing_off(live):
            return False
        moved = False
        give_up = time.monotonic() + (BOT_TURN_BUDGET_S if budget_s is None else budget_s)
        for _ in range(BOT_MOVES_PER_CALL):
            if moved and time.monotonic() >= give_up:
                return moved
            live.next_clocks = None
            try:
                played = play_bots(live.match, max_moves=1, searches=False)
            except StoreError:
                raise
            except TablehostError as exc:  # the game failed on the bot's move: the moves before stand
                self._bots.failed(live, exc)
                return moved
            if not played:
                self._bots.ask(live)
                return moved
            self._commit_clocks(live)
            moved = True
            if live.zombies:
                self._play_for_absent(live)
        return moved

    def _move_and_answers(
        self, live: LiveMatch, player_id: int, view_action: dict[str, Any], expected_version: int
    ) -> MoveRecord:
        """One seat's move (view addresses) with its clocks, then the host's moves for absent seats
        and the bots' (``random``/``first`` played, a search asked for). Call under ``live.changed``
        within :meth:`_changed`.

        Raises:
            as :meth:`Match.submit_view_action` (nothing of the move changed).
        """
        live.next_clocks = None
        move = live.match.submit_view_action(player_id, view_action, expected_version=expected_version)
        self._commit_clocks(live)
        if live.zombies:
            self._play_for_absent(live)
        self._play_bots(live)
        return move

    def _pin(self, live: LiveMatch) -> None:
        """Count one more use of ``live`` (here: a bot decision asked for): never evicted meanwhile."""
        with self._lock:
            live.pins += 1

    def _unpin(self, live: LiveMatch) -> None:
        """End one use of ``live`` (a request, watch stream or bot decision): evictable when none is left."""
        with self._lock:
            live.pins -= 1
            live.used_at = time.monotonic()

    def _move_bots(self, live: LiveMatch) -> None:
        """After a match starts: let its bot seats move (and wake its watchers), waiting a little
        for a search bot's first moves (:meth:`BotSeats.await_answer`)."""
        if not live.match.bots:
            return
        with live.changed:
            with self._held(live):
                if self._play_bots(live):
                    live.changed.notify_all()
            self._bots.await_answer(live, BOT_REPLY_WAIT_S)

    def _commit_clocks(self, live: LiveMatch) -> None:
        if live.next_clocks is not None:
            live.clocks, live.next_clocks = live.next_clocks, None

    def _come_back(self, live: LiveMatch, viewer: int | None) -> None:
        """A seat that shows up again (view or watch with its token) is no longer played for."""
        if viewer is not None and viewer in live.zombies and viewer not in live.match.resigned_ids:
            live.zombies.discard(viewer)
            live.returned[viewer] = live.match.version
            self.store.announce_return(live.match.match_id, viewer, live.match.version)
            log.info("seat.returned", match_id=live.match.match_id, player_id=viewer)

    # ------------------------------------------------------------ reading

    @contextmanager
    def _using(self, principal: Principal, match_id: str, *, acting: bool = False) -> Iterator[LiveMatch]:
        """The match ``match_id`` in memory (loaded from the store when it is not), pinned for the
        block: :meth:`evict_idle` never drops a match a request or watch stream is using.

        Args:
            acting: the request acts for a seat (a move, undo, resignation): on a match that
                has not started, a token that is not a seat's is refused as on a started one.

        Raises:
            PermissionDenied: another match's token; with ``acting``, a spectator or admin
                token on a match that has not started.
            MatchWaiting: the match waits in the lobby for its open seats.
            MatchOver: the match was aborted while it waited (it never started).
            UnknownMatch: no such match.
        """
        if principal.match_id is not None and principal.match_id != match_id:
            raise PermissionDenied(f"this token belongs to another match, not {match_id}", match_id=match_id)
        with self._lock:
            live = self._matches.get(match_id)
            if live is not None:
                live.pins += 1
        if live is None:
            # Only on a miss: a started match in memory never pays for the lobby's look-up.
            with self._lobby_using(match_id) as entry:
                if entry is not None:
                    if acting:
                        _require_seat(principal)
                    with entry.changed:
                        raise _not_started(entry)
            # Made by another process, or evicted: loaded exactly as after a restart.
            live = self._load(match_id, pin=True)
        if live is None:
            raise UnknownMatch(f"no match {match_id}", match_id=match_id)
        try:
            yield live
        finally:
            self._unpin(live)

    def _load(self, match_id: str, record: dict[str, Any] | None = None, *, pin: bool = False) -> LiveMatch | None:
        """A match not in memory (created by another process, or evicted), loaded from the store
        (from ``record`` when the caller read it already) with its clocks charged up to now;
        ``None`` when it is not stored or still waiting (then in the lobby). ``pin``: counted as
        used (:meth:`_using`) before another thread can evict it."""
        try:
            if record is None:
                record = self.store.load_record(match_id)
        except UnknownMatch:
            return None
        if self._hold_waiting(record):
            return None
        try:
            live = LiveMatch(self._resume(match_id, record), threading.Condition())
        except (RecordError, PatchError) as exc:  # a damaged record: said once per request, in the log too
            log.error("match.resume_failed", match_id=match_id, error=str(exc), error_type=type(exc).__name__)
            raise
        self._resume_clocks(live, record, None)  # the clocks as stored, charged up to now
        with self._lock:
            live = self._matches.setdefault(match_id, live)
            self._note_ticking(live)
            self._summaries.pop(match_id, None)
            self._wake_at.pop(match_id, None)
            if pin:
                live.pins += 1
            return live

    def view(self, principal: Principal, match_id: str) -> ServedView:
        """The caller's view: its seat's for a seat token, the spectator view otherwise (a waiting
        match: no table yet, status ``waiting`` and its open seats)."""
        with self._waiting(principal, match_id) as entry:
            if entry is not None:
                with entry.changed:
                    return self._pending_served(entry, principal.viewer)
        with self._using(principal, match_id) as live, live.changed:
            self._catch_up(live)
            self._come_back(live, principal.viewer)
            return self._served(live, principal.viewer)

    @contextmanager
    def _waiting(self, principal: Principal, match_id: str) -> Iterator[LobbyEntry | None]:
        """:meth:`_lobby_using` after the token check (PermissionDenied for another match's token)."""
        if principal.match_id is not None and principal.match_id != match_id:
            raise PermissionDenied(f"this token belongs to another match, not {match_id}", match_id=match_id)
        with self._lobby_using(match_id) as entry:
            yield entry

    @contextmanager
    def _lobby_using(self, match_id: str, *, reread: bool = True) -> Iterator[LobbyEntry | None]:
        """The waiting match ``match_id`` (:meth:`_lobby_entry`), or None, pinned for the block:
        :meth:`evict_idle` never drops a lobby entry a request or watch stream is using."""
        entry = None
        for _ in range(3):  # an entry evicted between finding and pinning it is loaded again
            entry = self._lobby_entry(match_id, reread=reread)
            if entry is None:
                break
            with self._lock:
                if self._lobby.get(match_id) is entry:
                    entry.pins += 1
                    break
            entry = None
        try:
            yield entry
        finally:
            if entry is not None:
                with self._lock:
                    entry.pins -= 1
                    entry.used_at = time.monotonic()

    def _lobby_entry(self, match_id: str, *, reread: bool = True) -> LobbyEntry | None:
        """The waiting match ``match_id`` or ``None``, loaded into the lobby if only its summary
        is in memory; on a shared store, as stored now unless ``reread`` is false for an entry in
        memory (another process may have created it, taken seats or started it)."""
        entry = self._lobby.get(match_id)
        if entry is None and match_id in self._matches:
            return None
        if not self.store.shared:
            if entry is None and self._summaries.get(match_id, {}).get("status") in LOBBY_STATUSES:
                try:
                    record = self.store.load_record(match_id)
                except UnknownMatch:
                    return None
                self._hold_waiting(record)
                return self._lobby.get(match_id)
            return entry
        if entry is not None and not reread:
            return entry
        try:
            record = self.store.load_record(match_id)
        except UnknownMatch:
            return None
        if not (is_pending(record) or record.get("status") == "aborted"):
            with self._lock:
                self._lobby.pop(match_id, None)
            if entry is not None:
                with entry.changed:
                    entry.changed.notify_all()
            return None
        if entry is None:
            self._hold_waiting(record)
            return self._lobby.get(match_id)
        with entry.changed:
            entry.pending = PendingMatch.from_json(record)
            entry.aborted = record.get("status") == "aborted"
        return entry

    def watch(
        self, principal: Principal, match_id: str, is_active: Callable[[], bool]
    ) -> Iterator[ServedView]:
        """The caller's view now, then after every change; ends after the game-over view.

        A waiting match sends its waiting view, then the first view once the last seat is
        taken. Views are coalesced: a reader slower than the match gets the newest view, never
        a backlog. The iterator also ends when ``is_active()`` turns false or the registry
        closes. A seat watching counts as connected (``extras["connected"]``) and, if the host
        was playing for it, as back.
        """
        with self._waiting(principal, match_id) as entry:  # pinned while the stream waits
            if entry is not None:
                sent = False
                while is_active() and not self._closing:
                    if self.store.shared:  # a join through another process
                        self._lobby_entry(match_id)
                    with entry.changed:
                        if match_id not in self._lobby or entry.aborted:
                            break
                        if sent:
                            entry.changed.wait(WATCH_POLL_S)
                            continue
                        served = self._pending_served(entry, principal.viewer)
                    yield served
                    sent = True
                if entry.aborted:
                    with entry.changed:
                        served = self._pending_served(entry, principal.viewer)
                    yield served
                    return
        with self._using(principal, match_id) as live:
            yield from self._follow(live, principal.viewer, is_active)

    def _follow(self, live: LiveMatch, viewer: int | None, is_active: Callable[[], bool]) -> Iterator[ServedView]:
        """The watch loop of :meth:`watch` on a started match (pinned by the caller)."""
        with live.changed:
            if viewer is not None:
                live.connected[viewer] += 1
            self._come_back(live, viewer)
        try:
            seen: int | None = None
            while is_active() and not self._closing:
                with live.changed:
                    self._catch_up(live)  # moves stored by another process (shared store)
                    if live.match.version == seen:
                        live.changed.wait(WATCH_POLL_S)
                        continue
                    served = self._served(live, viewer)
                seen = served.view.version
                yield served
                if served.view.game_over:
                    return
        finally:
            if viewer is not None:
                with live.changed:
                    live.connected[viewer] -= 1
                    if live.connected[viewer] <= 0:
                        del live.connected[viewer]

    def submit(
        self, principal: Principal, match_id: str, view_action: dict[str, Any], expected_version: int
    ) -> ServedView:
        """Play ``view_action`` (view addresses) for the caller's seat; durable before it returns.

        Returns:
            The caller's view right after the move and the moves played in the same request
            (the host's for absent seats, ``random``/``first`` bots'). A search bot to move next
            is only asked for its decision: the reply never waits for it, and its move reaches
            the caller through :meth:`view` and :meth:`watch` once it lands.

        Raises:
            PermissionDenied: not a seat token (the spectator and admin cannot act).
            MatchWaiting: the match waits for its open seats (checked after the token's rights,
                as a started match's own rules are).
            MatchError, GuestError, PatchError: refused by the match; nothing changed.
            StoreUnavailable: the store could not be reached or did not confirm the commit;
                nothing changed in memory (the next request re-reads the stored version).
            StoreConflict: not expected: a conflict with another process's move is redone under
                the store's hold (:meth:`_changed`), where no other process writes.
        """
        with self._using(principal, match_id, acting=True) as live:
            player_id = _require_seat(principal)

            def change() -> MoveRecord:  # run again on the stored match when the copy was behind
                self._come_back(live, player_id)
                action = _offered_form(live.match, player_id, view_action)
                return self._move_and_answers(live, player_id, action, expected_version)

            with live.changed, self._counted("move"):
                move = self._changed(live, change)
                live.changed.notify_all()
                if move is not None and move.printed:  # bounded by the gate's limits; for the admin
                    log.info("guest.printed", match_id=match_id, seq=move.seq, printed=move.printed)
                # No wait for a search bot's answer: it lands through views and watch, as for everyone.
                return self._served(live, player_id)

    def undo(self, principal: Principal, match_id: str, expected_version: int) -> ServedView:
        """Take back the caller's newest undoable move; durable before it returns.

        Raises:
            PermissionDenied: not a seat token.
            MatchWaiting: the match waits for its open seats.
            MatchOver, StaleVersion, UndoRefused: nothing changed.
            StoreUnavailable, StoreConflict: as for :meth:`submit`; nothing changed.
        """
        with self._using(principal, match_id, acting=True) as live:
            player_id = _require_seat(principal)

            def change() -> MoveRecord:  # run again on the stored match when the copy was behind
                undone = live.match.undo(player_id, expected_version=expected_version)
                if live.clocks is not None:  # as if the moves taken back never happened
                    match, now = live.match, now_ms()
                    saved = _stored_clocks(match, live.clocks.control)
                    live.clocks = Clocks.restore(
                        live.clocks.control, saved, match.active_player_ids, now, now, untimed=match.bots.keys()
                    )
                return undone

            with live.changed, self._counted("undo"):
                self._changed(live, change)
                live.changed.notify_all()
                return self._served(live, player_id)

    def record(self, principal: Principal, match_id: str) -> dict[str, Any]:
        """The match record: for the admin any time, for the match's tokens after game over.

        A match that has not started has no record: a record begins with the game's setup
        (docs/architecture.md "Records"), which runs when the last open seat is taken. The
        rights are checked first, as on a started match: a seat or spectator token of a
        waiting match (not over) is refused its rights, the admin is told the match waits.

        Raises:
            PermissionDenied: a seat or spectator token before game over (the record holds
                every hidden part of the table).
            MatchWaiting: the admin, while the match waits for its open seats.
            NeverStarted: the match was aborted while it waited (any of its tokens).
        """
        with self._waiting(principal, match_id) as entry:
            if entry is not None:
                with entry.changed:
                    pending = entry.pending
                    if entry.aborted:
                        raise NeverStarted(
                            f"match {match_id} was aborted before it started: no game was set up, so it has no record",
                            match_id=match_id,
                        )
                    if principal.kind != "admin":
                        raise PermissionDenied(RECORD_IS_HIDDEN, match_id=match_id)
                    raise MatchWaiting(
                        f"{_waits_for(pending)}: its record begins with the game's setup, when the last one is taken",
                        match_id=match_id,
                        open_seats=pending.open_seats,
                    )
        with self._using(principal, match_id) as live, live.changed:
            self._catch_up(live)
            if principal.kind != "admin" and not live.match.game_over:
                raise PermissionDenied(RECORD_IS_HIDDEN, match_id=match_id)
            return live.match.record()

    def log_history(self, principal: Principal, match_id: str, offset: int, limit: int) -> tuple[list[str], int]:
        """The caller's log lines from ``offset`` (0 = the match's first line), at most ``limit``.

        Lines come from the setup's and every move's ``log`` patches (undone moves left out),
        so lines older than the 500 a state keeps are there too; each is the caller's own
        ``for_player`` line where the game wrote one, exactly as in views.

        Returns:
            ``(texts, total)``: the lines and how many the match has in all.

        Raises:
            PermissionDenied: another match's token. UnknownMatch: no such match.
        """
        with self._waiting(principal, match_id) as entry:
            if entry is not None:
                return [], 0
        with self._using(principal, match_id) as live:
            key = None if principal.viewer is None else str(principal.viewer)
            with live.changed:
                match = live.match
                batches = [match.setup["patches"]] + [m.patches for m in match.history if not m.undone]
                entries = [p["entry"] for batch in batches for p in batch if p.get("op") == "log"]
            texts = [
                (entry.get("for_player") or {}).get(key, entry.get("text", "")) if key else entry.get("text", "")
                for entry in entries[offset : offset + limit]
            ]
            return texts, len(entries)

    def match_module(self, principal: Principal, match_id: str) -> StoredModule:
        """The module a match runs, bytes included, for anyone who may view the match.

        Browsers run the rules on their own view to predict a move (docs/abi.md, "Running
        the rules on a view"); the module is the game's rules, the same for every viewer.

        A waiting match's module is served too: a seat's page that opens before the last join
        runs the rules once the game starts.

        Raises:
            PermissionDenied: another match's token.
            UnknownMatch: no such match.
        """
        sha256 = None
        with self._waiting(principal, match_id) as entry:
            if entry is not None:
                with entry.changed:
                    sha256 = entry.pending.module_sha256
        if sha256 is None:
            with self._using(principal, match_id) as live, live.changed:
                sha256 = live.match.module_sha256
        stored = self.store.get_module(sha256)
        if stored is None:  # a match's module is always stored; this guards a damaged store
            raise UnknownModule(f"no module {sha256}", module_id=sha256)
        return stored

    def list_matches(
        self, principal: Principal, *, module_id: str = "", open_only: bool = False
    ) -> list[dict[str, Any]]:
        """Summaries of the matches the caller may see, newest first.

        Args:
            module_id: only matches of this module ("" for all).
            open_only: only waiting matches with an open seat.

        Returns:
            Dicts ``{match_id, module_id, module_name, players: [PlayerInfo], version, game_over,
            active_player_ids, created_at, status, result (MatchResult or None), open_seats,
            options, time_control}``. A match whose change has held it over
            :data:`LIST_WAIT_S` (a server bot searching for seconds) is listed as it stands,
            without catching up on other processes' moves, so one busy match never stalls the
            listing of all.
        """
        visible = lambda match_id: principal.match_id is None or principal.match_id == match_id
        if self.store.shared:  # matches another process created or changed since their eviction here
            with self._lock:
                evicted = dict(self._summaries)
            for match_id in set(self.store.match_ids()) - set(self._matches):
                known = evicted.get(match_id)
                heard = self.store.latest_version(match_id)  # None: no change heard of since
                if visible(match_id) and (known is None or (heard is not None and heard > known["version"])):
                    self._load(match_id)
        with self._lock:
            lives = [live for match_id, live in self._matches.items() if visible(match_id)]
            entries = [entry for match_id, entry in self._lobby.items() if visible(match_id)]
            summaries = [dict(s) for match_id, s in self._summaries.items() if visible(match_id)]
        for entry in entries:
            with entry.changed:
                summaries.append(waiting_summary(entry.pending, entry.aborted))
        if not open_only:
            for live in lives:
                if live.changed.acquire(timeout=LIST_WAIT_S):
                    try:
                        self._catch_up(live)
                        summaries.append(live_summary(live.match))
                    finally:
                        live.changed.release()
                else:  # a long change holds it (a server bot's search): listed as it stands
                    summaries.append(live_summary(live.match))
        summaries = [
            s
            for s in summaries
            if (not module_id or s["module_id"] == module_id) and (not open_only or s["open_seats"])
        ]
        return sorted(summaries, key=lambda s: (s["created_at"], s["match_id"]), reverse=True)

    @contextmanager
    def _counted(self, kind: str) -> Iterator[None]:
        """Count the ``kind`` change (move, undo) the block fails to make by its error code
        (:meth:`Metrics.count_unstored`); what it stores is counted as journaled
        (:meth:`_count_journaled`)."""
        del kind
        try:
            yield
        except TablehostError as exc:
            if self.metrics is not None:
                self.metrics.count_unstored(exc.code)
            raise

    def _count_journaled(self, match_id: str, kind: str, payload: dict[str, Any]) -> None:
        """The store's :attr:`~tablehost.store.MatchStore.on_journaled`: count a stored move or
        undo by who made it (``host`` for a move ``by_host``, ``bot`` for a server bot seat's,
        else ``person``); resignations and early endings are not moves."""
        if self.metrics is None or kind not in ("move", "undo"):
            return
        by = "person"
        if payload.get("by_host"):
            by = "host"
        elif kind == "move":
            live = self._matches.get(match_id)
            if live is not None and payload.get("player_id") in live.match.bots:
                by = "bot"
        self.metrics.count_journaled(kind, by)

    def _match_states(self) -> list[tuple[bool, str]]:
        """``(game_over, newest change at)`` per match in memory (for the matches gauge)."""
        with self._lock:
            lives = list(self._matches.values())
        return [
            (live.match.game_over, live.match.history[-1].at if live.match.history else live.match.created_at)
            for live in lives
        ]

    def _served(self, live: LiveMatch, viewer: int | None) -> ServedView:
        """The view of ``viewer`` at the match's current version (cached), with the extras of now;
        call under ``live.changed``."""
        match = live.match
        served = live.views.get(viewer)
        if served is None or served.view.version != match.version:
            served = ServedView(match.match_id, viewer, match.view(viewer), _score_labels(match))
            live.views[viewer] = served
        extras: dict[str, Any] = {}
        if live.clocks is not None:
            extras["clocks"] = live.clocks.view(now_ms())
            extras["time_control"] = live.clocks.control.to_json()
        if live.connected:
            extras["connected"] = sorted(live.connected)
        if live.zombies:
            extras["zombies"] = sorted(live.zombies)
        if not extras:
            return served
        return ServedView(served.match_id, viewer, served.view, served.score_labels, served.wire, extras)

    def _pending_served(self, entry: LobbyEntry, viewer: int | None) -> ServedView:
        pending = entry.pending
        view = _waiting_view(pending, "aborted" if entry.aborted else "waiting")
        extras = {"open_seats": [] if entry.aborted else pending.open_seats, "time_control": pending.time_control}
        return ServedView(pending.match_id, viewer, view, [], extras=extras)


def _stored_clocks(match: Match, control: TimeControl) -> dict[str, Any]:
    """The clocks a timed ``match`` is rebuilt from (every process alike): those journaled with its
    newest move that was not taken back, else the start's (``{"at_ms", "remaining"}``). An undo
    journals no clocks: the moves it took back and the time they earned (an increment) count for
    nothing, and the seats to move now are charged from that newest move on."""
    saved = next((m.clocks for m in reversed(match.history) if m.clocks is not None and not m.undone), None)
    if saved is not None:
        return saved
    started = int(match.time_control.get("started_at_ms", now_ms()))
    return Clocks.start(control, [p.player_id for p in match.players], [], started).to_json()


RECORD_IS_HIDDEN = "the record holds hidden information: players get it after game over, the admin any time"
"""GetRecord's refusal of a seat or spectator token before game over."""


def _require_admin(principal: Principal, what: str) -> None:
    if principal.kind != "admin":
        raise PermissionDenied(f"only the admin token may {what}")


def _require_seat(principal: Principal) -> int:
    if principal.kind != "seat" or principal.player_id is None:
        raise PermissionDenied(f"the {principal.kind} token cannot act; use a seat token")
    return principal.player_id


def _waiting_view(pending: PendingMatch, status: str = "waiting") -> MatchView:
    """The view of a match that has not started: a table of the State shape with its seats and
    nothing else (no spaces, meta data or log; no actions, scores or active seats).

    Args:
        pending: the waiting match.
        status: ``"waiting"``, or ``"aborted"`` for one aborted while it waited.

    Returns:
        A view at version 0 whose ``state["players"]`` lists every seat in seat order (as
        ``TableState.players`` does for a started match): ``player_id``, ``color``, ``username``
        (``""`` for an open seat, as ListMatches lists it) and empty public and private states.
    """
    result = None
    if status == "aborted":
        from tablehost.results import MatchResult

        result = MatchResult(ended_by="aborted")
    players = [
        {"player_id": seat.player_id, "color": seat.color, "username": seat.username or "",
         "public_state": {}, "private_state": {}}
        for seat in pending.seats
    ]
    state = {"active_player_ids": [], "players": players, "spaces": [], "meta_data": {}, "log": []}
    return MatchView(state, [], {}, [], status == "aborted", 0, status, result)


def _waits_for(pending: PendingMatch) -> str:
    """``"match m-... waits for 2 open seats (2, 3)"``: the start of a waiting match's refusals."""
    seats = pending.open_seats
    plural = "" if len(seats) == 1 else "s"
    return f"match {pending.match_id} waits for {len(seats)} open seat{plural} ({', '.join(map(str, seats))})"


def _not_started(entry: LobbyEntry) -> MatchError:
    """The refusal of a move, undo, resignation or abort of a match in the lobby (read under
    ``entry.changed``): :class:`MatchWaiting` while it waits for its open seats, :class:`MatchOver`
    once it was aborted (an aborted match accepts nothing, started or not)."""
    pending = entry.pending
    if entry.aborted:
        return MatchOver(f"match {pending.match_id} is over: it was aborted before it started", match_id=pending.match_id)
    return MatchWaiting(
        f"{_waits_for(pending)}: nothing can be played before the last one is taken (JoinMatch)",
        match_id=pending.match_id,
        open_seats=pending.open_seats,
    )


def _host_choice(offered: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The action the host plays for an absent seat (:data:`HOST_INTENTS`), or None."""
    for intent in HOST_INTENTS:
        for offer in offered:
            if offer.get("intent", "choice") == intent:
                return offer
    return None


def _score_labels(match: Match) -> list[str]:
    return list(match.setup.get("score_labels", []))


def _canonical_action(action: dict[str, Any]) -> dict[str, Any]:
    """An action with a button's omitted defaults filled in (ABI writers may omit them)."""
    if action.get("type") != "button_click":
        return action
    button = action.get("button") or {}
    return {
        "type": "button_click",
        "button": {
            "id": button.get("id", ""),
            "label": button.get("label", ""),
            "location": button.get("location", ""),
            "disabled": bool(button.get("disabled", False)),
        },
    }


def _offered_form(match: Match, player_id: int, view_action: dict[str, Any]) -> dict[str, Any]:
    """The offered view action equal to ``view_action`` up to omitted button defaults, else ``view_action``.

    A button from the wire always has every field; the game may have omitted its defaults.
    """
    if view_action.get("type") != "button_click" or match.game_over:
        return view_action
    wanted = _canonical_action(view_action)
    for offer in view_actions(match.state, player_id, match.actions_for(player_id)):
        if _canonical_action(offer["action"]) == wanted:
            return dict(offer["action"])
    return view_action


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
