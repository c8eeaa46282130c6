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
from tablehost.api.validation import MAX_RESPONSE_BYTES
from tablehost.api.watch_slots import WatchSlots
from tablehost.store import StoredModule


def _module(stored: StoredModule) -> pb.Module:
    return pb.Module(
        module_id=stored.sha256,
        name=stored.name,
        size_bytes=stored.size_bytes,
        exports=stored.exports,
        uploaded_at=stored.uploaded_at,
    )


def _uploaded(stored: StoredModule) -> pb.Module:
    message = _module(stored)
    message.already_stored = not stored.newly_stored
    return message


def _view(served: ServedView, max_bytes: int) -> pb.MatchView:
    """The view as a message, built once per ``served`` (the registry reuses it per version).

    The message is shared by every request and stream that serves this view, so it is never
    changed after it is built; a response embedding it gets its own copy.

    Raises:
        ResponseTooLarge: the message is over ``max_bytes`` (grpc would fail the call with a
            reason no user can act on).
    """
    structlog.contextvars.bind_contextvars(version=served.view.version)
    message: pb.MatchView | None = served.wire.get("pb")
    if message is None:
        message = convert.view_to_proto(served.match_id, served.viewer, served.view, served.score_labels)
        # Size first: another thread that finds "pb" must find its size too.
        served.wire["bytes"] = message.ByteSize()
        served.wire["pb"] = message
    _check_size("this view", served.wire["bytes"], max_bytes)
    return message


def _check_size(what: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise ResponseTooLarge(
            f"{what} is {size} bytes, over the server's response limit of {max_bytes} bytes"
        )


def _match_id(match_id: str) -> str:
    if not match_id:
        raise InvalidRequest("match_id is required")
    return match_id


def _expected_version(request: pb.SubmitActionRequest | pb.UndoRequest) -> int:
    if not request.HasField("expected_version"):
        raise InvalidRequest("expected_version is required: send the version of the view you acted on")
    return request.expected_version


class ModuleServicer(pb_grpc.ModuleServiceServicer):
    """ModuleService over a :class:`MatchRegistry`."""

    def __init__(self, registry: MatchRegistry) -> None:
        self.registry = registry

    def UploadModule(self, request: pb.UploadModuleRequest, context: grpc.ServicerContext) -> pb.Module:
        if not request.wasm:
            raise InvalidRequest("wasm is empty: send the module bytes")
        return _uploaded(self.registry.upload_module(current_principal.get(), request.wasm, request.name))

    def ListModules(
        self, request: pb.ListModulesRequest, context: grpc.ServicerContext
    ) -> pb.ListModulesResponse:
        return pb.ListModulesResponse(
            modules=[_module(m) for m in self.registry.list_modules(current_principal.get())]
        )

    def GetModule(self, request: pb.GetModuleRequest, context: grpc.ServicerContext) -> pb.Module:
        if not request.module_id:
            raise InvalidRequest("module_id is required")
        return _module(self.registry.get_module(current_principal.get(), request.module_id))


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
        if not request.module_id:
            raise InvalidRequest("module_id is required")
        if request.options.fields:
            raise InvalidRequest("options are reserved and must be empty in tablehost.v1")
        created = self.registry.create_match(
            current_principal.get(), request.module_id, [(s.username, s.color) for s in request.seats]
        )
        structlog.contextvars.bind_contextvars(match_id=created.match_id, version=0)
        return pb.CreateMatchResponse(
            match_id=created.match_id,
            seats=[
                pb.SeatToken(player_id=p.player_id, username=p.username, color=p.color, token=token)
                for p, token in created.seats
            ],
            spectator_token=created.spectator_token,
            view=convert.view_to_proto(created.match_id, None, created.view, created.score_labels),
        )

    def GetView(self, request: pb.GetViewRequest, context: grpc.ServicerContext) -> pb.MatchView:
        served = self.registry.view(current_principal.get(), _match_id(request.match_id))
        return _view(served, self.max_response_bytes)

    def WatchMatch(
        self, request: pb.WatchMatchRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.MatchView]:
        principal = current_principal.get()
        with self.watch_slots.hold(principal):
            for served in self.registry.watch(principal, _match_id(request.match_id), context.is_active):
                yield _view(served, self.max_response_bytes)

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
        return pb.ListMatchesResponse(
            matches=[
                pb.MatchSummary(
                    match_id=s["match_id"],
                    module_id=s["module_id"],
                    module_name=s["module_name"],
                    players=[convert.player_to_proto(p) for p in s["players"]],
                    version=s["version"],
                    game_over=s["game_over"],
                    active_player_ids=s["active_player_ids"],
                    created_at=s["created_at"],
                )
                for s in self.registry.list_matches(current_principal.get())
            ]
        )
