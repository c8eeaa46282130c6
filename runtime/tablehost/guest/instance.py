"""One instance of a module called under budgets: :class:`Guest`, and where wasmtime errors become ours.

Every call runs with fresh fuel (``fuel_per_call``), an epoch deadline (``wall_ms``, driven by
the shared ticker of :mod:`tablehost._epoch`), the store's memory cap (``memory_bytes``), the
engine's stack cap (``stack_bytes``) and a response-size cap (``response_bytes``). A request
crosses into the guest exactly once: it is written into the instance's one reused request
buffer and ``tablehost_call`` runs the op (docs/abi.md).

:class:`WasmErrors` is the one place where wasmtime errors become tablehost errors::

    trap OUT_OF_FUEL / INTERRUPT / STACK_OVERFLOW  -> BudgetExceeded(budget="fuel"/"wall_ms"/"stack")
    stopped because the budget's cancelled() said so -> GuestCancelled (the host's choice)
    other trap, the SDK kept a panic message       -> GuestPanic (message = the panic message)
    any other trap (divide by zero, bad cast, ...)  -> GuestTrap(trap="integer_division_by_zero", ...)

A refused ``memory.grow`` is not a trap: the guest gets ``-1`` and wasmtime's C API (so
wasmtime-py) reports nothing (no resource-limiter callback). Whether an ``unreachable`` or
out-of-bounds trap (:data:`MEMORY_TRAPS`) followed from the memory cap is decided by the pool,
which re-runs the call with a wider cap (:meth:`tablehost.guest.pool.GuestPool` docstring).

A move's calls share one :class:`CallBudget`: the fuel and time a ``state_miss`` resend or a
buffer allocation spends come out of the same ``fuel_per_call`` and ``wall_ms``.

Fuel decides; ``wall_ms`` only guards liveness. It is counted in CPU time of the thread that
runs the guest, so a call that waits for a core behind busy neighbours is not charged for the
wait: when the epoch deadline comes, wasmtime asks :meth:`Guest._on_deadline`, which lets the
call go on while its thread has used less CPU than is left of ``wall_ms`` and the call has run
for less than ``wall_ms * liveness_factor`` of wall-clock time (the hard liveness cap). Both
count only while the guest runs (from arming a crossing to its return): the host's own work for
the move (serialising the state, a garbage collection, a wait for the GIL before the first
crossing) is not the guest's, so a loaded host cannot refuse a move its fuel accepts.

Every :class:`~tablehost.errors.GuestError` carries ``printed`` (what the game printed) and
``op``; the instance that raised it is discarded by the pool.
"""

from __future__ import annotations

import ctypes
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, NamedTuple

import orjson
import structlog
import wasmtime

from tablehost._epoch import TICKER
from tablehost._rawcall import RawFunc, RawStore, copy_in
from tablehost._stacks import on_big_stack
from tablehost.errors import (
    BudgetExceeded,
    GuestCancelled,
    GuestError,
    GuestPanic,
    GuestProtocolError,
    GuestTrap,
    ModuleError,
)
from tablehost.guest.protocol import (
    OP_NAMES,
    SDK_REF_CACHE_SIZE,
    parse_response,
    raise_guest_error,
)
from tablehost.limits import Limits
from tablehost.module import MEMORY_EXPORT, GameModule

log = structlog.get_logger(__name__)

BUDGET_BY_TRAP: dict[wasmtime.TrapCode, str] = {
    wasmtime.TrapCode.OUT_OF_FUEL: "fuel",
    wasmtime.TrapCode.INTERRUPT: "wall_ms",
    wasmtime.TrapCode.STACK_OVERFLOW: "stack",
    wasmtime.TrapCode.ALLOCATION_TOO_LARGE: "memory",
}
"""Trap codes that mean a budget ran out, and the budget each names."""

MEMORY_TRAPS = frozenset(("unreachable", "memory_out_of_bounds"))
"""Trap names (``GuestTrap.trap``) that may follow a refused ``memory.grow``: an allocator aborts
(``unreachable``) or a guest that ignored the ``-1`` writes past its memory. Any other trap
(divide by zero, ...) is reported as itself without a second look."""

PANIC_MESSAGE_FUEL = 10_000_000
"""Fuel for reading ``tablehost_panic_message`` after a trap."""

CANCEL_POLL_MS = 50.0
"""How often a cancellable call (:attr:`CallBudget.cancelled`) asks whether to stop, ms of wall
time: its epoch deadline is armed at most this far ahead, and each deadline asks."""

MIN_REQUEST_BUFFER = 4096
FUEL_MAX = 2**63 - 1
"""The most fuel one call is given: wasmtime keeps fuel below 2**63, and a scaled budget over
2**64 would reach it cut (by ctypes) to almost nothing."""
TABLE_ELEMENTS_MAX = 100_000


@dataclass
class CallBudget:
    """What is left of one move's budgets; every crossing of the move draws on it.

    Attributes:
        fuel: fuel units left (starts at ``fuel_per_call``).
        cpu_left_ms: milliseconds of guest-thread CPU time left (starts at ``wall_ms``).
        wall_left_ms: milliseconds of wall-clock time left to the hard liveness cap (starts at
            ``wall_ms * liveness_factor``), counted only while a crossing runs.
        wall_ms: the move's budget in milliseconds (for messages).
        scale: the multiplier the budget was started with.
        cancelled: asked on the wasm thread every :data:`CANCEL_POLL_MS` while a crossing runs;
            True stops the call with :class:`~tablehost.errors.GuestCancelled` (None: the call
            cannot be cancelled, and its deadline is armed for the whole budget at once).
    """

    fuel: int
    cpu_left_ms: float
    wall_left_ms: float
    wall_ms: int
    scale: int = 1
    cancelled: Callable[[], bool] | None = None

    @classmethod
    def start(cls, limits: Limits, scale: int = 1) -> CallBudget:
        """A fresh budget of ``limits.fuel_per_call`` fuel and ``limits.wall_ms`` from now, each
        times ``scale`` (>= 1: an ABI v1.1 ``playout`` of N games or a long ``search``); the
        fuel at most :data:`FUEL_MAX`."""
        return cls(*CallBudget.fields_for(limits, scale))

    @staticmethod
    def fields_for(limits: Limits, scale: int = 1) -> tuple[int, float, float, int, int]:
        """The fields of :meth:`start`'s budget, in order: ``CallBudget(*fields)`` is that budget
        (a caller that starts many budgets from the same limits computes them once)."""
        hard_ms = float(limits.wall_ms * scale * max(1, limits.liveness_factor))
        return (
            min(limits.fuel_per_call * scale, FUEL_MAX), float(limits.wall_ms * scale), hard_ms,
            limits.wall_ms * scale, scale,
        )

    def remaining_ms(self) -> float:
        """Milliseconds the next crossing may run: the smaller of CPU time and hard wall time left."""
        return min(self.cpu_left_ms, self.wall_left_ms)


class CallStats(NamedTuple):
    """What one op cost, over all its crossings.

    Attributes:
        op: the op name.
        fuel: fuel units spent.
        wall_ms: wall-clock milliseconds from the first crossing to the answer.
        memory_bytes: the instance's linear memory after the call, bytes.
    """

    op: str
    fuel: int
    wall_ms: float
    memory_bytes: int


class Guest:
    """One instance of a module in its own store, called under ``limits``.

    Args:
        module: the compiled module.
        limits: per-call budgets; ``stack_bytes`` must equal the module's (an engine setting).

    Attributes:
        refs: the state refs this instance's SDK cache holds, least recently used first
            (a mirror of the SDK's 16-entry LRU; a wrong guess only costs a ``state_miss``).
        broken: set after any failure; a broken instance is never called again.
        match_key: the one match this instance serves (set by the pool; ``None`` = unbound).
        last_stats: the :class:`CallStats` of the latest :meth:`call`.

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
        self.match_key: str | None = None
        self._last_stats: tuple[str, int, float, int] | None = None  # CallStats' fields, built when read
        self._budget = CallBudget.start(limits)
        self._raw: RawStore | None = None
        self._armed_cpu = 0.0  # thread CPU seconds when the current crossing was armed
        self._armed_left_ms = 0.0  # the budget's cpu_left_ms at that moment
        self._armed_deadline = 0.0  # the hard liveness deadline of that crossing (monotonic seconds)
        self._wall_expired = False
        self._cancelled = False  # set once the budget's cancelled() said so (the instance is then broken)
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
        raw.on_deadline(self._on_deadline)
        self._alloc = RawFunc(raw, _func(exports, "tablehost_alloc"), 1)
        self._dealloc = RawFunc(raw, _func(exports, "tablehost_dealloc"), 2)
        self._call = RawFunc(raw, _func(exports, "tablehost_call"), 3)
        self._panic = RawFunc(raw, _func(exports, "tablehost_panic_message"), 1)
        self._marker = RawFunc(raw, _func(exports, "tablehost_abi_v1"), 1)
        self._buffer_ptr = 0
        self._buffer_bytes = 0
        self._memory_now = raw.memory_bytes()  # only the guest grows it: read after each crossing

    def call(self, op: int, request: dict[str, Any], budget: CallBudget | None = None) -> dict[str, Any]:
        """Run one op: serialise ``request``, cross once, parse and shape-check the response.

        Args:
            op: an op code (``OP_SETUP`` ... ``OP_GAME_OVER``).
            request: the op's request object (docs/abi.md "Ops").
            budget: what is left of the move's budgets (default: a fresh one); this call's
                fuel is taken out of it.

        Returns:
            The parsed response object, ``printed`` included when the game printed.

        Raises:
            StateMiss: the request named a ``state_ref`` this instance does not hold (the
                instance stays usable).
            BudgetExceeded, GuestPanic, GuestTrap, GuestProtocolError: the call failed;
                :attr:`broken` is set.
        """
        op_name = OP_NAMES.get(op) or str(op)
        self._budget = budget if budget is not None else CallBudget.start(self.limits)
        fuel_before = self._budget.fuel
        started = time.perf_counter()
        try:
            try:
                packed = self._cross(op, orjson.dumps(request), op_name)
            except BaseException:
                self._last_stats = (
                    op_name,
                    fuel_before - self._budget.fuel,
                    (time.perf_counter() - started) * 1000.0,
                    self._memory_bytes() if self._raw is not None else 0,
                )
                raise
            self._last_stats = (
                op_name, fuel_before - self._budget.fuel, (time.perf_counter() - started) * 1000.0, self._memory_now
            )
            response = parse_response(packed, op_name)
            error = response.get("error")
            if error is not None:
                raise_guest_error(error, response, op_name, by_ref="state_ref" in request)
            return response  # its content is checked by the gate (tablehost.gate) before any use
        except GuestError:
            self.broken = True
            raise

    @property
    def last_stats(self) -> CallStats | None:
        """The :class:`CallStats` of the latest :meth:`call` (None before the first); built when
        read: most calls' stats are never looked at."""
        fields = self._last_stats
        return None if fields is None else CallStats(*fields)

    def abi_minor(self, budget: CallBudget | None = None) -> int:
        """The ABI v1 minor version the module implements (what ``tablehost_abi_v1()`` returns).

        Raises:
            BudgetExceeded, GuestPanic, GuestTrap: the marker call failed; :attr:`broken` is set.
        """
        self._budget = budget if budget is not None else CallBudget.start(self.limits)
        with self._crossing("abi_marker"):
            minor = int(self._marker.call().i32)
        self._memory_now = self._memory_bytes()  # the marker may grow memory too
        return minor

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

    def _cross(self, op: int, payload: bytes, op_name: str | None = None) -> bytes:
        size = len(payload)
        if size > self._buffer_bytes:
            self._replace_buffer(size)
        raw = self._raw
        assert raw is not None
        # Memory never shrinks, so the buffer checked at allocation is still inside it.
        copy_in(raw.base + self._buffer_ptr, payload, size)
        if op_name is None:
            op_name = OP_NAMES.get(op) or str(op)
        with self._crossing(op_name):
            packed = self._call.call(op, self._buffer_ptr, size).i64
        return self._read_packed(packed, op_name)

    def _crossing(self, op_name: str) -> _Crossing:
        """Arm the store with what is left of the move's budget; the block's spend is taken out of it."""
        budget = self._budget
        remaining_ms = budget.remaining_ms()
        if remaining_ms <= 0:
            self.broken = True
            raise BudgetExceeded(
                f"guest {op_name} ran out of its wall_ms budget ({budget.wall_ms} ms for the move)",
                budget="wall_ms", op=op_name,
            )
        if budget.fuel <= 0:
            self.broken = True
            raise BudgetExceeded(
                f"guest {op_name} ran out of its fuel budget ({self.limits.fuel_per_call} fuel for the move)",
                budget="fuel", op=op_name,
            )
        assert self._raw is not None
        crossing = _Crossing(self, op_name)  # allocated before the clocks start: a collection it triggers is the host's
        self._armed_deadline = time.monotonic() + budget.wall_left_ms / 1000.0
        self._armed_cpu = time.thread_time()
        self._armed_left_ms = budget.cpu_left_ms
        self._wall_expired = False
        if budget.cancelled is not None:
            remaining_ms = min(remaining_ms, CANCEL_POLL_MS)
        self._raw.arm(budget.fuel, TICKER.deadline_ticks(remaining_ms))
        return crossing

    def _on_deadline(self) -> int | None:
        """The epoch deadline came (on the wasm thread): more ticks while budget is left and the
        call is not cancelled, else ``None`` (the call traps with ``INTERRUPT``)."""
        cancelled = self._budget.cancelled
        if cancelled is not None and cancelled():
            self._cancelled = True
            return None
        used_ms = (time.thread_time() - self._armed_cpu) * 1000.0
        left_ms = min(self._armed_left_ms - used_ms, (self._armed_deadline - time.monotonic()) * 1000.0)
        if left_ms <= 0:
            self._wall_expired = True
            return None
        return TICKER.deadline_ticks(left_ms if cancelled is None else min(left_ms, CANCEL_POLL_MS))

    def _replace_buffer(self, size: int) -> None:
        """Grow the request buffer (dealloc + alloc, docs/abi.md "Buffers") to fit ``size`` bytes."""
        capacity = max(MIN_REQUEST_BUFFER, 1 << (size - 1).bit_length())
        if self._buffer_bytes:
            with self._crossing("dealloc"):
                self._dealloc.call(self._buffer_ptr, self._buffer_bytes)
            self._buffer_ptr = self._buffer_bytes = 0
        with self._crossing("alloc"):
            ptr = self._alloc.call(capacity).i32 & 0xFFFFFFFF
        if ptr == 0:
            raise BudgetExceeded(
                f"the guest could not allocate a {capacity}-byte request buffer", budget="memory", op="alloc"
            )
        self._memory_now = self._memory_bytes()
        if ptr + capacity > self._memory_now:
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
        raw = self._raw
        assert raw is not None
        memory_bytes = self._memory_now = raw.memory_bytes()
        if out_ptr + out_len > memory_bytes:
            raise GuestProtocolError(
                f"response at {out_ptr}..{out_ptr + out_len} lies outside guest memory ({memory_bytes} bytes)",
                op=op_name,
            )
        return ctypes.string_at(raw.base + out_ptr, out_len)

    def _arm(self, fuel: int) -> None:
        """Arm a host-initiated call (the panic report) with its own fresh budget."""
        assert self._raw is not None
        fresh = CallBudget.start(self.limits)
        self._armed_deadline = time.monotonic() + fresh.wall_left_ms / 1000.0
        self._armed_cpu = time.thread_time()
        self._armed_left_ms = fresh.cpu_left_ms
        self._raw.arm(fuel, TICKER.deadline_ticks(self.limits.wall_ms))

    def _charge(self) -> None:
        """Take the fuel the last crossing spent out of the move's budget."""
        if self._raw is not None:
            try:
                self._budget.fuel = self._raw.fuel_left()
            except wasmtime.WasmtimeError:
                self._budget.fuel = 0

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


class _Crossing:
    """One crossing: wasmtime errors become ours (as :class:`WasmErrors` maps them, inlined: one object
    less per call), and the fuel it spent is charged."""

    __slots__ = ("guest", "op_name")

    def __init__(self, guest: Guest, op_name: str) -> None:
        self.guest = guest
        self.op_name = op_name

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        guest = self.guest
        budget = guest._budget
        budget.cpu_left_ms = guest._armed_left_ms - (time.thread_time() - guest._armed_cpu) * 1000.0
        budget.wall_left_ms = (guest._armed_deadline - time.monotonic()) * 1000.0
        guest._charge()
        if exc is not None:
            if isinstance(exc, (wasmtime.Trap, wasmtime.WasmtimeError)):  # what WasmErrors does, inlined
                guest.broken = True
                raise classify_failure(guest, exc, self.op_name) from exc
        elif budget.cpu_left_ms < 0:
            # Finished between two epoch ticks, but past its budget: the same refusal as a trap.
            guest.broken = True
            raise BudgetExceeded(
                f"guest {self.op_name} ran out of its wall_ms budget ({budget.wall_ms} ms of CPU time)",
                budget="wall_ms", op=self.op_name,
            )


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
    wall_expired = guest._wall_expired  # read before the panic report re-arms the store
    if guest._cancelled:
        return GuestCancelled(f"guest {op_name} was cancelled by the host", op=op_name)
    message, printed = guest.panic_report()
    scale = guest._budget.scale
    if wall_expired:
        return BudgetExceeded(
            f"guest {op_name} ran out of its wall_ms budget ({guest.limits.wall_ms * scale} ms of CPU time, "
            f"{guest.limits.wall_ms * scale * max(1, guest.limits.liveness_factor)} ms of wall-clock time at most)",
            budget="wall_ms", op=op_name, printed=printed, trap="interrupt",
        )
    budget = BUDGET_BY_TRAP.get(code) if code is not None else None
    if budget is not None:
        return BudgetExceeded(
            f"guest {op_name} ran out of its {budget} budget ({_budget_value(guest.limits, budget, scale)})",
            budget=budget, op=op_name, printed=printed, trap=code.name.lower() if code else None,
        )
    if message is not None:
        return GuestPanic(message, op=op_name, printed=printed)
    trap = code.name.lower() if code is not None else "error"
    return GuestTrap(f"guest {op_name} trapped: {detail}", trap=trap, op=op_name, printed=printed)


def _budget_value(limits: Limits, budget: str, scale: int = 1) -> str:
    return {
        "fuel": f"{min(limits.fuel_per_call * scale, FUEL_MAX)} fuel",
        "wall_ms": f"{limits.wall_ms * scale} ms",
        "stack": f"{limits.stack_bytes} bytes of stack",
        "memory": f"{limits.memory_bytes} bytes",
    }.get(budget, budget)


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
        on_big_stack(module.limits.stack_bytes, lambda: Guest(module, limits or module.limits))
    except GuestError as exc:
        raise ModuleError(
            f"the module cannot be instantiated: {exc}", budget=exc.budget if isinstance(exc, BudgetExceeded) else None
        ) from exc
