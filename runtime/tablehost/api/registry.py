"""The live matches of one server: modules, matches, tokens, one lock per match, change notices.

:class:`MatchRegistry` is the domain side of the API (it never imports grpc): every method
takes the caller's :class:`~tablehost.api.auth.Principal`, checks what it may do, runs the
request on the match under that match's lock, and journals through the
:class:`~tablehost.store.MatchStore` before the change becomes visible.

On a shared store (PostgreSQL, several server processes) the copy of a match in memory may be
behind the database: a move or undo first takes the store's hold on the match
(:meth:`~tablehost.store.MatchStore.claim`: no other process changes it meanwhile) and reloads
the match when the stored version is newer; reads and watch streams reload when the store
heard of a newer version (its notifications also wake this process's watchers). Matches and
tokens created by another process are loaded on first use.

Check order of a match request: the token's match (PERMISSION_DENIED for another match's
token), unknown match, the token's rights (a spectator cannot act), then the match's own
order (game over, not active, stale version, not offered, the guest).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from tablehost.api.auth import ADMIN, Principal, ensure_admin_token, hash_token, new_token
from tablehost.api.faults import InvalidRequest, PermissionDenied, Unauthenticated, UnknownModule
from tablehost.api.metrics import MeteredPool, Metrics
from tablehost.api.validation import check_color, check_module_name, check_username
from tablehost.conformance import check_module
from tablehost.errors import ModuleError, TablehostError, UnknownMatch
from tablehost.guest import GuestPool, check_instantiates
from tablehost.history import PlayerInfo
from tablehost.limits import DEFAULT_LIMITS, Limits
from tablehost.match import Match, MatchView
from tablehost.module import GameModule, load_module
from tablehost.record import resume_match
from tablehost.store import Claim, MatchStore, SeatRow, StoredModule, open_store
from tablehost.view import view_actions

log = structlog.get_logger(__name__)

MAX_SEATS = 64
PALETTE = ("#c0392b", "#2980b9", "#27ae60", "#8e44ad", "#f39c12", "#16a085", "#d35400", "#2c3e50")
WATCH_POLL_S = 0.5
"""How often a waiting watcher re-checks that its client is still there (and, on a shared store,
that the match did not move elsewhere), seconds."""
HEARD_WAIT_S = 0.05
"""How long the store's listener waits for a busy match's lock to wake its watchers, seconds."""


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


@dataclass(frozen=True)
class CreatedMatch:
    """What CreateMatch returns.

    Attributes:
        match_id: the new match's id.
        seats: ``(player, token)`` per seat in seat order; tokens are shown only here.
        spectator_token: the match's spectator token.
        view: the spectator view at version 0.
        score_labels: names of the score columns.
    """

    match_id: str
    seats: list[tuple[PlayerInfo, str]]
    spectator_token: str
    view: MatchView
    score_labels: list[str]


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


def _require_check(module: GameModule, games: int, players: int, limits: Limits) -> None:
    """Refuse ``module`` unless ``tablehost check`` finds no difference, leak or failure.

    Raises:
        ModuleError: with the first finding.
    """
    report = check_module(module, games=games, seed=1, players=players, limits=limits)
    if report.ok:
        return
    if report.differences:
        first = report.differences[0]
        finding = (f"call {first.call} ({first.op}) of game {first.game} answered differently in a fresh "
                   f"instance at {first.path}: {first.played} then {first.fresh}")
    elif report.leaks:
        leak = report.leaks[0]
        finding = f"viewer {leak.viewer} was served hidden kinds {leak.kinds} in game {leak.game}"
    else:
        finding = report.failures[0]
    raise ModuleError(f"the module failed tablehost check: {finding}", sha256=module.sha256)


class MatchRegistry:
    """Every module and match of one data directory, served to authenticated principals.

    Args:
        data_dir: the server's data directory (admin token, compiled-code cache, and the SQLite
            database unless ``store`` names another).
        limits: guest budgets for every module.
        synchronous: the store's SQLite sync mode (``"FULL"`` or ``"NORMAL"``).
        check_uploads: games of ``tablehost check`` an upload must pass (0: no check).
        check_players: seats per game of that check.
        store: a ``--store`` value (:func:`tablehost.store.open_store`): ``None`` for SQLite in
            ``data_dir``, ``sqlite:DIR``, or ``postgresql://...``.
        metrics: where moves, guest calls, matches and store commits are counted (none: not counted).

    On construction the admin token is created if missing and every stored match is resumed;
    a match that cannot be resumed is logged (``match.resume_failed``) and left out.

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
        check_players: int = 2,
        store: str | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.limits = limits
        self.check_uploads = check_uploads
        self.check_players = check_players
        self.metrics = metrics
        self.store: MatchStore = open_store(store, self.data_dir, synchronous=synchronous)
        if metrics is not None:
            self.store.on_commit = metrics.store_commit.observe
            metrics.watch_matches(self._match_states)
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
        self._resume_pools: dict[str, GuestPool] = {}
        self._matches: dict[str, LiveMatch] = {}
        self._tokens: dict[str, Principal] = {hash_token(admin_token): ADMIN}
        for seat in self.store.load_seats():
            kind = "spectator" if seat.player_id is None else "seat"
            self._tokens[seat.token_sha256] = Principal(kind, seat.match_id, seat.player_id)
        self._resume_all()
        self.store.subscribe(self._heard)

    # ------------------------------------------------------------ lifecycle

    def _resume_all(self) -> None:
        for match_id in self.store.match_ids():
            try:
                self._matches[match_id] = LiveMatch(self._resume(match_id), threading.Condition())
            except Exception as exc:  # noqa: BLE001 - one broken match must not keep the others from being served
                log.error(
                    "match.resume_failed", match_id=match_id, error=str(exc), error_type=type(exc).__name__
                )

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
        match = resume_match(resume_pool, record, journal=self.store.journal_for(match_id))
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
        previous = live.match.version
        live.match = self._resume(match_id, record)
        live.views.clear()
        log.info("match.caught_up", match_id=match_id, version_before=previous, version=live.match.version)

    def close_watchers(self) -> None:
        """Wake every watcher so its stream ends (before stopping the server); no new watch waits."""
        self._closing = True
        for live in list(self._matches.values()):
            with live.changed:
                live.changed.notify_all()

    def close(self) -> None:
        """End the watchers, close the guest pools and the store; the registry is unusable afterwards."""
        self.close_watchers()
        self.closed.set()
        for pool in [*self._pools.values(), *self._resume_pools.values()]:
            pool.close()
        # entries / transactions: how many journal entries each fsync carried on average.
        log.info("store.closed", transactions=self.store.transactions, entries=self.store.entries)
        self.store.close()

    def authenticate(self, token: str) -> Principal:
        """Return the principal of a bearer token.

        Raises:
            Unauthenticated: the token is unknown.
        """
        token_sha256 = hash_token(token)
        principal = self._tokens.get(token_sha256)
        if principal is None and self.store.shared:
            principal = self._stored_principal(token_sha256)
        if principal is None:
            raise Unauthenticated("unknown token")
        return principal

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
        fresh = (
            GuestPool(module, self.limits)
            if self.metrics is None
            else MeteredPool(module, self.limits, self.metrics)
        )
        with self._lock:
            return self._pools.setdefault(sha256, fresh)

    def upload_module(self, principal: Principal, data: bytes, name: str) -> StoredModule:
        """Validate, compile and store a module (admin only); identical bytes return the stored module.

        Returns:
            The stored module; ``newly_stored`` false when the bytes were stored before (the
            first name is kept, ``name`` ignored, ``module.already_stored`` logged).

        Raises:
            PermissionDenied: not the admin token.
            InvalidRequest: the name is over 200 characters or has a control character.
            ModuleError: not a valid ABI v1 module, its validation and compilation went over
                ``compile_ms`` or ``compile_memory_bytes`` (they run in a capped child process),
                or (``check_uploads``) it failed ``tablehost check``.
        """
        _require_admin(principal, "upload modules")
        check_module_name(name)
        module = load_module(
            data, limits=self.limits, cache_dir=self.data_dir / "cache", name=name or None, isolated=True
        )
        check_instantiates(module, self.limits)  # a start function that loops or traps is refused here
        if self.check_uploads:
            _require_check(module, self.check_uploads, self.check_players, self.limits)
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
        self, principal: Principal, module_id: str, seats: list[tuple[str, str]]
    ) -> CreatedMatch:
        """Start a match (admin only) with one seat per ``(username, color)``; blanks get defaults.

        Returns:
            The match id, a token per seat, the spectator token and the first spectator view.

        Raises:
            PermissionDenied: not the admin token.
            InvalidRequest: no seats or more than :data:`MAX_SEATS`, or a username or color
                the API does not accept (:mod:`tablehost.api.validation`).
            UnknownModule: no such module.
            GuestError: the game failed during setup (nothing is stored).
        """
        _require_admin(principal, "create matches")
        if not 1 <= len(seats) <= MAX_SEATS:
            raise InvalidRequest(f"a match needs 1 to {MAX_SEATS} seats, got {len(seats)}")
        for username, color in seats:
            if username:
                check_username(username)
            check_color(color)
        pool = self._pool(module_id)
        stored = self.store.get_module(module_id)
        assert stored is not None
        match_id = "m-" + secrets.token_hex(8)
        players = [
            PlayerInfo(n, username or f"player{n}", color or PALETTE[(n - 1) % len(PALETTE)])
            for n, (username, color) in enumerate(seats, start=1)
        ]
        tokens = [new_token("seat") for _ in players]
        spectator_token = new_token("spectator")
        rows = [SeatRow(hash_token(t), match_id, p.player_id) for p, t in zip(players, tokens)]
        rows.append(SeatRow(hash_token(spectator_token), match_id, None))
        match = Match.start(
            pool,
            players,
            match_id=match_id,
            module_sha256=module_id,
            module_name=stored.name,
            journal=self.store.journal_for(match_id, rows),
        )
        with self._lock:
            self._matches[match_id] = LiveMatch(match, threading.Condition())
            for row in rows:
                kind = "spectator" if row.player_id is None else "seat"
                self._tokens[row.token_sha256] = Principal(kind, match_id, row.player_id)
        log.info("match.created", match_id=match_id, module_id=module_id, seats=len(players))
        if match.setup.get("printed"):
            log.info("guest.printed", match_id=match_id, seq=0, printed=match.setup["printed"])
        return CreatedMatch(
            match_id, list(zip(players, tokens)), spectator_token, match.view(None), _score_labels(match)
        )

    def _live(self, principal: Principal, match_id: str) -> LiveMatch:
        if principal.match_id is not None and principal.match_id != match_id:
            raise PermissionDenied(f"this token belongs to another match, not {match_id}", match_id=match_id)
        live = self._matches.get(match_id)
        if live is None and self.store.shared:
            live = self._load(match_id)
        if live is None:
            raise UnknownMatch(f"no match {match_id}", match_id=match_id)
        return live

    def _load(self, match_id: str) -> LiveMatch | None:
        """A match another process created, loaded into memory; ``None`` when it is not stored."""
        try:
            match = self._resume(match_id)
        except UnknownMatch:
            return None
        with self._lock:
            return self._matches.setdefault(match_id, LiveMatch(match, threading.Condition()))

    def view(self, principal: Principal, match_id: str) -> ServedView:
        """The caller's view: its seat's for a seat token, the spectator view otherwise."""
        live = self._live(principal, match_id)
        with live.changed:
            self._catch_up(live)
            return self._served(live, principal.viewer)

    def watch(
        self, principal: Principal, match_id: str, is_active: Callable[[], bool]
    ) -> Iterator[ServedView]:
        """The caller's view now, then after every change; ends after the game-over view.

        Views are coalesced: a reader slower than the match gets the newest view, never a
        backlog. The iterator also ends when ``is_active()`` turns false or the registry closes.
        """
        live = self._live(principal, match_id)
        seen: int | None = None
        while is_active() and not self._closing:
            with live.changed:
                self._catch_up(live)
                if live.match.version == seen:
                    live.changed.wait(WATCH_POLL_S)
                    continue
                served = self._served(live, principal.viewer)
            seen = served.view.version
            yield served
            if served.view.game_over:
                return

    def submit(
        self, principal: Principal, match_id: str, view_action: dict[str, Any], expected_version: int
    ) -> ServedView:
        """Play ``view_action`` (view addresses) for the caller's seat; durable before it returns.

        Raises:
            PermissionDenied: not a seat token (the spectator and admin cannot act).
            MatchError, GuestError, PatchError: refused by the match; nothing changed.
            StoreUnavailable: the store could not be reached or did not confirm the commit;
                nothing changed in memory (the next request re-reads the stored version).
            StoreConflict: another process stored this version first (a shared store without
                its hold, which the claim prevents); nothing changed.
        """
        live = self._live(principal, match_id)
        player_id = _require_seat(principal)
        with live.changed, self._counted("move"), self.store.claim(match_id) as claim:
            self._catch_up(live, claim)
            live.match.journal = claim.journal
            action = _offered_form(live.match, player_id, view_action)
            move = live.match.submit_view_action(player_id, action, expected_version=expected_version)
            live.changed.notify_all()
            if move.printed:  # bounded by the gate's limits; for the admin, never for players
                log.info("guest.printed", match_id=match_id, seq=move.seq, printed=move.printed)
            return self._served(live, player_id)

    def undo(self, principal: Principal, match_id: str, expected_version: int) -> ServedView:
        """Take back the caller's newest undoable move; durable before it returns.

        Raises:
            PermissionDenied: not a seat token.
            MatchOver, StaleVersion, UndoRefused: nothing changed.
            StoreUnavailable, StoreConflict: as for :meth:`submit`; nothing changed.
        """
        live = self._live(principal, match_id)
        player_id = _require_seat(principal)
        with live.changed, self._counted("undo"), self.store.claim(match_id) as claim:
            self._catch_up(live, claim)
            live.match.journal = claim.journal
            live.match.undo(player_id, expected_version=expected_version)
            live.changed.notify_all()
            return self._served(live, player_id)

    def record(self, principal: Principal, match_id: str) -> dict[str, Any]:
        """The match record: for the admin any time, for the match's tokens after game over.

        Raises:
            PermissionDenied: a seat or spectator token before game over (the record holds
                every hidden part of the table).
        """
        live = self._live(principal, match_id)
        with live.changed:
            self._catch_up(live)
            if principal.kind != "admin" and not live.match.game_over:
                raise PermissionDenied(
                    "the record holds hidden information: players get it after game over, the admin any time",
                    match_id=match_id,
                )
            return live.match.record()

    def match_module(self, principal: Principal, match_id: str) -> StoredModule:
        """The module a match runs, bytes included, for anyone who may view the match.

        Browsers run the rules on their own view to predict a move (docs/abi.md, "Running
        the rules on a view"); the module is the game's rules, the same for every viewer.

        Raises:
            PermissionDenied: another match's token.
            UnknownMatch: no such match.
        """
        live = self._live(principal, match_id)
        with live.changed:
            sha256 = live.match.module_sha256
        stored = self.store.get_module(sha256)
        if stored is None:  # a live match's module is always stored; this guards a damaged store
            raise UnknownModule(f"no module {sha256}", module_id=sha256)
        return stored

    def list_matches(self, principal: Principal) -> list[dict[str, Any]]:
        """Summaries of the matches the caller may see, newest first.

        Returns:
            Dicts ``{match_id, module_id, module_name, players: [PlayerInfo], version, game_over,
            active_player_ids, created_at}``.
        """
        if self.store.shared:  # matches another process created
            for match_id in set(self.store.match_ids()) - set(self._matches):
                if principal.match_id is None or principal.match_id == match_id:
                    self._load(match_id)
        with self._lock:
            lives = [
                live
                for match_id, live in self._matches.items()
                if principal.match_id is None or principal.match_id == match_id
            ]
        summaries = []
        for live in lives:
            with live.changed:
                self._catch_up(live)
                m = live.match
                summaries.append(
                    {
                        "match_id": m.match_id,
                        "module_id": m.module_sha256,
                        "module_name": m.module_name,
                        "players": list(m.players),
                        "version": m.version,
                        "game_over": m.game_over,
                        "active_player_ids": [] if m.game_over else m.active_player_ids,
                        "created_at": m.created_at,
                    }
                )
        return sorted(summaries, key=lambda s: (s["created_at"], s["match_id"]), reverse=True)

    @contextmanager
    def _counted(self, kind: str) -> Iterator[None]:
        """Count the change the block makes as accepted, or refused with its error code."""
        try:
            yield
        except TablehostError as exc:
            if self.metrics is not None:
                self.metrics.moves_refused.labels(exc.code).inc()
            raise
        if self.metrics is not None:
            self.metrics.moves_accepted.labels(kind).inc()

    def _match_states(self) -> list[tuple[bool, str]]:
        """``(game_over, newest change at)`` per match in memory (for the matches gauge)."""
        with self._lock:
            lives = list(self._matches.values())
        return [
            (live.match.game_over, live.match.history[-1].at if live.match.history else live.match.created_at)
            for live in lives
        ]

    def _served(self, live: LiveMatch, viewer: int | None) -> ServedView:
        """The view of ``viewer`` at the match's current version (cached); call under ``live.changed``."""
        match = live.match
        served = live.views.get(viewer)
        if served is None or served.view.version != match.version:
            served = ServedView(match.match_id, viewer, match.view(viewer), _score_labels(match))
            live.views[viewer] = served
        return served


def _require_admin(principal: Principal, what: str) -> None:
    if principal.kind != "admin":
        raise PermissionDenied(f"only the admin token may {what}")


def _require_seat(principal: Principal) -> int:
    if principal.kind != "seat" or principal.player_id is None:
        raise PermissionDenied(f"the {principal.kind} token cannot act; use a seat token")
    return principal.player_id


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
