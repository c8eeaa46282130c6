"""Operating a server: the Prometheus endpoint, health following the store, per-token rate limits.

A real grpc server in-process on a free loopback port (as test_api_server.py), built with
metrics and with small limits where a test needs them.
"""

from __future__ import annotations

import re
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from structlog.testing import capture_logs

from fixtures_guest import offering_guest_wasm
from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api._pb import tablehost_pb2_grpc as pb_grpc
from tablehost.api.faults import RateLimited
from tablehost.api.metrics import Metrics
from tablehost.api.rate_limit import RateLimiter, RateLimits
from tablehost.api.registry import MatchRegistry
from tablehost.api.server import create_server
from tablehost.client import ApiError, TablehostClient
from tablehost.store import StoreConflict, StoreUnavailable
from test_api_server import module_bytes


@dataclass
class Ops:
    address: str
    admin_token: str
    registry: MatchRegistry
    metrics: Metrics
    metrics_url: str
    server: grpc.Server

    def client(self, token: str | None = None) -> TablehostClient:
        return TablehostClient(self.address, token or self.admin_token, timeout_s=10)

    def scrape(self) -> str:
        with urllib.request.urlopen(self.metrics_url, timeout=10) as response:
            return str(response.read().decode())


def start(tmp_path: Path, **options: object) -> Ops:
    metrics = Metrics()
    registry = MatchRegistry(tmp_path / "data", synchronous="NORMAL", metrics=metrics)
    server, port = create_server("127.0.0.1:0", registry, max_workers=16, metrics=metrics, **options)  # type: ignore[arg-type]
    server.start()
    metrics_port = metrics.serve_http(0)
    token = registry.admin_token_path.read_text().strip()
    return Ops(
        f"127.0.0.1:{port}", token, registry, metrics, f"http://127.0.0.1:{metrics_port}/metrics", server
    )


@pytest.fixture
def ops(tmp_path: Path) -> Iterator[Ops]:
    started = start(tmp_path, health_interval_s=0.05)
    yield started
    started.registry.close_watchers()
    started.server.stop(0).wait()
    started.registry.close()


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text, 0 when absent."""
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    pattern = re.escape(name + (f"{{{wanted}}}" if labels else "")) + r" ([0-9.e+-]+)$"
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_the_metrics_endpoint_counts_moves_refusals_guest_calls_matches_watchers_and_commits(
    ops: Ops,
) -> None:
    with ops.client() as admin:
        ttt = admin.upload_module(module_bytes("tic_tac_toe"), "tic_tac_toe")["module_id"]
        looping = admin.upload_module(offering_guest_wasm("hostile_loop"), "loops")["module_id"]
        created = admin.create_match(ttt, ["ann", "bob"])
        hostile = admin.create_match(looping, ["cy", "dee"])
    match_id = created["match_id"]
    before = ops.scrape()
    assert sample(before, "tablehost_matches", state="active") == 2
    assert sample(before, "tablehost_store_up") == 1
    with (
        ops.client(created["seats"][0]["token"]) as seat,
        ops.client(created["spectator_token"]) as spectator,
    ):
        view = seat.view(match_id)
        with pytest.raises(ApiError):
            seat.submit(match_id, {"type": "space_click", "space_id": "nowhere"}, 0)
        seat.submit(match_id, view["actions"][0]["action"], 0)
        stream = spectator.watch(match_id)
        next(stream)
        assert sample(ops.scrape(), "tablehost_watch_streams") == 1
        stream.close()
    with ops.client(hostile["seats"][0]["token"]) as looper, pytest.raises(ApiError) as info:
        looper.submit(hostile["match_id"], looper.view(hostile["match_id"])["actions"][0]["action"], 0)
    assert info.value.code == "guest/budget"
    text = ops.scrape()
    assert sample(text, "tablehost_moves_accepted_total", kind="move", by="person") == 1
    assert sample(text, "tablehost_moves_refused_total", reason="match/not_offered") == 1
    assert sample(text, "tablehost_moves_refused_total", reason="guest/budget") == 1
    assert (
        sample(text, "tablehost_budget_refusals_total", module="loops", budget="fuel")
        + sample(text, "tablehost_budget_refusals_total", module="loops", budget="wall_ms")
        == 1
    )
    assert sample(text, "tablehost_guest_call_seconds_count", module="tic_tac_toe", op="step") == 1
    assert sample(text, "tablehost_guest_call_seconds_count", module="tic_tac_toe", op="setup") == 1
    assert sample(text, "tablehost_guest_call_fuel_count", module="tic_tac_toe", op="step") == 1
    assert sample(text, "tablehost_guest_call_fuel_sum", module="tic_tac_toe", op="step") > 0
    # A step stopped by its budget gave no answer: counted as a refusal, not as fuel.
    assert sample(text, "tablehost_guest_call_fuel_count", module="loops", op="step") == 0
    # Module upload, two matches, one move: four write transactions, each timed.
    assert sample(text, "tablehost_store_commit_seconds_count") >= 4
    assert sample(text, "tablehost_requests_total", transport="grpc", method="SubmitAction", code="OK") == 1
    assert sample(text, "tablehost_requests_total", transport="grpc", method="SubmitAction", code="FAILED_PRECONDITION") == 1
    # CPU of handlers and of guest calls, counted for the breakdown of bench/grpc_latency.py.
    assert sample(text, "tablehost_request_cpu_seconds_total", method="SubmitAction") > 0
    assert sample(text, "tablehost_request_cpu_seconds_total", method="GetView") > 0
    assert sample(text, "tablehost_guest_call_cpu_seconds_total", module="tic_tac_toe", op="step") > 0
    assert sample(text, "tablehost_request_cpu_seconds_total", method="SubmitAction") > sample(
        text, "tablehost_guest_call_cpu_seconds_total", module="tic_tac_toe", op="step"
    )
    deadline = time.monotonic() + 5
    while sample(ops.scrape(), "tablehost_watch_streams") != 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sample(ops.scrape(), "tablehost_watch_streams") == 0


def test_garbage_collections_are_timed_by_generation() -> None:
    import gc

    from prometheus_client import generate_latest

    from tablehost.api.metrics import Metrics

    metrics = Metrics()
    hook = metrics.follow_gc()
    try:
        gc.collect(0)
        gc.collect(2)
    finally:
        gc.callbacks.remove(hook)
    text = generate_latest(metrics.registry).decode()
    assert sample(text, "tablehost_gc_pause_seconds_count", generation="0") >= 1
    assert sample(text, "tablehost_gc_pause_seconds_count", generation="2") >= 1
    assert sample(text, "tablehost_gc_pause_seconds_sum", generation="2") > 0


def test_health_follows_the_store(ops: Ops, monkeypatch: pytest.MonkeyPatch) -> None:
    def health() -> int:
        with grpc.insecure_channel(ops.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            return int(stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5).status)

    def until(status: int) -> int:
        deadline = time.monotonic() + 5
        while health() != status and time.monotonic() < deadline:
            time.sleep(0.02)
        return health()

    assert until(health_pb2.HealthCheckResponse.SERVING) == health_pb2.HealthCheckResponse.SERVING

    def unreachable() -> None:
        raise StoreUnavailable("the database went away (test)")

    with capture_logs() as events:
        monkeypatch.setattr(ops.registry.store, "ping", unreachable)
        assert until(health_pb2.HealthCheckResponse.NOT_SERVING) == health_pb2.HealthCheckResponse.NOT_SERVING
        assert sample(ops.scrape(), "tablehost_store_up") == 0
        time.sleep(0.3)  # several failed checks (every 0.05 s)
        monkeypatch.undo()
        assert until(health_pb2.HealthCheckResponse.SERVING) == health_pb2.HealthCheckResponse.SERVING
        time.sleep(0.2)  # several good checks
    # The outage is logged when it starts and when it ends, not at every check in between.
    assert [e["event"] for e in events if e["event"].startswith(("server.store", "store."))] == [
        "server.store_unreachable", "store.recovered",
    ]


def test_a_token_over_its_rate_is_refused_with_a_retry_hint_and_other_tokens_are_not(tmp_path: Path) -> None:
    ops = start(tmp_path, rate_limits=RateLimits(requests_per_s=1, burst=3), watches_per_token=1)
    try:
        with grpc.insecure_channel(ops.address) as channel:
            modules = pb_grpc.ModuleServiceStub(channel)
            matches = pb_grpc.MatchServiceStub(channel)
            admin = (("authorization", f"Bearer {ops.admin_token}"),)
            module_id = modules.UploadModule(
                pb.UploadModuleRequest(wasm=module_bytes("tic_tac_toe"), name="ttt"), metadata=admin
            ).module_id
            created = matches.CreateMatch(
                pb.CreateMatchRequest(module_id=module_id, seats=[pb.SeatRequest(), pb.SeatRequest()]),
                metadata=admin,
            )
            # The bucket (3, refilled during the upload) runs dry within a few quick requests.
            with pytest.raises(grpc.RpcError) as info:
                for _ in range(10):
                    modules.ListModules(pb.ListModulesRequest(), metadata=admin)
            error = info.value
            assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
            trailing = dict(error.trailing_metadata())  # type: ignore[attr-defined]
            assert trailing["tablehost-code"] == "request/rate_limited"
            assert 1 <= int(trailing["retry-after-ms"]) <= 1000
            # Another token has its own budget: one watch stream, then its cap.
            seat = (("authorization", f"Bearer {created.seats[0].token}"),)
            first = matches.WatchMatch(pb.WatchMatchRequest(match_id=created.match_id), metadata=seat)
            assert next(first).version == 0
            second = matches.WatchMatch(pb.WatchMatchRequest(match_id=created.match_id), metadata=seat)
            with pytest.raises(grpc.RpcError) as info:
                next(second)
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
            watch_trailing = dict(info.value.trailing_metadata())  # type: ignore[attr-defined]
            assert watch_trailing["tablehost-code"] == "request/too_many_watchers"
            assert int(watch_trailing["retry-after-ms"]) > 0
            first.cancel()
        text = ops.scrape()
        assert sample(text, "tablehost_rate_limited_total", kind="request") == 1
        assert sample(text, "tablehost_rate_limited_total", kind="watch") == 1
    finally:
        ops.registry.close_watchers()
        ops.server.stop(0).wait()
        ops.registry.close()


def test_a_token_bucket_refills_at_its_rate() -> None:
    now = [100.0]
    limiter = RateLimiter(RateLimits(requests_per_s=10, burst=2), clock=lambda: now[0])
    limiter.take("a")
    limiter.take("a")
    with pytest.raises(RateLimited) as info:
        limiter.take("a")
    assert info.value.retry_after_ms == 100  # one request back in 100 ms
    limiter.take("b")  # buckets are per token
    now[0] += 0.1001
    limiter.take("a")
    with pytest.raises(RateLimited):
        limiter.take("a")
    unlimited = RateLimiter(RateLimits(requests_per_s=0, burst=1))
    for _ in range(1000):
        unlimited.take("a")
    with pytest.raises(ValueError):
        RateLimits(requests_per_s=-1)


def test_a_store_that_cannot_be_reached_refuses_a_move_as_unavailable_and_changes_nothing(
    ops: Ops, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ops.client() as admin:
        ttt = admin.upload_module(module_bytes("tic_tac_toe"), "tic_tac_toe")["module_id"]
        created = admin.create_match(ttt, ["ann", "bob"])
    match_id = created["match_id"]
    real_append = ops.registry.store.append

    def lost(*args: object) -> None:
        raise StoreUnavailable("the database went away (test)")

    monkeypatch.setattr(ops.registry.store, "append", lost)
    with ops.client(created["seats"][0]["token"]) as seat:
        offered = seat.view(match_id)["actions"][0]["action"]
        with pytest.raises(ApiError) as info:
            seat.submit(match_id, offered, 0)
        assert (info.value.status, info.value.code) == (grpc.StatusCode.UNAVAILABLE, "store/unavailable")
        assert seat.view(match_id)["version"] == 0
        monkeypatch.setattr(ops.registry.store, "append", real_append)
        assert seat.submit(match_id, offered, 0)["version"] == 1
    text = ops.scrape()
    # Not the move's refusal: the server failed to store it (the same move then went through).
    assert sample(text, "tablehost_moves_failed_total", reason="store/unavailable") == 1
    assert sample(text, "tablehost_moves_refused_total", reason="store/unavailable") == 0
    assert sample(text, "tablehost_moves_accepted_total", kind="move", by="person") == 1


def test_a_taken_metrics_port_is_named_in_the_error() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"cannot serve metrics on 127.0.0.1:{port}"):
            Metrics().serve_http(port)


def test_every_journaled_move_is_counted_by_who_made_it(tmp_path: Path) -> None:
    """Only a seat's own request was counted: a server bot's answer and the host's moves for an
    absent seat were stored but left out of ``moves_accepted_total``."""
    from tablehost.api.auth import ADMIN, Principal
    from tablehost.clocks import TimeControl

    metrics = Metrics()
    reg = MatchRegistry(tmp_path / "data", synchronous="NORMAL", metrics=metrics)
    try:
        module = reg.upload_module(ADMIN, module_bytes("tic_tac_toe"), "ttt").sha256
        against_bot = reg.create_match(ADMIN, module, [("ann", "", False, ""), ("", "", False, "random")]).match_id
        ann = Principal("seat", against_bot, 1)
        served = reg.view(ann, against_bot)
        assert reg.submit(ann, against_bot, served.view.actions[0]["action"], 0).view.version == 2  # the bot answered
        control = TimeControl(main_ms=1_000, on_timeout="zombie")
        absent = reg.create_match(ADMIN, module, [("cy", ""), ("dee", "")], time_control=control).match_id
        assert reg.tick_clocks(at_ms=10**15) >= 1  # cy's clock ran out: the host moves for cy
        record = reg.record(ADMIN, absent)
        assert [m["by_host"] for m in record["moves"]] == [True]

        def value(**labels: str) -> float:
            return metrics.registry.get_sample_value("tablehost_moves_accepted_total", labels) or 0.0

        assert value(kind="move", by="person") == 1
        assert value(kind="move", by="bot") == 1
        assert value(kind="move", by="host") == 1
    finally:
        reg.close()


def test_matches_by_state_name_idle_ones_apart_from_the_lobbys_waiting_matches() -> None:
    """``tablehost_matches{state="waiting"}`` meant a started match idle over a minute, while
    ``waiting`` is the lobby's status of a match whose seats are not all taken: now ``idle``."""
    from datetime import UTC, datetime, timedelta

    from prometheus_client import generate_latest

    now = datetime.now(UTC)
    metrics = Metrics()
    metrics.watch_matches(lambda: [
        (False, now.isoformat()), (False, (now - timedelta(minutes=5)).isoformat()), (True, now.isoformat()),
    ])
    text = generate_latest(metrics.registry).decode()
    assert [sample(text, "tablehost_matches", state=s) for s in ("active", "idle", "over")] == [1, 1, 1]
    assert 'state="waiting"' not in text
    assert "this process's memory" in text  # the help says whose matches these are


def test_a_store_outage_is_logged_once_per_match_and_a_racing_process_s_move_at_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`clock.tick_failed` was logged at every tick (ten a second per timed match) while the
    database was down, and the harmless conflict of two processes making the same host move was
    a warning quoting the database's duplicate key."""
    from contextlib import contextmanager

    from tablehost.api.auth import ADMIN
    from tablehost.clocks import TimeControl

    reg = MatchRegistry(tmp_path / "data", synchronous="NORMAL")
    try:
        module = reg.upload_module(ADMIN, module_bytes("tic_tac_toe"), "ttt").sha256
        control = TimeControl(main_ms=1_000, on_timeout="zombie")
        match_id = reg.create_match(ADMIN, module, [("cy", ""), ("dee", "")], time_control=control).match_id
        real_claim = reg.store.claim

        @contextmanager
        def down(match_id: str) -> Iterator[None]:
            raise StoreUnavailable("the PostgreSQL database cannot be reached: (test)")
            yield

        @contextmanager
        def raced(match_id: str) -> Iterator[object]:
            with real_claim(match_id) as claim:
                def journal(kind: str, payload: dict[str, object]) -> None:
                    raise StoreConflict('a row with this key is stored already (duplicate key value violates '
                                        'unique constraint "moves_pkey")')
                yield type(claim)(claim.version, journal, claim.load_record)

        with capture_logs() as events:
            monkeypatch.setattr(reg.store, "claim", down)
            for _ in range(20):
                reg.tick_clocks(at_ms=10**15)  # cy's clock ran out: due at every tick
            monkeypatch.setattr(reg.store, "claim", raced)
            reg.tick_clocks(at_ms=10**15)
            monkeypatch.setattr(reg.store, "claim", real_claim)
            assert reg.tick_clocks(at_ms=10**15) == 1  # the store is back: the host moves for cy
        ticks = [(e["event"], e["log_level"]) for e in events if e["event"].startswith("clock.tick")]
        assert ticks == [
            ("clock.tick_failed", "warning"), ("clock.tick_conflict", "info"), ("clock.tick_resumed", "info"),
        ]
        assert [e["failed_ticks"] for e in events if e["event"] == "clock.tick_resumed"] == [20]
        assert "another process" in next(e["message"] for e in events if e["event"] == "clock.tick_conflict")
        assert reg.record(ADMIN, match_id)["moves"][0]["by_host"]
    finally:
        reg.close()


def test_adoption_failing_while_the_store_is_down_is_logged_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`clock.adopt_failed` was logged at every adoption (every 2 s) while the database was down."""
    import threading

    from tablehost.api import registry as registry_module
    from tablehost.api.timekeeper import Timekeeper

    monkeypatch.setattr(registry_module, "ADOPT_INTERVAL_S", 0.0)
    attempts, done = [0], threading.Event()

    class Store:  # what the timekeeper asks of a registry, with the store down for 5 adoptions
        def evict_idle(self) -> int:
            return 0

        def tick_clocks(self) -> int:
            return 0

        def adopt_matches(self) -> None:
            attempts[0] += 1
            if attempts[0] == 8:
                done.set()
            if attempts[0] <= 5:
                raise StoreUnavailable("the database went away (test)")

    keeper = Timekeeper(Store(), tick_s=0.001)  # type: ignore[arg-type]
    with capture_logs() as events:
        keeper.start()
        assert done.wait(10)
        keeper.stop()
    assert [e["event"] for e in events if e["event"].startswith("clock.adopt")] == [
        "clock.adopt_failed", "clock.adopt_resumed",
    ]
