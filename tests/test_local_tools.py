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


DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
TTT = str(DIST / "tic_tac_toe.wasm")
needs_ttt = pytest.mark.skipif(not Path(TTT).exists(), reason="run `make games`")


@needs_ttt
def test_simulate_plays_every_game_with_the_options_given(capsys: pytest.CaptureFixture[str]) -> None:
    """Misère tic-tac-toe: the same seeds play the same moves, and whoever completes a line loses,
    so the seats' wins swap (on 2 workers too: the options travel with each batch)."""
    argv = ["simulate", TTT, "--games", "40", "--seed", "3", "--json"]
    code, out, _ = run(capsys, *argv)
    normal = orjson.loads(out)
    code_misere, out, _ = run(capsys, *argv, "--option", "misere=true", "--workers", "2")
    misere = orjson.loads(out)

    assert code == code_misere == 0 and normal["wins"][0] != normal["wins"][1]
    assert misere["wins"] == normal["wins"][::-1] and misere["draws"] == normal["draws"]
    assert (normal["options"], misere["options"]) == ({}, {"misere": True})


@needs_ttt
def test_check_plays_every_game_with_the_options_given(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tablehost import conformance

    played: list[object] = []
    real = conformance.play_game

    def recording(*args: object, **kwargs: object) -> object:
        played.append(kwargs.get("options"))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(conformance, "play_game", recording)
    code, out, _ = run(capsys, "check", TTT, "--games", "2", "--option", "misere=true", "--json")
    report = orjson.loads(out)

    assert code == 0 and report["ok"] and report["failures"] == []
    assert report["options"] == {"misere": True} and played == [{"misere": True}] * 2
    code, out, _ = run(capsys, "check", TTT, "--games", "1", "--option", "misere=true")
    assert code == 0 and "  options: misere=true\n" in out


@needs_ttt
@pytest.mark.parametrize("command", ["check", "simulate", "play"])
@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("misere=maybe", "setup/invalid: option 'misere' must be true or false, not maybe"),
        ("nope=1", "setup/invalid: unknown option 'nope' (this game's options: misere)"),
        ("misere", "--option 'misere' is not KEY=VALUE"),
    ],
)
def test_an_option_the_module_does_not_declare_is_refused_before_any_game(
    capsys: pytest.CaptureFixture[str], command: str, option: str, message: str
) -> None:
    code, out, err = run(capsys, command, TTT, "--games" if command != "play" else "--seed", "1", "--option", option)
    assert code == 2 and message in err and out == ""


@needs_ttt
def test_in_guest_simulate_refuses_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "simulate", TTT, "--in-guest", "--games", "2", "--option", "misere=true")
    assert code == 2 and "--in-guest sets every game up with the default options" in err and out == ""


def _game_that(fails: str) -> bytes:
    from fixtures_guest import guest_wasm, offering_guest_wasm

    if fails == "stuck":
        return guest_wasm(None)  # its setup offers nobody anything, and the game is not over
    return offering_guest_wasm(fails)  # seat 1 is offered a move, whose step misbehaves


@pytest.mark.parametrize(
    ("fails", "code"),
    [("hostile_panic", "guest/panic"), ("hostile_loop", "guest/budget"), ("hostile_trap", "guest/trap"),
     ("stuck", "match/stuck")],
)
def test_play_exits_1_for_a_game_that_failed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fails: str, code: str
) -> None:
    module = tmp_path / "failing.wasm"
    module.write_bytes(_game_that(fails))
    status, _, err = run(capsys, "play", str(module), "--seed", "5", "--quiet", "--fuel", "2000000")
    assert status == 1, err
    assert f"tablehost: the game failed (seed 5; --seed 5 replays it): {code}: " in err


def test_play_exits_1_for_a_setup_that_panics(capsys: pytest.CaptureFixture[str], odd_seed_module: Path) -> None:
    statuses = {run(capsys, "play", str(odd_seed_module), "--seed", str(seed), "--quiet")[0] for seed in range(8)}
    assert statuses == {0, 1}  # the seeds whose setup seed is odd fail, the others finish


@needs_ttt
def test_play_still_exits_2_for_a_refused_setup(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "play", TTT, "--players", "3", "--quiet")
    assert code == 2 and "setup/invalid: this game seats exactly 2 players, not 3" in err
