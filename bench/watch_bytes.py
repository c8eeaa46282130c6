"""Bytes a WatchMatch stream sends per move, whole views against view deltas (hearts by default).

Plays one seeded game with random bots through a :class:`MatchRegistry` (no network) and, after
every move, sizes what each seat's stream and the spectator's would carry: the whole
``MatchView`` message and the ``MatchView`` with a ``ViewDelta`` instead of the table.

    PYTHONPATH=runtime python3 bench/watch_bytes.py [--module sample_games/dist/hearts.wasm] [--seed 1]

The default module is found from this script's folder, so it runs from any working directory.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from pathlib import Path

from tablehost import logs
from tablehost.api.auth import ADMIN, Principal
from tablehost.api.registry import MatchRegistry
from tablehost.api.servicer import _delta_view, _view

DEFAULT_MODULE = Path(__file__).resolve().parent.parent / "sample_games" / "dist" / "hearts.wasm"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", type=Path, default=DEFAULT_MODULE,
                        help="the game's .wasm (default: the repository's sample_games/dist/hearts.wasm)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random bots (default 1)")
    args = parser.parse_args()
    try:
        wasm = args.module.read_bytes()
    except OSError as exc:
        parser.error(f"cannot read the module {args.module}: {exc.strerror} (run `make games`, or pass --module)")
    logs.configure(level="warning", json=False)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as data:
        registry = MatchRegistry(data, synchronous="NORMAL")
        module = registry.upload_module(ADMIN, wasm, args.module.stem)
        seats = registry.metadata_of(module.sha256).min_players
        created = registry.create_match(ADMIN, module.sha256, [("", "")] * max(seats, 2))
        match_id = created.match_id
        viewers = [Principal("seat", match_id, p.player_id) for p, _ in created.seats] + [
            Principal("spectator", match_id)
        ]
        previous = {v.viewer: registry.view(v, match_id) for v in viewers}
        whole: list[int] = []
        deltas: list[int] = []
        moves = 0
        while not registry._matches[match_id].match.game_over:
            movers = [v for v in viewers[:-1] if registry.view(v, match_id).view.actions]
            mover = rng.choice(movers)
            served = registry.view(mover, match_id)
            offers = [a for a in served.view.actions if a["intent"] != "undo"]
            registry.submit(mover, match_id, rng.choice(offers)["action"], served.view.version)
            moves += 1
            for viewer in viewers:
                now = registry.view(viewer, match_id)
                full = _view(now, 1 << 30).ByteSize()
                delta = _delta_view(now, previous[viewer.viewer], 1 << 30)
                whole.append(full)
                deltas.append(delta.ByteSize() if delta is not None else full)
                previous[viewer.viewer] = now
        registry.close()
    streams = len(viewers)
    print(f"{args.module.stem}: {moves} moves, {streams} streams (seats + spectator), seed {args.seed}")
    print(f"  whole views : {statistics.fmean(whole):8.0f} bytes per stream per move, "
          f"{sum(whole) / moves:9.0f} bytes per move over all streams")
    print(f"  view deltas : {statistics.fmean(deltas):8.0f} bytes per stream per move, "
          f"{sum(deltas) / moves:9.0f} bytes per move over all streams")
    print(f"  ratio       : {sum(deltas) / sum(whole):.3f}")


if __name__ == "__main__":
    main()
