"""API pieces without a game: the status table, proto ↔ dict conversion, tokens."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import states
from tablehost import errors
from tablehost.api import convert, faults
from tablehost.api.auth import bearer_token, ensure_admin_token, hash_token, new_token
from tablehost.api.interceptors import STATUS_BY_CODE, status_for
from tablehost.api.watch_slots import WatchSlots, watch_share
from tablehost.errors import TablehostError

EXPECTED_STATUS = {
    "match/unknown": grpc.StatusCode.NOT_FOUND,
    "module/unknown": grpc.StatusCode.NOT_FOUND,
    "match/over": grpc.StatusCode.FAILED_PRECONDITION,
    "match/not_your_turn": grpc.StatusCode.FAILED_PRECONDITION,
    "match/stale_version": grpc.StatusCode.FAILED_PRECONDITION,
    "match/not_offered": grpc.StatusCode.FAILED_PRECONDITION,
    "match/undo_refused": grpc.StatusCode.FAILED_PRECONDITION,
    "match/nothing_to_undo": grpc.StatusCode.FAILED_PRECONDITION,
    "match/waiting": grpc.StatusCode.FAILED_PRECONDITION,
    "match/never_started": grpc.StatusCode.FAILED_PRECONDITION,
    "guest/panic": grpc.StatusCode.ABORTED,
    "guest/trap": grpc.StatusCode.ABORTED,
    "guest/budget": grpc.StatusCode.ABORTED,
    "guest/protocol": grpc.StatusCode.ABORTED,
    "module/invalid": grpc.StatusCode.INVALID_ARGUMENT,
    "request/invalid": grpc.StatusCode.INVALID_ARGUMENT,
    "auth/unauthenticated": grpc.StatusCode.UNAUTHENTICATED,
    "auth/permission_denied": grpc.StatusCode.PERMISSION_DENIED,
    "request/too_many_watchers": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "response/too_large": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "request/rate_limited": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "store/unavailable": grpc.StatusCode.UNAVAILABLE,
    "store/conflict": grpc.StatusCode.ABORTED,
}


def _all_error_classes() -> list[type[TablehostError]]:
    found, todo = [], [TablehostError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_error_code_of_the_host_has_a_status_in_the_one_table() -> None:
    codes = {cls.code for cls in _all_error_classes()} - {"tablehost/error", "match/error"}
    assert codes <= set(STATUS_BY_CODE), codes - set(STATUS_BY_CODE)
    for code, status in EXPECTED_STATUS.items():
        assert status_for(code) == status, code
    assert status_for("guest/new_kind") == grpc.StatusCode.ABORTED
    assert status_for("something/else") == grpc.StatusCode.INTERNAL


def test_bearer_token_is_read_from_metadata_and_its_absence_is_unauthenticated() -> None:
    assert bearer_token((("x-other", "1"), ("authorization", "Bearer abc"))) == "abc"
    assert bearer_token((("Authorization", b"bearer  abc "),)) == "abc"
    for metadata in [(), (("authorization", "Basic abc"),), (("authorization", "Bearer "),)]:
        with pytest.raises(faults.Unauthenticated):
            bearer_token(metadata)
    two = (("authorization", "Bearer abc"), ("x-other", "1"), ("Authorization", "Bearer def"))
    with pytest.raises(faults.Unauthenticated, match="carries 2 'authorization' metadata entries"):
        bearer_token(two)
    with pytest.raises(faults.Unauthenticated, match="carries 2"):
        bearer_token((("authorization", "Bearer abc"), ("authorization", "Bearer abc")))


def test_admin_token_file_is_private_and_stable(tmp_path: Path) -> None:
    path, token = ensure_admin_token(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ensure_admin_token(tmp_path) == (path, token)
    assert token.startswith("tha_") and len(token) > 40
    assert new_token("seat") != new_token("seat")
    assert hash_token(token) != token and len(hash_token(token)) == 64


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
maps = st.dictionaries(st.text(max_size=6), json_values, max_size=3)
player_ids = st.integers(1, 2**32 - 1)
actions = st.one_of(
    st.builds(lambda s: {"type": "space_click", "space_id": s}, st.text(min_size=1, max_size=6)),
    st.builds(
        lambda s, i: {"type": "piece_click", "space_id": s, "index": i},
        st.text(min_size=1, max_size=6),
        st.integers(0, 2**32 - 1),
    ),
    st.builds(
        lambda i, label, loc, dis: {
            "type": "button_click",
            "button": {"id": i, "label": label, "location": loc, "disabled": dis},
        },
        st.text(max_size=5),
        st.text(max_size=5),
        st.text(max_size=5),
        st.booleans(),
    ),
)
pieces = st.fixed_dictionaries(
    {
        "public_kind": st.text(max_size=5),
        "public_state": maps,
        "private_kind": st.none() | st.text(max_size=5),
        "private_state": maps,
        "owner": st.none() | player_ids,
    },
    optional={"count": st.integers(1, 52)},
)
spaces = st.fixed_dictionaries(
    {
        "space_id": st.text(min_size=1, max_size=6),
        "kind": st.text(max_size=5),
        "owner": st.none() | player_ids,
        "arrangement": st.sampled_from(["ordered", "collection"]),
        "public_state": maps,
        "private_state": maps,
        "pieces": st.lists(pieces, max_size=3),
    }
)
players = st.fixed_dictionaries(
    {
        "player_id": player_ids,
        "username": st.text(max_size=5),
        "color": st.text(max_size=7),
        "public_state": maps,
        "private_state": maps,
    }
)
view_states = st.fixed_dictionaries(
    {
        "active_player_ids": st.lists(player_ids, max_size=3),
        "players": st.lists(players, max_size=3),
        "spaces": st.lists(spaces, max_size=3),
        "meta_data": maps,
        "log": st.lists(st.builds(lambda t: {"text": t}, st.text(max_size=8)), max_size=3),
    }
)


class _View:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


@settings(max_examples=60, deadline=None)
@given(
    state=view_states,
    offered=st.lists(
        st.fixed_dictionaries(
            {
                "action": actions,
                "intent": st.sampled_from(["choice", "confirm", "cancel", "undo"]),
                "label": st.text(max_size=5),
            }
        ),
        max_size=3,
    ),
    scores=st.dictionaries(
        player_ids.map(str),
        st.fixed_dictionaries(
            {
                "public_points": st.lists(st.integers(-100, 100).map(float), max_size=2),
                "private_points": st.lists(st.integers(-100, 100).map(float), max_size=2),
            }
        ),
        max_size=3,
    ),
    viewer=st.none() | player_ids,
    version=st.integers(0, 2**40),
    game_over=st.booleans(),
)
def test_a_view_survives_the_wire(
    state: dict[str, Any],
    offered: list[dict[str, Any]],
    scores: dict[str, Any],
    viewer: int | None,
    version: int,
    game_over: bool,
) -> None:
    view = _View(
        state=state,
        actions=offered,
        scores=scores,
        active_player_ids=state["active_player_ids"],
        game_over=game_over,
        version=version,
    )
    message = convert.view_to_proto("m-1", viewer, view, ["Points"])
    wire = type(message).FromString(message.SerializeToString())
    back = convert.view_from_proto(wire)
    assert back["state"] == state
    assert back["actions"] == offered
    assert back["scores"] == dict(sorted(scores.items(), key=lambda kv: int(kv[0])))
    assert (back["viewer"], back["version"], back["game_over"]) == (viewer, version, game_over)


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
)
json_maps = st.dictionaries(
    st.text(max_size=4),
    st.recursive(
        json_scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=8,
    ),
    max_size=4,
)


@given(maps=st.lists(json_maps, min_size=1, max_size=6))
@settings(max_examples=150)
def test_cached_structs_equal_structs_built_by_update(maps: list[dict[str, Any]]) -> None:
    # Twice each, so the second fill comes from the cache; 1, 1.0 and True must not share an entry.
    for data in [*maps, *maps, {"v": 1}, {"v": 1.0}, {"v": True}, {"v": 1}]:
        expected = struct_pb2.Struct()
        expected.update(data)
        filled = struct_pb2.Struct()
        convert._fill_struct(filled, data)
        assert filled == expected


@given(state=states(), viewers=st.lists(st.none() | st.integers(1, 4), min_size=1, max_size=3))
@settings(max_examples=100)
def test_cached_space_records_equal_spaces_built_field_by_field(
    state: dict[str, Any], viewers: list[int | None]
) -> None:
    from tablehost.api._pb import tablehost_pb2 as pb
    from tablehost.view import view_state

    # Each view twice, so the second comes from the cache; several viewers of one state share
    # entries only where their viewed spaces are equal.
    for viewer in [*viewers, *viewers]:
        viewed = view_state(state, viewer)
        expected = pb.TableState()
        for space in viewed["spaces"]:
            convert._fill_space(expected.spaces.add(), space)
        assert list(convert.state_to_proto(viewed).spaces) == list(expected.spaces)


offers = st.fixed_dictionaries(
    {
        "action": actions,
        "intent": st.sampled_from(["choice", "confirm", "cancel", "undo"]),
        "label": st.text(max_size=8),
    }
)


@given(listed=st.lists(st.lists(offers, max_size=6), min_size=1, max_size=3))
@settings(max_examples=100)
def test_cached_offer_records_equal_offers_built_field_by_field(listed: list[list[dict[str, Any]]]) -> None:
    from tablehost.api._pb import tablehost_pb2 as pb

    for offered in [*listed, *listed]:  # the second time from the cache
        view = _View(state={}, actions=offered, scores={}, active_player_ids=[], game_over=False, version=1)
        expected = pb.MatchView()
        for offer in offered:
            convert._fill_available(expected.actions.add(), offer)
        assert list(convert.view_to_proto("m-1", 1, view, [], with_state=False).actions) == list(expected.actions)


def test_an_offer_of_an_unknown_action_type_is_refused_every_time() -> None:
    offer = {"action": {"type": "wink"}, "intent": "choice", "label": "?"}
    view = _View(state={}, actions=[offer], scores={}, active_player_ids=[], game_over=False, version=1)
    for _ in range(2):
        with pytest.raises(faults.InvalidRequest):
            convert.view_to_proto("m-1", 1, view, [], with_state=False)


def test_space_records_of_any_length_decode_to_their_space() -> None:
    from tablehost.api._pb import tablehost_pb2 as pb

    for pieces in (0, 3, 40, 3000):  # records of 1-, 2- and 3-byte lengths
        space = {"space_id": "deck", "kind": "pile", "owner": None, "arrangement": "ordered",
                 "public_state": {}, "private_state": {},
                 "pieces": [{"public_kind": f"card{n}", "public_state": {"n": n}, "owner": None}
                            for n in range(pieces)]}
        expected = pb.Space()
        convert._fill_space(expected, space)
        state = {"active_player_ids": [], "players": [], "spaces": [space, space], "meta_data": {}, "log": []}
        assert list(convert.state_to_proto(state).spaces) == [expected, expected]


def test_spaces_differing_only_in_number_type_get_their_own_records() -> None:
    space = {"space_id": "a", "kind": "cell", "owner": None, "arrangement": "ordered",
             "private_state": {}, "pieces": []}
    for value in (1, 1.0, True, 1):
        state = {"active_player_ids": [], "players": [], "spaces": [{**space, "public_state": {"v": value}}],
                 "meta_data": {}, "log": []}
        expected = struct_pb2.Struct()
        expected.update({"v": value})
        assert convert.state_to_proto(state).spaces[0].public_state == expected


@given(action=actions)
def test_an_action_survives_the_wire(action: dict[str, Any]) -> None:
    assert convert.action_from_proto(convert.action_to_proto(action)) == action


def test_an_action_without_kind_or_space_is_invalid() -> None:
    from tablehost.api._pb import tablehost_pb2 as pb

    for message in [
        pb.Action(),
        pb.Action(space_click=pb.SpaceClick()),
        pb.Action(piece_click=pb.PieceClick()),
    ]:
        with pytest.raises(faults.InvalidRequest):
            convert.action_from_proto(message)
    with pytest.raises(faults.InvalidRequest, match='unknown action type "teleport"'):
        convert.action_to_proto({"type": "teleport"})
    with pytest.raises(faults.InvalidRequest, match='the action has no "type"'):
        convert.action_to_proto({"space_id": "a1"})


def test_a_guest_failure_is_aborted_and_logged_with_the_budget_that_tripped() -> None:
    from structlog.testing import capture_logs

    from tablehost.api.interceptors import RequestInterceptor, details_for

    class Context:
        trailing: tuple[tuple[str, str], ...] = ()

        def set_trailing_metadata(self, metadata: tuple[tuple[str, str], ...]) -> None:
            self.trailing = metadata

    failure = errors.BudgetExceeded("step ran out of fuel", budget="fuel")
    failure.printed = "thinking..."
    context = Context()
    with capture_logs() as events:
        status, ref = RequestInterceptor(registry=None)._fail(failure, context)  # type: ignore[arg-type]
    assert status == grpc.StatusCode.ABORTED
    assert context.trailing == (("tablehost-code", "guest/budget"),)
    assert [(e["event"], e["budget"], e["printed"], e["ref"]) for e in events] == [
        ("guest.call_failed", "fuel", "thinking...", ref)
    ]
    assert details_for(failure) == "guest/budget: step ran out of fuel (the game printed: thinking...)"
    # A player is told neither the message nor the output, only where the admin can look.
    assert details_for(failure, show_guest=False, ref=ref) == (
        f"guest/budget: the game ran out of a budget while handling this request (log ref {ref})"
    )


def test_a_busy_or_quarantined_module_is_not_told_as_a_failure_of_the_players_game() -> None:
    from tablehost.api.interceptors import details_for

    busy = errors.ModuleBusy("no guest run slot came free within 5000 ms")
    assert details_for(busy, show_guest=False, ref="r1") == (
        "module/busy: the server's slots for running games stayed busy (another game is slow); "
        "retry shortly (log ref r1)"
    )
    paused = errors.ModuleQuarantined("calls kept failing")
    assert "pauses it for a while" in details_for(paused, show_guest=False)
    assert "could not handle" not in details_for(paused, show_guest=False)


def test_status_details_are_capped_so_the_status_never_changes() -> None:
    from tablehost.api.interceptors import DETAILS_CHARS_MAX, details_for

    panic = errors.GuestPanic("x" * (1 << 20))
    panic.printed = "y" * (1 << 20)
    refused = errors.NotOffered("action " + "z" * (1 << 20) + " was not offered")
    for failure in (panic, refused):
        assert len(details_for(failure)) <= DETAILS_CHARS_MAX
    assert "x" not in details_for(panic, show_guest=False, ref="abc")


def test_long_status_details_are_cut_to_fit_the_clients_metadata_limit() -> None:
    from tablehost.api.interceptors import DETAILS_CHARS_MAX, details_for

    # an echoed 100 000-character space id made the client see RESOURCE_EXHAUSTED (metadata over 16 KiB)
    details = details_for(errors.NotOffered("the action " + "\u00e9" * 100_000 + " is not offered"))
    assert details.startswith("match/not_offered: the action ")
    assert len(details) <= DETAILS_CHARS_MAX
    assert len(details.encode()) * 3 < 16384


@given(st.integers(min_value=1, max_value=10_000))
def test_watchers_leave_a_thread_for_unary_calls(max_workers: int) -> None:
    share = watch_share(max_workers)
    assert share >= 1
    assert share < max_workers or max_workers == 1


@given(st.lists(st.sampled_from("abc"), max_size=30), st.integers(1, 5), st.integers(1, 8))
def test_watch_slots_never_exceed_their_caps_and_free_on_exit(
    tokens: list[str], per_token: int, total: int
) -> None:
    slots = WatchSlots(total, per_token)
    held, opened = [], {token: 0 for token in "abc"}
    for token in tokens:
        slot = slots.hold(token)
        try:
            slot.__enter__()
        except faults.TooManyWatchers:
            assert opened[token] == per_token or slots.open == total
            continue
        held.append(slot)
        opened[token] += 1
        assert opened[token] <= per_token and slots.open <= total
    for slot in held:
        slot.__exit__(None, None, None)
    assert slots.open == 0


def test_sibling_watch_slots_share_a_tokens_cap_and_keep_their_own_totals() -> None:
    grpc_slots = WatchSlots(total=1, per_token=2)
    http_slots = grpc_slots.sibling(total=5)
    with grpc_slots.hold("a"), http_slots.hold("a"):
        with pytest.raises(faults.TooManyWatchers, match="gRPC and HTTP together"), http_slots.hold("a"):
            pass  # the token's third stream, over either transport
        with pytest.raises(faults.TooManyWatchers, match="the server has 1"), grpc_slots.hold("b"):
            pass  # gRPC's own total
        with http_slots.hold("b"):  # HTTP's total is its own
            assert (grpc_slots.open, http_slots.open) == (1, 2)
    assert (grpc_slots.open, http_slots.open) == (0, 0)
