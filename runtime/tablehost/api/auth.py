"""Bearer tokens: who a request comes from, and the admin token file.

Three kinds of token exist: the admin token (one per data directory), one seat token per
seat of a match, and one spectator token per match. The server keeps only their sha256;
the admin token is also written in plain to ``DATA/admin_token`` (mode 0600) so its owner
can read it.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from tablehost.api.faults import Unauthenticated

ADMIN_TOKEN_FILENAME = "admin_token"
TOKEN_PREFIX = {"admin": "tha_", "seat": "ths_", "spectator": "thv_"}


@dataclass(frozen=True)
class Principal:
    """Who a request comes from.

    Attributes:
        kind: ``"admin"``, ``"seat"`` or ``"spectator"``.
        match_id: the match a seat or spectator token belongs to; ``None`` for the admin.
        player_id: the seat a seat token acts for; ``None`` otherwise.
    """

    kind: str
    match_id: str | None = None
    player_id: int | None = None

    @property
    def viewer(self) -> int | None:
        """The view this principal is served: its seat's player id, or ``None`` (spectator view)."""
        return self.player_id if self.kind == "seat" else None

    @property
    def label(self) -> str:
        """A short name for logs: ``admin``, ``spectator`` or ``seat:<player id>``."""
        return f"seat:{self.player_id}" if self.kind == "seat" else self.kind


ADMIN = Principal("admin")

current_principal: contextvars.ContextVar[Principal] = contextvars.ContextVar("tablehost_principal")
"""The principal of the request being served (set by the auth interceptor)."""


def new_token(kind: str) -> str:
    """Return a fresh bearer token of ``kind`` (``admin``/``seat``/``spectator``): prefix + 43 url-safe chars."""
    return TOKEN_PREFIX[kind] + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """Return the lowercase hex sha256 of a token (what the store keeps)."""
    return hashlib.sha256(token.encode()).hexdigest()


def bearer_token(metadata: tuple[tuple[str, str | bytes], ...] | None) -> str:
    """Extract the token from ``authorization: Bearer <token>`` request metadata.

    A request that carries more than one ``authorization`` entry is ambiguous (which seat is
    asking?), so it is refused whatever the entries say, rather than served as the first.

    Raises:
        Unauthenticated: no such entry, more than one, or one not of the Bearer form.
    """
    values = [value for key, value in metadata or () if key.lower() == "authorization"]
    if not values:
        raise Unauthenticated("missing 'authorization: Bearer <token>' metadata")
    if len(values) > 1:
        raise Unauthenticated(
            f"the request carries {len(values)} 'authorization' metadata entries; send exactly one "
            "'authorization: Bearer <token>'"
        )
    text = values[0].decode() if isinstance(values[0], bytes) else values[0]
    scheme, _, token = text.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    raise Unauthenticated("the authorization metadata must read 'Bearer <token>'")


def ensure_admin_token(data_dir: Path) -> tuple[Path, str]:
    """Return the admin token file of ``data_dir`` and its token, creating both on first use.

    The file is created with mode 0600 (owner read/write only) in one step, so the token is
    never readable by others, not even briefly.

    Returns:
        ``(path, token)``.
    """
    path = data_dir / ADMIN_TOKEN_FILENAME
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path, path.read_text().strip()
    token = new_token("admin")
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    return path, token
