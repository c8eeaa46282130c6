"""The local `tablehost` commands, run in-process through cli.main."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from tablehost.cli import main

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
TTT = str(DIST / "tic_tac_toe.wasm")
pytestmark = pytest.mark.skipif(not (DIST / "tic_tac_toe.wasm").exists(), reason="run `make games`")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse and usage errors
        code = exc.code if isinstance(exc.code, int) else 2
        captured = capsys.readouterr()
        return code, captured.out, captured.err + (str(exc.code) if not isinstance(exc.code, int) else "")
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_inspect_reports_the_module(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "inspect", TTT, "--json")
    report = orjson.loads(out)
    assert code == 0 and report["imports"] == [] and "tablehost_call" in report["exports"]
    assert len(report["sha256"]) == 64 and report["budgets"]["wall_ms"] == 250


@pytest.mark.parametrize("game", sorted(p.stem for p in DIST.glob("*.wasm")))
def test_every_record_written_by_play_verifies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, game: str
) -> None:
    players = {"hearts": "4", "dominoes": "3", "spades": "4"}.get(game, "2")
    record = tmp_path / "r.json"
    module = str(DIST / f"{game}.wasm")
    code, out, _ = run(
        capsys, "play", module, "--players", players, "--seed", "5", "--record", str(record), "--quiet"
    )
    assert code == 0 and "game over" in out
    code, out, _ = run(capsys, "replay", str(record), "--verify", "--module", module)
    assert code == 0 and out.startswith("verified")


def test_replay_detects_a_tampered_record(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    record = tmp_path / "r.json"
    run(capsys, "play", TTT, "--seed", "5", "--record", str(record), "--quiet")
    data = orjson.loads(record.read_bytes())
    data["moves"][2]["patches"][0]["kind"] = "tampered"
    record.write_bytes(orjson.dumps(data))
    code, out, _ = run(capsys, "replay", str(record), "--verify", "--module", TTT)
    assert code == 1 and "MISMATCH at version 3" in out


def test_simulate_is_reproducible_whatever_the_workers(capsys: pytest.CaptureFixture[str]) -> None:
    results = []
    for workers in ("1", "2"):
        code, out, _ = run(
            capsys, "simulate", TTT, "--games", "12", "--seed", "7", "--workers", workers, "--json"
        )
        assert code == 0
        summary = orjson.loads(out)
        results.append(
            {k: v for k, v in summary.items() if k not in ("seconds", "moves_per_second", "games_per_second")}
        )
    assert results[0] == results[1]
    assert results[0]["games"] == 12 and results[0]["failures"] == []
    assert sum(results[0]["wins"]) + results[0]["draws"] == 12


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["simulate", TTT, "--workers", "0"], "--workers must be 1 to 64, got 0"),
        (["simulate", TTT, "--games", "0"], "--games must be 1 to 10000000, got 0"),
        (["simulate", "/nonexistent/x.wasm"], "cannot read module"),
        (["play", TTT, "--players", "-3"], "1 to 64 players"),
        (["play", TTT, "--players", "100000000"], "1 to 64 players"),
        (["check", TTT, "--players", "100000000"], "--players must be 1 to 64, got 100000000"),
        (["check", TTT, "--players", "7", "--games", "1"], "this game seats exactly 2 players, not 7"),
        (["create", "m", "--players", "100000000", "--token", "t"], "1 to 64 seats"),
        (["create", "m", "--players", "0", "--token", "t"], "1 to 64 seats"),
        (
            ["create", "m", "--players", "2", "--clock", "inf", "--token", "t"],
            "the time must be > 0",
        ),  # was an OverflowError
        (["create", "m", "--players", "2", "--clock", "10+nan", "--token", "t"], "the time must be > 0"),
        (
            ["create", "m", "--players", "2", "--clock", "1e300", "--token", "t"],
            "at most 31536000 seconds",
        ),  # was protobuf's error
        (["play", TTT, "--record", "/nonexistent/dir/r.json"], "no folder"),
        (["play", TTT, "--bots", "random,nobody"], "unknown bot"),
        (["play", TTT, "--bots", "mcts"], "needs its iterations"),
        (["play", TTT, "--bots", "mcts:0,random"], "whole number from 1 to 10000000"),
        # was a TypeError traceback (orjson: integer exceeds 64-bit range)
        (["play", TTT, "--bots", "mcts:99999999999999999999,random"], "whole number from 1 to 10000000"),
        # was every game failing, one by one, at its setup
        (
            ["simulate", TTT, "--bots", "random", "--games", "3"],
            "this game seats exactly 2 players, not 1 (simulate seats one player per --bots name)",
        ),
        (["play", TTT, "--bots", "ismcts:5,random", "--seed", "1"], "no hidden information to sample: use mcts:5"),
        (["simulate", TTT, "--in-guest", "--bots", "mcts:5,random"], "--in-guest plays only"),
        (["simulate", TTT, "--in-guest", "--batch", "0"], "--batch must be 1 to 4096, got 0"),
    ],
)
def test_bad_input_gets_a_clear_message(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code != 0
    assert message in out + err
    assert "Traceback" not in out + err


def test_check_seats_the_fewest_players_the_module_declares(capsys: pytest.CaptureFixture[str]) -> None:
    # hearts seats exactly 4: the default used to be 2, so the game's setup panicked and check failed
    code, out, _ = run(capsys, "check", str(DIST / "hearts.wasm"), "--games", "1", "--max-plies", "30")
    assert code == 0, out
    assert "1 games of 4 players" in out and "failures: 0" in out


def test_demo_outside_the_repository_says_where_it_looked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # from another folder the demo said "run `make games` first", though the games were built
    code, _, err = run(capsys, "demo", "--dist", str(tmp_path))
    assert code == 2
    assert str(tmp_path.resolve()) in err and "--dist DIR" in err


def test_in_guest_simulate_matches_itself_whatever_the_workers_and_batches(
    capsys: pytest.CaptureFixture[str],
) -> None:
    results = []
    for extra in (["--workers", "1", "--batch", "12"], ["--workers", "2", "--batch", "5"]):
        code, out, _ = run(
            capsys, "simulate", TTT, "--in-guest", "--games", "12", "--seed", "7", "--json", *extra
        )
        assert code == 0
        summary = orjson.loads(out)
        results.append(
            {k: v for k, v in summary.items() if k not in ("seconds", "moves_per_second", "games_per_second")}
        )
    assert results[0] == results[1] and results[0]["games"] == 12 and not results[0]["failures"]


def test_play_with_a_search_bot(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "play", TTT, "--bots", "mcts:200,random", "--seed", "3", "--quiet")
    assert code == 0 and "game over" in out and "winner: random (player 2)" not in out
    assert "winner: mcts:200 (player 1)\n" in out or "draw\n" in out, "a local seat is named by its bot"


def test_a_result_line_names_the_seats_it_has_names_for() -> None:
    from tablehost.cli import describe_result

    won = {"ranks": {"1": 2, "2": 1}, "winners": [2], "ended_by": "normal", "player_id": None}
    assert describe_result(won) == "result: game over; winner: player 2 (player 1 #2, player 2 #1)"
    assert describe_result(won, {1: "ann", 2: "bob"}) == (
        "result: game over; winner: bob (player 2) (player 1 #2, player 2 #1)"
    )
    partners = {"ranks": {"1": 1, "2": 3, "3": 1}, "winners": [1, 3], "ended_by": "timeout", "player_id": 2}
    assert describe_result(partners) == (
        "result: player 2 ran out of time; shared first place: players 1, 3 (player 1 #1, player 2 #3, player 3 #1)"
    )
    assert describe_result(partners, {1: "ann", 2: "bob", 3: ""}) == (
        "result: bob (player 2) ran out of time; shared first place: ann (player 1), player 3 "
        "(player 1 #1, player 2 #3, player 3 #1)"
    ), "a seat without a name stays `player N`"


def test_an_unfinished_play_is_not_called_a_draw(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "play", TTT, "--seed", "1", "--max-plies", "2", "--quiet")
    assert code == 1 and "stopped at the ply cap" in out and "draw" not in out


def test_replay_views_need_a_real_viewer(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    record = tmp_path / "r.json"
    run(capsys, "play", TTT, "--seed", "5", "--record", str(record), "--quiet")
    code, out, err = run(capsys, "replay", str(record), "--at", "3", "--viewer", "7")
    assert code != 0 and "player id (1, 2)" in out + err
    code, out, _ = run(capsys, "replay", str(record), "--at", "3", "--viewer", "spectator")
    assert code == 0 and orjson.loads(out)["spaces"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["setup"].update(seed=2**70), "setup.seed"),
        (lambda r: r["moves"][0].update(seed=-5), "moves[0].seed"),
        (lambda r: r.update(players=[]), "non-empty"),
        (lambda r: r["moves"][1].update(player_id=9), "not one of the players"),
        (lambda r: r.update(setup="x"), "setup must be a JSON object"),
    ],
)
def test_malformed_records_name_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change, message
) -> None:  # type: ignore[no-untyped-def]
    record = tmp_path / "r.json"
    run(capsys, "play", TTT, "--seed", "5", "--record", str(record), "--quiet")
    data = orjson.loads(record.read_bytes())
    change(data)
    record.write_text(json.dumps(data))  # the stdlib writes integers beyond 64 bits
    code, _, err = run(capsys, "replay", str(record), "--verify", "--module", TTT)
    assert code == 2 and message in err


def _record_of(tmp_path: Path, change: Any) -> Path:
    """A tic-tac-toe record of a game played with ``--seed 5``, passed through ``change(data)``."""
    record = tmp_path / "r.json"
    run_quietly = main(["play", TTT, "--seed", "5", "--record", str(record), "--quiet"])
    assert run_quietly == 0
    data = orjson.loads(record.read_bytes())
    change(data)
    record.write_bytes(orjson.dumps(data))
    return record


RESIGNED = {"ranks": {"1": 2, "2": 1}, "winners": [2], "ended_by": "resigned", "player_id": 1}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        # the result claims a resignation that no ending event records
        (lambda r: r.update(result=RESIGNED), "and it has no ending)"),
        # the last move is gone, but the result still claims the game ended
        (lambda r: r["moves"].pop(), "the replayed match has not ended: the game is not over after its 6 events"),
        # ranks no scores give
        (lambda r: r["result"]["ranks"].update({"1": 1, "2": 1}), "the result differs: replay ranks"),
    ],
)
def test_replay_verify_compares_the_records_result_with_the_replayed_game(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change: Any, said: str
) -> None:
    record = _record_of(tmp_path, change)
    capsys.readouterr()
    version = len(orjson.loads(record.read_bytes())["moves"])
    code, out, _ = run(capsys, "replay", str(record), "--verify", "--module", TTT)
    assert code == 1 and f"MISMATCH at version {version}: " in out and said in out, out


def test_replay_verify_says_it_checked_the_result(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    record = _record_of(tmp_path, lambda r: None)
    capsys.readouterr()
    code, out, _ = run(capsys, "replay", str(record), "--verify", "--module", TTT)
    assert code == 0 and "verified: the replayed game gives the record's result: game over" in out


def _ended_record(ended_by: str, player_id: int | None) -> dict[str, Any]:
    """A tic-tac-toe record of two moves, then ended as the server ends a match."""
    from tablehost.cli import local_pool
    from tablehost.module import load_module
    from tablehost.selfplay import play_game

    module = load_module(Path(TTT).read_bytes())
    pool = local_pool(module, module.limits)
    try:
        match = play_game(pool, ["random", "random"], 5, max_plies=2, module_sha256=module.sha256).match
        if ended_by == "resigned":
            match.resign(player_id)  # type: ignore[arg-type]
        else:
            match.end(ended_by, player_id)
        return orjson.loads(orjson.dumps(match.record()))  # type: ignore[no-any-return]
    finally:
        pool.close()


def _verify(capsys: pytest.CaptureFixture[str], tmp_path: Path, record: dict[str, Any]) -> tuple[int, str]:
    path = tmp_path / "ended.json"
    path.write_bytes(orjson.dumps(record))
    code, out, err = run(capsys, "replay", str(path), "--verify", "--module", TTT)
    return code, out + err


@pytest.mark.parametrize(("ended_by", "player_id"), [("resigned", 1), ("timeout", 2), ("aborted", None)])
def test_a_record_that_ended_early_verifies_and_its_ending_is_checked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, ended_by: str, player_id: int | None
) -> None:
    record = _ended_record(ended_by, player_id)
    assert record["result"]["ended_by"] == ended_by and record["ending"]["seq"] == 3
    code, said = _verify(capsys, tmp_path, record)
    assert code == 0 and "verified: setup and 3 events" in said, said

    without_ending = {k: v for k, v in record.items() if k != "ending"}  # the result alone claims the end
    code, said = _verify(capsys, tmp_path, without_ending)
    assert code == 1 and "MISMATCH at version 2: the record has a result" in said and "has not ended" in said, said

    if ended_by != "aborted":  # the result names another seat than the ending
        other = {**record, "result": {**record["result"], "player_id": 3 - player_id}}  # type: ignore[operator]
        code, said = _verify(capsys, tmp_path, other)
        assert code == 1 and "MISMATCH at version 3: the result differs" in said, said


def test_an_ending_after_game_over_is_a_mismatch(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    def resign_after_the_end(data: dict[str, Any]) -> None:
        data["ending"] = {"seq": len(data["moves"]) + 1, "ended_by": "resigned", "player_id": 1, "at": "x"}

    record = _record_of(tmp_path, resign_after_the_end)
    capsys.readouterr()
    code, out, _ = run(capsys, "replay", str(record), "--verify", "--module", TTT)
    assert code == 1 and "the record ends the match early, but replay found the game over already" in out, out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(result={"ranks": {"7": 1}, "winners": [], "ended_by": "normal"}), "result.ranks names a seat"),
        (lambda r: r.update(result={**r["result"], "ended_by": "gave up"}), "result.ended_by 'gave up'"),
        (lambda r: r.update(ending={"seq": 10, "ended_by": "timeout", "player_id": 9}), "ending.player_id"),
    ],
)
def test_a_malformed_result_or_ending_names_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change: Any, message: str
) -> None:
    record = _record_of(tmp_path, change)
    capsys.readouterr()
    code, _, err = run(capsys, "replay", str(record), "--verify", "--module", TTT)
    assert code == 2 and message in err, err


HEARTS = str(DIST / "hearts.wasm")


@pytest.mark.parametrize("bots", [["--bots", "random,random,random,random"], []])
def test_play_seats_one_player_per_bot_or_the_fewest_the_game_declares(
    capsys: pytest.CaptureFixture[str], bots: list[str]
) -> None:
    # without --players, play assumed 2: "4 bots given for 2 players", and hearts seats exactly 4
    code, out, err = run(capsys, "play", HEARTS, *bots, "--seed", "2", "--max-plies", "3", "--quiet")
    assert code == 1 and "stopped at the ply cap" in out and "player 4 (random)" in out, out + err


def test_play_names_the_seats_its_bots_count_when_the_game_does_not_take_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "play", HEARTS, "--bots", "random,random", "--seed", "2")
    assert code == 2 and out == ""
    assert "this game seats exactly 4 players, not 2 (play seats one player per --bots name" in err


def test_play_refuses_a_record_path_that_is_a_folder_before_the_game(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # the whole game was played, then: "cannot write the record /tmp: Is a directory"
    code, out, err = run(capsys, "play", TTT, "--record", str(tmp_path), "--seed", "5")
    assert code == 2 and out == "" and f"cannot write the record {tmp_path}: it is a folder" in err
