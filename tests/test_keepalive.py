"""A network that goes silent (no FIN, no RST: a partition, a dead NAT entry) under an open
watch stream: keepalive pings find it on both sides.

Without pings the client's WatchMatch waits for ever, and the server holds the stream's thread
and its watch slot until the next change of the match. A TCP proxy between them stands in for
the network: it forwards both ways until it is frozen, then holds its sockets open and drops
every byte.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablehost.api import server as server_module
from tablehost.api.registry import MatchRegistry
from tablehost.api.server import create_server
from tablehost.api.watch_slots import WatchSlots
from tablehost.client import ApiError, TablehostClient

DIST = Path(__file__).resolve().parents[1] / "sample_games" / "dist"

PING_S = 0.5
"""The pings' interval and answer timeout in these tests, seconds (the defaults are 20-60 s)."""
GIVE_UP_S = 20.0
"""How long a test waits for the silence to be noticed (it takes about 2 * PING_S)."""


class FreezableProxy:
    """Forwards TCP connections from a local port to ``target`` until :meth:`freeze`."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.frozen = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._sockets: list[socket.socket] = [self._listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                return
            if not data:
                return
            if not self.frozen.is_set():  # frozen: read and drop, never close
                try:
                    sink.sendall(data)
                except OSError:
                    return

    def freeze(self) -> None:
        self.frozen.set()

    def close(self) -> None:
        for sock in self._sockets:
            sock.close()


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[MatchRegistry, WatchSlots, str]]:
    """A server whose pings and ping floor are :data:`PING_S`; yields (registry, slots, port address)."""
    ping_ms = int(PING_S * 1000)
    monkeypatch.setattr(server_module, "KEEPALIVE_MS", ping_ms)
    monkeypatch.setattr(server_module, "KEEPALIVE_TIMEOUT_MS", ping_ms)
    monkeypatch.setattr(server_module, "MIN_CLIENT_PING_MS", ping_ms // 2)
    registry = MatchRegistry(tmp_path / "data", synchronous="NORMAL")
    slots = WatchSlots(8)
    server, port = create_server("127.0.0.1:0", registry, max_workers=8, watch_slots=slots)
    server.start()
    try:
        yield registry, slots, f"127.0.0.1:{port}"
    finally:
        registry.close_watchers()
        server.stop(0).wait()
        registry.close()


def new_match(address: str, registry: MatchRegistry) -> tuple[str, str]:
    """Create a tic-tac-toe match directly; return (match id, seat 1's token)."""
    with TablehostClient(address, registry.admin_token_path.read_text().strip()) as admin:
        module_id = admin.upload_module((DIST / "tic_tac_toe.wasm").read_bytes(), "tic_tac_toe")["module_id"]
        created = admin.create_match(module_id, ["ann", "bob"])
    return created["match_id"], created["seats"][0]["token"]


def watch_in_thread(client: TablehostClient, match_id: str) -> tuple[threading.Event, list[object]]:
    """Watch ``match_id`` on a thread; returns (the first view came, what ended the stream)."""
    first, ended = threading.Event(), []

    def run() -> None:
        try:
            for _ in client.watch(match_id):
                first.set()
            ended.append("end")
        except ApiError as exc:
            ended.append(exc)

    threading.Thread(target=run, daemon=True).start()
    return first, ended


def watch_through_proxy(
    address: str, registry: MatchRegistry, *, keepalive_s: float
) -> tuple[FreezableProxy, TablehostClient, list[object]]:
    """A new match watched by seat 1 through a proxy to ``address``, its first view received;
    returns (the proxy, the client, what ended the stream: empty while it runs)."""
    match_id, token = new_match(address, registry)
    host, port = address.split(":")
    proxy = FreezableProxy((host, int(port)))
    client = TablehostClient(proxy.address, token, keepalive_s=keepalive_s, keepalive_timeout_s=keepalive_s)
    first, ended = watch_in_thread(client, match_id)
    assert first.wait(10), "no first view through the proxy"
    return proxy, client, ended


def test_a_watch_whose_server_went_silent_fails_as_unavailable(
    served: tuple[MatchRegistry, WatchSlots, str],
) -> None:
    registry, _, address = served
    proxy, client, ended = watch_through_proxy(address, registry, keepalive_s=PING_S)
    try:
        proxy.freeze()
        deadline = time.monotonic() + GIVE_UP_S
        while not ended and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ended, f"the watch still waits {GIVE_UP_S} s after its network went silent"
        assert isinstance(ended[0], ApiError) and ended[0].status.name == "UNAVAILABLE", ended
    finally:
        client.close()
        proxy.close()


def test_the_server_frees_the_slot_of_a_watcher_whose_network_went_silent(
    served: tuple[MatchRegistry, WatchSlots, str],
) -> None:
    registry, slots, address = served
    # The client does not ping (a dead peer cannot): only the server's pings can find it.
    proxy, client, _ = watch_through_proxy(address, registry, keepalive_s=3600)
    try:
        assert slots.open == 1
        proxy.freeze()
        deadline = time.monotonic() + GIVE_UP_S
        while slots.open and time.monotonic() < deadline:
            time.sleep(0.05)
        assert slots.open == 0, f"the silent watcher still holds its slot after {GIVE_UP_S} s"
    finally:
        client.close()
        proxy.close()
