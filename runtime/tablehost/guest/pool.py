"""The instances of one module: :class:`GuestPool` binds each to one match and routes calls by state reference.

Isolation (DESIGN.md "Guest ABI v1"): an instance serves one match. A match's next call goes to
the instance it used last while that instance is idle and warm; otherwise a fresh instance is
made from the pre-compiled module, so nothing a guest can read (request buffer, heap, globals,
SDK cache) was written for another match. A warm instance unused for ``keep_warm_ms`` is
dropped by a sweeper thread (an idle match then holds only its state, in the host), and an
instance is dropped as soon as it fails or the host refuses what it answered
(:meth:`GuestPool.discard_ref`).

Budgets and fairness: each op gets one :class:`~tablehost.guest.instance.CallBudget`, shared by
a ``state_miss`` resend and buffer allocations. At most ``instances_per_module`` calls of a
module run at once; a call waits at most ``wall_ms`` for a slot (else :class:`ModuleBusy`).
After ``quarantine_after`` failures within :data:`QUARANTINE_WINDOW_S` the module is refused
(:class:`ModuleQuarantined`) for ``quarantine_ms``, doubling while it keeps failing (a module
that always traps cannot make the host instantiate it thousands of times a second).

Guest code runs only on threads of a known large native stack (:mod:`tablehost._stacks`).
"""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

import structlog

from tablehost._stacks import on_big_stack
from tablehost.errors import BudgetExceeded, GuestError, ModuleBusy, ModuleQuarantined
from tablehost.guest.instance import CallBudget, Guest
from tablehost.guest.protocol import (
    OP_ACTIONS,
    OP_GAME_OVER,
    OP_METADATA,
    OP_NAMES,
    OP_SCORES,
    OP_SETUP,
    OP_STEP,
    StateMiss,
)
from tablehost.limits import Limits
from tablehost.module import GameModule
from tablehost.types import ActionDict, AvailableActionDict, PlayerId, Seed, StateDict

log = structlog.get_logger(__name__)

LOGGED_ERROR_CHARS = 2048
"""Characters of a failure's message written to the log (a panic message may be megabytes)."""

KEEP_WARM_MS = 2_000.0
"""A match's idle instance is kept this long for its next call, milliseconds, then dropped."""

QUARANTINE_DOUBLINGS = 6
"""A quarantine doubles at most this many times (``quarantine_ms * 64``)."""

QUARANTINE_WINDOW_S = 10.0
"""Failures count toward a quarantine for this many seconds; a quarantine that follows the end of
the previous one within this window lasts twice as long."""


_ONE_OFF = itertools.count()
"""Numbers the match keys of one-off instances (searches, playouts from setup)."""


def match_key(state_ref: str) -> str:
    """The match a state ref belongs to: refs are ``"<match key>:<version>"`` (docs/abi.md)."""
    return state_ref.rpartition(":")[0] or state_ref


class GuestPool:
    """Instances of one module, each bound to one match; at most ``limits.instances_per_module`` live.

    A call with a ``state_ref`` goes to the match's warm instance when it is idle and sends only
    the ref if that instance holds it; otherwise a fresh instance gets the full state from
    ``get_state()``. A ``state_miss`` answer makes the pool resend the same request with the
    full state, under the same budget. Any failure discards the instance that failed.
    Thread-safe.

    Args:
        module: the compiled module.
        limits: budgets (default ``module.limits``); ``stack_bytes`` must equal the module's,
            since the stack cap is an engine setting.
        keep_warm_ms: how long a match's idle instance is kept, milliseconds (0: dropped after
            every call, so every call instantiates).

    Attributes:
        instantiations: fresh instances made so far (match switches and replacements).

    Raises:
        ValueError: ``limits.stack_bytes`` differs from the module's.
    """

    def __init__(self, module: GameModule, limits: Limits | None = None, *, keep_warm_ms: float = KEEP_WARM_MS) -> None:
        self.module = module
        self.limits = limits or module.limits
        if self.limits.stack_bytes != module.limits.stack_bytes:
            raise ValueError("stack_bytes is an engine setting: load the module with the limits you want")
        self.keep_warm_ms = keep_warm_ms
        self.instantiations = 0
        self._cond = threading.Condition()
        self._warm: OrderedDict[str, tuple[Guest, float]] = OrderedDict()  # match key -> (idle instance, since)
        self._busy: set[Guest] = set()
        self._starting = 0
        self._closed = False
        self._failures: deque[float] = deque()  # monotonic times of recent failed calls
        self._quarantines = 0
        self._quarantined_until = 0.0
        _SWEEPER.add(self)

    def setup(
        self, players: list[dict[str, Any]], seed: Seed, next_ref: str, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Run ``setup`` and cache the starting state in the instance under ``next_ref``.

        Args:
            players: ``[{"player_id", "username", "color"}]`` in seat order.
            seed: the setup seed, 0 <= seed < 2**64.
            next_ref: the ref the SDK keeps the resulting state under.
            options: the chosen options (ABI v1.1), sent only when not empty.

        Returns:
            The setup response: ``state``, ``patches``, ``rng_used``, ``score_labels``, ``scores``,
            ``game_over``, ``actions`` (per player id as a decimal string), maybe ``printed``.

        Raises:
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
        """
        request: dict[str, Any] = {"players": players, "seed": seed, "next_ref": next_ref}
        if options:
            request["options"] = options
        return self._run(OP_SETUP, None, _no_state, request, next_ref=next_ref)

    def metadata(self) -> dict[str, Any] | None:
        """The module's op-6 answer (unchecked: see :mod:`tablehost.metadata`), or None for a
        module of ABI minor 0, which has no ``metadata`` op. Runs in a fresh instance bound to
        no match, under one call's budgets.

        Raises:
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
        """

        def ask() -> dict[str, Any] | None:
            guest = Guest(self.module, self.limits)
            budget = CallBudget.start(self.limits)
            if guest.abi_minor(budget) < 1:
                return None
            return guest.call(OP_METADATA, {}, budget)

        return on_big_stack(self.limits.stack_bytes, ask)

    def step(
        self,
        state_ref: str,
        get_state: Callable[[], StateDict],
        next_ref: str,
        player_id: PlayerId,
        action: ActionDict,
        seed: Seed,
        *,
        want_state: bool = False,
    ) -> dict[str, Any]:
        """Apply ``action`` of ``player_id`` to the state named ``state_ref``; one crossing.

        Args:
            state_ref: the ref of the current state (sent alone when an instance holds it).
            get_state: returns the full current state when it must be sent.
            next_ref: the ref the SDK keeps the resulting state under; ``state_ref`` is forgotten.
            player_id: the acting player.
            action: the action in guest addresses.
            seed: this move's seed, 0 <= seed < 2**64.
            want_state: also return the resulting ``state`` (to check the host's mirror).

        Returns:
            The step response: ``patches``, ``rng_used``, ``allow_undo``, ``scores``,
            ``game_over``, ``actions``, ``state`` when asked, maybe ``printed``.

        Raises:
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
        """
        request: dict[str, Any] = {"next_ref": next_ref, "player_id": player_id, "action": action, "seed": seed}
        if want_state:
            request["want_state"] = True
        return self._run(OP_STEP, state_ref, get_state, request, next_ref=next_ref)

    def actions(
        self, state_ref: str, get_state: Callable[[], StateDict], player_id: PlayerId
    ) -> list[AvailableActionDict]:
        """The actions the game offers ``player_id`` in the state named ``state_ref``.

        Raises:
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
        """
        actions: list[AvailableActionDict] = self._run(
            OP_ACTIONS, state_ref, get_state, {"player_id": player_id}
        )["actions"]
        return actions

    def scores(self, state_ref: str, get_state: Callable[[], StateDict]) -> dict[str, Any]:
        """The scores response ``{"scores": {"<pid>": Score}}`` for the state named ``state_ref``.

        Raises:
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
        """
        return self._run(OP_SCORES, state_ref, get_state, {})

    def game_over(self, state_ref: str, get_state: Callable[[], StateDict]) -> dict[str, Any]:
        """The game-over response ``{"game_over": bool, "scores": ...}`` for the state named ``state_ref``.

        Raises:
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
        """
        return self._run(OP_GAME_OVER, state_ref, get_state, {})

    def run_scaled(
        self,
        op: int,
        fields: dict[str, Any],
        *,
        scale: int,
        state_ref: str | None = None,
        get_state: Callable[[], StateDict] | None = None,
    ) -> dict[str, Any]:
        """Run an ABI v1.1 op (``playout``, ``search``) under ``scale`` times the per-move budgets.

        With ``state_ref`` the call goes to that match's instance (sending only the ref when it
        holds it); without, to a fresh instance of its own that is dropped afterwards, so
        nothing of one search or batch is visible to another.

        Args:
            op: ``OP_PLAYOUT`` or ``OP_SEARCH``.
            fields: the request's members (no ``state``/``state_ref``: those come from the next two).
            scale: budget multiplier, >= 1 (e.g. the number of games asked for).
            state_ref: the state to run from (its match's instance is used).
            get_state: returns the full state when it must be sent (required with ``state_ref``).

        Returns:
            The parsed response (only its being an object is checked here; the caller checks the rest).

        Raises:
            ValueError: ``scale`` below 1.
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
            ModuleBusy, ModuleQuarantined: as for every call.
        """
        if scale < 1:
            raise ValueError(f"scale must be at least 1, got {scale}")
        key = match_key(state_ref) if state_ref is not None else f"inguest:{next(_ONE_OFF)}"
        return on_big_stack(
            self.limits.stack_bytes, lambda: self._run_scaled_bound(key, op, fields, scale, state_ref, get_state)
        )

    def _run_scaled_bound(
        self,
        key: str,
        op: int,
        fields: dict[str, Any],
        scale: int,
        state_ref: str | None,
        get_state: Callable[[], StateDict] | None,
    ) -> dict[str, Any]:
        guest = self._acquire(key)
        budget = CallBudget.start(self.limits, scale)
        try:
            response: dict[str, Any] | None = None
            if state_ref is not None and state_ref in guest.refs:
                try:
                    response = guest.call(op, {"state_ref": state_ref, **fields}, budget)
                    guest.touch(state_ref)
                except StateMiss:
                    guest.forget(state_ref)
            if response is None:
                request = dict(fields) if get_state is None else {"state": get_state(), **fields}
                response = guest.call(op, request, budget)
        except GuestError as exc:
            log.warning("guest.call_failed", module=self.module.name, op=OP_NAMES[op], code=exc.code,
                        budget=getattr(exc, "budget", None), error=str(exc), match=key)
            guest.broken = True
            self._release(guest, failed=True)
            raise
        except BaseException:
            guest.broken = True
            self._release(guest, failed=False)
            raise
        if state_ref is None:
            guest.broken = True  # a one-off instance: never kept warm, never reused
        self._release(guest, failed=False)
        return response

    def discard_ref(self, state_ref: str) -> None:
        """Never reuse what an instance holds for ``state_ref`` (the host refused it, or undid it).

        The match's warm instance is dropped, so the guest's cached result cannot come back
        under this or any later ref; the match's next call instantiates afresh and sends the
        full state. Call it on every refusal that follows a guest call.
        """
        key = match_key(state_ref)
        with self._cond:
            entry = self._warm.pop(key, None)
            for guest in self._busy:
                if guest.match_key == key:
                    guest.broken = True  # in a call of the same match: dropped when it returns
            self._cond.notify_all()
        del entry

    def close_match(self, key: str) -> None:
        """Drop the warm instance of match ``key`` (e.g. its game is over or it was unloaded)."""
        with self._cond:
            self._warm.pop(key, None)
            self._cond.notify_all()

    def close(self) -> None:
        """Drop every instance; later calls raise :class:`GuestError`. Busy calls finish first."""
        with self._cond:
            self._closed = True
            self._warm.clear()
            self._cond.notify_all()

    @property
    def instance_count(self) -> int:
        """Instances alive now (warm or in a call)."""
        with self._cond:
            return len(self._warm) + len(self._busy) + self._starting

    @property
    def quarantined_for_ms(self) -> float:
        """Milliseconds the module stays quarantined (0 when it is not)."""
        return max(0.0, (self._quarantined_until - time.monotonic()) * 1000.0)

    def sweep(self, now: float | None = None) -> int:
        """Drop warm instances idle for more than ``keep_warm_ms``; return how many were dropped."""
        now = time.monotonic() if now is None else now
        cutoff = now - self.keep_warm_ms / 1000.0
        with self._cond:
            stale = [key for key, (_, since) in self._warm.items() if since <= cutoff]
            for key in stale:
                del self._warm[key]
            if stale:
                self._cond.notify_all()
        return len(stale)

    def _run(
        self,
        op: int,
        state_ref: str | None,
        get_state: Callable[[], StateDict],
        fields: dict[str, Any],
        *,
        next_ref: str | None = None,
    ) -> dict[str, Any]:
        ref = state_ref if state_ref is not None else next_ref
        assert ref is not None
        key = match_key(ref)
        return on_big_stack(
            self.limits.stack_bytes, lambda: self._run_bound(key, op, state_ref, get_state, fields, next_ref)
        )

    def _run_bound(
        self,
        key: str,
        op: int,
        state_ref: str | None,
        get_state: Callable[[], StateDict],
        fields: dict[str, Any],
        next_ref: str | None,
    ) -> dict[str, Any]:
        guest = self._acquire(key)
        budget = CallBudget.start(self.limits)
        try:
            held = state_ref if state_ref is not None and state_ref in guest.refs else None
            response, by_ref = self._call_with_state(guest, op, held, get_state, fields, budget)
        except GuestError as exc:
            log.warning("guest.call_failed", module=self.module.name, op=OP_NAMES[op], code=exc.code,
                        budget=exc.budget if isinstance(exc, BudgetExceeded) else None,
                        error=str(exc)[:LOGGED_ERROR_CHARS], match=key)
            guest.broken = True  # its cache may hold next_ref of the failed call: never reuse it
            self._release(guest, failed=True)
            raise
        except BaseException:
            guest.broken = True
            self._release(guest, failed=False)
            raise
        with self._cond:  # the bookkeeping and the release share one lock hold
            if state_ref is not None and op == OP_STEP:
                guest.forget(state_ref)  # the SDK moved this state on to next_ref
            elif state_ref is not None and by_ref:
                guest.touch(state_ref)
            if next_ref is not None:
                guest.remember(next_ref)
            self._release_locked(guest, failed=False)
        return response

    @staticmethod
    def _call_with_state(
        guest: Guest,
        op: int,
        held_ref: str | None,
        get_state: Callable[[], StateDict],
        fields: dict[str, Any],
        budget: CallBudget,
    ) -> tuple[dict[str, Any], bool]:
        """Call by ``held_ref`` when given, else (or after a miss) with the full state; say which."""
        if op == OP_SETUP:
            return guest.call(op, fields, budget), False
        if held_ref is not None:
            try:
                return guest.call(op, {"state_ref": held_ref, **fields}, budget), True
            except StateMiss:
                guest.forget(held_ref)
        return guest.call(op, {"state": get_state(), **fields}, budget), False

    def _acquire(self, key: str) -> Guest:
        """The warm instance of match ``key``, else a fresh one bound to it (waiting at most ``wall_ms``)."""
        deadline = time.monotonic() + self.limits.wall_ms / 1000.0
        with self._cond:
            while True:
                if self._closed:
                    raise GuestError(f"the guest pool of module {self.module.name} is closed")
                wait_ms = self.quarantined_for_ms
                if wait_ms > 0:
                    raise ModuleQuarantined(
                        f"module {self.module.name} is quarantined for {wait_ms:.0f} ms more: "
                        f"{self.limits.quarantine_after} of its calls failed within {QUARANTINE_WINDOW_S:.0f} s",
                        retry_after_ms=int(wait_ms) + 1,
                    )
                entry = self._warm.pop(key, None)
                if entry is not None:
                    guest = entry[0]
                    self._busy.add(guest)
                    return guest
                live = len(self._warm) + len(self._busy) + self._starting
                if live >= self.limits.instances_per_module and self._warm:
                    self._warm.popitem(last=False)  # the least recently used idle match gives way
                    live -= 1
                if live < self.limits.instances_per_module:
                    self._starting += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ModuleBusy(
                        f"module {self.module.name} had all {self.limits.instances_per_module} call slots "
                        f"taken for {self.limits.wall_ms} ms"
                    )
                self._cond.wait(left)
        try:
            guest = Guest(self.module, self.limits)
        except BaseException as exc:
            with self._cond:
                self._starting -= 1
                if isinstance(exc, GuestError):
                    self._count_failure_locked()
                self._cond.notify()
            raise
        guest.match_key = key
        with self._cond:
            self._starting -= 1
            self.instantiations += 1
            self._busy.add(guest)
        return guest

    def _release(self, guest: Guest, *, failed: bool) -> None:
        with self._cond:
            self._release_locked(guest, failed=failed)

    def _release_locked(self, guest: Guest, *, failed: bool) -> None:
        self._busy.discard(guest)
        if failed:
            self._count_failure_locked()
        key = guest.match_key
        if not (guest.broken or self._closed or key is None or self.keep_warm_ms <= 0):
            self._warm.pop(key, None)  # a second instance of the same match: keep the newer
            self._warm[key] = (guest, time.monotonic())
        self._cond.notify()

    def _count_failure_locked(self) -> None:
        now = time.monotonic()
        failures = self._failures
        failures.append(now)
        while failures and failures[0] < now - QUARANTINE_WINDOW_S:
            failures.popleft()
        if len(failures) < self.limits.quarantine_after:
            return
        if now - self._quarantined_until > QUARANTINE_WINDOW_S:
            self._quarantines = 0  # well behaved since the last quarantine: start short again
        span_ms = self.limits.quarantine_ms * (1 << min(self._quarantines, QUARANTINE_DOUBLINGS))
        self._quarantines += 1
        failures.clear()
        self._quarantined_until = now + span_ms / 1000.0
        log.warning("guest.module_quarantined", module=self.module.name, quarantine_ms=span_ms)


def _no_state() -> StateDict:
    raise AssertionError("setup carries no state")


class _Sweeper:
    """One daemon thread that drops idle warm instances of every live pool, twice a second."""

    PERIOD_S = 0.5

    def __init__(self) -> None:
        self._pools: weakref.WeakSet[GuestPool] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, pool: GuestPool) -> None:
        with self._lock:
            self._pools.add(pool)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="tablehost-sweeper", daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        while True:
            time.sleep(self.PERIOD_S)
            with self._lock:
                pools = list(self._pools)
            for pool in pools:
                pool.sweep()
            del pools


_SWEEPER = _Sweeper()
