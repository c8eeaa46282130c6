"""End to end: a real ``tablehost serve`` process on a free loopback port, played through the client.

Covers: full matches through the CLI and the client, SIGKILL in the middle of a stream of
moves and a restart on the same data directory, 50 concurrent matches with no lost or
duplicated move, and a hidden-information match played by bots that hold only their seat.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tablehost.cli_remote import run_bot
from tablehost.client import ApiError, ServerUnreachable, TablehostClient

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
DIST = Path(os.environ.get("TABLEHOST_DIST_DIR", ROOT / "sample_games" / "dist"))


def module_path(name: str) -> Path:
    path = DIST / f"{name}.wasm"
    if not path.exists():
        pytest.skip(f"{path} is not built (make games)")
    return path


def _env() -> dict[str, str]:
    paths = [str(ROOT / "runtime"), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


class ServerProcess:
    """A ``tablehost serve`` child process on a free port (``--listen 127.0.0.1:0``), with
    ``extra`` arguments (e.g. ``--store URL``)."""

    def __init__(self, data_dir: Path, extra: tuple[str, ...] = ()) -> None:
        self.data_dir = data_dir
        self.log = open(data_dir.parent / f"{data_dir.name}-server.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "tablehost", "serve", "--listen", "127.0.0.1:0", "--data", str(data_dir),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=_env(),
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first.startswith("tablehost serving on "):
            self.proc.kill()
            self.proc.wait()
            self._close()
            raise RuntimeError(f"server did not start: {first!r}; see {self.log.name}")
        self.address = first.split()[3]
        token_line = self.proc.stdout.readline()
        assert token_line.startswith("admin token: ")
        self.admin_token = Path(token_line.split(": ", 1)[1].strip()).read_text().strip()

    def client(self, token: str | None = None) -> TablehostClient:
        return TablehostClient(self.address, token or self.admin_token, timeout_s=30)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self._close()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=20)
        self._close()
        return code

    def _close(self) -> None:
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self.log.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path / "data")
    yield process
    if process.proc.poll() is None:
        assert process.stop() == 0


def cli(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tablehost", *args]
    if token:
        command += ["--token", token]
    return subprocess.run(command, check=False, capture_output=True, text=True, env=_env(), timeout=60)


def test_a_full_match_through_the_command_line(server: ServerProcess) -> None:
    upload = cli(
        "upload", str(module_path("tic_tac_toe")), "--address", server.address, token=server.admin_token
    )
    assert upload.returncode == 0, upload.stderr
    module_id = upload.stdout.split()[0]
    create = cli(
        "create", module_id, "--players", "2", "--json", "--address", server.address, token=server.admin_token
    )
    assert create.returncode == 0, create.stderr
    created = orjson.loads(create.stdout)
    match_id, seat1 = created["match_id"], created["seats"][0]["token"]

    shown = cli("view", match_id, "--address", server.address, token=seat1)
    assert shown.returncode == 0 and "[8] confirm" in shown.stdout, shown.stdout
    act = cli("act", match_id, "4", "--json", "--address", server.address, token=seat1)
    assert act.returncode == 0, act.stderr
    assert orjson.loads(act.stdout)["version"] == 1

    tokens = ",".join(s["token"] for s in created["seats"])
    bots = cli("bots", "--match", match_id, "--tokens", tokens, "--seed", "7", "--address", server.address)
    assert bots.returncode == 0, bots.stderr
    assert "game over" in bots.stdout
    with server.client() as admin:
        assert admin.view(match_id)["game_over"]


def test_an_unreachable_server_gets_a_helpful_message(tmp_path: Path) -> None:
    result = cli("view", "m-1", "--address", "127.0.0.1:1", token="x")
    assert result.returncode == 1
    assert "no tablehost server answers at 127.0.0.1:1" in result.stderr
    with pytest.raises(ServerUnreachable):
        TablehostClient("127.0.0.1:1", "x", timeout_s=5).view("m-1")


def test_sigkill_mid_stream_loses_no_acknowledged_move(tmp_path: Path) -> None:
    first = ServerProcess(tmp_path / "data")
    with first.client() as admin:
        module_id = admin.upload_module(module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")["module_id"]
        matches = [admin.create_match(module_id, ["ann", "bob"]) for _ in range(6)]
    acknowledged: dict[str, list[tuple[int, dict[str, Any]]]] = {m["match_id"]: [] for m in matches}
    stop = threading.Event()
    killed_after = 25

    def play(created: dict[str, Any]) -> None:
        """Alternate the seats' moves until the server dies; remember every acknowledged one."""
        match_id = created["match_id"]
        seats = [first.client(s["token"]) for s in created["seats"]]
        rng = random.Random(match_id)
        try:
            while not stop.is_set():
                view = next(v for v in (s.view(match_id) for s in seats) if v["actions"] or v["game_over"])
                if view["game_over"]:
                    return
                action = rng.choice(view["actions"])["action"]
                seats[view["viewer"] - 1].submit(match_id, action, view["version"])
                acknowledged[match_id].append((view["version"] + 1, action))
                if sum(len(a) for a in acknowledged.values()) >= killed_after:
                    stop.set()
        except (ApiError, StopIteration):
            return  # the server was killed under this request: not acknowledged
        finally:
            for seat in seats:
                seat.close()

    players = [threading.Thread(target=play, args=(m,)) for m in matches]
    for thread in players:
        thread.start()
    stop.wait(60)
    first.kill()
    for thread in players:
        thread.join(30)

    second = ServerProcess(tmp_path / "data")
    try:
        with second.client() as admin:
            for created in matches:
                match_id = created["match_id"]
                record = admin.record(match_id)
                stored = {m["seq"]: m["view_action"] for m in record["moves"] if not m["undone"]}
                for seq, action in acknowledged[match_id]:
                    assert stored.get(seq) == action, f"{match_id}: acknowledged move {seq} is missing"
                assert sorted(stored) == list(range(1, len(stored) + 1))
            results = [None] * len(matches)

            def finish(number: int, created: dict[str, Any], seat: int) -> None:
                view = run_bot(
                    second.address, created["match_id"], created["seats"][seat]["token"], seed=seat
                )
                if seat == 0:
                    results[number] = view["game_over"]

            finishers = [
                threading.Thread(target=finish, args=(n, m, seat))
                for n, m in enumerate(matches)
                for seat in (0, 1)
            ]
            for thread in finishers:
                thread.start()
            for thread in finishers:
                thread.join(60)
            assert results == [True] * len(matches)
    finally:
        assert second.stop() == 0


def test_fifty_concurrent_matches_lose_and_duplicate_no_move(server: ServerProcess) -> None:
    with server.client() as admin:
        module_id = admin.upload_module(module_path("tic_tac_toe").read_bytes(), "tic_tac_toe")["module_id"]
        matches = [admin.create_match(module_id, ["ann", "bob"]) for _ in range(50)]
    submitted: dict[str, list[int]] = {m["match_id"]: [] for m in matches}
    failures: list[BaseException] = []

    def play(created: dict[str, Any]) -> None:
        """One client per match plays both seats to the end, each seat with its own token."""
        match_id = created["match_id"]
        seats = [server.client(s["token"]) for s in created["seats"]]
        try:
            rng = random.Random(match_id)
            while True:
                view = next(v for v in (s.view(match_id) for s in seats) if v["actions"] or v["game_over"])
                if view["game_over"]:
                    return
                after = seats[view["viewer"] - 1].submit(
                    match_id, rng.choice(view["actions"])["action"], view["version"]
                )
                submitted[match_id].append(after["version"])
        except BaseException as exc:  # noqa: BLE001 - collected and reported by the test
            failures.append(exc)
        finally:
            for seat in seats:
                seat.close()

    threads = [threading.Thread(target=play, args=(m,)) for m in matches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    with server.client() as admin:
        for created in matches:
            record = admin.record(created["match_id"])
            seqs = [m["seq"] for m in record["moves"]]
            assert seqs == submitted[created["match_id"]] == list(range(1, len(seqs) + 1))
            assert admin.view(created["match_id"])["game_over"]


def _visible_to(viewer: int, space: dict[str, Any], piece: dict[str, Any]) -> bool:
    owner = piece["owner"] if piece["owner"] is not None else space["owner"]
    return owner == viewer


def test_hearts_bots_see_only_their_own_hands(server: ServerProcess) -> None:
    with server.client() as admin:
        module_id = admin.upload_module(module_path("hearts").read_bytes(), "hearts")["module_id"]
        created = admin.create_match(module_id, ["ann", "bob", "cid", "dee"])
    match_id = created["match_id"]
    leaks: list[str] = []
    finals: list[dict[str, Any]] = [{} for _ in created["seats"]]

    def check(token: str) -> None:
        """Read every view this seat is sent and note anything it may not see."""
        with TablehostClient(server.address, token, timeout_s=30) as client:
            for view in client.watch(match_id):
                for space in view["state"]["spaces"]:
                    for piece in space["pieces"]:
                        hidden = piece["private_kind"] is not None or piece["private_state"]
                        if hidden and not _visible_to(view["viewer"], space, piece):
                            leaks.append(f"seat {view['viewer']} saw {piece} in {space['space_id']}")
                for player in view["state"]["players"]:
                    if player["player_id"] != view["viewer"] and player["private_state"]:
                        leaks.append(
                            f"seat {view['viewer']} saw player {player['player_id']}'s private state"
                        )

    def play(number: int, token: str) -> None:
        finals[number] = run_bot(server.address, match_id, token, seed=number)

    seats = list(enumerate(s["token"] for s in created["seats"]))
    threads = [threading.Thread(target=check, args=(token,)) for _, token in seats]
    threads += [threading.Thread(target=play, args=seat) for seat in seats]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert leaks == []
    assert all(final.get("game_over") for final in finals)
