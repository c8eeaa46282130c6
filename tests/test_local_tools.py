"""The local commands (``check``, ``simulate``, ``play``) report each game's own outcome: no
quarantine, non-default ``--option`` values, exit 1 for a game that failed (2 for bad input)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from scripted_guest import final_step, scripted_guest
from tablehost.cli import main

PANIC = b'{"message":"setup exploded on an odd seed","printed":""}'
GAMES = 30  # about half of them panic: well past the pool's quarantine_after (8)


@pytest.fixture
def odd_seed_module(tmp_path: Path) -> Path:
    """A one-move game whose setup panics when its setup seed is odd."""
    path = tmp_path / "odd_seed.wasm"
    path.write_bytes(scripted_guest(step=final_step(), setup_panics_on_odd_seed=PANIC))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_reports_each_games_own_panic_past_the_eighth_failure(
    capsys: pytest.CaptureFixture[str], odd_seed_module: Path
) -> None:
    code, out, _ = run(capsys, "check", str(odd_seed_module), "--games", str(GAMES), "--json")
    report = orjson.loads(out)
    failures = report["failures"]
    assert code == 1 and 8 < len(failures) < GAMES
    assert all("guest/panic: setup exploded on an odd seed" in failure for failure in failures), failures
    assert not any("quarantined" in failure for failure in failures)


def test_simulate_reports_each_games_own_panic_past_the_eighth_failure(
    capsys: pytest.CaptureFixture[str], odd_seed_module: Path
) -> None:
    code, out, _ = run(capsys, "simulate", str(odd_seed_module), "--games", str(GAMES), "--seed", "1", "--json")
    summary = orjson.loads(out)
    errors = [failure["error"] for failure in summary["failures"]]
    assert code == 1 and 8 < len(errors) < GAMES
    assert all(error == "guest/panic: setup exploded on an odd seed" for error in errors), errors
    assert sum(summary["wins"]) + summary["draws"] == GAMES - len(errors)  # the others finished
