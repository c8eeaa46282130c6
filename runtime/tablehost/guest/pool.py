"""The instances of one module: :class:`GuestPool` routes calls to them by state reference.

Thread-safe; the pool owns instance lifetimes (a failed instance is discarded).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import structlog

from tablehost.errors import GuestError
from tablehost.guest.instance import Guest
from tablehost.guest.protocol import (
    OP_ACTIONS,
    OP_GAME_OVER,
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


class GuestPool:
    """Up to ``limits.instances_per_module`` instances of one module, shared by many matches.

    A call with a ``state_ref`` goes to the idle instance that holds that ref (match affinity)
    and sends only the ref; otherwise to any idle instance (a new one while under the cap) with
    the full state from ``get_state()``; when every instance is busy it waits. A ``state_miss``
    answer makes the pool resend the same request with the full state. Any failure discards
    the instance that failed. Thread-safe.

    Args:
        module: the compiled module.
        limits: per-call budgets (default ``module.limits``); ``stack_bytes`` must equal the
            module's, since the stack cap is an engine setting.

    Raises:
        ValueError: ``limits.stack_bytes`` differs from the module's.
    """

    def __init__(self, module: GameModule, limits: Limits | None = None) -> None:
        self.module = module
        self.limits = limits or module.limits
        if self.limits.stack_bytes != module.limits.stack_bytes:
            raise ValueError("stack_bytes is an engine setting: load the module with the limits you want")
        self._cond = threading.Condition()
        self._idle: list[Guest] = []
        self._live = 0
        self._owner: dict[str, Guest] = {}
        self._closed = False

    def setup(self, players: list[dict[str, Any]], seed: Seed, next_ref: str) -> dict[str, Any]:
        """Run ``setup`` and cache the starting state in the instance under ``next_ref``.

        Args:
            players: ``[{"player_id", "username", "color"}]`` in seat order.
            seed: the setup seed, 0 <= seed < 2**64.
            next_ref: the ref the SDK keeps the resulting state under.

        Returns:
            The setup response: ``state``, ``patches``, ``rng_used``, ``score_labels``, ``scores``,
            ``game_over``, ``actions`` (per player id as a decimal string), maybe ``printed``.

        Raises:
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
        """
        request = {"players": players, "seed": seed, "next_ref": next_ref}
        return self._run(OP_SETUP, None, _no_state, request, next_ref=next_ref)

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

    def discard_ref(self, state_ref: str) -> None:
        """Stop routing ``state_ref`` to an instance (the next call with it sends the full state)."""
        with self._cond:
            self._owner.pop(state_ref, None)

    def close(self) -> None:
        """Drop every instance; later calls raise :class:`GuestError`. Busy calls finish first."""
        with self._cond:
            self._closed = True
            self._live -= len(self._idle)
            self._idle.clear()
            self._owner.clear()
            self._cond.notify_all()

    @property
    def instance_count(self) -> int:
        """Instances alive now (idle or busy)."""
        with self._cond:
            return self._live

    def _run(
        self,
        op: int,
        state_ref: str | None,
        get_state: Callable[[], StateDict],
        fields: dict[str, Any],
        *,
        next_ref: str | None = None,
    ) -> dict[str, Any]:
        guest, holds_ref = self._acquire(state_ref)
        try:
            response, by_ref = self._call_with_state(guest, op, state_ref if holds_ref else None, get_state, fields)
        except GuestError as exc:
            log.warning("guest.call_failed", module=self.module.name, op=OP_NAMES[op], code=exc.code,
                        budget=getattr(exc, "budget", None), error=str(exc))
            self._release(guest)
            raise
        except BaseException:
            self._release(guest)
            raise
        with self._cond:  # the bookkeeping and the release share one lock hold
            if state_ref is not None and op == OP_STEP:
                self._owner.pop(state_ref, None)  # the match moved on from this state
                if by_ref:
                    guest.forget(state_ref)
            elif state_ref is not None and by_ref:
                guest.touch(state_ref)
            if next_ref is not None:
                for evicted in guest.remember(next_ref):
                    if self._owner.get(evicted) is guest:
                        del self._owner[evicted]
                self._owner[next_ref] = guest
            self._release_locked(guest)
        return response

    @staticmethod
    def _call_with_state(
        guest: Guest,
        op: int,
        held_ref: str | None,
        get_state: Callable[[], StateDict],
        fields: dict[str, Any],
    ) -> tuple[dict[str, Any], bool]:
        """Call by ``held_ref`` when given, else (or after a miss) with the full state; say which."""
        if op == OP_SETUP:
            return guest.call(op, fields), False
        if held_ref is not None:
            try:
                return guest.call(op, {"state_ref": held_ref, **fields}), True
            except StateMiss:
                guest.forget(held_ref)
        return guest.call(op, {"state": get_state(), **fields}), False

    def _acquire(self, state_ref: str | None) -> tuple[Guest, bool]:
        """An idle instance, preferring the one routed ``state_ref``; and whether it is that one."""
        with self._cond:
            while True:
                if self._closed:
                    raise GuestError(f"the guest pool of module {self.module.name} is closed")
                owner = self._owner.get(state_ref) if state_ref is not None else None
                if owner is not None and owner in self._idle:
                    self._idle.remove(owner)
                    return owner, state_ref in owner.refs
                if self._idle:
                    return self._idle.pop(), False
                if self._live < self.limits.instances_per_module:
                    self._live += 1
                    break
                self._cond.wait()
        try:
            return Guest(self.module, self.limits), False
        except BaseException:
            with self._cond:
                self._live -= 1
                self._cond.notify()
            raise

    def _release(self, guest: Guest) -> None:
        with self._cond:
            self._release_locked(guest)

    def _release_locked(self, guest: Guest) -> None:
        if guest.broken or self._closed:
            self._live -= 1
            for ref in [ref for ref, owner in self._owner.items() if owner is guest]:
                del self._owner[ref]
        else:
            self._idle.append(guest)
        self._cond.notify()


def _no_state() -> StateDict:
    raise AssertionError("setup carries no state")
