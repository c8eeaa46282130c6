"""The HTTP/JSON API over a :class:`~tablehost.api.registry.MatchRegistry` (all under ``/api``).

Every request carries ``Authorization: Bearer <token>`` (the same tokens as gRPC); the registry
decides what the token may do and see. Bodies are JSON; errors are
``{"error": {"code", "message"}}`` with the status of :func:`tablehost.web.wire.http_status`.

=======  ===================================  ==================================================
method   path                                 what
=======  ===================================  ==================================================
GET      /api/whoami                          ``{"kind", "match_id", "player_id"}`` of the token
GET      /api/modules                         stored modules ``[{module_id, name, size_bytes, uploaded_at}]``
POST     /api/modules?name=N                  upload the request body as a module (admin)
GET      /api/matches                         the matches the token may see (summaries)
POST     /api/matches                         ``{"module_id", "seats": [{"username", "color", "open", "bot"}]}`` (admin)
POST     /api/matches/{id}/join               ``{"username", "color"?, "player_id"?}`` → the seat and its token
GET      /api/matches/{id}/view               the token's view (:func:`~tablehost.web.wire.view_json`)
GET      /api/matches/{id}/events             Server-Sent Events: ``event: view`` after every change
POST     /api/matches/{id}/actions            ``{"action": Action, "version": int}`` → the new view
POST     /api/matches/{id}/undo               ``{"version": int}`` → the new view
GET      /api/matches/{id}/module             the match's ``.wasm`` (``application/wasm``)
=======  ===================================  ==================================================

Any other path under ``/api`` answers 404 ``request/unknown_route``, and a listed path asked
with a method it does not take answers 405 ``request/method_not_allowed`` with an ``Allow``
header, in the same error shape (:func:`unrouted`); other unknown paths keep Starlette's plain
``Not Found``.

Registry calls block (locks, guest calls, fsync), so they run on worker threads; an open
event stream holds one thread of its own pool (capped by :class:`~tablehost.api.watch_slots.WatchSlots`).

Each request under ``/api`` is logged once when its answer ends, as gRPC's are: ``api.request``
with ``transport="http"``, ``method`` (the endpoint's name: ``whoami``, ``modules``, ``upload``,
``matches``, ``create``, ``join``, ``view``, ``events``, ``act``, ``undo``, ``module``; ``unrouted``
for a path or method no endpoint takes), ``match_id``, ``seat``, ``version`` (of the view
answered), ``outcome`` (the gRPC status name of the answer: ``OK``, ``RESOURCE_EXHAUSTED`` for a
429...; ``CANCELLED`` when the client went away before the answer ended, as from an event
stream), ``code`` (a refusal's error code), ``http_status``, ``messages`` (an event stream's
events sent) and ``latency_ms`` (an event stream's whole life); never a token, a body or a
query string. It is counted in ``tablehost_requests_total{transport="http", method, code}``
(:class:`RequestLog`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import ExitStack
from typing import Any

import anyio
import orjson
import structlog
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tablehost.api.auth import Principal
from tablehost.api.faults import (
    InvalidRequest,
    MethodNotAllowed,
    PermissionDenied,
    Unauthenticated,
    UnknownRoute,
)
from tablehost.api.interceptors import LOGGED_MATCH_ID_CHARS, cap, request_finished, status_for
from tablehost.api.metrics import Metrics
from tablehost.api.rate_limit import RequestGate, address_key
from tablehost.api.registry import MatchRegistry, ServedView
from tablehost.api.validation import check_identifier
from tablehost.api.watch_slots import WatchSlots
from tablehost.errors import TablehostError
from tablehost.web.wire import (
    action_from_json,
    created_json,
    error_body,
    http_status,
    only_keys,
    summary_json,
    view_json,
)

log = structlog.get_logger(__name__)

MAX_JSON_BODY_BYTES = 64 * 1024
"""The largest JSON request body accepted (an action or a seat list is far smaller)."""
NO_STORE = {"cache-control": "no-store"}


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A JSON response (orjson) that no cache keeps: views are per token (``headers`` added)."""
    merged = NO_STORE if headers is None else {**NO_STORE, **headers}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=merged)


def _peer(request: Request) -> str:
    """The HTTP client's :func:`~tablehost.api.rate_limit.address_key`, so an address's failed
    authentications over gRPC and HTTP count together (``unknown`` without a client address)."""
    host = request.client.host if request.client is not None else ""
    return address_key(host) if host else "unknown"


def bearer(request: Request) -> str:
    """The token of ``Authorization: Bearer <token>``.

    Two ``Authorization`` headers are ambiguous (the header is not a list: RFC 9110 allows it
    once), so they are refused whatever they say, as gRPC refuses two ``authorization`` entries.

    Raises:
        Unauthenticated: no such header, more than one, or one not of the Bearer form.
    """
    given = request.headers.getlist("authorization")
    if len(given) > 1:
        raise Unauthenticated(
            f"the request carries {len(given)} 'Authorization' headers; send exactly one "
            "'Authorization: Bearer <token>'"
        )
    scheme, _, token = (given[0] if given else "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("missing 'Authorization: Bearer <token>' header")
    return token.strip()


class BodyTooLarge(InvalidRequest):
    """The request body is over its cap: code ``request/invalid`` as every malformed request
    (gRPC: INVALID_ARGUMENT), HTTP status 413 Content Too Large (RFC 9110, 15.5.14)."""

    http_status = 413


async def capped_body(request: Request, limit_bytes: int) -> bytes:
    """The request body, read no further than ``limit_bytes`` (a larger body is never buffered).

    Raises:
        BodyTooLarge: the body is over ``limit_bytes`` (by its Content-Length, before reading).
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit_bytes:
        raise BodyTooLarge(f"the request body is over {limit_bytes} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit_bytes:
            raise BodyTooLarge(f"the request body is over {limit_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object body.

    Raises:
        InvalidRequest: over :data:`MAX_JSON_BODY_BYTES`, not JSON, or not an object.
    """
    raw = await capped_body(request, MAX_JSON_BODY_BYTES)
    try:
        body = orjson.loads(raw or b"{}")
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"the request body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise InvalidRequest("the request body must be a JSON object")
    return body


SHOWN_PATH_CHARS = 100
"""Most characters of a request's path (or method) an unknown-route message repeats."""


def is_api_path(path: str) -> bool:
    """Whether ``path`` is the API's (``/api`` or under it) rather than a page's or a file's."""
    return path == "/api" or path.startswith("/api/")


async def unrouted(request: Request, exc: Exception) -> Response:
    """The answer to a request no route takes (Starlette's 404 and 405 ``HTTPException``).

    Args:
        request: the request; its app's routes give the methods its path takes.
        exc: the ``HTTPException`` routing raised (404: no route has the path; 405: routes have
            the path, none the method).

    Returns:
        Under ``/api``: ``{"error": {"code": "request/unknown_route" | "request/method_not_allowed",
        "message"}}`` with the status (405 with ``Allow``: every method of every route of the
        path), the path and method repeated at most :data:`SHOWN_PATH_CHARS` characters. Elsewhere
        (pages, ``/static``): Starlette's own plain-text answer.
    """
    assert isinstance(exc, HTTPException)
    if not is_api_path(request.url.path):
        return PlainTextResponse(exc.detail, status_code=exc.status_code, headers=exc.headers)
    path = repr(request.url.path[:SHOWN_PATH_CHARS])
    if exc.status_code != 405:
        unknown = UnknownRoute(f"no API endpoint has the path {path}")
        structlog.contextvars.bind_contextvars(code=unknown.code)
        return json_response(error_body(unknown), http_status(unknown.code))
    allowed = ", ".join(_methods_of_path(request))
    method = repr(request.method[:SHOWN_PATH_CHARS])
    refused = MethodNotAllowed(f"{path} takes {allowed}, not {method}")
    structlog.contextvars.bind_contextvars(code=refused.code)
    return json_response(error_body(refused), http_status(refused.code), headers={"allow": allowed})


UNROUTED = "unrouted"
"""The ``method`` logged and counted for an API request no endpoint takes (:func:`unrouted`)."""


class RequestLog:
    """ASGI middleware: one ``api.request`` log line and one ``tablehost_requests_total`` count
    per request under ``/api`` (see the module docstring), when its answer has ended; pages and
    static files are neither logged nor counted.

    The endpoint (:meth:`Api._endpoint`, :func:`unrouted`) binds the request's fields to
    structlog's contextvars, in this middleware's task: the line carries them, and so does any
    line logged while the request runs (its worker threads copy the context).

    Args:
        app: the app the API is part of.
        metrics: where requests are counted; none: only logged.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics | None = None) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_api_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(method=UNROUTED)
        answer = {"status": 0, "events": 0, "ended": False, "stream": False}

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                answer["stream"] = any(
                    name == b"content-type" and value.startswith(b"text/event-stream")
                    for name, value in message.get("headers", [])
                )
            elif message["type"] == "http.response.body":
                answer["events"] += bool(message.get("body"))
                answer["ended"] = not message.get("more_body", False)
            await send(message)

        outcome = None
        try:
            await self.app(scope, receive, watched)
        except Exception:
            outcome = "INTERNAL"  # Starlette's outermost handler answers 500
            raise
        finally:
            self._finished(outcome, answer, started)

    def _finished(self, outcome: str | None, answer: dict[str, Any], started: float) -> None:
        """Log and count the request: ``outcome`` when the app raised, else from ``answer`` and
        the error code the endpoint bound."""
        context = structlog.contextvars.get_contextvars()
        code = context.get("code")
        if outcome is None:
            if not answer["ended"]:
                outcome = "CANCELLED"  # the client went away first (an event stream it closed)
            elif code is not None:
                outcome = status_for(code).name
            else:
                outcome = "OK" if answer["status"] < 400 else "UNKNOWN"
        extra = {"messages": answer["events"]} if answer["stream"] else {}
        request_finished(
            self.metrics, "http", str(context.get("method", UNROUTED)), outcome, started,
            http_status=answer["status"] or 500, **extra,
        )


def _methods_of_path(request: Request) -> list[str]:
    """Every method some route of the app takes at the request's path, sorted (Starlette's own
    ``Allow`` names only the first route's, and ``/api/modules`` has a GET and a POST route)."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        if isinstance(route, Route) and route.methods and route.matches(request.scope)[0] == Match.PARTIAL:
            methods |= route.methods
    return sorted(methods)


def _version(body: dict[str, Any]) -> int:
    version = body.get("version")
    if type(version) is not int or version < 0:
        raise InvalidRequest("'version' must be the view's version, an integer >= 0")
    return version


def _view_response(served: ServedView) -> Response:
    """The JSON answer of a served view; its version goes to the request's log line."""
    structlog.contextvars.bind_contextvars(version=served.view.version)
    return json_response(view_json(served))


Handler = Callable[[Request, Principal], Awaitable[Response]]


class Api:
    """The API's endpoints, bound to one registry.

    Args:
        registry: the server's matches and modules.
        max_watchers: event streams open at once on this HTTP server (each holds a thread).
        gate: the per-token and per-address rate limits (default: limits of this API's own).
        metrics: where the open event streams are counted (``watch_streams``); none: not counted.
        watch_slots: the gRPC server's watch caps (``serve`` passes them): this API's event
            streams take their :meth:`~tablehost.api.watch_slots.WatchSlots.sibling` of
            ``max_watchers``, so a token's streams over both transports count against one
            ``--watches-per-token``. Default: slots of this API's own, 4 per token.
    """

    def __init__(
        self,
        registry: MatchRegistry,
        *,
        max_watchers: int = 64,
        gate: RequestGate | None = None,
        metrics: Metrics | None = None,
        watch_slots: WatchSlots | None = None,
    ) -> None:
        self.registry = registry
        self.gate = gate if gate is not None else RequestGate()
        self.metrics = metrics
        self.slots = watch_slots.sibling(max_watchers) if watch_slots is not None else WatchSlots(max_watchers)
        if metrics is not None:
            metrics.follow_watch_slots(self.slots)
        self.watch_threads = anyio.CapacityLimiter(max_watchers)

    def routes(self) -> list[Route]:
        """The Starlette routes of the table above."""
        wrap = self._endpoint
        return [
            Route("/api/whoami", wrap(self.whoami), methods=["GET"]),
            Route("/api/modules", wrap(self.modules), methods=["GET"]),
            Route("/api/modules", wrap(self.upload), methods=["POST"]),
            Route("/api/matches", wrap(self.matches), methods=["GET"]),
            Route("/api/matches", wrap(self.create), methods=["POST"]),
            Route("/api/matches/{match_id}/join", wrap(self.join), methods=["POST"]),
            Route("/api/matches/{match_id}/view", wrap(self.view), methods=["GET"]),
            Route("/api/matches/{match_id}/events", wrap(self.events), methods=["GET"]),
            Route("/api/matches/{match_id}/actions", wrap(self.act), methods=["POST"]),
            Route("/api/matches/{match_id}/undo", wrap(self.undo), methods=["POST"]),
            Route("/api/matches/{match_id}/module", wrap(self.module), methods=["GET"]),
        ]

    def _endpoint(self, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        """Authenticate, run ``handler``, turn a :class:`TablehostError` into its status."""

        name = handler.__name__

        async def endpoint(request: Request) -> Response:
            principal: Principal | None = None
            match_id = request.path_params.get("match_id")
            structlog.contextvars.bind_contextvars(
                method=name, match_id=None if match_id is None else cap(match_id, LOGGED_MATCH_ID_CHARS)
            )
            try:
                principal = self.gate.authenticate(self.registry, lambda: bearer(request), lambda: _peer(request))
                structlog.contextvars.bind_contextvars(seat=principal.label)
                if match_id is not None:
                    check_identifier(match_id, "match_id")  # before any lookup or message echoes it
                return await handler(request, principal)
            except TablehostError as exc:
                structlog.contextvars.bind_contextvars(code=exc.code)
                if self.metrics is not None:
                    self.metrics.count_rate_limited(exc)
                status = getattr(exc, "http_status", None) or http_status(exc.code)
                if status >= 500 or exc.code.startswith("guest/"):
                    log.warning("http.refused", path=request.url.path, code=exc.code, error=exc.message)
                admin = principal is not None and principal.kind == "admin"
                retry_ms = getattr(exc, "retry_after_ms", None)
                headers = {"retry-after": str(max(1, -(-retry_ms // 1000)))} if retry_ms else None
                return json_response(error_body(exc, admin=admin), status, headers=headers)

        return endpoint

    # ------------------------------------------------------------ modules and matches

    async def whoami(self, request: Request, principal: Principal) -> Response:
        del request
        return json_response(
            {"kind": principal.kind, "match_id": principal.match_id, "player_id": principal.player_id}
        )

    async def modules(self, request: Request, principal: Principal) -> Response:
        del request
        listed = await run_in_threadpool(self._modules_with_seats, principal)
        return json_response(listed)

    def _modules_with_seats(self, principal: Principal) -> list[dict[str, Any]]:
        """Every stored module as ``{module_id, name, size_bytes, uploaded_at}`` plus, when its
        metadata op answers, ``min_players``, ``max_players`` and ``description`` (the lobby's
        seat count starts at the game's fewest seats). A module whose metadata fails is listed
        without them."""
        listed = []
        for m in self.registry.list_modules(principal):
            entry: dict[str, Any] = {
                "module_id": m.sha256, "name": m.name, "size_bytes": m.size_bytes, "uploaded_at": m.uploaded_at,
            }
            try:
                metadata = self.registry.metadata_of(m.sha256)
            except TablehostError:
                metadata = None
            if metadata is not None and metadata.declared:
                entry.update(
                    min_players=metadata.min_players,
                    max_players=metadata.max_players,
                    description=metadata.description,
                )
            listed.append(entry)
        return listed

    async def upload(self, request: Request, principal: Principal) -> Response:
        if principal.kind != "admin":  # before reading a body that may be megabytes
            raise PermissionDenied("only the admin token may upload modules")
        data = await capped_body(request, self.registry.limits.module_bytes)
        name = request.query_params.get("name", "")
        stored = await run_in_threadpool(self.registry.upload_module, principal, data, name)
        return json_response(
            {"module_id": stored.sha256, "name": stored.name, "size_bytes": stored.size_bytes}
        )

    async def matches(self, request: Request, principal: Principal) -> Response:
        del request
        summaries = await run_in_threadpool(self.registry.list_matches, principal)
        return json_response([summary_json(s) for s in summaries])

    async def create(self, request: Request, principal: Principal) -> Response:
        body = await json_body(request)
        module_id, seats = body.get("module_id"), body.get("seats")
        if not isinstance(module_id, str) or not isinstance(seats, list):
            raise InvalidRequest("send {'module_id': str, 'seats': [{'username': str, 'color': str}]}")
        check_identifier(module_id, "module_id")
        only_keys(body, ("module_id", "seats"), "a match to create")  # a typo must not pass unseen
        specs: list[tuple[str, str, bool, str]] = []
        for seat in seats:
            if not isinstance(seat, dict):
                raise InvalidRequest("each seat is {'username': str, 'color': str, 'open': bool, 'bot': str}")
            only_keys(seat, ("username", "color", "open", "bot"), "a seat")
            username, color, open_seat = seat.get("username", ""), seat.get("color", ""), seat.get("open", False)
            bot = seat.get("bot") or ""  # null or absent: a person's seat
            if not (isinstance(username, str) and isinstance(color, str) and isinstance(bot, str)
                    and isinstance(open_seat, bool)):
                raise InvalidRequest("a seat's username, color and bot are strings, open a boolean")
            # an open seat waits for a join; a bot seat ("mcts:300") is played by the server
            specs.append((username, color, open_seat, bot))
        created = await run_in_threadpool(self.registry.create_match, principal, module_id, specs)
        return json_response(created_json(created), 201)

    async def join(self, request: Request, principal: Principal) -> Response:
        """JoinMatch over HTTP: take an open seat of a waiting match (admin or its spectator token).

        Body ``{"username": str, "color": str?, "player_id": int?}``; answers 201 with
        ``{"match_id", "player_id", "username", "color", "token", "status"}`` (the seat token,
        shown once; ``status`` is ``"waiting"`` or, after the last seat, the started match's).
        Refusals as :meth:`MatchRegistry.join` raises them (``match/seat_taken`` is 409).
        """
        body = await json_body(request)
        username, color, seat = body.get("username"), body.get("color", ""), body.get("player_id")
        if not isinstance(username, str) or not isinstance(color, str) or not (seat is None or type(seat) is int):
            raise InvalidRequest("send {'username': str, 'color': str (optional), 'player_id': int (optional)}")
        match_id = request.path_params["match_id"]
        player, token, status = await run_in_threadpool(
            self.registry.join, principal, match_id, username, color, seat
        )
        joined = {
            "match_id": match_id,
            "player_id": player.player_id,
            "username": player.username,
            "color": player.color,
            "token": token,
            "status": status,
        }
        return json_response(joined, 201)

    # ------------------------------------------------------------ one match

    async def view(self, request: Request, principal: Principal) -> Response:
        served = await run_in_threadpool(self.registry.view, principal, request.path_params["match_id"])
        return _view_response(served)

    async def act(self, request: Request, principal: Principal) -> Response:
        body = await json_body(request)
        action = action_from_json(body.get("action"))
        served = await run_in_threadpool(
            self.registry.submit, principal, request.path_params["match_id"], action, _version(body)
        )
        return _view_response(served)

    async def undo(self, request: Request, principal: Principal) -> Response:
        body = await json_body(request)
        served = await run_in_threadpool(
            self.registry.undo, principal, request.path_params["match_id"], _version(body)
        )
        return _view_response(served)

    async def module(self, request: Request, principal: Principal) -> Response:
        stored = await run_in_threadpool(
            self.registry.match_module, principal, request.path_params["match_id"]
        )
        return Response(
            stored.data,
            media_type="application/wasm",
            headers={"cache-control": "private, max-age=86400", "etag": f'"{stored.sha256}"'},
        )

    async def events(self, request: Request, principal: Principal) -> Response:
        """The token's view now and after every change, as Server-Sent Events, until game over.

        Each event is ``event: view`` with the view's JSON as ``data``. A reader slower than the
        match gets the newest view, never a backlog (the registry coalesces).
        """
        match_id = request.path_params["match_id"]
        await run_in_threadpool(self.registry.view, principal, match_id)  # refuse before streaming
        stack = ExitStack()
        stack.enter_context(self.slots.hold(principal))
        stopped = threading.Event()
        watch = self.registry.watch(principal, match_id, lambda: not stopped.is_set())

        async def stream() -> AsyncIterator[bytes]:
            try:
                while True:
                    served = await anyio.to_thread.run_sync(
                        next, watch, None, abandon_on_cancel=True, limiter=self.watch_threads
                    )
                    if served is None:
                        return
                    yield b"event: view\ndata: " + orjson.dumps(view_json(served)) + b"\n\n"
            finally:
                stopped.set()  # the watch notices within WATCH_POLL_S and frees its thread
                stack.close()

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={**NO_STORE, "x-accel-buffering": "no"}
        )
