"""Simulation batches on a Ray cluster (``tablehost simulate --ray [ADDRESS]``).

Ray (``pip install tablehost[ray]``) schedules the batches; each task loads the module from
its bytes (sent once through Ray's object store, so the cluster's machines need tablehost
installed but not the module file) and plays one :class:`~tablehost.simulate.Batch`. Game
seeds are fixed before scheduling, so a Ray run gives the same outcomes as a local one.

A cluster address is probed before Ray is asked to connect: ``ray.init(address=...)`` has no
connect timeout and, when nothing answers there, retries for minutes while printing warnings
about the node's own address. The probe (a TCP connection to the address's port, at most
:data:`CONNECT_TIMEOUT_S` seconds) turns that into one :class:`RayUnreachable` error; when
something accepts the connection but Ray cannot connect (not a Ray head), Ray's attempts are
bounded (:data:`CONNECT_ATTEMPTS`) and its failure is the same error.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
B = TypeVar("B")

CONNECT_TIMEOUT_S = 3.0
"""Seconds the probe of a cluster address waits for its port to accept a connection."""


class RayUnreachable(ConnectionError):
    """Nothing accepts connections at the Ray address given (``simulate --ray ADDRESS``)."""


def probe_cluster(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Check that something listens at a Ray cluster address before Ray connects to it.

    Args:
        address: as ``ray.init`` takes it: ``HOST:PORT`` (the head's GCS port, 6379 by
            default) or ``ray://HOST:PORT`` (Ray Client); ``auto`` and ``local`` are Ray's to
            resolve and are not probed.
        timeout_s: seconds to wait for the connection.

    Raises:
        ValueError: the address is not ``HOST:PORT`` with a port 1 to 65535.
        RayUnreachable: no connection within ``timeout_s`` (refused, unreachable, timed out,
            unknown host); the message names the address and the reason.
    """
    target = address.removeprefix("ray://")
    if target in ("auto", "local"):
        return
    host, colon, port_text = target.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")  # [::1]:6379
    if not colon or not host or not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        raise ValueError(f"--ray address {address[:100]!r} is not HOST:PORT (e.g. 10.0.0.5:6379 or ray://10.0.0.5:10001)")
    try:
        socket.create_connection((host, int(port_text)), timeout=timeout_s).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__  # a timeout has no strerror
        raise RayUnreachable(
            f"no Ray cluster answers at {address} ({reason}, tried for up to {timeout_s:g} s): start one "
            "there (ray start --head), or give --ray without an address for a local Ray"
        ) from None


RAY_CONNECT_ATTEMPTS_ENV = "RAY_gcs_server_port_wait_time_s"
"""Ray's own bound on its attempts (about one a second) to reach a cluster's GCS (Ray 2.x reads
it in ``ray._private.node``); without it Ray tries for 20 attempts or more."""

CONNECT_ATTEMPTS = 5
"""Attempts Ray gets at a cluster that accepted the probe (unless the variable above is set)."""


def _connect(ray: Any, address: str) -> None:
    """``ray.init`` to the cluster at ``address``, its attempts bounded; any failure to connect
    becomes :class:`RayUnreachable` (Ray raises ConnectionError, or RuntimeError from its GCS
    client, with a traceback of its own)."""
    saved = os.environ.get(RAY_CONNECT_ATTEMPTS_ENV)
    os.environ.setdefault(RAY_CONNECT_ATTEMPTS_ENV, str(CONNECT_ATTEMPTS))
    try:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        raise RayUnreachable(f"cannot connect to the Ray cluster at {address}: {first}") from None
    finally:
        if saved is None:
            os.environ.pop(RAY_CONNECT_ATTEMPTS_ENV, None)


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
        ValueError: ``address`` is not ``HOST:PORT`` (:func:`probe_cluster`).
        RayUnreachable: nothing answers at ``address`` (probed first, in a few seconds), or
            what answers is not a Ray cluster Ray could connect to (after a few attempts).
    """
    if address is not None:
        probe_cluster(address)
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
            _connect(ray, address)
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
