"""Hostile input at the edges: bytes that are not a request, seats and colours out of range,
failed authentications in a flood. Over a real server on a loopback port where the fault is
on the wire (test_api_server's start_host)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from structlog.testing import capture_logs

from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api._pb import tablehost_pb2_grpc as pb_grpc
from tablehost.api.metrics import Metrics
from tablehost.api.rate_limit import (
    DEFAULT_AUTH_FAILURE_BURST,
    DEFAULT_AUTH_FAILURES_PER_S,
    AuthFailureLimiter,
    RateLimits,
    peer_address,
)
from tablehost.api.registry import MatchRegistry
from tablehost.api.server import create_server
from tablehost.client import ApiError, TablehostClient
from test_api_server import Host, module_bytes, stop_host


def start_host_with_metrics(data_dir: Path, **server_options: Any) -> tuple[Host, Metrics]:
    """test_api_server's host, with the server's metrics (and ``create_server`` options)."""
    metrics = Metrics()
    registry = MatchRegistry(data_dir, synchronous="NORMAL", metrics=metrics)
    server, port = create_server("127.0.0.1:0", registry, max_workers=32, metrics=metrics, **server_options)
    server.start()
    address = f"127.0.0.1:{port}"
    admin = TablehostClient(address, registry.admin_token_path.read_text().strip(), timeout_s=10)
    module_id = admin.upload_module(module_bytes("tic_tac_toe"), "tic_tac_toe")["module_id"]
    return Host(address, admin, module_id, data_dir, registry, server), metrics


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Host, Metrics]]:
    started, metrics = start_host_with_metrics(tmp_path_factory.mktemp("data"))
    yield started, metrics
    stop_host(started)


@pytest.fixture
def host(served: tuple[Host, Metrics]) -> Host:
    return served[0]


def admin_metadata(host: Host) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {host.registry.admin_token_path.read_text().strip()}"),)


def raw_call(channel: grpc.Channel, path: str, *, streaming: bool = False) -> Any:
    """A method called with the request's bytes as given (identity serializers)."""
    kind = channel.unary_stream if streaming else channel.unary_unary
    return kind(path, request_serializer=lambda data: data, response_deserializer=lambda data: data)


def counted(metrics: Metrics, name: str, **labels: str) -> float:
    """A sample of the server's metrics (none yet: 0)."""
    return metrics.registry.get_sample_value(name, labels) or 0.0


BAD_UTF8_MATCH_ID = b"\x0a\x02\xc3\x28"  # field 1 (match_id), length 2, "\xc3\x28": not UTF-8


@pytest.mark.parametrize(
    ("method", "streaming", "message", "body", "says"),
    [
        ("GetView", False, "GetViewRequest", b"\xff\xff\xff", "Wire format was corrupt"),
        ("GetView", False, "GetViewRequest", BAD_UTF8_MATCH_ID, "String field had bad UTF-8"),
        ("CreateMatch", False, "CreateMatchRequest", b"\x12\x02\x0a\x09", "Wire format was corrupt"),
        ("WatchMatch", True, "WatchMatchRequest", b"\xff\xff\xff", "Wire format was corrupt"),
        ("WatchMatch", True, "WatchMatchRequest", BAD_UTF8_MATCH_ID, "String field had bad UTF-8"),
    ],
)
def test_a_body_that_is_not_the_request_message_is_invalid_argument_logged_and_counted(
    served: tuple[Host, Metrics], method: str, streaming: bool, message: str, body: bytes, says: str
) -> None:
    """grpc's own deserializer answered INTERNAL ("Exception deserializing request!") before the
    request wrapper ran: nothing logged through api.request, nothing counted."""
    host, metrics = served
    service = "ModuleService" if method.endswith("Module") else "MatchService"
    before = counted(metrics, "tablehost_requests_total", transport="grpc", method=method, code="INVALID_ARGUMENT")
    channel = grpc.insecure_channel(host.address)
    try:
        call = raw_call(channel, f"/tablehost.v1.{service}/{method}", streaming=streaming)
        with (
            capture_logs(processors=[structlog.contextvars.merge_contextvars]) as events,
            pytest.raises(grpc.RpcError) as info,
        ):
            answer = call(body, metadata=admin_metadata(host), timeout=10)
            if streaming:
                next(iter(answer))
    finally:
        channel.close()
    error = info.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert error.details() == f"request/invalid: the request is not a valid tablehost.v1.{message}: {says}"
    assert ("tablehost-code", "request/invalid") in tuple(error.trailing_metadata() or ())
    logged = [e for e in events if e["event"] == "api.request"]
    assert [(e["method"], e["outcome"], e.get("seat")) for e in logged] == [(method, "INVALID_ARGUMENT", "admin")]
    assert counted(metrics, "tablehost_requests_total", transport="grpc", method=method, code="INVALID_ARGUMENT") == before + 1


def test_a_malformed_body_without_a_token_is_unauthenticated(host: Host) -> None:
    """The token is checked before the body is refused: a stranger learns nothing of the body."""
    channel = grpc.insecure_channel(host.address)
    try:
        with pytest.raises(grpc.RpcError) as info:
            raw_call(channel, "/tablehost.v1.MatchService/GetView")(b"\xff\xff\xff", timeout=10)
    finally:
        channel.close()
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_well_formed_raw_bytes_are_served_as_before(host: Host) -> None:
    """The handlers parse the bytes themselves: a valid body is the same request as through a stub."""
    channel = grpc.insecure_channel(host.address)
    try:
        body = pb.ListModulesRequest().SerializeToString()
        answer = raw_call(channel, "/tablehost.v1.ModuleService/ListModules")(
            body, metadata=admin_metadata(host), timeout=10
        )
        modules = pb.ListModulesResponse.FromString(answer).modules
        assert host.module_id in [m.module_id for m in modules]
        created = pb.CreateMatchRequest(module_id=host.module_id, seats=[pb.SeatRequest()] * 2)
        reply = pb.CreateMatchResponse.FromString(
            raw_call(channel, "/tablehost.v1.MatchService/CreateMatch")(
                created.SerializeToString() + b"\xf8\x07\x01",  # an unknown field (127) is kept, not refused
                metadata=admin_metadata(host), timeout=10,
            )
        )
        watch = raw_call(channel, "/tablehost.v1.MatchService/WatchMatch", streaming=True)(
            pb.WatchMatchRequest(match_id=reply.match_id).SerializeToString(), metadata=admin_metadata(host),
            timeout=10,
        )
        first = pb.MatchView.FromString(next(iter(watch)))
        watch.cancel()
        assert first.match_id == reply.match_id
    finally:
        channel.close()


@pytest.mark.parametrize("seat", [0, 3, 2**32 - 1])
def test_joining_a_seat_the_match_does_not_have_is_invalid_argument_naming_the_seats(
    host: Host, seat: int
) -> None:
    """Seat 0 was refused as match/seat_taken (FAILED_PRECONDITION), as if someone held it."""
    created = host.admin.create_match(host.module_id, ["ann", ""], open_seats=[2])
    with pytest.raises(ApiError) as info:
        host.admin.join(created["match_id"], "cid", player_id=seat)
    refusal = info.value
    assert (refusal.status, refusal.code) == (grpc.StatusCode.INVALID_ARGUMENT, "request/invalid")
    assert f"seat {seat} does not exist: match {created['match_id']} has seats 1 to 2" in refusal.details
    joined = host.admin.join(created["match_id"], "cid", player_id=2)  # the open seat is still open
    assert (joined["player_id"], joined["status"]) == (2, "active")


@pytest.mark.parametrize(
    "color", ["#12345", "#gggggg", "12#34", "zzz", "Red", "reddish", "#", "red; x", "#c0392b ", "\u0440ed"]
)
def test_a_seat_colour_the_table_cannot_draw_is_refused_and_nothing_is_created(host: Host, color: str) -> None:
    """Any 1-32 characters of [A-Za-z0-9#] passed as a colour; the web table then ignored it."""
    before = len(host.admin.list_matches())
    with pytest.raises(ApiError) as info:
        host.admin.create_match(host.module_id, ["ann", "bob"], ["#fff", color])
    assert (info.value.status, info.value.code) == (grpc.StatusCode.INVALID_ARGUMENT, "request/invalid")
    assert "a color is empty (the server's palette), #rgb, #rgba, #rrggbb, #rrggbbaa or a CSS colour" in (
        info.value.details
    )
    assert len(host.admin.list_matches()) == before
    waiting = host.admin.create_match(host.module_id, ["ann", ""], open_seats=[2])
    with pytest.raises(ApiError) as joined:
        host.admin.join(waiting["match_id"], "cid", color=color)
    assert joined.value.status == grpc.StatusCode.INVALID_ARGUMENT


def test_every_css_colour_form_is_accepted_as_given(host: Host) -> None:
    colors = ["#a1B", "#a1b2", "#C0392B", "#c0392b80", "navy", "rebeccapurple", "lightgoldenrodyellow", ""]
    created = host.admin.create_match(host.module_id, [f"p{n}" for n in range(2)], colors[:2])
    assert [s["color"] for s in created["seats"]] == colors[:2]
    for color in colors[2:]:
        seat = host.admin.create_match(host.module_id, ["ann", "bob"], [color, ""])["seats"][0]
        assert seat["color"] == (color or "#c0392b")  # empty: the palette's first colour
    with pytest.raises(ApiError) as info:
        host.admin.create_match(host.module_id, ["ann", "bob"], ["Navy", ""])
    assert "(colour names are lowercase); got 'Navy'" in info.value.details


@pytest.mark.parametrize(
    ("choice", "says"),
    [
        ('{"type": "space_click", "space_id": "a1", "spaceid": "b2"}',
         "a space_click has no key 'spaceid' (its keys: type, space_id)"),
        ('{"type": "piece_click", "space_id": "a1", "index": 0, "x": 1, "y": 2}',
         "a piece_click has no keys 'x', 'y' (its keys: type, space_id, index)"),
        ('{"type": "button_click", "button": {"id": "pass", "colour": "red"}}',
         "a button has no key 'colour' (its keys: id, label, location, disabled)"),
        ('{"action": {"type": "space_click", "space_id": "a1"}, "intent": "confirm", "seat": 2}',
         "a listed action (view --json's actions[]) has no key 'seat' (its keys: action, intent, label)"),
        ('{"action": {"type": "space_click", "space_id": "a1", "to": "b2"}, "label": "X on a1"}',
         "a space_click has no key 'to'"),
        ('{"action": "space_click"}', "the 'action' of a listed action must be an object"),
    ],
)
def test_act_refuses_a_json_action_with_a_key_no_action_has_and_sends_nothing(
    host: Host, capsys: pytest.CaptureFixture[str], choice: str, says: str
) -> None:
    """`tablehost act` dropped unknown keys unseen: a typo (spaceid) played another move or failed
    far from its cause."""
    from tablehost import cli

    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    match_id, token = created["match_id"], created["seats"][0]["token"]
    before = host.admin.view(match_id)["version"]
    status = cli.main(["act", match_id, choice, "--address", host.address, "--token", token])
    err = capsys.readouterr().err
    assert status == 2, err
    assert f"tablehost: {says}" in err and "Traceback" not in err
    assert host.admin.view(match_id)["version"] == before  # nothing was played
    listed = '{"action": {"type": "space_click", "space_id": "a1"}, "intent": "confirm", "label": "X on a1"}'
    assert cli.main(["act", match_id, listed, "--address", host.address, "--token", token, "--json"]) == 0
    assert host.admin.view(match_id)["version"] == before + 1  # an entry as view --json lists it is played


def _trailers(error: grpc.RpcError) -> dict[str, str]:
    return dict(error.trailing_metadata() or ())  # type: ignore[attr-defined]


def test_failed_authentications_are_limited_per_address_and_known_tokens_still_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tokenless and unknown-token requests had no bucket: a client could make the server hash
    tokens, ask the store and log UNAUTHENTICATED as fast as it could send."""
    limits = RateLimits(auth_failures_per_s=5, auth_failure_burst=3)
    host, metrics = start_host_with_metrics(tmp_path / "data", rate_limits=limits)
    channel = grpc.insecure_channel(host.address)
    try:
        created = host.admin.create_match(host.module_id, ["ann", "bob"])
        match_id, seat = created["match_id"], created["seats"][0]["token"]
        stub = pb_grpc.MatchServiceStub(channel)
        request = pb.GetViewRequest(match_id=match_id)

        def refusal(metadata: tuple[tuple[str, str], ...] = ()) -> grpc.RpcError:
            with pytest.raises(grpc.RpcError) as info:
                stub.GetView(request, metadata=metadata, timeout=10)
            return info.value

        lookups: list[str] = []
        authenticate = host.registry.authenticate
        monkeypatch.setattr(
            host.registry, "authenticate", lambda token, **kw: lookups.append(token) or authenticate(token, **kw)
        )
        unknown = (("authorization", "Bearer ths_guessed"),)
        assert [refusal(md).code() for md in ((), unknown, ())] == [grpc.StatusCode.UNAUTHENTICATED] * 3
        assert lookups == ["ths_guessed"]
        over = [refusal(md) for md in ((), unknown, (("authorization", "Basic x"),))]
        assert [e.code() for e in over] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 3
        assert lookups == ["ths_guessed"]  # an address over its limit: an unknown token is not looked up
        for error in over:
            trailers = _trailers(error)
            assert trailers["tablehost-code"] == "request/rate_limited"
            assert 1 <= int(trailers["retry-after-ms"]) <= 200, trailers
            assert "failed authentication (more than 5 per second, burst 3)" in error.details()
        assert counted(metrics, "tablehost_rate_limited_total", kind="auth") == 3
        # A token this server knows is served from that address all along; so is the health check.
        assert stub.GetView(request, metadata=(("authorization", f"Bearer {seat}"),), timeout=10).viewer == 1
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        time.sleep(int(_trailers(over[-1])["retry-after-ms"]) / 1000 + 0.05)
        assert refusal().code() == grpc.StatusCode.UNAUTHENTICATED  # one failure refilled
        assert refusal().code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        channel.close()
        stop_host(host)


def test_the_default_allows_a_burst_of_100_failed_authentications(tmp_path: Path) -> None:
    host, _ = start_host_with_metrics(tmp_path / "data")
    channel = grpc.insecure_channel(host.address)
    try:
        stub = pb_grpc.ModuleServiceStub(channel)
        codes = []
        for _ in range(DEFAULT_AUTH_FAILURE_BURST + 1):
            with pytest.raises(grpc.RpcError) as info:
                stub.ListModules(pb.ListModulesRequest(), timeout=10)
            codes.append(info.value.code())
    finally:
        channel.close()
        stop_host(host)
    assert DEFAULT_AUTH_FAILURE_BURST == 100 and DEFAULT_AUTH_FAILURES_PER_S == 10
    assert codes[:-1] == [grpc.StatusCode.UNAUTHENTICATED] * 100  # nearly all: the bucket refills meanwhile
    assert codes[-1] in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAUTHENTICATED)


@pytest.mark.parametrize(
    ("peer", "address"),
    [
        ("ipv4:10.0.0.7:53512", "ipv4:10.0.0.7"),
        ("ipv6:[2001:db8::1]:53512", "ipv6:2001:db8::/64"),
        ("ipv6:%5B2001:db8:0:0:ffff::9%5D:1", "ipv6:2001:db8::/64"),
        ("ipv6:[::1]:40000", "ipv6:::/64"),
        ("unix:/run/tablehost.sock", "unix"),
        ("", ""),
    ],
)
def test_failures_are_counted_per_address_not_per_connection(peer: str, address: str) -> None:
    assert peer_address(peer) == address


def test_the_failure_limit_forgets_every_address_once_all_have_refilled() -> None:
    now = [100.0]
    limiter = AuthFailureLimiter(per_s=2, burst=2, clock=lambda: now[0])
    assert not limiter.tracking
    limiter.failed("ipv4:1.2.3.4")
    limiter.failed("ipv4:1.2.3.4")
    assert limiter.tracking and limiter.over("ipv4:1.2.3.4") == 500 and limiter.over("ipv4:5.6.7.8") is None
    now[0] += 0.5
    assert limiter.over("ipv4:1.2.3.4") is None
    now[0] += 0.5
    assert not limiter.tracking and limiter.over("ipv4:1.2.3.4") is None  # forgotten: no cost per request
    assert AuthFailureLimiter(per_s=0, burst=1).over("x") is None


@pytest.mark.parametrize(
    ("choice", "says"),
    [
        ('{"type":"space_click","space_id":"b1","x":' + "[" * 1500 + "]" * 1500 + "}",
         "the JSON action nests 1501 levels deep; an action nests at most 32"),
        ("{" * 100_000, "the JSON action nests 100000 levels deep"),
        ('{"type": "space_click", "space_id": "[[[[' + "[" * 100 + '"}', "has no key"),  # brackets in a string
        ("[" * 32 + "]" * 32, "a JSON action must be an object"),  # deep enough to parse, still refused
        ("{" + "x" * 5000, "... (5001 characters) is neither an action index nor JSON"),
    ],
    ids=["1500-deep", "100000-open", "brackets-in-a-string", "32-deep", "long-not-json"],
)
def test_act_refuses_deeply_nested_json_with_one_line_and_sends_nothing(
    host: Host, capsys: pytest.CaptureFixture[str], choice: str, says: str
) -> None:
    """`tablehost act` with JSON nested 1500 deep died of a RecursionError traceback (exit 1)."""
    from tablehost import cli

    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    match_id, token = created["match_id"], created["seats"][0]["token"]
    before = host.admin.view(match_id)["version"]
    if "has no key" in says:  # a string full of brackets is no nesting: the action is parsed
        choice = choice.replace('"}', '", "x": 1}')
    status = cli.main(["act", match_id, choice, "--address", host.address, "--token", token])
    err = capsys.readouterr().err
    assert status == 2, err
    assert says in err and "Traceback" not in err and len(err.splitlines()) == 1, err[:500]
    assert len(err) < 600
    assert host.admin.view(match_id)["version"] == before


def test_a_server_bot_with_digits_other_than_ascii_is_invalid_argument(host: Host) -> None:
    """CreateMatch's server bot 'mcts:１０' played as mcts:10 and was recorded under that name."""
    with pytest.raises(ApiError) as refused:
        host.admin.create_match(host.module_id, ["ann", "bob"], bots={2: "mcts:１０"})
    assert refused.value.status == grpc.StatusCode.INVALID_ARGUMENT
    assert "the iterations must be a whole number from 1 to 5000 in ASCII digits 0-9" in refused.value.details
    created = host.admin.create_match(host.module_id, ["ann", "bob"], bots={2: "mcts:10"})
    assert created["match_id"]


def test_an_overlong_id_is_invalid_argument_and_not_echoed(
    host: Host, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tablehost view m-aaaa...(100 KB) --token SEAT` printed the whole id back in a
    PERMISSION_DENIED message; the API now refuses an id over 256 characters by its length."""
    from tablehost import cli

    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    seat = TablehostClient(host.address, created["seats"][0]["token"], timeout_s=10)
    long_id = "m-" + "a" * 100_000
    for call in (seat.view, seat.resign, seat.record, lambda m: list(seat.watch(m)), host.admin.abort):
        with pytest.raises(ApiError) as refused:
            call(long_id)
        assert refused.value.status == grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.details == "request/invalid: match_id has at most 256 characters, got 100002"
    for module_call in (
        lambda m: host.admin.get_module(m),
        lambda m: host.admin.create_match(m, ["ann", "bob"]),
        lambda m: host.admin.list_matches(module_id=m),
    ):
        with pytest.raises(ApiError) as refused:
            module_call("f" * 300)
        assert refused.value.status == grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.details == "request/invalid: module_id has at most 256 characters, got 300"
    status = cli.main(["view", long_id, "--address", host.address, "--token", created["seats"][0]["token"]])
    err = capsys.readouterr().err
    assert status == 2 and len(err) < 200 and "at most 256 characters" in err, err[:300]
    # Ids of the longest accepted length are looked up as before (refused as not this seat's).
    with pytest.raises(ApiError) as refused:
        seat.view("m-" + "a" * 254)
    assert refused.value.status != grpc.StatusCode.INVALID_ARGUMENT
    assert seat.view(created["match_id"])["version"] == 0
    seat.close()
