"""Numbers in requests over gRPC: a Struct carries them as doubles, so the server reads an integral
double within ±2^53 as an int and refuses any other number (fractional, NaN, infinite, too large to
be exact) with INVALID_ARGUMENT naming its path and the double as sent. Actions carry no Struct: a
piece index is a uint32 field, so the whole range the wire can carry is a plain refusal."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablehost.api import convert
from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api._pb import tablehost_pb2_grpc as pb_grpc
from tablehost.api.faults import InvalidRequest
from test_api_server import Host, module_bytes, start_host, stop_host


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    started = start_host(tmp_path_factory.mktemp("data"))
    yield started
    stop_host(started)


@pytest.fixture(scope="module")
def hearts(host: Host) -> str:
    return str(host.admin.upload_module(module_bytes("hearts"), "hearts")["module_id"])


def create(host: Host, module_id: str, options: dict[str, Any]) -> pb.CreateMatchResponse:
    """CreateMatch with ``options`` put in the Struct as given (numbers become doubles)."""
    request = pb.CreateMatchRequest(module_id=module_id, seats=[pb.SeatRequest()] * 4)
    request.options.update(options)
    with grpc.insecure_channel(host.address) as channel:
        stub = pb_grpc.MatchServiceStub(channel)
        token = host.registry.admin_token_path.read_text().strip()
        return stub.CreateMatch(request, metadata=(("authorization", f"Bearer {token}"),), timeout=10)


@pytest.mark.parametrize(("value", "shown"), [
    (10**23, "1e+23"),
    (2**53 + 2, "9007199254740994.0"),
    (30.5, "30.5"),
    (math.nan, "nan"),
    (-math.inf, "-inf"),
])
def test_an_option_number_that_is_not_an_exact_integer_is_invalid_argument_naming_path_and_value(
    host: Host, hearts: str, value: Any, shown: str
) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        create(host, hearts, {"target_score": value})
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"options.target_score is {shown} as sent" in refused.value.details()


def test_a_nested_number_is_named_by_its_path(host: Host, hearts: str) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        create(host, hearts, {"target_score": 30, "extra": {"list": [1, 2.25]}})
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "options.extra.list[1] is 2.25 as sent" in refused.value.details()


def test_an_integral_double_within_2_53_is_read_as_an_int(host: Host, hearts: str) -> None:
    created = create(host, hearts, {"target_score": 30.0})
    view = host.admin.view(created.match_id)
    assert view["state"]["meta_data"]["options"] == {"target_score": 30}
    summary = next(m for m in host.admin.list_matches() if m["match_id"] == created.match_id)
    assert summary["options"] == {"target_score": 30} and isinstance(summary["options"]["target_score"], int)


def test_the_python_client_gets_the_same_refusal(host: Host, hearts: str) -> None:
    from tablehost.client import ApiError

    with pytest.raises(ApiError) as refused:
        host.admin.create_match(hearts, [""] * 4, options={"target_score": 10**23})
    assert refused.value.status == grpc.StatusCode.INVALID_ARGUMENT
    assert "options.target_score is 1e+23 as sent" in refused.value.details


def test_a_piece_index_at_the_top_of_its_wire_range_is_a_plain_refusal(host: Host) -> None:
    created = host.admin.create_match(host.module_id, ["ann", "bob"])
    action = pb.Action(piece_click=pb.PieceClick(space_id="a1", index=2**32 - 1))
    request = pb.SubmitActionRequest(match_id=created["match_id"], action=action, expected_version=0)
    with grpc.insecure_channel(host.address) as channel:
        stub = pb_grpc.MatchServiceStub(channel)
        token = created["seats"][0]["token"]
        with pytest.raises(grpc.RpcError) as refused:
            stub.SubmitAction(request, metadata=(("authorization", f"Bearer {token}"),), timeout=10)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION  # not offered; the server is fine
    assert host.admin.view(created["match_id"])["version"] == 0


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_integers_from_struct_keeps_exactly_the_exact_integers(number: float) -> None:
    struct = convert.to_struct({"n": number})
    exact = math.isfinite(number) and number.is_integer() and abs(number) <= 2**53
    if exact:
        assert convert.integers_from_struct(struct, "options") == {"n": int(number)}
    else:
        with pytest.raises(InvalidRequest, match=r"options\.n is "):
            convert.integers_from_struct(struct, "options")
