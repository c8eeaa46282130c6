"""The gRPC services: each method turns its request into domain values, asks the registry, and
turns the answer into a response message. No rules live here; the caller's principal comes from
the auth interceptor (:data:`tablehost.api.auth.current_principal`).
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import orjson
import structlog

from tablehost.api import convert
from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api._pb import tablehost_pb2_grpc as pb_grpc
from tablehost.api.auth import current_principal
from tablehost.api.faults import InvalidRequest, ResponseTooLarge
from tablehost.api.registry import MatchRegistry, ServedView
from tablehost.api.validation import MAX_RESPONSE_BYTES, check_identifier
from tablehost.api.watch_slots import WatchSlots
from tablehost.clocks import MAX_CLOCK_SECONDS, MIN_CLOCK_SECONDS, TimeControl
from tablehost.metadata import GameMetadata
from tablehost.store import StoredModule
from tablehost.view_delta import diff_views


def _module(stored: StoredModule, metadata: GameMetadata) -> pb.Module:
    message = pb.Module(
        module_id=stored.sha256,
        name=stored.name,
        size_bytes=stored.size_bytes,
        exports=stored.exports,
        uploaded_at=stored.uploaded_at,
    )
    convert.metadata_to_proto(metadata, message.metadata)
    return message


def _time_control(message: pb.TimeControl) -> TimeControl:
    """The request's time control; INVALID_ARGUMENT for an inconsistent one, one with a time
    over :data:`~tablehost.clocks.MAX_CLOCK_SECONDS` (a year, as ``--clock``): a seat's time grows
    by its increment each move, and past 2**64 ms no view of the match could be sent; or a main
    or per-move time under :data:`~tablehost.clocks.MIN_CLOCK_SECONDS` (1000 ms, as ``--clock``:
    1 ms ended the match on time at the first view). All zero is no clock; anything else with
    neither main_ms nor per_move_ms (an increment, a policy) would silently be none, so it is
    refused, as an ``on_timeout`` that is no TimeoutPolicy (an open enum keeps any number)."""
    if message.on_timeout not in pb.TimeoutPolicy.values():
        known = ", ".join(f"{pb.TimeoutPolicy.Name(v)} ({v})" for v in pb.TimeoutPolicy.values())
        raise InvalidRequest(f"time_control: on_timeout {message.on_timeout} is not a TimeoutPolicy ({known})")
    if not (message.main_ms or message.per_move_ms):
        if message.increment_ms:
            raise InvalidRequest(
                f"time_control: increment_ms {message.increment_ms} needs main_ms (it is added to main time "
                "after each move); all zero is no clock"
            )
        if message.on_timeout:
            raise InvalidRequest(
                f"time_control: on_timeout {pb.TimeoutPolicy.Name(message.on_timeout)} needs a clock "
                "(main_ms or per_move_ms); all zero is no clock"
            )
    try:
        control = TimeControl.from_json(convert.time_control_from_proto(message))
    except ValueError as exc:
        raise InvalidRequest(f"time_control: {exc}") from None
    if 0 < control.starting_ms < MIN_CLOCK_SECONDS * 1000:
        field = "per_move_ms" if control.per_move_ms else "main_ms"
        raise InvalidRequest(
            f"time_control: {field} is at least {MIN_CLOCK_SECONDS * 1000} ms, got {control.starting_ms}"
        )
    longest = max(control.main_ms, control.increment_ms, control.per_move_ms)
    if longest > MAX_CLOCK_SECONDS * 1000:
        raise InvalidRequest(
            f"time_control: a time is at most {MAX_CLOCK_SECONDS * 1000} ms (a year), got {longest}"
        )
    return control


def _view(served: ServedView, max_bytes: int) -> pb.MatchView:
    """The view as a message, built once per ``served`` (the registry reuses it per version).

    The message is shared by every request and stream that serves this view, so it is never
    changed after it is built; a response embedding it gets its own copy.

    Raises:
        ResponseTooLarge: the message is over ``max_bytes`` (grpc would fail the call with a
            reason no user can act on).
    """
    structlog.contextvars.bind_contextvars(version=served.view.version)
    built: tuple[pb.MatchView, int] | None = served.wire.get("pb")
    if built is None:
        message = convert.view_to_proto(served.match_id, served.viewer, served.view, served.score_labels)
        # One assignment: a stream on another thread sees the message and its size together.
        built = served.wire["pb"] = (message, message.ByteSize())
    message, size = built
    _check_size("this view", size, max_bytes)
    if served.extras:  # clocks and presence change without a new version: a copy per serve
        dynamic = pb.MatchView()
        dynamic.CopyFrom(message)
        convert.add_view_extras(dynamic, served.extras)
        return dynamic
    return message


def _delta_view(served: ServedView, previous: ServedView, max_bytes: int) -> pb.MatchView | None:
    """``served`` as a delta of ``previous`` (the view sent before it on the stream), or None when
    the tables differ in shape and the whole view must go. Built once per viewer and version."""
    cached = served.wire.get("delta")
    if cached is None or cached[0] != previous.view.version:
        delta = diff_views(previous.view.state, served.view.state)
        message = None
        if delta is not None:
            message = convert.view_to_proto(
                served.match_id, served.viewer, served.view, served.score_labels, with_state=False
            )
            convert.delta_to_proto(delta, previous.view.version, message.delta)
        cached = served.wire["delta"] = (previous.view.version, message)
    message = cached[1]
    if message is None:
        return None
    _check_size("this view's delta", message.ByteSize(), max_bytes)
    if served.extras:
        dynamic = pb.MatchView()
        dynamic.CopyFrom(message)
        convert.add_view_extras(dynamic, served.extras)
        return dynamic
    return message


def _check_size(what: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise ResponseTooLarge(
            f"{what} is {size} bytes, over the server's response limit of {max_bytes} bytes"
        )


def _match_id(match_id: str) -> str:
    """The request's match id; INVALID_ARGUMENT when empty or over ``MAX_ID_CHARS`` (not echoed)."""
    return check_identifier(match_id, "match_id")


def _expected_version(request: pb.SubmitActionRequest | pb.UndoRequest) -> int:
    if not request.HasField("expected_version"):
        raise InvalidRequest("expected_version is required: send the version of the view you acted on")
    return request.expected_version


MAX_LOG_LINES = 5000
"""Most log lines one GetLog answers."""


class ModuleServicer(pb_grpc.ModuleServiceServicer):
    """ModuleService over a :class:`MatchRegistry`."""

    def __init__(self, registry: MatchRegistry) -> None:
        self.registry = registry

    def UploadModule(self, request: pb.UploadModuleRequest, context: grpc.ServicerContext) -> pb.Module:
        stored = self.registry.upload_module(current_principal.get(), request.wasm, request.name)
        message = _module(stored, self.registry.metadata_of(stored.sha256))
        message.already_stored = not stored.newly_stored
        return message

    def ListModules(
        self, request: pb.ListModulesRequest, context: grpc.ServicerContext
    ) -> pb.ListModulesResponse:
        return pb.ListModulesResponse(
            modules=[
                _module(m, self.registry.metadata_of(m.sha256))
                for m in self.registry.list_modules(current_principal.get())
            ]
        )

    def GetModule(self, request: pb.GetModuleRequest, context: grpc.ServicerContext) -> pb.Module:
        check_identifier(request.module_id, "module_id")
        stored = self.registry.get_module(current_principal.get(), request.module_id)
        return _module(stored, self.registry.metadata_of(stored.sha256))


class MatchServicer(pb_grpc.MatchServiceServicer):
    """MatchService over a :class:`MatchRegistry`.

    Args:
        registry: the matches served.
        watch_slots: the caps on open WatchMatch streams (a stream beyond them is refused with
            RESOURCE_EXHAUSTED, ``request/too_many_watchers``).
        max_response_bytes: the server's send limit; a view or record over it is refused
            with RESOURCE_EXHAUSTED (``response/too_large``) and the match stays readable.
    """

    def __init__(
        self,
        registry: MatchRegistry,
        watch_slots: WatchSlots,
        *,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.registry = registry
        self.watch_slots = watch_slots
        self.max_response_bytes = max_response_bytes

    def CreateMatch(
        self, request: pb.CreateMatchRequest, context: grpc.ServicerContext
    ) -> pb.CreateMatchResponse:
        check_identifier(request.module_id, "module_id")
        created = self.registry.create_match(
            current_principal.get(),
            request.module_id,
            [(s.username, s.color, s.open, s.bot) for s in request.seats],
            convert.integers_from_struct(request.options, "options"),
            _time_control(request.time_control),
        )
        structlog.contextvars.bind_contextvars(match_id=created.match_id, version=0)
        view = convert.view_to_proto(created.match_id, None, created.view, created.score_labels)
        convert.add_view_extras(view, created.extras)
        view.open_seats.extend(created.open_seats)
        return pb.CreateMatchResponse(
            match_id=created.match_id,
            seats=[
                pb.SeatToken(player_id=p.player_id, username=p.username, color=p.color, token=token)
                for p, token in created.seats
            ],
            spectator_token=created.spectator_token,
            view=view,
            open_seats=created.open_seats,
        )

    def JoinMatch(self, request: pb.JoinMatchRequest, context: grpc.ServicerContext) -> pb.JoinMatchResponse:
        match_id = _match_id(request.match_id)
        player, token, status = self.registry.join(
            current_principal.get(),
            match_id,
            request.username,
            request.color,
            request.player_id if request.HasField("player_id") else None,
        )
        return pb.JoinMatchResponse(
            seat=pb.SeatToken(player_id=player.player_id, username=player.username, color=player.color, token=token),
            status=convert.STATUSES[status],
        )

    def Resign(self, request: pb.ResignRequest, context: grpc.ServicerContext) -> pb.SubmitActionResponse:
        served = self.registry.resign(current_principal.get(), _match_id(request.match_id))
        return pb.SubmitActionResponse(view=_view(served, self.max_response_bytes), seq=served.view.version)

    def AbortMatch(self, request: pb.AbortMatchRequest, context: grpc.ServicerContext) -> pb.MatchView:
        served = self.registry.abort(current_principal.get(), _match_id(request.match_id))
        return _view(served, self.max_response_bytes)

    def GetView(self, request: pb.GetViewRequest, context: grpc.ServicerContext) -> pb.MatchView:
        served = self.registry.view(current_principal.get(), _match_id(request.match_id))
        return _view(served, self.max_response_bytes)

    def WatchMatch(
        self, request: pb.WatchMatchRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.MatchView]:
        principal = current_principal.get()
        with self.watch_slots.hold(principal):
            previous: ServedView | None = None
            for served in self.registry.watch(principal, _match_id(request.match_id), context.is_active):
                message = None
                # A delta only from the view right before (a gap, e.g. coalesced views, sends it whole).
                if request.deltas and previous is not None and served.view.version == previous.view.version + 1:
                    message = _delta_view(served, previous, self.max_response_bytes)
                yield message if message is not None else _view(served, self.max_response_bytes)
                previous = served

    def GetLog(self, request: pb.GetLogRequest, context: grpc.ServicerContext) -> pb.GetLogResponse:
        if request.limit > MAX_LOG_LINES:
            raise InvalidRequest(f"limit is at most {MAX_LOG_LINES} lines, got {request.limit}")
        lines, total = self.registry.log_history(
            current_principal.get(), _match_id(request.match_id), request.offset, request.limit or 500
        )
        response = pb.GetLogResponse(total=total)
        for text in lines:
            response.lines.add(text=text)
        _check_size("the log", response.ByteSize(), self.max_response_bytes)
        return response

    def SubmitAction(
        self, request: pb.SubmitActionRequest, context: grpc.ServicerContext
    ) -> pb.SubmitActionResponse:
        match_id = _match_id(request.match_id)
        if not request.HasField("action"):
            raise InvalidRequest("action is required")
        action = convert.action_from_proto(request.action)
        served = self.registry.submit(current_principal.get(), match_id, action, _expected_version(request))
        return pb.SubmitActionResponse(view=_view(served, self.max_response_bytes), seq=served.view.version)

    def Undo(self, request: pb.UndoRequest, context: grpc.ServicerContext) -> pb.SubmitActionResponse:
        match_id = _match_id(request.match_id)
        served = self.registry.undo(current_principal.get(), match_id, _expected_version(request))
        return pb.SubmitActionResponse(view=_view(served, self.max_response_bytes), seq=served.view.version)

    def GetRecord(self, request: pb.GetRecordRequest, context: grpc.ServicerContext) -> pb.GetRecordResponse:
        record = self.registry.record(current_principal.get(), _match_id(request.match_id))
        response = pb.GetRecordResponse(record_json=orjson.dumps(record))
        _check_size("the record", response.ByteSize(), self.max_response_bytes)
        return response

    def ListMatches(
        self, request: pb.ListMatchesRequest, context: grpc.ServicerContext
    ) -> pb.ListMatchesResponse:
        if request.module_id:  # a filter: empty lists every module's matches
            check_identifier(request.module_id, "module_id")
        summaries = self.registry.list_matches(
            current_principal.get(), module_id=request.module_id, open_only=request.open_only
        )
        response = pb.ListMatchesResponse()
        for s in summaries:
            summary = response.matches.add(
                match_id=s["match_id"],
                module_id=s["module_id"],
                module_name=s["module_name"],
                players=[convert.player_to_proto(p) for p in s["players"]],
                version=s["version"],
                game_over=s["game_over"],
                active_player_ids=s["active_player_ids"],
                created_at=s["created_at"],
                status=convert.STATUSES[s["status"]],
                open_seats=s["open_seats"],
            )
            if s["result"] is not None:
                convert.result_to_proto(s["result"], summary.result)
            if s["options"]:
                summary.options.update(s["options"])
            convert.time_control_to_proto(s["time_control"], summary.time_control)
        return response
