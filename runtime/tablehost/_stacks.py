"""Threads whose native stack is known and large: the only threads that run guest code.

wasmtime checks its ``max_wasm_stack`` limit against the stack pointer at the call's entry,
but the native stack under it is whatever the calling thread has: the main thread gets
``ulimit -s`` (often 8 MiB, sometimes 512 KiB), and glibc gives new threads the same soft
limit by default. A guest that recurses to a 512 KiB wasm limit on a 512 KiB native stack runs
off its end and the host process dies with SIGSEGV. So every guest call runs on a thread made
here, with ``threading.stack_size`` set to :func:`stack_bytes_for` the engine's wasm stack
(at least :data:`MIN_THREAD_STACK_BYTES`), whatever ``ulimit -s`` says.

:func:`on_big_stack` runs a function on such a thread, directly when the caller already is
one (a command that runs its whole job through :func:`on_big_stack` pays for the hop once).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

MiB = 1024 * 1024

MIN_THREAD_STACK_BYTES = 32 * MiB
"""Native stack of a guest thread at the least, bytes (address space only: pages are touched lazily)."""

HOST_FRAMES_BYTES = 16 * MiB
"""Native stack kept for Python, ctypes and wasmtime frames above the wasm stack, bytes."""

IDLE_SECONDS = 30.0
"""A worker thread with no work for this long exits (the next call starts another)."""

_local = threading.local()


def stack_bytes_for(wasm_stack_bytes: int) -> int:
    """Native stack size (bytes) of a thread that may run wasm with ``wasm_stack_bytes`` of stack."""
    return max(MIN_THREAD_STACK_BYTES, wasm_stack_bytes + HOST_FRAMES_BYTES)


def current_stack_bytes() -> int:
    """The native stack size of the calling thread if it was made here, else 0 (unknown)."""
    size: int = getattr(_local, "stack_bytes", 0)
    return size


class _Workers:
    """Daemon threads of one stack size that take jobs from a queue; more start while all are busy."""

    def __init__(self, stack_bytes: int) -> None:
        self.stack_bytes = stack_bytes
        self._jobs: queue.SimpleQueue[tuple[Callable[[], object], Future[object]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, job: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._idle == 0:
                self._start_thread()
            else:
                self._idle -= 1
        self._jobs.put((job, future))  # type: ignore[arg-type]
        return future

    def _start_thread(self) -> None:
        # threading.stack_size is process-wide: set it only around this thread's creation.
        with _size_lock:
            previous = threading.stack_size(self.stack_bytes)
            try:
                thread = threading.Thread(target=self._loop, name="tablehost-guest", daemon=True)
                thread.start()
            finally:
                threading.stack_size(previous)

    def _loop(self) -> None:
        _local.stack_bytes = self.stack_bytes
        while True:
            try:
                job, future = self._jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:
                        self._idle -= 1
                        return
                continue
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(job())
                except BaseException as exc:  # noqa: BLE001  (handed to the caller, who re-raises it)
                    future.set_exception(exc)
            del job, future
            with self._lock:
                self._idle += 1


_size_lock = threading.Lock()
_workers: dict[int, _Workers] = {}
_workers_lock = threading.Lock()


def on_big_stack(wasm_stack_bytes: int, func: Callable[[], T]) -> T:
    """Run ``func()`` on a thread with a native stack of :func:`stack_bytes_for` ``(wasm_stack_bytes)``.

    Runs it in place when the calling thread already has at least that much; otherwise on a
    worker thread, waiting for it. Exceptions propagate unchanged.

    Args:
        wasm_stack_bytes: the engine's ``max_wasm_stack`` of the code ``func`` may call, bytes.
        func: the work.

    Returns:
        What ``func`` returned.
    """
    needed = stack_bytes_for(wasm_stack_bytes)
    if current_stack_bytes() >= needed:
        return func()
    with _workers_lock:
        workers = _workers.get(needed)
        if workers is None:
            workers = _workers[needed] = _Workers(needed)
    return workers.submit(func).result()


class BigStackExecutor(ThreadPoolExecutor):
    """A thread pool whose threads are big-stack threads: guest calls run on them in place.

    A gRPC server's request threads would otherwise hand every guest call to another thread
    (:func:`on_big_stack`), about 100-200 µs of wall time a call. Threads start lazily, as in
    :class:`~concurrent.futures.ThreadPoolExecutor`, each with :func:`stack_bytes_for`
    ``(wasm_stack_bytes)`` of native stack (address space; pages are touched lazily).

    Args:
        wasm_stack_bytes: the engine's ``max_wasm_stack``, bytes.
        max_workers: threads at most.
        thread_name_prefix: the threads' name prefix.
    """

    def __init__(self, wasm_stack_bytes: int, max_workers: int, thread_name_prefix: str = "") -> None:
        self._stack_bytes = stack_bytes_for(wasm_stack_bytes)
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix, initializer=self._mark)

    def _mark(self) -> None:
        _local.stack_bytes = self._stack_bytes

    def _adjust_thread_count(self) -> None:
        # Called on every submit (every RPC of a server): an idle thread takes the work without
        # the lock, as the base class would.
        if self._idle_semaphore.acquire(timeout=0):  # type: ignore[attr-defined]
            return
        # threading.stack_size is process-wide: hold it for this pool only while a thread starts.
        with _size_lock:
            previous = threading.stack_size(self._stack_bytes)
            try:
                super()._adjust_thread_count()  # type: ignore[misc]
            finally:
                threading.stack_size(previous)
