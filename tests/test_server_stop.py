"""``tablehost serve`` stops on SIGTERM within a bound, whichever thread the signal lands on.

A process signal is delivered to any one of its threads. Python runs the handler only when its
main thread next runs Python code, so a main thread waiting without a timeout never saw a
SIGTERM that landed on a grpc or wasmtime thread: the server kept running (seen in the test
suite under load). The signal is sent here to one non-main thread only (Linux ``tgkill``).
"""

from __future__ import annotations

import ctypes
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_e2e_server import ServerProcess

TGKILL = {"x86_64": 234, "aarch64": 131}.get(platform.machine())


@pytest.mark.e2e
@pytest.mark.skipif(TGKILL is None or not sys.platform.startswith("linux"), reason="tgkill on Linux x86_64/aarch64")
def test_a_sigterm_landing_on_another_thread_stops_the_server(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data")
    try:
        others = [int(t) for t in os.listdir(f"/proc/{server.proc.pid}/task") if int(t) != server.proc.pid]
        assert others, "the server runs threads besides its main one"
        libc = ctypes.CDLL(None, use_errno=True)
        # The first thread still there (a short-lived one may have ended since the listing).
        assert any(libc.syscall(TGKILL, server.proc.pid, tid, signal.SIGTERM) == 0 for tid in others)
        assert server.proc.wait(timeout=15) == 0  # a main thread blind to the signal never exits
    finally:
        if server.proc.poll() is None:
            server.kill()
        else:
            server._close()


def test_a_stop_past_its_deadline_is_forced(tmp_path: Path) -> None:
    """The deadline's thread ends the process even while another thread never returns."""
    code = (
        "import threading, time\n"
        "from tablehost.api.server import _force_exit_after\n"
        "_force_exit_after(0.3)\n"
        "threading.Event().wait()\n"  # a stop stuck for ever
    )
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0 and "server.stop_forced" in result.stdout + result.stderr
    assert time.monotonic() - started < 30
