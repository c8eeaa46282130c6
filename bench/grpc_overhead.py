"""What grpcio itself costs per RPC in Python: an echo method with no work, sync vs asyncio server.

Starts a server in a child process on a free loopback port (a generic unary method that
returns its request, ``--bytes`` long), then calls it from ``--clients`` asyncio client
processes with ``--concurrency`` calls in flight each, for ``--seconds``. Three servers:

- ``sync``: ``grpc.server`` with a ``ThreadPoolExecutor`` of ``--workers`` threads (what
  ``tablehost serve`` uses today);
- ``aio``: ``grpc.aio.server``, the handler a coroutine run on the event loop;
- ``aio+thread``: ``grpc.aio.server``, the handler run in a thread pool
  (``loop.run_in_executor``), as blocking work (guest calls, store commits) would have to be.

Prints per server: RPCs/s, server CPU ms per RPC, client CPU ms per RPC, and the load average.
These are the floor under ``bench/grpc_latency.py``'s figures: a tic-tac-toe move there is two
RPCs (GetView and SubmitAction).

Usage::

    PYTHONPATH=runtime python bench/grpc_overhead.py [--servers sync,aio,aio+thread]
        [--seconds 5] [--clients 1] [--concurrency 100] [--workers 128] [--bytes 300]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import time
from concurrent import futures
from pathlib import Path

import grpc

METHOD = "/bench.Echo/Echo"


def _identity(data: bytes) -> bytes:
    return data


def _handler(kind: str) -> grpc.GenericRpcHandler:
    if kind == "sync":

        def echo(request: bytes, context: grpc.ServicerContext) -> bytes:
            del context
            return request

    elif kind == "aio":

        async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:  # type: ignore[misc]
            del context
            return request

    else:
        pool = futures.ThreadPoolExecutor(max_workers=32)

        async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:  # type: ignore[misc]
            del context
            return await asyncio.get_running_loop().run_in_executor(pool, _identity, request)

    method = grpc.unary_unary_rpc_method_handler(echo, request_deserializer=_identity, response_serializer=_identity)
    return grpc.method_handlers_generic_handler("bench.Echo", {"Echo": method})


def serve(kind: str, workers: int, port_out: multiprocessing.connection.Connection, stop: multiprocessing.Event) -> None:
    """Child process: serve ``kind`` until ``stop`` is set; send the port, then the CPU seconds used."""
    if kind == "sync":
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
        server.add_generic_rpc_handlers((_handler(kind),))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        port_out.send(port)
        stop.wait()
        port_out.send(time.process_time())
        server.stop(0)
        return

    async def run() -> None:
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((_handler(kind),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        port_out.send(port)
        while not stop.is_set():
            await asyncio.sleep(0.05)
        port_out.send(time.process_time())
        await server.stop(0)

    asyncio.run(run())


def client(args: tuple[int, int, float, int]) -> tuple[int, float]:
    """Child process: call the echo as fast as ``concurrency`` loops can; return calls and CPU seconds."""
    port, concurrency, seconds, size = args

    async def run() -> int:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            echo = channel.unary_unary(METHOD, request_serializer=_identity, response_deserializer=_identity)
            payload = b"x" * size
            deadline = time.perf_counter() + seconds
            calls = 0

            async def loop() -> None:
                nonlocal calls
                while time.perf_counter() < deadline:
                    await echo(payload)
                    calls += 1

            await asyncio.gather(*(loop() for _ in range(concurrency)))
            return calls

    calls = asyncio.run(run())
    return calls, time.process_time()


def measure(kind: str, args: argparse.Namespace) -> None:
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    stop = context.Event()
    server = context.Process(target=serve, args=(kind, args.workers, sender, stop))
    server.start()
    port = receiver.recv()
    started = time.perf_counter()
    with context.Pool(args.clients) as pool:
        results = pool.map(client, [(port, args.concurrency, args.seconds, args.bytes)] * args.clients)
    elapsed = time.perf_counter() - started
    stop.set()
    server_cpu = receiver.recv()
    server.join(10)
    calls = sum(r[0] for r in results)
    client_cpu = sum(r[1] for r in results)
    print(
        f"{kind:>11} {calls / elapsed:>8.0f} {1e3 * server_cpu / calls:>12.3f} {1e3 * client_cpu / calls:>12.3f} "
        f"{os.getloadavg()[0]:>8.2f}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", default="sync,aio,aio+thread")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=1, help="client processes")
    parser.add_argument("--concurrency", type=int, default=100, help="calls in flight per client process")
    parser.add_argument("--workers", type=int, default=128, help="the sync server's threads")
    parser.add_argument("--bytes", type=int, default=300, help="request and reply size")
    args = parser.parse_args()
    print(f"echo RPC over loopback, {args.bytes} bytes, {args.clients} client process(es) x {args.concurrency} "
          f"in flight, {os.cpu_count()} cores ({Path(grpc.__file__).parent.name} {grpc.__version__})")
    print(f"{'server':>11} {'RPCs/s':>8} {'srv ms/RPC':>12} {'cli ms/RPC':>12} {'loadavg':>8}")
    for kind in args.servers.split(","):
        if kind not in ("sync", "aio", "aio+thread"):
            parser.error(f"unknown server {kind!r}")
        measure(kind, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
