"""The rules run on a viewer's view (docs/abi.md section 18), as the web table's page runs them.

For every sample game, random playouts: before each move, the mover's view is turned into the
state form a step on a view receives (``state_of_view``, the page's ``stateOfView``), the move is
stepped on it in the real module, and the result is compared with the server's view after the
same move. A move that draws randomness, or clicks hidden pieces the host picks among, is never
predicted. In a game without hidden pieces every other move must run and the prediction must equal
the server's view; in a game with them a move may differ (a revealed face) or fail (the rules need
a secret), which the page treats as "no prediction", but most must be exact.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tablehost.errors import GuestError
from tablehost.guest import GuestPool
from tablehost.match import Match, PlayerInfo
from tablehost.module import load_module
from tablehost.view import view_state
from web_support import DIST, SEATS

CHECKED = dict(SEATS)
"""Every sample game, with its seat count."""

HIDDEN_INFORMATION = ("hearts", "dominoes", "spades", "holdem", "risk")
"""The sample games with hidden pieces; in the others every prediction must be exact. (Hold'em's
rules fail on a view when a street is dealt: the deck's order is the secret they need.)"""


def state_of_view(view: dict[str, Any]) -> dict[str, Any]:
    """A view as an ABI state: hidden groups become that many pieces with no private part."""

    def piece(p: dict[str, Any], hidden: bool) -> dict[str, Any]:
        return {
            "public_kind": p["public_kind"],
            "public_state": p.get("public_state", {}),
            "owner": p.get("owner"),
            "private_kind": None if hidden else p.get("private_kind"),
            "private_state": {} if hidden else p.get("private_state", {}),
        }

    spaces = []
    for space in view["spaces"]:
        pieces: list[dict[str, Any]] = []
        for p in space["pieces"]:
            if "count" in p:
                pieces.extend(piece(p, True) for _ in range(p["count"]))
            else:
                pieces.append(piece(p, False))
        spaces.append({**space, "pieces": pieces})
    log = [{"text": entry["text"], "for_player": {}} for entry in view["log"]]
    return {**view, "spaces": spaces, "log": log}


def _clicks_hidden_group(view: dict[str, Any], action: dict[str, Any]) -> bool:
    if action.get("type") != "piece_click":
        return False
    space = next(s for s in view["spaces"] if s["space_id"] == action["space_id"])
    return "count" in space["pieces"][action["index"]]


@pytest.mark.parametrize("game", list(CHECKED))
def test_a_step_on_the_movers_view_runs_and_agrees_with_the_server(game: str) -> None:
    module = load_module((DIST / f"{game}.wasm").read_bytes(), name=game)
    pool, predictor = GuestPool(module), GuestPool(module)
    rng = random.Random(game)
    counts = {"predicted": 0, "same": 0, "differs": 0, "random": 0, "hidden_pick": 0, "failed": 0}
    try:
        for game_number in range(2):
            players = [PlayerInfo(n, f"p{n}", "#123456") for n in range(1, CHECKED[game] + 1)]
            match = Match.start(
                pool, players, match_id=f"m{game_number}", module_sha256=module.sha256, seed=game_number
            )
            for ply in range(60):
                if match.game_over:
                    break
                mover = rng.choice(match.active_player_ids)
                served = match.view(mover)
                offers = [a for a in served.actions if a["intent"] != "undo"]
                if not offers:
                    continue
                offer = rng.choice(offers)
                if _clicks_hidden_group(served.state, offer["action"]):
                    counts["hidden_pick"] += 1
                    match.submit_view_action(mover, offer["action"])
                    continue
                on_view = state_of_view(served.state)
                try:
                    predicted = predictor.step(
                        f"p{ply}",
                        lambda: on_view,  # noqa: B023 - called before the loop moves on
                        f"p{ply}+",
                        mover,
                        offer["action"],
                        0,
                        want_state=True,
                    )
                except GuestError as exc:
                    # Allowed only where the rules need a secret the mover does not hold (who holds
                    # the 2 of clubs after the pass): the page then predicts nothing.
                    assert game in HIDDEN_INFORMATION, f"{game}: the rules failed on {mover}'s view: {exc}"
                    match.submit_view_action(mover, offer["action"])
                    counts["failed"] += 1
                    # A browser's failures are its own: a fresh pool, as a page's fresh worker,
                    # so this pool's failure count never quarantines the module.
                    predictor.close()
                    predictor = GuestPool(module)
                    continue
                move = match.submit_view_action(mover, offer["action"])
                if predicted["rng_used"] or move.rng_used:
                    counts["random"] += 1
                    continue
                counts["predicted"] += 1
                if view_state(predicted["state"], mover)["spaces"] == match.view(mover).state["spaces"]:
                    counts["same"] += 1
                else:
                    # Only a move that shows the mover something hidden may differ (a drawn face).
                    assert game in HIDDEN_INFORMATION, f"{game} ply {ply}: the prediction differs"
                    counts["differs"] += 1
    finally:
        pool.close()
        predictor.close()
    assert counts["predicted"] > 0, counts
    assert counts["same"] >= counts["differs"] + counts["failed"], counts
