"""Many bot games of one module across worker processes, with a summary a researcher can use.

Each game's seed derives from the simulation seed (SplitMix64 output *i* for game *i*), so
the same seed, module and bots give the same results whatever the number of workers.

A worker process that dies (killed, out of memory) never hangs the run: every game that was in
flight in the broken worker pool is reported as a failure with its seed, and the remaining
games go to a fresh pool. Games run on a big-stack thread of their worker (:mod:`tablehost._stacks`).
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tablehost import logs
from tablehost._stacks import on_big_stack
from tablehost.errors import TablehostError
from tablehost.guest import GuestPool
from tablehost.limits import DEFAULT_LIMITS, Limits
from tablehost.module import load_module
from tablehost.rng import Rng
from tablehost.selfplay import play_game


@dataclass
class GameOutcome:
    """One game of a simulation, as a worker reports it (picklable).

    Attributes:
        index: game number (0-based).
        seed: the game's seed; ``play --seed`` with it reproduces the game.
        plies: moves applied.
        winners: seat indexes with the best score (several = a draw, unless one team).
        draw: several seats share the best score and they are not partners.
        finished: reached game over within the ply cap.
        error: ``"code: message"`` when the game failed, else None.
    """

    index: int
    seed: int
    plies: int = 0
    winners: list[int] = field(default_factory=list)
    draw: bool = False
    finished: bool = False
    error: str | None = None


@dataclass
class Summary:
    """What a simulation found.

    Attributes:
        games: games played; ``failures`` lists every failed or unfinished game with its seed.
        wins: outright wins per seat (index = seat; both partners of a winning team count one);
            ``draws``: games whose best score was shared by seats that are not one team.
        plies_mean, plies_median, plies_max: over finished games.
        moves_per_second, games_per_second: over the wall-clock time of the whole run.
    """

    module: str
    bots: list[str]
    seed: int
    games: int
    wins: list[int]
    draws: int
    plies_mean: float
    plies_median: float
    plies_max: int
    moves_per_second: float
    games_per_second: float
    seconds: float
    failures: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON-ready dict (``--json`` output)."""
        return asdict(self)


MAX_WORKERS = 64
"""More worker processes than this only thrash; ``--workers`` is capped here and at the game count."""

IN_FLIGHT_PER_WORKER = 4
"""Games submitted ahead per worker process (the rest are drawn lazily)."""

_worker_pool: GuestPool | None = None
_worker_sha = ""


def _init_worker(module_path: str, limits: Limits) -> None:
    global _worker_pool, _worker_sha
    logs.configure(level="warning", json=False)
    module = load_module(Path(module_path).read_bytes(), limits=limits, name=Path(module_path).stem)
    _worker_pool = GuestPool(module, limits)
    _worker_sha = module.sha256


def _run_game(job: tuple[int, int, Sequence[str], int]) -> GameOutcome:
    index, seed, bots, max_plies = job
    assert _worker_pool is not None
    outcome = GameOutcome(index, seed)
    pool = _worker_pool
    try:
        result = on_big_stack(
            pool.limits.stack_bytes,
            lambda: play_game(
                pool, bots, seed, match_id=f"sim-{index}", max_plies=max_plies, module_sha256=_worker_sha
            ),
        )
    except TablehostError as exc:
        code = getattr(exc, "code", type(exc).__name__)
        outcome.error = f"{code}: {exc}"
        return outcome
    outcome.plies, outcome.winners, outcome.finished = result.plies, result.winners, result.finished
    outcome.draw = result.draw
    if not result.finished:
        outcome.error = f"simulate/unfinished: no game over after {max_plies} plies"
    return outcome


def run_games(
    module_path: str | Path,
    bots: Sequence[str],
    seed: int,
    games: int,
    *,
    workers: int = 1,
    max_plies: int = 10_000,
    limits: Limits = DEFAULT_LIMITS,
) -> Iterator[GameOutcome]:
    """Play ``games`` games and yield each outcome as it finishes (any order).

    ``workers`` is capped at the number of games and at :data:`MAX_WORKERS`.

    Raises:
        ValueError: ``games`` or ``workers`` below 1.
        ModuleError: the module is not valid (before any game starts).
    """
    load_module(Path(module_path).read_bytes(), limits=limits)  # fail fast, warm the compiled cache
    if games < 1 or workers < 1:
        raise ValueError(f"games and workers must be at least 1 (got {games} games, {workers} workers)")
    workers = min(workers, games, MAX_WORKERS)
    rng = Rng(seed)
    jobs = ((i, rng.next_u64(), list(bots), max_plies) for i in range(games))  # lazy: games may be many
    if workers == 1:
        _init_worker(str(module_path), limits)
        for job in jobs:
            yield _run_game(job)
        return
    yield from _run_in_processes(str(module_path), limits, jobs, workers)


def _run_in_processes(
    module_path: str, limits: Limits, jobs: Iterator[tuple[int, int, Sequence[str], int]], workers: int
) -> Iterator[GameOutcome]:
    """Run ``jobs`` on ``workers`` spawned processes; a broken pool fails its in-flight games and is replaced."""
    context = multiprocessing.get_context("spawn")
    pending = iter(jobs)
    exhausted = False
    while True:
        executor = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                                       initargs=(module_path, limits))
        in_flight: dict[Future[GameOutcome], tuple[int, int, Sequence[str], int]] = {}
        broken = False
        try:
            while True:
                while not exhausted and len(in_flight) < workers * IN_FLIGHT_PER_WORKER:
                    job = next(pending, None)
                    if job is None:
                        exhausted = True
                        break
                    in_flight[executor.submit(_run_game, job)] = job
                if not in_flight:
                    return
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    job = in_flight.pop(future)
                    try:
                        yield future.result()
                    except BrokenProcessPool:
                        broken = True
                        yield _died(job)
                if broken:
                    for job in in_flight.values():
                        yield _died(job)
                    break
        finally:
            executor.shutdown(wait=not broken, cancel_futures=True)


def _died(job: tuple[int, int, Sequence[str], int]) -> GameOutcome:
    index, seed = job[0], job[1]
    return GameOutcome(index, seed, error="simulate/worker_died: a worker process died while this game was in flight")


def summarize(
    module: str, bots: Sequence[str], seed: int, outcomes: list[GameOutcome], seconds: float
) -> Summary:
    """Fold outcomes (any order) into a :class:`Summary`; failures sorted by game index."""
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
    return Summary(
        module=module,
        bots=list(bots),
        seed=seed,
        games=len(outcomes),
        wins=wins,
        draws=draws,
        plies_mean=round(statistics.fmean(plies), 2) if plies else 0.0,
        plies_median=float(statistics.median(plies)) if plies else 0.0,
        plies_max=max(plies) if plies else 0,
        moves_per_second=round(total_moves / seconds, 1) if seconds > 0 else 0.0,
        games_per_second=round(len(outcomes) / seconds, 2) if seconds > 0 else 0.0,
        seconds=round(seconds, 3),
        failures=[{"game": o.index, "seed": o.seed, "error": o.error} for o in outcomes if o.error],
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
) -> Summary:
    """Run a whole simulation and summarise it; ``progress`` shows a bar on stderr."""
    started = time.perf_counter()
    stream = run_games(module_path, bots, seed, games, workers=workers, max_plies=max_plies, limits=limits)
    if progress:
        from tqdm import tqdm

        stream = tqdm(stream, total=games, unit="game", desc=Path(module_path).stem)
    outcomes = list(stream)
    return summarize(Path(module_path).stem, bots, seed, outcomes, time.perf_counter() - started)
