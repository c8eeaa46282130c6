"""Shared helpers of the web tests: a registry with the sample games served over HTTP in this process."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from tablehost.api.auth import ADMIN
from tablehost.api.registry import MatchRegistry
from tablehost.web.app import HttpServer

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
SEATS = {
    "tic_tac_toe": 2, "reversi": 2, "checkers": 2, "dominoes": 2, "hearts": 4,
    "backgammon": 2, "spades": 4, "holdem": 3, "risk": 3,
}
"""Seats per sample game (a game's own rule: hearts and spades are for four)."""
HINTED = SEATS
"""The sample games that set display hints: all of them."""


@dataclass
class WebTable:
    """A registry, its HTTP server, and the sample games' module ids by name."""

    registry: MatchRegistry
    server: HttpServer
    admin_token: str
    modules: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.server.url

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"authorization": f"Bearer {token}"}, timeout=30)

    def create(self, game: str, names: list[str] | None = None) -> dict[str, Any]:
        """A new match of ``game`` through the HTTP API (admin): ``{match_id, seats, spectator_token}``."""
        seats = SEATS[game]
        names = names or [f"p{n}" for n in range(1, seats + 1)]
        with self.client(self.admin_token) as admin:
            response = admin.post(
                "/api/matches",
                json={
                    "module_id": self.modules[game],
                    "seats": [{"username": n, "color": ""} for n in names],
                },
            )
        assert response.status_code == 201, response.text
        return response.json()  # type: ignore[no-any-return]

    def play_randomly(self, created: dict[str, Any], moves: int, seed: int = 1) -> None:
        """Play up to ``moves`` random offered moves (no undo) through the HTTP API, seat tokens only."""
        rng = random.Random(seed)
        clients = {seat["player_id"]: self.client(seat["token"]) for seat in created["seats"]}
        try:
            for _ in range(moves):
                views = {
                    pid: c.get(f"/api/matches/{created['match_id']}/view").json()
                    for pid, c in clients.items()
                }
                movers = [pid for pid, v in views.items() if v["actions"] and not v["game_over"]]
                if not movers:
                    return
                pid = rng.choice(movers)
                offers = [a for a in views[pid]["actions"] if a["intent"] != "undo"]
                offer = rng.choice(offers)
                answer = clients[pid].post(
                    f"/api/matches/{created['match_id']}/actions",
                    json={"action": offer["action"], "version": views[pid]["version"]},
                )
                assert answer.status_code == 200, answer.text
        finally:
            for c in clients.values():
                c.close()


def read_events(client: httpx.Client, path: str, out: list[dict[str, Any]], ready: threading.Event) -> None:
    """Append every ``view`` event of the stream at ``path`` to ``out`` (``ready`` set at the first)
    until the game-over view, the stream's end, or ``client`` being closed."""
    try:
        with client.stream("GET", path) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            name = None
            for line in response.iter_lines():
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:") and name == "view":
                    out.append(orjson.loads(line[5:]))
                    ready.set()
                    if out[-1]["game_over"]:
                        return
    except (httpx.HTTPError, RuntimeError):
        return  # the client was closed under the stream


@contextmanager
def web_table(data_dir: Path) -> Iterator[WebTable]:
    """Serve a fresh registry over HTTP on a free loopback port with every sample game uploaded."""
    registry = MatchRegistry(data_dir, synchronous="NORMAL")
    server = HttpServer("127.0.0.1:0", registry)
    server.start()
    table = WebTable(registry, server, registry.admin_token_path.read_text().strip())
    try:
        for game in SEATS:
            stored = registry.upload_module(ADMIN, (DIST / f"{game}.wasm").read_bytes(), game)
            table.modules[game] = stored.sha256
        yield table
    finally:
        registry.close_watchers()
        server.stop()
        registry.close()
