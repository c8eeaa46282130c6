"""The server commands of ``tablehost`` as a user meets them: clear refusals, never a traceback.

Each test runs real ``tablehost`` processes (a server from test_e2e_server.ServerProcess).
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tablehost.cli_remote import run_bots
from tablehost.client import TablehostClient
from test_e2e_server import ServerProcess, _env, cli, module_path

pytestmark = pytest.mark.e2e


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path / "data")
    yield process
    if process.proc.poll() is None:
        assert process.stop() == 0


def refused_cleanly(result: subprocess.CompletedProcess[str], *phrases: str) -> None:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    for phrase in phrases:
        assert phrase in result.stderr, result.stderr


def test_serve_refuses_what_it_cannot_use_with_one_line(server: ServerProcess, tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    fresh = str(tmp_path / "fresh")
    refused_cleanly(cli("serve", "--listen", "127.0.0.1:99999", "--data", fresh), "0 to 65535, got 99999")
    refused_cleanly(cli("serve", "--listen", "garbage", "--data", fresh), "is not host:port")
    for http in ("127.0.0.1:99999", "127.0.0.1"):  # checked before the store opens: one line, no log
        bad_http = cli("serve", "--listen", "127.0.0.1:0", "--http", http, "--data", fresh)
        assert bad_http.returncode == 2 and len(bad_http.stderr.splitlines()) == 1, bad_http.stderr
    refused_cleanly(cli("serve", "--listen", "127.0.0.1:0", "--data", str(a_file)), "cannot use", "a-file")
    refused_cleanly(
        cli("serve", "--listen", "127.0.0.1:0", "--data", str(server.data_dir)),
        "in use by another tablehost server",
        str(server.data_dir.resolve()),
        "pass another --data DIR",
    )
    in_use_by_store = cli(
        "serve", "--listen", "127.0.0.1:0", "--store", f"sqlite:{server.data_dir}", "--data", fresh
    )
    refused_cleanly(in_use_by_store, "(from --store)", "pass another --store sqlite:DIR")
    assert "--data DIR" not in in_use_by_store.stderr  # the option the user did not use is not suggested
    refused_cleanly(
        cli("serve", "--listen", server.address, "--data", fresh), f"cannot listen on {server.address}"
    )
    refused_cleanly(cli("view", "m-1", "--address", "127.0.0.1:99999", token="x"), "1 to 65535, got 99999")
    metrics_taken = cli(
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--metrics-port",
        server.address.rsplit(":", 1)[1],
        "--data",
        str(tmp_path / "new" / "data"),
    )
    refused_cleanly(metrics_taken, "cannot serve metrics")
    assert metrics_taken.returncode == 2
    refused_cleanly(
        cli("serve", "--listen", "127.0.0.1:0", "--processes", "0", "--data", fresh),
        "--processes must be 1 to 64",
    )
    bad_store = cli("serve", "--listen", "127.0.0.1:0", "--store", "bogus://x", "--data", fresh)
    refused_cleanly(bad_store, "give sqlite:DIR")
    # A start that was refused leaves no folder it created behind (nor any of their parents).
    assert not Path(fresh).exists() and not (tmp_path / "new").exists()
    assert a_file.exists() and server.data_dir.exists(), "what was there before stays"


def test_a_taken_port_is_told_in_our_words_only(tmp_path: Path) -> None:
    """grpc's C core logs its own failed bind on standard error (``add_port.cc``) and the
    registry logged its store's close; the user sees our one line only."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = f"127.0.0.1:{holder.getsockname()[1]}"
        for flags, phrase in (
            (("--listen", taken), f"tablehost: cannot listen on {taken}: the port is taken"),
            (("--listen", "127.0.0.1:0", "--http", taken), f"tablehost: cannot listen on {taken} for HTTP"),
            (
                ("--listen", "127.0.0.1:0", "--metrics-port", taken.rsplit(":", 1)[1]),
                f"tablehost: cannot serve metrics on {taken}",
            ),
        ):
            result = cli("serve", *flags, "--data", str(tmp_path / "data"))
            assert result.returncode == 2, result.stderr
            lines = result.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith(phrase), result.stderr
            assert not (tmp_path / "data").exists()


def test_a_reader_that_goes_away_is_no_error(server: ServerProcess) -> None:
    with server.client() as admin:
        module_id = admin.upload_module(module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")["module_id"]
        match_id = admin.create_match(module_id, ["ann", "bob"])["match_id"]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tablehost",
            "view",
            match_id,
            "--address",
            server.address,
            "--token",
            server.admin_token,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like `| head -0`: nobody reads
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(30) == 0 and "Traceback" not in stderr, stderr


def test_bots_help_offers_a_timeout_and_no_token_options_it_would_ignore(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tablehost.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["bots", "--help"])
    text = capsys.readouterr().out
    assert "--tokens" in text and "--timeout" in text
    assert "--token " not in text and "--token-file" not in text


def test_act_says_why_a_token_cannot_act_and_record_feeds_replay(
    server: ServerProcess, tmp_path: Path
) -> None:
    with server.client() as admin:
        module_id = admin.upload_module(module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")["module_id"]
        created = admin.create_match(module_id, ["ann", "bob"])
    match_id, address = created["match_id"], ("--address", server.address)
    seat1, seat2 = (s["token"] for s in created["seats"])
    refused_cleanly(
        cli("act", match_id, "0", *address, token=seat2),
        "not your turn: you are seat 2; waiting for seat 1 (ann)",
    )
    refused_cleanly(cli("act", match_id, "0", *address, token=created["spectator_token"]), "spectator")
    run_bots(server.address, match_id, [seat1, seat2], seed=5)
    refused_cleanly(cli("act", match_id, "0", *address, token=seat1), "the game is over")

    record_file = tmp_path / "match.json"
    fetched = cli("record", match_id, "--output", str(record_file), *address, token=seat1)
    assert fetched.returncode == 0 and "written to" in fetched.stdout, fetched.stderr
    verified = cli("replay", str(record_file), "--verify", "--module", str(module_path("tic_tac_toe")))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_create_open_with_fewer_names_seats_them_and_act_says_the_match_waits(server: ServerProcess) -> None:
    """`create --players 3 --usernames ann --open` was refused (`give one per seat`); on the
    waiting match `act M 0` said `not your turn: you are seat 1; waiting for nobody` and `view`
    said `viewing as player 1 (?)`."""
    with server.client() as admin:
        module_id = admin.upload_module(module_path("dominoes").read_bytes(), "dominoes")["module_id"]
    address, admin_token = ("--address", server.address), server.admin_token
    made = cli("create", module_id, "--players", "3", "--usernames", "ann", "--open", "--json", *address,
               token=admin_token)
    assert made.returncode == 0, made.stderr
    created = orjson.loads(made.stdout)
    assert created["open_seats"] == [2, 3]
    assert [(s["player_id"], s["username"]) for s in created["seats"]] == [(1, "ann")]
    match_id, ann = created["match_id"], created["seats"][0]["token"]
    refused_cleanly(
        cli("act", match_id, "0", *address, token=ann),
        "the match waits for players to join: open seats 2, 3 (tablehost join)",
    )
    refused_cleanly(cli("act", match_id, "undo", *address, token=ann), "match/waiting", "waits for 2 open seats (2, 3)")
    shown = cli("view", match_id, *address, token=ann)
    assert shown.returncode == 0, shown.stderr
    assert "viewing as player 1 (ann)  waiting for players: open seats 2, 3" in shown.stdout, shown.stdout
    with_bot = ("create", module_id, "--players", "3", "--usernames", "ann", "--open", *address)
    seated = cli(*with_bot, "--bot", "3=random", "--json", token=admin_token)  # ann on 1, 2 open, 3 the bot's
    assert seated.returncode == 0, seated.stderr
    assert orjson.loads(seated.stdout)["open_seats"] == [2]
    clash = cli(*with_bot, "--bot", "1=random", token=admin_token)  # ann on the bot's seat, or on seat 2?
    assert clash.returncode == 2
    refused_cleanly(clash, "with --open a shorter list names the first seats, and seat 1 is a bot's")
    short = cli("create", module_id, "--players", "3", "--usernames", "ann", *address, token=admin_token)
    assert short.returncode == 2
    refused_cleanly(short, "give one per seat", "ann,,", "add --open to leave the rest open")


def test_bots_play_a_server_match_with_a_search_bot(server: ServerProcess) -> None:
    with server.client() as admin:
        module_id = admin.upload_module(module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")["module_id"]
        created = admin.create_match(module_id, ["ann", "bob"])
    match_id, address = created["match_id"], ("--address", server.address)
    tokens = ",".join(s["token"] for s in created["seats"])
    refused_cleanly(
        cli("bots", "--match", match_id, "--tokens", tokens, "--bots", "mcts:50", *address), "--module"
    )
    other_game = cli(
        "bots", "--match", match_id, "--tokens", tokens, "--bots", "mcts:50,random",
        "--module", str(module_path("reversi")), *address,
    )
    refused_cleanly(other_game, f"match {match_id} plays module tic_tac_toe", "reversi.wasm is sha256")
    assert other_game.returncode == 2
    with server.client(created["seats"][0]["token"]) as seat:
        assert seat.view(match_id)["version"] == 0  # nothing was played
    played = cli(
        "bots",
        "--match",
        match_id,
        "--tokens",
        tokens,
        "--bots",
        "mcts:300,random",
        "--module",
        str(module_path("tic_tac_toe")),
        "--seed",
        "1",
        "--json",
        *address,
    )
    assert played.returncode == 0, played.stderr
    final = orjson.loads(played.stdout)
    assert final["game_over"]
    points = {pid: score["public_points"][0] for pid, score in final["scores"].items()}
    assert (
        points[str(final["state"]["players"][0]["player_id"])]
        >= points[str(final["state"]["players"][1]["player_id"])]
    )


def test_watch_says_when_the_server_went_away_before_game_over(server: ServerProcess) -> None:
    with server.client() as admin:
        module_id = admin.upload_module(module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")["module_id"]
        created = admin.create_match(module_id, ["ann", "bob"])
    watch = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tablehost",
            "watch",
            created["match_id"],
            "--json",
            "--address",
            server.address,
            "--token",
            created["spectator_token"],
            "--reconnect-for",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert watch.stdout is not None and watch.stderr is not None
    assert '"version":0' in watch.stdout.readline()
    assert server.stop() == 0
    assert watch.wait(30) == 1
    assert "ended before game over" in watch.stderr.read()
    watch.stdout.close()
    watch.stderr.close()


def test_a_refusal_of_bad_input_exits_2_and_changes_nothing(server: ServerProcess, tmp_path: Path) -> None:
    with server.client() as admin:
        module_id = admin.upload_module(module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")["module_id"]
        created = admin.create_match(module_id, ["ann", "bob"])
        before = admin.view(created["match_id"])
    match_id, address = created["match_id"], ("--address", server.address)
    admin_token = (server.data_dir / "admin_token").read_text().strip()
    refusals = [
        (cli("act", match_id, "0", *address, token="bogus"), "UNAUTHENTICATED"),
        (cli("create", "no-such-module", "--players", "2", *address, token=admin_token), "NOT_FOUND"),
        (
            cli("create", "tic_tac_toe", "--players", "2", *address, token=admin_token),
            f"tic_tac_toe is the name of module {module_id}: create takes the module id",
        ),
        (cli("create", module_id, "--players", "3", *address, token=admin_token), "INVALID_ARGUMENT"),
        (cli("act", "m-nosuch", "0", *address, token=created["seats"][0]["token"]), "PERMISSION_DENIED"),
        (cli("resign", match_id, *address, token=created["spectator_token"]), "the server refused"),
        (cli("bots", "--match", match_id, "--tokens", "garbage-token", *address), "unknown token"),
        (
            cli("bots", "--match", match_id, "--tokens", created["spectator_token"], *address),
            "not a seat token",
        ),
    ]
    for result, phrase in refusals:  # they exited 1, like an unreachable server
        refused_cleanly(result, phrase)
        assert result.returncode == 2, result.stderr
    with server.client() as admin:
        after = admin.view(match_id)
        assert (after["version"], after["game_over"]) == (before["version"], before["game_over"])
    no_token = cli("web", "--data", str(tmp_path / "nowhere"), "--no-open")
    refused_cleanly(no_token, "cannot read the admin token")
    assert no_token.returncode == 2


def test_an_oversized_module_is_refused_before_it_is_read_or_sent(tmp_path: Path) -> None:
    """A file over the module size limit is one line and exit 2 (it was grpc's RESOURCE_EXHAUSTED
    message and exit 1, after the whole file was read and sent); no server needs to answer."""
    from tablehost.limits import DEFAULT_LIMITS

    huge = tmp_path / "huge.wasm"
    with huge.open("wb") as out:  # sparse: nothing is written but the size
        out.truncate(DEFAULT_LIMITS.module_bytes + 1)
    result = cli("upload", str(huge), "--address", "127.0.0.1:9", token="x")
    assert result.returncode == 2, result.stderr
    limit = DEFAULT_LIMITS.module_bytes
    assert result.stderr.splitlines() == [
        f"tablehost: {huge}: module is {limit + 1} bytes, over the {limit}-byte limit"
    ]


def test_a_call_past_its_deadline_is_not_called_a_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    """The client's own deadline ran out: the move may have been applied, so no 'refused'."""
    import argparse

    import grpc

    from tablehost.cli_remote import EXIT_FAILED, _guarded
    from tablehost.client import ApiError

    def slow(args: argparse.Namespace) -> int:
        raise ApiError(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")

    assert _guarded(slow)(argparse.Namespace()) == EXIT_FAILED
    err = capsys.readouterr().err
    assert "refused" not in err
    assert "may still have been applied" in err and "tablehost view" in err


def test_a_token_grpc_cannot_send_is_refused_before_any_connection(tmp_path: Path) -> None:
    """A token with 'é', a control character or a space, or one of 10 KB, made grpc print its
    C-core dump and the CLI say "the server refused: INTERNAL: Invalid metadata" (exit 1); the
    server never saw it. Now: one line naming where the token came from, exit 2, no connection."""
    from test_cli_ranges import CHILD

    bad_file = tmp_path / "bad_token"
    bad_file.write_text("tha_é\n")
    nowhere = ["--address", "127.0.0.1:1"]  # nothing listens: a connection attempt says so
    cases = [
        (["view", "m-1", *nowhere, "--token", "ths_é"], {}, "--token (or $TABLEHOST_TOKEN): a token is printable ASCII without spaces; character 5 of this one is U+00E9"),
        (["view", "m-1", *nowhere, "--token", "ths_a\x01b"], {}, "character 6 of this one is U+0001"),
        (["act", "m-1", "0", *nowhere, "--token", "ths_a b"], {}, "character 6 of this one is U+0020"),
        (["view", "m-1", *nowhere, "--token", "t" * 10_000], {}, "a token has 1 to 256 characters, this one has 10000"),
        (["view", "m-1", *nowhere], {"TABLEHOST_TOKEN": "ths_\u00a0x"}, "character 5 of this one is U+00A0"),
        (["view", "m-1", *nowhere, "--token-file", str(bad_file)], {}, f"the token file {bad_file}: a token is printable"),
        (["bots", "--match", "m-1", *nowhere, "--tokens", "ths_ok,ths_é"], {}, "--tokens: token 2: a token is printable"),
    ]
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=orjson.dumps([[argv, environ] for argv, environ, _ in cases]),
        capture_output=True,
        env=_env(),
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert b"Invalid metadata" not in result.stderr and b"metadata" not in result.stderr, result.stderr[-2000:]
    for (argv, _, says), (code, err, _) in zip(cases, orjson.loads(result.stdout), strict=True):
        assert code == 2 and says in err and err.startswith("tablehost: "), (argv[:4], err[:300])
        assert len(err.splitlines()) == 1, err[:300]
        assert "é" not in err and "t" * 300 not in err  # the token itself is not echoed
    # A token of the server's shape and the longest accepted go on to connect (nothing answers here).
    for token in ("ths_" + "A" * 43, "~" * 256):
        reached = cli("view", "m-1", *nowhere, token=token)
        assert reached.returncode == 1 and "no tablehost server answers" in reached.stderr, reached.stderr
    with pytest.raises(ValueError, match="character 5 of this one is U\\+00E9"):
        TablehostClient("127.0.0.1:1", "ths_é")


def run_main_cases(cases: list[tuple[list[str], str]]) -> None:
    """Run each argv through ``cli.main`` in one child: each exits 2 with its message, no traceback."""
    from test_cli_ranges import CHILD

    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=orjson.dumps([[argv, {}] for argv, _ in cases]),
        capture_output=True,
        env=_env(),
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    for (argv, says), (code, err, _) in zip(cases, orjson.loads(result.stdout), strict=True):
        assert code == 2 and says in err and "Traceback" not in err, (argv, err[:300])


def test_digits_other_than_ascii_are_refused() -> None:
    """`--bot 2=mcts:１０` made a working bot recorded as 'mcts:１０' and `--option
    target_score=９９` was taken as 99 (Python's int reads fullwidth digits): one line, exit 2."""
    from test_cli_ranges import TTT

    nowhere = ["--address", "127.0.0.1:1", "--token", "ths_x"]  # refused before anything is sent
    run_main_cases([
        (["play", TTT, "--players", "2", "--bots", "mcts:１０,random"],
         "bot 'mcts:１０': the iterations must be a whole number from 1 to 10000000 in ASCII digits 0-9"),
        (["play", TTT, "--players", "2", "--bots", "mcts:٣"], "ASCII digits 0-9"),  # Arabic-Indic 3
        (["create", "m", "--players", "2", "--option", "target_score=９９", *nowhere],
         "--option target_score='９９': write the number in ASCII digits 0-9"),
        (["create", "m", "--players", "2", "--bot", "２=random", *nowhere], "is not SEAT=NAME"),
    ])
    from tablehost.bots import make_bot
    from tablehost.cli import parse_options

    assert parse_options(["n=-5", "score=99", "name=é", "flag=true"]) == {
        "n": -5, "score": 99, "name": "é", "flag": True  # a string that is no number stays a string
    }
    assert make_bot("mcts:10").iterations == 10  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="ASCII digits"):
        make_bot("ismcts:１０")


def test_an_option_given_twice_is_refused() -> None:
    """`--option misere=true --option misere=false` played misere=false without a word."""
    from test_cli_ranges import TTT

    nowhere = ["--address", "127.0.0.1:1", "--token", "ths_x"]  # refused before anything is sent
    twice = "--option 'misere' is given twice; give each option once"
    run_main_cases([
        (["play", TTT, "--players", "2", "--bots", "random", "--option", "misere=true", "--option", "misere=false"],
         twice),
        (["create", "m", "--players", "2", "--option", "misere=true", "--option", "misere=true", *nowhere], twice),
    ])
    from tablehost.cli import parse_options

    assert parse_options(["misere=true", "target_score=50"]) == {"misere": True, "target_score": 50}


def test_a_clock_under_a_second_is_refused() -> None:
    """`--clock 0.001` and `--clock 1e-300` were taken: the match ended on time at the first view."""
    nowhere = ["--address", "127.0.0.1:1", "--token", "ths_x"]  # refused before anything is sent
    run_main_cases([
        (["create", "m", "--players", "2", "--clock", clock, *nowhere], f"--clock {clock!r}: the time is at least 1 second")
        for clock in ("0.001", "1e-300", "0.999+5")
    ])
    from tablehost.clocks import TimeControl

    assert TimeControl.parse("1") == TimeControl(per_move_ms=1000)
    assert TimeControl.parse("1+0.5") == TimeControl(main_ms=1000, increment_ms=500)


def test_a_text_view_shows_each_spaces_public_state_cut_to_its_cap() -> None:
    """Risk keeps a territory's holder and armies in the space's public_state: `tablehost view`
    printed every territory as `alaska -`."""
    from tablehost.cli_remote import SPACE_STATE_CHARS, format_view

    view = {
        "match_id": "m", "version": 3, "viewer": None, "game_over": False, "active_player_ids": [1],
        "score_labels": [], "scores": {}, "actions": [], "state": {
            "players": [{"player_id": 1, "username": "ann"}], "log": [],
            "spaces": [{"space_id": "alaska", "owner": None, "pieces": [], "public_state": {"owner": 2, "armies": 3}},
                       {"space_id": "deck", "owner": None, "pieces": [], "public_state": {}},
                       {"space_id": "long", "owner": None, "pieces": [], "public_state": {"notes": "x" * 500}},
                       {"space_id": "evil", "owner": None, "pieces": [], "public_state": {"k": "\x1b[2Jforged\nline"}}]},
    }  # fmt: skip
    lines = format_view(view).splitlines()
    assert "  alaska       -  {owner=2, armies=3}" in lines
    assert "  deck         -" in lines, "an empty state prints nothing"
    long_line = next(line for line in lines if line.startswith("  long"))
    assert long_line.endswith("…") and len(long_line.split("  ", 2)[-1].strip()) <= SPACE_STATE_CHARS + 3
    assert not any(line.startswith("line") for line in lines) and "\x1b" not in "\n".join(lines)


def test_a_text_views_result_names_the_winner_and_the_seat_that_resigned() -> None:
    """The result line read `winner: player 2`: the view has the seats' usernames."""
    from tablehost.cli_remote import format_view

    view = {
        "match_id": "m", "version": 9, "viewer": 1, "game_over": True, "active_player_ids": [],
        "status": "finished", "score_labels": [], "scores": {}, "actions": [],
        "result": {"ranks": {"1": 2, "2": 1}, "winners": [2], "ended_by": "resigned", "player_id": 1},
        "state": {"players": [{"player_id": 1, "username": "ann"}, {"player_id": 2, "username": "bob"}],
                  "log": [], "spaces": []},
    }  # fmt: skip
    assert "  result: ann (player 1) resigned; winner: bob (player 2) (player 1 #2, player 2 #1)" in (
        format_view(view).splitlines()
    )


def test_every_number_option_and_the_clock_read_ascii_digits_only(tmp_path: Path) -> None:
    """`create --players ２`, `--clock １０`, `--clock ٣٠` and `--clock 1_0` made matches (the
    `--clock １０` one ran a 10 s clock): argparse's int and float read any Unicode digits."""
    nowhere = ["--address", "127.0.0.1:1", "--token", "ths_x"]  # refused before anything is sent
    directory = tmp_path / "a-directory"
    directory.mkdir()
    run_main_cases([
        (["create", "m", "--players", "２", *nowhere], "invalid int value: '２'"),
        (["simulate", "x.wasm", "--games", "١٠"], "invalid int value"),
        (["serve", "--rate-limit", "１"], "invalid float value"),
        *((["create", "m", "--players", "2", "--clock", clock, *nowhere], "in ASCII digits")
          for clock in ("１０", "٣٠", "1_0", "10+１")),
        (["view", "m", "--address", "127.0.0.1:1", "--token-file", "/dev/zero"], "holds more than 1024 bytes"),
        (["view", "m", "--address", "127.0.0.1:1", "--token-file", str(directory)], "Is a directory"),
    ])
