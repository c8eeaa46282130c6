"""Binding the gRPC port (:mod:`tablehost.api.bind`): our refusal, never grpc's log line."""

from __future__ import annotations

import os
import socket
from concurrent import futures
from typing import Any

import grpc
import pytest

from tablehost.api.bind import bind_port

GRPC_LINE = b"E1130 22:31:50.646067   29034 add_port.cc:83] Failed to add port to server: No address added\n"


class WritingServer:
    """Stands in for a grpc server whose bind writes to descriptor 2 (as grpc's core and other
    threads do) and then answers ``port`` (0: failed)."""

    def __init__(self, port: int) -> None:
        self.port = port

    def add_insecure_port(self, address: str) -> int:
        os.write(2, b"a line another thread wrote\n")
        os.write(2, GRPC_LINE)
        return self.port


def test_a_taken_port_is_our_refusal_and_grpc_says_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        address = f"127.0.0.1:{holder.getsockname()[1]}"
        with pytest.raises(RuntimeError, match=f"cannot listen on {address}: the port is taken"):
            bind_port(server, address)
    assert capfd.readouterr().err == ""


def test_a_free_port_is_bound() -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    port = bind_port(server, "127.0.0.1:0")
    assert 0 < port < 65536
    server.start()
    server.stop(None)


@pytest.mark.parametrize("port", [0, 4321])
def test_what_others_wrote_meanwhile_is_passed_on(capfd: pytest.CaptureFixture[str], port: int) -> None:
    server: Any = WritingServer(port)
    if port:
        assert bind_port(server, "127.0.0.1:4321") == port
        assert capfd.readouterr().err == "a line another thread wrote\n" + GRPC_LINE.decode()
    else:
        with pytest.raises(RuntimeError):
            bind_port(server, "127.0.0.1:4321")
        assert capfd.readouterr().err == "a line another thread wrote\n"


def test_descriptor_2_is_back_after_a_bind_that_raised(capfd: pytest.CaptureFixture[str]) -> None:
    class Exploding:
        def add_insecure_port(self, address: str) -> int:
            os.write(2, b"said before failing\n")
            raise ValueError("not a grpc failure")

    server: Any = Exploding()
    with pytest.raises(ValueError, match="not a grpc failure"):
        bind_port(server, "127.0.0.1:1")
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "said before failing\nafter\n"
