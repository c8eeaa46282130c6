"""``tablehost check``: determinism in fresh instances, leaks and budget use per op (issue 9)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from fixtures_guest import cache_dir, guest_wasm, load_guest  # noqa: F401  (cache_dir is a fixture)
from tablehost.conformance import check_module, first_difference
from tablehost.module import load_module

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "sample_games" / "dist"
SEATS = {"tic_tac_toe": 2, "reversi": 2, "checkers": 2, "dominoes": 3, "hearts": 4}


def test_a_module_whose_answers_follow_its_call_history_is_flagged(cache_dir: Path) -> None:  # noqa: F811
    report = check_module(load_guest("hostile_history", cache_dir), games=2, seed=3, max_plies=10)

    assert not report.ok and report.difference_count > 0
    first = report.differences[0]
    assert (first.game, first.op, first.path) == (0, "step", "allow_undo")
    assert (first.played, first.fresh) == ("false", "true")


def test_a_module_that_publishes_a_hidden_card_is_flagged(cache_dir: Path) -> None:  # noqa: F811
    report = check_module(load_guest("hostile_leaky_view", cache_dir), games=1, seed=1)

    assert report.difference_count == 0 and not report.failures
    assert {leak.viewer for leak in report.leaks} == {None, 1}  # player 2 holds the card
    assert all(leak.kinds == ["queen_of_spades"] for leak in report.leaks)


def test_first_difference_names_the_path() -> None:
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == ("a[1].b", "2", "3")
    assert first_difference({"a": 1}, {"a": 1.0}) == ("a", "1", "1.0")
    assert first_difference([1], [1, 2]) == (".length", "1", "2")
    assert first_difference({"x": True}, {"x": True}) is None


@pytest.mark.parametrize("name", sorted(SEATS))
def test_every_sample_game_passes_check_with_no_difference(name: str) -> None:
    path = DIST / f"{name}.wasm"
    if not path.exists():
        pytest.skip(f"{path} is not built (make games)")
    report = check_module(load_module(path.read_bytes(), name=name), games=1, seed=11, players=SEATS[name])
    assert report.ok, (report.differences[:3], report.leaks[:3], report.failures)
    assert report.calls > 1 and report.budgets["step"].calls > 0


def test_the_check_command_prints_the_report_and_fails_on_a_difference(tmp_path: Path) -> None:
    module = tmp_path / "history.wasm"
    module.write_bytes(guest_wasm("hostile_history"))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "runtime"), "TABLEHOST_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-m", "tablehost", "check", str(module), "--games", "1", "--max-plies", "4", "--json"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert run.returncode == 1, run.stderr
    report = orjson.loads(run.stdout)
    assert report["ok"] is False and report["differences"][0]["path"] == "allow_undo"
    assert set(report["budgets"]) >= {"setup", "step"}
