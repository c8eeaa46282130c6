"""The ``tablehost`` command.

Local commands run the host in this process: ``inspect``, ``play``, ``simulate``, ``replay``,
``check``. Every command that runs guests takes the budget options of :mod:`tablehost.cli_budgets`.
Server commands (``serve``, ``upload``, ``create``, ``view``, ``act``, ``watch``, ``bots``,
``demo``) are registered by :mod:`tablehost.cli_remote`. Every command prints a clear
message and exits non-zero on bad input; ``tablehost COMMAND --help`` documents each.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import orjson

from tablehost import logs
from tablehost._stacks import on_big_stack
from tablehost.bots import MAX_PLAYERS, is_search_bot, parse_bot_list
from tablehost.cli_budgets import add_budget_options, describe_limits, limits_from_args
from tablehost.cli_ranges import (
    MAX_CHECK_GAMES,
    MAX_GAMES,
    MAX_PLIES,
    NUMBER_ARGUMENT,
    parse_decimal,
    parse_int,
    require_in_range,
)
from tablehost.conformance import check_module, describe_options, format_report
from tablehost.errors import TablehostError
from tablehost.gcpolicy import tune_for_bot_jobs
from tablehost.guest import GuestPool, check_instantiates
from tablehost.history import FailureRecord, MoveRecord
from tablehost.inguest import MAX_GAMES_PER_CALL
from tablehost.limits import DEFAULT_ANSWER_LIMITS, DEFAULT_LIMITS, Limits
from tablehost.match import Match
from tablehost.metadata import SetupRefused, check_player_count, resolve_options
from tablehost.module import GameModule, load_module, validate_module
from tablehost.module_file import read_module_file
from tablehost.ray_runner import RayUnreachable
from tablehost.record import load_record, replay, state_at, view_at
from tablehost.selfplay import module_metadata, play_game
from tablehost.simulate import MAX_WORKERS, SimulationInterrupted, Summary, simulate
from tablehost.terminal import escape_controls

EXIT_USAGE = 2
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130
"""An interrupt (Ctrl-C) stopped the command: 128 + SIGINT, as shells report it."""


def _read_module_bytes(path: str, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """The module file's bytes, refused from its size before it is read when over
    ``limits.module_bytes`` (:func:`tablehost.module_file.read_module_file`: ModuleError).

    Raises:
        SystemExit: the file cannot be read (with the reason).
    """
    try:
        return read_module_file(path, limits.module_bytes)
    except OSError as exc:
        raise SystemExit(f"tablehost: cannot read module {path}: {exc.strerror}") from None


def local_pool(module: GameModule, limits: Limits) -> GuestPool:
    """The guest pool of a local command: ``module`` under ``limits``, never quarantined.

    Quarantine protects a server; a local command must report each game's real failure
    (``guest/panic`` ...), not ``module/quarantined`` after the eighth (:class:`GuestPool`
    ``quarantine=False``).

    Raises:
        ValueError: ``limits.stack_bytes`` differs from the module's (as :class:`GuestPool`).
    """
    return GuestPool(module, limits, quarantine=False)


def cmd_inspect(args: argparse.Namespace) -> int:
    """Validate a module and print its exports, sizes, initial memory and the budgets."""
    limits = limits_from_args(args)
    data = _read_module_bytes(args.module, limits)
    info = validate_module(data, limits)
    module = load_module(data, limits=limits)
    check_instantiates(module)  # it must also compile and instantiate within the budgets
    pool = local_pool(module, limits)
    try:
        metadata = module_metadata(pool)
    finally:
        pool.close()
    report = {
        "module": args.module,
        "sha256": info.sha256,
        "size_bytes": info.size_bytes,
        "exports": info.exports,
        "imports": info.imports,
        "initial_memory_bytes": info.initial_memory_bytes,
        "max_memory_bytes": info.max_memory_bytes,
        "budgets": describe_limits(limits),
        "metadata": metadata.to_json(),
    }
    if args.json:
        print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
        return 0
    print(f"module      {args.module}  (valid ABI v1)")
    print(f"sha256      {info.sha256}")
    print(f"size        {info.size_bytes} bytes")
    print(f"memory      initial {info.initial_memory_bytes} bytes, max {info.max_memory_bytes or 'none'}")
    print(f"exports     {', '.join(info.exports)}")
    print("imports     none")
    print("budgets     " + ", ".join(f"{k}={v}" for k, v in report["budgets"].items()))  # type: ignore[union-attr]
    for line in describe_metadata(metadata.to_json()):
        print(line)
    return 0


def describe_metadata(metadata: dict[str, Any]) -> list[str]:
    """Lines for people: players, description, hidden information, result rule, options."""
    low, high = metadata["min_players"], metadata["max_players"]
    lines = [
        f"players     {low}" + ("" if low == high else f" to {high}"),
        f"about       {metadata['description'] or '(no description)'}",
        f"hidden      {'yes' if metadata['hidden_information'] else 'no'}",
        f"result      {metadata['result'].replace('_', ' ')} wins"
        if metadata["result"] != "ranks"
        else "result      ranks given by the game",
        f"resign      {'ends the match' if metadata['resign'] == 'ends' else 'the others play on'}",
    ]
    if not metadata.get("declared", True):
        lines.append("metadata    none declared (ABI v1.0 module): these are the defaults")
    if not metadata["options"]:
        lines.append("options     none")
    for option in metadata["options"]:
        if option["type"] == "integer":
            allowed = f"integer {option['min']}..{option['max']}"
        elif option["type"] == "choice":
            allowed = " | ".join(option["values"])
        else:
            allowed = "true | false"
        default = str(option["default"]).lower() if isinstance(option["default"], bool) else option["default"]
        lines.append(
            f"option      {option['name']} = {default}  ({allowed}) {option['description']}".rstrip()
        )
    return lines


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs (``--option``, repeated) as option values.

    Args:
        pairs: each ``--option`` as given.

    Returns:
        key -> value: ``true``/``false`` as booleans, an integer in ASCII digits (``-5``, ``99``;
        :func:`tablehost.cli_ranges.parse_int`) as an int, anything else as the string given
        (``0_7``, ``+7`` and ``' 7'`` stay strings, which an integer option then refuses).

    Raises:
        SystemExit: a pair without ``=`` or without a key; a key given twice (the last won
            silently, even ``misere=true`` then ``misere=false``); a number in digits other than
            ASCII ``0-9`` (``９９``, ``٩٩``: Python's ``int`` reads them, so
            ``target_score=９９`` became 99). The CLI exits 2.
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        key, equals, text = pair.partition("=")
        if not equals or not key:
            raise SystemExit(f"tablehost: --option {pair!r} is not KEY=VALUE")
        if key in options:
            raise SystemExit(f"tablehost: --option {key[:100]!r} is given twice; give each option once")
        value: Any = text
        if text in ("true", "false"):
            value = text == "true"
        elif not text.isascii() and text.strip().lstrip("-").isdecimal():
            raise SystemExit(f"tablehost: --option {key[:100]}={text[:100]!r}: write the number in ASCII digits 0-9")
        else:
            try:
                value = parse_int(text)
            except ValueError:
                pass  # a choice's name, or a malformed number the option's own check refuses
        options[key] = value
    return options


def declared_options(pool: GuestPool, pairs: Sequence[str]) -> dict[str, Any]:
    """``--option`` pairs of ``play``, ``simulate`` or ``check``, parsed and checked against the
    options the module declares, before any game is played.

    Args:
        pool: the module's pool (its metadata is read when options are given).
        pairs: each ``--option`` as given.

    Returns:
        The options as given (:func:`parse_options`); empty for none. Each game fills in the
        defaults of the rest.

    Raises:
        SystemExit: a malformed pair (:func:`parse_options`; exit 2).
        SetupRefused: an option the module does not declare, or a value it does not allow
            (exit 2, in the words the server uses).
        GuestError: the module's ``metadata`` op failed.
    """
    options = parse_options(pairs)
    if options:
        resolve_options(module_metadata(pool), options)
    return options


def add_option_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--option KEY=VALUE`` (repeatable) to ``parser`` (``play``, ``simulate``, ``check``)."""
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game option (see inspect); repeat for several",
    )


def seat_label(player_id: int | str, names: Mapping[int, str] | None = None) -> str:
    """A seat as the CLI names it in a result.

    Args:
        player_id: the seat's player id (an int, or a result's string key such as ``"2"``).
        names: each seat's display name by player id (a view's or a listing's usernames; for
            ``play``, its bots); a seat it lacks, or names with an empty one, goes unnamed.

    Returns:
        ``"bob (player 2)"``, or ``"player 2"`` without a name.
    """
    name = (names or {}).get(int(player_id), "")
    return f"{name} (player {player_id})" if name else f"player {player_id}"


def describe_result(result: dict[str, Any], names: Mapping[int, str] | None = None) -> str:
    """One line: how the match ended, the winners and every seat's rank.

    Args:
        result: a result's JSON form (``{"ranks", "winners", "ended_by", "player_id"}``).
        names: each seat's name by player id (see :func:`seat_label`): the winners and the seat
            that resigned or ran out of time are named ``bob (player 2)``; ranks stay by player id.

    Returns:
        ``"result: game over; winner: bob (player 2) (player 1 #2, player 2 #1)"``, with
        ``shared first place: ann (player 1), cy (player 3)`` for a tie or partners,
        ``result: ann (player 1) resigned; ...`` or ``... ran out of time; ...``, or
        ``result: aborted by the admin (no ranks)``. Unnamed seats read ``player 2``
        (``shared first place: players 1, 3``), as before names were shown.
    """
    ended = result["ended_by"]
    if ended == "aborted":
        return "result: aborted by the admin (no ranks)"
    if ended == "normal":
        how = "game over"
    else:  # the seat that ended it (no seat for a normal end)
        how = seat_label(result["player_id"], names) + {"resigned": " resigned", "timeout": " ran out of time"}[ended]
    ranks = ", ".join(f"player {pid} #{rank}" for pid, rank in result["ranks"].items())
    winners = result["winners"]
    if len(winners) == 1:
        who = f"winner: {seat_label(winners[0], names)}"
    elif any((names or {}).get(int(w)) for w in winners):
        who = "shared first place: " + ", ".join(seat_label(w, names) for w in winners)  # a tie, or partners
    else:
        who = "shared first place: players " + ", ".join(str(w) for w in winners)
    return f"result: {how}; {who} ({ranks})"


def _print_move(match: Match, move: MoveRecord) -> None:
    from tablehost.cli_remote import describe_action

    del match
    print(escape_controls(f"{move.seq:4d}  player {move.player_id}  {describe_action(move.action)}"))


def guest_output_lines(printed: str, prefix: str) -> list[str]:
    """What a game printed, as lines a terminal may show.

    Args:
        printed: the game's output for one call, already bounded (a record's ``printed``,
            :func:`tablehost.history.keep_printed`: the newest 4 KiB).
        prefix: put before every line (``"   3  printed: "``).

    Returns:
        One line per line of ``printed`` (a final newline ends the last line, it adds none),
        each with its control characters escaped (:func:`escape_controls`: no terminal
        escape sequence of the module reaches the screen); empty for no output.
    """
    if not printed:
        return []
    return [prefix + escape_controls(line) for line in printed.removesuffix("\n").split("\n")]


def _print_guest_output(version: int, printed: str) -> None:
    """``--show-guest-output``: what setup (version 0) or the move to ``version`` printed."""
    for line in guest_output_lines(printed, f"{version:4d}  printed: "):
        print(line)


def _play_reporter(quiet: bool, show_guest_output: bool) -> Callable[[Match, MoveRecord], None] | None:
    """The ``on_move`` of ``play``: each move's line unless ``quiet``, then what it printed with
    ``show_guest_output``; None when there is nothing to print."""
    if quiet and not show_guest_output:
        return None

    def report(match: Match, move: MoveRecord) -> None:
        if not quiet:
            _print_move(match, move)
        if show_guest_output:
            _print_guest_output(move.seq, move.printed)

    return report


def _report_failure(seed: int, failure: FailureRecord, at_setup: bool = False) -> None:
    """Say on stderr how the game failed (``at_setup``: in setup), with what it printed in the
    failed call (module text, escaped, bounded as the record keeps it)."""
    said = f"{failure.code}: {failure.message} (at setup)" if at_setup else failure.describe()
    print(escape_controls(f"tablehost: the game failed (seed {seed}; --seed {seed} replays it): {said}"), file=sys.stderr)
    lines = guest_output_lines(failure.printed, "  | ")
    if lines:
        print("tablehost: what the game printed in the call that failed:", file=sys.stderr)
        for line in lines:
            print(line, file=sys.stderr)


def _write_record(path: str, record: dict[str, Any]) -> None:
    """Write ``record`` as indented JSON to ``path``; SystemExit (exit 2) when it cannot be written."""
    try:
        Path(path).write_bytes(orjson.dumps(record, option=orjson.OPT_INDENT_2))
    except OSError as exc:
        raise SystemExit(f"tablehost: cannot write the record {path}: {exc.strerror}") from None


def _play_seats(pool: GuestPool, names: list[str]) -> int:
    """Seats of ``play`` without ``--players``: one per ``--bots`` name when several are given
    (as ``simulate`` counts them), else the fewest the module declares (2 for a module that
    declares nothing).

    Raises:
        SetupRefused: the names count seats the module does not declare (exit 2), said with
            how ``play`` counted them.
        GuestError: the module's ``metadata`` op failed.
    """
    metadata = module_metadata(pool)
    if len(names) > 1:
        if metadata.declared:
            try:
                check_player_count(metadata, len(names))
            except SetupRefused as exc:
                raise SetupRefused(
                    f"{exc} (play seats one player per --bots name; --players N with one name seats N)",
                    players=len(names),
                ) from None
        return len(names)
    return metadata.min_players if metadata.declared else 2


def _check_record_path(path: str) -> None:
    """Refuse a ``--record`` path the record could not be written to, before the game is played.

    Raises:
        SystemExit: its folder does not exist, it is a folder, or it (or, when it does not exist
            yet, its folder) is not writable; the CLI exits 2.
    """
    target = Path(path)
    folder = target.resolve().parent
    if not folder.is_dir():
        raise SystemExit(f"tablehost: cannot write the record: no folder {target.parent}")
    if target.is_dir():
        raise SystemExit(f"tablehost: cannot write the record {path}: it is a folder; name a file in it")
    if not os.access(target if target.exists() else folder, os.W_OK):
        raise SystemExit(f"tablehost: cannot write the record {path}: permission denied")


def cmd_play(args: argparse.Namespace) -> int:
    """Play one local match with bots, printing every move and the final scores.

    With ``--show-guest-output`` what the game printed at setup and in each move is printed
    under it (``   3  printed: ...``). A game that fails after setup is reported on stderr with
    what it printed in the failed call, and ``--record`` writes the moves accepted before the
    failure with the failure in the record's ``failure`` member (``replay --verify`` re-runs
    it); a setup that fails leaves nothing to record.

    Returns:
        0 for a game that reached game over; 1 (:data:`EXIT_FAILED`) for a game the bots could
        not finish: stopped at ``--max-plies``, or failed (a panic, a trap, a budget such as a
        loop's fuel, a stuck game, a refused answer), said on stderr with its seed.

    Raises:
        SystemExit, SetupRefused, InvalidRequest, ValueError: bad input, refused before or at
            setup (a player count or option the module does not declare, a bot that does not
            fit); the CLI exits 2.
    """
    require_in_range("--max-plies", args.max_plies, 1, MAX_PLIES)
    names = [n.strip() for n in args.bots.split(",") if n.strip()]
    parse_bot_list(args.bots, args.players if args.players is not None else max(1, len(names)))  # names first
    if args.record:
        _check_record_path(args.record)
    limits = limits_from_args(args)
    data = _read_module_bytes(args.module, limits)
    module = load_module(data, limits=limits, name=Path(args.module).stem)
    seed = args.seed if args.seed is not None else secrets.randbits(64)
    pool = local_pool(module, limits)
    tune_for_bot_jobs()
    try:
        players = args.players if args.players is not None else _play_seats(pool, names)
        bots = parse_bot_list(args.bots, players)
        options = declared_options(pool, args.option)  # refusals before the game: bad input (exit 2)
        _check_search_bots(pool, bots, options)
        try:
            # The whole game on one big-stack thread: guest calls then need no hop each.
            result = on_big_stack(
                limits.stack_bytes,
                lambda: play_game(
                    pool,
                    bots,
                    seed,
                    match_id=f"play-{seed}",
                    max_plies=args.max_plies,
                    module_sha256=module.sha256,
                    module_name=module.name,
                    on_move=_play_reporter(args.quiet, args.show_guest_output),
                    on_start=(lambda match: _print_guest_output(0, match.setup.get("printed", "")))
                    if args.show_guest_output
                    else None,
                    options=options,
                    keep_failure=True,
                ),
            )
        except SetupRefused:
            raise  # the seats asked for were refused at setup: bad input (exit 2)
        except TablehostError as exc:  # setup failed, as simulate counts a failure: exit 1
            _report_failure(
                seed, FailureRecord.of(exc, 0, None, limit=DEFAULT_ANSWER_LIMITS.printed_kept_chars), at_setup=True
            )
            if args.record:
                print(f"no record written to {args.record}: the game failed at setup, so there is no match to record")
            return EXIT_FAILED
    finally:
        pool.close()
    match = result.match
    if result.failure is not None:  # the moves before it stand (platform rule 2): record them
        _report_failure(seed, result.failure)
        if args.record:
            _write_record(args.record, {**match.record(), "failure": result.failure.to_json()})
            moves = f"{result.plies} move{'' if result.plies == 1 else 's'}"
            print(f"record of the {moves} before the failure, and the failure, written to {args.record}")
        return EXIT_FAILED
    print(
        f"seed {seed}: {result.plies} moves, {'game over' if result.finished else 'stopped at the ply cap'}"
    )
    for player in match.players:
        score = match.scores.get(str(player.player_id), {})
        print(
            escape_controls(
                f"  player {player.player_id} ({bots[player.player_id - 1]}): {score.get('public_points')}"
            )
        )
    bot_names = {player.player_id: bots[player.player_id - 1] for player in match.players}  # who played
    if result.finished and result.winners:
        labels = [seat_label(match.players[seat].player_id, bot_names) for seat in result.winners]
        if result.draw:
            print("draw")
        elif len(labels) == 1:
            print(escape_controls(f"winner: {labels[0]}"))
        else:
            print(escape_controls(f"winners (one team): {', '.join(labels)}"))
    final = match.result
    if final is not None:
        print(escape_controls(describe_result(final.to_json(), bot_names)))
    if args.record:
        _write_record(args.record, match.record())
        print(f"record written to {args.record}")
    return 0 if result.finished else EXIT_FAILED


def cmd_simulate(args: argparse.Namespace) -> int:
    """Run many bot games and print wins, draws, plies, speed and failures (with seeds)."""
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    parse_bot_list(args.bots, len(bots))
    require_in_range("--games", args.games, 1, MAX_GAMES)
    require_in_range("--workers", args.workers, 1, MAX_WORKERS)
    require_in_range("--max-plies", args.max_plies, 1, MAX_PLIES)
    if args.batch is not None:
        require_in_range("--batch", args.batch, 1, MAX_GAMES_PER_CALL)
    limits = limits_from_args(args)
    data = _read_module_bytes(args.module, limits)  # a clear message for a missing, unreadable or huge file
    # A seat count the game does not take is one line now, not a failure in every game.
    module = load_module(data, limits=limits, name=Path(args.module).stem)
    pool = local_pool(module, limits)
    try:
        try:
            _check_players(pool, len(bots))
        except SetupRefused as exc:  # --bots sets the seats: say so (one name is one seat, not all)
            raise SystemExit(
                f"tablehost: {exc.code}: {exc} (simulate seats one player per --bots name)"
            ) from None
        options = declared_options(pool, args.option)
        _check_search_bots(pool, bots, options)
    finally:
        pool.close()
    seed = args.seed if args.seed is not None else secrets.randbits(64)
    tune_for_bot_jobs()  # this process plays the games itself with --workers 1
    try:
        summary = simulate(
            args.module,
            bots,
            seed,
            args.games,
            workers=args.workers,
            max_plies=args.max_plies,
            limits=limits,
            progress=True,  # on stderr only: a redrawn line on a terminal, else a line every 10 s
            in_guest=args.in_guest,
            batch_size=args.batch,
            use_ray=args.ray is not None,
            ray_address=args.ray or None,
            options=options,
        )
    except SimulationInterrupted as stopped:  # Ctrl-C: the games that ended, said to be partial
        summary = stopped.summary
    except RayUnreachable as exc:
        raise SystemExit(f"tablehost: {exc}") from None
    except ImportError as exc:
        if args.ray is None or exc.name != "ray":
            raise
        raise SystemExit("tablehost: --ray needs Ray: pip install -e '.[ray]'") from None
    if args.json:
        print(orjson.dumps(summary.to_json(), option=orjson.OPT_INDENT_2).decode())
    else:
        for line in summary_lines(summary):
            print(escape_controls(line))
    if summary.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED if summary.failures else 0


def summary_lines(summary: Summary) -> list[str]:
    """The lines ``simulate`` prints for ``summary`` (not escaped: module text is the caller's to escape).

    Returns:
        The header (games, bots, seed; ``interrupted: N of M games ended`` after Ctrl-C), the
        options, wins per seat, draws, mean rank per seat and plies (``no game finished`` in
        their place when none did), speed, and every failure with its seed.
    """
    header = f"{summary.module}: {summary.games} games, bots {','.join(summary.bots)}, seed {summary.seed}"
    if summary.interrupted:
        header += f" (interrupted: {summary.games} of {summary.games_requested} games ended)"
    lines = [header]
    if summary.options:
        lines.append(f"  options: {describe_options(summary.options)}")
    for seat, wins in enumerate(summary.wins):
        lines.append(f"  seat {seat + 1} ({summary.bots[seat]}): {wins} wins")
    lines.append(f"  draws: {summary.draws}")
    if summary.finished == 0:
        lines.append("  no game finished: no mean ranks or plies")
    else:
        lines.append("  mean rank per seat: " + ", ".join(str(rank) for rank in summary.mean_ranks))
        lines.append(f"  plies: mean {summary.plies_mean}, median {summary.plies_median}, max {summary.plies_max}")
    lines.append(f"  speed: {summary.moves_per_second} moves/s, {summary.games_per_second} games/s")
    lines.append(f"  failures: {len(summary.failures)}")
    lines.extend(f"    game {f['game']} seed {f['seed']}: {f['error']}" for f in summary.failures)
    return lines


def _viewer(text: str, player_ids: list[int]) -> int | None:
    if text == "spectator":
        return None
    try:
        viewer = parse_int(text)
    except ValueError:
        viewer = None
    if viewer not in player_ids:
        choices = ", ".join(str(p) for p in player_ids)
        raise SystemExit(f"tablehost: --viewer must be a player id ({choices}) or 'spectator', got {text[:40]!r}")
    return viewer


def describe_failure_lines(failure: FailureRecord) -> list[str]:
    """The lines ``replay`` shows of a record's ``failure``: how the game failed, then what it
    printed in that call (escaped: module text)."""
    lines = [escape_controls(f"  failed: {failure.describe()}")]
    lines.extend(guest_output_lines(failure.printed, "    | "))
    return lines


def cmd_replay(args: argparse.Namespace) -> int:
    """Show a record, verify it by re-execution, or print the state/view at a version.

    A record with a ``failure`` (``play --record`` of a game that failed) is summarised with
    the failure and what the game printed in it; ``--verify`` re-runs the move that failed and
    says whether it failed the same way (a difference is a MISMATCH at the failure's version).
    """
    record = load_record(args.record)
    if args.at is not None or args.viewer is not None:
        if args.viewer is None:
            shown: Any = state_at(record, args.at)
        else:
            shown = view_at(record, args.at, _viewer(args.viewer, [p.player_id for p in record.players]))
        print(orjson.dumps(shown, option=orjson.OPT_INDENT_2).decode())
        if not args.verify:
            return 0
    if not args.verify:
        print(
            escape_controls(
                f"match {record.match_id}: module {record.module_name or '?'} {record.module_sha256}"
            )
        )
        print(
            escape_controls(
                f"  players: {', '.join(p.username for p in record.players)}; version {record.version}"
            )
        )
        print(f"  moves: {len(record.moves)} ({sum(m.undone for m in record.moves)} undone)")
        if record.failure is not None:
            for line in describe_failure_lines(record.failure):
                print(line)
        return 0
    if not args.module:
        raise SystemExit("tablehost: --verify needs the module: pass --module FILE.wasm")
    limits = limits_from_args(args)
    module = load_module(_read_module_bytes(args.module, limits), limits=limits)
    if record.module_sha256 and module.sha256 != record.module_sha256:
        raise SystemExit(
            f"tablehost: {args.module} has sha256 {module.sha256}, the record needs {record.module_sha256}"
        )
    # Fuel decides as it did live; the wall clock is widened so a busy machine cannot fail a move.
    pool = local_pool(module, limits.for_replay())
    try:
        result = on_big_stack(limits.stack_bytes, lambda: replay(record, pool))
    finally:
        pool.close()
    if not result.results_compared:
        print(
            "note: a tablehost.record/1 record kept no scores, game over or offers: only patches were compared"
        )
    if result.ok:
        what = "patches and results" if result.results_compared else "patches"
        print(f"verified: setup and {result.events} events reproduced exactly ({what})")
        if result.result_checked and record.result is not None:
            print(escape_controls(f"verified: the replayed game gives the record's {describe_result(record.result)}"))
        failure = record.failure
        if failure is not None and result.failure_rerun:
            print(escape_controls(f"verified: the failure happened again: {failure.describe()}"))
        elif failure is not None:
            print(
                escape_controls(
                    f"note: the failure ({failure.describe()}) was not re-run: replay runs moves, not a bot's search"
                )
            )
        return 0
    print(escape_controls(f"MISMATCH at version {result.first_difference}: {result.detail}"))
    return EXIT_FAILED


def _check_search_bots(pool: GuestPool, bots: list[str], options: dict[str, Any]) -> None:
    """Refuse a search bot that cannot play this game before the first game, in the server's
    words (:func:`tablehost.api.server_bots.check_bot_fits`): ``mcts`` on a game with hidden
    information, ``ismcts`` on one without, or ``ismcts`` of a module without
    ``Game::sample_hidden`` (asked once, :mod:`tablehost.sampler_probe`).

    Raises:
        InvalidRequest: naming the bot and what fits (exit 2).
        SetupRefused: ``options`` the module does not declare (as the game itself would).
    """
    from tablehost.api.server_bots import check_bot_fits, needs_sampler
    from tablehost.metadata import resolve_options
    from tablehost.sampler_probe import samples_hidden

    if not any(is_search_bot(name) for name in bots):
        return
    metadata = module_metadata(pool)
    samples: bool | None = None
    for name in bots:
        if needs_sampler(name, metadata.hidden_information) and samples is None:
            samples = samples_hidden(pool, metadata, len(bots), resolve_options(metadata, options))
        check_bot_fits(name, metadata.hidden_information, samples)


def _check_players(pool: GuestPool, given: int | None) -> int:
    """Seats per game of ``check`` and ``simulate``: ``given``, else the fewest the module
    declares (else 2).

    Args:
        pool: the module's pool (its metadata is read).
        given: ``--players`` (``simulate``: one seat per ``--bots`` name), or None.

    Returns:
        The seat count.

    Raises:
        SetupRefused: ``given`` is outside the module's declared player range (exit 2, as ``play``).
        GuestError: the module's ``metadata`` op failed.
    """
    metadata = module_metadata(pool)
    if not metadata.declared:
        return given if given is not None else 2
    if given is None:
        return metadata.min_players
    check_player_count(metadata, given)
    return given


def cmd_check(args: argparse.Namespace) -> int:
    """Play seeded random games, re-run every call in a fresh instance, report differences, leaks, budgets."""
    require_in_range("--games", args.games, 1, MAX_CHECK_GAMES)
    if args.players is not None:
        require_in_range("--players", args.players, 1, MAX_PLAYERS)
    require_in_range("--max-plies", args.max_plies, 1, MAX_PLIES)
    limits = limits_from_args(args)
    module = load_module(_read_module_bytes(args.module, limits), limits=limits, name=Path(args.module).stem)
    pool = local_pool(module, limits)
    try:
        players = _check_players(pool, args.players)
        options = declared_options(pool, args.option)
    finally:
        pool.close()
    seed = args.seed if args.seed is not None else 1
    report = check_module(
        module, games=args.games, seed=seed, players=players, max_plies=args.max_plies, limits=limits,
        options=options,
    )
    if args.json:
        print(orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2).decode())
    else:
        print(format_report(report))
    return 0 if report.ok else EXIT_FAILED


def cmd_demo(args: argparse.Namespace) -> int:
    """Start a server, play bot matches of every sample game over gRPC, verify each by replay."""
    from tablehost.demo import run_demo

    require_in_range("--seed", args.seed, 0, 2**64 - 1)
    return run_demo(Path(args.dist), Path(args.data) if args.data else None, seed=args.seed)


def ascii_int(text: str) -> int:
    """An option's integer (:func:`tablehost.cli_ranges.parse_int`: ASCII digits only, so
    ``--players ２``, ``0_2``, ``+2`` and ``' 2'`` are refused); ValueError otherwise."""
    return parse_int(text)


def ascii_float(text: str) -> float:
    """An option's number with a fraction (:func:`tablehost.cli_ranges.parse_decimal`); ValueError otherwise."""
    return parse_decimal(text)


ascii_int.__name__ = "int"  # argparse's refusal says "invalid int value: '２'"
ascii_float.__name__ = "float"


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose refusals are one line (argparse prints its whole usage first).

    A value that is not a number, a missing argument or an unknown option exits with status 2
    and ``tablehost COMMAND: argument --OPTION: ... (see tablehost COMMAND --help)`` on standard
    error (the help gives each option's range); sub-parsers inherit the class.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse reads "-inf", "-nan" and "-1e3" as options ("expected one argument"); its
        # pattern for a negative number is this private attribute (Python 3.8 to 3.13), which
        # tests/test_cli_ranges.py checks through the command line.
        self._negative_number_matcher = NUMBER_ARGUMENT
        # Every `type=int` / `type=float` option reads ASCII digits only (int("２") is 2).
        self.register("type", int, ascii_int)
        self.register("type", float, ascii_float)

    def error(self, message: str) -> NoReturn:
        """Print ``message`` as one line naming this command and exit with status 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (also used to generate the docs)."""
    parser = OneLineParser(
        prog="tablehost",
        description="Run turn-based games compiled to WebAssembly: locally, or on a gRPC match server.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    inspect = commands.add_parser("inspect", help="validate a module and show its exports and budgets")
    inspect.add_argument("module", help="path to a .wasm module")
    inspect.add_argument("--json", action="store_true", help="print JSON")
    add_budget_options(inspect, replaying=True)
    inspect.set_defaults(func=cmd_inspect)

    play = commands.add_parser("play", help="play one local match with bots")
    play.add_argument("module", help="path to a .wasm module")
    play.add_argument(
        "--players",
        type=int,
        help="number of seats (default: one per --bots name, or with one name the fewest the module declares)",
    )
    play.add_argument(
        "--bots", default="random", help="bot per seat, comma-separated: random, first, mcts:N, ismcts:N"
    )
    play.add_argument("--seed", type=int, help="64-bit seed; the same seed plays the same game")
    play.add_argument("--record", help="write the match record (JSON) to this file")
    play.add_argument(
        "--max-plies",
        type=int,
        default=10_000,
        help=f"stop after this many moves, 1 to {MAX_PLIES} (default 10000)",
    )
    play.add_argument("--quiet", action="store_true", help="do not print each move")
    play.add_argument(
        "--show-guest-output",
        action="store_true",
        help="print what the game printed at setup and in each move (a failed call's output is always shown)",
    )
    add_option_argument(play)
    add_budget_options(play)
    play.set_defaults(func=cmd_play)

    sim = commands.add_parser("simulate", help="run many bot games and summarise them")
    sim.add_argument("module", help="path to a .wasm module")
    sim.add_argument(
        "--games", type=int, default=100, help=f"number of games, 1 to {MAX_GAMES} (default 100)"
    )
    sim.add_argument(
        "--bots",
        default="random,random",
        help="bot per seat (random, first, mcts:N, ismcts:N); the count sets the players",
    )
    sim.add_argument("--seed", type=int, help="64-bit seed; the same seed gives the same results")
    sim.add_argument(
        "--workers", type=int, default=1, help=f"worker processes, 1 to {MAX_WORKERS} (default 1)"
    )
    sim.add_argument(
        "--max-plies",
        type=int,
        default=10_000,
        help=f"a game not over by then is a failure, 1 to {MAX_PLIES} (default 10000)",
    )
    sim.add_argument("--json", action="store_true", help="print the summary as JSON")
    sim.add_argument(
        "--in-guest",
        action="store_true",
        help="play whole games inside the guest, a batch per call (bots random/first only)",
    )
    sim.add_argument(
        "--batch",
        type=int,
        help=f"games per batch, 1 to {MAX_GAMES_PER_CALL} (default 32 in the guest or on Ray, else 1)",
    )
    sim.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="spread the batches over Ray: the cluster at ADDRESS, or a local Ray when none is given",
    )
    add_option_argument(sim)
    add_budget_options(sim)
    sim.set_defaults(func=cmd_simulate)

    rep = commands.add_parser("replay", help="show, verify or rewind a match record")
    rep.add_argument("record", help="a record file written by play --record or GetRecord")
    rep.add_argument("--verify", action="store_true", help="re-execute every move and compare")
    rep.add_argument("--module", help="the module file (needed by --verify)")
    rep.add_argument("--at", type=int, help="print the state after this many events (version)")
    rep.add_argument("--viewer", help="with --at: print this player's view (an id, or 'spectator')")
    add_budget_options(rep, replaying=True)
    rep.set_defaults(func=cmd_replay)

    check = commands.add_parser(
        "check", help="conformance report: determinism in fresh instances, leaks, budget use per op"
    )
    check.add_argument("module", help="path to a .wasm module")
    check.add_argument(
        "--games",
        type=int,
        default=10,
        help=f"seeded random games to play, 1 to {MAX_CHECK_GAMES} (default 10)",
    )
    check.add_argument("--seed", type=int, help="64-bit seed of the games (default 1)")
    check.add_argument(
        "--players", type=int, help="seats per game (default: the fewest the module declares, else 2)"
    )
    check.add_argument(
        "--max-plies",
        type=int,
        default=2_000,
        help=f"cut a game off after this many moves, 1 to {MAX_PLIES} (default 2000)",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    add_option_argument(check)
    add_budget_options(check)
    check.set_defaults(func=cmd_check)

    demo = commands.add_parser("demo", help="run a server and bot matches of every sample game over gRPC")
    demo.add_argument("--dist", default="sample_games/dist", help="folder of .wasm modules")
    demo.add_argument("--data", help="data directory (default: a temporary one, removed on success)")
    demo.add_argument("--seed", type=int, default=1, help="seed of the bots' choices, 0 to 2**64-1")
    demo.set_defaults(func=cmd_demo)

    try:
        from tablehost import cli_remote
    except ImportError:  # the server parts are optional at import time (e.g. a trimmed install)
        pass
    else:
        cli_remote.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status: 0 done, 1 a failure (a failed check or
    verify, a game that failed or did not finish: ``play``, ``simulate``), 2 bad input (a bad
    option or file, a refused setup, the server refusing the request)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # Local commands print for people; their structured events go to stderr at warning and above
    # (``serve`` configures its own JSON logging).
    logs.configure(level=os.environ.get("TABLEHOST_LOG_LEVEL", "warning"), json=False)
    try:
        return int(args.func(args))
    except TablehostError as exc:
        print(escape_controls(f"tablehost: {exc.code}: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        print(escape_controls(f"tablehost: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exc:
        if not isinstance(exc.code, str):
            raise
        # A command refused its input with a message (SystemExit("tablehost: ...")): that is
        # bad input, status 2 like argparse's own refusals, not 1 (a failed check or game).
        print(escape_controls(exc.code), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, as other command-line tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
