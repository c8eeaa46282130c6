"""Server CPU per move below gRPC, split: the interceptor, the servicer's handler, the wire.

Plays tic-tac-toe matches in this process through the very objects ``tablehost serve`` wires
together (a :class:`MatchRegistry` with :class:`Metrics`, the :class:`MatchServicer`, and the
:class:`RequestInterceptor` wrapping its methods), calling the wrapped GetView and
SubmitAction handlers directly with a stand-in for grpc's servicer context, one request at a
time, with logging configured as the bench server's (``--log-level warning``). No grpc server,
threads or network: what is left is what a request costs the server below grpc.

Prints per move (one GetView of the active seat, one SubmitAction of a random offered action),
in CPU ms of the serving thread (``time.thread_time``):

- ``GetView`` / ``SubmitAction``: the wrapped handler, as ``tablehost_request_cpu_seconds``
  counts it (auth, registry, guest, store, view and its message), plus the interceptor's
  ``api.request`` log and metrics after it (which that counter leaves out);
- ``of which interceptor``: the same calls through the bare servicer subtracted (the
  interceptor's context binding, token hashing and lookup, rate limit, log and metrics);
- ``wire``: serialising the two requests (the client's side) and the two responses as grpc's
  serialiser would (grpc does it outside the handler); the handlers parse the requests' bytes
  themselves, as in the server (:meth:`RequestInterceptor.add_to_server`), so that parse is in
  the GetView and SubmitAction figures (grpc used to parse them, outside the handlers: they were in ``wire``);
- ``guest step``: the guest's own CPU (``tablehost_guest_call_cpu_seconds``, op ``step``).

The store's commit runs on its writer thread (SubmitAction waits for it): not counted here.

Usage::

    PYTHONPATH=runtime python bench/request_path.py [--games 150] [--sync normal] [--rounds 3]

Rounds alternate bare and wrapped passes over fresh matches; the figures are the median
round's. The machine is shared: note the load average printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runtime"))

from tablehost import logs
from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api.auth import ADMIN
from tablehost.api.interceptors import RequestInterceptor
from tablehost.api.metrics import Metrics
from tablehost.api.registry import MatchRegistry
from tablehost.api.servicer import MatchServicer
from tablehost.api.watch_slots import WatchSlots


class FakeContext:
    """What the handlers ask of grpc's ``ServicerContext``: the caller's metadata, trailers, abort."""

    def __init__(self, token: str) -> None:
        self.metadata = (("authorization", f"Bearer {token}"),)

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    def set_trailing_metadata(self, trailing: Any) -> None:
        del trailing

    def abort(self, code: Any, details: str) -> None:
        raise RuntimeError(f"{code}: {details}")


def play(
    get_view: Any, submit: Any, registry: MatchRegistry, module: str, games: int, seed: int
) -> tuple[int, float, float, float]:
    """Play ``games`` new matches to the end; return moves and CPU seconds of the GetView and
    SubmitAction calls (each given its request's bytes) and of the wire work (requests and
    responses serialised)."""
    rng = random.Random(seed)
    moves, view_cpu, submit_cpu, wire_cpu = 0, 0.0, 0.0, 0.0
    for _ in range(games):
        created = registry.create_match(ADMIN, module, [("a", ""), ("b", "")])
        contexts = {player.player_id: FakeContext(token) for player, token in created.seats}
        view = created.view
        while not view.game_over:
            context = contexts[view.active_player_ids[0]]
            started = time.thread_time()
            request = pb.GetViewRequest(match_id=created.match_id).SerializeToString()
            wired = time.thread_time()
            message = get_view(request, context)
            viewed = time.thread_time()
            message.SerializeToString()
            offered = [a for a in message.actions if a.intent != "undo"]
            choice = rng.choice(offered)
            wire = pb.SubmitActionRequest(
                match_id=created.match_id, expected_version=message.version, action=choice.action
            ).SerializeToString()
            parsed = time.thread_time()
            reply = submit(wire, context)
            submitted = time.thread_time()
            reply.SerializeToString()
            done = time.thread_time()
            view_cpu += viewed - wired
            submit_cpu += submitted - parsed
            wire_cpu += (wired - started) + (parsed - viewed) + (done - submitted)
            view = reply.view
            moves += 1
    return moves, view_cpu, submit_cpu, wire_cpu


def guest_step_cpu(metrics: Metrics) -> float:
    total = 0.0
    for family in metrics.registry.collect():
        if family.name == "tablehost_guest_call_cpu_seconds":
            total += sum(s.value for s in family.samples if s.name.endswith("_total") and s.labels["op"] == "step")
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=150, help="matches per pass")
    parser.add_argument("--rounds", type=int, default=3, help="bare + wrapped passes")
    parser.add_argument("--sync", choices=("full", "normal"), default="normal")
    parser.add_argument("--module", default=str(ROOT / "sample_games" / "dist" / "tic_tac_toe.wasm"))
    args = parser.parse_args()
    logs.configure(level="warning")
    with tempfile.TemporaryDirectory() as tmp:
        metrics = Metrics()
        registry = MatchRegistry(Path(tmp) / "data", synchronous=args.sync.upper(), metrics=metrics)
        try:
            module = registry.upload_module(ADMIN, Path(args.module).read_bytes(), "bench").sha256
            servicer = MatchServicer(registry, WatchSlots(100))
            wrapper = RequestInterceptor(registry, metrics).wrap_servicer(
                servicer, pb.DESCRIPTOR.services_by_name["MatchService"]
            )

            def bare(method: str) -> Any:
                from tablehost.api.auth import current_principal

                behavior = getattr(servicer, method)
                parse = getattr(pb, f"{method}Request").FromString

                def call(data: bytes, context: FakeContext) -> Any:
                    token = context.metadata[0][1].split(" ", 1)[1]
                    current_principal.set(registry.authenticate(token))
                    return behavior(parse(data), context)

                return call

            get_view, submit = wrapper.GetView, wrapper.SubmitAction
            play(get_view, submit, registry, module, 10, 0)  # warm up: compiled code, pools, statements
            rows: list[tuple[float, float, float, float, float, float]] = []
            for number in range(args.rounds):
                moves0, v0, s0, _ = play(bare("GetView"), bare("SubmitAction"), registry, module, args.games, number)
                step_before = guest_step_cpu(metrics)
                moves, view_cpu, submit_cpu, wire_cpu = play(get_view, submit, registry, module, args.games, number)
                step = guest_step_cpu(metrics) - step_before
                inner = (v0 + s0) / moves0
                rows.append((
                    view_cpu / moves, submit_cpu / moves, (view_cpu + submit_cpu) / moves - inner,
                    wire_cpu / moves, step / moves, (view_cpu + submit_cpu + wire_cpu) / moves,
                ))
            rows.sort(key=lambda row: row[5])
            view_ms, submit_ms, intercept_ms, wire_ms, step_ms, total_ms = (x * 1e3 for x in rows[len(rows) // 2])
            spread = statistics.pstdev(row[5] for row in rows) * 1e3
            print(
                f"{Path(args.module).name}, SQLite synchronous={args.sync.upper()}, {args.games} matches x "
                f"{args.rounds} rounds, load average {os.getloadavg()[0]:.2f}: CPU ms per move "
                f"GetView {view_ms:.3f} + SubmitAction {submit_ms:.3f} (guest step {step_ms:.3f}; "
                f"of which interceptor {intercept_ms:.3f}) + wire {wire_ms:.3f} = {total_ms:.3f} "
                f"(rounds' spread {spread:.3f})"
            )
        finally:
            registry.close(report=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
