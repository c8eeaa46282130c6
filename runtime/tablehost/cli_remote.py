"""The server commands of ``tablehost``: ``serve``, ``upload``, ``create``, ``view``, ``act``, ``watch``,
``record``, ``bots``.

:func:`register` adds them to the ``tablehost`` parser (:mod:`tablehost.cli`). Every client
command takes ``--address`` (default ``$TABLEHOST_ADDRESS`` or ``127.0.0.1:50051``) and a token:
``--token``, else ``$TABLEHOST_TOKEN``, else the file named by ``--token-file`` (default
``tablehost-data/admin_token``, the admin token of a server started in this directory).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import orjson

from tablehost.api.rate_limit import DEFAULT_AUTH_FAILURE_BURST, DEFAULT_AUTH_FAILURES_PER_S
from tablehost.api.registry import MAX_SEATS
from tablehost.api.validation import check_address, check_token, unknown_keys
from tablehost.bots import Bot, SearchBot, is_search_bot, make_bot, parse_bot_list
from tablehost.cli_budgets import add_budget_options, budget_argv, limits_from_args
from tablehost.cli_ranges import (
    MAX_CHECK_GAMES,
    MAX_EVICT_AFTER_S,
    MAX_GIVE_UP_S,
    MAX_LIVE_MATCHES,
    MAX_PROCESSES,
    MAX_RATE_BURST,
    MAX_RATE_PER_S,
    MAX_RECONNECT_FOR_S,
    MAX_REQUEST_THREADS,
    MAX_SWITCH_INTERVAL_MS,
    MAX_WATCHES_PER_TOKEN,
    MIN_SWITCH_INTERVAL_MS,
    require_in_range,
)
from tablehost.client import ApiError, ServerUnreachable, TablehostClient
from tablehost.errors import ModuleError
from tablehost.gcpolicy import DEFAULT_SWITCH_INTERVAL_MS
from tablehost.limits import DEFAULT_LIMITS
from tablehost.match import UNDO_ACTION
from tablehost.module_file import read_module_file
from tablehost.reconnect import DEFAULT_BACKOFF, DEFAULT_RECONNECT_FOR_S, Backoff, Session
from tablehost.terminal import escape_controls

if TYPE_CHECKING:  # loaded only for search bots: a client needs no wasm engine otherwise
    from tablehost.guest import GuestPool

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_DATA = "tablehost-data"
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2

BAD_INPUT_STATUSES = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.FAILED_PRECONDITION,
    }
)
"""Refusals of what the user asked (a bad token, an unknown id, an undeclared option, not your
turn): exit 2 like any bad input. Every other failure (unreachable, busy, internal) exits 1."""


# ---------------------------------------------------------------- shared options


def _client_options(parser: argparse.ArgumentParser, *, token: bool = True) -> None:
    """Add ``--address``, ``--json`` and (with ``token``) ``--token`` and ``--token-file``."""
    parser.add_argument(
        "--address",
        default=os.environ.get("TABLEHOST_ADDRESS", DEFAULT_ADDRESS),
        help="server host:port (default $TABLEHOST_ADDRESS or %(default)s)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    if not token:
        return
    parser.add_argument(
        "--token", default=os.environ.get("TABLEHOST_TOKEN"), help="bearer token ($TABLEHOST_TOKEN)"
    )
    parser.add_argument(
        "--token-file",
        default=f"{DEFAULT_DATA}/admin_token",
        help="read the token from this file when --token is not given (default %(default)s)",
    )


def _match_command(
    commands: Any, name: str, help_text: str, func: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    """Add the remote command ``tablehost NAME MATCH_ID`` (with the client options) that runs ``func``.

    Args:
        commands: the subparsers of ``tablehost``.
        name: the command's name.
        help_text: its one-line help.
        func: what it runs.

    Returns:
        Its parser, for options of its own.
    """
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help_text)
    parser.add_argument("match_id")
    _client_options(parser)
    parser.set_defaults(func=func)
    return parser


TOKEN_FILE_BYTES = 1024
"""Most bytes of a ``--token-file`` read (a token is at most 256 characters, a newline after it)."""


def read_token_file(path: str | Path, missing: str) -> str:
    """The stripped text of a token file, read bounded (``--token-file /dev/zero``).

    Args:
        path: the file.
        missing: what the refusal of an unreadable file starts with.

    Raises:
        SystemExit: unreadable (``missing``, the path and why), over :data:`TOKEN_FILE_BYTES`,
            or not UTF-8 (the CLI exits 2).
    """
    try:
        with open(path, "rb") as file:
            data = file.read(TOKEN_FILE_BYTES + 1)
    except OSError as exc:
        raise SystemExit(f"tablehost: {missing} (tried {path}: {exc.strerror or exc})") from None
    if len(data) > TOKEN_FILE_BYTES:
        raise SystemExit(f"tablehost: the token file {path} holds more than {TOKEN_FILE_BYTES} bytes: not a token file")
    try:
        return data.decode().strip()
    except UnicodeDecodeError:
        raise SystemExit(f"tablehost: the token file {path} is not UTF-8 text: not a token file") from None


def _token(args: argparse.Namespace) -> str:
    """The token a client command sends: ``--token`` (default ``$TABLEHOST_TOKEN``), else the
    ``--token-file``'s text, stripped.

    Raises:
        SystemExit: no token anywhere, or one grpc cannot send (not 1 to 256 printable ASCII
            characters without spaces, :func:`~tablehost.api.validation.check_token`), naming
            where it came from but not echoing it; before any connection (the CLI exits 2).
    """
    if args.token:
        token, source = str(args.token), "--token (or $TABLEHOST_TOKEN)"
    else:
        source = f"the token file {args.token_file}"
        token = read_token_file(
            args.token_file,
            "no token: pass --token, set TABLEHOST_TOKEN, or point --token-file at the server's admin_token",
        )
    try:
        return check_token(token)
    except ValueError as exc:
        raise SystemExit(f"tablehost: {source}: {exc}") from None


def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn client failures into one readable line: exit 2 for a refusal of bad input
    (:data:`BAD_INPUT_STATUSES`), else 1."""

    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except ServerUnreachable as exc:
            print(f"tablehost: {escape_controls(exc.details)}", file=sys.stderr)
        except BotError as exc:  # its details already name the token and the refusal
            print(f"tablehost: {escape_controls(exc.details)}", file=sys.stderr)
            if exc.status in BAD_INPUT_STATUSES:
                return EXIT_BAD_INPUT
        except ApiError as exc:
            if exc.status == grpc.StatusCode.DEADLINE_EXCEEDED:  # the client's own deadline, not a refusal
                print(
                    "tablehost: no answer from the server within the deadline: a move may still have been "
                    "applied (tablehost view shows the match as it is now)",
                    file=sys.stderr,
                )
                return EXIT_FAILED
            print(
                f"tablehost: the server refused: {exc.status.name}: {escape_controls(exc.details)}",
                file=sys.stderr,
            )
            if exc.status in BAD_INPUT_STATUSES:
                return EXIT_BAD_INPUT
        return EXIT_FAILED

    run.__doc__ = command.__doc__
    return run


def _dump(value: Any) -> None:
    print(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


# ---------------------------------------------------------------- printing views


def describe_action(action: dict[str, Any]) -> str:
    """A short text for an ABI action dict (``space c3``, ``piece hand-1[2]``, ``button pass``)."""
    kind = action.get("type")
    if kind == "space_click":
        return f"space {action['space_id']}"
    if kind == "piece_click":
        return f"piece {action['space_id']}[{action['index']}]"
    if kind == "button_click":
        return f"button {action['button'].get('id')}"
    return orjson.dumps(action).decode()


def _piece_text(piece: dict[str, Any]) -> str:
    text = piece.get("private_kind") or piece.get("public_kind") or "?"
    return f"{text}×{piece['count']}" if piece.get("count") is not None else str(text)


SPACE_STATE_CHARS = 60
"""Most characters of a space's ``public_state`` a text view prints (cut with ``…``)."""


def _state_text(state: Any) -> str:
    """A space's ``public_state`` as ``{owner=2, armies=3}``, at most :data:`SPACE_STATE_CHARS`
    characters; empty for an empty or missing state."""
    if not isinstance(state, dict) or not state:
        return ""
    text = "{" + ", ".join(f"{key}={orjson.dumps(value).decode()}" for key, value in state.items()) + "}"
    return text if len(text) <= SPACE_STATE_CHARS else text[: SPACE_STATE_CHARS - 1] + "…"


def usernames_by_seat(players: list[dict[str, Any]]) -> dict[int, str]:
    """``{player_id: username}`` of a view's ``state["players"]`` or a listed match's ``players``."""
    return {p["player_id"]: p["username"] for p in players}


def format_view(view: dict[str, Any]) -> str:
    """A view dict (``TablehostClient.view``) as lines a person can read: the status, result,
    clocks and scores, then a line per space (its pieces, owner and ``public_state``, which is
    where games such as risk keep a territory's holder and armies), the last log lines and the
    numbered offers."""
    state = view["state"]
    names = usernames_by_seat(state["players"])
    who = (
        "spectator"
        if view["viewer"] is None
        else f"player {view['viewer']} ({names.get(view['viewer'], '?')})"
    )
    match_status = view.get("status", "active")
    if match_status == "waiting":
        status = "waiting for players: open seats " + ", ".join(str(s) for s in view.get("open_seats", []))
    elif view["game_over"]:
        status = match_status
    else:
        status = "active: " + ", ".join(f"{pid} {names.get(pid, '?')}" for pid in view["active_player_ids"])
    lines = [f"match {view['match_id']}  version {view['version']}  viewing as {who}  {status}"]
    if view.get("result"):
        from tablehost.cli import describe_result

        lines.append("  " + describe_result(view["result"], names))
    for clock in view.get("clocks", []):
        running = "  (running)" if clock["running"] else ""
        lines.append(
            f"  clock {names.get(clock['player_id'], clock['player_id'])}: {clock['remaining_ms'] / 1000:.1f} s{running}"
        )
    if view.get("connected_player_ids"):
        lines.append("  connected: " + ", ".join(str(names.get(p, p)) for p in view["connected_player_ids"]))
    if view.get("zombie_player_ids"):
        lines.append(
            "  played by the host (timed out): "
            + ", ".join(str(names.get(p, p)) for p in view["zombie_player_ids"])
        )
    labels = view["score_labels"] or ["points"]
    for pid, score in view["scores"].items():
        points = ", ".join(f"{label} {value:g}" for label, value in zip(labels, score["public_points"]))
        lines.append(f"  score {names.get(int(pid), pid)}: {points}")
    for space in state["spaces"]:
        owner = f" owner {space['owner']}" if space["owner"] is not None else ""
        pieces = " ".join(_piece_text(p) for p in space["pieces"]) or "-"
        state_text = _state_text(space.get("public_state"))
        lines.append(f"  {space['space_id']:<12} {pieces}{owner}" + (f"  {state_text}" if state_text else ""))
    for entry in state["log"][-5:]:
        lines.append(f"  log: {entry['text']}")
    for number, offer in enumerate(view["actions"]):
        lines.append(
            f"  [{number}] {offer['intent']:<8} {describe_action(offer['action'])}  {offer['label']}"
        )
    return "\n".join(escape_controls(line) for line in lines)  # module text: no terminal escapes


# ---------------------------------------------------------------- commands


def cmd_serve(args: argparse.Namespace) -> int:
    """Run a server until interrupted."""
    from tablehost.api.rate_limit import RateLimits
    from tablehost.api.server import serve, serve_processes

    _check_serve_numbers(args)
    if args.processes > 1:
        if not (args.store or "").startswith(("postgresql://", "postgres://")):
            print(
                "tablehost: --processes needs a shared store (--store postgresql://...): SQLite admits one "
                "process per data directory",
                file=sys.stderr,
            )
            return 2
        forwarded = [
            "--store",
            args.store,
            "--max-workers",
            str(args.max_workers),
            "--log-level",
            args.log_level,
            "--sync",
            args.sync,
            "--rate-limit",
            str(args.rate_limit),
            "--rate-burst",
            str(args.rate_burst),
            "--auth-failure-rate",
            str(args.auth_failure_rate),
            "--auth-failure-burst",
            str(args.auth_failure_burst),
            "--watches-per-token",
            str(args.watches_per_token),
            "--check-uploads",
            str(args.check_uploads),
            "--evict-after",
            str(args.evict_after),
            "--switch-interval-ms",
            str(args.switch_interval_ms),
        ]
        if args.max_live_matches is not None:
            forwarded += ["--max-live-matches", str(args.max_live_matches)]
        if args.check_players is not None:
            forwarded += ["--check-players", str(args.check_players)]
        forwarded += budget_argv(args)
        if args.metrics_port is not None:
            forwarded += ["--metrics-port", str(args.metrics_port)]
        return serve_processes(args.processes, args.listen, args.data, forwarded, http=args.http)
    try:
        rate_limits = RateLimits(
            args.rate_limit, args.rate_burst, args.auth_failure_rate, args.auth_failure_burst
        )
    except ValueError as exc:
        print(f"tablehost: {exc}", file=sys.stderr)
        return 2
    return serve(
        args.listen,
        args.data,
        limits=limits_from_args(args),
        max_workers=args.max_workers,
        synchronous=args.sync.upper(),
        log_level=args.log_level,
        show_guest_output=args.show_guest_output,
        check_uploads=args.check_uploads,
        check_players=args.check_players,
        store=args.store,
        reuse_port=args.reuse_port,
        metrics_port=args.metrics_port,
        rate_limits=rate_limits,
        watches_per_token=args.watches_per_token,
        http=args.http,
        evict_after_s=args.evict_after or None,
        max_live_matches=args.max_live_matches,
        switch_interval_ms=args.switch_interval_ms,
    )


def _check_serve_numbers(args: argparse.Namespace) -> None:
    """Refuse a numeric ``serve`` option outside its range (:mod:`tablehost.cli_ranges`), the
    budgets included, before anything starts (``--processes`` children too).

    Raises:
        SystemExit: the first option out of range, with the range.
    """
    require_in_range("--processes", args.processes, 1, MAX_PROCESSES)
    require_in_range("--max-workers", args.max_workers, 1, MAX_REQUEST_THREADS)
    require_in_range("--rate-limit", args.rate_limit, 0, MAX_RATE_PER_S, " requests/s")
    require_in_range("--rate-burst", args.rate_burst, 1, MAX_RATE_BURST)
    require_in_range("--auth-failure-rate", args.auth_failure_rate, 0, MAX_RATE_PER_S, " per s")
    require_in_range("--auth-failure-burst", args.auth_failure_burst, 1, MAX_RATE_BURST)
    require_in_range("--watches-per-token", args.watches_per_token, 1, MAX_WATCHES_PER_TOKEN)
    require_in_range("--check-uploads", args.check_uploads, 0, MAX_CHECK_GAMES)
    require_in_range("--evict-after", args.evict_after, 0, MAX_EVICT_AFTER_S, " s")
    require_in_range(
        "--switch-interval-ms", args.switch_interval_ms, MIN_SWITCH_INTERVAL_MS, MAX_SWITCH_INTERVAL_MS, " ms"
    )
    if args.max_live_matches is not None:
        require_in_range("--max-live-matches", args.max_live_matches, 1, MAX_LIVE_MATCHES)
    if args.check_players is not None:
        require_in_range("--check-players", args.check_players, 1, MAX_SEATS)
    if args.metrics_port is not None:  # process i of --processes N serves metrics on PORT+i
        require_in_range("--metrics-port", args.metrics_port, 0, 65535 - (args.processes - 1))
    limits_from_args(args, dict(os.environ))  # the budgets, read only (serve applies them)


def cmd_web(args: argparse.Namespace) -> int:
    """Print the web lobby's admin link (the admin token in its #fragment) and open it in a browser.

    The fragment never reaches the server (browsers do not send it); the page moves the token
    into this tab's sessionStorage and clears it from the address bar.

    Raises:
        ValueError: ``--http`` is not ``host:port`` with a port in 1..65535 (a link to it
            could not open).
    """
    import webbrowser

    check_address(args.http)

    token_file = Path(args.data) / "admin_token"
    token = read_token_file(token_file, "cannot read the admin token")
    try:
        check_token(token)
    except ValueError as exc:
        raise SystemExit(f"tablehost: the admin token {token_file}: {exc}") from None
    link = f"http://{args.http}/#admin={urllib.parse.quote(token, safe='')}"
    print(link)
    if not args.no_open:
        webbrowser.open(link)
    return 0


@_guarded
def cmd_upload(args: argparse.Namespace) -> int:
    """Upload a module file; prints its id.

    A file over the server's module size (:data:`tablehost.limits.DEFAULT_LIMITS`
    ``module_bytes``) is refused here, before it is read or sent: grpc would refuse it with its
    own message after the whole file crossed the wire.
    """
    try:
        data = read_module_file(args.file, DEFAULT_LIMITS.module_bytes)
    except ModuleError as exc:
        raise SystemExit(f"tablehost: {args.file}: {exc}") from None
    except OSError as exc:
        raise SystemExit(f"tablehost: cannot read {args.file}: {exc.strerror}") from None
    with TablehostClient(args.address, _token(args)) as client:
        module = client.upload_module(data, args.name or Path(args.file).stem)
    if args.json:
        _dump(module)
    else:
        print(f"{module['module_id']}  {escape_controls(module['name'])}  {module['size_bytes']} bytes")
        if module["already_stored"]:
            print(
                f"tablehost: these bytes were already stored as {module['name']!r}; the module keeps that name",
                file=sys.stderr,
            )
    return 0


def parse_seat_bots(pairs: list[str], players: int) -> dict[int, str]:
    """``--bot SEAT=NAME`` values as seat number (1-based) -> bot name; the server checks the name.

    Raises:
        SystemExit: not SEAT=NAME (the seat in ASCII digits), a seat outside 1..players, or a
            seat given twice.
    """
    bots: dict[int, str] = {}
    for pair in pairs:
        seat, equals, name = pair.partition("=")
        if not equals or not (seat.strip().isascii() and seat.strip().isdigit()) or not name.strip():
            raise SystemExit(f"tablehost: --bot {pair!r} is not SEAT=NAME (e.g. 2=mcts:200)")
        number = int(seat)
        if not 1 <= number <= players or number in bots:
            raise SystemExit(
                f"tablehost: --bot seat {number} is not one of seats 1..{players}, or is given twice"
            )
        bots[number] = name.strip()
    return bots


def seat_usernames(names: list[str], players: int, bots: dict[int, str], *, open_rest: bool = False) -> list[str]:
    """``--usernames`` as one name per seat, for CreateMatch.

    Args:
        names: the names given, in seat order: one per seat (a bot seat's entry may be empty,
            and the server then calls it ``bot2``), or one per seat a person takes (the seats
            not in ``bots``), the bot seats skipped; with ``open_rest``, also fewer than either.
        players: the number of seats.
        bots: the ``--bot`` seats (seat number -> bot name).
        open_rest: ``--open``: a list shorter than both forms names the first seats, and the
            seats after them are left unnamed (``--open`` then leaves open each one no bot
            takes). Taken only when no bot seat is among the seats it names, where the two
            forms would put a name on different seats (a bot's, or the person seat after it).

    Returns:
        ``players`` names, ``""`` at each bot seat ``names`` skipped and each seat after a short
        ``open_rest`` list.

    Raises:
        SystemExit: any other count of names, naming the counts that fit (and the person
            seats, when some seats are bots).
    """
    person_seats = [n for n in range(1, players + 1) if n not in bots]
    given_text = f"{len(names)} name" + ("" if len(names) == 1 else "s")
    if len(names) == players:
        return names
    if bots and len(names) == len(person_seats):
        given = iter(names)
        return ["" if n in bots else next(given) for n in range(1, players + 1)]
    short = len(names) < players
    if open_rest and short and all(n > len(names) for n in bots):  # the named seats are all people's
        return names + [""] * (players - len(names))
    if not bots:  # too many names, or too few without --open
        example = "ann" + "," * (players - 1)
        open_hint = "" if open_rest or not short else "; or name only the first seats and add --open to leave the rest open"
        raise SystemExit(
            f"tablehost: --usernames gives {given_text} for {players} seats; give one per seat, an empty "
            f"one for a seat to get its default name (playerN) or, with --open, to stay open: {example}{open_hint}"
        )
    seats = ", ".join(str(n) for n in person_seats) or "none"
    why_not_short = ""
    if open_rest and short:
        among = sorted(n for n in bots if n <= len(names))
        if len(names) == 1:
            clash = "seat 1 is a bot's"
        else:
            which = f"bot seat {among[0]} is" if len(among) == 1 else f"bot seats {', '.join(map(str, among))} are"
            clash = f"{which} among seats 1 to {len(names)}"
        why_not_short = f"; with --open a shorter list names the first seats, and {clash}"
    raise SystemExit(
        f"tablehost: --usernames gives {given_text}; {players} seats with bot seats "
        f"{', '.join(str(n) for n in sorted(bots))} take {len(person_seats)} (one per person's seat: "
        f"{seats}) or {players} (one per seat, a bot seat's may be empty){why_not_short}"
    )


def _named_module_hint(client: TablehostClient, module_id: str, exc: ApiError) -> ApiError:
    """``exc``, told the module's id when it is ``module/unknown`` and ``module_id`` is the name
    of an uploaded module (``upload`` prints the name beside the id); else ``exc`` as it is."""
    if exc.code != "module/unknown":
        return exc
    try:
        ids = [m["module_id"] for m in client.list_modules() if m["name"] == module_id]
    except ApiError:
        return exc
    if not ids:
        return exc
    hint = f"; {module_id} is the name of module {' and '.join(ids)}: create takes the module id"
    return ApiError(exc.status, exc.details + hint, exc.code, exc.retry_after_ms)


@_guarded
def cmd_create(args: argparse.Namespace) -> int:
    """Create a match; prints its id, one token per seated seat, and the open seats."""
    from tablehost.cli import parse_options
    from tablehost.clocks import TimeControl

    usernames = [u.strip() for u in args.usernames.split(",")] if args.usernames else []
    players = args.players if args.players is not None else len(usernames)
    if args.players is None and not usernames:
        raise SystemExit("tablehost: give --players N (or --usernames a,b,...)")
    if not 1 <= players <= MAX_SEATS:
        raise SystemExit(f"tablehost: a match has 1 to {MAX_SEATS} seats, not {players}")
    if args.on_timeout and not args.clock:
        raise SystemExit("tablehost: --on-timeout needs --clock")
    time_control = TimeControl.parse(args.clock, args.on_timeout or "forfeit").to_json() if args.clock else {}
    bots = parse_seat_bots(args.bot, players if args.players is not None else MAX_SEATS)
    if bots and max(bots) > players:  # only without --players: the names count the seats
        raise SystemExit(
            f"tablehost: --bot seat {max(bots)} is past the {players} seats --usernames names: without "
            "--players it names every seat (a bot seat's name may be empty: ann,); give --players N "
            "to name only the seats people take"
        )
    if usernames:
        usernames = seat_usernames(usernames, players, bots, open_rest=args.open)
    # As the lobby does: --open leaves the seats nobody is named for open (a named seat is seated).
    named = {n for n, name in enumerate(usernames, start=1) if name}
    open_seats = [n for n in range(1, players + 1) if n not in bots and n not in named] if args.open else []
    if args.open and not open_seats:
        raise SystemExit("tablehost: --open leaves no seat open: every seat is named or a --bot seat")
    with TablehostClient(args.address, _token(args)) as client:
        try:
            created = client.create_match(
                args.module_id,
                usernames or [""] * players,
                open_seats=open_seats,
                options=parse_options(args.option),
                time_control=time_control,
                bots=bots,
            )
        except ApiError as exc:
            raise _named_module_hint(client, args.module_id, exc) from None
    if args.json:
        _dump({k: v for k, v in created.items() if k != "view"})
        return 0
    print(f"match {created['match_id']}")
    for seat in created["seats"]:
        holder = (
            f"bot {bots[seat['player_id']]} (played by the server)"
            if seat["player_id"] in bots
            else f"token {seat['token']}"
        )
        print(f"  seat {seat['player_id']} {escape_controls(seat['username']):<12} {holder}")
    print(f"  spectator         token {created['spectator_token']}")
    if created["open_seats"]:
        seats = ", ".join(str(s) for s in created["open_seats"])
        print(
            f"  open seats {seats}: tablehost join {created['match_id']} --name NAME --token SPECTATOR_TOKEN"
        )
    return 0


@_guarded
def cmd_join(args: argparse.Namespace) -> int:
    """Take an open seat; prints the seat token."""
    if args.seat is not None:
        require_in_range("--seat", args.seat, 1, MAX_SEATS)  # protobuf's own refusal named no option
    with TablehostClient(args.address, _token(args)) as client:
        seat = client.join(args.match_id, args.name, player_id=args.seat, color=args.color or "")
    if args.json:
        _dump(seat)
        return 0
    print(f"seat {seat['player_id']} {seat['username']}  token {seat['token']}")
    print(f"  match is {seat['status']}")
    return 0


@_guarded
def cmd_resign(args: argparse.Namespace) -> int:
    """Resign this token's seat; prints the final view."""
    with TablehostClient(args.address, _token(args)) as client:
        view = client.resign(args.match_id)
    _dump(view) if args.json else print(format_view(view))
    return 0


@_guarded
def cmd_abort(args: argparse.Namespace) -> int:
    """Abort a match (admin token)."""
    with TablehostClient(args.address, _token(args)) as client:
        view = client.abort(args.match_id)
    _dump(view) if args.json else print(f"match {args.match_id} {view['status']}")
    return 0


@_guarded
def cmd_matches(args: argparse.Namespace) -> int:
    """List the matches this token may see (``--open``: waiting ones with a free seat)."""
    from tablehost.cli import describe_result

    with TablehostClient(args.address, _token(args)) as client:
        matches = client.list_matches(module_id=args.module or "", open_only=args.open)
    if args.json:
        _dump(matches)
        return 0
    from tablehost.conformance import describe_options

    for m in matches:
        line = f"{m['match_id']}  {m['module_name']:<12} {m['status']:<9} version {m['version']}"
        if m["open_seats"]:
            line += "  open seats " + ",".join(str(s) for s in m["open_seats"])
        if m["options"]:
            line += "  options " + describe_options(m["options"])  # as --option takes them back
        if m["result"]:
            line += "  " + describe_result(m["result"], usernames_by_seat(m["players"]))
        print(escape_controls(line))  # names and module names come from the server
    if not matches:
        print("no matches" + (" with an open seat" if args.open else ""))
    return 0


@_guarded
def cmd_view(args: argparse.Namespace) -> int:
    """Print this token's view of a match."""
    with TablehostClient(args.address, _token(args)) as client:
        view = client.view(args.match_id)
    _dump(view) if args.json else print(format_view(view))
    return 0


def why_no_action(view: dict[str, Any]) -> str | None:
    """Why this view's token cannot act now, in words; ``None`` when it may.

    Args:
        view: a view dict (``TablehostClient.view``).

    Returns:
        ``"the game is over ..."``, ``"this token is a spectator ..."``, ``"the match waits for
        players to join ..."`` (naming the open seats), ``"not your turn ..."`` (naming who is
        active), or ``None``; in the order the server checks them.
    """
    if view["game_over"]:
        return f"the game is over (version {view['version']}); nothing more can be played"
    if view["viewer"] is None:
        return "this token is a spectator (or admin) token: it cannot act; use a seat token"
    if view.get("status") == "waiting":
        seats = ", ".join(str(seat) for seat in view.get("open_seats", [])) or "none"
        return (
            f"the match waits for players to join: open seats {seats} (tablehost join); "
            "nothing can be played before the last one is taken"
        )
    if view["viewer"] not in view["active_player_ids"]:
        names = usernames_by_seat(view["state"]["players"])
        active = ", ".join(f"seat {pid} ({names.get(pid, '?')})" for pid in view["active_player_ids"])
        return f"not your turn: you are seat {view['viewer']}; waiting for {active or 'nobody'}"
    return None


def _chosen_action(choice: str, view: dict[str, Any]) -> dict[str, Any]:
    """The action ``choice`` names: an index into ``view["actions"]``, ``undo`` (the platform's
    undo), or an action as JSON (an object, or ``{"action": {...}}`` as `view --json` lists it).

    Args:
        choice: what the user typed after the match id.
        view: the token's current view (its ``actions`` are what an index names).

    Returns:
        The action dict to submit (its shape is checked further by the client).

    Raises:
        SystemExit: no such index (saying why this token cannot act, when that is why), JSON
            nested deeper than :data:`MAX_ACTION_JSON_DEPTH` (checked before it is parsed: the
            decoder would recurse into a RecursionError), not JSON, not an object, an integer outside 64 bits (shown as given), or a key no
            listed entry has (:func:`_refuse_unknown_listed_keys`; the CLI exits 2).
    """
    if choice.strip().lower() == "undo":
        return dict(UNDO_ACTION)
    if choice.strip().isascii() and choice.strip().lstrip("-").isdigit():
        index = int(choice)
        if not 0 <= index < len(view["actions"]):
            reason = why_no_action(view)
            if reason is not None:
                raise SystemExit(f"tablehost: {reason}")
            raise SystemExit(f"tablehost: no action [{index}]; this view offers {len(view['actions'])}")
        return dict(view["actions"][index]["action"])
    depth = json_nesting_depth(choice)
    if depth > MAX_ACTION_JSON_DEPTH:
        raise SystemExit(
            f"tablehost: the JSON action nests {depth} levels deep; an action nests at most "
            f"{MAX_ACTION_JSON_DEPTH}"
        )
    try:
        # The standard library keeps integers exact (orjson turns one past 64 bits into a float,
        # which an error message would then show as 1e+23); NaN and Infinity are not JSON.
        parsed = json.loads(choice, parse_constant=_no_constant)
    except (json.JSONDecodeError, ValueError, RecursionError):
        raise SystemExit(f"tablehost: {_shown(choice)} is neither an action index nor JSON") from None
    if not isinstance(parsed, dict):
        raise SystemExit("tablehost: a JSON action must be an object")
    _check_integers(parsed, "action")
    _refuse_unknown_listed_keys(parsed)
    return dict(parsed.get("action", parsed))


LISTED_ACTION_KEYS = ("action", "intent", "label")
"""The keys of an entry of ``view --json``'s ``actions`` list, which ``act`` takes as given."""


def _refuse_unknown_listed_keys(parsed: dict[str, Any]) -> None:
    """Refuse a listed entry (``{"action": {...}, "intent"?, "label"?}``, as ``view --json``
    lists it) with a key such an entry does not have; the action's own keys are the client's to
    check (``TablehostClient.submit`` refuses a key its type or button does not have).

    Args:
        parsed: the user's JSON object: an action (``{"type": ..., ...}``, passed) or a listed entry.

    Raises:
        SystemExit: ``"tablehost: a listed action (view --json's actions[]) has no key 'seat'
            (its keys: action, intent, label)"`` (:func:`unknown_keys`), or a listed entry whose
            ``action`` is not an object.
    """
    if "action" not in parsed:
        return
    wrong = unknown_keys(parsed, LISTED_ACTION_KEYS, "a listed action (view --json's actions[])")
    if wrong is not None:
        raise SystemExit(f"tablehost: {wrong}")
    if not isinstance(parsed["action"], dict):
        raise SystemExit("tablehost: the 'action' of a listed action must be an object")


MAX_ACTION_JSON_DEPTH = 32
"""Deepest nesting of objects and arrays ``act`` parses (an action nests 3: a listed entry, its
action, a button); deeper is refused before the decoder recurses."""

SHOWN_INPUT_CHARS = 200
"""Longest piece of the user's input a refusal echoes (longer is cut, saying how long it was)."""


def _shown(text: str) -> str:
    """``repr(text)``, cut to :data:`SHOWN_INPUT_CHARS` characters with its length when longer."""
    if len(text) <= SHOWN_INPUT_CHARS:
        return repr(text)
    return f"{text[:SHOWN_INPUT_CHARS]!r}... ({len(text)} characters)"


def json_nesting_depth(text: str) -> int:
    """How deep objects and arrays nest in ``text``, without parsing it (linear, no recursion).

    Args:
        text: JSON or not; brackets inside strings (with their escapes) do not count.

    Returns:
        The greatest number of ``[``/``{`` open at once: 0 for a scalar, 1 for ``{"a": 1}``. Text
        that is not JSON gets a number too; the decoder refuses it afterwards.
    """
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


INT64_MIN = -(2**63)
UINT64_MAX = 2**64 - 1


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _check_integers(value: Any, path: str) -> None:
    """Refuse (SystemExit) an integer anywhere in ``value`` outside -2**63 .. 2**64-1, naming its path."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if not INT64_MIN <= value <= UINT64_MAX:
            raise SystemExit(f"tablehost: {path} is {value}, which is not a 64-bit integer")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_integers(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_integers(item, f"{path}[{index}]")


@_guarded
def cmd_act(args: argparse.Namespace) -> int:
    """Play an action by its index in `view`'s list, or as JSON; prints the new view."""
    with TablehostClient(args.address, _token(args)) as client:
        view = client.view(args.match_id)
        action = _chosen_action(args.action, view)
        version = view["version"] if args.version is None else args.version
        new_view = client.submit(args.match_id, action, version)
    _dump(new_view) if args.json else print(format_view(new_view))
    return 0


def _say(line: str) -> None:
    """One line for the user on stderr, flushed (a reconnection's news must not wait)."""
    print(line, file=sys.stderr, flush=True)


def _reconnect_for(args: argparse.Namespace) -> float:
    """``--reconnect-for``, checked: seconds an established session retries a lost server.

    Raises:
        SystemExit: outside 0 to :data:`MAX_RECONNECT_FOR_S` (the CLI exits 2).
    """
    require_in_range("--reconnect-for", args.reconnect_for, 0, MAX_RECONNECT_FOR_S, " s")
    return float(args.reconnect_for)


@_guarded
def cmd_watch(args: argparse.Namespace) -> int:
    """Print this token's view after every change until game over (Ctrl-C stops).

    A lost server (no answer, a broken stream, ``store/unavailable``, a stream ended before
    game over) is retried for ``--reconnect-for`` seconds once a first view came
    (:mod:`tablehost.reconnect`), printing the match's view again on reconnection. Giving up
    on a stream that ended before game over is said on stderr, exit 1; on another failure,
    that failure (exit 1 for no answer).
    """
    token = _token(args)
    session = Session(f"tablehost watch: match {args.match_id}", args.address, _reconnect_for(args), _say)
    last: dict[str, Any] = {}
    while True:
        failure: ApiError | None = None
        with TablehostClient(args.address, token) as client:
            try:
                for view in client.watch(args.match_id):
                    session.answered(view["version"])
                    last = view
                    if args.json:
                        print(orjson.dumps(view).decode(), flush=True)
                    else:
                        print(format_view(view) + "\n", flush=True)
            except ApiError as exc:
                failure = exc
        if failure is None and last.get("game_over"):
            return 0
        if not session.retry(failure):
            break
    if failure is not None:
        raise failure
    print(
        f"tablehost: the watch of {args.match_id} ended before game over (the server stopped or went away)",
        file=sys.stderr,
    )
    return EXIT_FAILED


@_guarded
def cmd_record(args: argparse.Namespace) -> int:
    """Fetch a match record (``tablehost.record/2``) for ``tablehost replay FILE --verify``."""
    with TablehostClient(args.address, _token(args)) as client:
        record = client.record(args.match_id)
    data = orjson.dumps(record, option=orjson.OPT_INDENT_2) + b"\n"
    if args.output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    try:
        Path(args.output).write_bytes(data)
    except OSError as exc:
        raise SystemExit(f"tablehost: cannot write {args.output}: {exc.strerror}") from None
    print(f"record of {args.match_id} ({len(record['moves'])} moves) written to {args.output}")
    return 0


DEFAULT_GIVE_UP_S = 300.0
"""``tablehost bots`` gives up when the match did not change for this long, seconds."""
NOTICE_EVERY_S = 30.0
FIRST_NOTICE_S = 2.0
"""`bots` says what the match waits for once it has not changed for this long, seconds, then
every :data:`NOTICE_EVERY_S` (a user who started bots for some seats learns at once which
seats nobody plays)."""
"""While nothing happens, the bots say on stderr what they wait for this often, seconds."""


class BotError(ApiError):
    """Bots cannot play a match, with the token concerned named in ``details``.

    ``status`` is INVALID_ARGUMENT (a token given twice), FAILED_PRECONDITION (not a seat
    token), DEADLINE_EXCEEDED (gave up waiting) or the status of the server's refusal.
    """


def _short(token: str) -> str:
    """A token shortened for messages (enough to tell tokens apart, too little to use)."""
    return token[:10] + "..."


class _BotRun:
    """What the bots of one :func:`run_bots` call share: their clients, the stop signal, progress.

    Args:
        match_id: the match played.
        tokens: the bots' seat tokens.
    """

    def __init__(self, match_id: str, tokens: list[str]) -> None:
        self.match_id = match_id
        self.tokens = tokens
        self.stop = threading.Event()
        self.all_checked = threading.Barrier(len(tokens))
        """Passed once every bot's first view proved its token a seat: nobody acts before."""
        self.changed_at = time.monotonic()
        self._lock = threading.Lock()
        self._clients: list[TablehostClient] = []
        self._newest: dict[str, Any] = {}
        self._offered: dict[int, int] = {}
        self._reconnecting: set[str] = set()  # tokens of the bots riding out a lost server

    def enlist(self, client: TablehostClient) -> None:
        """Remember a bot's client so :meth:`halt` can close it (closed at once when halted)."""
        with self._lock:
            self._clients.append(client)
            if self.stop.is_set():
                client.close()

    def forget(self, client: TablehostClient) -> None:
        """Drop a client the bot closed itself (its connection was lost and it makes a new one)."""
        with self._lock:
            if client in self._clients:
                self._clients.remove(client)

    def outage(self, token: str, lost: bool) -> None:
        """Note that the bot holding ``token`` lost the server (``lost``) or reconnected.

        While any bot is reconnecting, :func:`run_bots` neither reports nor gives up on a match
        that does not change: the outage has its own bound (``reconnect_for_s``) and lines. A
        reconnection counts as news, so the wait for a change starts again.
        """
        with self._lock:
            if lost:
                self._reconnecting.add(token)
            elif token in self._reconnecting:
                self._reconnecting.discard(token)
                self.changed_at = time.monotonic()

    def reconnecting(self) -> bool:
        """True while some bot rides out a lost server."""
        with self._lock:
            return bool(self._reconnecting)

    def saw(self, view: dict[str, Any]) -> None:
        """Note a view a bot received (a newer version counts as progress)."""
        with self._lock:
            self._offered[view["viewer"]] = sum(1 for a in view["actions"] if a["intent"] != "undo")
            if view["version"] > self._newest.get("version", -1):
                self._newest = view
                self.changed_at = time.monotonic()

    def halt(self) -> None:
        """Stop every bot: close their clients, which cancels their watch streams."""
        self.stop.set()
        self.all_checked.abort()
        with self._lock:
            for client in self._clients:
                client.close()

    def seats(self) -> str | None:
        """The seats the bots play, in words (``seat 1 (ann), seat 2 (bob)``), once every bot saw
        its first view; None before."""
        with self._lock:
            view, offered = self._newest, dict(self._offered)
        if not view or len(offered) < len(self.tokens):
            return None
        names = usernames_by_seat(view["state"]["players"])
        return ", ".join(f"seat {pid} ({names.get(pid, '?')})" for pid in sorted(offered))

    def waiting_for(self) -> str:
        """What the match waits for, in words (``seat 2 (bob), which no bot here plays``)."""
        with self._lock:
            view, offered = self._newest, dict(self._offered)
        if not view:
            return "the first view of the match"
        names = usernames_by_seat(view["state"]["players"])
        waits = []
        for pid in view["active_player_ids"]:
            why = (
                ", which no bot here plays"
                if pid not in offered
                else ", which is offered no action (is the game stuck?)"
                if offered[pid] == 0
                else ""
            )
            waits.append(f"seat {pid} ({names.get(pid, '?')}){why}")
        return " and ".join(waits) or "nobody (no seat is active)"


def _submit_within_rate(
    client: TablehostClient, match_id: str, action: dict[str, Any], version: int, timeout_s: float
) -> None:
    """Submit a bot's move; a rate-limit refusal is retried after the server's ``retry-after-ms``
    for up to ``timeout_s`` seconds, a FAILED_PRECONDITION (the match moved on: stale version,
    not this seat's turn, over) is dropped, the next view decides.

    Raises:
        ApiError: any other refusal, or still rate-limited after ``timeout_s`` seconds.
    """
    give_up = time.monotonic() + timeout_s
    while True:
        try:
            client.submit(match_id, action, version)
            return
        except ApiError as exc:
            if exc.code == "request/rate_limited" and exc.retry_after_ms is not None:
                wait_s = exc.retry_after_ms / 1000
                if time.monotonic() + wait_s <= give_up:
                    time.sleep(wait_s)
                    continue
            if exc.status != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            return


def _play_seat(
    address: str,
    run: _BotRun,
    token: str,
    seed: int | None,
    timeout_s: float,
    bot_name: str = "random",
    pool: GuestPool | None = None,
    reconnect_for_s: float = 0.0,
    backoff: Backoff = DEFAULT_BACKOFF,
) -> dict[str, Any]:
    """One bot: watch the match with ``token`` and play an offered action on each turn.

    ``bot_name`` picks the bot (:mod:`tablehost.bots`); a search bot searches inside ``pool``
    (the match's module, loaded here) on the view this seat's token receives, nothing more.

    A lost server after the bot's first view (:func:`tablehost.reconnect.is_outage`, or the
    watch stream ending before game over) is retried for ``reconnect_for_s`` seconds with a new
    connection after each ``backoff`` wait (:class:`tablehost.reconnect.Session`, its lines on
    stderr). The bot never resubmits a move after an outage: it decides again on the first
    view the new connection brings.

    Returns:
        The bot's final view (not over when the stream ended before game over and the bot gave
        up, or the run was halted).

    Raises:
        BotError: the token is not a seat token of the match (its first view has no viewer),
            or the server refused something (the token named, the server's status kept), or
            it stayed unreachable for ``reconnect_for_s`` seconds (the last failure's status).
    """
    bot = make_bot(bot_name, seed)
    if isinstance(bot, SearchBot) and pool is None:
        raise BotError(
            grpc.StatusCode.INVALID_ARGUMENT, f"bot {bot_name} needs the game module: pass --module"
        )
    session = Session(
        f"tablehost bots: token {_short(token)} of match {run.match_id}",
        address,
        reconnect_for_s,
        _say,
        backoff=backoff,
        wait=run.stop.wait,
    )
    seat = _Seat(run, token, bot, pool, timeout_s, session)
    while True:
        failure: ApiError | None = None
        client = TablehostClient(address, token, timeout_s=timeout_s)
        run.enlist(client)
        try:
            seat.play_connected(client)
        except BotError:
            raise
        except ApiError as exc:
            failure = exc
        finally:
            client.close()
            run.forget(client)
        if seat.last.get("game_over") or run.stop.is_set():
            return seat.last
        if session.retry(failure):
            run.outage(token, lost=True)
            continue
        if failure is None:  # the stream ended before game over, as when the server stops
            return seat.last
        who = f"seat {seat.last['viewer']}" if seat.last else "bot"
        raise BotError(failure.status, f"{who} (token {_short(token)}): {failure.details}", failure.code)


class _Seat:
    """What one bot of :func:`_play_seat` keeps across its connections.

    Args:
        run: the bots' shared run.
        token: this bot's seat token.
        bot: the bot (:func:`tablehost.bots.make_bot`).
        pool: the match's module, for a search bot.
        timeout_s: deadline of each submit, seconds.
        session: this bot's reconnection state.

    Attributes:
        last: the newest view the bot received (empty before its first).
    """

    def __init__(
        self,
        run: _BotRun,
        token: str,
        bot: Bot | SearchBot,
        pool: GuestPool | None,
        timeout_s: float,
        session: Session,
    ) -> None:
        self.run = run
        self.token = token
        self.bot = bot
        self.pool = pool
        self.timeout_s = timeout_s
        self.session = session
        self.last: dict[str, Any] = {}

    def play_connected(self, client: TablehostClient) -> None:
        """Play on ``client``'s watch stream until game over or the stream ends.

        Raises:
            BotError: the first view has no viewer (not a seat token).
            ApiError: the stream or a submit failed (a lost server included).
        """
        run = self.run
        for view in client.watch(run.match_id):
            if not self.last:
                if view["viewer"] is None:
                    raise BotError(
                        grpc.StatusCode.FAILED_PRECONDITION,
                        f"token {_short(self.token)} is not a seat token of match {run.match_id} (a "
                        "spectator or admin token cannot act); give one seat token per bot, as "
                        "`tablehost create` prints",
                    )
                self.session.who = f"tablehost bots: seat {view['viewer']} of match {run.match_id}"
                run.all_checked.wait()
            if self.session.in_outage:
                run.outage(self.token, lost=False)
            self.session.answered(view["version"])
            self.last = view
            run.saw(view)
            if view["game_over"]:
                return
            offered = [a for a in view["actions"] if a["intent"] != "undo"]
            if not offered or view["viewer"] not in view["active_player_ids"]:
                continue
            if isinstance(self.bot, SearchBot):
                assert self.pool is not None
                choice = self.bot.choose_in_view(self.pool, view["state"], offered, view["viewer"])
            else:
                choice = self.bot.choose(offered)
            _submit_within_rate(client, run.match_id, choice["action"], view["version"], self.timeout_s)


def run_bot(
    address: str,
    match_id: str,
    token: str,
    *,
    seed: int | None = None,
    timeout_s: float = 30.0,
    give_up_s: float = DEFAULT_GIVE_UP_S,
    reconnect_for_s: float = 0.0,
) -> dict[str, Any]:
    """Play one seat with a random bot that holds only that seat's token, until game over.

    The same as :func:`run_bots` with one token: the bot watches the match and, whenever its
    seat is offered something, submits a random non-undo action with the version it saw; a
    refusal because another seat moved first (FAILED_PRECONDITION) just waits for the next view.

    Returns:
        The bot's final view (``game_over`` true).

    Raises:
        BotError: see :func:`run_bots`.
    """
    return run_bots(
        address,
        match_id,
        [token],
        seed,
        timeout_s=timeout_s,
        give_up_s=give_up_s,
        reconnect_for_s=reconnect_for_s,
    )[0]


def run_bots(
    address: str,
    match_id: str,
    tokens: list[str],
    seed: int | None = None,
    *,
    timeout_s: float = 30.0,
    give_up_s: float = DEFAULT_GIVE_UP_S,
    notice_every_s: float = NOTICE_EVERY_S,
    bots: list[str] | None = None,
    pool: GuestPool | None = None,
    first_notice_s: float = FIRST_NOTICE_S,
    reconnect_for_s: float = 0.0,
    backoff: Backoff = DEFAULT_BACKOFF,
) -> list[dict[str, Any]]:
    """Play a match with one bot per seat token (one thread each) until game over.

    Fails fast: the first bot that fails stops the others (their watch streams are cancelled).
    Progress goes to stderr: one line once every bot has joined (the seats they play), and,
    while the match does not change, what it waits for (e.g. a seat no bot here plays) after
    ``first_notice_s`` and then every ``notice_every_s``.

    Args:
        address: the server's ``host:port``.
        match_id: the match.
        tokens: seat tokens, each at most once; each bot holds only its own.
        seed: seeds bot *i* with ``seed + i`` (None: unseeded).
        timeout_s: deadline of each request, seconds.
        give_up_s: give up when the match did not change for this long, seconds.
        notice_every_s: how often to say what the match waits for, seconds.
        bots: one bot name per token (default all ``random``); ``mcts:N``/``ismcts:N`` need ``pool``.
        pool: the match's module, for search bots (each searches on its own seat's view).
        first_notice_s: the first such line comes after this long without a change (or
            ``notice_every_s`` if shorter), seconds.
        reconnect_for_s: how long a bot whose first view came rides out a lost server,
            seconds (:mod:`tablehost.reconnect`; 0, the default: it fails at once, as the
            first connection always does). Meanwhile the match's lack of change is neither
            reported nor counted toward ``give_up_s``.
        backoff: the waits between a lost bot's attempts to reconnect.

    Returns:
        Each bot's final view, in token order (all with ``game_over`` true).

    Raises:
        BotError: a token given twice (INVALID_ARGUMENT); a token that is not a seat token
            of the match (FAILED_PRECONDITION, naming it); no change for ``give_up_s``
            (DEADLINE_EXCEEDED); a server that did not answer (UNAVAILABLE), at once or after
            ``reconnect_for_s`` seconds of retrying; or the first refusal any bot met (e.g.
            ABORTED: the game failed), with the server's status and the token named.
    """
    for number, token in enumerate(tokens):
        if token in tokens[:number]:
            raise BotError(
                grpc.StatusCode.INVALID_ARGUMENT, f"token {_short(token)} is given twice: one bot per seat"
            )
    run = _BotRun(match_id, tokens)
    results: list[dict[str, Any]] = [{} for _ in tokens]
    errors: list[BaseException] = []

    def play(number: int, token: str) -> None:
        try:
            results[number] = _play_seat(
                address,
                run,
                token,
                None if seed is None else seed + number,
                timeout_s,
                bots[number] if bots else "random",
                pool,
                reconnect_for_s,
                backoff,
            )
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            if not run.stop.is_set():  # errors of bots being halted are not news
                errors.append(exc)
                run.halt()

    threads = [threading.Thread(target=play, args=(n, t), daemon=True) for n, t in enumerate(tokens)]
    for thread in threads:
        thread.start()
    noticed_at: float | None = None
    announced = False
    while any(thread.is_alive() for thread in threads):
        run.stop.wait(min(0.2, notice_every_s, first_notice_s))
        now = time.monotonic()
        idle = now - run.changed_at
        if run.stop.is_set():
            break
        if not announced:
            seats = run.seats()
            if seats is not None:
                announced = True
                print(
                    f"tablehost bots: match {match_id}: {len(tokens)} bot(s) playing {seats}",
                    file=sys.stderr,
                    flush=True,
                )
        if run.reconnecting():  # the outage has its own bound and its own lines on stderr
            continue
        if idle >= give_up_s:
            errors.append(
                BotError(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"gave up: match {match_id} did not change for {give_up_s:g} s; it waits for "
                    f"{run.waiting_for()}",
                )
            )
            run.halt()
        elif idle >= min(first_notice_s, notice_every_s) and (
            noticed_at is None or now - noticed_at >= notice_every_s
        ):
            noticed_at = now
            print(
                f"tablehost bots: match {match_id} has not changed for {idle:.0f} s; waiting for "
                f"{run.waiting_for()}",
                file=sys.stderr,
                flush=True,
            )
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


@_guarded
def cmd_bots(args: argparse.Namespace) -> int:
    """Seat a bot on each token (one thread each) and play the match to the end."""
    tokens = [t.strip() for t in args.tokens.split(",") if t.strip()]
    if not tokens:
        raise SystemExit("tablehost: --tokens needs at least one seat token")
    for number, token in enumerate(tokens, 1):
        try:
            check_token(token)
        except ValueError as exc:
            raise SystemExit(f"tablehost: --tokens: token {number}: {exc}") from None
    if args.timeout <= 0:
        raise SystemExit("tablehost: --timeout must be a positive number of seconds")
    require_in_range("--timeout", args.timeout, 0, MAX_GIVE_UP_S, " s")
    if args.seed is not None:  # as play and simulate take a seed
        require_in_range("--seed", args.seed, 0, 2**64 - 1)
    reconnect_for_s = _reconnect_for(args)
    bots = parse_bot_list(args.bots, len(tokens))
    pool = None
    if args.module:
        from tablehost.cli import local_pool
        from tablehost.module import load_module

        try:
            data = read_module_file(args.module, DEFAULT_LIMITS.module_bytes)
        except OSError as exc:
            raise SystemExit(f"tablehost: cannot read module {args.module}: {exc.strerror}") from None
        module = load_module(data, name=Path(args.module).stem)
        _require_match_module(args.address, args.match, tokens[0], module.sha256, args.module)
        pool = local_pool(module, module.limits)  # a local tool's pool: never quarantined
    elif any(is_search_bot(name) for name in bots):
        raise SystemExit(
            "tablehost: search bots (mcts:N, ismcts:N) need the game module: pass --module GAME.wasm"
        )
    try:
        final = run_bots(
            args.address,
            args.match,
            tokens,
            args.seed,
            give_up_s=args.timeout,
            bots=bots,
            pool=pool,
            reconnect_for_s=reconnect_for_s,
        )[0]
    finally:
        if pool is not None:
            pool.close()
    if args.json:
        _dump(final)
    else:
        print(format_view(final))
    return 0 if final.get("game_over") else EXIT_FAILED


def _require_match_module(address: str, match_id: str, token: str, sha256: str, path: str) -> None:
    """Exit 2 unless ``match_id`` plays the module whose sha256 is ``sha256`` (read from ``path``):
    a search over another game's rules only fails, or plays nonsense, once the match is under way.

    ``token`` is a seat token of the match: ListMatches shows a seat its own match. A match the
    list does not show is left to the bots' first view, which names the refusal.
    """
    try:
        with TablehostClient(address, token) as client:
            listed = [m for m in client.list_matches() if m["match_id"] == match_id]
    except ApiError:
        return
    if listed and listed[0]["module_id"] != sha256:
        played = listed[0]
        raise SystemExit(
            f"tablehost: match {match_id} plays module {played['module_name'] or '?'} "
            f"(sha256 {played['module_id']}); --module {path} is sha256 {sha256}"
        )


def _reconnect_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--reconnect-for SECONDS`` (:mod:`tablehost.reconnect`) to a long-running client command."""
    parser.add_argument(
        "--reconnect-for",
        type=float,
        default=DEFAULT_RECONNECT_FOR_S,
        metavar="SECONDS",
        help="when the server goes away after answering (restarted, one of several gone), say so on stderr "
        "and reconnect, waiting 0.5 s doubling to 5 s (or the server's retry hint) between attempts, for up to "
        f"this many seconds, 0 to {MAX_RECONNECT_FOR_S:g} (default %(default)g; 0: exit at once). A server "
        "that never answered fails at once",
    )


def register(commands: Any) -> None:
    """Add the server commands to the ``tablehost`` sub-parsers (``parser.add_subparsers()``)."""
    serve = commands.add_parser("serve", help="run the gRPC server")
    serve.add_argument(
        "--listen", default=DEFAULT_ADDRESS, help="host:port to listen on (default %(default)s)"
    )
    serve.add_argument(
        "--data",
        default=DEFAULT_DATA,
        help="data directory: admin token, compiled-code cache, and the SQLite database (default %(default)s)",
    )
    serve.add_argument(
        "--store",
        help="where matches are stored: sqlite:DIR (default: SQLite in --data) or postgresql://USER@HOST[:PORT]/DB "
        "(one database shared by several serve processes)",
    )
    serve.add_argument(
        "--processes",
        type=int,
        default=1,
        help=f"serve processes on the one --listen address (SO_REUSEPORT), 1 to {MAX_PROCESSES}; more than 1 "
        "needs --store postgresql://",
    )
    serve.add_argument(
        "--reuse-port",
        action="store_true",
        help="share --listen with other serve processes on this machine (PostgreSQL store only)",
    )
    serve.add_argument(
        "--metrics-port",
        type=int,
        help="serve Prometheus metrics on http://LISTEN_HOST:PORT/metrics (0 picks a port; "
        "with --processes N, process i uses PORT+i)",
    )
    serve.add_argument(
        "--rate-limit",
        type=float,
        default=2000.0,
        help=f"requests per second one token may send, sustained, 0 to {MAX_RATE_PER_S:g} (0: no limit; "
        "default %(default)g)",
    )
    serve.add_argument(
        "--rate-burst",
        type=int,
        default=4000,
        help=f"requests one token may send at once, 1 to {MAX_RATE_BURST} (default %(default)s)",
    )
    serve.add_argument(
        "--auth-failure-rate",
        type=float,
        default=DEFAULT_AUTH_FAILURES_PER_S,
        metavar="PER_S",
        help="failed authentications (no token, an unknown one) per second one client address may cause, "
        f"sustained, 0 to {MAX_RATE_PER_S:g} (0: no limit; default %(default)g); beyond it and "
        "--auth-failure-burst, its requests with a token this server does not know get RESOURCE_EXHAUSTED "
        "and retry-after-ms, unchecked (known tokens from that address are still served; health checks "
        "are never limited)",
    )
    serve.add_argument(
        "--auth-failure-burst",
        type=int,
        default=DEFAULT_AUTH_FAILURE_BURST,
        help=f"failed authentications one client address may cause at once, 1 to {MAX_RATE_BURST} "
        "(default %(default)s)",
    )
    serve.add_argument(
        "--watches-per-token",
        type=int,
        default=4,
        help=f"open watch streams one token may hold, 1 to {MAX_WATCHES_PER_TOKEN} (default 4)",
    )
    serve.add_argument(
        "--max-workers",
        type=int,
        default=128,
        help=f"request threads, watchers included, 1 to {MAX_REQUEST_THREADS} (default 128)",
    )
    serve.add_argument(
        "--evict-after", type=float, default=300.0, metavar="SECONDS",
        help="drop a finished or idle match from memory this long after its last request; its next request "
        "reloads it from the store (0: never; default %(default)g). Never while a request, watch stream, "
        "running clock, absent seat or server bot needs it",
    )
    serve.add_argument(
        "--max-live-matches", type=int, default=None, metavar="N",
        help="most started matches kept in memory: above it the least recently used evictable ones are "
        "dropped even before --evict-after (default: no bound)",
    )
    serve.add_argument(
        "--switch-interval-ms", type=float, default=DEFAULT_SWITCH_INTERVAL_MS, metavar="MS",
        help="how long a thread running Python may keep the interpreter while another thread waits for it, "
        f"{MIN_SWITCH_INTERVAL_MS:g} to {MAX_SWITCH_INTERVAL_MS:g} ms (default %(default)g, Python's own): "
        "a request thread coming back from the guest or the store, and grpc's thread taking in new requests, "
        "wait up to this long behind a busy one; shorter costs CPU in switches",
    )
    serve.add_argument(
        "--sync",
        choices=("full", "normal"),
        default="full",
        help="durability: full survives power loss; normal survives a killed server process but a power "
        "loss may drop the newest moves (SQLite synchronous, PostgreSQL synchronous_commit; default full)",
    )
    serve.add_argument("--log-level", default="info", help="debug, info, warning or error")
    serve.add_argument(
        "--show-guest-output",
        action="store_true",
        help="tell players what a failing game said and printed (for game authors developing locally; "
        "it may show hidden information). Off: players get a fixed reason and a log reference",
    )
    serve.add_argument(
        "--check-uploads",
        type=int,
        default=0,
        metavar="GAMES",
        help=f"refuse an upload unless `tablehost check` passes this many games, 0 to {MAX_CHECK_GAMES} "
        "(default 0: no check)",
    )
    serve.add_argument(
        "--check-players",
        type=int,
        default=None,
        metavar="N",
        help="seats per game of that check (default: each count of the module's declared player range, "
        "GAMES spread over them; 2 for a module that declares none)",
    )
    add_budget_options(serve, replaying=True)
    serve.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="also serve the web table (pages, HTTP/JSON API, event stream) here; off by default "
        "(with --processes N every process serves it on this one address)",
    )
    serve.set_defaults(func=cmd_serve)

    web = commands.add_parser("web", help="print the web lobby's admin link and open it in a browser")
    web.add_argument(
        "--http", default="127.0.0.1:8080", help="the server's --http address (default %(default)s)"
    )
    web.add_argument("--data", default=DEFAULT_DATA, help="the server's data directory (default %(default)s)")
    web.add_argument("--no-open", action="store_true", help="only print the link")
    web.set_defaults(func=cmd_web)

    upload = commands.add_parser("upload", help="upload a module to a server (admin token)")
    upload.add_argument("file", help="a .wasm module")
    upload.add_argument("--name", help="module name (default: the file name without .wasm)")
    _client_options(upload)
    upload.set_defaults(func=cmd_upload)

    create = commands.add_parser("create", help="create a match on a server (admin token); prints tokens")
    create.add_argument("module_id", help="the module id printed by upload")
    create.add_argument("--players", type=int, help="number of seats")
    create.add_argument(
        "--usernames",
        help="comma-separated names in seat order: one per seat (a --bot seat's may be empty), or, "
        "with --players, one per seat a person takes (the --bot seats skipped); with --open, also "
        "fewer: they name the first seats (no --bot seat among them) and the rest are left open",
    )
    create.add_argument(
        "--open", action="store_true",
        help="leave the seats --usernames names nobody for (and no --bot takes) open for `tablehost join`"
    )
    create.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="SEAT=BOT",
        help="the server plays seat SEAT (1-based) itself on its own view: random, first, "
        "mcts:N or ismcts:N (N <= 5000); repeat for several",
    )
    create.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game option (see `tablehost inspect`); repeat for several",
    )
    create.add_argument(
        "--clock",
        metavar="SECONDS[+INCREMENT]",
        help="time control: SECONDS per move, or SECONDS main time + INCREMENT per move",
    )
    create.add_argument(
        "--on-timeout",
        choices=("forfeit", "zombie"),
        help="what a timeout does: the seat loses (forfeit, default) or the host plays for it",
    )
    _client_options(create)
    create.set_defaults(func=cmd_create)

    join = _match_command(
        commands, "join", "take an open seat (admin or the match's spectator token)", cmd_join
    )
    join.add_argument("--name", required=True, help="your display name")
    join.add_argument(
        "--seat", type=int, help=f"the seat (player id) wanted, 1 to {MAX_SEATS}; default the lowest open one"
    )
    join.add_argument(
        "--color", help="display colour: #rgb, #rrggbb (or with alpha) or a lowercase CSS colour name (navy)"
    )

    _match_command(commands, "resign", "resign this seat token's seat", cmd_resign)

    _match_command(commands, "abort", "abort a match (admin token)", cmd_abort)

    matches = commands.add_parser("matches", help="list matches (status, open seats, results)")
    matches.add_argument("--open", action="store_true", help="only waiting matches with an open seat")
    matches.add_argument("--module", help="only this module's matches (module id)")
    _client_options(matches)
    matches.set_defaults(func=cmd_matches)

    _match_command(commands, "view", "print this token's view of a match", cmd_view)

    act = _match_command(commands, "act", "play an action (index in the view's list, or JSON)", cmd_act)
    act.add_argument("action", help="an index from `view`, or an action as JSON")
    act.add_argument("--version", type=int, help="the version you saw (default: the current one)")

    watch = _match_command(commands, "watch", "print the view after every change", cmd_watch)
    _reconnect_option(watch)

    record = _match_command(
        commands, "record", "fetch a match record (admin any time, players after game over)", cmd_record
    )
    record.add_argument("--output", "-o", help="write it to this file (default: standard output)")

    bots = commands.add_parser("bots", help="play a server match with bots, one per seat token")
    bots.add_argument("--match", required=True, help="the match id")
    bots.add_argument("--tokens", required=True, help="comma-separated seat tokens, one bot each")
    bots.add_argument(
        "--seed", type=int, help="seed of the first bot, 0 to 2**64-1 (the next get +1, +2, ...)"
    )
    bots.add_argument(
        "--bots",
        "--bot",
        default="random",
        help="bot per token, comma-separated, or one for all: random, first, mcts:N, ismcts:N",
    )
    bots.add_argument("--module", help="the match's .wasm module (needed by mcts:N and ismcts:N)")
    bots.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_GIVE_UP_S,
        help="give up when the match did not change for this many seconds (default %(default)g)",
    )
    _reconnect_option(bots)
    _client_options(bots, token=False)
    bots.set_defaults(func=cmd_bots)
