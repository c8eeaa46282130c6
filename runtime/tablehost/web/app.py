"""The web app (pages, static files, the API) and the thread that serves it with uvicorn.

Pages: ``/`` the lobby, ``/table`` a table. Tokens never travel in a URL the server sees:
pages read them from the URL *fragment* (``/table#match=M&token=T``; browsers never send a
fragment to the server, so it is in no request line or access log), keep them in
``sessionStorage`` (this tab only, gone when it closes), remove the fragment from the address
bar, and send them in the ``Authorization`` header. uvicorn's access log is off anyway.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

import structlog
import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tablehost.api.metrics import Metrics
from tablehost.api.rate_limit import RequestGate
from tablehost.api.registry import MatchRegistry
from tablehost.api.validation import check_address
from tablehost.api.watch_slots import WatchSlots
from tablehost.web.routes import Api, RequestLog, unrouted

log = structlog.get_logger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; "
    "style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'"
)
"""Only this server's own files run; ``'wasm-unsafe-eval'`` lets the page compile the match's module."""


class SecurityHeaders:
    """ASGI middleware adding the CSP, no-referrer and no-sniff headers to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-content-type-options", b"nosniff"),
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(registry: MatchRegistry, **api_options: Any) -> Starlette:
    """The Starlette app serving ``registry``: pages, ``/static``, and the API of :mod:`tablehost.web.routes`.

    Args:
        registry: the matches and modules to serve (shared with the gRPC server).
        api_options: :class:`~tablehost.web.routes.Api`'s keyword arguments: ``max_watchers``
            (event streams open at once, each holds a thread while it waits), ``gate`` (the
            per-token and per-address rate limits; default limits), ``metrics`` (the server's,
            shared with the gRPC server; none: not counted; its requests are logged either way)
            and ``watch_slots`` (the gRPC server's watch caps, whose per-token count the event
            streams share; default: caps of this app's own).

    Returns:
        The ASGI app.

    Raises:
        TypeError: an option ``Api`` does not take.
    """

    def page(name: str) -> Route:
        async def endpoint(request: Request) -> Response:
            del request
            return FileResponse(STATIC_DIR / name, headers={"cache-control": "no-cache"})

        return Route("/" if name == "lobby.html" else "/" + name.removesuffix(".html"), endpoint)

    api = Api(registry, **api_options)
    routes = [
        page("lobby.html"),
        page("table.html"),
        *api.routes(),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(SecurityHeaders), Middleware(RequestLog, metrics=api.metrics)],
        exception_handlers={404: unrouted, 405: unrouted},  # the API's unknown routes answer JSON
    )


class HttpServer:
    """The web app served by uvicorn on a thread of its own (beside the gRPC server).

    Args:
        address: ``host:port`` to listen on; port 0 picks a free port.
        registry: the registry the gRPC server serves.
        max_watchers: event streams open at once.
        reuse_port: bind with ``SO_REUSEPORT`` so several ``serve`` processes on one shared
            store listen on one address (the kernel spreads the connections; a stream on one
            process sees moves made on any other through the registry's watch, which wakes on
            the store's notifications).
        gate: the rate limits, shared with the gRPC server (``serve`` passes its own); default:
            the default limits, for this server alone.
        metrics: the server's metrics, shared with the gRPC server; none: not counted.
        watch_slots: the gRPC server's watch caps (``serve`` passes them), so one token's watch
            streams over gRPC and HTTP count against one ``--watches-per-token``; default: caps
            of this server's own (4 per token).

    Raises:
        ValueError: ``address`` is not ``host:port``.
        RuntimeError: the address cannot be bound (port taken, not an address of this machine).
    """

    def __init__(
        self,
        address: str,
        registry: MatchRegistry,
        *,
        max_watchers: int = 64,
        reuse_port: bool = False,
        gate: RequestGate | None = None,
        metrics: Metrics | None = None,
        watch_slots: WatchSlots | None = None,
    ) -> None:
        host, port = check_address(address, listening=True)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM)
        if reuse_port:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            self._socket.bind((host, port))
        except OSError as exc:
            self._socket.close()
            raise RuntimeError(
                f"cannot listen on {address} for HTTP: {exc.strerror} (is another server running?)"
            ) from exc
        self.host = host
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(
            create_app(registry, max_watchers=max_watchers, gate=gate, metrics=metrics, watch_slots=watch_slots),
            log_config=None,
            access_log=False,  # tokens are never in URLs, but request lines stay out of logs all the same
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="tablehost-http", daemon=True)

    @property
    def url(self) -> str:
        """``http://host:port`` of the running server."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def _run(self) -> None:
        self._server.run(sockets=[self._socket])

    def start(self) -> None:
        """Start serving; returns once uvicorn accepts connections (at most 10 s)."""
        self._thread.start()
        for _ in range(1000):
            if self._server.started or not self._thread.is_alive():
                break
            threading.Event().wait(0.01)
        if not self._server.started:
            raise RuntimeError(f"the HTTP server on {self.url} did not start")
        log.info("http.started", url=self.url)

    def stop(self) -> None:
        """Stop accepting, let open requests finish (2 s at most), join the thread."""
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()
