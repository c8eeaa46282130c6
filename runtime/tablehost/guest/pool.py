"""The instances of one module: :class:`GuestPool` binds each to one match and routes calls by state reference.

Isolation (docs/abi.md sections 7 and 17): an instance serves one match. A match's next call goes to
the instance it used last while that instance is idle and warm; otherwise a fresh instance is
made from the pre-compiled module, so nothing a guest can read (request buffer, heap, globals,
SDK cache) was written for another match. A warm instance unused for ``keep_warm_ms`` is
dropped by a sweeper thread (an idle match then holds only its state, in the host), and an
instance is dropped as soon as it fails or the host refuses what it answered
(:meth:`GuestPool.discard_ref`).

Budgets and fairness: each op gets one :class:`~tablehost.guest.instance.CallBudget`, shared by
a ``state_miss`` resend and buffer allocations, started when the call gets its run slot. A call
takes two slots, in this order:

1. a *module slot*: at most ``instances_per_module`` calls of a module are in flight (one until
   a call of the module has succeeded); a call waits at most ``wall_ms`` for one (else
   :class:`ModuleBusy`). A *struggling* module (its
   last :data:`STRUGGLING_AFTER` finished calls all failed; one success ends it) gets one call
   in flight: a second call is refused at once with :class:`ModuleBusy`, and so are its calls
   already waiting for a run slot when it starts to struggle; its one call waits at most
   :data:`STRUGGLING_WAIT_MS` for a run slot;
2. a *run slot* of :data:`~tablehost.guest.scheduler.RUN_SLOTS` (about one per core, fair
   across modules, struggling modules last), waited for at most ``queue_ms``. The instance is
   made (if the match has none warm) and called only while the run slot is held, so the call
   runs at full speed and its budget runs out in about its own CPU time.

After ``quarantine_after`` failures within :data:`QUARANTINE_WINDOW_S` the module is refused
(:class:`ModuleQuarantined`) for ``quarantine_ms``, doubling while it keeps failing (a module
that always traps cannot make the host instantiate it thousands of times a second). Quarantine
protects a server's other modules; a pool made with ``quarantine=False`` never quarantines, so a
local tool (``play``, ``simulate``, ``check``, ``replay``, ``inspect``) reports every game's own
failure instead of ``module/quarantined`` after the eighth.

Memory cap: wasmtime's C API, and so wasmtime-py, has no resource-limiter callback, so a
refused ``memory.grow`` (the guest just gets ``-1``) is invisible. When a call ends in an
``unreachable`` or out-of-bounds trap (:data:`~tablehost.guest.instance.MEMORY_TRAPS`), the pool
re-runs it once, in a fresh instance with the full state and :data:`MEMORY_RERUN_FACTOR` times
the memory cap (fuel and every other budget unchanged). A guest has no imports, so the re-run
computes exactly what the call computed from that start until the first ``memory.grow`` that
would take the memory past the cap: if the re-run's memory ends above the cap, such a grow
happened, and under the cap it was refused, so the trap is reported as the memory budget
(:class:`BudgetExceeded` ``budget="memory"``, ``trap`` kept). Otherwise no grow up to
``factor * cap`` was refused and the trap is reported as itself. (A call on a warm instance is
re-run from a fresh start, which ``tablehost check`` proves equivalent for a conforming module.)

Observing calls: every call of an op (``setup``, ``step``, ``actions``, ``scores``,
``game_over``, and the scaled ``playout`` and ``search``), answered or refused, ends with one :class:`CallTiming` (module, op, queue wait,
run time, CPU time, fuel, outcome) handed to the pool's ``observer`` when one is set (this is how
the server's Prometheus metrics see guest calls), and attached to a raised :class:`GuestError`
as ``timing``.

Leases (:meth:`GuestPool.lease`): a bot game played by one local job (``play``, ``simulate``, the
benches: :func:`tablehost.selfplay.play_game`) may hold its match's instance, its module slot and
its run slot from its first call until the game ends, instead of taking and giving them back on
every call. Each call still gets its own budget and every check and failure path above; any
failure, refusal or :meth:`~GuestPool.discard_ref` ends the hold, and the match's later calls
take the ordinary path. The held instance is in no other match's reach (it is busy, never warm).
The server never leases: its matches share run slots call by call.

Guest code runs only on threads of a known large native stack (:mod:`tablehost._stacks`).
"""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import structlog

from tablehost._stacks import current_stack_bytes, on_big_stack, stack_bytes_for
from tablehost.errors import (
    BudgetExceeded,
    GuestCancelled,
    GuestError,
    GuestTrap,
    ModuleBusy,
    ModuleQuarantined,
)
from tablehost.guest.instance import MEMORY_TRAPS, CallBudget, Guest
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
from tablehost.guest.scheduler import RUN_SLOTS, RunSlots
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


MEMORY_RERUN_FACTOR = 2
"""The memory cap of the re-run that decides whether a trap followed a refused ``memory.grow``."""

STRUGGLING_AFTER = 1
"""Failed calls in a row (no success between them, the last within :data:`QUARANTINE_WINDOW_S`)
from which a module is *struggling*: one call in flight at a time, its calls wait behind other
modules' for a run slot, and at most :data:`STRUGGLING_WAIT_MS`. A module whose every call fails
(a loop, a trap) struggles from its first failure; an honest module that failed once struggles
until its next call succeeds or for 10 s at most."""

STRUGGLING_WAIT_MS = 50.0
"""Longest wait of a struggling module's call for a run slot, milliseconds (then ``module/busy``):
its refusals come quickly instead of after a long queue, while modules in good standing run."""


OUTCOME_OK = "ok"
""":attr:`CallTiming.outcome` of an answered call (a refused one carries its error ``code``)."""


@dataclass(frozen=True)
class CallTiming:
    """What one pool call cost and how it ended: what a :attr:`GuestPool.observer` receives.

    Attributes:
        module: the module's name, or the first 12 hex digits of its sha256 when it has none.
        op: the op name (``setup``, ``step``, ``actions``, ``scores``, ``game_over``, ``metadata``,
            ``playout``, ``search``).
        queue_ms: milliseconds from the call's entry into the pool until it held its run slot
            (thread hop, module slot, run slot); for a call refused before it ran, until the refusal.
        run_ms: milliseconds from holding the run slot until the answer or the refusal
            (instantiation, every crossing, the failure report); 0 when the call never ran.
        cpu_ms: CPU milliseconds of the guest's thread during ``run_ms``; ``cpu_ms / run_ms``
            is the share of a core the call got. Measured only while the pool has an
            observer (0 in the timing a refusal carries when nobody observes).
        fuel: fuel units the op burnt over all its crossings when it was answered; 0 when it
            was refused (after a failure the budget no longer says what the op burnt).
        outcome: :data:`OUTCOME_OK`, or the refusal's error code (``guest/budget``,
            ``guest/trap``, ``module/busy``, ``module/quarantined``...), or ``"error"`` for an
            exception that is not a :class:`GuestError`.
        budget: for ``guest/budget``, the budget that stopped the call (``fuel``, ``wall_ms``,
            ``memory``...); else None.
    """

    module: str
    op: str
    queue_ms: float
    run_ms: float
    cpu_ms: float
    fuel: int = 0
    outcome: str = OUTCOME_OK
    budget: str | None = None

    @property
    def failed(self) -> bool:
        """The call was refused (it raised)."""
        return self.outcome != OUTCOME_OK


class _Lease:
    """One match's hold on its pool (see :meth:`GuestPool.lease`).

    Attributes:
        key: the leased match key.
        thread: ``threading.get_ident()`` of the one thread whose calls use the hold.
        guest: the held instance (in the pool's busy set), None before the first call.
        slot: a run slot is held.
        spent: the hold ended early (a failure, a refusal, the pool closed): calls take the ordinary path.
    """

    __slots__ = ("guest", "key", "slot", "spent", "thread")

    def __init__(self, key: str, thread: int) -> None:
        self.key = key
        self.thread = thread
        self.guest: Guest | None = None
        self.slot = False
        self.spent = False


def match_key(state_ref: str) -> str:
    """The match a state ref belongs to: refs are ``"<match key>:<version>"`` (docs/abi.md)."""
    return state_ref.rpartition(":")[0] or state_ref


class GuestPool:
    """Instances of one module, each bound to one match; ``limits.instances_per_module`` calls in flight at most.

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
        run_slots: the run slots calls take (default: the process's :data:`RUN_SLOTS`).
        observer: the initial :attr:`observer`.
        warm_instances: instances kept alive at most, idle ones included (default and minimum
            ``limits.instances_per_module``). A server with many live matches keeps more
            instances than calls in flight, so a match's next move finds its instance warm
            (only the ref crosses) instead of instantiating and resending the state. Calls in
            flight stay capped at ``instances_per_module``.
        quarantine: refuse the module for a while (:class:`ModuleQuarantined`) after
            ``limits.quarantine_after`` failures within :data:`QUARANTINE_WINDOW_S` (the
            default, for a server). False: never quarantine, for local tools that must report
            each game's real outcome; a failing module still struggles (one call in flight).

    Attributes:
        instantiations: fresh instances made so far (match switches and replacements).
        observer: called once per op call (not ``metadata``), answered or refused, with its
            :class:`CallTiming`, on the thread that ran the call, after the call's run slot is
            given back and before the answer or refusal reaches the caller; keep it quick. An
            exception it raises is logged (``guest.observer_failed``) and otherwise ignored.
            None: nobody observes.
        label: the ``module`` of this pool's :class:`CallTiming` records.

    Raises:
        ValueError: ``limits.stack_bytes`` differs from the module's.
    """

    def __init__(
        self,
        module: GameModule,
        limits: Limits | None = None,
        *,
        keep_warm_ms: float = KEEP_WARM_MS,
        run_slots: RunSlots | None = None,
        observer: Callable[[CallTiming], None] | None = None,
        warm_instances: int | None = None,
        quarantine: bool = True,
    ) -> None:
        self.module = module
        self.quarantine = quarantine
        self.label = module.name or module.sha256[:12]
        self.limits = limits or module.limits
        if self.limits.stack_bytes != module.limits.stack_bytes:
            raise ValueError("stack_bytes is an engine setting: load the module with the limits you want")
        self._native_stack_bytes = stack_bytes_for(self.limits.stack_bytes)
        self.keep_warm_ms = keep_warm_ms
        self.warm_instances = max(warm_instances or 0, self.limits.instances_per_module)
        self.run_slots = run_slots if run_slots is not None else RUN_SLOTS
        self.observer: Callable[[CallTiming], None] | None = observer
        self.instantiations = 0
        # The condition's own lock, held directly on the per-call path (``with self._mutex`` is
        # one C call; ``with self._cond`` goes through Condition's Python-level __enter__/__exit__).
        self._mutex = threading.RLock()
        self._cond = threading.Condition(self._mutex)
        self._waiting = 0  # threads in _acquire's wait: a release with none skips the notify
        self._warm: OrderedDict[str, tuple[Guest, float]] = OrderedDict()  # match key -> (idle instance, since)
        self._busy: set[Guest] = set()
        self._starting = 0
        self._closed = False
        self._failures: deque[float] = deque()  # monotonic times of recent failed calls
        self._failures_in_a_row = 0  # finished calls that failed since the last success
        self._last_failure_at = 0.0  # monotonic seconds
        self._proven = False  # one of its calls succeeded: it may have instances_per_module in flight
        self._quarantines = 0
        self._quarantined_until = 0.0
        self._metadata: dict[str, Any] | None = None
        self._metadata_asked = False
        self._lease: _Lease | None = None
        self._budget_fields = (self.limits, CallBudget.fields_for(self.limits))  # a call's fresh budget
        _SWEEPER.add(self)

    @contextmanager
    def lease(self, key: str) -> Iterator[bool]:
        """Hold match ``key``'s instance, module slot and run slot for this thread's calls until the block ends.

        For a game driven by one local job (bots on this thread, no server): from the first call
        of match ``key`` on this thread (on a big stack) the pool keeps that call's module slot,
        run slot and instance, and later calls of ``key`` from this thread go straight to the
        instance. Every call still starts its own :class:`CallBudget` (fuel, CPU, wall, memory)
        and gets the same checks, failure handling, :class:`CallTiming` and observer as an
        ordinary call. A failed call (its instance discarded and counted as today), a
        :meth:`discard_ref` of the match, or :meth:`close` ends the hold: the match's later calls
        take the ordinary path. The held instance is busy, never warm, so no other match is given it.

        At most one lease per pool at a time: a second one (nested, or from another thread) holds
        nothing and yields False. Calls of other matches, or from other threads, take the
        ordinary path (a held run slot and module slot count against them: do not lease while
        another call on this thread needs a slot of its own, e.g. a search bot's ``run_scaled``).

        Args:
            key: the match key (``match_key`` of its refs, i.e. the match id).

        Yields:
            True when this block holds the lease, False when another lease was already held.

        Raises:
            Nothing of its own: what the block raises passes through, after everything held
            (instance, module slot, run slot) is given back, on every exit path.
        """
        lease = _Lease(key, threading.get_ident())
        with self._mutex:
            if self._lease is not None:
                lease.spent = True
            else:
                self._lease = lease
        if lease.spent:
            yield False
            return
        try:
            yield True
        finally:
            with self._mutex:
                self._drop_hold_locked(lease)
                self._lease = None

    def _drop_hold_locked(self, lease: _Lease) -> None:
        """End ``lease``'s hold: its instance back as after an ordinary answered call, its run slot freed."""
        lease.spent = True
        guest, lease.guest = lease.guest, None
        if guest is not None and guest in self._busy:
            self._release_locked(guest, failed=False)  # warm again unless broken (discard_ref, close)
        if lease.slot:
            lease.slot = False
            self.run_slots.release(self)

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
        module of ABI minor 0, which has no ``metadata`` op. Asked once per pool, in a fresh
        instance bound to no match, under one call's budgets; later calls return that answer
        (metadata describes the module, not a match). A failed call is not kept.

        Returns:
            The answer as parsed (the same dict on every call: do not change it).

        Raises:
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
        """
        if self._metadata_asked:
            return self._metadata

        def ask() -> dict[str, Any] | None:
            self.run_slots.acquire(self, timeout_s=self.limits.queue_ms / 1000.0)
            try:
                guest = Guest(self.module, self.limits)
                budget = CallBudget.start(self.limits)
                if guest.abi_minor(budget) < 1:
                    return None
                return guest.call(OP_METADATA, {}, budget)
            finally:
                self.run_slots.release(self)

        answer = on_big_stack(self.limits.stack_bytes, ask)
        self._metadata, self._metadata_asked = answer, True
        return answer

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
        cancelled: Callable[[], bool] | None = None,
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
            cancelled: asked on the guest's thread about every
                :data:`~tablehost.guest.instance.CANCEL_POLL_MS` while the guest runs (never
                under a lock of the pool); True stops the call (None: not cancellable).

        Returns:
            The parsed response (only its being an object is checked here; the caller checks the rest).

        Raises:
            ValueError: ``scale`` below 1.
            GuestCancelled: ``cancelled`` said so; the instance is discarded, and the call
                counts as no failure of the module (neither struggling nor quarantine).
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
            ModuleBusy, ModuleQuarantined: as for every call.
        """
        if scale < 1:
            raise ValueError(f"scale must be at least 1, got {scale}")
        key = match_key(state_ref) if state_ref is not None else f"inguest:{next(_ONE_OFF)}"
        entered = time.perf_counter()
        return on_big_stack(
            self.limits.stack_bytes,
            lambda: self._run_scaled_bound(key, op, fields, scale, state_ref, get_state, entered, cancelled),
        )

    def _run_scaled_bound(
        self,
        key: str,
        op: int,
        fields: dict[str, Any],
        scale: int,
        state_ref: str | None,
        get_state: Callable[[], StateDict] | None,
        entered: float,
        cancelled: Callable[[], bool] | None,
    ) -> dict[str, Any]:
        """:meth:`run_scaled` on the big stack: a run slot as for every call, then the call."""
        return self._in_run_slot(
            key,
            op,
            entered,
            lambda warm: self._run_scaled_holding_slot(key, warm, op, fields, scale, state_ref, get_state, cancelled),
        )

    def _run_scaled_holding_slot(
        self,
        key: str,
        warm: Guest | None,
        op: int,
        fields: dict[str, Any],
        scale: int,
        state_ref: str | None,
        get_state: Callable[[], StateDict] | None,
        cancelled: Callable[[], bool] | None,
    ) -> tuple[dict[str, Any], int]:
        """Run a scaled op on ``warm`` or a fresh instance; return the answer and the fuel it
        burnt over all its crossings (a refused one raises, as :meth:`run_scaled` says)."""
        guest = warm if warm is not None else self._instantiate(key)
        budget = CallBudget.start(self.limits, scale)
        given = budget.fuel
        budget.cancelled = cancelled
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
        except GuestCancelled:
            log.info("guest.call_cancelled", module=self.module.name, op=OP_NAMES[op], match=key)
            guest.broken = True
            self._release(guest, failed=False)  # the host's choice, not the module's failure
            raise
        except GuestError as exc:
            log.warning("guest.call_failed", module=self.module.name, op=OP_NAMES[op], code=exc.code,
                        budget=getattr(exc, "budget", None), error=str(exc)[:LOGGED_ERROR_CHARS], match=key)
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
        return response, max(0, given - budget.fuel)

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
        entered = time.perf_counter()
        lease = self._lease
        if (lease is not None and not lease.spent and lease.key == key
                and lease.thread == threading.get_ident()):
            return self._run_leased(lease, key, op, entered, state_ref, get_state, fields, next_ref)
        if current_stack_bytes() >= self._native_stack_bytes:  # already on a big stack (self-play, servers)
            return self._in_run_slot(
                key, op, entered, self._run_holding_slot, key, op, state_ref, get_state, fields, next_ref
            )
        return on_big_stack(
            self.limits.stack_bytes,
            lambda: self._in_run_slot(
                key, op, entered, self._run_holding_slot, key, op, state_ref, get_state, fields, next_ref
            ),
        )

    def _in_run_slot(
        self,
        key: str,
        op: int,
        entered: float,
        work: Callable[..., tuple[dict[str, Any], int]],
        *args: Any,
    ) -> dict[str, Any]:
        """Run ``work(warm instance or None, *args)`` holding a run slot; time it and tell the observer.

        ``work`` answers ``(response, fuel used)``. Raises what ``work`` raises, or
        :class:`~tablehost.errors.ModuleBusy` when no slot comes in time; a raised
        :class:`~tablehost.errors.GuestError` carries its :class:`CallTiming` as ``timing``.
        """
        started: float | None = None  # perf_counter seconds when the run slot was held
        cpu_started = 0.0
        fuel = 0
        failure: BaseException | None = None
        try:
            warm = self._take_run_slot(key)
            started = time.perf_counter()
            if self.observer is not None:  # only an observer reads an answered call's CPU time
                cpu_started = time.thread_time()
            try:
                response, fuel = work(warm, *args)
            finally:
                self.run_slots.release(self)
            return response
        except BaseException as exc:
            failure = exc
            raise
        finally:
            self._account(op, entered, started, cpu_started, fuel, failure)

    def _take_run_slot(self, key: str) -> Guest | None:
        """Check out ``key``'s warm instance (or None: instantiate one) and hold a run slot for it.

        Raises:
            ModuleBusy: no run slot came within the queue wait (shorter for a struggling
                module); nothing is held then.
        """
        warm, struggling = self._acquire(key)
        wait_ms = min(self.limits.queue_ms, STRUGGLING_WAIT_MS) if struggling else self.limits.queue_ms
        try:
            self.run_slots.acquire(self, struggling=struggling, timeout_s=wait_ms / 1000.0)
        except GuestError:
            self._release_unstarted(warm)
            raise
        return warm

    def _account(
        self,
        op: int,
        entered: float,
        started: float | None,
        cpu_started: float,
        fuel: int,
        failure: BaseException | None,
    ) -> None:
        """Record a finished call's timing for the observer and on a raised GuestError (``timing``).

        Only an observer or a refusal reads the timing: an answered call without an observer
        (self-play, tools) skips its clock reads and record.
        """
        if failure is not None or self.observer is not None:
            timing = self._timing(op, entered, started, cpu_started, fuel, failure)
            if isinstance(failure, GuestError):
                failure.timing = timing  # type: ignore[attr-defined]
            self._observe(timing)

    def _run_leased(
        self,
        lease: _Lease,
        key: str,
        op: int,
        entered: float,
        state_ref: str | None,
        get_state: Callable[[], StateDict],
        fields: dict[str, Any],
        next_ref: str | None,
    ) -> dict[str, Any]:
        """:meth:`_in_run_slot` for a leased match: slots and instance taken on the first call and kept.

        Falls back to the ordinary path when the hold has ended (the pool closed, the instance
        was discarded) or when this thread is not on a big stack (the lease then holds nothing).
        """
        guest = lease.guest
        if guest is None:
            if current_stack_bytes() < self._native_stack_bytes:
                lease.spent = True  # every call hops to a big-stack thread: nothing to hold
                return self._run(op, state_ref, get_state, fields, next_ref=next_ref)
        elif guest.broken or self._closed:
            with self._mutex:
                self._drop_hold_locked(lease)
            return self._run(op, state_ref, get_state, fields, next_ref=next_ref)
        started: float | None = None
        cpu_started = 0.0
        fuel = 0
        failure: BaseException | None = None
        try:
            if guest is None:
                warm = self._take_run_slot(key)
                lease.slot = True
                guest = lease.guest = warm if warm is not None else self._instantiate(key)
            started = time.perf_counter()
            if self.observer is not None:
                cpu_started = time.thread_time()
            response, fuel = self._run_holding_slot(guest, key, op, state_ref, get_state, fields, next_ref, True)
            return response
        except BaseException as exc:
            failure = exc
            with self._mutex:  # the failed instance is already released and counted: drop the hold
                self._drop_hold_locked(lease)
            raise
        finally:
            if failure is not None or self.observer is not None:  # what _account skips otherwise
                self._account(op, entered, started, cpu_started, fuel, failure)

    def _timing(
        self, op: int, entered: float, started: float | None, cpu_started: float, fuel: int,
        failure: BaseException | None,
    ) -> CallTiming:
        now = time.perf_counter()
        ran = started is not None
        held = started if started is not None else now
        if failure is None:
            outcome, budget = OUTCOME_OK, None
        elif isinstance(failure, GuestError):
            outcome = failure.code
            budget = (failure.budget or "unknown") if isinstance(failure, BudgetExceeded) else None
        else:
            outcome, budget = "error", None
        return CallTiming(
            module=self.label,
            op=OP_NAMES.get(op, str(op)),
            queue_ms=(held - entered) * 1000.0,
            run_ms=(now - held) * 1000.0,
            cpu_ms=(time.thread_time() - cpu_started) * 1000.0 if ran and cpu_started else 0.0,
            fuel=fuel,
            outcome=outcome,
            budget=budget,
        )

    def _observe(self, timing: CallTiming) -> None:
        observer = self.observer
        if observer is None:
            return
        try:
            observer(timing)
        except Exception as exc:  # noqa: BLE001 (an observer's bug must not turn an answer into a refusal)
            log.error("guest.observer_failed", module=self.label, op=timing.op, error=repr(exc)[:LOGGED_ERROR_CHARS])

    def _run_holding_slot(
        self,
        warm: Guest | None,
        key: str,
        op: int,
        state_ref: str | None,
        get_state: Callable[[], StateDict],
        fields: dict[str, Any],
        next_ref: str | None,
        keep: bool = False,
    ) -> tuple[dict[str, Any], int]:
        """Run the op on ``warm`` or a fresh instance; return the answer and the fuel it burnt.

        ``keep`` (a lease's call): an answered call leaves the instance busy with its caller
        instead of releasing it; a failed one releases and counts it as always.
        """
        guest = warm if warm is not None else self._instantiate(key)
        limits, fresh = self._budget_fields
        if limits is not self.limits:  # the limits were replaced: their budget, once
            fresh = CallBudget.fields_for(self.limits)
            self._budget_fields = (self.limits, fresh)
        budget = CallBudget(*fresh)  # CallBudget.start(self.limits)
        try:
            held = state_ref if state_ref is not None and state_ref in guest.refs else None
            response, by_ref = self._call_with_state(guest, op, held, get_state, fields, budget)
        except GuestError as exc:
            guest.broken = True  # its cache may hold next_ref of the failed call: never reuse it
            failure = exc
            try:
                if isinstance(exc, GuestTrap) and exc.trap in MEMORY_TRAPS:
                    failure = self._judge_memory_trap(op, get_state, fields, exc)
                log.warning("guest.call_failed", module=self.module.name, op=OP_NAMES[op], code=failure.code,
                            budget=failure.budget if isinstance(failure, BudgetExceeded) else None,
                            error=str(failure)[:LOGGED_ERROR_CHARS], match=key)
            finally:
                self._release(guest, failed=True)
            if failure is exc:
                raise
            raise failure from exc
        except BaseException:
            guest.broken = True
            self._release(guest, failed=False)
            raise
        with self._mutex:  # the bookkeeping and the release share one lock hold
            if state_ref is not None and op == OP_STEP:
                guest.forget(state_ref)  # the SDK moved this state on to next_ref
            elif state_ref is not None and by_ref:
                guest.touch(state_ref)
            if next_ref is not None:
                guest.remember(next_ref)
            if keep:
                self._failures_in_a_row = 0  # what _release_locked records of an answered call
                self._proven = True
            else:
                self._release_locked(guest, failed=False)
        return response, max(0, self.limits.fuel_per_call - budget.fuel)

    def _judge_memory_trap(
        self, op: int, get_state: Callable[[], StateDict], fields: dict[str, Any], trap: GuestTrap
    ) -> GuestError:
        """``trap`` as the memory budget when a re-run with a wider cap outgrows the cap, else ``trap``.

        See the module docstring ("Memory cap") for why this decides exactly.
        """
        cap = self.limits.memory_bytes
        wider = replace(self.limits, memory_bytes=cap * MEMORY_RERUN_FACTOR)
        try:
            rerun = Guest(self.module, wider)
            request = dict(fields) if op == OP_SETUP else {"state": get_state(), **fields}
            try:
                rerun.call(op, request, CallBudget.start(wider))
            except (GuestError, StateMiss):
                pass  # how the re-run ended does not matter: only how far its memory grew
        except GuestError:
            return trap  # no fresh instance: nothing more is known
        grew_to = rerun.last_stats.memory_bytes if rerun.last_stats is not None else 0
        if grew_to <= cap:
            return trap
        return BudgetExceeded(
            f"guest {trap.op} trapped ({trap.trap}) after a memory.grow past its {cap}-byte limit was refused "
            f"(re-run from the same start with {MEMORY_RERUN_FACTOR}x the limit, it grew to {grew_to} bytes)",
            budget="memory", op=trap.op, printed=trap.printed, trap=trap.trap,
        )

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

    def _acquire(self, key: str) -> tuple[Guest | None, bool]:
        """A module slot for match ``key``: ``(its warm instance or None, struggling)``.

        ``None`` means a slot is reserved for a fresh instance (:meth:`_instantiate` makes it,
        :meth:`_release_unstarted` gives the slot back). Waits at most ``wall_ms`` (``queue_ms``
        while no call of the module has succeeded yet).

        Raises:
            ModuleQuarantined: the module is quarantined.
            ModuleBusy: no slot within ``wall_ms``, or the module is struggling and already has
                a call in flight.
            GuestError: the pool is closed.
        """
        started = time.monotonic()
        with self._mutex:
            while True:
                if self._closed:
                    raise GuestError(f"the guest pool of module {self.module.name} is closed")
                wait_ms = self.quarantined_for_ms if self._quarantined_until else 0.0
                if wait_ms > 0:
                    raise ModuleQuarantined(
                        f"module {self.module.name} is quarantined for {wait_ms:.0f} ms more: "
                        f"{self.limits.quarantine_after} of its calls failed within {QUARANTINE_WINDOW_S:.0f} s",
                        retry_after_ms=int(wait_ms) + 1,
                    )
                struggling = (self._failures_in_a_row >= STRUGGLING_AFTER
                              and time.monotonic() - self._last_failure_at < QUARANTINE_WINDOW_S)
                in_flight = len(self._busy) + self._starting
                if struggling and in_flight >= 1:
                    raise ModuleBusy(
                        f"module {self.module.name} gets one call at a time: its last {self._failures_in_a_row} "
                        f"calls failed, and one is in flight"
                    )
                entry = self._warm.pop(key, None)
                if entry is not None:
                    guest = entry[0]
                    self._busy.add(guest)
                    return guest, struggling
                # Until one call succeeded, a module has one call in flight: a module that fails
                # from the start cannot queue a wave of calls that each run until a budget stops them.
                cap = self.limits.instances_per_module if self._proven else 1
                if in_flight < cap:
                    alive = self.warm_instances if self._proven else cap
                    if len(self._warm) + in_flight >= alive and self._warm:
                        self._warm.popitem(last=False)  # the least recently used idle match gives way
                    self._starting += 1
                    return None, struggling
                # An unproven module's extra calls wait for its first call's outcome (a success
                # lets them all in, a failure refuses them at once), up to queue_ms.
                wait_ms = self.limits.wall_ms if self._proven else max(self.limits.wall_ms, self.limits.queue_ms)
                left = started + wait_ms / 1000.0 - time.monotonic()
                if left <= 0:
                    raise ModuleBusy(
                        f"module {self.module.name} had all {cap} call slots taken for {wait_ms} ms"
                    )
                self._waiting += 1
                try:
                    self._cond.wait(left)
                finally:
                    self._waiting -= 1

    def _instantiate(self, key: str) -> Guest:
        """A fresh instance bound to match ``key``, in the slot :meth:`_acquire` reserved."""
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

    def _release_unstarted(self, warm: Guest | None) -> None:
        """Give back a module slot whose call never ran (its run slot did not come)."""
        with self._cond:
            if warm is None:
                self._starting -= 1
                self._cond.notify()
            else:
                self._release_locked(warm, failed=False)

    def _release(self, guest: Guest, *, failed: bool) -> None:
        with self._cond:
            self._release_locked(guest, failed=failed)

    def _release_locked(self, guest: Guest, *, failed: bool) -> None:
        self._busy.discard(guest)
        if failed:
            self._count_failure_locked()
        elif not guest.broken:
            self._failures_in_a_row = 0
            self._proven = True
        key = guest.match_key
        if not (guest.broken or self._closed or key is None or self.keep_warm_ms <= 0):
            self._warm.pop(key, None)  # a second instance of the same match: keep the newer
            self._warm[key] = (guest, time.monotonic())
        if not self._waiting:
            return  # nobody waits for a slot (always so in a single-threaded self-play)
        if failed:
            self._cond.notify_all()  # waiters of a module now struggling are refused at once
        else:
            self._cond.notify()

    def _count_failure_locked(self) -> None:
        self._last_failure_at = time.monotonic()
        self._failures_in_a_row += 1
        if self._failures_in_a_row == STRUGGLING_AFTER:
            self.run_slots.evict(self, keep=1)  # its queued calls would fail the same way
        now = time.monotonic()
        if not self.quarantine:
            return  # a local tool's pool: every failure is the game's own, reported as itself
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
