"""The local commands (``check``, ``simulate``, ``play``) report each game's own outcome: no
quarantine, non-default ``--option`` values, exit 1 for a game that failed (2 for bad input);
``play --record`` of a failed game records it, failure included, and ``replay`` re-runs it."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

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
        ("misere=maybe", "setup/invalid: option 'misere' must be true or false, not \"maybe\""),
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


# --- A failed game's record, and what the game printed ---------------------------------------

HOSTILE_TEXT = "\x1b[2J\x1b]0;pwned\x07\u202e"
"""What a hostile module writes to take over a terminal: clear the screen, retitle the window,
reverse the line."""
FAILED_MOVE = b'"player_id":2,"action"'  # what only player 2's step requests hold


def _mid_game_failure() -> bytes:
    """The scripted game (player 1 clicks ``a``, then player 2 ``b``) whose player-2 step panics,
    with terminal escapes in the panic message and in what every call printed."""
    from scripted_guest import SETUP, STEP, answer

    report = orjson.dumps(
        {"message": f"player 2 broke the rules {HOSTILE_TEXT}", "printed": f"thinking\n{HOSTILE_TEXT}about b\n"}
    )
    return scripted_guest(
        setup=answer(SETUP, printed=f"dealt {HOSTILE_TEXT}\n"),
        step=answer(STEP, printed=f"marked a {HOSTILE_TEXT}\n"),
        step_panics=report,
        step_panics_when=FAILED_MOVE,
    )


@pytest.fixture
def mid_game_failure(tmp_path: Path) -> Path:
    path = tmp_path / "mid_game.wasm"
    path.write_bytes(_mid_game_failure())
    return path


def _no_terminal_control(text: str) -> bool:
    return not any(ch in text for ch in "\x1b\x07\u202e")


def test_play_records_the_moves_before_a_failure_and_the_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, mid_game_failure: Path
) -> None:
    record = tmp_path / "failed.json"
    status, out, err = run(capsys, "play", str(mid_game_failure), "--seed", "5", "--record", str(record))

    assert status == 1
    assert out.endswith(f"record of the 1 move before the failure, and the failure, written to {record}\n")
    assert "tablehost: the game failed (seed 5; --seed 5 replays it): guest/panic: player 2 broke the rules" in err
    assert "(step of player 2's move at version 1)" in err
    assert "  | thinking\n  | \\e[2J\\e]0;pwned\\x07\\u202eabout b\n" in err  # what it printed, escaped
    assert _no_terminal_control(out + err)
    data = orjson.loads(record.read_bytes())
    assert [move["player_id"] for move in data["moves"]] == [1] and "ending" not in data and "result" not in data
    failure = data["failure"]
    assert {key: failure[key] for key in ("version", "code", "op", "budget")} == {
        "version": 1, "code": "guest/panic", "op": "step", "budget": None
    }
    assert failure["message"] == f"player 2 broke the rules {HOSTILE_TEXT}"  # the record keeps it as it was
    assert failure["printed"] == f"thinking\n{HOSTILE_TEXT}about b\n"
    assert failure["move"]["player_id"] == 2 and failure["move"]["action"] == {"type": "space_click", "space_id": "b"}

    status, out, _ = run(capsys, "replay", str(record))
    assert status == 0 and "  moves: 1 (0 undone)\n" in out and _no_terminal_control(out)
    assert "  failed: guest/panic: player 2 broke the rules \\e[2J" in out and "    | thinking\n" in out

    status, out, _ = run(capsys, "replay", str(record), "--verify", "--module", str(mid_game_failure))
    assert status == 0 and out.startswith("verified: setup and 1 events reproduced exactly")
    assert "verified: the failure happened again: guest/panic: player 2 broke the rules" in out
    assert _no_terminal_control(out)


def test_replay_verify_says_when_the_recorded_failure_does_not_happen_again(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, mid_game_failure: Path
) -> None:
    record = tmp_path / "failed.json"
    run(capsys, "play", str(mid_game_failure), "--seed", "5", "--record", str(record), "--quiet")
    data = orjson.loads(record.read_bytes())
    data["failure"]["message"] = "something else"
    record.write_bytes(orjson.dumps(data))

    status, out, _ = run(capsys, "replay", str(record), "--verify", "--module", str(mid_game_failure))
    assert status == 1 and out.startswith("MISMATCH at version 2: the move that failed at version 1 failed differently")
    assert "recorded guest/panic 'something else', replay guest/panic 'player 2 broke the rules" in out


@pytest.mark.parametrize(
    ("failure", "change", "message"),
    [
        ("version", lambda f: f.update(version=0), "failure.version 0 is not the record's version 1"),
        ("seat", lambda f: f["move"].update(player_id=9), "failure.move.player_id 9 is not one of the players [1, 2]"),
        ("seed", lambda f: f["move"].update(seed=-1), "failure.move.seed -1 is not a 64-bit unsigned seed"),
        ("code", lambda f: f.pop("code"), "the record lacks failure.code"),
    ],
)
def test_replay_refuses_a_malformed_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, mid_game_failure: Path, failure: str, change: Any, message: str
) -> None:
    record = tmp_path / "failed.json"
    run(capsys, "play", str(mid_game_failure), "--seed", "5", "--record", str(record), "--quiet")
    data = orjson.loads(record.read_bytes())
    change(data["failure"])
    record.write_bytes(orjson.dumps(data))

    status, out, err = run(capsys, "replay", str(record))
    assert status == 2 and out == "" and f"record/invalid: {message}" in err


@pytest.mark.parametrize(
    ("fails", "code"),
    [("hostile_panic", "guest/panic"), ("hostile_loop", "guest/budget"), ("hostile_trap", "guest/trap")],
)
def test_the_record_of_a_failed_first_move_verifies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fails: str, code: str
) -> None:
    module, record = tmp_path / "failing.wasm", tmp_path / "failed.json"
    module.write_bytes(_game_that(fails))
    status, out, _ = run(capsys, "play", str(module), "--seed", "5", "--quiet", "--fuel", "2000000", "--record", str(record))
    assert status == 1 and f"written to {record}" in out
    failure = orjson.loads(record.read_bytes())["failure"]
    assert (failure["version"], failure["code"], failure["move"]["player_id"]) == (0, code, 1)

    status, out, _ = run(capsys, "replay", str(record), "--verify", "--module", str(module), "--fuel", "2000000")
    assert status == 0 and f"verified: the failure happened again: {code}: " in out


def test_a_setup_that_fails_writes_no_record_and_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    module, record = tmp_path / "stuck.wasm", tmp_path / "r.json"
    module.write_bytes(_game_that("stuck"))
    status, out, err = run(capsys, "play", str(module), "--seed", "5", "--record", str(record))
    assert status == 1 and not record.exists()
    assert out == f"no record written to {record}: the game failed at setup, so there is no match to record\n"
    assert "match/stuck: " in err and err.rstrip().endswith("(at setup)")


def test_a_failed_search_is_recorded_and_not_re_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The bot's search answers garbage: the failure is outside any move, so replay verifies the
    moves before it and says it could not re-run the search."""
    metadata = {"metadata": {"min_players": 2, "max_players": 2, "hidden_information": False}}
    module, record = tmp_path / "search.wasm", tmp_path / "r.json"
    module.write_bytes(scripted_guest(more={6: metadata, 8: b"\xff not json"}))
    status, _, err = run(capsys, "play", str(module), "--bots", "mcts:5,random", "--seed", "3", "--record", str(record))
    assert status == 1 and "guest/protocol: guest search answered with invalid JSON" in err
    failure = orjson.loads(record.read_bytes())["failure"]
    assert (failure["op"], failure["move"], failure["version"]) == ("search", None, 0)

    status, out, _ = run(capsys, "replay", str(record), "--verify", "--module", str(module))
    assert status == 0 and "note: the failure (guest/protocol: " in out and "was not re-run" in out


def test_play_shows_what_the_game_printed_with_show_guest_output(
    capsys: pytest.CaptureFixture[str], mid_game_failure: Path
) -> None:
    status, out, _ = run(capsys, "play", str(mid_game_failure), "--seed", "5")
    assert status == 1 and "printed:" not in out  # without the flag, only the failure's output

    status, out, _ = run(capsys, "play", str(mid_game_failure), "--seed", "5", "--show-guest-output")
    lines = out.splitlines()
    assert lines[:3] == [
        "   0  printed: dealt \\e[2J\\e]0;pwned\\x07\\u202e",
        "   1  player 1  space a",
        "   1  printed: marked a \\e[2J\\e]0;pwned\\x07\\u202e",
    ]
    assert _no_terminal_control(out)
    status, out, _ = run(capsys, "play", str(mid_game_failure), "--seed", "5", "--show-guest-output", "--quiet")
    assert out.splitlines()[:2] == [
        "   0  printed: dealt \\e[2J\\e]0;pwned\\x07\\u202e", "   1  printed: marked a \\e[2J\\e]0;pwned\\x07\\u202e"
    ]


def test_play_shows_what_a_refused_answer_printed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The gate refuses the step's answer (a patch on a space that does not exist): what the
    answer printed comes with the refusal."""
    from scripted_guest import STEP, answer

    bad = {"op": "set_space_public_state", "space_id": "nowhere", "key": "x", "value": 1}
    module = tmp_path / "refused.wasm"
    module.write_bytes(scripted_guest(step=answer(STEP, patches=[bad], printed=f"about to cheat {HOSTILE_TEXT}\n")))
    status, _, err = run(capsys, "play", str(module), "--seed", "5")
    assert status == 1 and "guest/protocol: guest step answer refused at step.patches[0]" in err
    assert "  | about to cheat \\e[2J\\e]0;pwned\\x07\\u202e\n" in err and _no_terminal_control(err)


# ---------------------------------------------------------------- simulate: Ctrl-C, progress, empty summaries


@needs_ttt
def test_an_interrupt_terminates_the_worker_processes_at_once() -> None:
    """Ctrl-C in the parent while its workers play: the workers are terminated, not waited for
    (shutdown alone let every running game finish: 49 s of ismcts on hearts)."""
    import multiprocessing
    import signal
    import time

    from tablehost.limits import DEFAULT_LIMITS
    from tablehost.simulate import _batches, _run_in_processes

    batches = _batches(["random", "random"], 1, 8, 100, False, 1)
    workers: list[multiprocessing.process.BaseProcess] = []

    def interrupted_after_two() -> Any:
        yield next(batches)
        yield next(batches)
        workers.extend(multiprocessing.active_children())  # the pool's processes, busy with those two
        raise KeyboardInterrupt  # as Ctrl-C in the parent while it hands out work

    stream = _run_in_processes(Path(TTT).read_bytes(), "tic_tac_toe", DEFAULT_LIMITS, interrupted_after_two(), 2)
    with pytest.raises(KeyboardInterrupt):
        list(stream)
    assert workers
    for process in workers:
        process.join()
        while process.exitcode is None:  # the executor's own thread reaped it: its status lands soon
            time.sleep(0.01)
        assert process.exitcode == -signal.SIGTERM, "a worker finished its game instead of being stopped"


def _outcomes_then_ctrl_c(*args: Any, **kwargs: Any) -> Any:
    from tablehost.simulate import GameOutcome

    yield GameOutcome(0, 11, plies=5, winners=[0], ranks=[1, 2], finished=True)
    yield GameOutcome(1, 12, plies=7, winners=[1], ranks=[2, 1], finished=True)
    raise KeyboardInterrupt


@needs_ttt
def test_ctrl_c_prints_the_summary_of_the_games_that_ended_and_exits_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tablehost import simulate

    monkeypatch.setattr(simulate, "run_games", _outcomes_then_ctrl_c)
    code, out, _ = run(capsys, "simulate", TTT, "--games", "5", "--seed", "3")
    assert code == 130 and "2 games, bots random,random, seed 3 (interrupted: 2 of 5 games ended)" in out
    assert "seat 1 (random): 1 wins" in out and "plies: mean 6" in out, out
    code, out, _ = run(capsys, "simulate", TTT, "--games", "5", "--seed", "3", "--json")
    summary = orjson.loads(out)
    assert code == 130 and (summary["interrupted"], summary["games"], summary["games_requested"]) == (True, 2, 5)


@needs_ttt
def test_a_simulation_where_no_game_finished_has_no_means(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", TTT, "--games", "3", "--seed", "1", "--max-plies", "1"]  # every game cut off
    code, out, _ = run(capsys, *argv, "--json")
    summary = orjson.loads(out)
    assert code == 1 and len(summary["failures"]) == 3
    assert (summary["mean_ranks"], summary["plies_mean"], summary["plies_median"], summary["plies_max"]) == (
        [None, None], None, None, None,
    ), "0.0 read as a mean rank and a ply count that were never measured"
    assert summary["games_requested"] == 3 and summary["interrupted"] is False
    code, out, _ = run(capsys, *argv)
    assert code == 1 and "  no game finished: no mean ranks or plies\n" in out and "mean rank per seat" not in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_line_per_interval_off_a_terminal() -> None:
    from tablehost.progress import PLAIN_INTERVAL_S, ProgressReport

    now = [100.0]
    stream = io.StringIO()
    report = ProgressReport("reversi", 40, stream, clock=lambda: now[0])
    assert report.interval_s == PLAIN_INTERVAL_S == 10.0
    report.advance(3)
    now[0] += 12.4
    report.tick()
    assert stream.getvalue() == "reversi: 3/40 games, 12 s\n"


def test_progress_on_a_terminal_redraws_one_line() -> None:
    from tablehost.progress import TERMINAL_INTERVAL_S, ProgressReport

    stream = _Terminal()
    with ProgressReport("reversi", 40, stream, interval_s=3600) as report:  # no tick of its own here
        assert report.interval_s != TERMINAL_INTERVAL_S and ProgressReport("x", 1, _Terminal()).interval_s == 1.0
        report.advance(3)
        report.tick()
    shown = stream.getvalue()
    assert "3/40" in shown and "\n" not in shown.rstrip("\n") and "\r" in shown


@needs_ttt
def test_simulate_shows_progress_on_a_terminal_and_keeps_json_on_stdout(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code = main(["simulate", TTT, "--games", "6", "--seed", "2", "--json"])
    summary = orjson.loads(capsys.readouterr().out)  # nothing but the JSON
    assert code == 0 and summary["games"] == 6
    assert "6/6" in terminal.getvalue()


# ---------------------------------------------------------------- bench scripts, run as a user would

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench(tmp_path: Path, script: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run ``bench/SCRIPT`` from ``tmp_path`` (not the repository's root)."""
    from test_e2e_server import _env

    return subprocess.run(
        [sys.executable, str(BENCH / script), *argv], cwd=tmp_path, env=_env(), capture_output=True, text=True,
        timeout=600, check=False,
    )


@needs_ttt
def test_search_strength_takes_the_sample_game_names(tmp_path: Path) -> None:
    # `search_strength.py tic_tac_toe` was a KeyError traceback: the rows were named ttt, ...
    ran = _bench(tmp_path, "search_strength.py", "--games", "1", "--no-fuel-check", "tic_tac_toe")
    assert ran.returncode == 0 and "'game': 'tic_tac_toe'" in ran.stdout, ran.stderr
    unknown = _bench(tmp_path, "search_strength.py", "--no-fuel-check", "chess")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert "unknown game 'chess': choose from tic_tac_toe, reversi, checkers, dominoes, hearts" in unknown.stderr
    assert "tic_tac_toe, reversi, checkers" in _bench(tmp_path, "search_strength.py", "--help").stdout


def test_watch_bytes_says_when_it_cannot_read_the_module(tmp_path: Path) -> None:
    ran = _bench(tmp_path, "watch_bytes.py", "--module", str(tmp_path / "none.wasm"))
    assert ran.returncode == 2 and "Traceback" not in ran.stderr and "cannot read the module" in ran.stderr


@pytest.mark.slow
def test_watch_bytes_finds_its_default_module_from_any_folder(tmp_path: Path) -> None:
    # FileNotFoundError: 'sample_games/dist/hearts.wasm' outside the repository's root
    ran = _bench(tmp_path, "watch_bytes.py")
    assert ran.returncode == 0 and ran.stdout.startswith("hearts: "), ran.stderr[-2000:]
