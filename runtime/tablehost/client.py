"""A small typed Python client of the tablehost gRPC API.

Every method returns **plain dicts** (never proto messages), in the JSON shapes of
docs/abi.md: a view's ``actions`` are AvailableAction dicts whose ``action`` can be passed
back to :meth:`TablehostClient.submit` as it is. Free-form maps came through
``google.protobuf.Struct``, so their integral numbers read back as ``int``.

Failures raise :class:`ApiError` (with the gRPC status and the host's error code) or
:class:`ServerUnreachable` when no server answers.

Example::

    with TablehostClient("127.0.0.1:50051", admin_token) as admin:
        module = admin.upload_module(Path("tic_tac_toe.wasm").read_bytes(), "tic_tac_toe")
        match = admin.create_match(module["module_id"], ["ann", "bob"])
    with TablehostClient("127.0.0.1:50051", match["seats"][0]["token"]) as ann:
        view = ann.view(match["match_id"])
        view = ann.submit(match["match_id"], view["actions"][0]["action"], view["version"])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Self, TypeVar

import grpc
import orjson

from tablehost.api import convert
from tablehost.api._pb import tablehost_pb2 as pb
from tablehost.api._pb import tablehost_pb2_grpc as pb_grpc
from tablehost.api.validation import (
    ACTION_FIELDS,
    BUTTON_FIELDS,
    MAX_RESPONSE_BYTES,
    action_type_problem,
    check_address,
    check_token,
    shown_value,
    unknown_action_keys,
)
from tablehost.view_delta import apply_delta

T = TypeVar("T")


class ApiError(Exception):
    """A request the server refused or could not serve.

    Attributes:
        status: the gRPC status code (e.g. ``grpc.StatusCode.FAILED_PRECONDITION``).
        details: the server's sentence, ``"<code>: <message>"`` for the host's own errors.
        code: the host's error code (``"match/stale_version"``...), or ``None``.
        retry_after_ms: the server's hint of when to try again (a rate limit, a watch-stream
            cap), milliseconds; ``None`` when it gave none.
    """

    def __init__(
        self,
        status: grpc.StatusCode,
        details: str,
        code: str | None = None,
        retry_after_ms: int | None = None,
    ) -> None:
        super().__init__(f"{status.name}: {details}")
        self.status = status
        self.details = details
        self.code = code
        self.retry_after_ms = retry_after_ms


class ServerUnreachable(ApiError):
    """No tablehost server answers at the address (gRPC UNAVAILABLE)."""


def _api_error(exc: grpc.RpcError, address: str) -> ApiError:
    status: grpc.StatusCode = exc.code()
    details: str = exc.details() or ""
    code, retry_after_ms = None, None
    trailing = getattr(exc, "trailing_metadata", None)
    for key, value in (trailing() if callable(trailing) else None) or ():
        text = value if isinstance(value, str) else value.decode()
        if key == "tablehost-code":
            code = text
        elif key == "retry-after-ms" and text.isdigit():
            retry_after_ms = int(text)
    # UNAVAILABLE with the host's own code is an answer (e.g. its store is unreachable).
    if status == grpc.StatusCode.UNAVAILABLE and code is None:
        return ServerUnreachable(
            status, f"no tablehost server answers at {address} (is `tablehost serve` running?): {details}"
        )
    return ApiError(status, details, code, retry_after_ms)


KEEPALIVE_S = 20.0
"""Seconds without traffic on a call (a watch stream waiting for a change) after which the client
pings the server; a server whose network vanished is then reported as UNAVAILABLE within
:data:`KEEPALIVE_TIMEOUT_S` more, instead of the stream waiting for ever. The server accepts a
ping every 5 s at most (:data:`tablehost.api.server.MIN_CLIENT_PING_MS`)."""
KEEPALIVE_TIMEOUT_S = 10.0
"""Seconds the client waits for the answer to a keepalive ping before it drops the connection."""


class TablehostClient:
    """A connection to one server, acting with one bearer token.

    Args:
        address: ``host:port`` of the server.
        token: the bearer token (admin, seat or spectator); ``None`` sends none.
        timeout_s: deadline of each unary call, seconds (streams have none).
        keepalive_s: seconds without traffic on an open call before a keepalive ping
            (:data:`KEEPALIVE_S`); a stream whose server stops answering fails with UNAVAILABLE
            about ``keepalive_s + keepalive_timeout_s`` later. Below the server's 5 s floor the
            server refuses the pings (tests of a local server set that floor lower).
        keepalive_timeout_s: seconds to wait for a ping's answer (:data:`KEEPALIVE_TIMEOUT_S`).

    Raises:
        ValueError: ``address`` is not ``host:port`` with a port in 1..65535, or ``token`` is
            one grpc cannot send (not 1 to 256 printable ASCII characters without spaces:
            :func:`~tablehost.api.validation.check_token`). Both before any connection.
    """

    def __init__(
        self,
        address: str,
        token: str | None = None,
        *,
        timeout_s: float = 30.0,
        keepalive_s: float = KEEPALIVE_S,
        keepalive_timeout_s: float = KEEPALIVE_TIMEOUT_S,
    ) -> None:
        check_address(address)
        if token:
            check_token(token)
        self.address = address
        self.timeout_s = timeout_s
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        # Receive what the server may send (grpc's default 4 MiB is below a long match's record).
        self._channel = grpc.insecure_channel(
            address,
            options=[
                ("grpc.max_receive_message_length", MAX_RESPONSE_BYTES),
                # Pings only while a call is open (a watch stream), however long it sends nothing.
                ("grpc.keepalive_time_ms", int(keepalive_s * 1000)),
                ("grpc.keepalive_timeout_ms", int(keepalive_timeout_s * 1000)),
                ("grpc.http2.ping_timeout_ms", int(keepalive_timeout_s * 1000)),  # grpc 1.85 times pings out by this
                ("grpc.keepalive_permit_without_calls", 0),
                ("grpc.http2.max_pings_without_data", 0),
            ],
        )
        self._modules = pb_grpc.ModuleServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._matches = pb_grpc.MatchServiceStub(self._channel)  # type: ignore[no-untyped-call]

    def close(self) -> None:
        """Close the channel (ends open watch streams)."""
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_ready(self, timeout_s: float = 10.0) -> None:
        """Block until the channel connects.

        Raises:
            ServerUnreachable: no server within ``timeout_s`` seconds.
        """
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout_s)
        except grpc.FutureTimeoutError:
            raise ServerUnreachable(
                grpc.StatusCode.UNAVAILABLE,
                f"no tablehost server answers at {self.address} within {timeout_s} s (is `tablehost serve` running?)",
            ) from None

    def _call(self, method: Callable[..., T], request: Any) -> T:
        try:
            return method(request, metadata=self._metadata, timeout=self.timeout_s)
        except grpc.RpcError as exc:
            raise _api_error(exc, self.address) from None

    # ------------------------------------------------------------ modules

    def upload_module(self, wasm: bytes, name: str = "") -> dict[str, Any]:
        """Upload module bytes (admin token).

        Returns:
            ``{"module_id" (sha256 hex), "name", "size_bytes", "exports", "uploaded_at",
            "already_stored"}``; ``already_stored`` true when these bytes were on the server
            before (then ``name`` is the first upload's and the one given here was ignored).
        """
        response = self._call(self._modules.UploadModule, pb.UploadModuleRequest(wasm=wasm, name=name))
        return {**_module(response), "already_stored": response.already_stored}

    def list_modules(self) -> list[dict[str, Any]]:
        """Every stored module (dicts as :meth:`upload_module`), oldest first."""
        response = self._call(self._modules.ListModules, pb.ListModulesRequest())
        return [_module(m) for m in response.modules]

    def get_module(self, module_id: str) -> dict[str, Any]:
        """One module (dict as :meth:`upload_module`)."""
        return _module(self._call(self._modules.GetModule, pb.GetModuleRequest(module_id=module_id)))

    # ------------------------------------------------------------ matches

    def create_match(
        self,
        module_id: str,
        usernames: list[str],
        colors: list[str] | None = None,
        *,
        open_seats: list[int] | None = None,
        options: dict[str, Any] | None = None,
        time_control: dict[str, Any] | None = None,
        bots: dict[int, str] | None = None,
    ) -> dict[str, Any]:
        """Create a match with one seat per username (admin token); empty names get defaults.

        Args:
            open_seats: 1-based seat numbers to leave open for :meth:`join` (their names must be empty: the name is the joiner's).
            bots: 1-based seat number -> bot name (``random``, ``first``, ``mcts:N``, ``ismcts:N``):
                the server plays those seats on their own views; they get no token (``""``).
            options: game options by name (see the module's ``metadata``).
            time_control: ``{"main_ms", "increment_ms", "per_move_ms", "on_timeout"}`` (any subset).

        Returns:
            ``{"match_id", "seats": [{"player_id", "username", "color", "token"}] (seated seats only),
            "spectator_token", "view"`` (the spectator view, as :meth:`view`), ``"open_seats"}``.

        Raises:
            ValueError: a seat of ``open_seats`` or ``bots`` is not one of 1..len(usernames) (it
                would be dropped from the request); nothing is sent.
            ApiError: INVALID_ARGUMENT for a seat count or option the module does not declare, or
                an unknown bot name.
        """
        colors = colors or [""] * len(usernames)
        open_set = set(open_seats or ())
        outside = sorted(n for n in open_set | set(bots or {}) if not 1 <= n <= len(usernames))
        if outside:
            raise ValueError(f"seats {outside} are not among the {len(usernames)} seats (1..{len(usernames)})")
        request = pb.CreateMatchRequest(
            module_id=module_id,
            seats=[
                pb.SeatRequest(username=u, color=c, open=n in open_set, bot=(bots or {}).get(n, ""))
                for n, (u, c) in enumerate(zip(usernames, colors, strict=True), start=1)
            ],
        )
        if options:
            request.options.update(options)
        convert.time_control_to_proto(time_control or {}, request.time_control)
        response = self._call(self._matches.CreateMatch, request)
        return {
            "match_id": response.match_id,
            "seats": [
                {"player_id": s.player_id, "username": s.username, "color": s.color, "token": s.token}
                for s in response.seats
            ],
            "spectator_token": response.spectator_token,
            "view": convert.view_from_proto(response.view),
            "open_seats": list(response.open_seats),
        }

    def join(self, match_id: str, username: str, *, player_id: int | None = None, color: str = "") -> dict[str, Any]:
        """Take an open seat (the admin token or the match's spectator token).

        Returns:
            ``{"player_id", "username", "color", "token", "status"}``; ``status`` is ``"waiting"``
            or, when this join filled the last seat, the started match's status.

        Raises:
            ApiError: FAILED_PRECONDITION when the seat is taken or none is open;
                INVALID_ARGUMENT for a ``player_id`` the match does not have (the details name
                its seats, ``1 to N``).
        """
        request = pb.JoinMatchRequest(match_id=match_id, username=username, color=color)
        if player_id is not None:
            request.player_id = player_id
        response = self._call(self._matches.JoinMatch, request)
        seat = response.seat
        return {
            "player_id": seat.player_id,
            "username": seat.username,
            "color": seat.color,
            "token": seat.token,
            "status": convert.STATUS_NAMES.get(response.status, "waiting"),
        }

    def resign(self, match_id: str) -> dict[str, Any]:
        """This seat resigns; returns its view (status ``finished``, result ``resigned``)."""
        return convert.view_from_proto(
            self._call(self._matches.Resign, pb.ResignRequest(match_id=match_id)).view
        )

    def abort(self, match_id: str) -> dict[str, Any]:
        """End a match as aborted (admin token); returns the spectator view."""
        return convert.view_from_proto(self._call(self._matches.AbortMatch, pb.AbortMatchRequest(match_id=match_id)))

    def view(self, match_id: str) -> dict[str, Any]:
        """This token's view of the match (see ``convert.view_from_proto`` for the keys)."""
        return convert.view_from_proto(
            self._call(self._matches.GetView, pb.GetViewRequest(match_id=match_id))
        )

    def watch(self, match_id: str, *, deltas: bool = False) -> Iterator[dict[str, Any]]:
        """This token's view now and after every change; ends after the game-over view.

        Args:
            deltas: ask the server for view deltas (smaller messages); every view yielded is
                still whole: this method applies each delta to the view before it.

        Closing the iterator cancels the stream.

        Raises:
            ApiError: as the server refused or the stream broke, or a delta does not follow
                the view before it (DATA_LOSS).
        """
        request = pb.WatchMatchRequest(match_id=match_id, deltas=deltas)
        call = self._matches.WatchMatch(request, metadata=self._metadata)
        previous: dict[str, Any] | None = None
        try:
            for message in call:
                view = convert.view_from_proto(message)
                delta = view.pop("delta", None)
                if delta is not None:
                    if previous is None or previous["version"] != delta["base_version"]:
                        raise ApiError(grpc.StatusCode.DATA_LOSS, "a view delta does not follow the view before it")
                    view["state"] = apply_delta(previous["state"], delta)
                previous = view
                yield view
        except grpc.RpcError as exc:
            raise _api_error(exc, self.address) from None
        finally:
            call.cancel()

    def submit(self, match_id: str, action: dict[str, Any], expected_version: int) -> dict[str, Any]:
        """Play ``action`` (view addresses, e.g. ``view["actions"][i]["action"]``) for this seat.

        Args:
            match_id: the match.
            action: an ABI action dict.
            expected_version: the version of the view the action was chosen from.

        Returns:
            This seat's view right after the move.

        Raises:
            ValueError: ``action`` is not an ABI action dict (not a dict, no ``type`` or an
                unknown one, a key its type or its button does not have, a piece index outside
                0..2**32-1...) or ``expected_version`` is not a version
                (an int in 0..2**63-1); nothing is sent.
            ApiError: FAILED_PRECONDITION (not your turn, not offered, stale version, game over),
                ABORTED (the game failed), PERMISSION_DENIED (not a seat token)...
        """
        request = pb.SubmitActionRequest(
            match_id=match_id,
            action=convert.action_to_proto(_checked_action(action)),
            expected_version=_checked_version(expected_version),
        )
        return convert.view_from_proto(self._call(self._matches.SubmitAction, request).view)

    def undo(self, match_id: str, expected_version: int) -> dict[str, Any]:
        """Take back this seat's newest undoable move; returns this seat's new view.

        Raises:
            ValueError: ``expected_version`` is not an int in 0..2**63-1; nothing is sent.
            ApiError: FAILED_PRECONDITION (nothing to undo, stale version, game over)...
        """
        request = pb.UndoRequest(match_id=match_id, expected_version=_checked_version(expected_version))
        return convert.view_from_proto(self._call(self._matches.Undo, request).view)

    def log(self, match_id: str, offset: int = 0, limit: int = 500) -> dict[str, Any]:
        """This token's log lines from ``offset``, older than the view's 500 included.

        Returns:
            ``{"lines": [str], "total": int}``.
        """
        response = self._call(
            self._matches.GetLog, pb.GetLogRequest(match_id=match_id, offset=offset, limit=limit)
        )
        return {"lines": [entry.text for entry in response.lines], "total": response.total}

    def record(self, match_id: str) -> dict[str, Any]:
        """The match record (``tablehost.record/2``, 64-bit seeds exact): admin any time, players after game over."""
        response = self._call(self._matches.GetRecord, pb.GetRecordRequest(match_id=match_id))
        return orjson.loads(response.record_json)  # type: ignore[no-any-return]

    def list_matches(self, *, module_id: str = "", open_only: bool = False) -> list[dict[str, Any]]:
        """Matches this token may see, newest first.

        Args:
            module_id: only this module's matches.
            open_only: only waiting matches with an open seat.

        Returns:
            ``[{"match_id", "module_id", "module_name", "players": [{player_id, username, color}],
            "version", "game_over", "active_player_ids", "created_at", "status", "result" (dict or
            None), "open_seats", "options", "time_control"}]``.
        """
        response = self._call(
            self._matches.ListMatches, pb.ListMatchesRequest(module_id=module_id, open_only=open_only)
        )
        return [
            {
                "match_id": m.match_id,
                "module_id": m.module_id,
                "module_name": m.module_name,
                "players": [
                    {"player_id": p.player_id, "username": p.username, "color": p.color} for p in m.players
                ],
                "version": m.version,
                "game_over": m.game_over,
                "active_player_ids": list(m.active_player_ids),
                "created_at": m.created_at,
                "status": convert.STATUS_NAMES.get(m.status, "active"),
                "result": convert.result_from_proto(m.result) if m.HasField("result") else None,
                "open_seats": list(m.open_seats),
                "options": convert.from_struct(m.options),
                "time_control": convert.time_control_from_proto(m.time_control),
            }
            for m in response.matches
        ]


MAX_PIECE_INDEX = 2**32 - 1
MAX_VERSION = 2**63 - 1


def _checked_action(action: Any) -> dict[str, Any]:
    """``action`` if it has the shape of an ABI action; else ValueError with what is wrong."""
    if not isinstance(action, dict):
        raise ValueError(  # noqa: TRY004 - one error type for every malformed action
            f"an action is a dict such as {{'type': 'space_click', ...}}, got {type(action).__name__}"
        )
    wrong = action_type_problem(action) or unknown_action_keys(action)  # keys once the type is known
    if wrong is not None:
        raise ValueError(wrong)
    fields = ACTION_FIELDS[action["type"]]
    for name, kind in fields.items():
        value = action.get(name)
        if not isinstance(value, kind) or isinstance(value, bool) is not (kind is bool):
            raise ValueError(f"a {action['type']} needs {name!r} of type {kind.__name__}, got {shown_value(value)}")
    if action["type"] == "piece_click" and not 0 <= action["index"] <= MAX_PIECE_INDEX:
        raise ValueError(f"a piece index is 0 to {MAX_PIECE_INDEX}, got {action['index']}")
    for name, kind in BUTTON_FIELDS.items():
        value = action.get("button", {}).get(name, kind())
        if not isinstance(value, kind):
            raise ValueError(f"a button's {name!r} is a {kind.__name__}, got {shown_value(value)}")  # noqa: TRY004
    return action


def _checked_version(version: Any) -> int:
    """``version`` if it is a match version (an int in 0..2**63-1); else ValueError."""
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= MAX_VERSION:
        raise ValueError(
            f"expected_version is a match version, an int from 0 to {MAX_VERSION}; got {shown_value(version)}"
        )
    return version


def _module(module: pb.Module) -> dict[str, Any]:
    return {
        "module_id": module.module_id,
        "name": module.name,
        "size_bytes": module.size_bytes,
        "exports": list(module.exports),
        "uploaded_at": module.uploaded_at,
        "metadata": convert.metadata_from_proto(module.metadata),
    }
