"""The hot path of a guest call, bound straight to wasmtime's C API.

``wasmtime.Func.__call__`` re-reads the function type and converts every value on each call
(about 35 µs); ``Store.set_fuel``, ``Memory.data_ptr`` and friends add a microsecond or more each.
Here the few C functions a call needs are bound once with plain ``c_void_p`` arguments, and
exports are called through ``wasmtime_func_call_unchecked`` with a preallocated argument array
(under 2 µs). Unchecked calls are only safe for exactly known signatures:
:mod:`tablehost.module` checks every ABI export's signature before any instance exists.

The bindings are fresh function objects over wasmtime-py's own library handle, so wasmtime-py's
bindings keep their argument types. Errors surface exactly as from ``Func.__call__``: a
:class:`wasmtime.Trap` or a :class:`wasmtime.WasmtimeError`.
"""

from __future__ import annotations

import ctypes
import itertools
import weakref
from collections.abc import Callable
from typing import Any

import wasmtime
from wasmtime import _ffi as ffi

_c_void_p, _c_uint64, _c_size_t = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t


# The same library, its functions called holding the interpreter lock (a ``PyDLL``'s).
_gil_dll = ctypes.PyDLL(ffi.dll._name, handle=ffi.dll._handle)


def _bind(name: str, restype: type | None, argtypes: list[type], *, keep_gil: bool = False) -> Any:
    dll = _gil_dll if keep_gil else ffi.dll
    func = dll._FuncPtr((name, dll))
    func.restype = restype
    func.argtypes = argtypes
    return func


# A CDLL function releases the interpreter lock while it runs: the wasm call must (the epoch
# ticker and every other request thread run meanwhile). The other calls of a crossing take
# well under a microsecond and keep the lock (``keep_gil``): each release lets a waiting
# thread in, and under load the caller then waits for that thread's turn to end, up to the
# switch interval, several times per crossing.
_func_call_unchecked = _bind(
    "wasmtime_func_call_unchecked", _c_void_p, [_c_void_p, _c_void_p, _c_void_p, _c_size_t, _c_void_p]
)
_set_fuel = _bind("wasmtime_context_set_fuel", _c_void_p, [_c_void_p, _c_uint64], keep_gil=True)
_get_fuel = _bind("wasmtime_context_get_fuel", _c_void_p, [_c_void_p, _c_void_p], keep_gil=True)
_set_epoch_deadline = _bind("wasmtime_context_set_epoch_deadline", None, [_c_void_p, _c_uint64], keep_gil=True)
_memory_data = _bind("wasmtime_memory_data", _c_void_p, [_c_void_p, _c_void_p], keep_gil=True)
_memory_data_size = _bind("wasmtime_memory_data_size", _c_size_t, [_c_void_p, _c_void_p], keep_gil=True)

copy_in: Callable[[int, bytes, int], int] = ctypes.PYFUNCTYPE(_c_void_p, _c_void_p, _c_void_p, _c_size_t)(
    ctypes._memmove_addr  # type: ignore[attr-defined]
)
"""``copy_in(address, data, size)``: ``ctypes.memmove`` holding the interpreter lock (see the
bindings above). A request is the host's own: kilobytes in play, a resent state a few MiB at
most, copied in well under a millisecond."""


_DeadlineCallback = ctypes.CFUNCTYPE(
    _c_void_p, _c_void_p, _c_void_p, ctypes.POINTER(_c_uint64), ctypes.POINTER(ctypes.c_uint8)
)
_Finalizer = ctypes.CFUNCTYPE(None, _c_void_p)
_set_deadline_callback = _bind(
    "wasmtime_store_epoch_deadline_callback", None, [_c_void_p, _DeadlineCallback, _c_void_p, _Finalizer]
)
_error_new = _bind("wasmtime_error_new", _c_void_p, [ctypes.c_char_p])
_UPDATE_DEADLINE_CONTINUE = 0

_deadline_handlers: dict[int, Callable[[], int | None]] = {}
_handler_keys = itertools.count(1)


def _on_deadline(context: int, env: int, delta: Any, kind: Any) -> int | None:
    """wasmtime calls this on the wasm thread when a store's epoch deadline is reached."""
    del context
    try:
        handler = _deadline_handlers.get(env)
        ticks = handler() if handler is not None else None
    except Exception:  # noqa: BLE001  (an exception cannot cross into wasmtime: stop the call instead)
        ticks = None
    if ticks is None:
        error: int = _error_new(b"tablehost: the call's wall-clock budget ran out")
        return error
    delta[0] = ticks
    kind[0] = _UPDATE_DEADLINE_CONTINUE
    return None


def _forget_handler(env: int) -> None:
    _deadline_handlers.pop(env, None)


# Module-level so the C function pointers outlive every store that uses them.
_ON_DEADLINE = _DeadlineCallback(_on_deadline)
_FORGET_HANDLER = _Finalizer(_forget_handler)


def _raise_error(address: int) -> None:
    raise wasmtime.WasmtimeError._from_ptr(ctypes.cast(address, ctypes.POINTER(ffi.wasmtime_error_t)))


class RawStore:
    """Budgets and memory of one store whose instance exports a memory that never moves.

    Args:
        store: the store (kept alive by this object).
        memory: the instance's exported memory. The engine sets ``memory_may_move = False``,
            so its base address is read once.
    """

    def __init__(self, store: wasmtime.Store, memory: wasmtime.Memory) -> None:
        self._store = store
        self._memory = memory
        self.context = ctypes.cast(store._context(), _c_void_p).value
        self._memory_address = ctypes.addressof(memory._memory)
        self.base: int = _memory_data(self.context, self._memory_address) or 0
        self._fuel = _c_uint64()

    def arm(self, fuel: int, deadline_ticks: int) -> None:
        """Set the fuel (units) and epoch deadline (ticks after now) of the next call.

        Raises:
            wasmtime.WasmtimeError: the engine does not consume fuel.
        """
        error = _set_fuel(self.context, fuel)
        if error:
            _raise_error(error)
        _set_epoch_deadline(self.context, deadline_ticks)

    def fuel_left(self) -> int:
        """Fuel (units) left in the store since the last :meth:`arm`.

        Raises:
            wasmtime.WasmtimeError: the engine does not consume fuel.
        """
        error = _get_fuel(self.context, ctypes.addressof(self._fuel))
        if error:
            _raise_error(error)
        return self._fuel.value

    def on_deadline(self, handler: Callable[[], int | None]) -> None:
        """Call ``handler`` on the wasm thread whenever the epoch deadline is reached.

        ``handler`` returns how many more ticks the call may run, or ``None`` to stop it: the
        call then fails with a :class:`wasmtime.WasmtimeError`. It is held weakly through its
        object (a bound method), so the store does not keep its owner alive.
        """
        owner = weakref.WeakMethod(handler)  # type: ignore[arg-type]
        key = next(_handler_keys)

        def call() -> int | None:
            method = owner()
            return None if method is None else method()

        _deadline_handlers[key] = call
        _set_deadline_callback(ctypes.cast(self._store.ptr(), _c_void_p), _ON_DEADLINE, key, _FORGET_HANDLER)

    def memory_bytes(self) -> int:
        """The memory's current size in bytes."""
        size: int = _memory_data_size(self.context, self._memory_address)
        return size


class RawFunc:
    """An exported function of a checked signature, called without per-call type checks.

    Args:
        raw_store: the :class:`RawStore` of the function's store.
        func: the exported :class:`wasmtime.Func`.
        arity: the larger of its parameter and result counts (the C API reuses one array).
    """

    def __init__(self, raw_store: RawStore, func: wasmtime.Func, arity: int) -> None:
        self._raw_store = raw_store
        self._func = func
        self._func_address = ctypes.addressof(func._func)
        self._slots = (ffi.wasmtime_val_raw_t * max(arity, 1))()
        self._slots_address = ctypes.addressof(self._slots)
        self._trap = _c_void_p()
        self._trap_address = ctypes.addressof(self._trap)

    def call(self, *args: int) -> ffi.wasmtime_val_raw_t:
        """Call with i32 arguments; return the first slot (read ``.i32`` or ``.i64``).

        Raises:
            wasmtime.Trap: the call trapped.
            wasmtime.WasmtimeError: wasmtime refused the call.
        """
        slots = self._slots
        for index, value in enumerate(args):
            slots[index].i32 = value
        error = _func_call_unchecked(
            self._raw_store.context, self._func_address, self._slots_address, len(slots), self._trap_address
        )
        if error:
            _raise_error(error)
        if self._trap.value:
            trap = wasmtime.Trap._from_ptr(ctypes.cast(self._trap.value, ctypes.POINTER(ffi.wasm_trap_t)))
            self._trap.value = None  # the Trap object owns (and frees) the pointer now
            raise trap
        return slots[0]
