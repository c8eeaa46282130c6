"""Run slots: a process-wide cap on guest calls running at once, granted fairly across modules.

Why: a guest call is CPU-bound wasm. With more calls running than there are cores, the
operating system time-shares them, so each one's budget (fuel, or CPU time) takes several
times longer in wall-clock time to run out: 16 looping guests on 2 cores each ran at 1/8 of a
core and were refused after 1-2 s instead of ~50 ms (issue 9). With at most about one running
call per core, a call runs at full speed from the moment it starts, and waits before it
starts instead, in a queue that is fair across modules:

- Round robin across modules (the *owner* of a waiter, i.e. its :class:`GuestPool`): each
  free slot goes to the next module in turn that has a waiter, oldest waiter first, so a
  module with many matches cannot push the others out.
- A module in good standing goes before a *struggling* one (its recent calls failed: see
  :mod:`tablehost.guest.pool`): an honest module waits at most for one running call to end.
- A call waits at most ``timeout_s`` (then :class:`~tablehost.errors.ModuleBusy`).
- :meth:`RunSlots.evict` refuses at once the waiters of a module that has just started to
  struggle, so its queued calls do not each run until a budget stops them.

:data:`RUN_SLOTS` is the process's one instance, sized by :func:`default_slots`.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Hashable, Mapping

from tablehost.errors import ModuleBusy

SLOTS_ENV = "TABLEHOST_GUEST_SLOTS"
"""Environment variable that overrides the number of run slots (a positive integer)."""


def default_slots(environ: Mapping[str, str] | None = None) -> int:
    """Run slots of this process: ``$TABLEHOST_GUEST_SLOTS`` when set, else the usable CPU count.

    Args:
        environ: the environment to read (default ``os.environ``).

    Raises:
        ValueError: ``$TABLEHOST_GUEST_SLOTS`` is not a positive integer.
    """
    text = (os.environ if environ is None else environ).get(SLOTS_ENV, "").strip()
    if text:
        if not (text.isascii() and text.isdigit()) or int(text) < 1:  # int() reads other scripts' digits
            raise ValueError(f"{SLOTS_ENV} must be a positive integer, got {text!r}")
        return int(text)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class _Waiter:
    __slots__ = ("event", "evicted", "granted", "struggling")

    def __init__(self, struggling: bool) -> None:
        self.event = threading.Event()
        self.granted = False
        self.evicted = False
        self.struggling = struggling


class RunSlots:
    """At most ``slots`` guest calls run at once; the rest wait in a fair queue. Thread-safe.

    Args:
        slots: calls that may run at once (>= 1).

    Raises:
        ValueError: ``slots`` < 1.
    """

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"run slots must be at least 1, got {slots}")
        self._lock = threading.Lock()
        self._slots = slots
        self._running = 0
        self._running_by_owner: Counter[Hashable] = Counter()
        self._queues: OrderedDict[Hashable, deque[_Waiter]] = OrderedDict()  # owner -> waiters, oldest first

    @property
    def slots(self) -> int:
        """Calls that may run at once."""
        return self._slots

    @property
    def running(self) -> int:
        """Calls running now."""
        return self._running

    @property
    def waiting(self) -> int:
        """Calls waiting for a slot now."""
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())

    def resize(self, slots: int) -> None:
        """Allow ``slots`` calls at once from now on (running calls finish; waiters may start).

        Raises:
            ValueError: ``slots`` < 1.
        """
        if slots < 1:
            raise ValueError(f"run slots must be at least 1, got {slots}")
        with self._lock:
            self._slots = slots
            self._grant_locked()

    def acquire(self, owner: Hashable, *, struggling: bool = False, timeout_s: float) -> float:
        """Take a slot for one call of ``owner``; return the seconds spent waiting for it.

        Args:
            owner: the module the call belongs to (its pool); round robin goes across owners.
            struggling: the owner's recent calls failed, so owners in good standing go first.
            timeout_s: longest wait, seconds.

        Raises:
            ModuleBusy: no slot came within ``timeout_s``, or :meth:`evict` refused the call.
        """
        started = time.monotonic()
        with self._lock:
            if self._running < self._slots:
                self._running += 1  # a free slot means nobody waits (grants happen on release)
                by_owner = self._running_by_owner
                by_owner[owner] = by_owner.get(owner, 0) + 1
                return 0.0
            waiter = _Waiter(struggling)
            self._queues.setdefault(owner, deque()).append(waiter)
        waiter.event.wait(timeout_s)
        with self._lock:
            if waiter.evicted:
                raise ModuleBusy("the module's calls keep failing: it gets one call at a time")
            if not waiter.granted:
                queue = self._queues.get(owner)
                if queue is not None:
                    queue.remove(waiter)
                    if not queue:
                        del self._queues[owner]
                raise ModuleBusy(
                    f"no guest run slot came free within {timeout_s * 1000:.0f} ms "
                    f"({self._slots} calls may run at once; this module waited its turn)"
                )
        return time.monotonic() - started

    def release(self, owner: Hashable) -> None:
        """Give back ``owner``'s slot taken by :meth:`acquire`; the next waiter in fair order gets it."""
        with self._lock:
            self._running -= 1
            self._running_by_owner[owner] -= 1
            if self._running_by_owner[owner] <= 0:
                del self._running_by_owner[owner]
            self._grant_locked()

    def evict(self, owner: Hashable, *, keep: int = 1) -> int:
        """Refuse ``owner``'s waiters (newest first) until at most ``keep`` of its calls run or wait.

        Each refused waiter's :meth:`acquire` raises :class:`~tablehost.errors.ModuleBusy` at
        once. Returns how many were refused.
        """
        with self._lock:
            queue = self._queues.get(owner)
            if not queue:
                return 0
            evicted = 0
            while queue and len(queue) + self._running_by_owner[owner] > keep:
                waiter = queue.pop()
                waiter.evicted = True
                waiter.event.set()
                evicted += 1
            if not queue:
                del self._queues[owner]
            if self._running_by_owner[owner] <= 0:
                del self._running_by_owner[owner]
            return evicted

    def _grant_locked(self) -> None:
        while self._running < self._slots and self._queues:
            owner = self._next_owner_locked()
            queue = self._queues[owner]
            waiter = queue.popleft()
            if queue:
                self._queues.move_to_end(owner)  # its turn is over: back of the round
            else:
                del self._queues[owner]
            waiter.granted = True
            self._running += 1
            self._running_by_owner[owner] += 1
            waiter.event.set()

    def _next_owner_locked(self) -> Hashable:
        """The first owner in round-robin order whose oldest waiter is in good standing, else the first."""
        for owner, queue in self._queues.items():
            if not queue[0].struggling:
                return owner
        return next(iter(self._queues))


def _startup_slots() -> int:
    try:
        return default_slots()
    except ValueError:  # the command line refuses it with exit 2 (tablehost.cli_budgets)
        return max(1, os.cpu_count() or 1)


RUN_SLOTS = RunSlots(_startup_slots())
"""The process's run slots: every :class:`~tablehost.guest.pool.GuestPool` call takes one."""
