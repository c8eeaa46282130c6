"""Many bot games of one module across worker processes or a Ray cluster, with a summary a
researcher can use.

Each game's seed derives from the simulation seed (SplitMix64 output *i* for game *i*), so
the same seed, module and bots give the same results whatever the number of workers, the
batch size or the machines. Games run host-driven (every move a guest call, any bots,
``tablehost.selfplay``) or, with ``in_guest``, whole batches inside the guest with one
``playout`` call each (``random``/``first`` policies, :mod:`tablehost.inguest`).

The workers' pools never quarantine the module (:class:`~tablehost.guest.GuestPool`
``quarantine=False``): a game that fails is reported with its own error, however many failed
before it. A worker process that dies (killed, out of memory) never hangs the run: every game that was in
flight in the broken worker pool is reported as a failure with its seed, and the remaining
games go to a fresh pool. Games run on a big-stack thread of their worker (:mod:`tablehost._stacks`).

An interrupt (Ctrl-C) stops the run at once: the worker processes ignore SIGINT and the caller
terminates them, games in flight are dropped, and :func:`simulate` raises
:class:`SimulationInterrupted` carrying the summary of the games that finished before it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import statistics
import sys
import time
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tablehost import logs
from tablehost._stacks import on_big_stack
from tablehost.errors import TablehostError
from tablehost.gcpolicy import tune_for_bot_jobs
from tablehost.guest import GuestPool
from tablehost.inguest import POLICIES, playouts
from tablehost.limits import DEFAULT_LIMITS, Limits
from tablehost.metadata import read_metadata
from tablehost.module import load_module
from tablehost.module_file import read_module_file
from tablehost.progress import ProgressReport
from tablehost.results import compute_result
from tablehost.rng import Rng
from tablehost.selfplay import default_players, play_game


@dataclass
class GameOutcome:
    """One game of a simulation, as a worker reports it (picklable).

    Attributes:
        index: game number (0-based).
        seed: the game's seed; ``play --seed`` with it reproduces the game.
        plies: moves applied.
        winners: seat indexes ranked first by the module's result rule (several = a draw, unless one team).
        ranks: each seat's rank (1 = first, ties shared), in seat order; empty when unfinished.
        draw: several seats share first place and they are not partners.
        finished: reached game over within the ply cap.
        error: ``"code: message"`` when the game failed, else None.
    """

    index: int
    seed: int
    plies: int = 0
    winners: list[int] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    draw: bool = False
    finished: bool = False
    error: str | None = None


@dataclass
class Summary:
    """What a simulation found.

    Attributes:
        games: games played; ``failures`` lists every failed or unfinished game with its seed.
        wins: outright wins per seat (index = seat; both partners of a winning team count one);
            ``draws``: games whose first place was shared by seats that are not one team.
        mean_ranks: each seat's mean rank over finished games (1 = always first); each None
            when no game finished.
        plies_mean, plies_median, plies_max: over finished games; None when none finished.
        moves_per_second, games_per_second: over the wall-clock time of the whole run.
        seconds: that wall-clock time, seconds.
        failures: ``{"game", "seed", "error"}`` per failed or unfinished game, by game index.
        options: the game options every game was set up with (``--option``), as given; empty
            for the defaults.
        games_requested: the games the run was asked for; more than ``games`` when it was
            interrupted.
        interrupted: the run was stopped (Ctrl-C) before every game was played; the summary
            covers the games that ended before that.
    """

    module: str
    bots: list[str]
    seed: int
    games: int
    wins: list[int]
    draws: int
    mean_ranks: list[float | None]
    plies_mean: float | None
    plies_median: float | None
    plies_max: int | None
    moves_per_second: float
    games_per_second: float
    seconds: float
    failures: list[dict[str, Any]]
    options: dict[str, Any] = field(default_factory=dict)
    games_requested: int = 0
    interrupted: bool = False

    @property
    def finished(self) -> int:
        """Games that reached game over (neither failed nor cut off)."""
        return self.games - len(self.failures)

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON-ready dict (``--json`` output; README "simulate --json")."""
        return asdict(self)


class SimulationInterrupted(KeyboardInterrupt):
    """A simulation stopped by an interrupt (Ctrl-C); a :class:`KeyboardInterrupt`, so a caller
    that does not look for it is interrupted as usual.

    Attributes:
        summary: the games that ended before the interrupt (``summary.interrupted`` true).
    """

    def __init__(self, summary: Summary) -> None:
        super().__init__("the simulation was interrupted")
        self.summary = summary


MAX_WORKERS = 64
"""More worker processes than this only thrash; ``--workers`` is capped here and at the game count."""

DEFAULT_BATCH = 32
"""Games per in-guest ``playout`` call, and per Ray task (host-driven games go one per job locally)."""

IN_FLIGHT_PER_WORKER = 4
"""Batches submitted ahead per worker process (the rest are drawn lazily)."""


@dataclass(frozen=True)
class Batch:
    """Consecutive games of a simulation, run by one worker (picklable).

    Attributes:
        first: index of the first game; ``seeds[k]`` is the seed of game ``first + k``.
        seeds: the games' seeds.
        bots: one bot name per seat.
        max_plies: a game not over by then is a failure.
        in_guest: play every game inside the guest with one ``playout`` call (``random``/``first``
            only) instead of move by move from the host.
        options: the game options of every game, ``(name, value)`` pairs (host-driven games only).
    """

    first: int
    seeds: tuple[int, ...]
    bots: tuple[str, ...]
    max_plies: int
    in_guest: bool = False
    options: tuple[tuple[str, Any], ...] = ()


class _Worker:
    """What one process keeps between batches: the module's pool, loaded once."""

    pool: GuestPool | None = None
    sha256 = ""
    result_rule: str | None = None


_worker = _Worker()


def _init_worker(module_bytes: bytes, name: str, limits: Limits, tune_gc: bool = True) -> None:
    """Load the module into this process (once per module: Ray reuses worker processes).

    ``tune_gc``: a worker process of its own (a process pool's, Ray's) takes the bot jobs'
    collector settings (:func:`tablehost.gcpolicy.tune_for_bot_jobs`); the caller's own process
    (``workers=1``) is left as it is (``tablehost simulate`` tunes it itself).
    """
    logs.configure(level="warning", json=False)
    module = load_module(module_bytes, limits=limits, name=name)
    if _worker.pool is not None and _worker.sha256 == module.sha256:
        return
    _worker.pool = GuestPool(module, limits, quarantine=False)  # a local run: every game's own failure
    _worker.sha256 = module.sha256
    _worker.result_rule = None
    if tune_gc:
        tune_for_bot_jobs()  # after the module is loaded: it is frozen with the rest


def _result_rule() -> str:
    """The module's declared result rule (op 6), read once per worker."""
    assert _worker.pool is not None
    if _worker.result_rule is None:
        _worker.result_rule = read_metadata(_worker.pool).result
    return _worker.result_rule


def _failure(exc: TablehostError) -> str:
    return f"{getattr(exc, 'code', type(exc).__name__)}: {exc}"


def _run_game(
    index: int, seed: int, bots: Sequence[str], max_plies: int, options: dict[str, Any] | None = None
) -> GameOutcome:
    assert _worker.pool is not None
    outcome = GameOutcome(index, seed)
    try:
        result = play_game(
            _worker.pool, bots, seed, match_id=f"sim-{index}", max_plies=max_plies, module_sha256=_worker.sha256,
            options=options,
        )
    except TablehostError as exc:
        outcome.error = _failure(exc)
        return outcome
    outcome.plies, outcome.winners, outcome.finished = result.plies, result.winners, result.finished
    outcome.draw = result.draw
    final = result.match.result
    if final is not None:
        outcome.ranks = [final.ranks.get(p.player_id, 0) for p in result.match.players]
    if not result.finished:
        outcome.error = f"simulate/unfinished: no game over after {max_plies} plies"
    return outcome


def _run_in_guest(batch: Batch) -> list[GameOutcome]:
    """Play a batch with one ``playout`` call; when the call fails, play its games one by one
    so each failure is pinned to its own seed."""
    assert _worker.pool is not None
    players = [p.to_json() for p in default_players(len(batch.bots))]
    player_ids = [p["player_id"] for p in players]
    try:
        rule = _result_rule()
        games = playouts(_worker.pool, batch.seeds, batch.bots, players=players, max_plies=batch.max_plies)
    except TablehostError as exc:
        if len(batch.seeds) == 1:
            return [GameOutcome(batch.first, batch.seeds[0], error=_failure(exc))]
        return [
            outcome
            for k, seed in enumerate(batch.seeds)
            for outcome in _run_in_guest(Batch(batch.first + k, (seed,), batch.bots, batch.max_plies, True))
        ]
    outcomes = []
    for k, game in enumerate(games):
        outcome = GameOutcome(batch.first + k, batch.seeds[k], plies=game.plies, finished=game.game_over)
        if game.game_over:
            result = compute_result(player_ids, rule, game.scores, game.ranks)
            outcome.ranks = [result.ranks.get(pid, 0) for pid in player_ids]
            outcome.winners = [player_ids.index(pid) for pid in result.winners]
            outcome.draw = len(outcome.winners) > 1  # in-guest results know no teams
        elif game.cut == "stuck":
            outcome.error = f"match/stuck: no active player is offered an action after {game.plies} plies"
        else:
            outcome.error = f"simulate/unfinished: no game over after {batch.max_plies} plies"
        outcomes.append(outcome)
    return outcomes


def run_batch(batch: Batch) -> list[GameOutcome]:
    """Play one batch in this worker (after :func:`_init_worker`) on a big-stack thread; an
    outcome per game, in order."""
    assert _worker.pool is not None

    def play() -> list[GameOutcome]:
        if batch.in_guest:
            return _run_in_guest(batch)
        options = dict(batch.options)
        return [
            _run_game(batch.first + k, seed, batch.bots, batch.max_plies, options) for k, seed in enumerate(batch.seeds)
        ]

    return on_big_stack(_worker.pool.limits.stack_bytes, play)


def _init_pool_worker(module_bytes: bytes, name: str, limits: Limits) -> None:
    """:func:`_init_worker` in a worker process of a local pool, which leaves an interrupt to
    its parent: Ctrl-C reaches every process of the terminal's group, and the parent
    terminates the workers (:func:`_stop_workers`), so none prints a traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _init_worker(module_bytes, name, limits)


def _init_and_run(module_bytes: bytes, name: str, limits: Limits, batch: Batch) -> list[GameOutcome]:
    _init_worker(module_bytes, name, limits)
    return run_batch(batch)


def _batches(
    bots: Sequence[str], seed: int, games: int, max_plies: int, in_guest: bool, size: int,
    options: dict[str, Any] | None = None,
) -> Iterator[Batch]:
    """The games in batches of ``size`` (the last may be smaller); lazy: games may be many."""
    rng = Rng(seed)
    pairs = tuple((options or {}).items())
    for first in range(0, games, size):
        seeds = tuple(rng.next_u64() for _ in range(min(size, games - first)))
        yield Batch(first, seeds, tuple(bots), max_plies, in_guest, pairs)


def run_games(
    module_path: str | Path,
    bots: Sequence[str],
    seed: int,
    games: int,
    *,
    workers: int = 1,
    max_plies: int = 10_000,
    limits: Limits = DEFAULT_LIMITS,
    in_guest: bool = False,
    batch_size: int | None = None,
    ray_address: str | None = None,
    use_ray: bool = False,
    options: dict[str, Any] | None = None,
) -> Generator[GameOutcome, None, None]:
    """Play ``games`` games and yield each outcome as it finishes (any order).

    Game *i*'s seed is output *i* of ``Rng(seed)`` however the games are spread, so the same
    seed gives the same outcomes for any ``workers``, batch size, or Ray cluster.

    Args:
        in_guest: play each batch inside the guest (bots ``random``/``first`` only).
        batch_size: games per batch (default :data:`DEFAULT_BATCH` in the guest or on Ray, else 1).
        use_ray: spread the batches over Ray: the cluster at ``ray_address``, or a local one
            started for this run (``workers`` CPUs) when it is None.
        options: game options by name for every game (host-driven only: the ``playout`` op
            sets games up with the defaults). Checked by each game's setup: an option the
            module does not declare fails every game (``tablehost simulate`` checks them first).

    Raises:
        ValueError: ``games``, ``workers`` or ``batch_size`` below 1, a bot the guest cannot
            play in-guest, or ``options`` with ``in_guest``.
        ModuleError: the module is not valid (before any game starts).
        ImportError: ``use_ray`` without the ``ray`` package (``pip install tablehost[ray]``).
    """
    data = read_module_file(module_path, limits.module_bytes)
    load_module(data, limits=limits)  # fail fast, warm the compiled cache
    if games < 1 or workers < 1 or (batch_size is not None and batch_size < 1):
        raise ValueError(f"games, workers and batch size must be at least 1 (got {games}, {workers}, {batch_size})")
    if in_guest and any(b not in POLICIES for b in bots):
        raise ValueError(f"--in-guest plays only the policies {', '.join(POLICIES)}, not {','.join(bots)}")
    if in_guest and options:
        raise ValueError("--in-guest sets every game up with the default options (the playout op takes none): "
                         "drop --option, or play the games from the host")
    size = batch_size or (DEFAULT_BATCH if in_guest or use_ray else 1)
    workers = min(workers, games, MAX_WORKERS)
    name = Path(module_path).stem
    batches = _batches(bots, seed, games, max_plies, in_guest, size, options)
    if use_ray:
        from tablehost.ray_runner import run_on_ray

        yield from run_on_ray(_init_and_run, data, name, limits, batches, address=ray_address, cpus=workers)
        return
    if workers == 1:
        _init_worker(data, name, limits, tune_gc=False)
        for batch in batches:
            yield from run_batch(batch)
        return
    yield from _run_in_processes(data, name, limits, batches, workers)


def _run_in_processes(
    data: bytes, name: str, limits: Limits, batches: Iterator[Batch], workers: int
) -> Iterator[GameOutcome]:
    """Run ``batches`` on ``workers`` spawned processes; a broken pool fails its in-flight games and is replaced."""
    context = multiprocessing.get_context("spawn")
    exhausted = False
    while True:
        executor = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_pool_worker,
                                       initargs=(data, name, limits))
        in_flight: dict[Future[list[GameOutcome]], Batch] = {}
        broken = stopped = False
        try:
            while True:
                while not exhausted and len(in_flight) < workers * IN_FLIGHT_PER_WORKER:
                    batch = next(batches, None)
                    if batch is None:
                        exhausted = True
                        break
                    in_flight[executor.submit(run_batch, batch)] = batch
                if not in_flight:
                    return
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    batch = in_flight.pop(future)
                    try:
                        yield from future.result()
                    except BrokenProcessPool:
                        broken = True
                        yield from _died(batch)
                if broken:
                    for batch in in_flight.values():
                        yield from _died(batch)
                    break
        except BaseException:  # an interrupt, or the caller closed the stream: nobody wants the rest
            stopped = True
            _stop_workers(executor)
            raise
        finally:
            executor.shutdown(wait=not (broken or stopped), cancel_futures=True)


def _stop_workers(executor: ProcessPoolExecutor) -> None:
    """Terminate ``executor``'s worker processes now, games in flight and all (shutdown alone
    waits for every running game to end: minutes for a long search)."""
    terminate = getattr(executor, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
        return
    # Before 3.14 the executor's processes are only reachable through this attribute.
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        process.terminate()


def _died(batch: Batch) -> list[GameOutcome]:
    return [
        GameOutcome(batch.first + k, seed, error="simulate/worker_died: a worker process died while this game was in flight")
        for k, seed in enumerate(batch.seeds)
    ]


def summarize(
    module: str, bots: Sequence[str], seed: int, outcomes: list[GameOutcome], seconds: float,
    options: dict[str, Any] | None = None, *, requested: int | None = None, interrupted: bool = False,
) -> Summary:
    """Fold outcomes (any order) into a :class:`Summary`; failures sorted by game index.

    Args:
        options: the games' options, kept in the summary (empty: the defaults).
        requested: the games the run was asked for (default: as many as ``outcomes``).
        interrupted: the run was stopped before every game ended.
    """
    outcomes = sorted(outcomes, key=lambda o: o.index)
    wins = [0] * len(bots)
    draws = 0
    plies = [o.plies for o in outcomes if o.error is None]
    for outcome in outcomes:
        if outcome.error is not None:
            continue
        if outcome.draw:
            draws += 1
        else:
            for seat in outcome.winners:  # one seat, or partners who won together
                wins[seat] += 1
    total_moves = sum(o.plies for o in outcomes)
    ranked = [o.ranks for o in outcomes if o.error is None and len(o.ranks) == len(bots)]
    mean_ranks: list[float | None] = [
        round(statistics.fmean(r[seat] for r in ranked), 3) if ranked else None for seat in range(len(bots))
    ]
    return Summary(
        module=module,
        bots=list(bots),
        seed=seed,
        games=len(outcomes),
        wins=wins,
        draws=draws,
        mean_ranks=mean_ranks,
        plies_mean=round(statistics.fmean(plies), 2) if plies else None,
        plies_median=float(statistics.median(plies)) if plies else None,
        plies_max=max(plies) if plies else None,
        moves_per_second=round(total_moves / seconds, 1) if seconds > 0 else 0.0,
        games_per_second=round(len(outcomes) / seconds, 2) if seconds > 0 else 0.0,
        seconds=round(seconds, 3),
        failures=[{"game": o.index, "seed": o.seed, "error": o.error} for o in outcomes if o.error],
        options=dict(options or {}),
        games_requested=len(outcomes) if requested is None else requested,
        interrupted=interrupted,
    )


def simulate(
    module_path: str | Path,
    bots: Sequence[str],
    seed: int,
    games: int,
    *,
    workers: int = 1,
    max_plies: int = 10_000,
    limits: Limits = DEFAULT_LIMITS,
    progress: bool = False,
    in_guest: bool = False,
    batch_size: int | None = None,
    ray_address: str | None = None,
    use_ray: bool = False,
    options: dict[str, Any] | None = None,
) -> Summary:
    """Run a whole simulation and summarise it.

    The arguments are :func:`run_games`'s; the same seed gives the same summary (timings aside)
    whatever ``workers``, ``batch_size`` and ``use_ray``. ``progress`` tells the games done on
    standard error while they run (:class:`~tablehost.progress.ProgressReport`: a line redrawn
    every second on a terminal, else a line every 10 s), never on standard output.

    Raises:
        SimulationInterrupted: an interrupt (Ctrl-C) stopped the run: its worker processes
            are terminated and its ``summary`` covers the games that ended before it.
        What :func:`run_games` raises.
    """
    started = time.perf_counter()
    name = Path(module_path).stem
    stream = run_games(
        module_path, bots, seed, games, workers=workers, max_plies=max_plies, limits=limits, in_guest=in_guest,
        batch_size=batch_size, ray_address=ray_address, use_ray=use_ray, options=options,
    )
    outcomes: list[GameOutcome] = []
    report = ProgressReport(name, games, sys.stderr) if progress else None
    watching: contextlib.AbstractContextManager[Any] = report if report is not None else contextlib.nullcontext()
    try:
        with watching:
            for outcome in stream:
                outcomes.append(outcome)
                if report is not None:
                    report.advance()
    except KeyboardInterrupt:
        stream.close()  # the workers are stopped (when the interrupt came between two outcomes)
        summary = summarize(
            name, bots, seed, outcomes, time.perf_counter() - started, options, requested=games, interrupted=True
        )
        raise SimulationInterrupted(summary) from None
    return summarize(name, bots, seed, outcomes, time.perf_counter() - started, options, requested=games)
