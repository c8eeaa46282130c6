"""The gRPC server: ``create_server`` builds one around a registry; ``serve`` runs ``tablehost serve``.

The server uses grpc's thread pool: requests of different matches run concurrently (one lock
per match in the registry; guest calls release the GIL). Each open WatchMatch stream holds a
worker thread while it waits, so watch streams are capped (:mod:`tablehost.api.watch_slots`):
``--watches-per-token`` per token (default four, over gRPC and the HTTP API together) and three
quarters of ``max_workers`` in all, leaving threads for moves.
Health checking (``grpc.health.v1``) and server reflection are registered so generic tools
such as grpcurl work; the health status follows the store (NOT_SERVING while it does not answer
a ping, checked every :data:`HEALTH_INTERVAL_S`).

Several processes: with a shared store (PostgreSQL), ``serve(..., reuse_port=True)`` binds
with ``SO_REUSEPORT`` so several processes listen on one address and the kernel spreads the
connections; :func:`serve_processes` (``tablehost serve --processes N``) starts and watches N
such processes. SQLite admits one process per data directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from tablehost import logs
from tablehost._stacks import BigStackExecutor
from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api.auth import ensure_admin_token
from tablehost.api.bind import bind_port
from tablehost.api.interceptors import RequestInterceptor
from tablehost.api.metrics import Metrics
from tablehost.api.rate_limit import RateLimits, RequestGate
from tablehost.api.registry import DEFAULT_EVICT_AFTER_S, MatchRegistry
from tablehost.api.servicer import MatchServicer, ModuleServicer
from tablehost.api.validation import MAX_RESPONSE_BYTES, check_address
from tablehost.api.watch_slots import WATCHES_PER_TOKEN, WatchSlots, watch_share
from tablehost.gcpolicy import DEFAULT_SWITCH_INTERVAL_MS, tune_gc
from tablehost.limits import DEFAULT_LIMITS, Limits
from tablehost.store import StoreError

log = structlog.get_logger(__name__)

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_MAX_WORKERS = 128
"""Worker threads: measured on 2 cores, 128 beats 16 or 4 at 100 concurrent matches (fewer
workers queue requests inside grpc, where a busy match's requests wait behind others)."""
EXIT_CANNOT_START = 2
"""Exit status of ``serve`` when the listen address or the data directory cannot be used."""
REQUEST_HEADROOM_BYTES = 64 * 1024
"""Room above the module size limit for the rest of an UploadModule request."""
HEALTH_INTERVAL_S = 2.0
"""How often the health status is checked against the store, seconds."""
KEEPALIVE_MS = 60_000
"""The server pings a connection with an open call after this long without traffic (ms), so a
watcher whose network vanished (no FIN, no RST) is found and its stream's thread and watch slot
freed, not held until the next change of its match."""
KEEPALIVE_TIMEOUT_MS = 20_000
"""How long the server waits for a ping's answer before it closes the connection (ms)."""
MIN_CLIENT_PING_MS = 5_000
"""The shortest interval between a client's keepalive pings the server accepts (ms); a client
pinging faster is sent GOAWAY. The Python client pings every
:data:`~tablehost.client.KEEPALIVE_S` (20 s)."""
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
    show_guest_output: bool = False,
    metrics: Metrics | None = None,
    rate_limits: RateLimits | None = None,
    watches_per_token: int = WATCHES_PER_TOKEN,
    reuse_port: bool = False,
    health_interval_s: float = HEALTH_INTERVAL_S,
    gate: RequestGate | None = None,
    watch_slots: WatchSlots | None = None,
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
        show_guest_output: tell players what a failing game said and printed (local
            development only: it may show hidden information); off by default.
        metrics: the server's metrics (requests, watch streams, store health); none: not counted.
        rate_limits: the per-token request budget (default :class:`RateLimits`); ignored with ``gate``.
        gate: the rate limits' buckets, shared with the HTTP API (``serve --http``); default:
            this server's own, made from ``rate_limits``.
        watches_per_token: open watch streams one token may hold; ignored with ``watch_slots``.
        watch_slots: the caps on open WatchMatch streams, to share their per-token count with
            the HTTP API (``serve --http`` hands it their :meth:`~WatchSlots.sibling`); default:
            this server's own, of ``max_watchers`` and ``watches_per_token``.
        reuse_port: bind with ``SO_REUSEPORT`` so several processes share the address (a
            shared store only: each process must see every other's moves).
        health_interval_s: seconds between the health checks against the store.

    Returns:
        ``(server, port)`` with the port actually bound.

    Raises:
        ValueError: ``address`` is not ``host:port`` with a port in 0..65535.
        RuntimeError: the address cannot be bound (port taken, host not of this machine).
    """
    check_address(address, listening=True)
    registry.start_timekeeper()
    server = grpc.server(
        # Big-stack request threads run guest calls in place (no hand-off to another thread).
        BigStackExecutor(registry.limits.stack_bytes, max_workers=max_workers, thread_name_prefix="tablehost-rpc"),
        options=[
            # Never share a port with another server by accident; only when asked for.
            ("grpc.so_reuseport", 1 if reuse_port else 0),
            # grpc's default 4 MiB would refuse modules the limits accept before they are judged.
            ("grpc.max_receive_message_length", registry.limits.module_bytes + REQUEST_HEADROOM_BYTES),
            ("grpc.max_send_message_length", max_response_bytes),
            # Find peers that vanished mid-stream, and let clients find a vanished server.
            ("grpc.keepalive_time_ms", KEEPALIVE_MS),
            ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
            ("grpc.http2.ping_timeout_ms", KEEPALIVE_TIMEOUT_MS),  # grpc 1.85 times pings out by this
            ("grpc.http2.min_recv_ping_interval_without_data_ms", MIN_CLIENT_PING_MS),
            ("grpc.http2.max_ping_strikes", 2),
        ],
    )
    wrapper = RequestInterceptor(registry, metrics, rate_limits, show_guest_output=show_guest_output, gate=gate)
    services = pb.DESCRIPTOR.services_by_name
    wrapper.add_to_server(ModuleServicer(registry), services["ModuleService"], server)
    slots = watch_slots if watch_slots is not None else WatchSlots(
        watch_share(max_workers) if max_watchers is None else max_watchers, per_token=watches_per_token
    )
    if metrics is not None:
        metrics.follow_watch_slots(slots)
    match_servicer = MatchServicer(registry, slots, max_response_bytes=max_response_bytes)
    wrapper.add_to_server(match_servicer, services["MatchService"], server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    _follow_store_health(registry, health_servicer, metrics, health_interval_s)
    reflection.enable_server_reflection(
        (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    return server, bind_port(server, address)


def _follow_store_health(
    registry: MatchRegistry,
    health_servicer: health.HealthServicer,
    metrics: Metrics | None,
    interval_s: float,
) -> None:
    """Set every service's health from a store ping now, then every ``interval_s`` until the
    registry closes (a daemon thread).

    The store's changes are logged once each: ``server.store_unreachable`` (warning) when a ping
    first fails, ``store.recovered`` (info, with ``down_s``, the seconds since that first failed
    ping) when one answers again; not at every check in between.
    """
    down_since: list[float | None] = [None]  # monotonic seconds of the first failed ping of an outage

    def check() -> None:
        try:
            registry.store.ping()
            status, up = health_pb2.HealthCheckResponse.SERVING, 1
        except StoreError as exc:
            status, up = health_pb2.HealthCheckResponse.NOT_SERVING, 0
            if down_since[0] is None:
                down_since[0] = time.monotonic()
                log.warning("server.store_unreachable", error=str(exc), store=registry.store.description)
        else:
            if down_since[0] is not None:
                log.info("store.recovered", store=registry.store.description,
                         down_s=round(time.monotonic() - down_since[0], 1))
                down_since[0] = None
        for name in (*SERVICE_NAMES, ""):
            health_servicer.set(name, status)
        if metrics is not None:
            metrics.store_up.set(up)

    def loop() -> None:
        while not registry.closed.wait(interval_s):
            check()

    check()
    threading.Thread(target=loop, name="tablehost-health", daemon=True).start()


GC_THRESHOLDS = (1_000, 2, 1_000)
"""The serving process's ``gc.set_threshold``, chosen by the pauses they cause (every thread
waits for a collection: it holds the interpreter lock). Measured with bench/latency_trace.py
(tic-tac-toe, 100 paced matches, 6 games each: 4,578 moves, 600 matches in memory; pauses in
CPU ms of the collecting thread, which a loaded machine does not inflate):

- (20000, 50, 100), the previous choice: 26 young collections of 6.2 ms (median), 16 over
  5 ms; about 10 ms of wall time each on a quiet machine, each delaying several requests
  past 5 ms.
- (700, 10, 10), Python's default: young ones of 0.3 ms, 59 middle ones of 3.3 ms, but 6 full
  collections of 93 to 158 ms: a full collection scans every match in memory, and at this
  threshold it comes every few hundred moves.
- (1000, 2, 1000): 351 young of 0.5 ms, 116 middle of 2.2 ms (12 over 5 ms), no full
  collection while serving (a thousand middle ones, and the heap grown by a quarter, first).
  About 0.07 ms more CPU per move than (20000, 50, 100) (total collection CPU 0.12 against
  0.05 ms per move), within the run-to-run spread of the server's 2.2 to 2.9 ms per move.

Most of what survives a young collection is the journal of the matches in memory (about 25
dicts and 16 lists per move), so the middle collections cost the same whatever their spacing;
short ones keep the requests they land on under the 5 ms target."""


def _new_folder(path: Path) -> Path | None:
    """The highest folder on ``path`` (itself included) that does not exist yet: what a start
    that is refused must remove again, as this start would create it and all below it.
    None when ``path`` exists already (nothing of ours to remove)."""
    path = path.absolute()
    if path.exists():
        return None
    top = path
    while not top.parent.exists():
        top = top.parent
    return top


def _remove_new_folders(folders: list[Path | None]) -> None:
    """Remove the folders :func:`_new_folder` found missing before a refused start (a folder
    that existed before is never touched)."""
    for folder in folders:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def serve(
    listen: str = DEFAULT_LISTEN,
    data_dir: Path | str = "tablehost-data",
    *,
    limits: Limits = DEFAULT_LIMITS,
    max_workers: int = DEFAULT_MAX_WORKERS,
    synchronous: str = "FULL",
    log_level: str = "info",
    show_guest_output: bool = False,
    check_uploads: int = 0,
    check_players: int | None = None,
    store: str | None = None,
    reuse_port: bool = False,
    metrics_port: int | None = None,
    rate_limits: RateLimits | None = None,
    watches_per_token: int = WATCHES_PER_TOKEN,
    http: str | None = None,
    evict_after_s: float | None = DEFAULT_EVICT_AFTER_S,
    max_live_matches: int | None = None,
    switch_interval_ms: float = DEFAULT_SWITCH_INTERVAL_MS,
) -> int:
    """Run a server until SIGINT or SIGTERM (``tablehost serve``).

    Prints ``tablehost serving on HOST:PORT`` and the admin token file's path on standard
    output once it accepts requests (then ``metrics on http://HOST:PORT/metrics`` when asked
    for); logs JSON lines on standard error. A listen address, data directory or store it
    cannot use is one line on standard error (``tablehost: ...``).

    Args:
        store: a ``--store`` value (:func:`tablehost.store.open_store`); ``None``: SQLite in
            ``data_dir``.
        reuse_port: share the listen address with other processes (``SO_REUSEPORT``); needs a
            shared store.
        metrics_port: serve Prometheus metrics on this port of the listen host (0 picks one).
        rate_limits, watches_per_token: the per-token limits (:func:`create_server`).
        evict_after_s, max_live_matches: when finished and idle matches leave memory
            (:meth:`MatchRegistry.evict_idle`; None: never, no bound).
        switch_interval_ms: the interpreter's thread switch interval for this process
            (``sys.setswitchinterval``), ms; see :data:`DEFAULT_SWITCH_INTERVAL_MS`.

    ``http`` (``host:port``, off when ``None``) also serves the web table
    (:mod:`tablehost.web`) on a thread of this process, over the same registry; its URL is
    printed as ``web table on http://HOST:PORT/``. With ``reuse_port`` it shares that address
    with the other processes too.

    Returns:
        The exit status: 0 after a clean stop, 2 when it could not start.
    """
    logs.configure(level=log_level)
    metrics = Metrics()
    # What this start would create, removed again if it is refused (never what was there).
    created = [_new_folder(Path(data_dir))]
    if store and store.startswith("sqlite:"):
        created.append(_new_folder(Path(store[len("sqlite:"):])))
    try:
        host, _ = check_address(listen, listening=True)
        if http is not None:
            check_address(http, listening=True)
        registry = MatchRegistry(
            data_dir, limits=limits, synchronous=synchronous, check_uploads=check_uploads,
            check_players=check_players, store=store, metrics=metrics,
            evict_after_s=evict_after_s, max_live_matches=max_live_matches,
        )
    except (ValueError, StoreError) as exc:
        _remove_new_folders(created)
        print(f"tablehost: {exc}", file=sys.stderr)
        return EXIT_CANNOT_START
    try:
        if reuse_port and not registry.store.shared:
            raise ValueError(
                "several processes on one address need a shared store: --store postgresql://... "
                "(SQLite admits one process per data directory)"
            )
        gate = RequestGate(rate_limits)  # one budget per token and address over gRPC and HTTP alike
        slots = WatchSlots(watch_share(max_workers), per_token=watches_per_token)  # the HTTP API's: a sibling
        server, port = create_server(
            listen,
            registry,
            max_workers=max_workers,
            metrics=metrics,
            gate=gate,
            watch_slots=slots,
            reuse_port=reuse_port,
            show_guest_output=show_guest_output,
        )
        bound_metrics = None if metrics_port is None else metrics.serve_http(metrics_port, host)
    except (ValueError, RuntimeError, OSError) as exc:
        registry.close(report=False)
        _remove_new_folders(created)
        print(f"tablehost: {exc}", file=sys.stderr)
        return EXIT_CANNOT_START
    web = None
    if http is not None:
        try:
            from tablehost.web.app import HttpServer

            web = HttpServer(http, registry, reuse_port=reuse_port, gate=gate, metrics=metrics, watch_slots=slots)
        except (ValueError, RuntimeError, ImportError) as exc:
            registry.close(report=False)
            _remove_new_folders(created)
            print(f"tablehost: {exc}", file=sys.stderr)
            return EXIT_CANNOT_START
    tune_gc(GC_THRESHOLDS)  # freeze what start-up made (modules, resumed matches), collect less often
    sys.setswitchinterval(switch_interval_ms / 1000)
    metrics.follow_gc()
    stopping = _stop_on_signals()  # before the address is announced: a SIGTERM right after it stops cleanly
    server.start()
    if web is not None:
        web.start()
    _announce(
        f"tablehost serving on {host}:{port} (store {registry.store.description})",
        f"admin token: {registry.admin_token_path.resolve()}",
        *([f"metrics on http://{host}:{bound_metrics}/metrics"] if bound_metrics is not None else []),
        *([f"web table on {web.url}/ (tablehost web prints the admin link)"] if web else []),
    )
    log.info("server.started", address=f"{host}:{port}", store=registry.store.description, pid=os.getpid())
    while not stopping.wait(SIGNAL_POLL_S):
        pass
    _force_exit_after(STOP_DEADLINE_S)
    registry.close_watchers()
    if web is not None:
        web.stop()
    server.stop(grace=2).wait()
    registry.close()
    return 0


def serve_processes(
    processes: int, listen: str, data_dir: Path | str, serve_args: list[str], *, http: str | None = None
) -> int:
    """Run ``processes`` ``tablehost serve`` processes on one address until SIGINT or SIGTERM.

    Each child runs ``tablehost serve --reuse-port`` with ``serve_args`` (which must name a
    shared ``--store``); a child that exits is started again after a second. Port 0 is
    resolved once, here, so every child listens on the same port. The children share
    ``data_dir`` (admin token, compiled-code cache); child ``i`` serves metrics on
    ``--metrics-port + i`` when one is given.

    Args:
        processes: how many children (>= 1).
        listen: ``host:port`` shared by the children.
        data_dir: their data directory.
        serve_args: the rest of their command line (``--store``, ``--metrics-port`` ...).
        http: the web table's ``host:port`` (``--http``), shared by every child like ``listen``
            (``SO_REUSEPORT``; port 0 resolved once here too); ``None``: no web table.

    Returns:
        The exit status: 0 after a clean stop, 2 when the first start failed.
    """
    holders: list[socket.socket] = []
    try:
        address = _shared_address(listen, holders)
        web_address = None if http is None else _shared_address(http, holders)
    except (ValueError, OSError) as exc:
        for holder in holders:
            holder.close()
        print(f"tablehost: {exc}", file=sys.stderr)
        return EXIT_CANNOT_START
    created = _new_folder(Path(data_dir))
    Path(data_dir).mkdir(mode=0o700, parents=True, exist_ok=True)
    token_path, _ = ensure_admin_token(Path(data_dir))  # once, before the children race for it
    metrics_base = None
    rest = list(serve_args)
    if "--metrics-port" in rest:
        at = rest.index("--metrics-port")
        metrics_base = int(rest[at + 1])
        del rest[at : at + 2]

    def command(index: int) -> list[str]:
        extra = [] if metrics_base is None else ["--metrics-port", str(metrics_base + index if metrics_base else 0)]
        web = [] if web_address is None else ["--http", web_address]
        return [
            sys.executable, "-m", "tablehost", "serve", "--listen", address, "--data", str(data_dir),
            "--reuse-port", *rest, *extra, *web,
        ]

    children: list[subprocess.Popen[str]] = []
    for index in range(processes):
        child = subprocess.Popen(command(index), stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        first = child.stdout.readline()
        if not first.startswith("tablehost serving on"):
            for started in [*children, child]:
                started.terminate()
                started.wait()
            for holder in holders:
                holder.close()
            _remove_new_folders([created])
            print(f"tablehost: process {index + 1} of {processes} did not start", file=sys.stderr)
            return EXIT_CANNOT_START
        threading.Thread(target=_drain, args=(child,), daemon=True).start()
        children.append(child)
    for holder in holders:
        holder.close()
    _announce(
        f"tablehost serving on {address} ({processes} processes, pids "
        f"{','.join(str(c.pid) for c in children)})",
        f"admin token: {token_path.resolve()}",
        *([f"web table on {_http_url(web_address)}/ (tablehost web prints the admin link)"] if web_address else []),
    )
    stopping = _stop_on_signals()
    while not stopping.wait(0.5):
        for index, child in enumerate(children):
            if child.poll() is not None:
                log.warning("server.process_exited", index=index, pid=child.pid, status=child.returncode)
                time.sleep(1.0)
                children[index] = subprocess.Popen(command(index), stdout=subprocess.PIPE, text=True)
                threading.Thread(target=_drain, args=(children[index],), daemon=True).start()
    for child in children:
        child.send_signal(signal.SIGTERM)
    for child in children:
        child.wait(timeout=30)
    return 0


def _shared_address(address: str, holders: list[socket.socket]) -> str:
    """``address`` with port 0 replaced by a free port every child can share.

    The socket that picked the port (``SO_REUSEPORT``) is appended to ``holders`` and keeps the
    port ours until the children listen. Raises ValueError when ``address`` is not ``host:port``.
    """
    host, port = check_address(address, listening=True)
    if port == 0:
        holder = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        holder.bind((host.strip("[]"), 0))
        holders.append(holder)
        port = holder.getsockname()[1]
    return f"{host}:{port}"


def _http_url(address: str) -> str:
    """``http://host:port`` of a ``host:port`` address (IPv6 hosts in brackets)."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


SIGNAL_POLL_S = 0.2
"""How often the main thread wakes while it waits for SIGINT or SIGTERM, seconds. A process
signal may be delivered to any thread (grpc's, wasmtime's); Python then runs its handler only
when the main thread next runs Python code, which a wait without a timeout never does: a
server stuck at ``Event.wait()`` after SIGTERM was seen under load. Waking regularly bounds the
delay to this."""
STOP_DEADLINE_S = 12.0
"""Longest a stop may take after the signal, seconds: past it the process logs
``server.stop_forced`` and exits at once (status 0: every change was committed before it was
answered; a request still running gets no answer, as on a crash). Normal stops take the grpc
grace (2 s) plus the timekeeper's last tick."""


def _force_exit_after(seconds: float) -> None:
    """Exit the process (``os._exit(0)``) if it is still running ``seconds`` from now: a handler
    stuck in a long guest call or a thread that never ends must not keep a stopped server alive."""

    def force() -> None:
        time.sleep(seconds)
        log.warning("server.stop_forced", after_s=seconds, threads=sorted(t.name for t in threading.enumerate()))
        sys.stderr.flush()
        os._exit(0)

    threading.Thread(target=force, name="tablehost-stop-deadline", daemon=True).start()


def _stop_on_signals() -> threading.Event:
    """An event set (and logged as ``server.stopping``) when SIGINT or SIGTERM arrives; wait for
    it with a timeout (:data:`SIGNAL_POLL_S`), never without.

    Installs the handlers, so call it from the main thread.
    """
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        del frame
        log.info("server.stopping", signal=signal.Signals(signum).name)
        stopping.set()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    return stopping


def _drain(child: subprocess.Popen[str]) -> None:
    """Read a child's standard output to its end (its pipe must never fill up)."""
    assert child.stdout is not None
    for _line in child.stdout:
        pass
    child.stdout.close()


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
