"""The gRPC server: ``create_server`` builds one around a registry; ``serve`` runs ``tablehost serve``.

The server uses grpc's thread pool: requests of different matches run concurrently (one lock
per match in the registry; guest calls release the GIL). Each open WatchMatch stream holds a
worker thread while it waits, so watch streams are capped (:mod:`tablehost.api.watch_slots`):
four per token and three quarters of ``max_workers`` in all, leaving threads for moves.
Health checking (``grpc.health.v1``) and server reflection are registered so generic tools
such as grpcurl work.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from concurrent import futures
from pathlib import Path
from types import FrameType

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from tablehost import logs
from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api._pb import tablehost_pb2_grpc as pb_grpc
from tablehost.api.interceptors import RequestInterceptor
from tablehost.api.registry import MatchRegistry
from tablehost.api.servicer import MatchServicer, ModuleServicer
from tablehost.api.validation import MAX_RESPONSE_BYTES, check_address
from tablehost.api.watch_slots import WatchSlots, watch_share
from tablehost.limits import DEFAULT_LIMITS, Limits
from tablehost.store import DataDirUnusable

log = structlog.get_logger(__name__)

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_MAX_WORKERS = 128
"""Worker threads: measured on 2 cores, 128 beats 16 or 4 at 100 concurrent matches (fewer
workers queue requests inside grpc, where a busy match's requests wait behind others)."""
EXIT_CANNOT_START = 2
"""Exit status of ``serve`` when the listen address or the data directory cannot be used."""
REQUEST_HEADROOM_BYTES = 64 * 1024
"""Room above the module size limit for the rest of an UploadModule request."""
SERVICE_NAMES = (
    pb.DESCRIPTOR.services_by_name["ModuleService"].full_name,
    pb.DESCRIPTOR.services_by_name["MatchService"].full_name,
)


def create_server(
    address: str,
    registry: MatchRegistry,
    *,
    max_workers: int = DEFAULT_MAX_WORKERS,
    max_watchers: int | None = None,
    max_response_bytes: int = MAX_RESPONSE_BYTES,
) -> tuple[grpc.Server, int]:
    """Build (not start) a server on ``address`` serving ``registry``.

    Args:
        address: ``host:port``; port 0 picks a free port.
        registry: the matches and modules to serve (the caller closes it after stopping).
        max_workers: threads serving requests and open watch streams.
        max_watchers: open watch streams allowed at once; default
            :func:`~tablehost.api.watch_slots.watch_share` of ``max_workers``.
        max_response_bytes: the largest message sent; a view or record over it is refused
            with RESOURCE_EXHAUSTED instead of failing inside grpc (clients receive up to
            :data:`~tablehost.api.validation.MAX_RESPONSE_BYTES`).

    Returns:
        ``(server, port)`` with the port actually bound.

    Raises:
        ValueError: ``address`` is not ``host:port`` with a port in 0..65535.
        RuntimeError: the address cannot be bound (port taken, host not of this machine).
    """
    check_address(address, listening=True)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="tablehost-rpc"),
        interceptors=[RequestInterceptor(registry)],
        options=[
            # Never share a port with another server by accident.
            ("grpc.so_reuseport", 0),
            # grpc's default 4 MiB would refuse modules the limits accept before they are judged.
            ("grpc.max_receive_message_length", registry.limits.module_bytes + REQUEST_HEADROOM_BYTES),
            ("grpc.max_send_message_length", max_response_bytes),
        ],
    )
    pb_grpc.add_ModuleServiceServicer_to_server(ModuleServicer(registry), server)  # type: ignore[no-untyped-call]
    slots = WatchSlots(watch_share(max_workers) if max_watchers is None else max_watchers)
    match_servicer = MatchServicer(registry, slots, max_response_bytes=max_response_bytes)
    pb_grpc.add_MatchServiceServicer_to_server(match_servicer, server)  # type: ignore[no-untyped-call]
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in (*SERVICE_NAMES, ""):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection(
        (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    try:
        port = server.add_insecure_port(address)
    except RuntimeError:  # grpc's own words point at GRPC_VERBOSITY, not at the cause
        port = 0
    if port == 0:
        raise RuntimeError(
            f"cannot listen on {address}: the port is taken (is another server running?) or the host "
            "is not an address of this machine"
        )
    return server, port


def serve(
    listen: str = DEFAULT_LISTEN,
    data_dir: Path | str = "tablehost-data",
    *,
    limits: Limits = DEFAULT_LIMITS,
    max_workers: int = DEFAULT_MAX_WORKERS,
    synchronous: str = "FULL",
    log_level: str = "info",
    check_uploads: int = 0,
    check_players: int = 2,
) -> int:
    """Run a server until SIGINT or SIGTERM (``tablehost serve``).

    Prints ``tablehost serving on HOST:PORT`` and the admin token file's path on standard
    output once it accepts requests; logs JSON lines on standard error. A listen address or
    data directory it cannot use is one line on standard error (``tablehost: ...``).

    Returns:
        The exit status: 0 after a clean stop, 2 when it could not start.
    """
    logs.configure(level=log_level)
    try:
        host, _ = check_address(listen, listening=True)
        registry = MatchRegistry(
            data_dir, limits=limits, synchronous=synchronous, check_uploads=check_uploads,
            check_players=check_players,
        )
    except (ValueError, DataDirUnusable) as exc:
        print(f"tablehost: {exc}", file=sys.stderr)
        return EXIT_CANNOT_START
    try:
        server, port = create_server(listen, registry, max_workers=max_workers)
    except (ValueError, RuntimeError) as exc:
        registry.close()
        print(f"tablehost: {exc}", file=sys.stderr)
        return EXIT_CANNOT_START
    server.start()
    _announce(
        f"tablehost serving on {host}:{port} (data in {Path(data_dir).resolve()})",
        f"admin token: {registry.admin_token_path.resolve()}",
    )
    log.info("server.started", address=f"{host}:{port}", data_dir=str(data_dir))
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        del frame
        log.info("server.stopping", signal=signal.Signals(signum).name)
        stopping.set()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    stopping.wait()
    registry.close_watchers()
    server.stop(grace=2).wait()
    registry.close()
    return 0


def _announce(*lines: str) -> None:
    """Print the start-up lines; a reader that went away (``| head -1``) must not stop the server."""
    try:
        for line in lines:
            print(line, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: list[str] | None = None) -> int:
    """``python -m tablehost.api.server [--listen A] [--data DIR]`` (the same as ``tablehost serve``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tablehost.api.server")
    parser.add_argument("--listen", default=DEFAULT_LISTEN)
    parser.add_argument("--data", default="tablehost-data")
    args = parser.parse_args(argv)
    return serve(args.listen, args.data)


if __name__ == "__main__":
    sys.exit(main())
