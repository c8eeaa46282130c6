"""HTTP move latency and push latency of the web table (``tablehost serve --http``'s app).

Runs a registry with tic-tac-toe and the web app (uvicorn on a thread, loopback) in this process,
then plays ``--games`` matches move by move over the HTTP/JSON API with each seat's own token,
while one event stream per match (the other seat's) is read on a thread. Prints:

- ``POST /actions``: p50 and p99 milliseconds from request to answer (guest step, SQLite commit,
  the view's JSON), measured by the client;
- ``push``: p50 and p99 milliseconds from sending a move to the other seat's stream delivering
  the view of that version;
- the view's size in bytes.

Usage::

    PYTHONPATH=runtime:tests python bench/web_latency.py [--games 20]

The machine is shared: note ``uptime``'s load average with the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import orjson

from web_support import WebTable, web_table

MOVES = ["a1", "b1", "a2", "b2", "a3"]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _listen(client: httpx.Client, path: str, arrivals: dict[int, float], done: threading.Event) -> None:
    with client.stream("GET", path) as response:
        for line in response.iter_lines():
            if line.startswith("data:"):
                view = orjson.loads(line[5:])
                arrivals[view["version"]] = time.perf_counter()
                if view["game_over"]:
                    break
    done.set()


def play(web: WebTable) -> tuple[list[float], list[float], int]:
    created = web.create("tic_tac_toe")
    match_id = created["match_id"]
    first, second = (web.client(seat["token"]) for seat in created["seats"])
    arrivals: dict[int, float] = {}
    done = threading.Event()
    listener = web.client(created["seats"][1]["token"])
    threading.Thread(
        target=_listen, args=(listener, f"/api/matches/{match_id}/events", arrivals, done)
    ).start()
    while 0 not in arrivals:
        time.sleep(0.001)
    posts, pushes, size = [], [], 0
    for version, cell in enumerate(MOVES):
        client = first if version % 2 == 0 else second
        sent = time.perf_counter()
        answer = client.post(
            f"/api/matches/{match_id}/actions",
            json={"action": {"type": "space_click", "space_id": cell}, "version": version},
        )
        posts.append((time.perf_counter() - sent) * 1000)
        size = len(answer.content)
        while version + 1 not in arrivals:
            time.sleep(0.0005)
        pushes.append((arrivals[version + 1] - sent) * 1000)
    done.wait(10)
    for c in (first, second, listener):
        c.close()
    return posts, pushes, size


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args()
    posts: list[float] = []
    pushes: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, web_table(Path(tmp)) as web:
        play(web)  # warm up: compiled module, instances, connections
        for _ in range(args.games):
            p, q, size = play(web)
            posts += p
            pushes += q
    load = os.getloadavg()[0]
    print(f"moves {len(posts)}  view {size} bytes  load average {load:.1f}")
    for name, values in (("POST /actions", posts), ("push", pushes)):
        print(f"{name:14s} p50 {statistics.median(values):6.2f} ms  p99 {_percentile(values, 0.99):6.2f} ms")


if __name__ == "__main__":
    main()
