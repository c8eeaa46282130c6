"""Guest calls under budgets: :class:`Guest` (one instance) and :class:`GuestPool` (one module).

Every call runs with fresh fuel (``fuel_per_call``), an epoch deadline (``wall_ms``, driven by
the shared ticker of :mod:`tablehost._epoch`), the store's memory cap (``memory_bytes``), the
engine's stack cap (``stack_bytes``) and a response-size cap (``response_bytes``). A request
crosses into the guest exactly once: it is written into the instance's one reused request
buffer and ``tablehost_call`` runs the op (docs/abi.md).

:class:`WasmErrors` is the one place where wasmtime errors become tablehost errors::

    trap OUT_OF_FUEL / INTERRUPT / STACK_OVERFLOW  -> BudgetExceeded(budget="fuel"/"wall_ms"/"stack")
    other trap, the SDK kept a panic message       -> GuestPanic (message = the panic message)
    other trap, memory short of its cap (below)    -> BudgetExceeded(budget="memory")
    other trap                                     -> GuestTrap(trap="unreachable", ...)

Every :class:`~tablehost.errors.GuestError` carries ``printed`` (what the game printed) and
``op``; the instance that raised it is discarded by the pool.
"""

from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict
from collections.abc import Callable
from types import TracebackType
from typing import Any

import orjson
import structlog
import wasmtime

from tablehost._epoch import TICKER
from tablehost._rawcall import RawFunc, RawStore
from tablehost.errors import (
    BudgetExceeded,
    GuestError,
    GuestPanic,
    GuestProtocolError,
    GuestTrap,
    ModuleError,
)
from tablehost.limits import Limits
from tablehost.module import MEMORY_EXPORT, GameModule
from tablehost.types import ActionDict, AvailableActionDict, PlayerId, Seed, StateDict

log = structlog.get_logger(__name__)

OP_SETUP, OP_ACTIONS, OP_STEP, OP_SCORES, OP_GAME_OVER = 1, 2, 3, 4, 5
OP_PLAYOUT, OP_SEARCH = 6, 7
"""ABI v1.1 ops (docs/abi.md "playout", "search"); their answers are checked by :mod:`tablehost.inguest`."""
OP_NAMES = {OP_SETUP: "setup", OP_ACTIONS: "actions", OP_STEP: "step", OP_SCORES: "scores", OP_GAME_OVER: "game_over",
            OP_PLAYOUT: "playout", OP_SEARCH: "search"}

SDK_REF_CACHE_SIZE = 16
"""Entries of the SDK's state cache (docs/abi.md "State references"); mirrored per instance."""

BUDGET_BY_TRAP: dict[wasmtime.TrapCode, str] = {
    wasmtime.TrapCode.OUT_OF_FUEL: "fuel",
    wasmtime.TrapCode.INTERRUPT: "wall_ms",
    wasmtime.TrapCode.STACK_OVERFLOW: "stack",
    wasmtime.TrapCode.ALLOCATION_TOO_LARGE: "memory",
}
"""Trap codes that mean a budget ran out, and the budget each names."""

MEMORY_PRESSURE_FRACTION = 8
"""A trap is taken as a refused ``memory.grow`` when the memory left under the cap is less than
``cap / 8``, or less than the memory grew during the call (wasmtime's C API reports no refused
grow, so this is inferred: a guest whose allocation failed aborts with ``unreachable``)."""

PANIC_MESSAGE_FUEL = 10_000_000
"""Fuel for reading ``tablehost_panic_message`` after a trap."""

MIN_REQUEST_BUFFER = 4096
TABLE_ELEMENTS_MAX = 100_000

_RESPONSE_SHAPES: dict[int, dict[str, type]] = {
    OP_SETUP: {"state": dict, "patches": list, "rng_used": bool, "score_labels": list,
               "scores": dict, "game_over": bool, "actions": dict},
    OP_ACTIONS: {"actions": list},
    OP_STEP: {"patches": list, "rng_used": bool, "allow_undo": bool, "scores": dict,
              "game_over": bool, "actions": dict},
    OP_SCORES: {"scores": dict},
    OP_GAME_OVER: {"game_over": bool, "scores": dict},
}
"""Required top-level keys of each op's response and their JSON types (docs/abi.md "Ops")."""


class StateMiss(Exception):
    """The instance does not hold the ``state_ref`` it was sent; resend with the full state."""


class Guest:
    """One instance of a module in its own store, called under ``limits``.

    Args:
        module: the compiled module.
        limits: per-call budgets; ``stack_bytes`` must equal the module's (an engine setting).

    Attributes:
        refs: the state refs this instance's SDK cache holds, least recently used first
            (a mirror of the SDK's 16-entry LRU; a wrong guess only costs a ``state_miss``).
        broken: set after any failure; a broken instance is never called again.

    Raises:
        BudgetExceeded: the initial memory exceeds ``limits.memory_bytes``, or a start
            function ran out of a budget.
        GuestTrap: instantiation failed otherwise.
    """

    def __init__(self, module: GameModule, limits: Limits) -> None:
        self.module = module
        self.limits = limits
        self.refs: OrderedDict[str, None] = OrderedDict()
        self.broken = False
        self._raw: RawStore | None = None
        self._scale = 1  # budget multiplier of the call in progress (see ``call``)
        if module.info.initial_memory_bytes > limits.memory_bytes:
            raise BudgetExceeded(
                f"module needs {module.info.initial_memory_bytes} bytes of memory at start, "
                f"over the {limits.memory_bytes}-byte limit",
                budget="memory", op="instantiate",
            )
        store = wasmtime.Store(module.engine)
        store.set_limits(
            memory_size=limits.memory_bytes, table_elements=TABLE_ELEMENTS_MAX, instances=1, tables=4, memories=1
        )
        store.set_fuel(limits.fuel_per_call)
        store.set_epoch_deadline(TICKER.deadline_ticks(limits.wall_ms))
        with WasmErrors(self, "instantiate"):
            exports = wasmtime.Instance(store, module.wasm_module, []).exports(store)
        memory = exports[MEMORY_EXPORT]
        assert isinstance(memory, wasmtime.Memory)  # validate_module checked the kind
        raw = self._raw = RawStore(store, memory)
        self._alloc = RawFunc(raw, _func(exports, "tablehost_alloc"), 1)
        self._dealloc = RawFunc(raw, _func(exports, "tablehost_dealloc"), 2)
        self._call = RawFunc(raw, _func(exports, "tablehost_call"), 3)
        self._panic = RawFunc(raw, _func(exports, "tablehost_panic_message"), 1)
        self._buffer_ptr = 0
        self._buffer_bytes = 0
        self._memory_at_start = raw.memory_bytes()

    def call(self, op: int, request: dict[str, Any], *, scale: int = 1) -> dict[str, Any]:
        """Run one op: serialise ``request``, cross once, parse and shape-check the response.

        Args:
            op: an op code (``OP_SETUP`` ... ``OP_SEARCH``).
            request: the op's request object (docs/abi.md "Ops").
            scale: the call's fuel and wall-clock budgets are ``scale`` times the per-call
                ones (a playout of N games, a search of many iterations; >= 1).

        Returns:
            The parsed response object, ``printed`` included when the game printed.

        Raises:
            StateMiss: the request named a ``state_ref`` this instance does not hold (the
                instance stays usable).
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed;
                :attr:`broken` is set.
        """
        op_name = OP_NAMES.get(op, str(op))
        try:
            response = _parse_response(self._cross(op, orjson.dumps(request), scale), op_name)
            error = response.get("error")
            if error is not None:
                _raise_guest_error(error, response, op_name, by_ref="state_ref" in request)
            _check_shape(op, response, op_name, want_state=bool(request.get("want_state")))
            return response
        except GuestError:
            self.broken = True
            raise

    def remember(self, ref: str) -> list[str]:
        """Record that the SDK now caches ``ref``; return the refs its LRU evicted."""
        self.refs[ref] = None
        self.refs.move_to_end(ref)
        evicted = []
        while len(self.refs) > SDK_REF_CACHE_SIZE:
            evicted.append(self.refs.popitem(last=False)[0])
        return evicted

    def touch(self, ref: str) -> None:
        """Record a read of ``ref`` (the SDK's LRU refreshes it)."""
        if ref in self.refs:
            self.refs.move_to_end(ref)

    def forget(self, ref: str) -> None:
        """Record that the SDK no longer holds ``ref``."""
        self.refs.pop(ref, None)

    def _cross(self, op: int, payload: bytes, scale: int = 1) -> bytes:
        size = len(payload)
        if size > self._buffer_bytes:
            self._replace_buffer(size)
        raw = self._raw
        assert raw is not None
        # Memory never shrinks, so the buffer checked at allocation is still inside it.
        ctypes.memmove(raw.base + self._buffer_ptr, payload, size)
        op_name = OP_NAMES.get(op, str(op))
        self._memory_at_start = raw.memory_bytes()
        self._scale = scale
        self._arm(self.limits.fuel_per_call * scale, scale)
        with WasmErrors(self, op_name):
            packed = self._call.call(op, self._buffer_ptr, size).i64
        return self._read_packed(packed, op_name)

    def _replace_buffer(self, size: int) -> None:
        """Grow the request buffer (dealloc + alloc, docs/abi.md "Buffers") to fit ``size`` bytes."""
        capacity = max(MIN_REQUEST_BUFFER, 1 << (size - 1).bit_length())
        if self._buffer_bytes:
            self._arm(self.limits.fuel_per_call)
            with WasmErrors(self, "dealloc"):
                self._dealloc.call(self._buffer_ptr, self._buffer_bytes)
            self._buffer_ptr = self._buffer_bytes = 0
        self._arm(self.limits.fuel_per_call)
        with WasmErrors(self, "alloc"):
            ptr = self._alloc.call(capacity).i32 & 0xFFFFFFFF
        if ptr == 0:
            raise BudgetExceeded(
                f"the guest could not allocate a {capacity}-byte request buffer", budget="memory", op="alloc"
            )
        if ptr + capacity > self._memory_bytes():
            raise GuestProtocolError("tablehost_alloc returned a buffer outside guest memory", op="alloc")
        self._buffer_ptr, self._buffer_bytes = ptr, capacity

    def _read_packed(self, packed: int, op_name: str) -> bytes:
        out_ptr = (packed >> 32) & 0xFFFFFFFF
        out_len = packed & 0xFFFFFFFF
        if out_len > self.limits.response_bytes:
            raise BudgetExceeded(
                f"response of {out_len} bytes is over the {self.limits.response_bytes}-byte limit",
                budget="response", op=op_name,
            )
        memory_bytes = self._memory_bytes()
        if out_ptr + out_len > memory_bytes:
            raise GuestProtocolError(
                f"response at {out_ptr}..{out_ptr + out_len} lies outside guest memory ({memory_bytes} bytes)",
                op=op_name,
            )
        assert self._raw is not None
        return ctypes.string_at(self._raw.base + out_ptr, out_len)

    def _arm(self, fuel: int, scale: int = 1) -> None:
        assert self._raw is not None
        self._raw.arm(fuel, TICKER.deadline_ticks(self.limits.wall_ms * scale))

    def _memory_bytes(self) -> int:
        assert self._raw is not None
        return self._raw.memory_bytes()

    def panic_report(self) -> tuple[str | None, str]:
        """After a trap: ``(panic message or None, printed text)`` from ``tablehost_panic_message``.

        Never raises: a guest that cannot report counts as having no message and no output.
        """
        if self._raw is None:
            return None, ""
        try:
            self._arm(min(PANIC_MESSAGE_FUEL, self.limits.fuel_per_call))
            packed = self._panic.call().i64
            report = orjson.loads(self._read_packed(packed, "panic_message"))
        except (wasmtime.Trap, wasmtime.WasmtimeError, GuestError, orjson.JSONDecodeError):
            return None, ""
        if not isinstance(report, dict):
            return None, ""
        message = report.get("message")
        printed = report.get("printed")
        return (message if isinstance(message, str) else None), (printed if isinstance(printed, str) else "")

    def memory_exhausted(self) -> bool:
        """After a trap: whether a refused ``memory.grow`` likely caused it (see :data:`MEMORY_PRESSURE_FRACTION`)."""
        if self._raw is None:
            return False
        now = self._memory_bytes()
        headroom = self.limits.memory_bytes - now
        return headroom < self.limits.memory_bytes // MEMORY_PRESSURE_FRACTION or headroom < now - self._memory_at_start


class WasmErrors:
    """Context manager: a wasmtime failure inside the block becomes a typed :class:`GuestError`.

    The one place wasmtime errors become ours (the mapping is in the module docstring); marks
    ``guest`` broken and raises ``from`` the wasmtime exception. A class rather than a generator
    because it sits on the hot path of every call.

    Args:
        guest: the instance being called.
        op_name: what was called (``"step"``, ``"alloc"``, ``"instantiate"``...), for the error.
    """

    __slots__ = ("guest", "op_name")

    def __init__(self, guest: Guest, op_name: str) -> None:
        self.guest = guest
        self.op_name = op_name

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if isinstance(exc, (wasmtime.Trap, wasmtime.WasmtimeError)):
            self.guest.broken = True
            raise classify_failure(self.guest, exc, self.op_name) from exc


def classify_failure(guest: Guest, exc: wasmtime.Trap | wasmtime.WasmtimeError, op_name: str) -> GuestError:
    """The typed error for a wasmtime failure of ``guest`` during ``op_name`` (see module docstring)."""
    code = exc.trap_code if isinstance(exc, wasmtime.Trap) else None
    detail = code.name.lower() if code is not None else _first_line(exc)
    message, printed = guest.panic_report()
    budget = BUDGET_BY_TRAP.get(code) if code is not None else None
    if budget is not None:
        return BudgetExceeded(
            f"guest {op_name} ran out of its {budget} budget ({_budget_value(guest.limits, budget, guest._scale)})",
            budget=budget, op=op_name, printed=printed, trap=code.name.lower() if code else None,
        )
    if message is not None:
        return GuestPanic(message, op=op_name, printed=printed)
    if guest.memory_exhausted():
        return BudgetExceeded(
            f"guest {op_name} trapped with its memory at the {guest.limits.memory_bytes}-byte limit "
            f"(a memory.grow was refused)",
            budget="memory", op=op_name, printed=printed, trap=code.name.lower() if code else None,
        )
    trap = code.name.lower() if code is not None else "error"
    return GuestTrap(f"guest {op_name} trapped: {detail}", trap=trap, op=op_name, printed=printed)


def _budget_value(limits: Limits, budget: str, scale: int = 1) -> str:
    return {
        "fuel": f"{limits.fuel_per_call * scale} fuel",
        "wall_ms": f"{limits.wall_ms * scale} ms",
        "stack": f"{limits.stack_bytes} bytes of stack",
        "memory": f"{limits.memory_bytes} bytes",
    }.get(budget, budget)


def _parse_response(raw: bytes, op_name: str) -> dict[str, Any]:
    try:
        response = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise GuestProtocolError(f"guest {op_name} answered with invalid JSON or UTF-8: {exc}", op=op_name) from exc
    if not isinstance(response, dict):
        raise GuestProtocolError(f"guest {op_name} answered with a JSON {type(response).__name__}, not an object",
                                 op=op_name)
    printed = response.get("printed", "")
    if not isinstance(printed, str):
        raise GuestProtocolError(f"guest {op_name} answered with a non-string 'printed'", op=op_name)
    return response


def _raise_guest_error(error: Any, response: dict[str, Any], op_name: str, *, by_ref: bool) -> None:
    printed = response.get("printed", "")
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        raise GuestProtocolError(f"guest {op_name} answered with a malformed error object", op=op_name,
                                 printed=printed)
    code, text = error["code"], error.get("message", "")
    if code == "state_miss" and by_ref:
        raise StateMiss(op_name)
    if code == "state_miss":
        raise GuestProtocolError(f"guest {op_name} answered state_miss to a request carrying the full state",
                                 op=op_name, guest_code=code, printed=printed)
    raise GuestProtocolError(f"guest {op_name} refused the request: {code}: {text}", op=op_name,
                             guest_code=code, printed=printed)


def _check_shape(op: int, response: dict[str, Any], op_name: str, *, want_state: bool) -> None:
    """Check the response's top-level keys, and every offered action and score entry.

    A match stores offers and scores as the guest sent them, so anything malformed must be
    refused here, before any state changes (docs/abi.md "Ops").
    """
    for key, kind in _RESPONSE_SHAPES.get(op, {}).items():
        if not isinstance(response.get(key), kind):
            _malformed(response, op_name, f"lacks {key!r} of type {kind.__name__}")
    if want_state and not isinstance(response.get("state"), dict):
        _malformed(response, op_name, "lacks 'state' of type dict")
    actions = response.get("actions")
    if op == OP_ACTIONS:
        _check_offers(actions, response, op_name)
    elif isinstance(actions, dict):
        for offers in actions.values():
            _check_offers(offers, response, op_name)
    scores = response.get("scores")
    if isinstance(scores, dict):
        for score in scores.values():
            if not isinstance(score, dict) or not isinstance(score.get("public_points", []), list):
                _malformed(response, op_name, "has a score that is not {public_points, private_points}")


_INTENTS = frozenset(("choice", "confirm", "cancel", "undo"))


def _check_offers(offers: Any, response: dict[str, Any], op_name: str) -> None:
    # Exact type checks (JSON gives plain dicts, lists and strs): this runs for every offer of every move.
    if type(offers) is not list:
        _malformed(response, op_name, "has an action list that is not a list")
    for offer in offers:
        if (
            type(offer) is not dict
            or type(offer.get("action")) is not dict
            or offer.get("intent") not in _INTENTS
            or type(offer.get("label", "")) is not str
        ):
            _malformed(response, op_name, "offers an action that is not {action, intent, label}")


def _malformed(response: dict[str, Any], op_name: str, what: str) -> None:
    raise GuestProtocolError(f"guest {op_name} response {what}", op=op_name, printed=response.get("printed", ""))


def _func(exports: Any, name: str) -> wasmtime.Func:
    func = exports[name]
    assert isinstance(func, wasmtime.Func)  # validate_module checked kind and signature
    return func


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_instantiates(module: GameModule, limits: Limits | None = None) -> None:
    """Instantiate ``module`` once under the call budgets and throw the instance away.

    Catches at upload time a module whose start function traps or runs out of a budget, or
    whose initial memory exceeds the cap, which validation alone cannot see.

    Raises:
        ModuleError: the module cannot be instantiated; the message says why.
    """
    try:
        Guest(module, limits or module.limits)
    except GuestError as exc:
        raise ModuleError(f"the module cannot be instantiated: {exc}", budget=getattr(exc, "budget", None)) from exc


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

    def run_scaled(
        self,
        op: int,
        fields: dict[str, Any],
        *,
        scale: int,
        state_ref: str | None = None,
        get_state: Callable[[], StateDict] | None = None,
    ) -> dict[str, Any]:
        """Run an ABI v1.1 op (``playout``, ``search``) under ``scale`` times the per-call budgets.

        Args:
            op: ``OP_PLAYOUT`` or ``OP_SEARCH``.
            fields: the request's members (no ``state``/``state_ref``: those come from the next two).
            scale: budget multiplier, >= 1 (e.g. the number of games asked for).
            state_ref: the state to run from, sent alone to the instance that holds it.
            get_state: returns the full state when it must be sent (required with ``state_ref``).

        Returns:
            The parsed response (only its being an object is checked here; the caller checks the rest).

        Raises:
            ValueError: ``scale`` below 1.
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed.
        """
        if scale < 1:
            raise ValueError(f"scale must be at least 1, got {scale}")
        guest, holds_ref = self._acquire(state_ref)
        try:
            if state_ref is not None and holds_ref:
                try:
                    response = guest.call(op, {"state_ref": state_ref, **fields}, scale=scale)
                except StateMiss:
                    guest.forget(state_ref)
                    holds_ref = False
            if state_ref is None or not holds_ref:
                request = dict(fields) if get_state is None else {"state": get_state(), **fields}
                response = guest.call(op, request, scale=scale)
        except GuestError as exc:
            log.warning("guest.call_failed", module=self.module.name, op=OP_NAMES[op], code=exc.code,
                        budget=getattr(exc, "budget", None), error=str(exc))
            self._release(guest)
            raise
        except BaseException:
            self._release(guest)
            raise
        self._release(guest)
        return response

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
