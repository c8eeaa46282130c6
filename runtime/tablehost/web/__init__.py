"""The web table: an HTTP/JSON API, a push channel and a small browser app over the gRPC server's registry.

``tablehost serve --http HOST:PORT`` runs it beside the gRPC server, in the same process and
over the same :class:`~tablehost.api.registry.MatchRegistry`: the same tokens, the same
per-viewer views. :func:`~tablehost.web.app.create_app` builds the Starlette app;
:class:`~tablehost.web.app.HttpServer` runs it with uvicorn in a thread.
"""

from __future__ import annotations

from tablehost.web.app import HttpServer, create_app

__all__ = ["HttpServer", "create_app"]
