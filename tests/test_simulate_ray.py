"""``simulate`` on Ray: a local Ray started for the run gives the same summary as a local run.

Starting Ray costs several seconds, so one test covers both the in-guest and the host-driven
paths (marked slow; it runs once in CI, where the ``ray`` extra is installed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tablehost.simulate import simulate

pytest.importorskip("ray")

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"


def without_timings(summary: Any) -> dict[str, Any]:
    data: dict[str, Any] = summary.to_json()
    for timing in ("moves_per_second", "games_per_second", "seconds"):
        data.pop(timing)
    return data


@pytest.mark.slow
def test_a_local_ray_gives_the_local_summary() -> None:
    # In a child interpreter: Ray's driver installs its own SIGILL/SIGSEGV handlers over
    # wasmtime's, so a guest trap later in the same process would kill it.
    here = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")])}
    code = "import warnings; warnings.simplefilter('ignore'); import test_simulate_ray as t; t.check_local_ray()"
    result = subprocess.run([sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]


def check_local_ray() -> None:
    """The checks of the test above, run in a fresh interpreter; raises AssertionError on a difference."""
    import ray

    module = DIST / "tic_tac_toe.wasm"
    # No address: simulate starts a local Ray for the run and stops it after.
    in_guest = simulate(module, ["random", "first"], 7, 24, in_guest=True, use_ray=True, batch_size=5, workers=2)
    assert not ray.is_initialized()
    assert without_timings(in_guest) == without_timings(simulate(module, ["random", "first"], 7, 24, in_guest=True))
    assert sum(in_guest.wins) + in_guest.draws == 24 and not in_guest.failures
    # An already running Ray is used as it is (and left running); host-driven batches this time.
    # Options travel with the batches; a module failing game after game is never quarantined.
    import tempfile

    from scripted_guest import final_step, scripted_guest

    panic = b'{"message":"setup exploded on an odd seed","printed":""}'
    with tempfile.TemporaryDirectory() as folder:
        odd_seed = Path(folder) / "odd_seed.wasm"
        odd_seed.write_bytes(scripted_guest(step=final_step(), setup_panics_on_odd_seed=panic))
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
        try:
            host = simulate(module, ["random", "random"], 8, 6, use_ray=True, batch_size=2)
            misere = simulate(module, ["random", "random"], 8, 6, use_ray=True, batch_size=2, options={"misere": True})
            failing = simulate(odd_seed, ["random", "random"], 1, 30, use_ray=True, batch_size=30)
            assert ray.is_initialized()
        finally:
            ray.shutdown()
    assert without_timings(host) == without_timings(simulate(module, ["random", "random"], 8, 6))
    assert without_timings(misere) == without_timings(
        simulate(module, ["random", "random"], 8, 6, options={"misere": True})
    )
    errors = [failure["error"] for failure in failing.failures]
    assert len(errors) > 8 and set(errors) == {"guest/panic: setup exploded on an odd seed"}, errors


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_ray_address_where_nothing_listens_fails_at_once_in_one_line() -> None:
    # ray.init(address=...) has no connect timeout: it retried for minutes, printing warnings
    # about another address. Run in a child, so a hang fails here instead of stalling the suite.
    address = f"127.0.0.1:{_closed_port()}"
    argv = [sys.executable, "-m", "tablehost", "simulate", str(DIST / "tic_tac_toe.wasm"), "--games", "2",
            "--ray", address]
    result = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stdout == "", result.stderr[-2000:]
    said = (
        f"tablehost: no Ray cluster answers at {address} (Connection refused, tried for up to 3 s): start one "
        "there (ray start --head), or give --ray without an address for a local Ray"
    )
    assert result.stderr.splitlines() == [said]


@pytest.mark.parametrize("address", ["ray://nohost", "10.0.0.1", "h:0", "h:99999", ":6379", "h:６３７９"])
def test_a_ray_address_that_is_not_host_port_is_refused(address: str) -> None:
    from tablehost.ray_runner import probe_cluster

    with pytest.raises(ValueError, match="is not HOST:PORT"):
        probe_cluster(address)
