"""``tablehost bots`` and ``tablehost watch`` ride out a server restart (tablehost.reconnect).

The policy is tested with a fake clock (no sleeping), the bots' loop with a scripted fake client
(a move whose reply was lost is never sent again), and the commands end to end: a real server
killed mid-game and restarted on the same port and data directory.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import grpc
import orjson
import pytest

from tablehost import cli_remote
from tablehost.client import ApiError, ServerUnreachable, TablehostClient
from tablehost.reconnect import Backoff, Session, is_outage
from test_cli_remote import run_main_cases
from test_e2e_server import ServerProcess, _env, cli, module_path

UNREACHABLE = ServerUnreachable(
    grpc.StatusCode.UNAVAILABLE, "no tablehost server answers at x: Socket closed"
)
STORE_DOWN = ApiError(grpc.StatusCode.UNAVAILABLE, "store/unavailable: ...", "store/unavailable", 3000)


class FakeTime:
    """A monotonic clock that moves only when a wait is asked for; records the waits."""

    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        self.now += seconds
        return False


def session(reconnect_for_s: float, time: FakeTime, lines: list[str]) -> Session:
    return Session(
        "watch m-1", "127.0.0.1:7", reconnect_for_s, lines.append, wait=time.wait, clock=time.clock
    )


def test_the_backoff_doubles_from_half_a_second_up_to_five() -> None:
    assert [Backoff().delay_s(n) for n in range(7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]
    assert Backoff().delay_s(10_000) == 5.0
    for first, cap in ((0.0, 1.0), (2.0, 1.0), (float("nan"), 1.0), (0.5, float("inf"))):
        with pytest.raises(ValueError, match="first_s <= cap_s"):
            Backoff(first, cap)


def test_only_an_established_session_retries_and_only_outages() -> None:
    time, lines = FakeTime(), list[str]()
    fresh = session(60, time, lines)
    assert not fresh.retry(UNREACHABLE), "a server that never answered fails at once"
    fresh.answered(0)
    for refusal in (
        ApiError(grpc.StatusCode.PERMISSION_DENIED, "auth/permission_denied: ...", "auth/permission_denied"),
        ApiError(grpc.StatusCode.NOT_FOUND, "match/unknown: ...", "match/unknown"),
        ApiError(grpc.StatusCode.INVALID_ARGUMENT, "request/invalid: ...", "request/invalid"),
        ApiError(grpc.StatusCode.FAILED_PRECONDITION, "match/not_offered: ...", "match/not_offered"),
        ApiError(grpc.StatusCode.UNAVAILABLE, "module/quarantined: ...", "module/quarantined", 2000),
        ApiError(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"),
    ):
        assert not is_outage(refusal)
        assert not fresh.retry(refusal)
    assert lines == [] and time.waits == []
    assert is_outage(UNREACHABLE) and is_outage(STORE_DOWN)

    never = session(0, time, lines)
    never.answered(0)
    assert not never.retry(UNREACHABLE) and not never.retry(None)
    assert lines == [] and time.waits == [], "--reconnect-for 0 gives up at once, silently, as before"


def test_an_outage_is_said_once_backs_off_and_ends_at_its_bound() -> None:
    time, lines = FakeTime(), list[str]()
    lost = session(10, time, lines)
    lost.answered(4)
    attempts = 0
    while lost.retry(None if attempts == 0 else UNREACHABLE):
        attempts += 1
    assert time.waits == [0.5, 1.0, 2.0, 4.0, 2.5], "doubling, the last wait cut to the window's end"
    assert lines == [
        "watch m-1: lost the server at 127.0.0.1:7 (the server ended the watch stream); retrying for up to 10 s"
    ]
    assert lost.in_outage


def test_a_reconnection_is_said_and_the_next_outage_starts_afresh() -> None:
    time, lines = FakeTime(), list[str]()
    lost = session(60, time, lines)
    lost.answered(4)
    assert lost.retry(UNREACHABLE) and lost.retry(UNREACHABLE)
    assert lost.retry(STORE_DOWN), "a store outage is ridden out too"
    assert time.waits == [0.5, 1.0, 3.0], "the server's retry-after-ms hint when longer than the backoff"
    lost.answered(9)
    assert not lost.in_outage
    assert lines == [
        "watch m-1: lost the server at 127.0.0.1:7 (no answer); retrying for up to 60 s",
        "watch m-1: reconnected to 127.0.0.1:7 after 4.5 s; continuing from version 9",
    ]
    assert lost.retry(STORE_DOWN)
    assert time.waits[-1] == 3.0 and lines[-1].endswith("(store/unavailable); retrying for up to 60 s")


def test_a_session_told_to_stop_gives_up() -> None:
    stopping = Session("bots", "127.0.0.1:7", 60, lambda line: None, wait=lambda seconds: True)
    stopping.answered(0)
    assert not stopping.retry(UNREACHABLE)


# ---------------------------------------------------------------- the bots' loop, scripted


def fake_view(version: int, *, my_turn: bool, over: bool = False) -> dict[str, Any]:
    action = {"type": "space_click", "space_id": f"s{version}"}
    return {
        "match_id": "m-1",
        "viewer": 1,
        "version": version,
        "game_over": over,
        "active_player_ids": [] if over else [1 if my_turn else 2],
        "actions": [{"action": action, "intent": "confirm", "label": "go"}] if my_turn and not over else [],
        "state": {"players": [{"player_id": 1, "username": "ann"}, {"player_id": 2, "username": "bob"}]},
    }


class ScriptedClient:
    """Each instance is one connection: its watch replays the next script (views, then maybe a
    failure); a submit fails as the server dies. Submits are recorded across connections."""

    scripts: ClassVar[list[list[Any]]] = []
    submits: ClassVar[list[tuple[dict[str, Any], int]]] = []

    def __init__(self, address: str, token: str | None = None, *, timeout_s: float = 30.0) -> None:
        self.script = ScriptedClient.scripts.pop(0)

    def watch(self, match_id: str) -> Iterator[dict[str, Any]]:
        for step in self.script:
            if isinstance(step, Exception):
                raise step
            yield step

    def submit(self, match_id: str, action: dict[str, Any], expected_version: int) -> dict[str, Any]:
        ScriptedClient.submits.append((action, expected_version))
        raise UNREACHABLE  # the server died: the move may or may not have been stored

    def close(self) -> None:
        pass


def test_a_bot_never_resends_a_move_across_an_outage(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The move sent as the server died was stored (the view after reconnecting shows it): the
    bot decides again on that view and sends nothing more for version 0."""
    ScriptedClient.submits = []
    ScriptedClient.scripts = [
        [fake_view(0, my_turn=True)],  # the submit on this view fails: the server is gone
        [UNREACHABLE],  # still down
        [fake_view(1, my_turn=False), fake_view(2, my_turn=False, over=True)],
    ]
    monkeypatch.setattr(cli_remote, "TablehostClient", ScriptedClient)
    final = cli_remote.run_bots(
        "127.0.0.1:7", "m-1", ["ths_one"], reconnect_for_s=60, backoff=Backoff(0.001, 0.001)
    )[0]
    assert final["game_over"] and final["version"] == 2
    assert ScriptedClient.submits == [({"type": "space_click", "space_id": "s0"}, 0)]
    err = capsys.readouterr().err
    assert err.count("lost the server") == 1 and err.count("reconnected") == 1, err
    assert "seat 1 of match m-1: lost the server at 127.0.0.1:7 (no answer); retrying for up to 60 s" in err
    assert "seat 1 of match m-1: reconnected to 127.0.0.1:7 after" in err and "from version 1" in err


def test_a_bot_that_gives_up_fails_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    ScriptedClient.submits = []
    ScriptedClient.scripts = [[fake_view(0, my_turn=False)]] + [[UNREACHABLE]] * 50
    monkeypatch.setattr(cli_remote, "TablehostClient", ScriptedClient)
    with pytest.raises(cli_remote.BotError) as caught:
        cli_remote.run_bots(
            "127.0.0.1:7", "m-1", ["ths_one"], reconnect_for_s=0.05, backoff=Backoff(0.01, 0.01)
        )
    assert caught.value.status == grpc.StatusCode.UNAVAILABLE
    assert caught.value.details.startswith("seat 1 (token ths_one...): no tablehost server answers")


# ---------------------------------------------------------------- bots --module


def test_bots_search_in_a_pool_that_never_quarantines(monkeypatch: pytest.MonkeyPatch) -> None:
    """A local tool reports a game's own failures: its pool is made as play's and check's."""
    from tablehost.cli import main

    seen: dict[str, Any] = {}

    def fake_run_bots(*args: Any, pool: Any = None, **kwargs: Any) -> list[dict[str, Any]]:
        seen["quarantine"] = pool.quarantine
        return [{"game_over": True}]

    monkeypatch.setattr(cli_remote, "run_bots", fake_run_bots)
    monkeypatch.setattr(cli_remote, "format_view", lambda view: "done")
    argv = ["bots", "--match", "m-1", "--tokens", "ths_one", "--bots", "mcts:10"]
    assert main([*argv, "--module", str(module_path("tic_tac_toe")), "--address", "127.0.0.1:7"]) == 0
    assert seen == {"quarantine": False}


def test_reconnect_for_is_a_checked_number_of_seconds() -> None:
    cases = []
    for value in ("-1", "nan", "604801"):
        says = f"--reconnect-for must be 0 to 604800 s, got {float(value)}"
        cases.append((["watch", "m-1", "--token", "ths_one", "--reconnect-for", value], says))
        cases.append((["bots", "--match", "m-1", "--tokens", "ths_one", "--reconnect-for", value], says))
    run_main_cases(cases)


# ---------------------------------------------------------------- end to end


def start(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tablehost", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def ready_match(server: ServerProcess) -> dict[str, Any]:
    with server.client() as admin:
        module_id = admin.upload_module(module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")["module_id"]
        return admin.create_match(module_id, ["ann", "bob"])


def wait_for_version(address: str, token: str, match_id: str, version: int) -> dict[str, Any]:
    with TablehostClient(address, token) as client:
        return next(v for v in client.watch(match_id) if v["version"] >= version)


def first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.readline()


def play_seat_2_while(bots: subprocess.Popen[str], address: str, token: str, match_id: str) -> None:
    """Play seat 2 until game over, or until the ``bots`` process playing seat 1 exits (then the
    stream is closed: a bot that did not ride out the restart fails the test, it does not hang it)."""
    with TablehostClient(address, token) as bob:

        def close_when_the_bots_exit() -> None:
            bots.wait()
            bob.close()

        threading.Thread(target=close_when_the_bots_exit, daemon=True).start()
        try:
            for view in bob.watch(match_id):
                if view["game_over"]:
                    return
                if 2 in view["active_player_ids"]:
                    bob.submit(match_id, view["actions"][0]["action"], view["version"])
        except (ApiError, ValueError):  # closed once the bots exited (ValueError: a closed channel)
            pass


@pytest.mark.e2e
def test_bots_and_watch_ride_out_a_server_restart(tmp_path: Path) -> None:
    """Seat 1 is a `tablehost bots`, a spectator `tablehost watch`es, the test plays seat 2: the
    server dies after seat 1's first move and comes back on its port and data; the game ends."""
    server = ServerProcess(tmp_path / "data")
    try:
        created = ready_match(server)
        match_id, address = created["match_id"], server.address
        seat1, seat2 = (s["token"] for s in created["seats"])
        bots = start("bots", "--match", match_id, "--tokens", seat1, "--seed", "3", "--address", address)
        watch = start(
            "watch", match_id, "--json", "--address", address, "--token", created["spectator_token"]
        )
        assert '"match_id"' in first_line(watch)  # its session is established
        before = wait_for_version(address, seat2, match_id, 1)  # the bot moved: established too
        assert not before["game_over"]
        server.kill()
        server = ServerProcess(tmp_path / "data", ("--listen", address))
        assert server.address == address
        play_seat_2_while(bots, address, seat2, match_id)

        code, out, err = finish(bots)
        assert code == 0, err
        with server.client() as admin:
            final = admin.view(match_id)
        assert final["game_over"]
        final_version = final["version"]
        assert "finished" in out, out
        assert err.count("lost the server") == 1 and err.count("reconnected") == 1, err
        assert f"tablehost bots: seat 1 of match {match_id}: lost the server at {address}" in err
        assert f"tablehost bots: seat 1 of match {match_id}: reconnected to {address}" in err
        assert "Traceback" not in err

        code, out, err = finish(watch)
        assert code == 0, err
        versions = [orjson.loads(line)["version"] for line in out.splitlines()]
        assert versions[-1] == final_version and max(versions) > before["version"]
        assert f"tablehost watch: match {match_id}: lost the server at {address}" in err
        assert err.count("lost the server") == 1 and err.count("reconnected") == 1, err
    finally:
        if server.proc.poll() is None:
            assert server.stop() == 0


@pytest.mark.e2e
def test_reconnect_for_0_exits_as_before_and_a_window_ends(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data")
    try:
        created = ready_match(server)
        match_id, address = created["match_id"], server.address
        seat1, seat2 = (s["token"] for s in created["seats"])
        spectator = ("--address", address, "--token", created["spectator_token"])
        bots = start(
            "bots", "--match", match_id, "--tokens", seat1, "--address", address, "--reconnect-for", "0"
        )
        watch_0 = start("watch", match_id, "--json", *spectator, "--reconnect-for", "0")
        watch_1 = start("watch", match_id, "--json", *spectator, "--reconnect-for", "1")
        assert '"match_id"' in first_line(watch_0) and '"match_id"' in first_line(watch_1)
        wait_for_version(address, seat2, match_id, 1)
    finally:
        server.kill()
    for proc in (bots, watch_0):
        code, _, err = finish(proc)
        assert code == 1 and "no tablehost server answers at" in err, err
        assert "retrying" not in err and "Traceback" not in err, err
    code, _, err = finish(watch_1)
    assert code == 1, err
    lines = err.splitlines()
    assert lines[0] == (
        f"tablehost watch: match {match_id}: lost the server at {address} (no answer); retrying for up to 1 s"
    )
    assert lines[-1].startswith(f"tablehost: no tablehost server answers at {address}"), err
    assert "reconnected" not in err


@pytest.mark.e2e
def test_a_server_that_never_answered_fails_at_once() -> None:
    """A mistyped address must not wait out --reconnect-for: only an established session retries
    (here 600 s; the subprocess would outlive cli's 60 s timeout if it did)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"  # nobody listens once it is closed
    for argv in (
        ["bots", "--match", "m-1", "--tokens", "ths_one", "--address", address],
        ["watch", "m-1", "--token", "ths_one", "--address", address],
    ):
        result = cli(*argv, "--reconnect-for", "600")
        assert result.returncode == 1, result.stderr
        assert f"no tablehost server answers at {address}" in result.stderr
        assert "retrying" not in result.stderr and "Traceback" not in result.stderr
