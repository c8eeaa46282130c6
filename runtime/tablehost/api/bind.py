"""Binding the gRPC port with our own words: grpc's C core says nothing on standard error.

When a port is taken, grpc's core writes its own log line (``E1130 ... add_port.cc:83] Failed
to add port to server: ...``) straight to file descriptor 2, before :func:`bind_port` can
refuse with one clear sentence. A port check beforehand would race with whoever binds the port
next, so the real bind stays the judge: for the moment of that call, descriptor 2 goes to a
temporary file; afterwards everything written there is passed on to the real standard error,
except grpc's own lines about a bind that failed (our refusal says it instead). Lines other
threads wrote meanwhile are kept, only a little later.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import grpc

GRPC_CORE_LINE = re.compile(rb"^[IWEF]\d{4} [\d:.]+\s+\d+ [\w./-]+:\d+\] ")
"""A log line of grpc's C core (abseil's prefix: severity, date, time, thread, file:line)."""


def bind_port(server: grpc.Server, address: str) -> int:
    """Bind ``address`` on ``server`` (not yet started) for plain-text gRPC.

    Args:
        server: the server to bind.
        address: ``host:port`` (already checked); port 0 picks a free port.

    Returns:
        The port bound, 1..65535.

    Raises:
        RuntimeError: the address cannot be bound (port taken, host not of this machine); grpc's
            own report of it is not shown.
    """
    held: list[bytes] = []
    port = 0
    try:
        with _stderr_held(held):
            port = server.add_insecure_port(address)
    except RuntimeError:  # grpc's own words point at GRPC_VERBOSITY, not at the cause
        port = 0
    finally:  # whatever else was written meanwhile is passed on, even if the bind raised
        _write_stderr(b"".join(held if port else [line for line in held if not GRPC_CORE_LINE.match(line)]))
    if port == 0:
        raise RuntimeError(
            f"cannot listen on {address}: the port is taken (is another server running?) or the host "
            "is not an address of this machine"
        )
    return port


@contextmanager
def _stderr_held(held: list[bytes]) -> Iterator[None]:
    """Send file descriptor 2 to a temporary file while the block runs; afterwards ``held``
    gets what was written there, line by line (line ends kept). The real descriptor 2 is back
    even when the block raises."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as spool:
            os.dup2(spool.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                spool.seek(0)
                held.extend(spool.read().splitlines(keepends=True))
    finally:
        os.close(saved)


def _write_stderr(data: bytes) -> None:
    """Write ``data`` to file descriptor 2 whole (a short write is resumed)."""
    view = memoryview(data)
    while view:
        view = view[os.write(2, view) :]
