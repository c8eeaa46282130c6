"""The gRPC API in-process: auth, status codes, views per token, records, watch, restart.

A real grpc server on a free loopback port, with a real sample module; the end-to-end
suite (test_e2e_server.py) does the same against a ``tablehost serve`` process.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from structlog.testing import capture_logs

from fixtures_guest import offering_guest_wasm
from tablehost.api import auth, interceptors, rate_limit
from tablehost.api import registry as registry_module
from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api._pb import tablehost_pb2_grpc as pb_grpc
from tablehost.api.interceptors import LOGGED_MATCH_ID_CHARS
from tablehost.api.registry import MatchRegistry
from tablehost.api.server import create_server
from tablehost.api.watch_slots import WatchSlots
from tablehost.cli_remote import BotError, run_bots
from tablehost.client import ApiError, TablehostClient

DIST = Path(
    os.environ.get("TABLEHOST_DIST_DIR", Path(__file__).resolve().parents[1] / "sample_games" / "dist")
)


def module_bytes(name: str) -> bytes:
    path = DIST / f"{name}.wasm"
    if not path.exists():
        pytest.skip(f"{path} is not built (make games)")
    return path.read_bytes()


@dataclass
class Host:
    address: str
    admin: TablehostClient
    module_id: str
    data_dir: Path
    registry: MatchRegistry
    server: grpc.Server

    def client(self, token: str | None) -> TablehostClient:
        return TablehostClient(self.address, token, timeout_s=10)


def start_host(data_dir: Path, store: str | None = None) -> Host:
    registry = MatchRegistry(data_dir, synchronous="NORMAL", store=store)
    server, port = create_server("127.0.0.1:0", registry, max_workers=32)
    server.start()
    address = f"127.0.0.1:{port}"
    admin = TablehostClient(address, registry.admin_token_path.read_text().strip(), timeout_s=10)
    module_id = admin.upload_module(module_bytes("tic_tac_toe"), "tic_tac_toe")["module_id"]
    return Host(address, admin, module_id, data_dir, registry, server)


def stop_host(host: Host) -> None:
    host.admin.close()
    host.registry.close_watchers()
    host.server.stop(0).wait()
    host.registry.close()


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    started = start_host(tmp_path_factory.mktemp("data"))
    yield started
    stop_host(started)


def refused(call: Any, *args: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        call(*args)
    return info.value


def new_match(host: Host) -> tuple[str, TablehostClient, TablehostClient, TablehostClient]:
    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    seat1, seat2 = (host.client(s["token"]) for s in created["seats"])
    return created["match_id"], seat1, seat2, host.client(created["spectator_token"])


def test_uploading_the_same_bytes_again_returns_the_same_module(host: Host) -> None:
    with capture_logs() as events:
        again = host.admin.upload_module(module_bytes("tic_tac_toe"), "another name")
    assert again["module_id"] == host.module_id and again["name"] == "tic_tac_toe"
    assert again["already_stored"] is True
    assert [e["ignored_name"] for e in events if e["event"] == "module.already_stored"] == ["another name"]
    assert "tablehost_call" in again["exports"]
    assert [m["module_id"] for m in host.admin.list_modules()].count(host.module_id) == 1
    assert refused(host.admin.get_module, "0" * 64).status == grpc.StatusCode.NOT_FOUND
    bad = refused(host.admin.upload_module, b"\0asm not really", "junk")
    assert bad.status == grpc.StatusCode.INVALID_ARGUMENT and bad.code == "module/invalid"


def test_each_token_gets_its_own_view_and_only_seats_act(host: Host) -> None:
    match_id, seat1, seat2, spectator = new_match(host)
    view1, view2, watching = seat1.view(match_id), seat2.view(match_id), spectator.view(match_id)
    assert (view1["viewer"], view2["viewer"], watching["viewer"]) == (1, 2, None)
    assert view1["active_player_ids"] == [1] and len(view1["actions"]) == 9
    assert view2["actions"] == [] and watching["actions"] == []

    offered = view1["actions"][0]["action"]
    not_yours = refused(seat2.submit, match_id, offered, 0)
    assert (not_yours.status, not_yours.code) == (grpc.StatusCode.FAILED_PRECONDITION, "match/not_your_turn")
    for outsider in (spectator, host.admin):
        assert refused(outsider.submit, match_id, offered, 0).status == grpc.StatusCode.PERMISSION_DENIED
    assert seat1.view(match_id)["version"] == 0

    other_match, *_ = new_match(host)
    for seat in (seat1, spectator):
        assert refused(seat.view, other_match).status == grpc.StatusCode.PERMISSION_DENIED
        assert refused(seat.submit, other_match, offered, 0).status == grpc.StatusCode.PERMISSION_DENIED


def test_a_viewers_view_is_built_once_per_version_and_rebuilt_after_each_change(host: Host) -> None:
    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    match_id = created["match_id"]
    ann, bob = (host.registry.authenticate(s["token"]) for s in created["seats"])
    seat1 = host.client(created["seats"][0]["token"])
    first = host.registry.view(ann, match_id)
    assert host.registry.view(ann, match_id) is first  # reused at the same version
    assert host.registry.view(bob, match_id) is not first and host.registry.view(bob, match_id).viewer == 2
    offered = first.view.actions[0]["action"]
    refused(seat1.submit, match_id, {"type": "space_click", "space_id": "z9"}, 0)
    assert host.registry.view(ann, match_id) is first  # a refused move changes nothing
    after = seat1.submit(match_id, offered, 0)
    fresh = host.registry.view(ann, match_id)
    assert fresh is not first and fresh.view.version == after["version"] == 1
    assert fresh.view.state != first.view.state
    # The cached view is the one the match builds now, and the wire carries it.
    assert fresh.view == host.registry._matches[match_id].match.view(1)
    assert seat1.view(match_id) == after


def test_refusals_carry_their_status_and_change_nothing(host: Host) -> None:
    match_id, seat1, seat2, _ = new_match(host)
    first = seat1.view(match_id)["actions"][0]["action"]
    assert seat1.submit(match_id, first, 0)["version"] == 1
    stale = refused(seat2.submit, match_id, seat2.view(match_id)["actions"][0]["action"], 0)
    assert (stale.status, stale.code) == (grpc.StatusCode.FAILED_PRECONDITION, "match/stale_version")
    taken = refused(seat2.submit, match_id, first, 1)
    assert (taken.status, taken.code) == (grpc.StatusCode.FAILED_PRECONDITION, "match/not_offered")
    unknown = refused(seat1.submit, match_id, {"type": "space_click", "space_id": "z9"}, 1)
    assert unknown.status == grpc.StatusCode.FAILED_PRECONDITION
    assert seat2.view(match_id)["version"] == 1


def test_a_module_over_grpcs_default_4_mib_message_reaches_the_module_check(host: Host) -> None:
    too_big_for_grpc_default = b"\0asm\x01\0\0\0" + b"\0" * (5 * 1024 * 1024)
    refusal = refused(host.admin.upload_module, too_big_for_grpc_default, "big")
    assert refusal.status == grpc.StatusCode.INVALID_ARGUMENT, refusal


def test_malformed_and_unknown_requests(host: Host) -> None:
    match_id, seat1, _, _ = new_match(host)
    stub = pb_grpc.MatchServiceStub(grpc.insecure_channel(host.address))
    metadata = host.admin._metadata
    seat_metadata = seat1._metadata

    def status_of(method: Any, request: Any, md: Any = metadata) -> grpc.StatusCode:
        with pytest.raises(grpc.RpcError) as info:
            method(request, metadata=md, timeout=10)
        return info.value.code()  # type: ignore[no-any-return]

    action = pb.Action(space_click=pb.SpaceClick(space_id="a1"))
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    assert (
        status_of(stub.SubmitAction, pb.SubmitActionRequest(match_id=match_id, action=action), seat_metadata)
        == invalid
    )
    no_kind = pb.SubmitActionRequest(match_id=match_id, action=pb.Action(), expected_version=0)
    assert status_of(stub.SubmitAction, no_kind, seat_metadata) == invalid
    assert status_of(stub.GetView, pb.GetViewRequest()) == invalid
    with_options = pb.CreateMatchRequest(module_id=host.module_id, seats=[pb.SeatRequest()] * 2)
    with_options.options.update({"speed": 2})
    assert status_of(stub.CreateMatch, with_options) == invalid
    assert status_of(stub.CreateMatch, pb.CreateMatchRequest(module_id=host.module_id)) == invalid

    assert status_of(stub.GetView, pb.GetViewRequest(match_id="m-nope")) == grpc.StatusCode.NOT_FOUND
    unknown_module = pb.CreateMatchRequest(module_id="f" * 64, seats=[pb.SeatRequest()] * 2)
    assert status_of(stub.CreateMatch, unknown_module) == grpc.StatusCode.NOT_FOUND

    assert (
        status_of(stub.GetView, pb.GetViewRequest(match_id=match_id), ()) == grpc.StatusCode.UNAUTHENTICATED
    )
    wrong = (("authorization", "Bearer ths_not-a-token"),)
    assert (
        status_of(stub.GetView, pb.GetViewRequest(match_id=match_id), wrong)
        == grpc.StatusCode.UNAUTHENTICATED
    )
    assert refused(seat1.create_match, host.module_id, ["a", "b"]).status == grpc.StatusCode.PERMISSION_DENIED


def test_every_method_of_both_services_refuses_a_request_without_a_token(host: Host) -> None:
    """The request wrapper is installed per method at registration: a method it missed would
    answer something else than UNAUTHENTICATED (or serve the request)."""
    channel = grpc.insecure_channel(host.address)
    try:
        for service in (pb.DESCRIPTOR.services_by_name[name] for name in ("ModuleService", "MatchService")):
            for method in service.methods:
                path = f"/{service.full_name}/{method.name}"
                request = getattr(pb, method.input_type.name)()
                call = (channel.unary_stream if method.server_streaming else channel.unary_unary)(
                    path, request_serializer=lambda m: m.SerializeToString(), response_deserializer=bytes
                )
                with pytest.raises(grpc.RpcError) as info:
                    answer = call(request, timeout=10)
                    if method.server_streaming:
                        next(iter(answer))
                assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED, path
    finally:
        channel.close()


def test_every_method_refuses_two_authorization_entries_whatever_they_say(tmp_path: Path) -> None:
    """(admin, seat) was served as the admin, (seat, admin) as the seat: the first entry won
    silently. Two entries are ambiguous, so every method, the streams included, refuses them."""
    own = start_host(tmp_path)
    channel = grpc.insecure_channel(own.address)
    try:
        created = own.admin.create_match(own.module_id, ["ann", "bob"])
        admin, seat = own.registry.admin_token_path.read_text().strip(), created["seats"][0]["token"]
        pairs = [(admin, seat), (seat, admin), (seat, seat)]
        for service in (pb.DESCRIPTOR.services_by_name[name] for name in ("ModuleService", "MatchService")):
            for method in service.methods:
                path = f"/{service.full_name}/{method.name}"
                request = getattr(pb, method.input_type.name)()
                if hasattr(request, "match_id"):
                    request.match_id = created["match_id"]
                call = (channel.unary_stream if method.server_streaming else channel.unary_unary)(
                    path, request_serializer=lambda m: m.SerializeToString(), response_deserializer=bytes
                )
                for first, second in pairs if method.name in ("GetView", "WatchMatch") else pairs[:1]:
                    metadata = (("authorization", f"Bearer {first}"), ("authorization", f"Bearer {second}"))
                    with pytest.raises(grpc.RpcError) as info:
                        answer = call(request, metadata=metadata, timeout=10)
                        if method.server_streaming:
                            next(iter(answer))
                    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED, path
                    assert "2 'authorization' metadata entries; send exactly one" in (info.value.details() or "")
        with own.client(seat) as one:
            assert one.view(created["match_id"])["version"] == 0, "one entry is served as before"
    finally:
        channel.close()
        stop_host(own)


def test_the_request_wrapper_refuses_a_method_that_streams_requests() -> None:
    streaming = SimpleNamespace(name="Chat", client_streaming=True, server_streaming=True)
    service = SimpleNamespace(name="Talk", methods=[streaming])
    wrapper = interceptors.RequestInterceptor(registry=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Talk.Chat streams requests"):
        wrapper.wrap_servicer(SimpleNamespace(Chat=lambda requests, context: None), service)  # type: ignore[arg-type]


def play_out(match_id: str, seats: list[TablehostClient]) -> dict[str, Any]:
    """Play the first offered action of whoever is active until game over."""
    while True:
        views = [seat.view(match_id) for seat in seats]
        if views[0]["game_over"]:
            return views[0]
        view = next(v for v in views if v["actions"])
        seats[view["viewer"] - 1].submit(match_id, view["actions"][0]["action"], view["version"])


def test_records_go_to_the_admin_any_time_and_to_players_after_game_over(host: Host) -> None:
    match_id, seat1, seat2, spectator = new_match(host)
    assert refused(seat1.record, match_id).status == grpc.StatusCode.PERMISSION_DENIED
    assert refused(spectator.record, match_id).status == grpc.StatusCode.PERMISSION_DENIED
    assert host.admin.record(match_id)["moves"] == []
    final = play_out(match_id, [seat1, seat2])
    record = seat1.record(match_id)
    assert record["format"] == "tablehost.record/2" and len(record["moves"]) == final["version"]
    assert spectator.record(match_id) == record
    over = refused(seat1.submit, match_id, {"type": "space_click", "space_id": "a1"}, final["version"])
    assert (over.status, over.code) == (grpc.StatusCode.FAILED_PRECONDITION, "match/over")
    summaries = {m["match_id"]: m for m in host.admin.list_matches()}
    assert summaries[match_id]["game_over"] and summaries[match_id]["version"] == final["version"]
    assert [m["match_id"] for m in seat1.list_matches()] == [match_id]


def test_watch_sends_a_view_after_every_change_until_game_over(host: Host) -> None:
    match_id, seat1, seat2, spectator = new_match(host)
    seen: list[int] = []
    ready = threading.Event()

    def watch() -> None:
        for view in spectator.watch(match_id):
            seen.append(view["version"])
            ready.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    assert ready.wait(10)
    seats = [seat1, seat2]
    while True:
        views = [seat.view(match_id) for seat in seats]
        if views[0]["game_over"]:
            break
        view = next(v for v in views if v["actions"])
        seats[view["viewer"] - 1].submit(match_id, view["actions"][-1]["action"], view["version"])
        deadline = threading.Event()
        for _ in range(100):  # watchers coalesce; wait until this change was seen
            if seen and seen[-1] == view["version"] + 1:
                break
            deadline.wait(0.01)
    watcher.join(10)
    assert not watcher.is_alive()
    assert seen == list(range(seen[-1] + 1))


def test_health_and_reflection_answer(host: Host) -> None:
    channel = grpc.insecure_channel(host.address)
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "tablehost.v1.MatchService", "tablehost.v1.ModuleService"):
        answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10
    )
    names = {s.name for r in responses for s in r.list_services_response.service}
    assert {"tablehost.v1.MatchService", "tablehost.v1.ModuleService", "grpc.health.v1.Health"} <= names


def test_one_log_event_per_request_with_its_context(host: Host) -> None:
    match_id, seat1, _, _ = new_match(host)
    view = seat1.view(match_id)
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as events:
        seat1.submit(match_id, view["actions"][0]["action"], 0)
        refused(seat1.submit, match_id, view["actions"][0]["action"], 0)
    requests = [e for e in events if e["event"] == "api.request"]
    assert [(e["method"], e["match_id"], e["seat"], e["outcome"]) for e in requests] == [
        ("SubmitAction", match_id, "seat:1", "OK"),
        ("SubmitAction", match_id, "seat:1", "FAILED_PRECONDITION"),
    ]
    assert requests[0]["version"] == 1 and requests[0]["latency_ms"] >= 0
    assert {e["transport"] for e in requests} == {"grpc"}


def test_a_watch_the_client_cancels_is_logged_and_counted_as_cancelled(host: Host) -> None:
    match_id, *_ = new_match(host)
    channel = grpc.insecure_channel(host.address)
    stub = pb_grpc.MatchServiceStub(channel)
    token = host.registry.admin_token_path.read_text().strip()
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as events:
        stream = stub.WatchMatch(
            pb.WatchMatchRequest(match_id=match_id), metadata=(("authorization", f"Bearer {token}"),)
        )
        next(stream)
        stream.cancel()
        for _ in range(200):  # the server notices the cancel at its next wait (a fraction of a second)
            watches = [e for e in events if e["event"] == "api.request" and e["method"] == "WatchMatch"]
            if watches:
                break
            time.sleep(0.05)
    channel.close()
    assert [(e["outcome"], e["messages"]) for e in watches] == [("CANCELLED", 1)]


def test_a_huge_match_id_is_logged_cut_to_its_cap(host: Host) -> None:
    """A client's match_id is logged before its token is checked: a 1 MiB one (no token, or a
    seat token of another match) must not become a 1 MiB log line."""
    match_id, seat1, _, _ = new_match(host)
    huge = "m-" + "x" * (1 << 20)
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as events:
        refused(seat1.view, huge)
        refused(host.client(None).view, huge)
    requests = [e for e in events if e["event"] == "api.request"]
    # A seat token's request is refused by the id's length (check_identifier), not echoing it.
    assert [e["outcome"] for e in requests] == ["INVALID_ARGUMENT", "UNAUTHENTICATED"]
    for event in requests:
        assert event["match_id"].startswith("m-xxx") and len(event["match_id"]) <= LOGGED_MATCH_ID_CHARS
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as events:
        seat1.view(match_id)
    assert [e["match_id"] for e in events if e["event"] == "api.request"] == [match_id]


def test_a_request_hashes_its_token_once(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    """The request gate hands the hash it took for the rate limit to ``authenticate``."""
    match_id, seat1, _, _ = new_match(host)
    hashed: list[str] = []

    def counting(token: str) -> str:
        hashed.append(token)
        return auth.hash_token(token)

    monkeypatch.setattr(rate_limit, "hash_token", counting)
    monkeypatch.setattr(registry_module, "hash_token", counting)
    seat1.view(match_id)
    assert len(hashed) == 1
    hashed.clear()
    refused(host.client("ths_unknown").view, match_id)
    assert hashed == ["ths_unknown"]


def test_a_clock_over_a_year_is_refused_and_nothing_is_created(host: Host) -> None:
    """A seat's time grows by its increment each move: 2**62 ms main and increment passed
    2**64 after six moves, and every view of the match failed (INTERNAL) from then on."""
    before = len(host.admin.list_matches())
    year_ms = 365 * 24 * 3600 * 1000
    for control in ({"main_ms": 2**62, "increment_ms": 2**62}, {"main_ms": 1000, "increment_ms": year_ms + 1}):
        error = refused(lambda c: host.admin.create_match(host.module_id, ["ann", "bob"], time_control=c), control)
        assert error.status == grpc.StatusCode.INVALID_ARGUMENT and "at most" in error.details
    assert len(host.admin.list_matches()) == before
    created = host.admin.create_match(host.module_id, ["ann", "bob"], time_control={"main_ms": year_ms})
    assert created["match_id"]


def test_a_clock_under_a_second_is_refused_and_nothing_is_created(host: Host) -> None:
    """main_ms or per_move_ms of 1 ended the match on time at the first view."""
    before = len(host.admin.list_matches())
    for control, says in [
        ({"main_ms": 1}, "time_control: main_ms is at least 1000 ms, got 1"),
        ({"main_ms": 999, "increment_ms": 5000}, "main_ms is at least 1000 ms, got 999"),
        ({"per_move_ms": 1}, "time_control: per_move_ms is at least 1000 ms, got 1"),
    ]:
        error = refused(lambda c: host.admin.create_match(host.module_id, ["ann", "bob"], time_control=c), control)
        assert error.status == grpc.StatusCode.INVALID_ARGUMENT and says in error.details, error.details
    assert len(host.admin.list_matches()) == before
    for control in ({"main_ms": 1000, "increment_ms": 1}, {"per_move_ms": 1000}, {}):
        assert host.admin.create_match(host.module_id, ["ann", "bob"], time_control=control)["match_id"]


def test_a_time_control_that_would_be_read_as_another_is_refused(host: Host) -> None:
    """An increment with neither main nor per-move time made an untimed match, and an
    on_timeout no TimeoutPolicy names was read as FORFEIT: both are refused, nothing created."""
    stub = pb_grpc.MatchServiceStub(grpc.insecure_channel(host.address))
    seats = [pb.SeatRequest(username="ann"), pb.SeatRequest(username="bob")]
    before = len(host.admin.list_matches())
    for control, says in [
        (pb.TimeControl(increment_ms=5000), "time_control: increment_ms 5000 needs main_ms"),
        (pb.TimeControl(increment_ms=5000, per_move_ms=0, main_ms=0), "increment_ms 5000 needs main_ms"),
        (pb.TimeControl(on_timeout=pb.TIMEOUT_POLICY_ZOMBIE),
         "time_control: on_timeout TIMEOUT_POLICY_ZOMBIE needs a clock (main_ms or per_move_ms)"),
        (pb.TimeControl(main_ms=60_000, on_timeout=7),  # type: ignore[arg-type]
         ("time_control: on_timeout 7 is not a TimeoutPolicy (TIMEOUT_POLICY_UNSPECIFIED (0), "
          "TIMEOUT_POLICY_FORFEIT (1), TIMEOUT_POLICY_ZOMBIE (2))")),
        (pb.TimeControl(on_timeout=7), "on_timeout 7 is not a TimeoutPolicy"),  # type: ignore[arg-type]
    ]:
        request = pb.CreateMatchRequest(module_id=host.module_id, seats=seats, time_control=control)
        with pytest.raises(grpc.RpcError) as info:
            stub.CreateMatch(request, metadata=host.admin._metadata, timeout=10)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, control
        assert says in (info.value.details() or ""), info.value.details()
        assert dict(info.value.trailing_metadata() or ()).get("tablehost-code") == "request/invalid"
    assert len(host.admin.list_matches()) == before
    for control in (pb.TimeControl(), pb.TimeControl(main_ms=60_000, on_timeout=pb.TIMEOUT_POLICY_UNSPECIFIED),
                    pb.TimeControl(per_move_ms=5_000, on_timeout=pb.TIMEOUT_POLICY_ZOMBIE)):
        request = pb.CreateMatchRequest(module_id=host.module_id, seats=seats, time_control=control)
        assert stub.CreateMatch(request, metadata=host.admin._metadata, timeout=10).match_id


def test_create_match_refuses_seats_it_would_drop_and_sends_nothing(host: Host) -> None:
    """A bot or open seat numbered past the usernames was silently dropped (the match started
    with every seat a person's)."""
    before = len(host.admin.list_matches())
    with pytest.raises(ValueError, match=r"seats \[9\]"):
        host.admin.create_match(host.module_id, ["ann", "bob"], bots={9: "random"})
    with pytest.raises(ValueError, match=r"seats \[0, 3\]"):
        host.admin.create_match(host.module_id, ["ann", "bob"], open_seats=[0, 1, 3])
    assert len(host.admin.list_matches()) == before


def test_a_named_open_seat_is_refused_not_stripped_of_its_name(host: Host) -> None:
    """An open seat's name is its joiner's: a name given for it was dropped unseen."""
    before = len(host.admin.list_matches())
    with pytest.raises(ApiError) as refused:
        host.admin.create_match(host.module_id, ["ann", "bob"], open_seats=[2])
    assert refused.value.status == grpc.StatusCode.INVALID_ARGUMENT
    assert "seat 2 is open: its name comes from whoever joins it" in refused.value.details
    assert len(host.admin.list_matches()) == before
    created = host.admin.create_match(host.module_id, ["ann", ""], open_seats=[2])
    assert created["open_seats"] == [2]


DRIVER_TEXT = 'connection failed: connection to server at "10.1.2.3", port 5432 failed: Connection refused'


def test_a_store_outage_tells_players_a_fixed_reason_and_when_to_retry(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database driver's text names the database's host and port: a player gets a fixed
    reason, a log ref and a retry hint; the admin gets the driver's text; nothing changed."""
    from tablehost.store.errors import StoreUnavailable

    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    match_id = created["match_id"]
    ann = host.client(created["seats"][0]["token"])
    view = ann.view(match_id)

    def down(*args: Any) -> None:
        raise StoreUnavailable(f"the PostgreSQL database cannot be reached: {DRIVER_TEXT}")

    monkeypatch.setattr(host.registry.store, "append", down)
    with pytest.raises(ApiError) as refused:
        ann.submit(match_id, view["actions"][0]["action"], view["version"])
    assert refused.value.status == grpc.StatusCode.UNAVAILABLE and refused.value.code == "store/unavailable"
    assert "10.1.2.3" not in refused.value.details and "5432" not in refused.value.details
    assert "cannot reach its database just now" in refused.value.details and "log ref" in refused.value.details
    assert refused.value.retry_after_ms == 1000
    with pytest.raises(ApiError) as told:
        host.admin.abort(match_id)
    assert "10.1.2.3" in told.value.details, "the admin is told what the driver said"
    monkeypatch.undo()
    assert ann.view(match_id)["version"] == view["version"], "nothing changed"


def test_create_match_answers_a_timed_match_with_its_clocks(host: Host) -> None:
    """CreateMatch's view is the spectator's: a timed match's clocks and time control, as GetView
    shows them (they were missing: clocks [] and time_control {})."""
    created = host.admin.create_match(host.module_id, ["ann", "bob"], time_control={"main_ms": 60_000})
    view = created["view"]
    assert view["time_control"]["main_ms"] == 60_000
    assert [(c["player_id"], c["running"]) for c in view["clocks"]] == [(1, True), (2, False)]
    assert 0 < view["clocks"][0]["remaining_ms"] <= 60_000 and view["clocks"][1]["remaining_ms"] == 60_000
    untimed = host.admin.create_match(host.module_id, ["ann", "bob"])["view"]
    assert (untimed["clocks"], untimed["time_control"]) == ([], {})


def test_a_restarted_server_resumes_matches_and_tokens(tmp_path: Path) -> None:
    first = start_host(tmp_path)
    created = first.admin.create_match(first.module_id, ["ann", "bob"])
    match_id, token1 = created["match_id"], created["seats"][0]["token"]
    with first.client(token1) as seat1:
        view = seat1.view(match_id)
        seat1.submit(match_id, view["actions"][4]["action"], 0)
    stop_host(first)

    second = start_host(tmp_path)
    try:
        with second.client(token1) as seat1, second.client(created["seats"][1]["token"]) as seat2:
            assert seat1.view(match_id)["version"] == 1
            final = play_out(match_id, [seat1, seat2])
            assert final["game_over"]
            assert second.admin.record(match_id)["moves"][0]["view_action"] == view["actions"][4]["action"]
    finally:
        stop_host(second)


def test_undo_through_the_api_restores_the_view(host: Host) -> None:
    hearts = host.admin.upload_module(module_bytes("hearts"), "hearts")["module_id"]
    created = host.admin.create_match(hearts, ["a", "b", "c", "d"])
    match_id = created["match_id"]
    with host.client(created["seats"][0]["token"]) as seat1:
        before = seat1.view(match_id)
        choice = next(a for a in before["actions"] if a["intent"] == "choice")
        after = seat1.submit(match_id, choice["action"], before["version"])
        undo = next((a for a in after["actions"] if a["intent"] == "undo"), None)
        assert undo is not None, "a passing selection is undoable"
        undone = seat1.undo(match_id, after["version"])
        assert undone["version"] == after["version"] + 1
        assert undone["state"] == before["state"]
        again = seat1.submit(match_id, choice["action"], undone["version"])
        via_action = seat1.submit(match_id, undo["action"], again["version"])  # the offered undo action
        assert via_action["state"] == before["state"]
        refusal = refused(seat1.undo, match_id, via_action["version"])  # every move is taken back
        assert (refusal.status, refusal.code) == (grpc.StatusCode.FAILED_PRECONDITION, "match/nothing_to_undo")
        bare_undo = {"type": "button_click", "button": {"id": "tablehost.undo"}}  # the id alone, as a user types it
        refusal = refused(seat1.submit, match_id, bare_undo, via_action["version"])
        assert (refusal.status, refusal.code) == (grpc.StatusCode.FAILED_PRECONDITION, "match/nothing_to_undo")


A1 = {"type": "space_click", "space_id": "a1"}


def test_a_waiting_match_refuses_play_as_waiting_in_the_order_of_a_started_match(host: Host) -> None:
    """A match with open seats answered moves, undos, resignations and its record with NOT_FOUND
    `match/unknown: no match m-...`, while its view, watch and listing showed it WAITING."""
    created = host.admin.create_match(host.module_id, ["ann", ""], open_seats=[2])
    match_id = created["match_id"]
    ann, spectator = host.client(created["seats"][0]["token"]), host.client(created["spectator_token"])
    for call, args in (
        (ann.submit, (match_id, A1, 0)),
        (ann.undo, (match_id, 0)),
        (ann.resign, (match_id,)),
        (host.admin.record, (match_id,)),
    ):
        refusal = refused(call, *args)
        assert (refusal.status, refusal.code) == (grpc.StatusCode.FAILED_PRECONDITION, "match/waiting"), call
        assert f"match {match_id} waits for 1 open seat (2)" in refusal.details
    # The token's rights come first, as on a started match: a spectator (or the admin) cannot
    # act, and a seat or spectator gets no record before game over.
    for outsider in (spectator, host.admin):
        for call, args in ((outsider.submit, (match_id, A1, 0)), (outsider.undo, (match_id, 0))):
            assert refused(call, *args).status == grpc.StatusCode.PERMISSION_DENIED
    assert refused(spectator.resign, match_id).status == grpc.StatusCode.PERMISSION_DENIED
    for player in (ann, spectator):
        assert refused(player.record, match_id).status == grpc.StatusCode.PERMISSION_DENIED
    _, other_seat, *_ = new_match(host)
    assert refused(other_seat.submit, match_id, A1, 0).status == grpc.StatusCode.PERMISSION_DENIED
    assert refused(host.admin.record, "m-0000000000000000").code == "match/unknown"
    assert ann.view(match_id)["status"] == "waiting"  # nothing changed
    bob = host.client(spectator.join(match_id, "bob")["token"])
    moved = ann.submit(match_id, A1, 0)  # the last join started the game
    assert moved["version"] == 1 and bob.view(match_id)["active_player_ids"] == [2]
    assert host.admin.record(match_id)["moves"][0]["player_id"] == 1


def test_a_match_aborted_while_it_waited_is_over_and_has_no_record(host: Host) -> None:
    created = host.admin.create_match(host.module_id, ["ann", ""], open_seats=[2])
    match_id = created["match_id"]
    ann, spectator = host.client(created["seats"][0]["token"]), host.client(created["spectator_token"])
    assert host.admin.abort(match_id)["status"] == "aborted"
    for call, args in ((ann.submit, (match_id, A1, 0)), (ann.resign, (match_id,)), (host.admin.abort, (match_id,))):
        refusal = refused(call, *args)
        assert (refusal.status, refusal.code) == (grpc.StatusCode.FAILED_PRECONDITION, "match/over"), call
    assert refused(spectator.submit, match_id, A1, 0).status == grpc.StatusCode.PERMISSION_DENIED
    for reader in (host.admin, ann, spectator):  # over: every token may ask, and is told why there is none
        refusal = refused(reader.record, match_id)
        assert (refusal.status, refusal.code) == (grpc.StatusCode.FAILED_PRECONDITION, "match/never_started")
        assert "aborted before it started" in refusal.details


def test_a_waiting_or_aborted_match_lists_every_seat_in_its_view(host: Host) -> None:
    """`TableState.players` is every seat in seat order; a waiting match's view had none, so the
    command line said `viewing as player 1 (?)`."""
    created = host.admin.create_match(host.module_id, ["ann", ""], open_seats=[2])
    match_id = created["match_id"]
    ann, spectator = host.client(created["seats"][0]["token"]), host.client(created["spectator_token"])
    seats = [(1, "ann", "#c0392b"), (2, "", "#2980b9")]
    listed = next(m for m in host.admin.list_matches() if m["match_id"] == match_id)
    assert [(p["player_id"], p["username"], p["color"]) for p in listed["players"]] == seats
    stream = ann.watch(match_id)
    watched = next(stream)
    stream.close()
    for view in (created["view"], ann.view(match_id), spectator.view(match_id), watched):
        assert view["status"] == "waiting"
        assert [(p["player_id"], p["username"], p["color"]) for p in view["state"]["players"]] == seats
        assert view["state"]["spaces"] == [] and view["actions"] == [] and view["active_player_ids"] == []
    host.admin.abort(match_id)
    aborted = ann.view(match_id)
    assert aborted["status"] == "aborted"
    assert [(p["player_id"], p["username"], p["color"]) for p in aborted["state"]["players"]] == seats


def test_unbounded_names_are_refused_before_anything_is_stored(host: Host) -> None:
    too_long = "x" * 1_000_000
    for usernames, colors in (
        ([too_long, "bob"], None),
        (["ann\nbob", "cid"], None),
        (["ann", "bob"], ["#fff", "red; background: url(x)"]),
        (["ann", "bob"], ["#fff", "c" * 33]),
    ):
        refusal = refused(host.admin.create_match, host.module_id, usernames, colors)
        assert refusal.status == grpc.StatusCode.INVALID_ARGUMENT, refusal
    accepted = host.admin.create_match(host.module_id, ["a" * 64, ""], ["#a1B", ""])
    assert [s["username"] for s in accepted["seats"]] == ["a" * 64, "player2"]
    before = len(host.admin.list_matches())
    for name in ("n" * 2_000_000, "n" * 201, "tab\tname"):
        refusal = refused(host.admin.upload_module, module_bytes("tic_tac_toe"), name)
        assert refusal.status == grpc.StatusCode.INVALID_ARGUMENT and "module name" in refusal.details
    assert len(host.admin.list_matches()) == before
    assert all(len(m["name"]) <= 200 for m in host.admin.list_modules())


def test_a_response_over_the_send_limit_is_refused_and_the_match_stays_readable(tmp_path: Path) -> None:
    registry = MatchRegistry(tmp_path, synchronous="NORMAL")
    server, port = create_server("127.0.0.1:0", registry, max_workers=8, max_response_bytes=3000)
    server.start()
    address = f"127.0.0.1:{port}"
    try:
        with TablehostClient(address, registry.admin_token_path.read_text().strip(), timeout_s=10) as admin:
            module_id = admin.upload_module(module_bytes("tic_tac_toe"), "tic_tac_toe")["module_id"]
            created = admin.create_match(module_id, ["ann", "bob"])
            match_id = created["match_id"]
            seats = [TablehostClient(address, s["token"], timeout_s=10) for s in created["seats"]]
            for _ in range(4):
                view = next(v for v in (s.view(match_id) for s in seats) if v["actions"])
                seats[view["viewer"] - 1].submit(match_id, view["actions"][0]["action"], view["version"])
            too_large = refused(admin.record, match_id)
            assert too_large.status == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "over the server's response limit of 3000 bytes" in too_large.details
            assert seats[0].view(match_id)["version"] == 4  # later reads still work
            for seat in seats:
                seat.close()
    finally:
        registry.close_watchers()
        server.stop(0).wait()
        registry.close()


def test_watch_streams_are_capped_per_token_and_leave_threads_for_moves(tmp_path: Path) -> None:
    registry = MatchRegistry(tmp_path, synchronous="NORMAL")
    server, port = create_server("127.0.0.1:0", registry, max_workers=8)  # 6 watchers at most
    server.start()
    address = f"127.0.0.1:{port}"
    clients: list[TablehostClient] = []

    def client(token: str) -> TablehostClient:
        clients.append(TablehostClient(address, token, timeout_s=5))
        return clients[-1]

    try:
        admin = client(registry.admin_token_path.read_text().strip())
        module_id = admin.upload_module(module_bytes("tic_tac_toe"), "tic_tac_toe")["module_id"]
        created = admin.create_match(module_id, ["ann", "bob"])
        match_id = created["match_id"]
        seat1, seat2 = (client(s["token"]) for s in created["seats"])
        spectator = client(created["spectator_token"])
        streams = [seat1.watch(match_id) for _ in range(4)]
        assert all(next(stream)["version"] == 0 for stream in streams)
        per_token = refused(next, seat1.watch(match_id))
        assert per_token.status == grpc.StatusCode.RESOURCE_EXHAUSTED and "this token" in per_token.details
        streams += [spectator.watch(match_id) for _ in range(2)]
        assert all(next(stream)["version"] == 0 for stream in streams[4:])
        server_wide = refused(next, seat2.watch(match_id))
        assert server_wide.status == grpc.StatusCode.RESOURCE_EXHAUSTED and "6 watch" in server_wide.details
        view = seat1.view(match_id)  # two threads are left for moves
        assert seat1.submit(match_id, view["actions"][0]["action"], 0)["version"] == 1
        streams.pop().close()  # cancelling frees its slot once the server notices
        for _ in range(40):
            try:
                assert next(seat2.watch(match_id))["version"] == 1
                break
            except ApiError:
                threading.Event().wait(0.1)
        else:
            pytest.fail("a cancelled watch stream kept its slot")
    finally:
        registry.close_watchers()
        server.stop(0).wait()
        for opened in clients:
            opened.close()
        registry.close()


def _all_closed(slots: WatchSlots) -> bool:
    """Whether ``slots`` count no open stream within 10 s (a stream's end is seen a moment after
    its client goes)."""
    deadline = time.monotonic() + 10
    while slots.open and time.monotonic() < deadline:
        time.sleep(0.02)
    return slots.open == 0


@pytest.mark.parametrize("moment", ["before_the_first_view", "with_the_first_view_made"])
def test_a_watch_cancelled_before_its_first_message_gives_its_slot_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str
) -> None:
    """Suspected: a WatchMatch cancelled before its first message kept its watch slot, so a client
    that reconnected a few times locked its token out. The cancel lands while the stream holds its
    slot and its first view is not made yet, or is made but not sent (handed on only once the
    server knows the client is gone), three times over: each time the slot comes back, and the
    token (one stream at most) is then served a new WatchMatch."""
    registry = MatchRegistry(tmp_path, synchronous="NORMAL")
    slots = WatchSlots(6, per_token=1)
    server, port = create_server("127.0.0.1:0", registry, max_workers=8, watch_slots=slots)
    server.start()
    address = f"127.0.0.1:{port}"
    channel = grpc.insecure_channel(address)
    try:
        with TablehostClient(address, registry.admin_token_path.read_text().strip(), timeout_s=10) as admin:
            module_id = admin.upload_module(module_bytes("tic_tac_toe"), "tic_tac_toe")["module_id"]
            created = admin.create_match(module_id, ["ann", "bob"])
        match_id, token = created["match_id"], created["seats"][0]["token"]
        real_watch = registry.watch
        entered, release = threading.Event(), threading.Event()

        def first_message_held(principal: Any, match: str, is_active: Any) -> Iterator[Any]:
            views = real_watch(principal, match, is_active)
            first = next(views) if moment == "with_the_first_view_made" else None
            entered.set()  # the stream holds its slot; nothing is sent yet
            assert release.wait(10)
            deadline = time.monotonic() + 10
            while is_active() and time.monotonic() < deadline:  # until the server saw the cancel
                time.sleep(0.01)
            if first is not None:
                yield first
            yield from views

        monkeypatch.setattr(registry, "watch", first_message_held)
        stub = pb_grpc.MatchServiceStub(channel)
        for _ in range(3):
            entered.clear()
            release.clear()
            call = stub.WatchMatch(
                pb.WatchMatchRequest(match_id=match_id), metadata=(("authorization", f"Bearer {token}"),)
            )
            assert entered.wait(10) and slots.open == 1
            call.cancel()
            release.set()
            assert _all_closed(slots), "the cancelled stream kept its slot"
        monkeypatch.setattr(registry, "watch", real_watch)
        with TablehostClient(address, token, timeout_s=10) as seat:
            stream = seat.watch(match_id)
            assert next(stream)["version"] == 0, "the token may watch again"
            stream.close()
    finally:
        channel.close()
        registry.close_watchers()
        server.stop(0).wait()
        registry.close()


@pytest.mark.parametrize(
    ("action", "version", "phrase"),
    [
        ({"type": "piece_click", "space_id": "a1", "index": -1}, 0, "piece index is 0 to"),
        ({"type": "piece_click", "space_id": "a1", "index": 2**40}, 0, "piece index is 0 to"),
        ({"type": "piece_click", "space_id": "a1", "index": "3"}, 0, "'index' of type int"),
        (["space_click", "a1"], 0, "an action is a dict"),
        ({"type": "teleport"}, 0, 'unknown action type "teleport"'),
        ({"space_id": "a1"}, 0, 'the action has no "type" (one of space_click, piece_click, button_click)'),
        ({"type": None, "space_id": "a1"}, 0, 'the action has no "type"'),
        ({"type": ["space_click"]}, 0, 'the action\'s "type" is a string such as space_click, got list'),
        ({"type": "button_click", "button": {"id": 7}}, 0, "button's 'id' is a str"),
        ({"type": "space_click", "space_id": "a1", "spaceid": "b2"}, 0,
         "a space_click has no key 'spaceid' (its keys: type, space_id)"),
        ({"type": "space_click", "space_id": "a1", "k" * 10_000: 1}, 0,
         "a space_click has no key '" + "k" * 40 + "' (its keys"),
        ({"type": "button_click", "button": {"id": "pass", "colour": "red"}}, 0,
         "a button has no key 'colour' (its keys: id, label, location, disabled)"),
        ({"type": "space_click", "space_id": "a1"}, -1, "expected_version is a match version"),
        ({"type": "space_click", "space_id": "a1"}, 2**64, "expected_version is a match version"),
    ],
)
def test_a_malformed_action_is_a_clear_value_error_before_anything_is_sent(
    host: Host, action: Any, version: int, phrase: str
) -> None:
    with host.client("ths_never-sent") as client, pytest.raises(ValueError, match=re.escape(phrase)):
        client.submit("m-1", action, version)


def test_an_unknown_action_type_is_named_by_its_first_characters_only(host: Host) -> None:
    """The type is whatever the caller sent: a 100 KB one must not come back whole."""
    with host.client("ths_never-sent") as client, pytest.raises(ValueError) as refused:
        client.submit("m-1", {"type": "t" * 100_000}, 0)
    assert str(refused.value).startswith('unknown action type "' + "t" * 40 + '"...; expected one of')
    assert len(str(refused.value)) < 200


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("action", "version", "said"),
    [
        ({"type": "space_click", "space_id": ["x"] * 100_000}, 0,
         "a space_click needs 'space_id' of type str, got a list"),
        ({"type": "space_click", "space_id": nested(100_000)}, 0,
         "a space_click needs 'space_id' of type str, got a list"),
        ({"type": "piece_click", "space_id": "a1", "index": "9" * 100_000}, 0,
         "a piece_click needs 'index' of type int, got \"" + "9" * 40 + '"...'),
        ({"type": "button_click", "button": {"id": "pass", "label": {"k": "v" * 100_000}}}, 0,
         "a button's 'label' is a str, got a dict"),
        pytest.param({"type": "space_click", "space_id": "a1"}, 10**5000,
                     "expected_version is a match version, an int from 0 to 9223372036854775807; "
                     "got an int over 128 bits", id="version-of-5000-digits"),
        ({"type": "space_click", "space_id": "a1"}, "1" * 100_000,
         'expected_version is a match version, an int from 0 to 9223372036854775807; got "'
         + "1" * 40 + '"...'),
    ],
)
def test_a_malformed_action_repeats_only_a_short_part_of_what_was_sent(
    host: Host, action: Any, version: Any, said: str
) -> None:
    """The caller's value is named by its type, or its first 40 characters: a huge one never comes
    back whole, a deeply nested one never overflows the recursion limit being printed."""
    with host.client("ths_never-sent") as client, pytest.raises(ValueError) as refused:
        client.submit("m-1", action, version)
    assert str(refused.value) == said


def test_undo_with_a_negative_version_is_a_clear_value_error(host: Host) -> None:
    with host.client("ths_never-sent") as client, pytest.raises(ValueError, match="expected_version"):
        client.undo("m-1", -5)


# ---------------------------------------------------------------- bots (tablehost bots, demo)


def test_bots_fail_fast_when_the_game_fails_and_stop_each_other(host: Host) -> None:
    failing = host.admin.upload_module(offering_guest_wasm("hostile_trap"), "step_traps")["module_id"]
    created = host.admin.create_match(failing, ["ann", "bob"])
    started = time.monotonic()
    with pytest.raises(BotError) as info:
        run_bots(host.address, created["match_id"], [s["token"] for s in created["seats"]], seed=1)
    assert info.value.status == grpc.StatusCode.ABORTED and "seat 1" in info.value.details
    assert time.monotonic() - started < 10


def test_bots_refuse_tokens_that_cannot_play_naming_them(host: Host) -> None:
    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    match_id, (seat1, seat2) = created["match_id"], (s["token"] for s in created["seats"])
    other = host.admin.create_match(host.module_id, ["cid", "dee"])["seats"][0]["token"]
    admin_token = host.registry.admin_token_path.read_text().strip()
    cases = [
        (
            [seat1, created["spectator_token"]],
            grpc.StatusCode.FAILED_PRECONDITION,
            created["spectator_token"],
        ),
        ([admin_token, seat2], grpc.StatusCode.FAILED_PRECONDITION, admin_token),
        ([seat1, other], grpc.StatusCode.PERMISSION_DENIED, other),
        ([seat1, seat2, seat1], grpc.StatusCode.INVALID_ARGUMENT, seat1),
    ]
    for tokens, status, culprit in cases:
        started = time.monotonic()
        with pytest.raises(BotError) as info:
            run_bots(host.address, match_id, tokens, seed=1, give_up_s=20)
        assert info.value.status == status and culprit[:10] in info.value.details, info.value
        assert time.monotonic() - started < 10
    assert host.admin.view(match_id)["version"] == 0  # no bot acted before every token was checked


def test_a_lone_bot_says_what_it_waits_for_and_gives_up(
    host: Host, capsys: pytest.CaptureFixture[str]
) -> None:
    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    with pytest.raises(BotError) as info:
        run_bots(
            host.address,
            created["match_id"],
            [created["seats"][0]["token"]],
            give_up_s=1.5,
            notice_every_s=0.5,
        )
    assert info.value.status == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "seat 2 (bob), which no bot here plays" in info.value.details
    assert "waiting for seat 2 (bob), which no bot here plays" in capsys.readouterr().err
    assert host.admin.view(created["match_id"])["version"] == 1  # the lone bot played its turn


def test_bots_say_at_once_which_seats_they_play_and_what_they_wait_for(
    host: Host, capsys: pytest.CaptureFixture[str]
) -> None:
    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    with pytest.raises(BotError):
        run_bots(host.address, created["match_id"], [created["seats"][0]["token"]], give_up_s=3.0,
                 notice_every_s=600.0, first_notice_s=1.0)
    err = capsys.readouterr().err
    assert f"match {created['match_id']}: 1 bot(s) playing seat 1 (ann)" in err
    assert "waiting for seat 2 (bob), which no bot here plays" in err  # long before the 600 s period


def test_bots_play_a_match_to_the_end(host: Host) -> None:
    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    finals = run_bots(host.address, created["match_id"], [s["token"] for s in created["seats"]], seed=3)
    assert [f["game_over"] for f in finals] == [True, True] and [f["viewer"] for f in finals] == [1, 2]


def test_an_empty_upload_is_refused_with_the_same_words_as_over_http(host: Host) -> None:
    from tablehost.api.registry import EMPTY_MODULE

    refusal = refused(host.admin.upload_module, b"", "empty")
    assert refusal.status == grpc.StatusCode.INVALID_ARGUMENT and EMPTY_MODULE in str(refusal), refusal


def test_a_match_held_by_a_long_change_does_not_stall_the_listing(host: Host) -> None:
    """A server bot searching for a minute holds its match; ListMatches lists it as it stands."""
    match_id, *_ = new_match(host)
    live = host.registry._matches[match_id]
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with live.changed:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        listed = host.admin.list_matches()  # the client's 10 s deadline: a stall fails here
        assert match_id in [m["match_id"] for m in listed]
    finally:
        release.set()
        holder.join()


def test_bots_wait_out_a_rate_limit_and_finish_the_match(tmp_path: Path) -> None:
    """A bot refused RESOURCE_EXHAUSTED (request/rate_limited) waits the retry-after-ms it was
    told and plays on; it used to give up on the first refusal."""
    from tablehost.api.metrics import Metrics
    from tablehost.api.rate_limit import RateLimits

    metrics = Metrics()
    registry = MatchRegistry(tmp_path / "data", synchronous="NORMAL", metrics=metrics)
    server, port = create_server(
        "127.0.0.1:0", registry, max_workers=16, metrics=metrics, rate_limits=RateLimits(8, 2)
    )
    server.start()
    address = f"127.0.0.1:{port}"
    admin = TablehostClient(address, registry.admin_token_path.read_text().strip(), timeout_s=10)
    try:
        module_id = admin.upload_module(module_bytes("tic_tac_toe"), "tic_tac_toe")["module_id"]
        created = admin.create_match(module_id, ["ann", "bob"])
        finals = run_bots(address, created["match_id"], [s["token"] for s in created["seats"]], seed=1)
        assert all(view["game_over"] for view in finals)
        assert metrics.rate_limited.labels("request")._value.get() > 0  # the limit did bite
    finally:
        admin.close()
        registry.close_watchers()
        server.stop(0).wait()
        registry.close()


def test_a_spades_seat_that_resigns_or_times_out_loses_with_its_partner(tmp_path: Path) -> None:
    """Spades is seats 1+3 against 2+4: bob resigning (or running out of time) makes dan lose too,
    over gRPC, in the listing, after a restart and in the record's replay."""
    from tablehost.guest import GuestPool
    from tablehost.module import load_module
    from tablehost.record import parse_record, replay

    spades = module_bytes("spades")
    host = start_host(tmp_path)
    try:
        module_id = host.admin.upload_module(spades, "spades")["module_id"]
        names = ["ann", "bob", "cy", "dan"]
        created = host.admin.create_match(module_id, names)
        bob = host.client(created["seats"][1]["token"])
        resigned = bob.resign(created["match_id"])["result"]
        assert resigned == {"ranks": {"1": 1, "2": 3, "3": 1, "4": 3}, "winners": [1, 3], "ended_by": "resigned",
                            "player_id": 2}
        timed = host.admin.create_match(module_id, names, time_control={"main_ms": 60_000})
        first = host.admin.view(timed["match_id"])["active_player_ids"][0]
        host.registry.tick_clocks(at_ms=10**15)  # far past the first bidder's minute
        timed_out = host.admin.view(timed["match_id"])["result"]
        partner = {1: 3, 2: 4, 3: 1, 4: 2}[first]
        assert timed_out["ended_by"] == "timeout" and timed_out["player_id"] == first
        assert timed_out["ranks"][str(first)] == timed_out["ranks"][str(partner)] == 3
        assert sorted(timed_out["winners"]) == sorted(set(range(1, 5)) - {first, partner})
        records = [host.admin.record(m) for m in (created["match_id"], timed["match_id"])]
    finally:
        stop_host(host)
    again = start_host(tmp_path)
    try:
        listed = {m["match_id"]: m["result"] for m in again.admin.list_matches()}  # read off the records
        assert listed[created["match_id"]] == resigned and listed[timed["match_id"]] == timed_out
        assert again.admin.view(created["match_id"])["result"] == resigned  # resumed
    finally:
        stop_host(again)
    for record in records:
        assert record["ending"]["partners"]
        outcome = replay(parse_record(record), GuestPool(load_module(spades)))
        assert outcome.ok, outcome.detail
