"""The one request wrapper: authentication, request context, error mapping, one log event per request.

It wraps each ``tablehost.v1`` method's behaviour once, when the servicer is registered
(:meth:`RequestInterceptor.wrap_servicer`), not as a ``grpc.ServerInterceptor``: grpc runs an
interceptor pipeline for every RPC on its one intake thread, under the interpreter lock that
every request thread waits for, and that pipeline was about 7% of the serving process's
interpreter time (py-spy, saturated tic-tac-toe). Health and reflection are not wrapped.

The methods are registered with no request deserializer (:meth:`RequestInterceptor.add_to_server`):
grpc hands the wrapper the request's bytes, and the wrapper parses them on the request's own
thread. A body that is not the method's message (corrupt wire format, a string field that is not
UTF-8) is then a refusal like any other, INVALID_ARGUMENT ``request/invalid: the request is not a
valid tablehost.v1.<Message>: <why>``, logged and counted; had grpc parsed it, it would answer
INTERNAL ("Exception deserializing request!") from its intake thread, unlogged and uncounted.
The parse is the same ``FromString`` grpc called (about 0.6 µs for a GetView or SubmitAction
request), moved off grpc's one intake thread onto the request's thread.

For every wrapped method it

1. parses the request and binds the request context (method, match id) to structlog's
   contextvars;
2. resolves the ``authorization: Bearer`` token to a principal
   (:data:`~tablehost.api.auth.current_principal`) and takes one request from that token's
   rate limit (:mod:`tablehost.api.rate_limit`); a failed authentication counts against the
   peer address, and an address over that limit gets RESOURCE_EXHAUSTED, without a lookup,
   for any token this process does not know; the token is checked before a malformed body
   is refused, so a request without a known token is UNAUTHENTICATED whatever its body, and a
   malformed one with a known token INVALID_ARGUMENT;
3. maps any :class:`~tablehost.errors.TablehostError` to a gRPC status through
   :data:`STATUS_BY_CODE`, with ``"<code>: <message>"`` as details and the code in the
   ``tablehost-code`` trailing metadata (and ``retry-after-ms`` when the error carries a retry
   hint); anything else becomes INTERNAL (logged with its trace);
4. logs ``api.request`` with ``transport="grpc"``, method, match_id (its first
   :data:`LOGGED_MATCH_ID_CHARS`), seat, version, outcome and latency_ms
   (:func:`request_finished`, which the HTTP API's requests are logged through too), and
   ``guest.call_failed`` with the budget that tripped when the game failed; counts the request
   in the server's metrics (:mod:`tablehost.api.metrics`).

What the game said stays with the admin (platform rule 2): for a guest failure a player or
spectator gets a fixed reason per code and a log reference (``ref``) naming the
``guest.call_failed`` log entry, which holds the message and what the game printed
(bounded); the admin token gets the message. ``serve --show-guest-output`` (for authors
developing locally) shows everyone the message and the printed output.

Every message put into the status (details, trailing metadata) is capped at
:data:`DETAILS_CHARS_MAX` characters, so no answer can grow the trailers past grpc's
metadata limit and turn the status into RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import grpc
import structlog
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, ServiceDescriptor
from google.protobuf.message import DecodeError

from tablehost.api.auth import ADMIN, Principal, bearer_token, current_principal
from tablehost.api.faults import InvalidRequest
from tablehost.api.metrics import Metrics
from tablehost.api.rate_limit import RateLimits, RequestGate, peer_address
from tablehost.api.registry import MatchRegistry
from tablehost.errors import BudgetExceeded, GuestError, TablehostError
from tablehost.store.errors import StoreError, store_reason

log = structlog.get_logger(__name__)

NOBODY = Principal("nobody")
"""The principal of a request until its token is resolved."""

STATUS_BY_CODE: dict[str, grpc.StatusCode] = {
    "request/invalid": grpc.StatusCode.INVALID_ARGUMENT,
    "request/too_many_watchers": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "request/rate_limited": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "response/too_large": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "module/invalid": grpc.StatusCode.INVALID_ARGUMENT,
    # A player count or option the module does not declare: refused before any guest call.
    "setup/invalid": grpc.StatusCode.INVALID_ARGUMENT,
    "match/seat_taken": grpc.StatusCode.FAILED_PRECONDITION,
    "module/unknown": grpc.StatusCode.NOT_FOUND,
    "module/quarantined": grpc.StatusCode.UNAVAILABLE,
    "module/busy": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "match/unknown": grpc.StatusCode.NOT_FOUND,
    "match/over": grpc.StatusCode.FAILED_PRECONDITION,
    # The match exists but has no game yet (open seats), or never had one (aborted while waiting).
    "match/waiting": grpc.StatusCode.FAILED_PRECONDITION,
    "match/never_started": grpc.StatusCode.FAILED_PRECONDITION,
    "match/not_your_turn": grpc.StatusCode.FAILED_PRECONDITION,
    "match/stale_version": grpc.StatusCode.FAILED_PRECONDITION,
    "match/not_offered": grpc.StatusCode.FAILED_PRECONDITION,
    "match/undo_refused": grpc.StatusCode.FAILED_PRECONDITION,
    "match/nothing_to_undo": grpc.StatusCode.FAILED_PRECONDITION,
    # The module offers nobody an action: a fault of the game, like a guest failure.
    "match/stuck": grpc.StatusCode.ABORTED,
    "guest/panic": grpc.StatusCode.ABORTED,
    "guest/trap": grpc.StatusCode.ABORTED,
    "guest/budget": grpc.StatusCode.ABORTED,
    "guest/protocol": grpc.StatusCode.ABORTED,
    "guest/error": grpc.StatusCode.ABORTED,
    # The host stopped a server bot's search (its match ended): never a client's answer.
    "guest/cancelled": grpc.StatusCode.ABORTED,
    "table/bad_patch": grpc.StatusCode.ABORTED,
    "record/invalid": grpc.StatusCode.DATA_LOSS,
    "auth/unauthenticated": grpc.StatusCode.UNAUTHENTICATED,
    "auth/permission_denied": grpc.StatusCode.PERMISSION_DENIED,
    # Raised when a server starts, never while it serves; listed so the table stays total.
    "store/unusable": grpc.StatusCode.UNAVAILABLE,
    "store/in_use": grpc.StatusCode.UNAVAILABLE,
    # The database went away or is overloaded: nothing was stored, the request may be retried.
    "store/unavailable": grpc.StatusCode.UNAVAILABLE,
    # Another process stored this version first (the hold on a match makes this rare).
    "store/conflict": grpc.StatusCode.ABORTED,
    "store/missing_ref": grpc.StatusCode.INTERNAL,
    "store/error": grpc.StatusCode.INTERNAL,
    # HTTP only (a path or method the API does not have); grpc answers an unknown method so itself.
    "request/unknown_route": grpc.StatusCode.UNIMPLEMENTED,
    "request/method_not_allowed": grpc.StatusCode.UNIMPLEMENTED,
}
"""Every error code of the host → the gRPC status a client receives (the one mapping table)."""


def status_for(code: str) -> grpc.StatusCode:
    """The status of an error code; an unlisted ``guest/*`` is ABORTED, ``match/*`` FAILED_PRECONDITION."""
    if code in STATUS_BY_CODE:
        return STATUS_BY_CODE[code]
    if code.startswith("guest/"):
        return grpc.StatusCode.ABORTED
    if code.startswith("match/"):
        return grpc.StatusCode.FAILED_PRECONDITION
    return grpc.StatusCode.INTERNAL


DETAILS_CHARS_MAX = 1000
"""Characters of a status's details: grpc percent-encodes them, so one character may take up to
12 bytes, and the client refuses trailers over 16 KiB."""

LOGGED_PRINTED_CHARS = 4096
"""Characters of a failed call's printed output in its ``guest.call_failed`` log entry (the newest)."""

LOGGED_MATCH_ID_CHARS = 64
"""Characters of a request's ``match_id`` bound to its log events (``api.request`` and the rest):
the field is the client's, read before the token is checked, and a request may be 16 MiB; a real
match id (``m-`` and 16 hex digits) is far shorter."""

GUEST_REASONS: dict[str, str] = {
    "guest/panic": "the game failed while handling this request",
    "guest/trap": "the game crashed while handling this request",
    "guest/budget": "the game ran out of a budget while handling this request",
    "guest/protocol": "the game answered something the host does not accept",
    "guest/error": "the game could not handle this request",
    # The host's own refusals, not a failure of this game's answer:
    "module/busy": "the server's slots for running games stayed busy (another game is slow); retry shortly",
    "module/quarantined": "this game's calls kept failing, so the server pauses it for a while; retry later",
}
"""What a player is told of a guest failure, by code; the details are in the server log."""


def cap(text: str, limit: int = DETAILS_CHARS_MAX) -> str:
    """``text`` cut to ``limit`` characters, marked when cut."""
    return text if len(text) <= limit else text[: limit - 14] + " […truncated]"


def details_for(exc: TablehostError, *, show_guest: bool = True, ref: str | None = None) -> str:
    """The status details of ``exc``, at most :data:`DETAILS_CHARS_MAX` characters.

    Args:
        exc: the failure.
        show_guest: for a guest failure, include the game's message and printed output (the
            admin, or ``--show-guest-output``); else a fixed reason of :data:`GUEST_REASONS`.
            Likewise for a store failure, whose message is the database driver's (it names the
            database's host and port): else the fixed reason of
            :func:`~tablehost.store.errors.store_reason`.
        ref: the log reference of the ``guest.call_failed`` entry, quoted for the reader.

    Returns:
        ``"<code>: <message>"`` (with ``(the game printed: …)`` when shown), or
        ``"<code>: <fixed reason> (log ref <ref>)"``.
    """
    if isinstance(exc, GuestError) and not show_guest:
        reason = GUEST_REASONS.get(exc.code, GUEST_REASONS["guest/error"])
        return cap(f"{exc.code}: {reason}" + (f" (log ref {ref})" if ref else ""))
    if isinstance(exc, StoreError) and not show_guest:  # the driver's text names the database
        return cap(f"{exc.code}: {store_reason(exc.code)}" + (f" (log ref {ref})" if ref else ""))
    text = f"{exc.code}: {exc.message}"
    printed = exc.printed if isinstance(exc, GuestError) else ""
    if printed:
        text = f"{cap(text, DETAILS_CHARS_MAX // 2)} (the game printed: {printed[-500:]})"
    if isinstance(exc, GuestError) and ref:
        text += f" (log ref {ref})"
    return cap(text)


def request_parser(message_type: Descriptor) -> Callable[[bytes], Any]:
    """The parser of one method's serialized requests.

    Args:
        message_type: the request message's descriptor (``method.input_type``).

    Returns:
        ``parse(data) -> message``: ``data`` parsed as that message (unknown fields kept, as
        protobuf does).

    Raises:
        InvalidRequest: (from ``parse``) ``data`` is not that message: ``"the request is not a
            valid tablehost.v1.GetViewRequest: Wire format was corrupt"``, or ``String field had
            bad UTF-8`` for a string field that is not UTF-8.
    """
    from_string = message_factory.GetMessageClass(message_type).FromString
    name = message_type.full_name

    def parse(data: bytes) -> Any:
        try:
            return from_string(data)
        except DecodeError as exc:
            # "Error parsing message with type 'tablehost.v1.X': Wire format was corrupt"
            reason = str(exc).rpartition("': ")[2] or "not a protobuf message"
            raise InvalidRequest(f"the request is not a valid {name}: {cap(reason, 200)}") from None

    return parse


def request_finished(
    metrics: Metrics | None,
    transport: str,
    method: str,
    outcome: str,
    started: float,
    cpu_s: float | None = None,
    **fields: Any,
) -> None:
    """Log ``api.request`` for one finished request and count it: the one request log line of
    both transports (gRPC's :class:`RequestInterceptor`, the HTTP API's
    :class:`~tablehost.web.routes.RequestLog`).

    The line holds ``transport``, ``outcome``, ``fields`` and ``latency_ms``, plus the request
    context bound to structlog's contextvars (``method``, ``match_id``, ``seat``, ``version``);
    never a token or a body.

    Args:
        metrics: where the request is counted (:meth:`Metrics.count_request`); None: not counted.
        transport: ``grpc`` or ``http``.
        method: the RPC's name, or the HTTP endpoint's (``view``, ``act``...).
        outcome: the status name (``OK``, ``CANCELLED``, ``INVALID_ARGUMENT``...).
        started: ``time.perf_counter()`` seconds when the request came in.
        cpu_s: CPU seconds the serving thread spent on it (``request_cpu_seconds``); None: not
            measured.
        fields: more log fields (a stream's ``messages`` sent, an HTTP answer's ``http_status``).
    """
    log.info("api.request", transport=transport, outcome=outcome, **fields,
             latency_ms=round((time.perf_counter() - started) * 1e3, 3))
    if metrics is not None:
        metrics.count_request(method, outcome, cpu_s, transport)


class RequestInterceptor:
    """Wraps every ``tablehost.v1`` method with auth, context, error mapping and the request log.

    Args:
        registry: resolves bearer tokens to principals.
        metrics: counts requests by method and status (and rate-limit refusals).
        rate_limits: the per-token request budget and the per-address failed-authentication
            budget (default :class:`RateLimits`); ignored when ``gate`` is given.
        gate: the limits' buckets, to share with the HTTP API (default: made from ``rate_limits``).
        show_guest_output: tell every caller what a failing game said and printed (local
            development); by default only the admin is told, players get a log reference.
    """

    def __init__(
        self,
        registry: MatchRegistry,
        metrics: Metrics | None = None,
        rate_limits: RateLimits | None = None,
        *,
        show_guest_output: bool = False,
        gate: RequestGate | None = None,
    ) -> None:
        self.registry = registry
        self.metrics = metrics
        self.gate = gate if gate is not None else RequestGate(rate_limits)
        self.show_guest_output = show_guest_output

    def wrap_servicer(self, servicer: Any, service: ServiceDescriptor) -> SimpleNamespace:
        """A stand-in for ``servicer`` whose every method of ``service`` is wrapped once.

        Args:
            servicer: the object with one behaviour per method (``behaviour(request, context)``,
                ``request`` the parsed message).
            service: the service's descriptor (``pb.DESCRIPTOR.services_by_name[NAME]``): which
                methods there are, their request messages, and which stream their responses.

        Returns:
            An object with one handler per method, ``handler(request_bytes, context)``: each
            parses the serialized request itself (:func:`request_parser`). Register it with
            :meth:`add_to_server`, which tells grpc to pass the bytes through.

        Raises:
            TypeError: a method streams its requests (none does; wrapping one would need its
                own handler, and leaving it bare would skip authentication).
        """
        wrapped = SimpleNamespace()
        for method in service.methods:
            if method.client_streaming:
                raise TypeError(f"{service.name}.{method.name} streams requests: no wrapper for that")
            wrap = self._stream if method.server_streaming else self._unary
            behaviour = getattr(servicer, method.name)
            setattr(wrapped, method.name, wrap(method.name, behaviour, request_parser(method.input_type)))
        return wrapped

    def add_to_server(self, servicer: Any, service: ServiceDescriptor, server: grpc.Server) -> None:
        """Serve ``service`` on ``server`` through :meth:`wrap_servicer`'s handlers.

        What grpc's generated ``add_*Servicer_to_server`` does, with one difference: no request
        deserializer, so grpc hands each handler the request's bytes and a malformed body reaches
        the wrapper's error path (INVALID_ARGUMENT) instead of grpc's (INTERNAL, unlogged).
        Responses are serialized by grpc as usual.

        Args:
            servicer: the behaviours (as for :meth:`wrap_servicer`).
            service: the service's descriptor.
            server: a grpc server not started yet.
        """
        wrapped = self.wrap_servicer(servicer, service)
        handlers: dict[str, grpc.RpcMethodHandler] = {}
        for method in service.methods:
            serialize = message_factory.GetMessageClass(method.output_type).SerializeToString
            kind = grpc.unary_stream_rpc_method_handler if method.server_streaming else grpc.unary_unary_rpc_method_handler
            handlers[method.name] = kind(
                getattr(wrapped, method.name), request_deserializer=None, response_serializer=serialize
            )
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
        server.add_registered_method_handlers(service.full_name, handlers)  # the generated stubs' fast path

    def _begin(self, method: str, data: bytes, parse: Callable[[bytes], Any], context: grpc.ServicerContext) -> Any:
        """Start a request: parse it, bind its context, authenticate it; return the parsed request.

        Raises:
            Unauthenticated: no token, or an unknown one (whatever the body).
            RateLimited: the token is over its rate.
            InvalidRequest: the body is not the method's request message (a known token).
        """
        structlog.contextvars.clear_contextvars()
        current_principal.set(NOBODY)  # a thread's previous request must not lend its principal
        malformed: InvalidRequest | None = None
        try:
            request = parse(data)
        except InvalidRequest as exc:
            request, malformed = None, exc
        structlog.contextvars.bind_contextvars(
            method=method, match_id=cap(getattr(request, "match_id", ""), LOGGED_MATCH_ID_CHARS) or None
        )
        principal = self._authenticate(context)
        current_principal.set(principal)
        structlog.contextvars.bind_contextvars(seat=principal.label)
        if malformed is not None:
            raise malformed
        return request

    def _authenticate(self, context: grpc.ServicerContext) -> Principal:
        """The principal of the request's bearer token, within the shared limits (:class:`RequestGate`).

        Raises:
            Unauthenticated: no token or an unknown one (counted against the peer address).
            RateLimited: the token is over its rate; or the peer address is over its failures
                and the token is not one this process knows (``kind="auth"``; not looked up).
        """
        return self.gate.authenticate(
            self.registry, lambda: bearer_token(context.invocation_metadata()), lambda: peer_address(context.peer())
        )

    def _fail(self, exc: BaseException, context: grpc.ServicerContext) -> tuple[grpc.StatusCode, str | None]:
        """Log ``exc``, set the ``tablehost-code`` trailer; return the status and the log ref."""
        if not isinstance(exc, TablehostError):
            log.exception("api.internal_error")
            return grpc.StatusCode.INTERNAL, None
        ref = None
        if isinstance(exc, StoreError):
            ref = secrets.token_hex(6)
            log.warning("store.request_failed", ref=ref, code=exc.code, error=cap(exc.message, LOGGED_PRINTED_CHARS))
        if isinstance(exc, GuestError):
            ref = secrets.token_hex(6)
            log.warning(
                "guest.call_failed",
                ref=ref,
                code=exc.code,
                op=exc.op or None,
                budget=exc.budget if isinstance(exc, BudgetExceeded) else None,
                message=cap(exc.message, LOGGED_PRINTED_CHARS),
                printed=exc.printed[-LOGGED_PRINTED_CHARS:] or None,
            )
        status = status_for(exc.code)
        trailing: tuple[tuple[str, str], ...] = (("tablehost-code", cap(exc.code, 64)),)
        retry_after_ms = getattr(exc, "retry_after_ms", None)
        if retry_after_ms is not None:
            trailing += (("retry-after-ms", str(retry_after_ms)),)
            if self.metrics is not None:
                self.metrics.count_rate_limited(exc)
        context.set_trailing_metadata(trailing)
        return status, ref

    def _failure(self, exc: Exception, context: grpc.ServicerContext) -> tuple[grpc.StatusCode, str]:
        """The status for ``exc`` and a reason a person can act on (internal errors stay in the log)."""
        status, ref = self._fail(exc, context)
        if not isinstance(exc, TablehostError):
            return status, "internal error; see the server log"
        principal = current_principal.get(None)
        show = self.show_guest_output or (principal is not None and principal.kind == ADMIN.kind)
        return status, details_for(exc, show_guest=show, ref=ref)

    def _finished(self, method: str, outcome: str, started: float, cpu_s: float, **fields: Any) -> None:
        """Log and count one finished gRPC request (:func:`request_finished`, transport ``grpc``)."""
        request_finished(self.metrics, "grpc", method, outcome, started, cpu_s, **fields)

    def _unary(
        self, method: str, behavior: Callable[[Any, Any], Any], parse: Callable[[bytes], Any]
    ) -> Callable[[bytes, Any], Any]:
        def handle(data: bytes, context: grpc.ServicerContext) -> Any:
            started, cpu = time.perf_counter(), time.thread_time()
            outcome = "OK"
            try:
                request = self._begin(method, data, parse, context)
                return behavior(request, context)
            except Exception as exc:  # noqa: BLE001 - the one place any failure becomes a status
                status, message = self._failure(exc, context)
                outcome = status.name
                context.abort(status, message)
            finally:
                self._finished(method, outcome, started, time.thread_time() - cpu)

        return handle

    def _stream(
        self, method: str, behavior: Callable[[Any, Any], Iterator[Any]], parse: Callable[[bytes], Any]
    ) -> Callable[[bytes, Any], Any]:
        def handle(data: bytes, context: grpc.ServicerContext) -> Iterator[Any]:
            started, cpu_s = time.perf_counter(), 0.0
            outcome, sent = "OK", 0
            try:
                cpu = time.thread_time()
                request = self._begin(method, data, parse, context)
                for message in behavior(request, context):
                    sent += 1
                    cpu_s += time.thread_time() - cpu  # the thread may change between messages
                    yield message
                    cpu = time.thread_time()
                cpu_s += time.thread_time() - cpu
                if not context.is_active():  # the stream ended because the client went away
                    outcome = "CANCELLED"
            except GeneratorExit:
                outcome = "CANCELLED"
                raise
            except Exception as exc:  # noqa: BLE001 - the one place any failure becomes a status
                status, message = self._failure(exc, context)
                outcome = status.name
                context.abort(status, message)
            finally:
                self._finished(method, outcome, started, cpu_s, messages=sent)

        return handle
