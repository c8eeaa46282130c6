"""Simulation batches on a Ray cluster (``tablehost simulate --ray [ADDRESS]``).

Ray (``pip install tablehost[ray]``) schedules the batches; each task loads the module from
its bytes (sent once through Ray's object store, so the cluster's machines need tablehost
installed but not the module file) and plays one :class:`~tablehost.simulate.Batch`. Game
seeds are fixed before scheduling, so a Ray run gives the same outcomes as a local one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
B = TypeVar("B")


def run_on_ray(
    task: Callable[[bytes, str, Any, B], list[T]],
    module_bytes: bytes,
    name: str,
    limits: Any,
    batches: Iterable[B],
    *,
    address: str | None,
    cpus: int,
    in_flight_per_cpu: int = 2,
) -> Iterator[T]:
    """Run ``task(module_bytes, name, limits, batch)`` for every batch on Ray; yield its results.

    Args:
        task: a module-level function (Ray pickles it by reference).
        module_bytes, name, limits: what every task needs to load the module.
        batches: the work, consumed lazily (at most ``cpus * in_flight_per_cpu`` tasks wait at once).
        address: a running cluster (``"ray://host:10001"`` or ``"host:6379"``, as ``ray.init``
            takes), or None to start a local Ray for this run (stopped at the end).
        cpus: CPUs of the local Ray (ignored with an address).

    Raises:
        ImportError: Ray is not installed.
        ConnectionError: the cluster at ``address`` cannot be reached (Ray's own error).
    """
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        if address is None:
            # The workers must import this tablehost, not another install: pass our path on.
            here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)
            ray.init(
                num_cpus=cpus,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                runtime_env={"env_vars": {"PYTHONPATH": path}},
            )
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    try:
        remote = ray.remote(task)
        module_ref = ray.put(module_bytes)
        pending: list[Any] = []
        limit = max(1, cpus * in_flight_per_cpu)
        for batch in batches:
            pending.append(remote.remote(module_ref, name, limits, batch))
            if len(pending) >= limit:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    yield from ray.get(ref)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield from ray.get(ref)
    finally:
        if started_here:
            ray.shutdown()
